#!/bin/bash
# build-gntt.sh
# Build the torture driver (torture/gntt.c) as a module for the dom0
# kernel, against Debian's linux-headers for that kernel (downloaded and
# unpacked into cache/, never installed).  Prints the module's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kpkg=$(pg_kernel_pkg)
kver=${kpkg#linux-image-}
hpkgs=$(apt-cache depends "linux-headers-$kver" 2>/dev/null |
        awk '/Depends: linux-(headers|kbuild)-/ {print $2}')
[ -n "$hpkgs" ] || die "cannot resolve linux-headers-$kver's dependencies"
pg_debs "linux-headers-$kver" $hpkgs

kh=$PG_CACHE/kheaders-$kver
hdir=$kh/usr/src/linux-headers-$kver
if [ ! -f "$kh/.pg-done" ]; then
    step "unpacking linux-headers-$kver" >&2
    rm -rf "$kh"; mkdir -p "$kh"
    for p in "linux-headers-$kver" $hpkgs; do
        dpkg-deb -x "$(ls "$PG_CACHE/debs/${p}"_*.deb | head -1)" "$kh"
    done
    common=$(sed -n 's|^include /usr/src/\(.*\)/Makefile$|\1|p' "$hdir/Makefile")
    [ -n "$common" ] && [ -d "$kh/usr/src/$common" ] ||
        die "unexpected $hdir/Makefile"
    # The Makefile names the common headers by their installed path.
    echo "include $kh/usr/src/$common/Makefile" > "$hdir/Makefile"
    touch "$kh/.pg-done"
fi

out=$PG_BUILD/torture
mkdir -p "$out"
cp "$PG_ROOT/torture/gntt.c" "$PG_ROOT/torture/Kbuild" "$out/"
make -C "$hdir" M="$out" modules >"$out/build.log" 2>&1 || {
    tail -n 30 "$out/build.log" >&2
    die "torture module build failed (log: $out/build.log)"
}
! grep -E 'warning:' "$out/build.log" | grep -v 'Skipping BTF' >&2 ||
    die "torture module built with warnings"
echo "$out/gntt.ko"
