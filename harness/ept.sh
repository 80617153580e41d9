#!/bin/bash
# ept.sh [--check]
# The EPT path under Bochs (Intel VMX with EPT and VPID, no IOMMU), with
# the same PVH dom0 as the QEMU proving ground.  One CPU: base, patched
# and the control neg-tlb-needs-iotlb (the deferred EPT flush dropped)
# run the workload; prints the table and writes out/report-ept.json
# ("machine": "bochs-vmx-ept").  Two CPUs and a 2-vCPU dom0: patched and
# the control neg-tlb-self (the deferred EPT flush sent to the unmapping
# CPU only) run the torture's cases EPT_TORTURE_CASES, concurrent ones
# included (out/torture-ept.json, machine bochs-ept).  With --check, the
# p2m flush thresholds of the unmap phases are enforced (base = N,
# patched 1 to ceil(N/32)), the oracle must report both controls, the
# racing granter must read neg-tlb-self's stale data, and patched must
# pass the torture.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

check=
[ "${1:-}" = --check ] && check=--check

[ -n "${XEN_SRC:-}" ] || "$PG_ROOT/harness/get-tree.sh"
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
pg_start "$tree" "$base"
series=1; [ -n "$(pg_series "$base")" ] || series=0

# The control: the series with each batch's deferred p2m flush dropped
# (neg-tlb-needs-iotlb: no batch gathers an IOTLB flush without an
# IOMMU), which the oracle's hook of the EPT flush must report.
variants="base patched"
[ $series = 0 ] || variants="$variants neg-tlb-needs-iotlb"
smp_variants=
[ $series = 0 ] || smp_variants="patched neg-tlb-self"
declare -A xen
for v in $variants $smp_variants; do
    [ -n "${xen[$v]:-}" ] || xen[$v]=$("$PG_ROOT/harness/build-xen.sh" "$v" debug)
done

dom0=$(pg_gntpg_dom0 "$tree" "$base")
[ -z "$smp_variants" ] || tdom0=$(pg_torture_dom0 "$base")

mkdir -p "$PG_OUT"
# One vCPU, no IOMMU, no edu device: no --dma.  Every N of the QEMU
# ground with contiguous frames (a Bochs boot takes 2-3 minutes, mostly
# booting; the scattered rounds would add thousands of gntdev ioctls).
EPT_WORKLOAD_ARGS=${EPT_WORKLOAD_ARGS:-"1 8 32 33 64 256"}
EPT_NEGATIVE_ARGS=${EPT_NEGATIVE_ARGS:-33}
# Two CPUs: Xen's x2APIC cluster IPIs BUG under Bochs 2.7, so xAPIC
# (x2apic=false); and with credit2 dom0 hung bringing up its second vCPU,
# so the null scheduler with dom0's vCPUs pinned (dom0_vcpus_pin).
EPT_TORTURE_CASES=${EPT_TORTURE_CASES:-c33.d64.p64}
smp_cmdline="dom0=pvh dom0-iommu=none apicv=0 x2apic=false sched=null dom0_vcpus_pin dom0_mem=768M dom0_max_vcpus=2 console=com1 com1=115200,8n1 sync_console loglvl=all guest_loglvl=all"
logs=() names=() tlogs=() tcases=()
# boot_one VARIANT CPUS DOM0 LOG ARGS...
boot_one() {
    local v=$1 cpus=$2 d0=$3 log=$4
    shift 4
    step "booting $v under Bochs (VMX+EPT, $cpus CPU, PVH dom0, $*)"
    local cmdline=${XEN_CMDLINE:-}
    [ "$cpus" = 1 ] || cmdline=$smp_cmdline
    XEN_CMDLINE=$cmdline PG_BOCHS_CPUS=$cpus \
        "$PG_ROOT/harness/boot-bochs.sh" "${xen[$v]}" "$d0" "$log" "$@" ||
        touch "$log.failed"
}
# bg NAME VARIANT CPUS DOM0 LOG ARGS...: boot in the background.
bg() {
    local name=$1
    shift
    rm -f "$4" "$4.failed"     # no earlier run's log is judged as this one's
    names+=("$name|$4")
    pg_bg boot_one "$@"
}
for v in $variants; do
    name=$v args=$EPT_WORKLOAD_ARGS
    [ $v = neg-tlb-needs-iotlb ] && name=negative-control args=$EPT_NEGATIVE_ARGS
    bg "$name" $v 1 "$dom0" "$PG_OUT/ept-$name.log" $args
    logs+=("$name=$PG_OUT/ept-$name.log")
done
for v in $smp_variants; do
    bg "$v, 2 CPUs, torture" $v 2 "$tdom0" "$PG_OUT/torture-ept-$v.log" \
        "$EPT_TORTURE_CASES" 0
    tlogs+=("bochs-ept:$v=$PG_OUT/torture-ept-$v.log")
    tcases+=(--cases "bochs-ept:$v=$EPT_TORTURE_CASES")
done
wait
for n in "${names[@]}"; do
    [ -e "${n#*|}.failed" ] || continue
    [ -n "$check" ] && die "Bochs boot of ${n%%|*} failed (log: ${n#*|})"
    echo "warning: Bochs boot of ${n%%|*} failed (log: ${n#*|})" >&2
done
rounds=(--rounds "$EPT_WORKLOAD_ARGS")
[ $series = 0 ] || rounds+=(--negative-rounds "$EPT_NEGATIVE_ARGS")

# The stale-read check (a CPU read of the old gfn after the unmap hypercall
# returned) is not gntpg's but the torture module's CPU detector.  Nor
# could Bochs show a stale read: see harness/README.md, "The EPT path under Bochs".
stale_reason="not run: gntpg has no CPU read of the old gfn after the unmap \
(the torture module's CPU detector has one); and not observable under Bochs 2.7: \
its TLB entries carry no VPID tag and the whole TLB is flushed at every VM \
exit (VMexitLoadHostState -> handleCpuContextChange -> TLB_flush), so no \
translation of the old gfn survives the unmap hypercall, whether Xen \
flushes or not; a negative control skipping the p2m flush would read \
correctly too and cannot be caught on this machine"
python3 "$PG_ROOT/harness/report.py" $check --series $series \
    --tree-base "$base" --describe "$(pg_tree_describe "$tree")" \
    --xen-version "$(pg_tree_version "$tree")" \
    --machine bochs-vmx-ept --no-iommu \
    --stale-read-reason "$stale_reason" "${rounds[@]}" \
    --json "$PG_OUT/report-ept.json" --tables-file "$PG_OUT/report-ept.txt" \
    "${logs[@]}"
# Two CPUs: the torture (no IOMMU: the DMA detector off).
[ -z "$smp_variants" ] ||
    python3 "$PG_ROOT/harness/torture-report.py" $check --base "$base" \
        --describe "$(pg_tree_describe "$tree")" \
        --xen-version "$(pg_tree_version "$tree")" \
        --json "$PG_OUT/torture-ept.json" "${tcases[@]}" "${tlogs[@]}"
