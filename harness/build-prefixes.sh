#!/bin/bash
# build-prefixes.sh [CONFIG...]
# Every prefix of the series (1, 1-2, ..., 1-n) must apply and build:
# x86_64 debug and release, and arm64 (cross).  One tree per config,
# the patches applied one at a time, an incremental build after each.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

configs=${*:-debug release arm64}
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
patches=$(ls "$PG_ROOT/patches/$base"/0*.patch 2>/dev/null | grep -v '/0000-' || true)
[ -n "$patches" ] || die "no series in patches/$base"
# The pristine copy of the tree is made by build-xen.sh.
"$PG_ROOT/harness/build-xen.sh" base debug >/dev/null
pristine=$PG_BUILD/$base/pristine

fails=0
for config in $configs; do
    dir=$PG_BUILD/$base/prefix-$config
    rm -rf "$dir"; mkdir -p "$dir"
    git clone -q --shared "$pristine" "$dir/src"
    mk=(make -C "$dir/src/xen" -j"$(nproc)")
    case "$config" in
    arm64) mk+=(XEN_TARGET_ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
                CC="ccache aarch64-linux-gnu-gcc") ;;
    debug|release) mk+=(CC="ccache gcc") ;;
    *) die "unknown config $config" ;;
    esac
    "${mk[@]}" defconfig >"$dir/config.log" 2>&1
    if [ "$config" != release ]; then
        printf 'CONFIG_EXPERT=y\nCONFIG_DEBUG=y\n' >> "$dir/src/xen/.config"
    fi
    "${mk[@]}" olddefconfig >>"$dir/config.log" 2>&1
    k=0
    for p in $patches; do
        k=$((k + 1))
        git -C "$dir/src" -c user.name=pg -c user.email=pg@invalid am -q "$p" \
            >"$dir/am-$k.log" 2>&1 || {
            cat "$dir/am-$k.log" >&2
            die "$(basename "$p") does not apply to $base"
        }
        step "build $base prefix 1-$k ($config)"
        if "${mk[@]}" >"$dir/build-$k.log" 2>&1; then
            echo "prefix 1-$k $config: ok"
        else
            tail -n 20 "$dir/build-$k.log"
            echo "prefix 1-$k $config: FAILED (log: $dir/build-$k.log)"
            fails=$((fails + 1))
        fi
    done
done
[ $fails -eq 0 ] || die "$fails prefix builds failed"
