#!/bin/bash
# torture.sh [--check] [--full]
# The unmap torture: base, patched and the neg-* mutations of the series
# (test-patches/neg-*/<base>/), each booted under the proving ground's
# QEMU with the torture driver (torture/gntt.c) in the PVH dom0, which
# unmaps grants in crafted arrays and checks every unmapped page by DMA
# and by CPU reads (see torture/README.md).  Prints the table and writes
# out/torture.json.  Five machines: VT-d, AMD-Vi, each with an ATS device
# (vt-d-ats, amd-vi-ats), and no IOMMU (none).  Without --full (CI): the
# quick cases of patched on all five and one control per detector, at
# least one on each machine (ci_negs below).
# With --full (make torture): base too, every control on every machine
# that can catch it, more pages, and a 4-vCPU dom0 for the concurrent
# cases.  Up to PG_JOBS boots run at once.  With --check, base/patched
# must pass, every negative control must be caught where
# torture-report.py's CONTROLS says, every boot must have run all the
# cases it was given, and every machine that booted patched must have
# booted a control (non-zero exit otherwise); a boot that fails fails it.
# By hand: TORTURE_VARIANTS (builds to boot, e.g. "base patched"),
# TORTURE_CASES (one case list for all of them), TORTURE_DMA (pages of
# every 32 read by DMA), TORTURE_IOMMUS (machines: "vt-d amd-vi vt-d-ats
# amd-vi-ats none", or some).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

check= full=
for a in "$@"; do
    case "$a" in
    --check) check=--check ;;
    --full) full=1 ;;
    *) die "usage: torture.sh [--check] [--full]" ;;
    esac
done

[ -n "${XEN_SRC:-}" ] || "$PG_ROOT/harness/get-tree.sh"
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
step "torture: tree $tree (base $base, $(pg_tree_describe "$tree"))"
[ -n "$(pg_series "$base")" ] ||
    die "no series in patches/$base: nothing to torture"

# The mutations this base has, each a negative control.
negs=$(cd "$PG_ROOT/test-patches" &&
       for d in neg-*; do [ -d "$d/$base" ] && echo "$d"; done || true)
[ -n "$negs" ] || die "no negative controls in test-patches/neg-*/$base"
# neg-density is make's control (harness/run.sh): only report.py's
# density bound, in a kept round, can tell it from the series.
negs=$(echo $negs | tr ' ' '\n' | grep -vx neg-density | xargs)
# The oracle's deterministic controls, caught in every case they run
# that exercises what they break (CONTROLS in torture-report.py): in CI
# they run the cases of quick_must below.
must_catch="neg-tlb-self neg-tlb-p2m-mask neg-iotlb-narrow neg-ptp-free"
must_catch="$must_catch neg-pt-flush-late neg-pt-flush-unlocked"
must_catch="$must_catch neg-density-drop"
# Controls of the series' own debug checks (ASSERT_CONTROLS in
# torture-report.py): Xen stops at the first unmap, so one case.
assert_negs="neg-ptp-window"
# Controls of the TLB deferral alone, which an IOMMU hides: run (and
# caught, in every case) on the machine without one only.
none_negs="neg-tlb-needs-iotlb"
# Controls of device IOTLBs: run (and caught) with ATS only, each on its
# IOMMU.
ats_negs="neg-devtlb-narrow"
amd_ats_negs="neg-amd-sbit"
# Under AMD-Vi: the controls that break an IOMMU flush; those of the p2m
# side alone break the same NPT code under either IOMMU.
amd_negs="neg-efault-noflush neg-late-flush neg-iotlb-narrow neg-pt-flush-late"
amd_negs="$amd_negs neg-pt-flush-unlocked neg-density-drop"
# CI (without --full): patched on every machine, and one control per
# detector: DMA (neg-efault-noflush), the oracle's release order
# (neg-late-flush; the race detector often sees it too), the oracle's TLB
# mask (neg-tlb-self),
# IOTLB range (neg-iotlb-narrow, under AMD-Vi too), paging-structure
# caches (neg-pt-flush-late; neg-pt-flush-unlocked, under AMD-Vi too,
# for the check at the p2m lock's release), the gather's density rule
# (neg-density-drop, under AMD-Vi too: only kN reaches it) and TLB
# reach without an IOMMU (neg-tlb-needs-iotlb).  `make torture` (--full)
# adds base and every other control, each on every machine that can
# catch it.
ci_negs="neg-efault-noflush neg-late-flush neg-tlb-self neg-iotlb-narrow"
ci_negs="$ci_negs neg-pt-flush-late neg-pt-flush-unlocked neg-density-drop"
ci_negs="$ci_negs neg-tlb-needs-iotlb"
# and on each ATS machine its device-IOTLB control, so that every machine
# CI boots runs a control it must catch.
ci_negs="$ci_negs neg-devtlb-narrow neg-amd-sbit"
# and each control of a debug check (4.17's only).
ci_negs="$ci_negs $assert_negs"
ci_amd_negs="neg-iotlb-narrow neg-pt-flush-unlocked neg-density-drop"
# pick CI NAME...: those of the controls named that this base has (and
# that CI runs, i.e. are in the list CI, without --full).  One the base
# lacks is left out with a note; torture-report.py --check fails a
# machine left with patched and no control (unit/torture-report pins a
# control on every machine of each base).
pick() {
    local ci=$1 v out=
    shift
    for v in "$@"; do
        case " $negs " in *" $v "*) ;; *)
            echo "note: torture: no test-patches/$v/$base: not booted" >&2
            continue ;;
        esac
        [ -n "$full" ] || case " $ci " in *" $v "*) ;; *) continue ;; esac
        out="$out $v"
    done
    echo $out
}
vtd_negs=
for v in $negs; do
    case " $none_negs $ats_negs $amd_ats_negs " in
    *" $v "*) ;;
    *) vtd_negs="$vtd_negs $v" ;;
    esac
done
variants="patched $(pick "$ci_negs" $vtd_negs)"
quick_variants="patched $(pick "$ci_amd_negs" $amd_negs)"
ats_variants="patched $(pick "$ci_negs" $ats_negs)"
amd_ats_variants="patched $(pick "$ci_negs" $amd_ats_negs)"
none_variants="patched $(pick "$ci_negs" $none_negs)"
# Base, with patched's cases, wherever patched boots but amd-vi-ats, in
# make torture.  Not base with ATS under AMD-Vi: it
# sends INVALIDATE_IOTLB_PAGES without its S bit (the series' first patch
# is the fix), which the oracle reports at every IOMMU page table
# unlinked (run.sh counts it).
if [ -n "$full" ]; then
    variants="base $variants" ats_variants="base $ats_variants"
    none_variants="base $none_variants"
fi
variants=${TORTURE_VARIANTS:-$variants}
quick_variants=${TORTURE_VARIANTS:-$quick_variants}
none_variants=${TORTURE_VARIANTS:-$none_variants}
ats_variants=${TORTURE_VARIANTS:-$ats_variants}
amd_ats_variants=${TORTURE_VARIANTS:-$amd_ats_variants}
iommus=${TORTURE_IOMMUS:-vt-d amd-vi vt-d-ats amd-vi-ats none}
for i in $iommus; do pg_machine "$i" >/dev/null; done
case " $iommus " in *" amd-vi "*) ;; *) quick_variants= ;; esac
case " $iommus " in *" none "*) ;; *) none_variants= ;; esac
case " $iommus " in *" vt-d-ats "*) ;; *) ats_variants= ;; esac
case " $iommus " in *" amd-vi-ats "*) ;; *) amd_ats_variants= ;; esac
case " $iommus " in *" vt-d "*) ;; *) variants= ;; esac

declare -A xen
for v in $variants $quick_variants $none_variants $ats_variants \
         $amd_ats_variants; do
    [ -n "${xen[$v]:-}" ] ||
        xen[$v]=$("$PG_ROOT/harness/build-xen.sh" "$v" debug)
done
payload=$(pg_torture_dom0 "$base")

# Cases: see torture/README.md.  '.' separates them (no commas on QEMU's
# module command line).  dma: pages of every 32 also read by DMA (QEMU's
# edu takes 100 ms per DMA: every page would cost 0.2 s; the CPU detector
# reads every page).  The full run adds 10,000 pages on base and patched,
# and a 4-vCPU dom0 (3 unmapping vCPUs, 1 granter) for the race.
quick="c31.c32.c33.c65.c1000.a20.a45.b.e.d256.s256.m256.p64.p256.k64"
full_cases="$quick.c1000.c1000.c1000.d1000.d1000.p1000.p1000.a100.a500"
smp4="p256.p1000.d256.m256"
# The deterministic controls, in CI: every kind of case, both vCPUs busy
# in d, m, p and k (the domain dirty on 2 CPUs at the batches' flushes);
# m256 unlinks IOMMU page tables while the other vCPU maps; k64 splits
# its batches by the density rule.
quick_must="c33.c65.a20.b.d256.m256.p64.k64"
dma=2 limit=1200
[ -n "$full" ] && dma=4 limit=3600
dma=${TORTURE_DMA:-$dma}
mkdir -p "$PG_OUT/torture"
logs=() boots=() cases=()
# boot VARIANT NAME VCPUS CASES [IOMMU]: one boot, in the background (see
# pg_bg); its log is LOG, LOG.failed says it did not finish.
boot() {
    local v=$1 name=$2 iommu=${5:-vt-d} dir=$PG_OUT/torture label=$2
    [ $iommu = vt-d ] || { dir=$dir/$iommu; label="$name ($iommu)"; }
    mkdir -p "$dir"
    rm -f "$dir/$name.log" "$dir/$name.log.failed"
    logs+=("$iommu:$name=$dir/$name.log")
    cases+=(--cases "$iommu:$name=$4")
    boots+=("$v|$label|$dir/$name.log")
    pg_bg boot_one "$1" "$3" "$4" "$iommu" "$dir/$name.log" "$label"
}
boot_one() {
    local v=$1 smp=$2 cases=$3 iommu=$4 log=$5 label=$6 d=$dma
    [ "$(pg_machine_dma "$iommu")" = 1 ] || d=0
    step "torture: booting $label ($smp vCPUs)"
    # Every checked page makes an IOMMU fault: Xen's default (rate-
    # limited) log levels and no trace keep the console from dominating
    # the run.
    PG_IOMMU=$iommu PG_QEMU_SMP=$smp PG_QEMU_TRACE=0 \
    PG_BOOT_TIMEOUT=${PG_BOOT_TIMEOUT:-$limit} \
    XEN_CMDLINE="dom0=pvh iommu=no-sharept dom0_mem=1024M dom0_max_vcpus=$smp console=com1 com1=115200,8n1" \
        "$PG_ROOT/harness/boot-qemu.sh" "${xen[$v]}" "$payload" \
        "$log" "$cases" "$d" || touch "$log.failed"
}
for v in $variants; do
    c=$quick
    if [ -n "$full" ]; then
        case $v in
        base|patched) c=$full_cases ;;
        # The race detector sees a release before the flush only when no
        # exit to Xen emptied the granter's TLB in between: more batches.
        neg-late-flush) c=$quick.p1000.p1000.p1000 ;;
        esac
    else
        case " $must_catch " in *" $v "*) c=$quick_must ;; esac
    fi
    case " $assert_negs " in *" $v "*) c=c33 ;; esac
    boot "$v" "$v" 2 "${TORTURE_CASES:-$c}"
done
if [ -n "$full" ]; then
    for v in base patched neg-domain-state $must_catch; do
        case " $variants " in *" $v "*) boot "$v" "$v-4vcpu" 4 "$smp4" ;; esac
    done
fi
for v in $quick_variants; do
    c=$quick
    case " $must_catch " in *" $v "*) c=$quick_must ;; esac
    boot "$v" "$v" 2 "${TORTURE_CASES:-$c}" amd-vi
done
# With ATS and without an IOMMU, the controls run the deterministic
# controls' cases.
for v in $ats_variants; do
    c=$quick
    case " $ats_negs " in *" $v "*) c=$quick_must ;; esac
    boot "$v" "$v" 2 "${TORTURE_CASES:-$c}" vt-d-ats
done
for v in $amd_ats_variants; do
    c=$quick
    case " $amd_ats_negs " in *" $v "*) c=$quick_must ;; esac
    boot "$v" "$v" 2 "${TORTURE_CASES:-$c}" amd-vi-ats
done
for v in $none_variants; do
    c=$quick
    case " $none_negs " in *" $v "*) c=$quick_must ;; esac
    [ -n "$full" ] && [ $v != neg-tlb-needs-iotlb ] && c=$full_cases
    boot "$v" "$v" 2 "${TORTURE_CASES:-$c}" none
    [ -z "$full" ] || boot "$v" "$v-4vcpu" 4 "${TORTURE_CASES:-$smp4}" none
done

wait
failed=0
for b in "${boots[@]}"; do
    IFS='|' read -r v label log <<<"$b"
    [ -e "$log.failed" ] || continue
    case $v in
    neg-*) echo "note: boot of $label did not finish (see its log)" >&2 ;;
    *) echo "error: torture boot of $label failed (log: $log)" >&2
       failed=1 ;;
    esac
done
# The report, and so the run's record, covers a build whose boot failed.
rc=0
python3 "$PG_ROOT/harness/torture-report.py" $check --base "$base" \
    --describe "$(pg_tree_describe "$tree")" \
    --xen-version "$(pg_tree_version "$tree")" --json "$PG_OUT/torture.json" "${cases[@]}" "${logs[@]}" || rc=$?
[ $failed = 0 ] || [ -z "$check" ] || die "torture boots failed"
exit $rc
