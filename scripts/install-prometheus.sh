#!/usr/bin/env bash
# Put Prometheus's promtool (Debian 12's prometheus package, 2.42) into
# .cache/prometheus/bin, for the tests that check the alert rules. The package is downloaded
# and unpacked (apt-get download + dpkg -x), never installed: no service is set up or started.
# Safe to run again: it skips what is done.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo/.cache/prometheus"
if [[ -x "$dest/bin/promtool" && -x "$dest/bin/prometheus" ]] \
    && "$dest/bin/promtool" --version >/dev/null 2>&1; then
    exit 0
fi
if [[ -x "$dest/root/usr/bin/prometheus" ]]; then  # unpacked before the server was linked
    ln -sf ../root/usr/bin/prometheus "$dest/bin/prometheus"
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work" # apt's _apt user downloads into it
download() { (cd "$work" && apt-get download -q prometheus >/dev/null 2>&1); }
if ! download; then
    # a fresh machine may have no package lists yet
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    download
fi
rm -rf "$dest"
mkdir -p "$dest/bin"
dpkg -x "$work"/prometheus_*.deb "$dest/root"
ln -s ../root/usr/bin/promtool "$dest/bin/promtool"
ln -s ../root/usr/bin/prometheus "$dest/bin/prometheus"  # the tests run it on 127.0.0.1 only
echo "promtool: $("$dest/bin/promtool" --version 2>&1 | head -1)"
