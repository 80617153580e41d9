#!/bin/bash
# unit.sh: the userspace unit tests (one folder each under unit/) and
# the negative controls of the lint.  Prints "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# unit/amd-cmd compiles the AMD-Vi command builders of the tree under test
# with the series applied: AMDDIR holds those files (none without a tree).
amd=$(mktemp -d)
trap 'rm -rf "$amd"' EXIT
export AMDDIR=$amd/xen/drivers/passthrough/amd
if tree=$(pg_tree 2>/dev/null) && base=$(pg_tree_base "$tree" 2>/dev/null)
then
    mkdir -p "$AMDDIR"
    cp "$tree"/xen/drivers/passthrough/amd/{iommu-defs.h,iommu.h,iommu_cmd.c,iommu_map.c,pci_amd_iommu.c} \
        "$AMDDIR"/
    for p in $(pg_series "$base"); do
        (cd "$amd" && git apply \
            --include=xen/drivers/passthrough/amd/iommu-defs.h \
            --include=xen/drivers/passthrough/amd/iommu.h \
            --include=xen/drivers/passthrough/amd/iommu_cmd.c \
            --include=xen/drivers/passthrough/amd/iommu_map.c \
            --include=xen/drivers/passthrough/amd/pci_amd_iommu.c "$p") ||
            echo "unit.sh: $(basename "$p") does not apply" >&2
    done
fi

for d in "$PG_ROOT"/unit/*/; do
    [ -f "$d/Makefile" ] || continue
    make -s -C "$d" check >/tmp/pg-unit.$$ 2>&1; rc=$?
    sed 's/^/  /' /tmp/pg-unit.$$; rm -f /tmp/pg-unit.$$
    pg_result $rc "unit/$(basename "$d")"
done
# Negative controls: each unit test must fail on a mutated copy of the
# code it compiles.  A mutant runs in a copy (of unit/ as a whole, as
# iotlb-gather includes ../vtd-psi/psi.h) which must first build and
# pass unmutated.  The mutated copy must build (`make build`): one that
# does not is an error of the check, FAIL, never a catch.  It is caught
# only if its test (`make run`) ends with a non-zero status and its own
# summary "N passed, M failed", M > 0.  The run is under a timeout of
# $mtimeout seconds, which ends the test and its children: a test that
# does not end in time is reported as a hang, and a hang is a FAIL (not
# caught): the test must catch the mutant itself, and unit/iotlb-gather
# bounds its removal loop for that reason.
mtimeout=120
# mrun DIR [VAR=value...]: build, then run the test in DIR.  Sets mout
# (the output of the step that ended it) and mfailed (the test's failure
# count); returns 0 if the test passed, 1 if it failed on its own, 2 if
# it did not build, 3 if it did not end in time, 4 if it ended otherwise
# (a crash, a status not matching its summary, no summary).
mrun() {
    local dir=$1 rc sum; shift
    mfailed=
    mout=$(make -s -C "$dir" "$@" clean build 2>&1) || return 2
    mout=$(timeout -k 10 "$mtimeout" make -s -C "$dir" "$@" run 2>&1); rc=$?
    case $rc in 124|137) return 3 ;; esac
    sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' <<<"$mout" | tail -n 1)
    [ -n "$sum" ] || return 4
    mfailed=${sum#*, }; mfailed=${mfailed% failed}
    if [ $rc = 0 ] && [ "$mfailed" = 0 ]; then return 0; fi
    if [ $rc != 0 ] && [ "$mfailed" != 0 ]; then return 1; fi
    return 4
}
# mcheck NAME WHAT DIR FILE FROM TO [VAR=value...]: the mutant WHAT of
# unit/NAME, in the copy DIR: DIR must build and pass, then, with FROM
# replaced by TO in FILE (every one), build and fail on its own.  Prints the result.
mcheck() {
    local name=$1 what=$2 dir=$3 file=$4 from=$5 to=$6 rc why; shift 6
    mrun "$dir" "$@"; rc=$?
    if [ $rc != 0 ]; then
        case $rc in
        1) why="its test fails ($mfailed failures)" ;;
        2) why="it does not compile" ;;
        3) why="its test hangs (no end within ${mtimeout}s)" ;;
        *) why="its test ends without its summary or with a wrong status" ;;
        esac
        why="the unmutated copy does not build and pass: $why"
    elif ! pg_mutate -a "$file" "$from" "$to" 2>/dev/null; then
        why="the text to mutate is not in $(basename "$file")"
    else
        mrun "$dir" "$@"; rc=$?
        case $rc in
        0) why="not caught: the test passes the mutant" ;;
        1) pg_result 0 "unit/$name catches $what ($mfailed failures)"
           return ;;
        2) why="the mutant does not compile (an error, not a catch)" ;;
        3) why="not caught: the test hangs (no end within ${mtimeout}s)" ;;
        *) why="not caught: the test ended without its own failure" ;;
        esac
    fi
    # a compiler's first errors, or the end of a test's output
    if [ $rc = 2 ]; then head -n 20; else tail -n 20; fi <<<"$mout" |
        sed 's/^/  /'
    pg_result 1 "unit/$name, mutant \"$what\": $why"
}
# mutant NAME FILE FROM TO WHAT: FILE of unit/NAME, in a copy of unit/.
mutant() {
    local tmp
    tmp=$(mktemp -d)
    cp -r "$PG_ROOT/unit" "$tmp/" &&
        mcheck "$1" "$5" "$tmp/unit/$1" "$tmp/unit/$1/$2" "$3" "$4"
    rm -rf "$tmp"
}
# amutant FROM TO WHAT [FILE]: unit/amd-cmd on a copy of the AMD-Vi
# sources, FILE (default iommu_cmd.c) mutated.
amutant() {
    local tmp
    tmp=$(mktemp -d)
    if [ -f "$AMDDIR/iommu_cmd.c" ]; then
        cp -r "$PG_ROOT/unit" "$tmp/" && cp -r "$AMDDIR" "$tmp/amd" &&
            mcheck amd-cmd "$3" "$tmp/unit/amd-cmd" \
                "$tmp/amd/${4:-iommu_cmd.c}" "$1" "$2" AMDDIR="$tmp/amd"
    else
        pg_result 1 "unit/amd-cmd, mutant \"$3\": no AMD-Vi sources (no tree)"
    fi
    rm -rf "$tmp"
}
# rmutant FROM TO WHAT: unit/bootlog runs the parsers with a mutated copy
# of their shared reader, harness/bootlog.py, given by BOOTLOG_PY.
rmutant() {
    local tmp
    tmp=$(mktemp -d)
    cp "$PG_ROOT/harness/bootlog.py" "$tmp/" &&
        mcheck bootlog "$3" "$PG_ROOT/unit/bootlog" "$tmp/bootlog.py" \
            "$1" "$2" BOOTLOG_PY="$tmp/bootlog.py"
    rm -rf "$tmp"
}

# The machinery's own test: a mutation that changes nothing must come
# out FAIL (not caught), one that does not compile FAIL as an error, a
# test that never ends FAIL as a hang: each check in a subshell, whose
# result must be that FAIL alone.
mself() {
    local want=$1 what=$2 out; shift 2
    out=$(pass=0 fail=0; "$@"; echo "mself: $pass passed, $fail failed")
    sed 's/^/  self-test: /' <<<"$out"
    grep -q "^FAIL: .*$want" <<<"$out" &&
        grep -qx 'mself: 0 passed, 1 failed' <<<"$out"
    pg_result $? "the mutant check reports $what: \"$want\""
}
nop="not caught: the test passes the mutant"
mself "$nop" "a no-op mutation of vtd-psi" mutant vtd-psi psi.h \
    'if ( last < dfn_x(dfn)' 'if ( last < dfn_x(dfn)' "no change"
mself "$nop" "a no-op mutation of iotlb-gather" mutant iotlb-gather gather.h \
    'f->flags |= flags;' 'f->flags |= flags;' "no change"
mself "$nop" "a no-op mutation of vtd-order" mutant vtd-order order.h \
    'if ( cap_pgsel_inv(iommu->cap) )' 'if ( cap_pgsel_inv(iommu->cap) )' \
    "no change"
mself "$nop" "a no-op mutation of amd-cmd" amutant \
    'IOMMU_INV_IOTLB_PAGES_S_FLAG_SHIFT, &entry);' \
    'IOMMU_INV_IOTLB_PAGES_S_FLAG_SHIFT, &entry);' "no change"
mself "$nop" "a no-op mutation of bootlog" rmutant \
    '            self.cut(rec)' '            self.cut(rec)' "no change"
# record.h's domain test with d unused (test.c's iommu_iotlb_flush() uses
# d nowhere else): -Werror=unused-parameter.
nocc="the mutant does not compile"
mself "$nocc" "iotlb-gather's mutant that does not compile" mutant \
    iotlb-gather record.h 'this_cpu(skipped_domain) == d' 'true' \
    "another domain's flush deferred, d unused"
mself "$nocc" "bootlog's mutant that does not compile" rmutant \
    '            self.cut(rec)' '            self.cut(rec' "a syntax error"
mself "not caught: the test hangs" "a test that does not end" \
    eval 'mtimeout=3; mutant vtd-psi test.c "int main(void)
{" "int main(void)
{
    for ( ;; )
        ;" "an endless test"'

mutant vtd-psi psi.h 'dfn_x(dfn) & ~((1UL << order) - 1)' 'dfn_x(dfn)' \
    "an unaligned base"
mutant vtd-psi psi.h 'order = flsl(dfn_x(dfn) ^ last);' \
    'order = flsl(dfn_x(dfn) ^ last) + 1;' "a block larger than needed"
mutant vtd-psi psi.h 'if ( last < dfn_x(dfn) || order' 'if ( order' \
    "a wrapping range not flushed domain-selectively"
mutant vtd-psi psi.h 'if ( last < dfn_x(dfn) || order > 63 - PAGE_SHIFT )' \
    'if ( last < dfn_x(dfn) )' "a block of 2^64 bytes or more sent as one"
# flush_add(): the union of the ranges, the OR of the flags.
mutant iotlb-gather gather.h 'f->flags |= flags;' 'f->flags = flags;' \
    "lost flags"
mutant iotlb-gather gather.h 'f->first = min(f->first, first);' \
    'f->first = first;' "a range's start lost from the gather"
mutant iotlb-gather gather.h 'f->last = max(f->last, last);' \
    'f->last = last;' "a range's end lost from the gather"
# iommu_end_deferral(): the gather's bounds and IOMMU_FLUSHF_all.
mutant iotlb-gather gather.h \
    'if ( order > dom_iommu(d)->platform_ops->max_flush_order ||' \
    'if ( order > dom_iommu(d)->platform_ops->max_flush_order + 9 ||' \
    "a gather beyond what the IOMMU invalidates selectively"
mutant iotlb-gather gather.h 'max(1UL << 9, 64 * (g->pages + s->pages))' \
    'max(1UL << 12, 64 * (g->pages + s->pages))' \
    "a gather beyond the density rule"
mutant iotlb-gather gather.h 'max_flush_order ||
             (1UL << order) > max(1UL << 9, 64 * (g->pages + s->pages)) )' \
    'max_flush_order )' "the density rule dropped"
mutant iotlb-gather gather.h '64 * (g->pages + s->pages)) )
            iommu_flush_gathered(d, g);' '64 * (g->pages + s->pages)) )
            g->flags = 0;' "a gather dropped instead of flushed"
mutant iotlb-gather gather.h '    if ( g->flags & IOMMU_FLUSHF_all )
        iommu_flush_gathered(d, g);
' '' "IOMMU_FLUSHF_all left in the gather"
mutant iotlb-gather gather.h \
    'if ( g->flags && !(s->flags & IOMMU_FLUSHF_all) )' 'if ( g->flags )' \
    "a gather the density rule rejects flushed before IOMMU_FLUSHF_all (two flushes)"
mutant iotlb-gather gather.h '    g->flags = 0;
}' '}' "a gather left behind by its flush"
mutant iotlb-gather gather.h '    ASSERT(!this_cpu(iommu_dont_flush_iotlb));
    /* A failure' '    /* A failure' "a gather flushed inside a deferral not asserted on"
# The deferral's domain.
mutant iotlb-gather record.h 'this_cpu(skipped_domain) == d' \
    '((void)d, true)' "another domain's flush deferred"
mutant iotlb-gather gather.h 'this_cpu(skipped_domain) = d;' \
    'this_cpu(skipped_domain) = ((void)d, NULL);' \
    "a deferral bound to no domain"
# vtd_setup()'s max_flush_order.
mutant vtd-order order.h '        if ( cap_pgsel_inv(iommu->cap) )
            flush_order = min_t(unsigned int, flush_order,
                                cap_max_amask_val(iommu->cap));' \
    '        flush_order = min_t(unsigned int, flush_order,
                            cap_pgsel_inv(iommu->cap)
                            ? cap_max_amask_val(iommu->cap) : 0);' \
    "a unit without PSI lowering it to 0 (v4's rule)"
mutant vtd-order order.h '        if ( cap_pgsel_inv(iommu->cap) )
            flush_order' '        if ( 1 )
            flush_order' "the MAMV field of a unit without PSI read"
mutant vtd-order order.h 'min(flush_order, 63U - PAGE_SHIFT)' 'flush_order' \
    "no cap at 63 - PAGE_SHIFT"
amutant 'IOMMU_INV_IOTLB_PAGES_S_FLAG_SHIFT, &entry);' \
        'IOMMU_INV_IOTLB_PAGES_S_FLAG_MASK, &entry);' \
        "INVALIDATE_IOTLB_PAGES without its S bit"
amutant '        u64 mask = 1ULL << (order - 1 + PAGE_SHIFT);' \
        '        u64 mask = 1ULL << (order + PAGE_SHIFT);' \
        "a block one size too large"
amutant '.max_flush_order = AMD_IOMMU_MAX_FLUSH_ORDER' '.max_flush_order = 63 - PAGE_SHIFT' \
        "iommu_ops' bound at 63 - PAGE_SHIFT" pci_amd_iommu.c
amutant '         order > AMD_IOMMU_MAX_FLUSH_ORDER )' '         order > 63 - PAGE_SHIFT )' \
        "a flush of any order below 64 sent as a block" iommu_map.c
amutant 'ASSERT(order <= AMD_IOMMU_MAX_FLUSH_ORDER);' 'ASSERT(order + PAGE_SHIFT <= 64);' \
        "the builders' ASSERT()s at 64 bits"
rmutant 'MARKER = re.compile(r"\((?:XEN|' 'MARKER = re.compile(r"\((?:NONE|' \
    "a reader that does not split off (XEN)"
rmutant '                rec[1] += head' '                pass' \
    "a reader that does not rejoin a split line"
rmutant '            self.cut(rec)' '            pass' \
    "a reader that takes a cut-off last line"
rmutant '|(?<=\S)%s|%s" % (STAMP, EVENT))' '|%s" % EVENT)' \
    "a reader that leaves a kernel message inside a workload line"
rmutant '|(?<=\S)%s|%s" % (STAMP, EVENT))' '|(?<=\S)%s" % STAMP)' \
    "a reader that leaves a trace event inside a workload line"
rmutant '(?:vtd|amdvi)_' 'vtd_' "a reader that knows VT-d's trace events only"

# scatter-policies.py --netback: the batches Xen printed after each
# NB-FRAMES line, a row per number of streams; a log without them fails.
t=$(mktemp -d)/base-1.log
printf 'NB-FRAMES rep=1 dir=domU-dom0 streams=1\r\n(XEN) pg-frames-begin: batches=2 frames=3 dropped=0\r\n(XEN) pg-frames: pfns=100,101\r\n(XEN) pg-frames: pfns=300\r\n(XEN) pg-frames-end\r\n(XEN) pg-frames: pfns=7\r\n' > "$t"
# pack() and unpack(): frames going down as well as up.
python3 - "$PG_ROOT/harness/scatter-policies.py" <<'PY'
import importlib.util, sys
s = importlib.util.spec_from_file_location("sp", sys.argv[1])
sp = importlib.util.module_from_spec(s)
s.loader.exec_module(sp)
for b, text in (([0x300, 0x100, 0x101], "300,-200,1"), ([7], "7")):
    assert sp.pack(b) == text and sp.unpack(text) == b, (b, sp.pack(b))
PY
pg_result $? "scatter-policies packs a batch's frames and unpacks them unchanged"
python3 "$PG_ROOT/harness/scatter-policies.py" --netback "$t" --json "$t.json" \
    >/dev/null && python3 - "$t.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j["policies"]
assert [x["frames"] for x in r] == ["base-1, 1 streams"], r
assert (r[0]["batches"], r[0]["pages"]) == (2, 3), r
assert r[0]["per-page"] == {"invalidations": 3, "pages_covered": 3}, r
assert r[0]["density"] == {"invalidations": 2, "pages_covered": 3}, r
assert j["batches"] == {"base-1, 1 streams": ["100,1", "300"]}, j
PY
pg_result $? "scatter-policies replays netback's recorded batches"
# and a record's batches (harness/record.py keeps them packed) replay
# to the same counts: base 1.50 invalidations per batch, one range 1.00.
mkdir "$t.d" && cp "$t.json" "$t.d/netback-vt-d-1cpu-policies.json" &&
echo '{"iommu": "vt-d", "rows": []}' >"$t.d/netback-vt-d-1cpu.json"
python3 "$PG_ROOT/harness/record.py" --what "make bench" --out "$t.rec" \
    "$t.d/netback-vt-d-1cpu.json" "$t.d/netback-vt-d-1cpu-policies.json" >/dev/null &&
    python3 "$PG_ROOT/harness/scatter-policies.py" --record "$t.rec" |
    grep -q '^  base-1, 1 str  *1.50 (1.0)  *1.00 (1.0)  '
pg_result $? "scatter-policies replays a bench record's packed batches"
rm -rf "$t.d" "$t.rec" "$t.json"
printf 'NB-FRAMES rep=1 dir=domU-dom0 streams=1\r\n' > "$t"
! python3 "$PG_ROOT/harness/scatter-policies.py" --netback "$t" >/dev/null 2>&1
pg_result $? "scatter-policies fails on a bench log without recorded frames"
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
pg_result $? "scatter-policies' two-range policy"
rm -rf "$(dirname "$t")"

# pg_series: the mails in order without the cover letter; nothing (and
# success) for a base without a series.
t=$(mktemp -d); mkdir -p "$t/patches/x"
touch "$t/patches/x/0000-cover-letter.patch" "$t/patches/x/0002-b.patch" \
      "$t/patches/x/0001-a.patch" "$t/patches/x/BASE"
got=$(PG_ROOT=$t; pg_series x | xargs -n1 basename | xargs)
[ "$got" = "0001-a.patch 0002-b.patch" ]
pg_result $? "pg_series lists the series in order, without the cover letter"
got=$(PG_ROOT=$t; pg_series y) && [ -z "$got" ]
pg_result $? "pg_series is empty for a base without a series"
# A record's hash of the series is of what git am applies: a cover
# letter regenerated to name the record leaves it as it was.
mkdir -p "$t/harness"; cp "$PG_ROOT/harness/record.py" "$t/harness/"
mails() { python3 -c 'import importlib.util as u, sys
s = u.spec_from_file_location("r", sys.argv[1]); m = u.module_from_spec(s)
s.loader.exec_module(m); print(m.mails("x"))' "$t/harness/record.py"; }
h1=$(mails); echo letter >"$t/patches/x/0000-cover-letter.patch"; h2=$(mails)
echo change >"$t/patches/x/0002-b.patch"; h3=$(mails)
[ "$h1" = "$h2" ] && [ "$h1" != "$h3" ] && [[ $h1 = *"'mails': 2"* ]]
pg_result $? "record.py hashes the series' mails, not the cover letter"
rm -rf "$t"

for b in "$PG_ROOT"/patches/*/; do
    [ -x "$PG_ROOT/unit/check-sync.sh" ] || break
    "$PG_ROOT/unit/check-sync.sh" "$b" >/dev/null 2>&1
    pg_result $? "unit helpers are the ones in patches/$(basename "$b")"
done

# The two series change the same functions, or patches/README.md says why;
# without its explanations the comparison must fail.
if [ -d "$PG_ROOT/patches/staging" ] && [ -d "$PG_ROOT/patches/stable-4.17" ]; then
    python3 "$PG_ROOT/harness/compare-series.py" "$PG_ROOT/patches/staging" \
        "$PG_ROOT/patches/stable-4.17" "$PG_ROOT/patches/README.md"
    pg_result $? "staging and stable-4.17 series change the same functions"
    python3 "$PG_ROOT/harness/compare-series.py" "$PG_ROOT/patches/staging" \
        "$PG_ROOT/patches/stable-4.17" /dev/null >/dev/null
    [ $? = 1 ]; pg_result $? "series comparison catches unexplained differences"
fi
# The stable-4.19 series makes the stable-4.17 one's changes (on another
# base): the same lines added and removed, patch by patch; staging's
# differ (patches 5 and 6), which the comparison must catch.
if [ -d "$PG_ROOT/patches/stable-4.17" ] && [ -d "$PG_ROOT/patches/stable-4.19" ]; then
    python3 "$PG_ROOT/harness/compare-series.py" --same \
        "$PG_ROOT/patches/stable-4.17" "$PG_ROOT/patches/stable-4.19"
    pg_result $? "stable-4.17 and stable-4.19 series make the same changes"
    python3 "$PG_ROOT/harness/compare-series.py" --same \
        "$PG_ROOT/patches/staging" "$PG_ROOT/patches/stable-4.19" >/dev/null
    [ $? = 1 ]; pg_result $? "series comparison catches changes made otherwise"
fi

# Our QEMU build's patch is the backport of the mail for QEMU master:
# the same message and change; a changed line in either must fail.
qm=("$PG_ROOT"/harness/qemu/mail/0001-*.patch) qb=("$PG_ROOT"/harness/qemu/0001-*.patch)
python3 "$PG_ROOT/harness/qemu/same-change.py" "${qm[0]}" "${qb[0]}"
pg_result $? "our QEMU's patch is the backport of harness/qemu/mail's"
t=$(mktemp)
sed 's/qatomic_or(&env->hflags2, HF2_IGNNE_MASK);/env->hflags2 |= HF2_IGNNE_MASK;/' \
    "${qb[0]}" >"$t"
! python3 "$PG_ROOT/harness/qemu/same-change.py" "${qm[0]}" "$t" >/dev/null
pg_result $? "a backport without the mail's qatomic_or() fails"
sed 's/^Cc: qemu-stable@nongnu.org$//' "${qm[0]}" >"$t"
! python3 "$PG_ROOT/harness/qemu/same-change.py" "$t" "${qb[0]}" >/dev/null
pg_result $? "a mail whose message differs from the backport's fails"
rm -f "$t"

# The READMEs' tables are what their records print (doc-tables.py).
docs=("$PG_ROOT/results/README.md" "$PG_ROOT/harness/README.md"
      "$PG_ROOT/bench/netback/README.md")
(python3 "$PG_ROOT/harness/doc-tables.py" "${docs[@]}" &&
    for f in "${docs[@]}"; do grep -q '^<!-- generated: ' "$f" || exit 1; done)
pg_result $? "the READMEs' tables are generated from their records"
# and doc-tables.py fails a table typed by hand, a marker it cannot read
# and a record that is not there: a copy of harness/ with a record of
# its own.
t=$(mktemp -d)
mkdir "$t/harness" "$t/results"
cp "$PG_ROOT/harness/doc-tables.py" "$PG_ROOT/harness/record-summary.py" \
    "$t/harness/"
cat >"$t/results/r.json" <<'JSON'
{"what": "make check", "date": "2026-01-01T00:00:00", "commit": "0",
 "tree": {}, "emulators": {"qemu": "q", "bochs": "b"},
 "stages": {"unit": "ok"}, "missing": []}
JSON
printf '%s\n' '<!-- generated: harness/record-summary.py results/r.json -->' \
    '```' '```' >"$t/doc.md"
python3 "$t/harness/doc-tables.py" --write "$t/doc.md" &&
    python3 "$t/harness/doc-tables.py" "$t/doc.md" &&
    grep -q '^  ok     unit$' "$t/doc.md"
pg_result $? "doc-tables.py writes a record's table, and passes it"
# A control caught by Xen's assertion has no case with a report: its
# catch is named.
python3 - "$t/results/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["torture"] = {"ok": True, "builds": [
    {"build": "neg-ptp-window", "role": "control", "ok": True, "cases": 0,
     "pages": 0, "caught_in": [], "caught_by": ["c33 (assertion)"]}]}
json.dump(r, open(sys.argv[1] + ".t", "w"))
PY
python3 "$t/harness/record-summary.py" "$t/results/r.json.t" |
    grep -q 'neg-ptp-window .* caught in c33 (assertion)$'
pg_result $? "record-summary.py names an assertion control's catch"
sed 's/^  ok     unit$/  ok     typed by hand/' "$t/doc.md" >"$t/hand.md"
sed 's/generated: harness/generated: \/tmp/' "$t/doc.md" >"$t/mark.md"
sed 's/r\.json/gone.json/' "$t/doc.md" >"$t/gone.md"
for f in hand mark gone; do
    ! python3 "$t/harness/doc-tables.py" "$t/$f.md" 2>/dev/null
    pg_result $? "doc-tables.py fails a doc whose block is $f"
done
rm -rf "$t"

# The cover letters' tables are what harness/cover-table.py prints for
# the record each names (results/*.json), whole and in one piece, and
# the one-range table what scatter-policies.py --pools prints (seeded);
# a letter naming no record, or whose table differs, fails.
letter_tables() { # LETTER: 0 when its tables are its record's
    python3 - "$PG_ROOT" "$1" <<'PY'
import json, re, subprocess, sys
root, path = sys.argv[1], sys.argv[2]
text = open(path).read()
recs = sorted(set(re.findall(r"results/[\w.+-]+\.json", text)))
prose = ("-fault-count", "-fault-ledger")
if not [r for r in recs if not any(p in r for p in prose)]:
    sys.exit("%s: names no record" % path)
for rec in recs:
    if any(p in rec for p in prose):  # cited in prose: it must exist
        open(root + "/" + rec).close()
        continue
    out = subprocess.run([sys.executable, root + "/harness/cover-table.py",
                          root + "/" + rec], capture_output=True, text=True)
    if out.returncode or out.stdout.strip("\n") not in text:
        sys.exit("%s: the tables differ from %s" % (path, rec))
    # under the QEMU build the letter names (check-letters.py: of its mails)
    r = json.load(open(root + "/" + rec))
    qemu = r.get("emulators", {}).get("qemu")
    if not qemu or "\nQEMU: %s\n" % qemu not in text:
        sys.exit("%s: no line 'QEMU: %s' for %s" % (path, qemu, rec))
out = subprocess.run([sys.executable, root + "/harness/scatter-policies.py",
                      "--pools"], capture_output=True, text=True)
if out.returncode or out.stdout.strip("\n") not in text:
    sys.exit("%s: the one-range table is not scatter-policies.py --pools'"
             % path)
PY
}
for f in "$PG_ROOT"/patches/*/0000-cover-letter.patch; do
    letter_tables "$f"
    pg_result $? "the tables of $(basename "$(dirname "$f")")'s cover letter are its record's"
done
t=$(mktemp)
sed '0,/^  contig\.  *1 /s//  contig.   9 /' \
    "$PG_ROOT/patches/staging/0000-cover-letter.patch" >"$t"
! letter_tables "$t" 2>/dev/null
pg_result $? "a cover letter table typed by hand fails"
sed '0,/^  2    20.00 (  1.0)   20.00/s//  2    20.00 (  1.0)    2.00/' \
    "$PG_ROOT/patches/staging/0000-cover-letter.patch" >"$t"
! letter_tables "$t" 2>/dev/null
pg_result $? "a one-range table typed by hand fails"
# a letter with a bench record's tables (the staging letter and its
# bench's, passing), then one line of them changed
b=results/2026-12-07-staging-bench.json
{ cat "$PG_ROOT/patches/staging/0000-cover-letter.patch"
  echo "netback: $b"; echo
  echo "QEMU: $(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["emulators"]["qemu"])' "$PG_ROOT/$b")"
  echo; python3 "$PG_ROOT/harness/cover-table.py" "$PG_ROOT/$b"; } >"$t.good"
sed '0,/^  VT-d, dom0 with 1 vCPU: held/s//  VT-d, dom0 with 1 vCPU: good/' \
    "$t.good" >"$t"
letter_tables "$t.good" && ! cmp -s "$t" "$t.good" &&
    ! letter_tables "$t" 2>/dev/null
pg_result $? "a netback table typed by hand fails"
rm -f "$t.good"
sed 's/^QEMU: .*harness\/qemu [0-9a-f]*/&0/' \
    "$PG_ROOT/patches/staging/0000-cover-letter.patch" >"$t"
! cmp -s "$t" "$PG_ROOT/patches/staging/0000-cover-letter.patch" &&
    ! letter_tables "$t" 2>"$t.err" && grep -q "no line 'QEMU: " "$t.err"
pg_result $? "a cover letter naming another QEMU build than its record's fails"
rm -f "$t" "$t.err"
# check-letters.py (check.sh, after its record) fails a letter whose
# record is of other mails: the staging letter, its records with another
# hash of the series, in a copy of the project.
t=$(mktemp -d) ok=1
mkdir -p "$t/results" "$t/patches" && ln -s "$PG_ROOT/harness" "$t/" &&
    cp -r "$PG_ROOT/patches/staging" "$t/patches/" || ok=
for r in $(grep -o 'results/[A-Za-z0-9_.+-]*\.json' \
               "$PG_ROOT/patches/staging/0000-cover-letter.patch" | sort -u); do
    python3 - "$PG_ROOT/$r" "$t/$r" <<'PY' || ok=
import json, sys
j = json.load(open(sys.argv[1]))
j["series"][j["tree"]["base"]]["sha256"] = "0" * 16
json.dump(j, open(sys.argv[2], "w"))
PY
done
[ -n "$ok" ] && ! python3 "$PG_ROOT/harness/check-letters.py" "$t" >"$t/out" &&
    grep -q 'is of other mails' "$t/out"
pg_result $? "check-letters.py fails a cover letter whose record is of other mails"
rm -rf "$t"
# ... and one whose record ran under another build of the proving
# ground's QEMU than get-qemu.sh's current one (or Debian's own).
t=$(mktemp -d) ok=1
mkdir -p "$t/results" "$t/patches" && ln -s "$PG_ROOT/harness" "$t/" &&
    cp -r "$PG_ROOT/patches/staging" "$t/patches/" || ok=
for r in $(grep -o 'results/[A-Za-z0-9_.+-]*\.json' \
               "$PG_ROOT/patches/staging/0000-cover-letter.patch" | sort -u); do
    cp "$PG_ROOT/$r" "$t/$r" || ok=
done
[ -n "$ok" ] && python3 "$PG_ROOT/harness/check-letters.py" "$t" >/dev/null || ok=
for q in 's/harness\/qemu [0-9a-f]*/harness\/qemu 000000000000/' \
         's/, harness\/qemu [0-9a-f]*)/)/' 's/harness\/qemu [0-9a-f]*/&, without the fix/'; do
    for r in "$t"/results/*.json; do
        sed -i "/\"qemu\":/$q" "$r"
    done
    ! python3 "$PG_ROOT/harness/check-letters.py" "$t" >"$t/out" &&
        grep -q 'not the current build' "$t/out" || ok=
    for r in $(cd "$t" && ls results/*.json); do cp "$PG_ROOT/$r" "$t/$r"; done
done
[ -n "$ok" ]
pg_result $? "check-letters.py passes the letter's own records, and fails one of another QEMU build, Debian's, or the control without the fix"
rm -rf "$t"

# The lint must pass on the series and catch each known-bad sample.
python3 "$PG_ROOT/harness/lint-patches.py" "$PG_ROOT"/patches/*/ >/dev/null
pg_result $? "lint of patches/*"
python3 "$PG_ROOT/harness/lint-patches.py" "$PG_ROOT/harness/lint-samples/good.patch" >/dev/null
pg_result $? "lint passes the good sample"
for bad in "$PG_ROOT"/harness/lint-samples/bad-*.patch; do
    [ -f "$bad" ] || continue
    python3 "$PG_ROOT/harness/lint-patches.py" "$bad" >/dev/null
    [ $? = 1 ]; pg_result $? "lint catches $(basename "$bad")"
done
pg_tally
