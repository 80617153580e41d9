#!/bin/bash
# report.py, the checker of make's boots, on crafted logs: each kind of
# failure a boot log can show must fail it.  Could wrongly pass if a crafted
# log stopped matching what a boot prints (the formats are the workload's
# and the instrument patches').  REPORT_PY=path tests another copy
# (mutants.sh).
set -uo pipefail
. "$(dirname "$0")/../../harness/lib.sh"
report=${REPORT_PY:-$PG_ROOT/harness/report.py}

# The log scan of report.py must catch each failure kind in a boot log.
# scan LINE WHAT [MACHINE]: report.py says WHAT of base's log with LINE.
scan() {
    local line=$1 what=$2 log
    log=$(mktemp)
    printf 'PG-START version=1 perfc=1\nPG-BEGIN n=1 phase=unmap\n%s\nPG-END n=1 phase=unmap hypercalls=1\nPG-DONE\n' \
        "$line" > "$log"
    python3 "$report" --tree-base t --describe t \
        --xen-version t --json /dev/null "${3:+$3:}base=$log" | grep "$what" >/dev/null
    local rc=$?
    rm -f "$log"
    return $rc
}
scan "(XEN) Assertion 'x' failed at common/foo.c:1" "Xen assertion"
pg_result $? "log scan catches a Xen assertion"
scan "(XEN) **** Panic on CPU 0 ****" "Xen panic"
pg_result $? "log scan catches a Xen panic"
scan "[   12.3] BUG: kernel NULL pointer dereference" "dom0 oops"
pg_result $? "log scan catches a dom0 oops"
# Debian 12's 6.1 kernel and Xen, as their consoles print them
# (unit/oopses.txt); a clean boot's lines must not match.
while IFS='|' read -r what line; do
    scan "$line" "$what"
    pg_result $? "log scan catches: $line"
done < <(grep -v "^#" "$PG_ROOT/unit/oopses.txt")
for line in "[    0.000000] Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)" \
    "[   67.361715] watchdog: BUG: soft lockup - CPU#0 stuck for 52s! [migration/0:16]" \
    "(XEN) pg-tf: d0v0 cr0 80050033 cr2 ffff82d040203482 cr3 7ffad000, record #33303" \
    "(XEN) ----[ Xen-4.23-unstable  x86_64  debug=y  Not tainted ]----"; do
    ! scan "$line" "dom0 oops\|Xen [a-zA-Z]*:\|failed IOMMU flush"
    pg_result $? "log scan passes a clean boot's line: $line"
done
scan "(XEN) [VT-D]DMAR:[DMA Read] Request device [0000:00:04.0] fault addr 1000" "unexpected IOMMU fault"
pg_result $? "log scan catches a VT-d fault outside the detector"
scan "(XEN) AMD-Vi: IO_PAGE_FAULT: 0000:00:04.0 d0 addr 0000000000001000 flags 0" "unexpected IOMMU fault"
pg_result $? "log scan catches an AMD-Vi fault outside the detector"
scan "PG-ERROR something: Invalid argument" "workload error"
pg_result $? "log scan catches a workload error"
tpt='(XEN) pg-oracle: d0 IOMMU page table mfn 0x1 unlinked (at 1) and not flushed at the IOMMU mapping of dfn 0x2 (stale 1)'
! scan "$tpt" "released before its flush" amd-vi-ats
pg_result $? "log scan counts base's S-bit reports on amd-vi-ats apart"
scan "$tpt" "released before its flush" amd-vi
pg_result $? "log scan catches a page-table report of base without ATS"
scan "(XEN) pg-oracle: d0 gfn 0x1 released before its IOTLB flush" \
    "released before its flush" amd-vi-ats
pg_result $? "log scan catches a grant released early by base on amd-vi-ats"
scan "(XEN) pg-oracle: d0 gfn 0x1 released before its IOTLB flush" "released before its flush"
pg_result $? "log scan catches a release-order oracle report"

# --check on whole boots: base, patched and the negative control under
# VT-d, crafted to pass; each test breaks one thing that must fail them.
# counters P2M IOTLB: Xen's counters of a phase, as PG-END prints them.
counters() {
    echo "pg_p2m_tlb_flush=$1 pg_flush_ipi=$1 pg_iotlb_global=0" \
        "pg_iotlb_domain=0 pg_iotlb_page=$2 pg_iotlb_wait=$2" \
        "pg_dev_iotlb=0 pg_dev_iotlb_pages=0 pg_dev_iotlb_all=0"
}
# vlog VARIANT ROUNDS: a VT-d boot of gntpg with --dma-n 33.  Base: N
# invalidations of one page, N waits and N p2m flushes per unmap;
# patched and the negative control: ceil(N/32) of each, covering the N
# pages; the density control (kept rounds, NkS): one invalidation of
# 2^14 pages, beyond the density bound.  The DMA round faults after its
# unmap, but on the negative control, which reads stale data and is
# reported by the oracle.
vlog() {
    local v=$1 r n s inv mask
    echo "PG-START version=1 perfc=14"
    for r in $2; do
        n=${r%%[sk]*} s=
        case $r in
        *s*) s=" stride=${r#*s}" ;;
        *k*) s=" stride=${r#*k} kept=1" ;;
        esac
        inv=$(( (n + 31) / 32 )) mask=0
        [ "$v" = base ] && inv=$n
        while [ $((inv << mask)) -lt "$n" ]; do mask=$((mask + 1)); done
        [ "$v" = density-control ] && mask=14
        echo "PG-BEGIN n=$n phase=map$s"
        echo "PG-END n=$n phase=map$s hypercalls=1 $(counters 0 0)"
        [ "$r" = 33 ] && echo "PG-DMA n=33 when=mapped data=33 fault=0 other=0"
        echo "PG-BEGIN n=$n phase=unmap$s"
        for _ in $(seq "$inv"); do
            echo "vtd_inv_desc_iotlb_pages iotlb invalidate domain 0x0 addr 0x10000 mask 0x$(printf %x $mask)"
            echo "vtd_inv_desc_wait_sw wait invalidate status write addr 0x7fbe5b20 data 0x1"
        done
        echo "PG-END n=$n phase=unmap$s hypercalls=1 $(counters $inv $inv)"
        [ "$r" = 33 ] || continue
        if [ "$v" = negative-control ]; then
            echo "(XEN) pg-oracle: d0 gfn 0x1 released before its IOTLB flush"
            echo "PG-DMA n=33 when=after-unmap data=33 fault=0 other=0"
        else
            echo "(XEN) [VT-D]DMAR:[DMA Read] Request device [0000:00:04.0] fault addr 1000"
            echo "PG-DMA n=33 when=after-unmap data=0 fault=33 other=0"
        fi
    done
    echo "PG-DONE"
}
# A kept round, as run.sh's KEPT_ROUNDS: without one patched fails (the
# density rule not exercised), and the density control runs it.
ROUNDS="1 8 33 32s2 32k512"
# boots DIR [BASE_ROUNDS [PATCHED_ROUNDS]]: the four logs in DIR.
boots() {
    vlog base "${2:-$ROUNDS}" > "$1/base.log"
    vlog patched "${3:-$ROUNDS}" > "$1/patched.log"
    vlog negative-control 33 > "$1/negative-control.log"
    vlog density-control 32k512 > "$1/density-control.log"
}
# judge DIR [ROUNDS]: report.py --check as run.sh runs it, on DIR's logs
# (output in DIR/out, report in DIR/report.json); its exit status.
judge() {
    python3 "$report" --check --tree-base t --describe t \
        --xen-version t --json "$1/report.json" \
        --rounds "--dma 0000:00:04.0 --dma-n 33 ${2:-$ROUNDS}" \
        --negative-rounds "--dma 0000:00:04.0 --dma-n 33 33" \
        --density-rounds 32k512 \
        vt-d:base="$1/base.log" vt-d:patched="$1/patched.log" \
        vt-d:negative-control="$1/negative-control.log" \
        vt-d:density-control="$1/density-control.log" > "$1/out" 2>&1
}
# passes DIR: judge passes it.  fails DIR WHAT [ROUNDS]: judge fails it,
# saying WHAT.
passes() { judge "$1" && grep -q "checks: passed" "$1/out"; }
fails() { ! judge "$1" "${3:-}" && grep -qF -- "$2" "$1/out"; }
# edit FILE PYTHON [ARGS...]: FILE's text as s, replaced by what PYTHON
# leaves in s (the original must change); ARGS in sys.argv[3:].
edit() {
    python3 -c 'import sys
p = sys.argv[1]; s = t = open(p).read(); exec(sys.argv[2])
assert s != t, "no change"; open(p, "w").write(s)' "$@"
}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

boots "$d"
passes "$d"
pg_result $? "check: the crafted boots pass (the DMA detector's faults in its window)"

boots "$d" "$ROUNDS" "1 33 32s2"
fails "$d" "vt-d patched: round 8 has no map phase"
pg_result $? "check: a round of ROUNDS missing from patched's log fails, named"
boots "$d"
sed -i '/^PG-END n=32 phase=unmap stride=2 /d' "$d/base.log"
fails "$d" "vt-d base: round 32s2 has no unmap phase"
pg_result $? "check: a round of ROUNDS begun but not ended fails, named"
boots "$d"
vlog negative-control 1 > "$d/negative-control.log"
fails "$d" "vt-d negative-control: round 33 has no unmap phase"
pg_result $? "check: the negative control's round missing from its log fails"

boots "$d"
for v in base patched negative-control; do
    sed -i 's/ pg_iotlb_\(page\|domain\|global\)=[0-9]*//g' "$d/$v.log"
done
fails "$d" "vt-d patched n=8 unmap: QEMU saw iotlb_inv_pages 1, Xen's counter of it is not in the log"
pg_result $? "check: VT-d without Xen's IOTLB counters fails (both observers required)"

boots "$d" "1 33 32s2" "$ROUNDS"
fails "$d" "vt-d patched n=8 stride=1 unmap: base has no unmap of this round" "1 33 32s2"
pg_result $? "check: a patched round that base's log lacks fails"

boots "$d"
sed -i '/^PG-END n=8 phase=unmap/s/pg_p2m_tlb_flush=1/pg_p2m_tlb_flush=0/' "$d/patched.log"
fails "$d" "vt-d patched n=8 stride=1 unmap: no p2m flush for 8 unmaps"
pg_result $? "check: patched with no p2m flush for an unmap fails (VT-d)"
vlog base "$ROUNDS" | grep -v '^vtd_\|^PG-DMA\|DMAR' > "$d/base.log"
vlog patched "$ROUNDS" | grep -v '^vtd_\|^PG-DMA\|DMAR' |
    sed '/^PG-END n=1 phase=unmap/s/pg_p2m_tlb_flush=1/pg_p2m_tlb_flush=0/' \
    > "$d/patched.log"
python3 "$report" --check --tree-base t --describe t \
    --xen-version t --json "$d/report.json" --rounds "$ROUNDS" \
    none:base="$d/base.log" none:patched="$d/patched.log" > "$d/out" 2>&1
[ $? = 1 ] && grep -qF "patched n=1 stride=1 unmap: no p2m flush for 1 unmaps" "$d/out"
pg_result $? "check: patched with no p2m flush for an unmap fails (no IOMMU)"
# Without an IOMMU the control (neg-tlb-needs-iotlb) is the oracle's
# alone: unreported, it fails; reported, it passes.
for v in base patched negative-control; do
    r=$ROUNDS; [ $v = negative-control ] && r=33
    vlog $v "$r" | grep -v '^vtd_\|^PG-DMA\|DMAR' |
        sed 's/pg_iotlb_page=[0-9]*/pg_iotlb_page=0/; s/pg_iotlb_wait=[0-9]*/pg_iotlb_wait=0/' \
        > "$d/$v.log"
done
nonejudge() {
    python3 "$report" --check --tree-base t --describe t --xen-version t \
        --json "$d/report.json" --rounds "$ROUNDS" --negative-rounds 33 \
        none:base="$d/base.log" none:patched="$d/patched.log" \
        none:negative-control="$d/negative-control.log" > "$d/out" 2>&1
}
nonejudge && grep -q "checks: passed" "$d/out"
pg_result $? "check: the control without an IOMMU reported by the oracle passes"
sed -i '/pg-oracle:/d' "$d/negative-control.log"
! nonejudge && grep -qF "none release-order oracle: the negative control released grants before their p2m flush unreported" "$d/out"
pg_result $? "check: the control without an IOMMU unreported by the oracle fails"

fault="(XEN) [VT-D]DMAR:[DMA Write] Request device [0000:00:04.0] fault addr 2000"
boots "$d"
fault=$fault edit "$d/patched.log" 'import os
e = "PG-END n=1 phase=unmap"; i = s.index("\n", s.index(e)) + 1
s = s[:i] + os.environ["fault"] + "\n" + s[i:]'
fails "$d" "unexpected IOMMU fault: $fault"
pg_result $? "check: an IOMMU fault after a round's unmap other than the DMA round's fails"
boots "$d"
fault=$fault edit "$d/base.log" 'import os
s = s.replace("PG-DONE", os.environ["fault"] + "\nPG-DONE")'
fails "$d" "unexpected IOMMU fault: $fault"
pg_result $? "check: an IOMMU fault after the last round's unmap fails"

# --- kept rounds (NkS: the frames' IOMMU page tables stay linked) and
# the density control (the series without its gather's density rule),
# as run.sh boots them on VT-d and AMD-Vi.
KROUNDS="${ROUNDS% 32k512} 32s512 32k512"
# kboots DIR: the boots with a kept round, and the density control
# (caught: one invalidation of 2^14 pages for 32).
kboots() {
    boots "$1" "$KROUNDS" "$KROUNDS"
}
# kjudge DIR [NO]: judge with the kept round and the density control;
# NO=nocontrol leaves the control's log out, NO=norounds its rounds.
kjudge() {
    local opt=(--density-rounds 32k512) log=("vt-d:density-control=$1/density-control.log")
    case ${2:-} in
    nocontrol) opt=() log=() ;;
    norounds) opt=() ;;
    esac
    python3 "$report" --check --tree-base t --describe t \
        --xen-version t --json "$1/report.json" \
        --rounds "--dma 0000:00:04.0 --dma-n 33 $KROUNDS" \
        --negative-rounds "--dma 0000:00:04.0 --dma-n 33 33" "${opt[@]}" \
        vt-d:base="$1/base.log" vt-d:patched="$1/patched.log" \
        vt-d:negative-control="$1/negative-control.log" "${log[@]}" \
        > "$1/out" 2>&1
}
kfails() { ! kjudge "$1" "${3:-}" && grep -qF -- "$2" "$1/out"; }
# unmap_edit LOG N TAIL PYTHON: PYTHON edits u, LOG's lines from
# "PG-BEGIN n=N phase=unmapTAIL" to its PG-END.
unmap_edit() {
    edit "$1" 'b = f"PG-BEGIN n={sys.argv[3]} phase=unmap{sys.argv[4]}\n"
i = s.index(b); j = s.index("PG-END", i); u = s[i:j]
exec(sys.argv[5]); s = s[:i] + u + s[j:]' "$2" "$3" "$4"
}

kboots "$d"
PG_VERBOSE=1 kjudge "$d" && grep -q "checks: passed" "$d/out" &&
    grep -q "^density control (no density rule), kept rounds: caught" "$d/out" &&
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
rows = sorted((r["kept"], r["iotlb_inv_pages"]) for r in j["runs"]
              if r["variant"] == "patched" and r["phase"] == "unmap"
              and r["stride"] == 512)
assert rows == [(False, 1), (True, 1)], rows
assert j["density_control"] == {"vt-d": "caught"}, j["density_control"]
assert j["rounds"]["density-control"] == ["32k512"], j["rounds"]' "$d/report.json"
pg_result $? "check: a kept round within the bound and the density control caught pass, kept rows apart"

kboots "$d"
unmap_edit "$d/patched.log" 32 " stride=512 kept=1" \
    'u = u.replace("mask 0x5", "mask 0xe")'
kfails "$d" "vt-d patched n=32 stride=512 kept=1 unmap: invalidations cover 16384 pages > 2560 (density rule)"
pg_result $? "check: patched breaking the density bound in a kept round fails"

kboots "$d"
dsi="vtd_inv_desc_iotlb_domain iotlb invalidate domain 0x0"
for v in base patched; do
    dsi=$dsi unmap_edit "$d/$v.log" 32 " stride=512 kept=1" 'import os
u += os.environ["dsi"] + "\n"'
    sed -i '/^PG-END n=32 phase=unmap stride=512 kept=1 /s/pg_iotlb_domain=0/pg_iotlb_domain=1/' "$d/$v.log"
done
kfails "$d" "vt-d patched n=32 stride=512 kept=1 unmap: 1 domain-wide invalidations, where no IOMMU page table is freed" &&
    grep -qF "vt-d base n=32 stride=512 kept=1 unmap: 1 domain-wide invalidations" "$d/out"
pg_result $? "check: a domain-wide invalidation in a kept round fails, on base and patched"

kboots "$d"
sed -i 's/mask 0xe$/mask 0x5/' "$d/density-control.log"
kfails "$d" "vt-d density control: the invalidations of its kept rounds stay within the density bound (the density control was NOT caught)"
pg_result $? "check: the density control within the bound fails (not caught)"

kboots "$d"
kfails "$d" "vt-d density control: not booted, where patched ran a kept round" nocontrol
pg_result $? "check: a kept round on patched without the density control's boot fails"

kboots "$d"
kfails "$d" "no rounds given for density-control" norounds
pg_result $? "check: the density control's log without its rounds is refused"

# --- the summary make ends with, on the five machines run.sh boots
# (machine.py makes each one's boots of vlog's), with their controls.
# mboots DIR: the logs, into DIR/MACHINE/; their arguments in MLOGS.
mboots() {
    local m v r vs
    MLOGS=()
    for m in vt-d amd-vi vt-d-ats amd-vi-ats none; do
        mkdir -p "$1/$m"
        case $m in
        vt-d|amd-vi) vs="base patched negative-control density-control" ;;
        none) vs="base patched negative-control" ;;
        *) vs="base patched" ;;
        esac
        for v in $vs; do
            r=$KROUNDS
            [ $v = negative-control ] && r=33
            [ $v = density-control ] && r=32k512
            if [ $m = vt-d ]; then vlog $v "$r"
            else vlog $v "$r" | python3 "$(dirname "$0")/machine.py" $m; fi \
                > "$1/$m/$v.log"
            MLOGS+=("$m:$v=$1/$m/$v.log")
        done
    done
}
# mjudge DIR [--check]: report.py on them as run.sh runs it (make: no
# --check), in DIR as make in the project's root: output in DIR/out,
# tables in DIR/report.txt.
mjudge() {
    local dir=$1
    shift
    (cd "$dir" && python3 "$report" "$@" --tree-base t --describe t \
        --xen-version t --json report.json --tables-file report.txt \
        --rounds "--dma 0000:00:04.0 --dma-n 33 $KROUNDS" \
        --negative-rounds "--dma 0000:00:04.0 --dma-n 33 33" \
        --density-rounds 32k512 "${MLOGS[@]}" > out 2>&1)
}
# summary_says DIR: DIR/out is a summary of fewer than 25 lines of at
# most 160 columns, without a table (whose columns " | " parts), whose
# line per machine gives its unmap of the largest contiguous round as
# report.json has it, its density bound and DMA detector (the oracle
# without an IOMMU) as they passed, and "checks passed".
summary_says() {
    python3 - "$1" <<'PY'
import json, sys
out = open(sys.argv[1] + "/out").read().splitlines()
j = json.load(open(sys.argv[1] + "/report.json"))
assert len(out) < 25 and max(map(len, out)) <= 160, out
assert not [l for l in out if " | " in l], out
names = {"vt-d": "VT-d", "amd-vi": "AMD-Vi", "vt-d-ats": "VT-d ATS",
         "amd-vi-ats": "AMD-Vi ATS", "none": "no IOMMU"}
for m, name in names.items():
    rows = {(r["variant"], r["n"]): r for r in j["runs"] if r["iommu"] == m
            and r["phase"] == "unmap" and r["stride"] == 1 and not r["kept"]}
    n = max(n for v, n in rows if v == "base" and ("patched", n) in rows)
    inv, p2m = zip(*((r['iotlb_inv_pages'] + r['iotlb_inv_domain']
                      + r['iotlb_inv_global'], r['p2m_tlb_flushes'])
                     for r in (rows["base", n], rows["patched", n])))
    said = (f"unmap of {n} grants, base {inv[0]} invalidations / {p2m[0]} "
            f"p2m flushes, patched {inv[1]} / {p2m[1]}")
    tail = ("oracle reported the control" if m == "none" else
            "density bound held; DMA after unmap faults") + "; checks passed"
    want = f"{name}: {said}; {tail}"
    assert out.count(want) == 1, (want, out)
PY
}
mboots "$d"
sed -i '/^PG-END n=33 phase=unmap /s/pg_p2m_tlb_flush=2/pg_p2m_tlb_flush=1/' \
    "$d/amd-vi/patched.log"
PG_VERBOSE= mjudge "$d" && summary_says "$d" &&
    grep -qx "AMD-Vi: unmap of 33 grants, base 33 invalidations / 33 p2m flushes, patched 2 / 1; .*" "$d/out" &&
    grep -qx "checks: passed" "$d/out" && grep -q "psi/dsi/gsi" "$d/report.txt" &&
    grep -qxF "tables: report.txt (PG_VERBOSE=1 prints them); every count: report.json" "$d/out"
pg_result $? "summary: five machines in a few short lines, each as its counts say; the tables in a file"
PG_VERBOSE=1 mjudge "$d" --check && grep -q "psi/dsi/gsi" "$d/out" &&
    grep -qx "checks: passed" "$d/out"
pg_result $? "summary: PG_VERBOSE=1 prints the tables before it"

mboots "$d"
sed -i '/^PG-END n=8 phase=unmap /s/pg_p2m_tlb_flush=1/pg_p2m_tlb_flush=0/' \
    "$d/amd-vi/patched.log"
first="FAIL: amd-vi patched n=8 stride=1 unmap: no p2m flush for 8 unmaps"
! PG_VERBOSE= mjudge "$d" --check && [ "$(head -1 "$d/out")" = "$first" ] &&
    grep -qx "AMD-Vi: unmap of 33 grants, .*; 1 FAILED" "$d/out" &&
    grep -qx "VT-d: unmap of 33 grants, .*; checks passed" "$d/out" &&
    grep -qx "checks: FAILED" "$d/out"
pg_result $? "summary: a failed check is named first, on its machine's line too (--check)"
PG_VERBOSE= mjudge "$d" && [ "$(head -1 "$d/out")" = "$first" ] &&
    grep -qx 'checks: FAILED (not enforced: `make check` enforces them)' "$d/out" &&
    python3 -c 'import json, sys
assert json.load(open(sys.argv[1]))["failures"] == [sys.argv[2][6:]]' "$d/report.json" "$first"
pg_result $? "summary: without --check (make), a failed check is named first too and recorded"

# No kept round and no density control (KEPT_ROUNDS= make): nothing
# exercised the density rule, and the summary says so.
d0="1 8 33 32s2"
boots "$d" "$d0" "$d0"
! python3 "$report" --check --tree-base t --describe t --xen-version t \
    --json "$d/report.json" --rounds "--dma 0000:00:04.0 --dma-n 33 $d0" \
    --negative-rounds "--dma 0000:00:04.0 --dma-n 33 33" \
    vt-d:base="$d/base.log" vt-d:patched="$d/patched.log" \
    vt-d:negative-control="$d/negative-control.log" > "$d/out" 2>&1 &&
    grep -qx "FAIL: vt-d patched: no kept round, so nothing exercised the density rule" "$d/out" &&
    grep -q "^VT-d: .*; density bound not exercised (no kept round); .*; 1 FAILED$" "$d/out"
pg_result $? "check: no kept round fails, and the summary says the density bound was not exercised"

pg_tally
