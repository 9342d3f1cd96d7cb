#!/usr/bin/env bash
# Optional: build the worker image from the Dockerfile without a Docker daemon or a registry.
# buildah (Debian package) builds with --isolation chroot and vfs storage under
# .cache/image-build, on a Debian 12 base made by debootstrap (Debian's Python 3.11 with its
# headers, pip and venv) in place of python:3.11-slim-bookworm, which needs a registry. The host's CA bundle goes
# into the base (PIP_CERT), so that pip inside the build trusts what the host trusts. Then it
# runs the image once with `buildah run` and prints what the worker's command line says.
#
# Usage: bash scripts/build-image-offline.sh [TAG]      (as root; takes several minutes)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
tag="${1:-localhost/stream-cleaner:0.1.0}"
base="localhost/debian-python:3.11-bookworm"
work="$repo/.cache/image-build"
buildah=(buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs)

# shellcheck source=scripts/apt-packages.sh
source scripts/apt-packages.sh
install_apt_packages buildah debootstrap

if ! "${buildah[@]}" inspect --type image "$base" >/dev/null 2>&1; then
    rootfs="$work/rootfs"
    rm -rf "$rootfs"
    mkdir -p "$work"
    echo "debootstrap: Debian 12 with Python 3.11 into $rootfs"
    debootstrap --variant=minbase --include=python3,python3-dev,python3-venv,python3-pip,ca-certificates \
        bookworm "$rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
        || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
    ln -sf python3 "$rootfs/usr/bin/python"
    cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
    tar -C "$rootfs" -cf "$work/rootfs.tar" .
    ctr="$("${buildah[@]}" from scratch)"
    "${buildah[@]}" add "$ctr" "$work/rootfs.tar" /
    "${buildah[@]}" config --env PIP_CERT=/etc/ssl/certs/ca-certificates.crt --cmd python3 "$ctr"
    "${buildah[@]}" commit --rm "$ctr" "$base"
    rm -rf "$rootfs" "$work/rootfs.tar"
fi

# docker format: OCI images have no HEALTHCHECK
"${buildah[@]}" bud --isolation chroot --format docker --build-arg "PYTHON_IMAGE=$base" \
    -t "$tag" -f Dockerfile .

ctr="$("${buildah[@]}" from "$tag")"
trap '"${buildah[@]}" rm "$ctr" >/dev/null' EXIT
echo "--- buildah run: id; stream-cleaner --version; its native speed-ups; a perplexity with the bundled model"
"${buildah[@]}" run --isolation chroot "$ctr" -- id
"${buildah[@]}" run --isolation chroot "$ctr" -- stream-cleaner --version
"${buildah[@]}" run --isolation chroot "$ctr" -- python -m stream_cleaner._native
"${buildah[@]}" run --isolation chroot "$ctr" -- \
    stream-cleaner perplexity "The council approved the budget on Tuesday."
"${buildah[@]}" run --isolation chroot "$ctr" -- \
    sh -c 'command -v gcc cc c++ cmake || echo "no compiler in the runtime image"'
"${buildah[@]}" images "$tag"
