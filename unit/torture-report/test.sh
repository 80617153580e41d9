#!/bin/bash
# torture-report.py, the checker of the unmap torture, on crafted logs:
# a clean build and a caught control pass, every kind of failure and every
# control not caught where torture/README.md requires fails.  Could wrongly
# pass if a crafted log stopped matching what gntt.c and the oracle print.
set -uo pipefail
. "$(dirname "$0")/../../harness/lib.sh"
pass=0 fail=0
result() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok: $2"
           else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

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


echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
