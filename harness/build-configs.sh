#!/bin/bash
# build-configs.sh [NAME...]
# The tree with the whole series must build in the configurations its
# code has branches for, beyond build-prefixes.sh's x86_64 debug/release
# and arm64 (x86_64 debug, EXPERT, each from defconfig):
#   no-hvm         CONFIG_HVM=n
#   no-amd-iommu   CONFIG_AMD_IOMMU=n
#   no-intel-iommu CONFIG_INTEL_IOMMU=n
#   no-grant-table CONFIG_GRANT_TABLE=n
#   clang          built with clang (Debian's), debug
# One tree, cleaned and rebuilt for each; a failure is reported and
# the others still built.  Not part of `make check` (five full builds):
# `make configs`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

names=${*:-no-hvm no-amd-iommu no-intel-iommu no-grant-table clang}
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
patches=$(pg_series "$base")
[ -n "$patches" ] || die "no series in patches/$base"
command -v clang >/dev/null || die "clang not installed (apt-get install clang)"
"$PG_ROOT/harness/build-xen.sh" base debug >/dev/null
dir=$PG_BUILD/$base/configs
rm -rf "$dir"; mkdir -p "$dir"
git clone -q --shared "$PG_BUILD/$base/pristine" "$dir/src"
for p in $patches; do
    git -C "$dir/src" -c user.name=pg -c user.email=pg@invalid am -q "$p" ||
        die "$(basename "$p") does not apply to $base"
done

fails=0
for name in $names; do
    cc="ccache gcc" opt=
    case "$name" in
    no-hvm) opt=CONFIG_HVM ;;
    no-amd-iommu) opt=CONFIG_AMD_IOMMU ;;
    no-intel-iommu) opt=CONFIG_INTEL_IOMMU ;;
    no-grant-table) opt=CONFIG_GRANT_TABLE ;;
    clang) cc="ccache clang" ;;
    *) die "unknown configuration $name" ;;
    esac
    step "build $base with the series: $name"
    log=$dir/$name.log
    if {
        git -C "$dir/src" clean -qxdf &&
        make -C "$dir/src/xen" CC="$cc" defconfig &&
        printf 'CONFIG_EXPERT=y\nCONFIG_DEBUG=y\n' >> "$dir/src/xen/.config" &&
        if [ -n "$opt" ]; then echo "# $opt is not set" >> "$dir/src/xen/.config"; fi &&
        make -C "$dir/src/xen" CC="$cc" olddefconfig &&
        if [ -n "$opt" ] && grep -q "^$opt=y" "$dir/src/xen/.config"; then
            echo "error: $opt is still set"; false
        fi &&
        make -C "$dir/src/xen" -j"$(nproc)" CC="$cc"
    } >"$log" 2>&1; then
        echo "$name: ok"
    else
        tail -n 20 "$log"
        echo "$name: FAILED (log: $log)"
        fails=$((fails + 1))
    fi
done
[ $fails -eq 0 ] || die "$fails configuration builds failed"
