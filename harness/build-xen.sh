#!/bin/bash
# build-xen.sh VARIANT [CONFIG]
# Build the hypervisor of one variant from the tree under test:
#   base      the tree + the test-only counters
#   patched   the tree + patches/<base>/ (the series) + the counters
#   negative  the tree + the counters + test-patches/negative/<base>/
#   neg-NAME  patched + test-patches/neg-NAME/<base>/ (a mutation of the
#             series that the torture driver must catch)
#   plain     the tree alone, and
#   series    the tree + the series, without the test-only patches (the
#             kit's release builds, for timing on hardware)
# CONFIG: debug (default: CONFIG_DEBUG, perf counters), release, or
# arm64 (debug, cross-built, no counters: build check only).
# Prints the path of the built binary on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: build-xen.sh base|patched|negative|neg-NAME|plain|series [debug|release|arm64]}
config=${2:-debug}
case "$variant" in
base|patched|negative|plain|series) ;;
neg-*) [ -d "$PG_ROOT/test-patches/$variant" ] || die "unknown variant $variant" ;;
*) die "unknown variant $variant" ;;
esac
case "$config" in debug|release|arm64) ;; *) die "unknown config $config" ;; esac

tree=$(pg_tree)
base=$(pg_tree_base "$tree")
instr=$PG_ROOT/test-patches/instrument/$base
neg=$PG_ROOT/test-patches/negative/$base

patchset() {
    case "${1:-$variant}" in
    base) ls "$instr"/*.patch ;;
    plain) ;;
    series) pg_series "$base" ;;
    patched) pg_series "$base"
             ls "$instr"/*.patch ;;
    negative) ls "$instr"/*.patch "$neg"/*.patch ;;
    neg-*) [ -n "$(pg_series "$base")" ] || die "$variant: no series for $base"
           pg_series "$base"
           ls "$instr"/*.patch
           ls "$PG_ROOT/test-patches/$variant/$base"/*.patch ||
               die "$variant has no mutation for $base" ;;
    esac
}

# A pristine git copy of the tree, made once per tree state.  Builds of
# one tree are serialised: concurrent runs would share these folders.
work=$PG_BUILD/$base
mkdir -p "$work"
exec 9>"$work/.lock"
flock 9
pristine=$work/pristine
tree_id="$(pg_tree_describe "$tree") $(pg_tree_version "$tree") $tree"
if [ "$(cat "$pristine/.pg-tree" 2>/dev/null)" != "$tree_id" ]; then
    step "copying the tree ($tree_id)" >&2
    rm -rf "$pristine"; mkdir -p "$pristine"
    rsync -a --exclude=.git "$tree"/ "$pristine"/
    git -C "$pristine" init -q
    git -C "$pristine" add -A
    git -C "$pristine" -c user.name=pg -c user.email=pg@invalid \
        commit -q -m "tree under test: $tree_id"
    # A git checkout lends its objects (the copy holds its own), so that
    # 'git am -3' finds the blobs the test-only patches were made against
    # when the tree is a later commit of their base (the stable-4.17 head).
    if pg_tree_is_git "$tree"; then
        echo "$(git -C "$tree" rev-parse --path-format=absolute \
                    --git-common-dir)/objects" \
            > "$pristine/.git/objects/info/alternates"
    fi
    echo "$tree_id" > "$pristine/.pg-tree"
fi

# stamp PATCHES: what a build of the tree with PATCHES in this config is.
stamp() {
    (echo "$tree_id $config"; for p in $1; do sha1sum < "$p"; done) | sha1sum
}
dir=$work/$variant-$config
patches=$(patchset)
[ "$config" = arm64 ] && patches=$(echo "$patches" | grep -v '/test-patches/' || true)
stamp=$(stamp "$patches")
out=$dir/xen
[ "$config" = arm64 ] && out=$dir/xen-arm64
if [ "$(cat "$dir/.pg-stamp" 2>/dev/null)" = "$stamp" ] && [ -s "$out" ]; then
    echo "$out"; exit 0
fi

# A mutation of the patched tree is built from a copy of patched's build
# of this config, when it is current: make rebuilds what the mutation
# touches (the copy keeps every timestamp; its .cmd files name no
# absolute path).
pdir=$work/patched-$config
rm -rf "$dir"; mkdir -p "$dir"
case "$variant" in
neg-*) [ "$config" = debug ] &&
       [ "$(cat "$pdir/.pg-stamp" 2>/dev/null)" = "$(stamp "$(patchset patched)")" ] &&
       [ -s "$pdir/xen" ] ;;
*) false ;;
esac && incremental=1 || incremental=
if [ -n "$incremental" ]; then
    cp -a "$pdir/src" "$dir/src"
    patches=$(ls "$PG_ROOT/test-patches/$variant/$base"/*.patch)
else
    git clone -q --shared "$pristine" "$dir/src"
fi
for p in $patches; do
    git -C "$dir/src" -c user.name=pg -c user.email=pg@invalid am -q -3 "$p" \
        >"$dir/am.log" 2>&1 || {
        cat "$dir/am.log" >&2
        [ -z "${XEN_SRC:-}" ] || pg_tree_is_git "$tree" ||
            echo "note: XEN_SRC is no git checkout; a tree past its base needs one (README)" >&2
        die "$variant: $(basename "$p") does not apply to the $base tree"
    }
done
if [ "$variant" = patched ] && [ -z "$(pg_series "$base")" ]; then
    echo "note: patches/$base has no series yet: 'patched' equals 'base'" >&2
fi

step "building $base $variant ($config${incremental:+, incrementally from patched})" >&2
perf=; [ "$config" = debug ] && perf=perf
{
    if [ -n "$incremental" ]; then
        pg_xen_make "$dir/src" "$config"
    else
        pg_xen_config "$dir/src" "$config" $perf &&
            pg_xen_make "$dir/src" "$config"
    fi
} >"$dir/build.log" 2>&1 || {
    tail -n 30 "$dir/build.log" >&2
    die "build failed: $base $variant ($config), log: $dir/build.log"
}
cp "$dir/src/xen/xen" "$out"
[ "$config" != debug ] ||
    grep -q '^CONFIG_PERF_COUNTERS=y' "$dir/src/xen/.config" ||
    die "perf counters not enabled"
echo "$stamp" > "$dir/.pg-stamp"
echo "$out"
