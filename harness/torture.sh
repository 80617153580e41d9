#!/bin/bash
# torture.sh [--check] [--full]
# The unmap torture: base, patched and the neg-* mutations of the series
# (test-patches/neg-*/<base>/), each booted under the proving ground's
# QEMU with the torture driver (torture/gntt.c) in the PVH dom0, which
# unmaps grants in crafted arrays and checks every unmapped page by DMA
# and by CPU reads (see torture/README.md).  Prints the table and writes
# out/torture.json.  Without --full: the cases that fit CI; with --full
# (make torture): more pages, and a 4-vCPU dom0 for the concurrent cases.
# Both run under VT-d; the quick cases of patched and of the controls
# that break an IOMMU flush run under AMD-Vi as well.  Two more machines boot patched and
# the controls only they can see: VT-d with an ATS device (vt-d-ats,
# ats_negs) and no IOMMU (none, none_negs: the TLB deferral alone; 4
# vCPUs too with --full); --full adds base on both.  With --check,
# base/patched must pass and every negative control must be caught
# (non-zero exit otherwise).
# By hand: TORTURE_VARIANTS (builds to boot, e.g. "base patched"),
# TORTURE_CASES (one case list for all of them), TORTURE_DMA (pages of
# every 32 read by DMA), TORTURE_IOMMUS (machines: "vt-d amd-vi vt-d-ats
# none", or some).
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
negs=$(echo $negs)
# CI: patched and the mutations the quick cases catch (neg-efault-noflush
# by DMA, neg-late-flush by the release-order oracle in every case,
# neg-domain-state by the oracle in s256, where one-entry batches end
# inside another vCPU's open batch, and the oracle's deterministic
# controls: see MUST_CATCH in torture-report.py); the full run adds base.
must_catch="neg-tlb-self neg-tlb-p2m-mask neg-iotlb-narrow neg-ptp-free"
must_catch="$must_catch neg-pt-flush-late"
# Controls of the TLB deferral alone, which an IOMMU hides: run (and
# caught, in every case) on the machine without one only.
none_negs="neg-tlb-needs-iotlb"
# Controls of device IOTLBs: run (and caught) with ATS only.
ats_negs="neg-devtlb-narrow"
variants=patched none_variants=patched ats_variants=patched
for v in neg-efault-noflush neg-late-flush neg-domain-state $must_catch; do
    case " $negs " in *" $v "*) variants="$variants $v" ;; esac
done
for v in $none_negs; do
    case " $negs " in *" $v "*) none_variants="$none_variants $v" ;; esac
done
for v in $ats_negs; do
    case " $negs " in *" $v "*) ats_variants="$ats_variants $v" ;; esac
done
# Under AMD-Vi: patched and the controls that break an IOMMU flush; those
# of the p2m side alone break the same NPT code under either IOMMU.
quick_variants=
for v in $variants; do
    case " neg-tlb-self neg-tlb-p2m-mask neg-ptp-free neg-domain-state " in
    *" $v "*) ;; *) quick_variants="$quick_variants $v" ;; esac
done
if [ -n "$full" ]; then
    variants="base patched"
    for v in $negs; do
        case " $none_negs $ats_negs " in *" $v "*) ;;
        *) variants="$variants $v" ;; esac
    done
    none_variants="base $none_variants" ats_variants="base $ats_variants"
fi
for v in $negs; do
    case " $variants $none_variants $ats_variants " in *" $v "*) ;;
    *) die "$v is not in the quick list: add it to torture.sh" ;; esac
done
variants=${TORTURE_VARIANTS:-$variants}
quick_variants=${TORTURE_VARIANTS:-$quick_variants}
none_variants=${TORTURE_VARIANTS:-$none_variants}
ats_variants=${TORTURE_VARIANTS:-$ats_variants}
iommus=${TORTURE_IOMMUS:-vt-d amd-vi vt-d-ats none}
for i in $iommus; do pg_machine "$i" >/dev/null; done
case " $iommus " in *" amd-vi "*) ;; *) quick_variants= ;; esac
case " $iommus " in *" none "*) ;; *) none_variants= ;; esac
case " $iommus " in *" vt-d-ats "*) ;; *) ats_variants= ;; esac
case " $iommus " in *" vt-d "*) ;; *) variants= ;; esac

declare -A xen
for v in $variants $quick_variants $none_variants $ats_variants; do
    [ -n "${xen[$v]:-}" ] ||
        xen[$v]=$("$PG_ROOT/harness/build-xen.sh" "$v" debug)
done
mod=$("$PG_ROOT/harness/build-gntt.sh")
payload=$PG_BUILD/$base/dom0-torture
"$PG_ROOT/harness/mk-dom0.sh" "$PG_ROOT/torture/dom0-run" "$payload" "$mod"

# Cases: see torture/README.md.  '.' separates them (no commas on QEMU's
# module command line).  dma: pages of every 32 also read by DMA (QEMU's
# edu takes 100 ms per DMA: every page would cost 0.2 s; the CPU detector
# reads every page).  The full run adds 10,000 pages on base and patched,
# and a 4-vCPU dom0 (3 unmapping vCPUs, 1 granter) for the race.
quick="c31.c32.c33.c65.c1000.a20.a45.b.e.d256.s256.p64.p256"
full_cases="$quick.c1000.c1000.c1000.d1000.d1000.p1000.p1000.a100.a500"
smp4="p256.p1000.d256"
# The deterministic controls, in CI: every kind of case, both vCPUs busy
# in d and p (the domain dirty on 2 CPUs at the batches' flushes).
quick_must="c33.c65.a20.b.d256.p64"
dma=2 limit=1200
[ -n "$full" ] && dma=4 limit=3600
dma=${TORTURE_DMA:-$dma}
mkdir -p "$PG_OUT/torture"
logs=()
boot() {
    local v=$1 name=$2 smp=$3 cases=$4 iommu=${5:-vt-d}
    local dir=$PG_OUT/torture label=$name try ok=0 d=$dma
    [ $iommu = vt-d ] || { dir=$dir/$iommu; label="$name ($iommu)"; }
    [ "$(pg_machine_dma "$iommu")" = 1 ] || d=0
    local log=$dir/$name.log
    mkdir -p "$dir"
    for try in 1 2 3; do
        step "torture: booting $label ($smp vCPUs)"
        # Every checked page makes an IOMMU fault: Xen's default (rate-
        # limited) log levels and no trace keep the console from
        # dominating the run.
        PG_IOMMU=$iommu PG_QEMU_SMP=$smp PG_QEMU_TRACE=0 \
        PG_BOOT_TIMEOUT=${PG_BOOT_TIMEOUT:-$limit} \
        XEN_CMDLINE="dom0=pvh iommu=no-sharept dom0_mem=1024M dom0_max_vcpus=$smp console=com1 com1=115200,8n1" \
            "$PG_ROOT/harness/boot-qemu.sh" "${xen[$v]}" "$payload" \
            "$log" "$cases" "$d" && { ok=1; break; }
        pg_emulator_fault "$log" || break
        echo "warning: $label: QEMU lost dom0's state (triple fault at Xen's" \
             "own address, see lib.sh); kept as $log.emulator-fault-$try, retrying" >&2
        mv "$log" "$log.emulator-fault-$try"
    done
    [ $ok = 1 ] || {
        case $v in
        neg-*) echo "note: boot of $label did not finish (see its log)" >&2 ;;
        *) [ -n "$check" ] && die "torture boot of $label failed"
           echo "warning: torture boot of $label failed" >&2 ;;
        esac
    }
    logs+=("$iommu:$name=$log")
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
for v in $none_variants; do
    c=$quick
    case " $none_negs " in *" $v "*) c=$quick_must ;; esac
    [ -n "$full" ] && [ $v != neg-tlb-needs-iotlb ] && c=$full_cases
    boot "$v" "$v" 2 "${TORTURE_CASES:-$c}" none
    [ -z "$full" ] || boot "$v" "$v-4vcpu" 4 "${TORTURE_CASES:-$smp4}" none
done

python3 "$PG_ROOT/harness/torture-report.py" $check --base "$base" \
    --json "$PG_OUT/torture.json" "${logs[@]}"
