#!/usr/bin/env bash
# Build KenLM's training tools, lmplz and build_binary, from the kenlm sdist on PyPI (the same
# source `pip install kenlm` compiles its query module from) into .cache/kenlm/bin.
# Needs cmake, a C++ compiler and Debian's boost (program-options, system, thread, test), zlib,
# bz2 and lzma dev packages; scripts/setup.sh installs them. Skips the build when both tools
# are already there and run.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo/.cache/kenlm/bin"
python="${PYTHON:-$repo/.venv/bin/python}"
[[ -x "$python" ]] || python="$(command -v python3)"

if [[ -x "$bin/lmplz" && -x "$bin/build_binary" ]] && "$bin/lmplz" --help >/dev/null 2>&1; then
    echo "KenLM tools ready: $bin"
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# --no-binary for kenlm only: its build dependencies (cmake...) still come as wheels
"$python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary kenlm -d "$work" kenlm
tar -xzf "$work"/kenlm-*.tar.gz -C "$work"
src="$(find "$work" -maxdepth 1 -type d -name 'kenlm-*' | head -n 1)"
mkdir -p "$src/build"
(
    cd "$src/build"
    cmake .. -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 \
        || { tail -n 30 "$work/cmake.log" >&2; exit 1; }
    make -j"$(nproc)" lmplz build_binary >"$work/make.log" 2>&1 \
        || { tail -n 30 "$work/make.log" >&2; exit 1; }
)
mkdir -p "$bin"
install -m 0755 "$src/build/bin/lmplz" "$src/build/bin/build_binary" "$bin/"
echo "KenLM tools built: $bin"
