#!/bin/bash
# ab.sh [BOOTS]: the A/B of QEMU's IGNNE fix on one build: get-qemu.sh's
# build with harness/qemu's patch and the same build without it
# (PG_QEMU_FIX=0), each booting the reproducer BOOTS times (default 10)
# for REPRO_ROUNDS rounds; then, for where the control's first race
# falls, the control again BOOTS times with the second vCPU's FLDENV loop
# started 20,000,000 PAUSEs before the first round (delay=), and BOOTS
# times with it held back for the first 1000 rounds (warm=).  Prints the
# record: a header, then one line per boot, its arm and verdict.  Exits
# non-zero unless every boot ended in a verdict, the fixed build passed
# every boot and the control raced in every one.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

boots=${1:-10}
[[ $boots =~ ^[1-9][0-9]{0,2}$ ]] || die "usage: ab.sh [BOOTS]"
PG_QEMU_FIX=1 "$PG_ROOT/harness/get-qemu.sh" >&2
PG_QEMU_FIX=0 "$PG_ROOT/harness/get-qemu.sh" >&2
fixed=$PG_CACHE/qemu/bin/qemu-system-x86_64
control=$PG_CACHE/qemu-nofix/bin/qemu-system-x86_64
log=$PG_BUILD/repro/qemu-1.log
echo "# harness/qemu/ab.sh $boots, REPRO_ROUNDS=${REPRO_ROUNDS:-1000000}," \
     "commit $(git -C "$PG_ROOT" rev-parse --short=12 HEAD)," \
     "$(date -u +%Y-%m-%dT%H:%MZ)"
echo "# host: $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
bad=0
# one NAME QEMU WANT DELAY WARM: BOOTS boots, each line its verdict; WANT
# is run.sh's exit for a boot as expected (0 no race, 1 the race).
one() {
    local i rc v
    for i in $(seq 1 "$boots"); do
        rc=0
        REPRO_DELAY=$4 REPRO_WARM=$5 "$PG_ROOT/harness/qemu/repro/run.sh" "$2" \
            >/dev/null 2>&1 || rc=$?
        v=$(grep -m1 -E '^repro: (no race|round [0-9]+:)' "$log" || echo "no verdict (exit $rc)")
        echo "$1 boot $i: $v"
        [ "$rc" = "$3" ] || bad=$((bad + 1))
    done
}
one "fixed ($("$fixed" --version | head -1 | sed 's/.*(\(.*\))/\1/'))" "$fixed" 0 0 0
one "control ($("$control" --version | head -1 | sed 's/.*(\(.*\))/\1/'))" "$control" 1 0 0
one "control, delay=20000000" "$control" 1 20000000 0
one "control, warm=1000" "$control" 1 0 1000
[ $bad = 0 ] || { echo "# ab.sh: $bad boots not as expected"; exit 1; }
