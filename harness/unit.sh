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

# The log scan of report.py must catch each failure kind in a boot log.
# scan LINE WHAT [MACHINE]: report.py says WHAT of base's log with LINE.
scan() {
    local line=$1 what=$2 log
    log=$(mktemp)
    printf 'PG-START version=1 perfc=1\nPG-BEGIN n=1 phase=unmap\n%s\nPG-END n=1 phase=unmap hypercalls=1\nPG-DONE\n' \
        "$line" > "$log"
    python3 "$PG_ROOT/harness/report.py" --tree-base t --describe t \
        --xen-version t --json /dev/null "${3:+$3:}base=$log" | grep "$what" >/dev/null
    local rc=$?
    rm -f "$log"
    return $rc
}
scan "(XEN) Assertion 'x' failed at common/foo.c:1" "Xen assertion"
result $? "log scan catches a Xen assertion"
scan "(XEN) **** Panic on CPU 0 ****" "Xen panic"
result $? "log scan catches a Xen panic"
scan "[   12.3] BUG: kernel NULL pointer dereference" "dom0 oops"
result $? "log scan catches a dom0 oops"
scan "(XEN) [VT-D]DMAR:[DMA Read] Request device [0000:00:04.0] fault addr 1000" "unexpected IOMMU fault"
result $? "log scan catches a VT-d fault outside the detector"
scan "(XEN) AMD-Vi: IO_PAGE_FAULT: 0000:00:04.0 d0 addr 0000000000001000 flags 0" "unexpected IOMMU fault"
result $? "log scan catches an AMD-Vi fault outside the detector"
scan "PG-ERROR something: Invalid argument" "workload error"
result $? "log scan catches a workload error"
tpt='(XEN) pg-oracle: d0 IOMMU page table mfn 0x1 unlinked (at 1) and not flushed at the IOMMU mapping of dfn 0x2 (stale 1)'
! scan "$tpt" "released before its flush" amd-vi-ats
result $? "log scan counts base's S-bit reports on amd-vi-ats apart"
scan "$tpt" "released before its flush" amd-vi
result $? "log scan catches a page-table report of base without ATS"
scan "(XEN) pg-oracle: d0 gfn 0x1 released before its IOTLB flush" \
    "released before its flush" amd-vi-ats
result $? "log scan catches a grant released early by base on amd-vi-ats"
scan "(XEN) pg-oracle: d0 gfn 0x1 released before its IOTLB flush" "released before its flush"
result $? "log scan catches a release-order oracle report"

# The torture report: a passing build and a caught negative control pass
# --check; a failed case on patched, an unfinished run, and a negative
# control that no case catches each fail it.
treport() {
    local dir log
    dir=$(mktemp -d)
    # NAME:LOG, NAME a variant or MACHINE/VARIANT.
    for spec in "$@"; do
        log=$dir/$(echo "${spec%%:*}" | tr / _).log
        printf '%b' "${spec#*:}" > "$log"
    done
    (cd "$dir" && python3 "$PG_ROOT/harness/torture-report.py" --check \
        $(for spec in "$@"; do n=${spec%%:*}
          echo "${n/\//:}=$dir/$(echo "$n" | tr / _).log"; done)) \
        >/dev/null 2>&1
    local rc=$?
    rm -rf "$dir"
    return $rc
}
# The oracle's totals, as Xen logs them before the first case and before
# each case's result: releases, bad TLB releases, unmap flushes, flushes
# with the domain dirty on 1 and on 2 CPUs.
tstats() {
    printf '(XEN) pg-oracle-stats: releases=%s frees=0 bad_tlb=%s bad_iotlb=0 bad_free=0 unmap_flushes=%s narrow=0 dirty1=%s dirty2=%s dirty3=0 dirty4=0\\n' "$@"
}
tc32='PG-T case=c32 n=32 rc=0 want=0 pages=32 dma_pages=2 stale_dma=0 stale_cpu=0 stale_race=0 bad=0 result=pass\n'
tend='PG-T-END pages=32 dma_pages=2 stale_dma=0 stale_cpu=0 failed=0 dma=2 vcpus=2 leaked=32\n'
t0=$(tstats 0 0 0 0 0)
tpass=$t0$(tstats 32 0 1 0 1)$tc32$tend
tfail=$t0$(tstats 28 0 1 0 1)'PG-T case=a20 n=28 rc=-14 want=-14 pages=28 dma_pages=28 stale_dma=3 stale_cpu=0 stale_race=0 bad=0 result=FAIL\nPG-T-END pages=28 dma_pages=28 stale_dma=3 stale_cpu=0 failed=1 dma=2 vcpus=2 leaked=28\n'
treport "patched:$tpass" "neg-x:$tfail"
result $? "torture report passes a clean build and a caught mutation"
! treport "patched:$tfail"
result $? "torture report catches a failed case"
! treport "patched:${tpass%%PG-T-END*}"
result $? "torture report catches an unfinished run"
# A log boot-qemu.sh moved away after its third emulator failure.
t=$(mktemp -d)
python3 "$PG_ROOT/harness/torture-report.py" --check "neg-tlb-self=$t/gone.log" \
    > "$t/out" 2>&1
[ $? = 1 ] && grep -q "no log" "$t/out" && ! grep -q Traceback "$t/out"
result $? "torture report fails a missing log by name, not by a traceback"
rm -rf "$t"
! treport "patched:$tpass" "neg-x:$tpass"
result $? "torture report catches an uncaught negative control"
! treport "patched:$tpass(XEN) Assertion 'x' failed at common/grant_table.c:1\n"
result $? "torture report catches a Xen assertion"
toracle='(XEN) pg-oracle: d0 gfn 0x1 released before its p2m-TLB flush\n'
! treport "patched:$toracle$tpass"
result $? "torture report catches an oracle report on patched"
treport "patched:$tpass" "neg-x:$toracle$tpass"
result $? "torture report counts an oracle report as a catch"
! treport "patched:$t0$(tstats 32 0 1 1 0)$tc32$tend"
result $? "torture report requires a flush with the domain dirty on 2 CPUs"
! treport "patched:$tc32$tend"
result $? "torture report requires the oracle's totals"
! treport "patched:$t0$(tstats 32 5 1 0 1)$tc32$tend"
result $? "torture report counts the oracle's totals on patched"
# With ATS (machine vt-d-ats): the device-IOTLB counts follow the others.
tats() {
    printf '(XEN) pg-oracle-stats: releases=%s frees=0 bad_tlb=%s bad_iotlb=0 bad_free=0 unmap_flushes=%s narrow=0 dirty1=%s dirty2=%s dirty3=0 dirty4=0 dev_invs=%s dev_multi=%s dev_short=%s\\n' "$@"
}
a0=$(tats 0 0 0 0 0 0 0 0)
treport "vt-d-ats/patched:$a0$(tats 32 0 1 0 1 1 1 0)$tc32$tend"
result $? "torture report passes patched with ATS exercised"
! treport "vt-d-ats/patched:$tpass"
result $? "torture report: ATS boot without device-IOTLB invalidations fails"
! treport "vt-d-ats/patched:$a0$(tats 32 0 1 0 1 1 1 1)$tc32$tend"
result $? "torture report: a flush missing an ATS device fails"
tc33=${tc32//c32 n=32/c33 n=33}
tself=$t0$(tstats 32 32 1 0 1)$tc32$(tstats 65 32 3 2 1)$tc33$tend
treport "patched:$tpass" "neg-tlb-self:$tself"
result $? "torture report: a must-catch control caught where it is exercised"
tself=$t0$(tstats 32 32 1 0 1)$tc32$(tstats 65 32 3 1 2)$tc33$tend
! treport "patched:$tpass" "neg-tlb-self:$tself"
result $? "torture report: a must-catch control missed in one case fails"
tdev=$a0$(tats 32 0 1 0 1 1 0 0)$tc32$(tats 65 0 3 1 1 2 1 0)$tc33$tend
! treport "vt-d-ats/patched:$a0$(tats 32 0 1 0 1 1 1 0)$tc32$tend" \
    "vt-d-ats/neg-devtlb-narrow:$tdev"
result $? "torture report: neg-devtlb-narrow missed where a device invalidation covered 2+ pages fails"
tdev=$a0$(tats 32 0 1 0 1 1 0 0)$tc32$(tats 65 5 3 1 1 2 1 0)$tc33$tend
treport "vt-d-ats/patched:$a0$(tats 32 0 1 0 1 1 1 0)$tc32$tend" \
    "vt-d-ats/neg-devtlb-narrow:$tdev"
result $? "torture report: neg-devtlb-narrow caught where a device invalidation covered 2+ pages"
# AMD-Vi with ATS: a device invalidation sent for 2+ pages must encode
# 2+ (dev_wide: sent for 2+ pages, dev_multi: encoding 2+).
# tw RELEASES BAD_TLB DEV_INVS DEV_MULTI DEV_WIDE: a flush per device
# invalidation, with the domain dirty on 2 CPUs.
tw() {
    printf '(XEN) pg-oracle-stats: releases=%s frees=0 bad_tlb=%s bad_iotlb=0 bad_free=0 unmap_flushes=%s narrow=0 dirty1=0 dirty2=%s dirty3=0 dirty4=0 dev_invs=%s dev_multi=%s dev_wide=%s dev_short=0\\n' \
        "$1" "$2" "$3" "$3" "$3" "$4" "$5"
}
w0=$(tw 0 0 0 0 0)
tamd=$w0$(tw 32 0 1 1 1)$tc32$tend
treport "amd-vi-ats/patched:$tamd"
result $? "torture report passes patched on amd-vi-ats"
! treport "amd-vi-ats/patched:$w0$(tw 32 0 1 0 1)$tc32$tend"
result $? "torture report: a device invalidation sent for 2+ pages encoding one fails"
tsbit=$w0$(tw 32 0 1 0 0)$tc32$(tw 65 3 3 0 2)$tc33$tend
treport "amd-vi-ats/patched:$tamd" "amd-vi-ats/neg-amd-sbit:$tsbit"
result $? "torture report: neg-amd-sbit caught where a device invalidation was sent for 2+ pages"
tsbit=$w0$(tw 32 0 1 0 1)$tc32$(tw 65 3 3 0 2)$tc33$tend
! treport "amd-vi-ats/patched:$tamd" "amd-vi-ats/neg-amd-sbit:$tsbit"
result $? "torture report: neg-amd-sbit missed where a device invalidation was sent for 2+ pages fails"
tpt() {
    printf '(XEN) pg-oracle-stats: releases=%s frees=0 bad_tlb=0 bad_iotlb=0 bad_free=0 unmap_flushes=1 narrow=0 dirty1=0 dirty2=1 dirty3=0 dirty4=0 dev_invs=0 dev_multi=0 dev_short=0 pt_queued=%s bad_stale=%s\\n' "$@"
}
tlate=$(tpt 0 0 0)$(tpt 32 0 0)$tc32$(tpt 65 2 2)$tc33$tend
treport "patched:$tpass" "neg-pt-flush-late:$tlate"
result $? "torture report: neg-pt-flush-late caught by stale reports where a table was unlinked"
tlate=$(tpt 0 0 0)$(tpt 32 1 0)$tc32$(tpt 65 2 2)$tc33$tend
! treport "patched:$tpass" "neg-pt-flush-late:$tlate"
result $? "torture report: neg-pt-flush-late missed where a table was unlinked fails"

# pg_emulator_fault: a triple fault whose saved state is Xen's own is the
# emulator's; one in the guest's own code is a real failure.
t=$(mktemp)
printf '(XEN) d0v1 Triple fault - invoking HVM shutdown action 1\r\n(XEN) RIP:    e008:[<ffff82d0402043fb>]\r\n(XEN) ds: 0000   es: 0000   fs: 0000   gs: 0000   ss: 0000   cs: e008\r\n' > "$t"
pg_emulator_fault "$t"
result $? "pg_emulator_fault recognises a guest state lost by the emulator"
sed -i 's/cs: e008/cs: 0010/' "$t"
! pg_emulator_fault "$t"
result $? "pg_emulator_fault leaves a guest's own triple fault a failure"
# pg_idt_fault: a triple fault on dom0's read of its IDT's #DF entry.
printf '(XEN) d0v0 Triple fault - invoking HVM shutdown action 1\r\n(XEN) cr3: 0000000002a10000   cr2: fffffe0000000080\r\n' > "$t"
pg_idt_fault "$t"
result $? "pg_idt_fault recognises dom0 faulting on its IDT"
sed -i 's/cr2: fffffe0000000080/cr2: fffffe0000000088/' "$t"
! pg_idt_fault "$t"
result $? "pg_idt_fault leaves another fault address a failure"
# pg_boot_stuck: the kernel's soft-lockup report, compared as a number.
printf '[   67.361715] watchdog: BUG: soft lockup - CPU#0 stuck for 52s! [migration/0:16]\r\n' > "$t"
! pg_boot_stuck "$t" 300
result $? "pg_boot_stuck leaves a shorter lockup alone"
printf '[ 2196.402894] watchdog: BUG: soft lockup - CPU#3 stuck for 2034s! [migration/3:30]\r\n' >> "$t"
pg_boot_stuck "$t" 300
result $? "pg_boot_stuck recognises a CPU stuck for the limit"
rm -f "$t"

# boot-qemu.sh's retries: a dom0 silent or stuck before PG-INIT, one that
# triple-faults on its IDT, or one whose state the emulator lost, is booted
# again, and failed after three tries; another triple fault in the guest's
# own code fails at once; one that finishes passes (a stand-in QEMU prints
# what a boot would).
t=$(mktemp -d); mkdir -p "$t/bin" "$t/dom0"
touch "$t/xen" "$t/dom0/vmlinuz" "$t/dom0/initrd.gz"
echo x > "$t/xen"; echo x > "$t/dom0/vmlinuz"; echo x > "$t/dom0/initrd.gz"
cat > "$t/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/sh
echo "(XEN) booting"
[ -e "$STUB_DIR/stall" ] && exec sleep 60
if [ -e "$STUB_DIR/stuck" ]; then
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        echo "[ 9.1] watchdog: BUG: soft lockup - CPU#0 stuck for ${i}s! [migration/0:16]"
        sleep 0.5
    done
fi
idt() {
    echo "(XEN) d0v0 Triple fault - invoking HVM shutdown action 1"
    echo "(XEN) cr3: 0000000002a10000   cr2: fffffe0000000080"
    exit 0
}
[ -e "$STUB_DIR/idt-boot" ] && idt
echo PG-INIT dom0 userspace up
[ -e "$STUB_DIR/idt" ] && idt
if [ -e "$STUB_DIR/triple" ]; then
    echo "(XEN) d0v1 Triple fault - invoking HVM shutdown action 1"
    echo "(XEN) ds: 0000   es: 0000   fs: 0000   gs: 0000   ss: 0000   cs: $(cat "$STUB_DIR/triple")"
    exit 0
fi
echo PG-DONE
QEMU
chmod +x "$t/bin/qemu-system-x86_64"
# stub WHAT [VAR=VALUE...]: boot-qemu.sh's status with the stand-in QEMU
# told WHAT ($t/WHAT, kept if already written), its logs of before gone.
stub() {
    local what=$1 rc
    shift
    rm -f "$t"/log*
    touch "$t/$what"
    env PATH="$t/bin:$PATH" STUB_DIR="$t" "$@" \
        "$PG_ROOT/harness/boot-qemu.sh" "$t/xen" "$t/dom0" "$t/log" 2>/dev/null
    rc=$?
    rm -f "$t/$what"
    return $rc
}
! stub stall PG_STALL_S=2 && [ -e "$t/log.stall-1" ] &&
    [ -e "$t/log.stall-2" ] && [ -e "$t/log.stall-3" ]
result $? "boot-qemu.sh boots a stalled dom0 again and fails after 3 stalls"
! stub stuck PG_STALL_S=4 && [ -e "$t/log.stall-3" ]
result $? "boot-qemu.sh boots a dom0 stuck (but not silent) again, 3 times at most"
! stub idt-boot && [ -e "$t/log.idt-fault-3" ]
result $? "boot-qemu.sh boots again after dom0 faulted on its IDT in its boot, 3 times at most"
! stub idt && [ -e "$t/log.idt-fault-3" ]
result $? "boot-qemu.sh boots again after dom0 faulted on its IDT in the workload, 3 times at most"
echo e008 > "$t/triple"
! stub triple && [ -e "$t/log.emulator-fault-3" ]
result $? "boot-qemu.sh boots again after the emulator lost dom0's state, 3 times at most"
echo 0010 > "$t/triple"
! stub triple && ! ls "$t"/log.*-[123] >/dev/null 2>&1
result $? "boot-qemu.sh fails a triple fault in dom0's own code at once"
stub finish PG_STALL_S=2 && ! ls "$t"/log.stall-* >/dev/null 2>&1
result $? "boot-qemu.sh passes a boot that finishes"
rm -rf "$t"

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
