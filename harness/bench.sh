#!/bin/bash
# bench.sh
# The netback benchmark (make bench): base and patched hypervisors of the
# tree, each booted BENCH_BOOTS times, interleaved (base, patched, then
# patched, base, ...), under the proving ground's QEMU machine with a
# Debian 12 PVH dom0 (netback, xl, iperf3) and two PVH domUs on a bridge;
# every boot runs the whole matrix BENCH_REPS times.  Once per machine:
# each IOMMU of BENCH_IOMMUS (vt-d amd-vi) with dom0 at each number of
# vCPUs of BENCH_SMPS (1 2), machine M = IOMMU-Ncpu.  Prints the table and
# writes out/netback-M.json, and the unmap batches netback made (recorded
# in the first repetition's domU-dom0 runs) with their replay through the
# merge policies of harness/scatter-policies.py into
# out/netback-M-policies.json; the boot logs are out/bench/M/<build>-<boot>.log.
#   bench.sh --machines   prints the machines, one per line
# Knobs: BENCH_BOOTS (1), BENCH_REPS (2), BENCH_TIME (iperf3 -t, 5),
# BENCH_STREAMS (1:4), BENCH_DIRS (domU-dom0:domU-domU:dom0-domU),
# BENCH_IOMMUS, BENCH_SMPS, BENCH_QEMU_TRACE (0), BENCH_TCG_THREAD (multi),
# BENCH_BOOT_TIMEOUT, BENCH_XEN_CMDLINE, BENCH_XEN_BASE, BENCH_XEN_PATCHED
# (prebuilt hypervisors).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

boots=${BENCH_BOOTS:-1}
reps=${BENCH_REPS:-2}
secs=${BENCH_TIME:-5}
streams=${BENCH_STREAMS:-1:4}
dirs=${BENCH_DIRS:-domU-dom0:domU-domU:dom0-domU}
tcg=${BENCH_TCG_THREAD:-multi}
machines=()
for iommu in ${BENCH_IOMMUS:-vt-d amd-vi}; do
    case $iommu in vt-d|amd-vi) ;; *) die "BENCH_IOMMUS: vt-d, amd-vi" ;; esac
    for smp in ${BENCH_SMPS:-1 2}; do
        case $smp in 1|2|4) ;; *) die "BENCH_SMPS: 1, 2 or 4" ;; esac
        machines+=("$iommu-${smp}cpu")
    done
done
if [ "${1:-}" = --machines ]; then
    printf '%s\n' "${machines[@]}"
    exit 0
fi
pg_qemu

[ -n "${XEN_SRC:-}" ] || "$PG_ROOT/harness/get-tree.sh"
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
pg_start "$tree" "$base"
mkdir -p "$PG_OUT/bench"
# The two hypervisors, copied so that every boot of the run uses the same
# binary.  BENCH_XEN_BASE / BENCH_XEN_PATCHED name already built ones
# (e.g. while another build of the tree holds build-xen.sh's lock).
declare -A xen
for v in base patched; do
    var=BENCH_XEN_${v^^}
    if [ -n "${!var:-}" ]; then
        src=${!var}
    else
        src=$("$PG_ROOT/harness/build-xen.sh" "$v" debug)
    fi
    [ -s "$src" ] || die "no hypervisor for $v at $src"
    cp "$src" "$PG_OUT/bench/xen-$v"
    xen[$v]=$PG_OUT/bench/xen-$v
done
"$PG_ROOT/harness/bench-mk-image.sh"
fails=0 rc=0
# The machine and the emulation, named in each report.
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
qv=$("$PG_QEMU" --version | head -1 | sed 's/^QEMU emulator version //')
for m in "${machines[@]}"; do
    iommu=${m%-*} smp=${m##*-}; smp=${smp%cpu}
    export BENCH_IOMMU=$iommu BENCH_SMP=$smp
    logdir=$PG_OUT/bench/$m json=$PG_OUT/netback-$m.json
    mkdir -p "$logdir"
    rm -f "$logdir"/*.log "$json" "${json%.json}-policies.json"
    logs=()
    for i in $(seq 1 "$boots"); do
        order="base patched"
        [ $((i % 2)) = 0 ] && order="patched base"
        for v in $order; do
            log=$logdir/$v-$i.log
            step "$m: boot $i/$boots of $v: $reps x {$dirs} x {$streams streams}, ${secs}s each"
            ok=0
            if "$PG_ROOT/harness/bench-boot.sh" "${xen[$v]}" "$log" \
                --time "$secs" --reps "$reps" --streams "$streams" --dirs "$dirs" \
                --label "$v-$i"; then
                ok=1
            else
                echo "error: $m: boot $i of $v failed (log: $log)" >&2
            fi
            [ $ok = 1 ] || fails=$((fails + 1))
            logs+=("$v=$log")
        done
    done

    dev=$(. "$(pg_machine "$iommu")"; echo "${MACHINE_DEVICES[1]}")
    step "$m: the report"
    python3 "$PG_ROOT/bench/netback/report.py" --json "$json" --iommu "$iommu" \
        --tree-base "$base" --describe "$(pg_tree_describe "$tree")" \
        --xen-version "$(pg_tree_version "$tree")" \
        --meta "machine=$(nproc) x $cpu (host), shared with other jobs" \
        --meta "emulation=QEMU $qv, TCG ($tcg-threaded), q35, qemu64+svm+npt, $smp CPU(s), 3 GiB, ${dev%%,*} (no shared EPT/NPT: no-sharept)" \
        --meta "xen=$(pg_tree_version "$tree") ($base, $(pg_tree_describe "$tree")), debug + perf counters" \
        --meta "dom0=PVH, $smp vCPU(s), 1 GiB, Debian 12, Linux $(cat "$PG_BUILD/bench/$base/kernel-version"), xen tools $(cat "$PG_BUILD/bench/$base/xen-utils-version")" \
        --meta "domUs=PVH, 1 vCPU, 256 MiB, same kernel, busybox + iperf3, on xenbr0" \
        --meta "runs=${secs} s, Gbit/s received, $((boots * reps)) per row from $boots boots of each build, interleaved" \
        "${logs[@]}" || rc=1
    # Netback's own frames, as the instrumented hypervisors recorded them in
    # the first repetition's domU-dom0 runs, through the merge policies.
    step "$m: replaying netback's unmap batches through the merge policies"
    python3 "$PG_ROOT/harness/scatter-policies.py" --netback "${logs[@]#*=}" \
        --json "${json%.json}-policies.json" || rc=1
done
[ $fails = 0 ] || { echo "error: $fails boot(s) failed" >&2; rc=1; }
exit $rc
