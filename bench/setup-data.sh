#!/usr/bin/env bash
# Unpack the benchmark page sets from ../shared/data/eval into .cache/data (git-ignored).
# A set already unpacked is skipped; each set is unpacked beside its target first and moved into
# place whole, so an interrupted run never leaves a half set that a later run would skip.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${BENCH_DATA_SRC:-$repo/../shared/data/eval}"
dest="$repo/.cache/data"

mkdir -p "$dest"
for name in cleaneval dragnet multiboilernet modern2026; do
    if [[ -d "$dest/$name" ]]; then
        continue
    fi
    archive="$src/$name.tar.xz"
    if [[ ! -f "$archive" ]]; then
        echo "missing $archive" >&2
        exit 1
    fi
    tmp="$(mktemp -d "$dest/.unpack-$name.XXXXXX")"
    tar -xJf "$archive" -C "$tmp"
    mv "$tmp/$name" "$dest/$name"
    rm -rf "$tmp"
    echo "unpacked $name into $dest/$name"
done
