#!/bin/bash
# harness/build-prefixes.sh's verdict on a failed build, with stand-ins
# for the tree, the configuration and the compiler: a failure the tree
# alone shows with the same first error is the tree's (named, not
# counted); one the tree alone does not show, or shows with another
# first error, fails.  Could wrongly pass if pg_xen_make's logs stopped
# carrying gcc's "file:line:col: error: " lines.
set -uo pipefail
. "$(dirname "$0")/../../harness/lib.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/harness" "$t/patches/staging" "$t/tree/xen"
cp "$PG_ROOT/harness/build-prefixes.sh" "$t/harness/"
# The tree: one file; the series: one patch adding a line to it.
(cd "$t/tree" && echo 'int a;' > xen/a.c && git init -q && git add -A &&
 git -c user.name=t -c user.email=t@t commit -qm tree)
(cd "$t/tree" && echo 'int b;' >> xen/a.c &&
 git -c user.name=t -c user.email=t@t commit -qam series &&
 git format-patch -q -1 -o "$t/patches/staging" && git reset -q --hard HEAD~1)
# lib.sh's helpers as build-prefixes.sh uses them.  pg_xen_make fails
# with TREE_ERR on any tree, and with SERIES_ERR where the series is in.
cat > "$t/harness/lib.sh" <<'LIB'
PG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_BUILD=$PG_ROOT/build
die() { echo "error: $*" >&2; exit 1; }
step() { echo "[step] $*"; }
pg_tree() { echo "$PG_ROOT/tree"; }
pg_tree_base() { echo staging; }
pg_series() { ls "$PG_ROOT/patches/$1"/0*.patch; }
pg_xen_config() { :; }
pg_xen_make() {
    if grep -q 'int b' "$1/xen/a.c" && [ -n "${SERIES_ERR:-}" ]; then
        echo "$SERIES_ERR"; return 1; fi
    [ -z "${TREE_ERR:-}" ] || { echo "$TREE_ERR"; return 1; }
}
LIB
cat > "$t/harness/build-xen.sh" <<'BX'
#!/bin/bash
. "$(dirname "$0")/lib.sh"
p=$PG_BUILD/staging/pristine
[ -d "$p" ] || git clone -q "$PG_ROOT/tree" "$p"
BX
chmod +x "$t/harness/"*.sh
e1="arch/arm/efi/boot.c:160:24: error: 'map_res' defined but not used [-Werror=unused-variable]"
e2="common/grant_table.c:10:2: error: implicit declaration of function 'x'"
bp() { rm -rf "$t/build"; env "$@" "$t/harness/build-prefixes.sh" arm64:last > "$t/out" 2>&1; }
bp
pg_result $? "a series that builds passes"
bp TREE_ERR="$e1" SERIES_ERR="$e1"
[ $? = 0 ] && grep -q "prefix 1-1 arm64: fails as the tree alone does, not the series'" "$t/out"
pg_result $? "a failure the tree alone shows with the same first error is the tree's, named"
! bp SERIES_ERR="$e2" && grep -q "prefix 1-1 arm64: FAILED" "$t/out"
pg_result $? "a failure the tree alone does not show fails"
! bp TREE_ERR="$e1" SERIES_ERR="$e2" && grep -q "prefix 1-1 arm64: FAILED" "$t/out"
pg_result $? "a failure with another first error than the tree alone's fails"
! bp TREE_ERR="make: *** [Makefile:1] Error 2" SERIES_ERR="make: *** [Makefile:1] Error 2" &&
    grep -q "prefix 1-1 arm64: FAILED" "$t/out"
pg_result $? "a failure without a compiler error fails, whatever the tree alone does"
pg_tally
