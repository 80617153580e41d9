#!/bin/bash
# bench-mk-image.sh
# The netback benchmark's payload, from Debian's archive by package name:
#   cache/bench/rootfs     debootstrap of bookworm (main only, so that
#                          xen-utils-4.17 is the version of the default tree)
#                          with linux-image-amd64, xen-utils-4.17, iperf3,
#                          iproute2, bridge-utils, busybox-static
#   build/bench/<base>/disk.img   that root file system (ext4) plus
#                          bench/netback/; for staging also Xen's own tools
#                          built from the tree (harness/bench-tools.sh) in
#                          place of Debian's 4.17 ones
#   build/bench/<base>/vmlinuz, initrd.img   the dom0 kernel and its
#                          initramfs (Debian's initramfs-tools, a short
#                          module list)
# The domUs boot the same kernel with a busybox + iperf3 ramdisk made here
# (/var/lib/bench/domU-initrd.gz in the image).  Cached: the debootstrap
# runs once, the image is remade when bench/netback/ changes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS=linux-image-amd64,xen-utils-4.17,iperf3,iproute2,bridge-utils,busybox-static,kmod,procps
cache=$PG_CACHE/bench
root=$cache/rootfs
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
out=$PG_BUILD/bench/$base
src=$PG_ROOT/bench/netback
mkdir -p "$cache" "$out"
exec 8>"$cache/.lock"
flock 8

# Debian's archive as the host's apt knows it (no host named here).
mirror=${BENCH_MIRROR:-$(apt-get indextargets --format '$(SITE) $(RELEASE) $(TARGET_OF)' |
                         awk '$2 == "bookworm" && $3 == "deb" {print $1; exit}')}
if [ ! -e "$root/.bench-rootfs" ]; then
    [ -n "$mirror" ] || die "no bookworm entry in apt's sources (apt-get update?)"
    command -v debootstrap >/dev/null || die "debootstrap not installed (make setup)"
    step "debootstrap bookworm ($PKGS)"
    rm -rf "$root.tmp"
    nice -n 5 debootstrap --variant=minbase --arch=amd64 --include="$PKGS" \
        bookworm "$root.tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
        die "debootstrap failed, log: $cache/debootstrap.log"
    # dom0's initramfs: only what finds the root disk (AHCI) and mounts it.
    printf 'ahci\nsd_mod\next4\n' > "$root.tmp/etc/initramfs-tools/modules"
    echo MODULES=list > "$root.tmp/etc/initramfs-tools/conf.d/bench"
    echo COMPRESS=gzip >> "$root.tmp/etc/initramfs-tools/conf.d/bench"
    chroot "$root.tmp" update-initramfs -u -k all >"$cache/initramfs.log" 2>&1 ||
        die "update-initramfs failed, log: $cache/initramfs.log"
    rm -rf "$root.tmp"/var/cache/apt/archives/*.deb
    echo "$PKGS" > "$root.tmp/.bench-rootfs"
    rm -rf "$root"; mv "$root.tmp" "$root"
fi
xver=$(chroot "$root" dpkg-query -W -f='${Version}' xen-utils-4.17)
[ "$xver" = "$PG_DEB_VERSION" ] ||
    echo "warning: dom0 toolstack is xen-utils-4.17 $xver, the default tree is $PG_DEB_VERSION" >&2
kver=$(cd "$root/boot" && ls vmlinuz-* | sed 's/^vmlinuz-//' | sort -V | tail -1)
[ -n "$kver" ] || die "no kernel in $root/boot"
# A tree other than 4.17: its own toolstack (libxc speaks only to the
# hypervisor of its own version).
tools=
if [ "$base" != stable-4.17 ]; then
    tools=$("$PG_ROOT/harness/bench-tools.sh")
    xver="$(pg_tree_version "$tree") ($(pg_tree_describe "$tree"), built here)"
fi

stamp=$( (echo "$PKGS $xver $kver $tree"; cat "$src"/*.sh "$src"/*.py "$0" \
          "$PG_ROOT/workload/gntpg.c") | sha1sum)
if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ] && [ -s "$out/disk.img" ]; then
    exit 0
fi
step "making the benchmark's disk image (dom0 $kver, xen-utils $xver)"

# The domUs' ramdisk: busybox, iperf3 and its libraries, xen-netfront.
ir=$(mktemp -d)
trap 'rm -rf "$ir"' EXIT
mkdir -p "$ir"/{bin,dev,proc,sys,tmp,mod,etc}
cp "$root/bin/busybox" "$ir/bin/busybox"
cp "$root/usr/bin/iperf3" "$ir/bin/iperf3"
for lib in $(chroot "$root" ldd /usr/bin/iperf3 | grep -o '/[^ ]*'); do
    mkdir -p "$ir$(dirname "$lib")"
    cp -L "$root$lib" "$ir$lib"
done
order=()
for f in $(pg_mod_order "$root/lib/modules/$kver/kernel" xen-netfront); do
    m=$(basename "${f%.ko*}")
    cp "$f" "$ir/mod/$m.ko"
    order+=("$m")
done
echo "${order[*]}" > "$ir/mod/order"
cp "$src/domU-init.sh" "$ir/init"
chmod +x "$ir/init"
mkdir -p "$root/var/lib/bench" "$root/usr/local/lib/bench"
(cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) > "$root/var/lib/bench/domU-initrd.gz"
cp "$root/boot/vmlinuz-$kver" "$root/var/lib/bench/vmlinuz"

# The proving ground's workload times grant unmap batches at the end.
make -s -C "$PG_ROOT/workload" XEN_SRC="$tree" OUT="$out/gntpg" >/dev/null ||
    die "workload build failed"
install -m 755 "$out/gntpg/gntpg" "$root/usr/local/lib/bench/gntpg"
install -m 755 "$src/dom0-init.sh" "$root/usr/local/sbin/bench-dom0"
install -m 755 "$src/dom0-bench.py" "$root/usr/local/lib/bench/dom0-bench.py"
install -m 755 "$src/vif-bench.sh" "$root/usr/local/lib/bench/vif-bench.sh"

fs=$root
if [ -n "$tools" ]; then
    # A copy of the root file system with the tree's tools over Debian's
    # (whose /usr/lib/xen-4.17 would come first in dom0-init.sh's PATH).
    fs=$out/rootfs
    rm -rf "$fs"
    cp -a "$root" "$fs"
    pg_tools_over_debian "$fs" "$tools"
fi
rm -f "$out/disk.img.tmp"
mkfs.ext4 -q -F -L benchroot -d "$fs" "$out/disk.img.tmp" 2G ||
    die "mkfs.ext4 -d failed"
[ "$fs" = "$root" ] || rm -rf "$fs"
mv "$out/disk.img.tmp" "$out/disk.img"
cp "$root/boot/vmlinuz-$kver" "$out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$out/initrd.img"
echo "$kver" > "$out/kernel-version"
echo "$xver" > "$out/xen-utils-version"
echo "$stamp" > "$out/.stamp"
