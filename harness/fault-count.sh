#!/bin/bash
# fault-count.sh ROUNDS [CASES]: the rate of dom0's IDT triple fault per
# build.  Each round boots base and patched of the tree under test
# (XEN_SRC, else Debian 12's xen source) at once, with the same torture
# cases (default p256.s256.p256.d256.p256.p256) on the same machine
# (FAULT_MACHINE, default vt-d), retries off (PG_RETRY=0): so the two
# builds see the same load, round after round.  Writes the record
# (harness/fault-count.py) to out/fault-count/<date>/record.json; the
# rounds' logs stay beside it.  Appends the counts to the base's fault
# ledger, results/<base>-fault-ledger.json (commit it), which decides
# which faults harness/retry.py may retry; a run other than the one the
# ledger pre-registered (its machine, cases, builds, QEMU's major.minor)
# fails; a FAULT_DOM0 other than pvh is not appended.  Slow (a round is
# two torture boots): not part of make check.  Every build carries the
# test-only patches of FAULT_PATCHES (default svm-state:
# test-patches/svm-state/, the VMCB checked at each VMRUN and dumped at
# a triple fault; "" for none); dom0
# boots with dom0=FAULT_DOM0 (default pvh); QEMU's -d int log of each
# boot (FAULT_QEMU_INT=1, the default) is kept, beside the boot's log,
# only when the boot triple-faulted.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rounds=${1:?usage: fault-count.sh ROUNDS [CASES]}
cases=${2:-p256.s256.p256.d256.p256.p256}
machine=${FAULT_MACHINE:-vt-d}
builds=${FAULT_BUILDS:-base patched}
patches=${FAULT_PATCHES-svm-state}
dom0=${FAULT_DOM0:-pvh}
qemu_int=${FAULT_QEMU_INT:-1}
case $rounds in ''|*[!0-9]*|0) die "ROUNDS must be a positive number" ;; esac

commit=$(git -C "$PG_ROOT" describe --always --dirty --abbrev=12)
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
out=$PG_OUT/fault-count/$(date -u +%Y%m%dT%H%M%S)
mkdir -p "$out"
step "fault-count: $rounds rounds of $builds on $machine, cases $cases"
dirs=()
for i in $(seq 1 "$rounds"); do
    step "fault-count: round $i of $rounds"
    PG_OUT=$out/round-$i PG_RETRY=0 TORTURE_VARIANTS=$builds \
    TORTURE_IOMMUS=$machine TORTURE_CASES=$cases TORTURE_DOM0=$dom0 \
    PG_TEST_EXTRA=$patches PG_QEMU_INT=$qemu_int \
        "$PG_ROOT/harness/torture.sh" >"$out/round-$i.out" 2>&1 || true
    for q in "$out/round-$i"/torture/{,*/}*.log.qemu-int; do
        [ -e "$q" ] || continue
        grep -q 'Triple fault - invoking HVM shutdown' "${q%.qemu-int}" ||
            rm -f "$q"
    done
    dirs+=("$out/round-$i")
done
# The ledger counts dom0=pvh only (its pre-registered run).
ledger=()
[ "$dom0" != pvh ] ||
    ledger=(--ledger "$PG_ROOT/results/$base-fault-ledger.json")
python3 "$PG_ROOT/harness/fault-count.py" --out "$out/record.json" \
    --cases "$cases" --vcpus 2 --machine "$machine" --builds "$builds" \
    --describe "$(pg_tree_describe "$tree")" --base "$base" \
    --command "fault-count.sh $rounds $cases (FAULT_MACHINE=$machine FAULT_DOM0=$dom0 FAULT_PATCHES='$patches' FAULT_QEMU_INT=$qemu_int)" \
    --commit "$commit" "${ledger[@]}" --dom0 "$dom0" --test-patches "$patches" \
    "${dirs[@]}"
