#!/bin/bash
# Install, by package name from Debian's archive, what the proving ground
# needs on a Debian 12 machine.  Idempotent; run as root (or via sudo).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS="build-essential ccache clang flex bison python3 git rsync cpio xz-utils
      dpkg-dev qemu-system-x86 busybox-static gcc-aarch64-linux-gnu
      libc6-dev linux-libc-dev
      bochs bochsbios vgabios grub-pc-bin grub-common xorriso mtools
      debootstrap e2fsprogs
      meson ninja-build libglib2.0-dev libpixman-1-dev libfdt-dev
      libyajl-dev uuid-dev zlib1g-dev libncurses-dev python3-dev pkg-config acpica-tools"

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# Debian's source index is needed for the default tree (apt-get source).
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    step "adding a deb-src entry for bookworm main"
    $SUDO tee /etc/apt/sources.list.d/xen-proving-ground-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    rm -f "$PG_CACHE/.apt-updated"
fi

missing=$(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null |
          awk '$NF != "installed" {print $1}'; for p in $PKGS; do
          dpkg-query -W "$p" >/dev/null 2>&1 || echo "$p"; done)
missing=$(echo "$missing" | sort -u | xargs)
mkdir -p "$PG_CACHE"
if [ -n "$missing" ] || [ ! -e "$PG_CACHE/.apt-updated" ]; then
    step "apt-get update"
    $SUDO apt-get update -q >/dev/null || die "apt-get update failed"
    touch "$PG_CACHE/.apt-updated"
fi
if [ -n "$missing" ]; then
    step "installing: $missing"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends $missing >/dev/null ||
        die "apt-get install failed: $missing"
fi
