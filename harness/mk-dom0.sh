#!/bin/bash
# mk-dom0.sh WORKLOAD OUTDIR [EXTRA...]
# The PVH dom0 payload from Debian's archive: linux-image-amd64's kernel,
# the xen-privcmd/gntdev/gntalloc modules (and what they depend on), and
# busybox-static, in an initramfs whose init runs the workload (a binary
# or a busybox script; EXTRA files go to /extra) and powers off.  Packages are downloaded and unpacked into cache/, never
# installed on the host.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

workload=${1:?usage: mk-dom0.sh WORKLOAD OUTDIR [EXTRA...]}
outdir=${2:?usage: mk-dom0.sh WORKLOAD OUTDIR [EXTRA...]}
shift 2
for f in "$@"; do [ -s "$f" ] || die "no file $f for the dom0 payload"; done
[ -x "$workload" ] || die "no workload binary at $workload"

debs=$PG_CACHE/debs
mkdir -p "$debs" "$outdir"
kpkg=$(pg_kernel_pkg)
kver=${kpkg#linux-image-}
pg_debs "$kpkg" busybox-static
root=$PG_CACHE/dom0-$kver
if [ ! -d "$root/boot" ]; then
    step "unpacking $kpkg and busybox-static"
    rm -rf "$root.tmp"; mkdir -p "$root.tmp"
    dpkg-deb -x "$(ls "$debs/${kpkg}"_*.deb | head -1)" "$root.tmp"
    dpkg-deb -x "$(ls "$debs"/busybox-static_*.deb | head -1)" "$root.tmp"
    mv "$root.tmp" "$root"
fi
# Written aside and renamed: a boot may be reading the previous payload.
cp "$root/boot/vmlinuz-$kver" "$outdir/vmlinuz.tmp"
mv "$outdir/vmlinuz.tmp" "$outdir/vmlinuz"

# Modules in load order, dependencies first.
mods=$(pg_mod_order "$root/lib/modules/$kver/kernel" xen-privcmd xen-gntdev \
       xen-gntalloc)
order=()
for f in $mods; do order+=("$(basename "${f%.ko*}")"); done

ir=$(mktemp -d)
trap 'rm -rf "$ir"' EXIT
mkdir -p "$ir"/{bin,dev,proc,sys,mod,tmp,extra}
cp "$root/bin/busybox" "$ir/bin/busybox"
cp "$workload" "$ir/bin/workload"
for f in "$@"; do cp "$f" "$ir/extra/"; done
for f in $mods; do cp "$f" "$ir/mod/"; done
cat > "$ir/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t xenfs xenfs /proc/xen 2>/dev/null
echo "PG-INIT dom0 userspace up"
for m in ${order[*]}; do insmod /mod/\$m.ko* || echo "PG-ERROR insmod \$m"; done
# The workload's arguments come from the kernel command line (pg.args=).
args=\$(sed -n 's/.*pg\.args=\([^ ]*\).*/\1/p' /proc/cmdline | tr '+' ' ')
echo "PG-RUN \$args"
/bin/workload \$args
echo "PG-EXIT rc=\$?"
sync
poweroff -f
INIT
chmod +x "$ir/init"
(cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) > "$outdir/initrd.gz.tmp"
mv "$outdir/initrd.gz.tmp" "$outdir/initrd.gz"
echo "$kver" > "$outdir/kernel-version"
