#!/bin/bash
# unit.sh: the userspace unit tests (one folder each under unit/) and
# the negative controls of the lint.  Prints "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

pass=0 fail=0
# unit/amd-cmd compiles the AMD-Vi command builders of the tree under test
# with the series applied: AMDDIR holds those files (none without a tree).
amd=$(mktemp -d)
trap 'rm -rf "$amd"' EXIT
export AMDDIR=$amd/xen/drivers/passthrough/amd
if tree=$(pg_tree 2>/dev/null) && base=$(pg_tree_base "$tree" 2>/dev/null)
then
    mkdir -p "$AMDDIR"
    cp "$tree"/xen/drivers/passthrough/amd/{iommu-defs.h,iommu.h,iommu_cmd.c} \
        "$AMDDIR"/
    for p in $(pg_series "$base"); do
        (cd "$amd" && git apply \
            --include=xen/drivers/passthrough/amd/iommu-defs.h \
            --include=xen/drivers/passthrough/amd/iommu.h \
            --include=xen/drivers/passthrough/amd/iommu_cmd.c "$p") ||
            echo "unit.sh: $(basename "$p") does not apply" >&2
    done
fi
result() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok: $2"
           else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

for d in "$PG_ROOT"/unit/*/; do
    [ -f "$d/Makefile" ] || continue
    make -s -C "$d" check >/tmp/pg-unit.$$ 2>&1; rc=$?
    sed 's/^/  /' /tmp/pg-unit.$$; rm -f /tmp/pg-unit.$$
    result $rc "unit/$(basename "$d")"
done
# Negative controls: each unit test must fail on a mutated helper.
replace() {
    FROM=$2 TO=$3 python3 -c 'import os, sys
p = sys.argv[1]; s = open(p).read(); f = os.environ["FROM"]
assert f in s, f; open(p, "w").write(s.replace(f, os.environ["TO"]))' "$1"
}
mutant() {
    local dir=$1 file=$2 from=$3 to=$4 tmp
    tmp=$(mktemp -d)
    cp -r "$PG_ROOT/unit/$dir/." "$tmp/"
    replace "$tmp/$file" "$from" "$to" || { rm -rf "$tmp"; return 1; }
    make -s -C "$tmp" check >/dev/null 2>&1; local rc=$?
    rm -rf "$tmp"
    [ $rc -ne 0 ]
}
# unit/bootlog runs the parsers with a mutated copy of their shared
# reader, harness/bootlog.py, given by BOOTLOG_PY.
rmutant() {
    local from=$1 to=$2 tmp
    tmp=$(mktemp -d)
    cp "$PG_ROOT/harness/bootlog.py" "$tmp/"
    replace "$tmp/bootlog.py" "$from" "$to" || { rm -rf "$tmp"; return 1; }
    BOOTLOG_PY=$tmp/bootlog.py make -s -C "$PG_ROOT/unit/bootlog" check \
        >/dev/null 2>&1; local rc=$?
    rm -rf "$tmp"
    [ $rc -ne 0 ]
}
mutant vtd-psi psi.h 'dfn_x(dfn) & ~((1UL << order) - 1)' 'dfn_x(dfn)'
result $? "unit/vtd-psi catches an unaligned base"
mutant vtd-psi psi.h 'order = flsl(dfn_x(dfn) ^ last);' 'order = flsl(dfn_x(dfn) ^ last) + 1;'
result $? "unit/vtd-psi catches a block larger than needed"
mutant vtd-psi psi.h 'if ( last < dfn_x(dfn) )' 'if ( 0 )'
result $? "unit/vtd-psi catches a wrapping range not flushed domain-selectively"
mutant iotlb-gather gather.h 'f->flags |= flags;' 'f->flags = flags;'
result $? "unit/iotlb-gather catches lost flags"
mutant iotlb-gather gather.h 'f->first = min(f->first, first);' 'f->first = first;'
result $? "unit/iotlb-gather catches a range lost from the gather"
mutant iotlb-gather gather.h '(order > dom_iommu(d)->platform_ops->max_flush_order ||' '(order > dom_iommu(d)->platform_ops->max_flush_order + 9 ||'
result $? "unit/iotlb-gather catches a gather beyond what the IOMMU invalidates selectively"
mutant iotlb-gather gather.h 'max(1UL << 9, 64 * (g->pages + s->pages))' 'max(1UL << 12, 64 * (g->pages + s->pages))'
result $? "unit/iotlb-gather catches a gather beyond the density rule"
mutant iotlb-gather gather.h '!iommu_flush_gather(d, gather, &skipped) )
        flush_iotlb(d, gather);' '!iommu_flush_gather(d, gather, &skipped) )
        gather->flags = 0;'
result $? "unit/iotlb-gather catches a gather dropped instead of flushed"
mutant iotlb-gather gather.h '    if ( gather->flags & IOMMU_FLUSHF_all )
        flush_iotlb(d, gather);
' ''
result $? "unit/iotlb-gather catches IOMMU_FLUSHF_all left in the gather"
mutant iotlb-gather gather.h '    f->flags = 0;
}' '}'
result $? "unit/iotlb-gather catches a gather left behind by its flush"
mutant iotlb-gather record.h 'this_cpu(skipped_domain) == d' 'true'
result $? "unit/iotlb-gather catches another domain's flush deferred"
# unit/amd-cmd on a copy of the AMD-Vi sources with the S bit fix reverted.
amutant() {
    local tmp rc
    tmp=$(mktemp -d)
    cp -r "$PG_ROOT/unit/amd-cmd/." "$AMDDIR" "$tmp/" && rm -f "$tmp/cmd.h" &&
        replace "$tmp/amd/iommu_cmd.c" "$1" "$2" || { rm -rf "$tmp"; return 1; }
    make -s -C "$tmp" check AMDDIR="$tmp/amd" >/dev/null 2>&1; rc=$?
    rm -rf "$tmp"
    [ $rc -ne 0 ]
}
amutant 'IOMMU_INV_IOTLB_PAGES_S_FLAG_SHIFT, &entry);' \
        'IOMMU_INV_IOTLB_PAGES_S_FLAG_MASK, &entry);'
result $? "unit/amd-cmd catches INVALIDATE_IOTLB_PAGES without its S bit"
amutant '        u64 mask = 1ULL << (order - 1 + PAGE_SHIFT);' \
        '        u64 mask = 1ULL << (order + PAGE_SHIFT);'
result $? "unit/amd-cmd catches a block one size too large"
rmutant 'MARKER = re.compile(r"\((?:XEN|' 'MARKER = re.compile(r"\((?:NONE|'
result $? "unit/bootlog catches a reader that does not split off (XEN)"
rmutant '                rec[1] += head' '                pass'
result $? "unit/bootlog catches a reader that does not rejoin a split line"
rmutant '            self.cut(rec)' '            pass'
result $? "unit/bootlog catches a reader that takes a cut-off last line"

# scatter-policies.py --netback: the batches Xen printed after each
# NB-FRAMES line, a row per number of streams; a log without them fails.
t=$(mktemp)
printf 'NB-FRAMES rep=1 dir=domU-dom0 streams=1\r\n(XEN) pg-frames-begin: batches=2 frames=3 dropped=0\r\n(XEN) pg-frames: pfns=100,101\r\n(XEN) pg-frames: pfns=300\r\n(XEN) pg-frames-end\r\n(XEN) pg-frames: pfns=7\r\n' > "$t"
python3 "$PG_ROOT/harness/scatter-policies.py" --netback "$t" --json "$t.json" \
    >/dev/null && python3 - "$t.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert [x["frames"] for x in r] == ["netback, 1 streams"], r
assert (r[0]["batches"], r[0]["pages"]) == (2, 3), r
assert r[0]["per-page"] == {"invalidations": 3, "pages_covered": 3}, r
assert r[0]["density"] == {"invalidations": 2, "pages_covered": 3}, r
PY
result $? "scatter-policies replays netback's recorded batches"
printf 'NB-FRAMES rep=1 dir=domU-dom0 streams=1\r\n' > "$t"
! python3 "$PG_ROOT/harness/scatter-policies.py" --netback "$t" >/dev/null 2>&1
result $? "scatter-policies fails on a bench log without recorded frames"
# "density, 2": interleaved frames of two regions take one invalidation
# per region, a third region flushes the older range first.
python3 - "$PG_ROOT/harness/scatter-policies.py" <<'PY'
import importlib.util, sys
s = importlib.util.spec_from_file_location("sp", sys.argv[1])
sp = importlib.util.module_from_spec(s)
s.loader.exec_module(sp)
a, b, c = 0x1000, 0x900000, 0x40000
assert sp.replay([a, b, a + 1, b + 1], "density") == (4, 4)
assert sp.replay([a, b, a + 1, b + 1], "density, 2") == (2, 4)
assert sp.replay([a, b, c, a + 1], "density, 2") == (4, 4)
# a frame both ranges may take joins the one whose block stays smaller
# (0x301: 0x300's, 2 pages, not 0x0-0xf's, which would grow to 2^10)
f = [0x0, 0x300] + list(range(1, 16)) + [0x301]
assert sp.replay(f, "density, 2") == (2, 16 + 2)
PY
result $? "scatter-policies' two-range policy"
rm -f "$t" "$t.json"

# pg_series: the mails in order without the cover letter; nothing (and
# success) for a base without a series.
t=$(mktemp -d); mkdir -p "$t/patches/x"
touch "$t/patches/x/0000-cover-letter.patch" "$t/patches/x/0002-b.patch" \
      "$t/patches/x/0001-a.patch" "$t/patches/x/BASE"
got=$(PG_ROOT=$t; pg_series x | xargs -n1 basename | xargs)
[ "$got" = "0001-a.patch 0002-b.patch" ]
result $? "pg_series lists the series in order, without the cover letter"
got=$(PG_ROOT=$t; pg_series y) && [ -z "$got" ]
result $? "pg_series is empty for a base without a series"
rm -rf "$t"

for b in "$PG_ROOT"/patches/*/; do
    [ -x "$PG_ROOT/unit/check-sync.sh" ] || break
    "$PG_ROOT/unit/check-sync.sh" "$b" >/dev/null 2>&1
    result $? "unit helpers are the ones in patches/$(basename "$b")"
done

# The two series change the same functions, or patches/README.md says why;
# without its explanations the comparison must fail.
if [ -d "$PG_ROOT/patches/staging" ] && [ -d "$PG_ROOT/patches/stable-4.17" ]; then
    python3 "$PG_ROOT/harness/compare-series.py" "$PG_ROOT/patches/staging" \
        "$PG_ROOT/patches/stable-4.17" "$PG_ROOT/patches/README.md"
    result $? "staging and stable-4.17 series change the same functions"
    python3 "$PG_ROOT/harness/compare-series.py" "$PG_ROOT/patches/staging" \
        "$PG_ROOT/patches/stable-4.17" /dev/null >/dev/null
    [ $? = 1 ]; result $? "series comparison catches unexplained differences"
fi

# The lint must pass on the series and catch each known-bad sample.
python3 "$PG_ROOT/harness/lint-patches.py" "$PG_ROOT"/patches/*/ >/dev/null
result $? "lint of patches/*"
python3 "$PG_ROOT/harness/lint-patches.py" "$PG_ROOT/harness/lint-samples/good.patch" >/dev/null
result $? "lint passes the good sample"
for bad in "$PG_ROOT"/harness/lint-samples/bad-*.patch; do
    [ -f "$bad" ] || continue
    python3 "$PG_ROOT/harness/lint-patches.py" "$bad" >/dev/null
    [ $? = 1 ]; result $? "lint catches $(basename "$bad")"
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
