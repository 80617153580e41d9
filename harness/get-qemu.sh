#!/bin/bash
# Build the proving ground's QEMU: Debian 12's qemu source package
# (PG_QEMU_DEB_VERSION, checked against lib.sh's sums), Debian's patches,
# then harness/qemu/*.patch, x86_64-softmmu with TCG only, into
# $PG_CACHE/qemu.  $PG_CACHE/qemu/bin/qemu-system-x86_64 runs it with the
# firmware of Debian's qemu-system-x86.  Rebuilds when the version or a
# patch changes; a failed build leaves no binary behind.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

patches=("$PG_ROOT"/harness/qemu/*.patch)
id=$({ echo "$PG_QEMU_DEB_VERSION"; cat "${patches[@]}"; } | sha256sum | cut -c1-12)
top=$PG_CACHE/qemu
bin=$top/bin/qemu-system-x86_64
[ -x "$bin" ] && [ "$(cat "$top/bin/id" 2>/dev/null)" = "$id" ] && exit 0

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

rm -rf "$top"
mkdir -p "$top/bin"
src=$top/src-$id
step "unpacking $dsc, Debian's patches applied"
dpkg-source -q --no-check -x "$dl/$dsc" "$src" >"$top/unpack.log" 2>&1 ||
    die "dpkg-source -x $dsc failed, log: $top/unpack.log"
for p in "${patches[@]}"; do
    patch -d "$src" -p1 -s --no-backup-if-mismatch <"$p" >>"$top/unpack.log" 2>&1 ||
        die "$(basename "$p") does not apply, log: $top/unpack.log"
done
step "building QEMU $PG_QEMU_DEB_VERSION with harness/qemu/ (a few minutes)"
mkdir "$src/build"
(cd "$src/build" &&
 ../configure --target-list=x86_64-softmmu --disable-docs --disable-werror \
     --without-default-features --enable-tcg --enable-fdt=system \
     --meson="$(command -v meson)" \
     --with-pkgversion="Debian $PG_QEMU_DEB_VERSION, harness/qemu $id" &&
 make -j"$(nproc)" qemu-system-x86_64) >"$top/build.log" 2>&1 ||
    die "QEMU build failed, log: $top/build.log"
# Firmware: Debian's qemu-system-data and seabios (qemu-system-x86).
cat > "$bin" <<WRAP
#!/bin/sh
exec "\$(dirname "\$0")/../src-$id/build/qemu-system-x86_64" \\
    -L /usr/share/qemu -L /usr/share/seabios "\$@"
WRAP
chmod +x "$bin"
"$bin" --version | grep -q "harness/qemu $id" || die "$bin does not run"
echo "$id" > "$top/bin/id"
step "QEMU: $("$bin" --version | head -1)"
