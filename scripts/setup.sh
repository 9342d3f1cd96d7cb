#!/usr/bin/env bash
# Install everything stream-cleaner needs on a fresh Debian 12 machine (Python 3.11):
# Debian build packages (and chromium, for the web demo's browser tests), a virtualenv at .venv
# with the package, its dev tools and its compiled speed-ups (stream_cleaner/_native), KenLM's
# training tools (lmplz, build_binary) in .cache/kenlm/bin, the Tansu Kafka-protocol broker in
# .cache/tansu/bin, a second virtualenv at .cache/venv-lowest-clients with the lowest aiokafka
# and faust-streaming the worker allows (its broker tests run there too), Prometheus's promtool
# in .cache/prometheus/bin (unpacked, never run as a service), and, when ../shared/data is
# there, the benchmark pages unpacked into .cache/data. Safe to run again: it skips what is
# done.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"

# shellcheck source=scripts/apt-packages.sh
source scripts/apt-packages.sh
install_apt_packages python3-venv python3-dev build-essential cmake \
    libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev \
    zlib1g-dev libbz2-dev liblzma-dev chromium

if [[ ! -x .venv/bin/python ]]; then
    "$python" -m venv .venv
fi
stamp=.venv/.stream-cleaner-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "installing stream-cleaner into .venv (kenlm compiles: about a minute)"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev,stream,native,web,browser,deploy]"
    echo "$want" >"$stamp"
fi

# The compiled speed-ups (stream_cleaner/_native): rebuilt when their sources or the installed
# selectolax/kenlm change; without them the package runs in pure Python, about half as fast.
native_stamp=.venv/.stream-cleaner-native
native_want="$(cat stream_cleaner/_native/*.pyx stream_cleaner/_native/*.pxi stream_cleaner/_native/*.h scripts/build_native.py \
    | sha256sum | cut -d' ' -f1) $(.venv/bin/python -m pip freeze 2>/dev/null | grep -i -E '^(selectolax|kenlm)' | tr '\n' ' ')"
if [[ ! -f "$native_stamp" || "$(cat "$native_stamp")" != "$native_want" \
      || ! -f stream_cleaner/_native/built_for.json ]]; then
    echo "compiling the native speed-ups (about 20 s)"
    mkdir -p .cache
    .venv/bin/python scripts/build_native.py >.cache/build-native.log 2>&1 \
        || { tail -n 30 .cache/build-native.log >&2; exit 1; }
    echo "$native_want" >"$native_stamp"
fi

bash scripts/build-kenlm-tools.sh
bash scripts/install-tansu.sh
# the lowest aiokafka and faust-streaming the worker allows, for its broker tests at that end
bash scripts/install-lowest-clients.sh
bash scripts/install-prometheus.sh

if [[ -d ../shared/data/eval ]]; then
    bash bench/setup-data.sh
fi
echo "set-up done: .venv/bin/stream-cleaner is ready"
