#!/bin/bash
# report.py, the checker of make's boots, on crafted logs: each kind of
# failure a boot log can show must fail it.  Could wrongly pass if a crafted
# log stopped matching what a boot prints (the formats are the workload's
# and the instrument patches').
set -uo pipefail
. "$(dirname "$0")/../../harness/lib.sh"
pass=0 fail=0
result() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok: $2"
           else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

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

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
