#!/bin/bash
# build-prefixes.sh [CONFIG[:last]...]
# Every prefix of the series (1, 1-2, ..., 1-n) must apply and build:
# x86_64 debug and release, and arm64 (cross).  One tree per config,
# the patches applied one at a time, an incremental build after each;
# CONFIG:last builds the whole series only (`make check`: debug, then
# arm64:last; `make configs`: all three, every prefix).  A failed build
# is the series' unless the tree alone fails in that config with the
# same first error (a downstream tree that does not build for arm64,
# say): then it is named as the tree's, and not counted.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

configs=${*:-debug release arm64}
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
patches=$(pg_series "$base")
[ -n "$patches" ] || die "no series in patches/$base"
# The pristine copy of the tree is made by build-xen.sh.
"$PG_ROOT/harness/build-xen.sh" base debug >/dev/null
pristine=$PG_BUILD/$base/pristine

# first_error LOG: the first compiler or linker error of a build log.
first_error() { grep -m1 -E ': (fatal )?error: |undefined reference' "$1" || true; }
# tree_fails CONFIG DIR: the tree alone's first error in CONFIG (built
# once, into DIR/alone), nothing if it builds.
tree_fails() {
    local alone=$2/alone
    if [ ! -e "$alone/build.log" ]; then
        git clone -q --shared "$pristine" "$alone/src" &&
            pg_xen_config "$alone/src" "$1" >"$alone/config.log" 2>&1 &&
            pg_xen_make "$alone/src" "$1" >"$alone/build.log" 2>&1 ||
            echo failed >>"$alone/build.log"
    fi
    first_error "$alone/build.log"
}

fails=0
n=$(echo $patches | wc -w)
for config in $configs; do
    from=1
    case "$config" in *:last) config=${config%:last} from=$n ;; esac
    dir=$PG_BUILD/$base/prefix-$config
    rm -rf "$dir"; mkdir -p "$dir"
    git clone -q --shared "$pristine" "$dir/src"
    case "$config" in debug|release|arm64) ;; *) die "unknown config $config" ;; esac
    pg_xen_config "$dir/src" "$config" >"$dir/config.log" 2>&1 ||
        die "configuring $config failed (log: $dir/config.log)"
    k=0
    for p in $patches; do
        k=$((k + 1))
        git -C "$dir/src" -c user.name=pg -c user.email=pg@invalid am -q "$p" \
            >"$dir/am-$k.log" 2>&1 || {
            cat "$dir/am-$k.log" >&2
            die "$(basename "$p") does not apply to $base"
        }
        [ $k -ge $from ] || continue
        step "build $base prefix 1-$k ($config)"
        if pg_xen_make "$dir/src" "$config" >"$dir/build-$k.log" 2>&1; then
            echo "prefix 1-$k $config: ok"
        else
            tail -n 20 "$dir/build-$k.log"
            err=$(first_error "$dir/build-$k.log")
            step "the tree alone ($config), for the failure's cause"
            if [ -n "$err" ] && [ "$(tree_fails "$config" "$dir")" = "$err" ]; then
                echo "prefix 1-$k $config: fails as the tree alone does, not the series' ($err; logs: $dir/build-$k.log, $dir/alone/build.log)"
            else
                echo "prefix 1-$k $config: FAILED (log: $dir/build-$k.log)"
                fails=$((fails + 1))
            fi
        fi
    done
done
[ $fails -eq 0 ] || die "$fails prefix builds failed"
