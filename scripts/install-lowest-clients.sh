#!/usr/bin/env bash
# A second virtualenv, .cache/venv-lowest-clients, with stream-cleaner (editable, the stream
# extra and pytest) and the lowest aiokafka and faust-streaming releases the worker allows.
#
# The worker patches internals of both, so it runs only with the releases it is tested with
# (stream_cleaner/streaming/patches/versions.py, which pyproject.toml's bounds repeat). CI tests
# both ends of that range: .venv holds the highest (pip picks the newest release under the
# ceilings), and tests/streaming/test_client_versions.py runs the broker tests marked
# kafka_clients in this venv, at the floors. The floors are read from patches/versions.py, the
# one place that knows them.
#
# Safe to run again: when the venv holds this pyproject.toml's package at those floors, it
# exits at once. Env: PYTHON (the interpreter; default the one of .venv).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
venv=.cache/venv-lowest-clients
[[ -x .venv/bin/python ]] || { echo "no .venv: run scripts/setup.sh first" >&2; exit 1; }
python="${PYTHON:-$(.venv/bin/python -c 'import sys; print(sys._base_executable)')}"
floors="$(.venv/bin/python -c 'from stream_cleaner.streaming.patches.versions import lowest_requirements
print(" ".join(lowest_requirements()))')"

stamp="$venv/.stream-cleaner-installed"
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $floors"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "lowest Kafka clients: $venv ($floors)"
    exit 0
fi

echo "installing stream-cleaner with $floors into $venv (about a minute)"
rm -rf "$venv"
mkdir -p .cache
"$python" -m venv "$venv"
# shellcheck disable=SC2086  # the floors are words: one requirement each
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[stream]" "pytest>=8" \
    $floors
echo "$want" >"$stamp"
echo "lowest Kafka clients: $venv ($floors)"
