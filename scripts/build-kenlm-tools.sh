#!/usr/bin/env bash
# Build KenLM's training tools, lmplz and build_binary, into .cache/kenlm/bin.
#
# The source is the kenlm sdist on PyPI: the same C++ tree `pip install kenlm` compiles its
# query module from, with the whole CMake build. Needs a C++ compiler, cmake and Debian's boost
# (program-options, system, thread, test), zlib, bz2 and lzma dev packages: installed with
# apt-get when missing and running as root, otherwise the apt command is printed.
#
# Safe to run again: when both tools are there and run, it exits at once.
# Env: PYTHON (interpreter whose pip fetches the sdist; default .venv/bin/python),
#      KENLM_VERSION (sdist version; default the one pyproject's kenlm module is tested with).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo/.cache/kenlm/bin"
version="${KENLM_VERSION:-0.3.0}"

tools_run() {
    # lmplz --help exits 1 and build_binary --help exits 0: judge by what they print, which
    # also proves their shared libraries (boost) still resolve.
    local out
    [[ -x "$bin/lmplz" && -x "$bin/build_binary" ]] || return 1
    out="$("$bin/lmplz" --help 2>&1 || true)"
    [[ $out == *Kneser-Ney* ]] || return 1
    out="$("$bin/build_binary" --help 2>&1 || true)"
    [[ $out == *Usage:* ]]
}

if tools_run; then
    echo "KenLM tools: $bin (lmplz, build_binary)"
    exit 0
fi

# shellcheck source=scripts/apt-packages.sh
source "$repo/scripts/apt-packages.sh"
install_apt_packages g++ make cmake \
    libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev \
    zlib1g-dev libbz2-dev liblzma-dev

python="${PYTHON:-$repo/.venv/bin/python}"
[[ -x "$python" ]] || python="$(command -v python3)"
"$python" -m pip --version >/dev/null 2>&1 \
    || { echo "no pip for $python: create .venv first (scripts/setup.sh) or set PYTHON" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# --no-binary for kenlm only: with :all: pip would also compile the sdist's build requirements
# (cmake from source, ten minutes and more) just to read kenlm's metadata; this way they come
# as wheels into pip's isolated build environment.
pip_args=(download --quiet --disable-pip-version-check --no-deps --no-binary kenlm -d "$work")
"$python" -m pip "${pip_args[@]}" "kenlm==$version" >"$work/pip.log" 2>&1 \
    || { tail -n 30 "$work/pip.log" >&2; exit 1; }
tar -xzf "$work/kenlm-$version.tar.gz" -C "$work"
src="$work/kenlm-$version"

mkdir -p "$src/build"
cd "$src/build"
# KENLM_MAX_ORDER=6 is the default and what the kenlm Python module is built with.
cmake .. -DCMAKE_BUILD_TYPE=Release -DKENLM_MAX_ORDER=6 >"$work/cmake.log" 2>&1 \
    || { tail -n 30 "$work/cmake.log" >&2; exit 1; }
make -j2 lmplz build_binary >"$work/make.log" 2>&1 \
    || { tail -n 30 "$work/make.log" >&2; exit 1; }

mkdir -p "$bin"
install -m 0755 bin/lmplz bin/build_binary "$bin/"
tools_run || { echo "built KenLM tools do not run: $bin" >&2; exit 1; }
echo "KenLM tools: $bin (lmplz, build_binary)"
