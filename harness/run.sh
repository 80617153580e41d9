#!/bin/bash
# run.sh [--check]
# The main job: base, patched and negative-control hypervisors built from
# the same tree, each booted under the same QEMU with the same dom0 and
# workload, on each machine of PG_IOMMUS (harness/machines; default: VT-d,
# AMD-Vi, each with an ATS device, and no IOMMU, the last three with base
# and patched only), and on VT-d and AMD-Vi the density control (the
# series without its gather's density rule, kept rounds only); prints the
# summary (the tables into out/report.txt, printed with PG_VERBOSE=1)
# and writes out/report.json.
# With --check, the thresholds are enforced (non-zero exit on failure).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

check=
[ "${1:-}" = --check ] && check=--check

[ -n "${XEN_SRC:-}" ] || "$PG_ROOT/harness/get-tree.sh"
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
pg_start "$tree" "$base"
series=1; [ -n "$(pg_series "$base")" ] || series=0

declare -A xen
for v in base patched negative; do
    xen[$v]=$("$PG_ROOT/harness/build-xen.sh" "$v" debug)
done
# The control of the machine without an IOMMU, a mutation of the series.
none_neg=
case " ${PG_IOMMUS:-none} " in *" none "*)
    [ $series = 0 ] || {
        none_neg=neg-tlb-needs-iotlb
        xen[$none_neg]=$("$PG_ROOT/harness/build-xen.sh" $none_neg debug)
    } ;;
esac

# The kept rounds (NkS: frames S pages apart whose IOMMU page tables stay
# linked, so that only the density rule splits patched's batch), on every
# machine.  Not in ROUNDS, which harness/kit.sh gives the kit: its tools
# read N and NsS rounds only.
KEPT_ROUNDS=${KEPT_ROUNDS-32k512}
# The control of the density rule, on the machines with DMA and no ATS
# (VT-d and AMD-Vi): the rule dropped, which only report.py's density
# bound, in a kept round, can tell.
density=
case " ${PG_IOMMUS:-vt-d} " in *" vt-d "*|*" amd-vi "*)
    [ $series = 0 ] || [ -z "$KEPT_ROUNDS" ] || {
        density=neg-density
        xen[$density]=$("$PG_ROOT/harness/build-xen.sh" $density debug)
    } ;;
esac

dom0=$(pg_gntpg_dom0 "$tree" "$base")

# boot_one NAME IOMMU XEN LOG ARGS...: one boot, in the background
# (pg_bg: up to PG_JOBS at once); LOG.failed says it did not finish.
boot_one() {
    local name=$1 iommu=$2 x=$3 log=$4
    shift 4
    step "booting $name under QEMU ($iommu, SVM+NPT, PVH dom0)"
    PG_IOMMU=$iommu "$PG_ROOT/harness/boot-qemu.sh" "$x" "$dom0" "$log" "$@" ||
        touch "$log.failed"
}

mkdir -p "$PG_OUT"
ROUNDS=${ROUNDS:-"1 8 32 33 64 256 32s2 32s16 64s16 32s512"}
logs=()
# Each variant's workload arguments: report.py requires each of their
# rounds in its logs (the same rounds on every machine).
declare -A booted
for iommu in ${PG_IOMMUS:-vt-d amd-vi vt-d-ats amd-vi-ats none}; do
    dma=$(pg_machine_dma "$iommu")
    # VT-d's logs stay where they always were; the others' go to IOMMU/.
    dir=$PG_OUT; [ $iommu = vt-d ] || dir=$PG_OUT/$iommu
    mkdir -p "$dir"
    variants="base patched negative"
    # Without an IOMMU there is no IOTLB flush for the negative control
    # to skip, nor a DMA detector to catch it: there the control is the
    # series with each batch's p2m flush dropped (neg-tlb-needs-iotlb),
    # which the oracle must report.  With ATS, the DMA detector sees what
    # it sees without, and the torture runs the ATS controls.
    neg=negative
    [ "$dma" = 1 ] || neg=$none_neg
    [ -n "$neg" ] && [ "${iommu%-ats}" = $iommu ] || variants="base patched"
    [ -z "$density" ] || [ "$dma" = 0 ] || [ "${iommu%-ats}" != $iommu ] ||
        variants="$variants density"
    for v in $variants; do
        name=$v; [ $v = negative ] && name=negative-control
        [ $v = density ] && name=density-control
        args=${WORKLOAD_ARGS:-"--dma 0000:00:04.0 --dma-n 33 $ROUNDS $KEPT_ROUNDS"}
        [ "$dma" = 1 ] || args=${WORKLOAD_ARGS:-"$ROUNDS $KEPT_ROUNDS"}
        # The negative control is a deliberately broken hypervisor: it runs
        # the detector's round only (stale IOTLB entries may break dom0
        # later).
        x=${xen[$v]:-}
        if [ $v = negative ]; then
            args=${NEGATIVE_ARGS:-"--dma 0000:00:04.0 --dma-n 33 33"}
            [ "$dma" = 1 ] || args=${NEGATIVE_ARGS:-33} x=${xen[$neg]}
        fi
        # The density control runs the kept rounds only: elsewhere page
        # tables freed, or contiguous frames, leave the rule nothing to split.
        [ $v = density ] && args=${DENSITY_ARGS:-$KEPT_ROUNDS} x=${xen[$density]}
        rm -f "$dir/$name.log.failed"
        pg_bg boot_one "$name" "$iommu" "$x" "$dir/$name.log" $args
        booted[$name]=$args
        logs+=("$iommu:$name=$dir/$name.log")
    done
done
wait
for l in "${logs[@]}"; do
    [ -e "${l#*=}.failed" ] || continue
    [ -n "$check" ] && die "boot of ${l%%=*} failed (log: ${l#*=})"
    echo "warning: boot of ${l%%=*} failed" >&2
done

rc=0
rounds=(--rounds "${booted[base]}")
[ -z "${booted[negative-control]:-}" ] ||
    rounds+=(--negative-rounds "${booted[negative-control]}")
[ -z "${booted[density-control]:-}" ] ||
    rounds+=(--density-rounds "${booted[density-control]}")
python3 "$PG_ROOT/harness/report.py" $check --series $series \
    --tree-base "$base" --describe "$(pg_tree_describe "$tree")" \
    --xen-version "$(pg_tree_version "$tree")" "${rounds[@]}" \
    --json "$PG_OUT/report.json" --tables-file "$PG_OUT/report.txt" \
    "${logs[@]}" || rc=$?

[ ! -s "$PG_OUT/base.log" ] ||
    python3 "$PG_ROOT/harness/scatter-policies.py" "$PG_OUT/base.log" \
        --json "$PG_OUT/scatter-policies.json" >> "$PG_OUT/report.txt" || true
exit $rc
