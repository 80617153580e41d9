#!/bin/bash
# Fetch Debian 12's xen source package (upstream stable-4.17 at
# 01140da4e8), check it, and unpack only its pristine .orig tarball:
# Debian's own patches are not applied.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -f "$PG_DEB_TREE/xen/Makefile" ] && exit 0

dl=$PG_CACHE/debian-src
mkdir -p "$dl" "$PG_CACHE/tree"
if [ ! -f "$dl/$PG_DEB_ORIG" ]; then
    step "downloading Debian source xen=$PG_DEB_VERSION"
    (cd "$dl" && apt-get source -q --download-only "xen=$PG_DEB_VERSION" \
        >download.log 2>&1) ||
        die "apt-get source xen=$PG_DEB_VERSION failed (deb-src entry? see $dl/download.log)"
fi
echo "$PG_DEB_ORIG_SHA256  $dl/$PG_DEB_ORIG" | sha256sum -c --quiet - ||
    die "$PG_DEB_ORIG: checksum mismatch"
step "unpacking $PG_DEB_ORIG"
tmp=$(mktemp -d "$PG_CACHE/tree/.unpack.XXXXXX")
tar -C "$tmp" -xf "$dl/$PG_DEB_ORIG"
mv "$tmp/$(basename "$PG_DEB_TREE")" "$PG_DEB_TREE"
rmdir "$tmp"
