#!/usr/bin/env bash
# Create (or refresh) the bench-only venv at .cache/bench-venv with stream-cleaner installed
# editable and the peer extractors from bench/requirements.txt. Idempotent: when neither
# pyproject.toml nor bench/requirements.txt changed since the last good run, it does nothing.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.cache/bench-venv"
log="$repo/.cache/bench-venv.log"
stamp="$venv/.installed"
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"

mkdir -p "$repo/.cache"
want="$(cat "$repo/pyproject.toml" "$repo/bench/requirements.txt" | sha256sum | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "bench venv up to date: $venv"
    exit 0
fi

# pip's own chatter goes to the log; it is shown only when something fails.
if ! {
    [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -e "$repo" -r "$repo/bench/requirements.txt"
} >"$log" 2>&1; then
    echo "bench venv set-up failed; last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi
echo "$want" >"$stamp"
echo "bench venv ready: $venv"
