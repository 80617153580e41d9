#!/bin/bash
# Build the proving ground's QEMU: Debian 12's qemu source package
# (PG_QEMU_DEB_VERSION, checked against lib.sh's sums), Debian's patches,
# then harness/qemu/*.patch, x86_64-softmmu with TCG only, into
# $PG_CACHE/qemu.  $PG_CACHE/qemu/bin/qemu-system-x86_64 runs it with the
# firmware of Debian's qemu-system-x86.  A build is named by a hash of
# the version, the patches' diffs and this script, which its --version prints;
# another hash builds anew beside it and then takes the wrapper's place.
# PG_QEMU_FIX=0: the same build without harness/qemu's patches, the
# control of an A/B (harness/qemu/ab.sh), into $PG_CACHE/qemu-nofix.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case ${PG_QEMU_FIX:-1} in
1) patches=("$PG_ROOT"/harness/qemu/*.patch) top=$PG_CACHE/qemu fix= ;;
0) patches=() top=$PG_CACHE/qemu-nofix fix=", without the fix" ;;
*) die "PG_QEMU_FIX=$PG_QEMU_FIX: 1 (default) or 0" ;;
esac
# (the patches' diffs only: their messages build nothing)
id=$({ echo "$PG_QEMU_DEB_VERSION$fix"; cat "${BASH_SOURCE[0]}"
       for p in ${patches[@]+"${patches[@]}"}; do sed -n '/^diff --git /,$p' "$p"; done; } |
     sha256sum | cut -c1-12)
bin=$top/bin/qemu-system-x86_64
mkdir -p "$top/bin"
exec 9>"$top/lock"
flock 9
built() { "$bin" --version 2>/dev/null | grep -q "harness/qemu $id$fix)"; }
built && exit 0

dl=$PG_CACHE/debian-src
mkdir -p "$dl"
dsc=$(echo "$PG_QEMU_SRC_SHA256" | awk '/\.dsc$/ {print $2}')
if ! (cd "$dl" && echo "$PG_QEMU_SRC_SHA256" | sha256sum -c --quiet - >/dev/null 2>&1); then
    step "downloading Debian source qemu=$PG_QEMU_DEB_VERSION"
    (cd "$dl" && apt-get source -q --download-only "qemu=$PG_QEMU_DEB_VERSION" \
        >qemu-download.log 2>&1) ||
        die "apt-get source qemu=$PG_QEMU_DEB_VERSION failed (deb-src entry? see $dl/qemu-download.log)"
    (cd "$dl" && echo "$PG_QEMU_SRC_SHA256" | sha256sum -c --quiet -) ||
        die "qemu=$PG_QEMU_DEB_VERSION: checksum mismatch"
fi

src=$top/src-$id
log=$top/build-$id.log
rm -rf "$src"
step "unpacking $dsc, Debian's patches applied"
dpkg-source -q --no-check --no-copy -x "$dl/$dsc" "$src" >"$log" 2>&1 ||
    die "dpkg-source -x $dsc failed, log: $log"
for p in ${patches[@]+"${patches[@]}"}; do
    patch -d "$src" -p1 -s --no-backup-if-mismatch <"$p" >>"$log" 2>&1 ||
        die "$(basename "$p") does not apply, log: $log"
done
step "building QEMU $PG_QEMU_DEB_VERSION with harness/qemu/ (a few minutes)"
mkdir "$src/build"
(cd "$src/build" &&
 ../configure --target-list=x86_64-softmmu --disable-docs --disable-werror \
     --without-default-features --enable-tcg --enable-fdt=system \
     --meson="$(command -v meson)" \
     --with-pkgversion="Debian $PG_QEMU_DEB_VERSION, harness/qemu $id$fix" &&
 make -j"$(nproc)" qemu-system-x86_64) >>"$log" 2>&1 ||
    die "QEMU build failed, log: $log"
# Firmware: Debian's qemu-system-data, seabios and ipxe-qemu.
cat > "$bin.new" <<WRAP
#!/bin/sh
exec "\$(dirname "\$0")/../src-$id/build/qemu-system-x86_64" \\
    -L /usr/share/qemu -L /usr/share/seabios -L /usr/lib/ipxe/qemu "\$@"
WRAP
chmod +x "$bin.new"
mv -f "$bin.new" "$bin"
built || die "$bin does not run the build $id"
for d in "$top"/*; do
    case $d in "$top/bin"|"$top/lock"|"$src"|"$log") ;; *) rm -rf "$d" ;; esac
done
step "QEMU: $("$bin" --version | head -1)"
