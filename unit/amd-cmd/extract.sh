#!/bin/sh
# extract.sh AMDDIR > cmd.h: the AMD-Vi command builders under test,
# verbatim from a tree's xen/drivers/passthrough/amd/ (with the series
# applied): the field definitions of iommu-defs.h and iommu.h and the
# former's AMD_IOMMU_MAX_FLUSH_ORDER, set_field_in_reg_u32(),
# invalidate_iommu_pages(), invalidate_iotlb_pages() and
# amd_iommu_flush_iotlb_pages(), and the max_flush_order of
# pci_amd_iommu.c's iommu_ops as AMD_MAX_FLUSH_ORDER.
set -eu
dir=${1:?usage: extract.sh AMDDIR}
fn() {
    awk -v fn="$1" '
        p == 0 && $0 ~ ("^(static )?(inline )?[a-zA-Z].*[ *]" fn "\\(") { p = 1 }
        p { print; if ( $0 == "}" ) exit }' "$2"
}
grep -E '^#define (IOMMU_CMD_|IOMMU_INV_|INV_IOMMU_ALL_PAGES_ADDRESS|AMD_IOMMU_MAX_FLUSH_ORDER)' \
    "$dir/iommu-defs.h"
grep -E '^#define DMA_32BIT_MASK' "$dir/iommu.h"
order=$(sed -n 's/^ *\.max_flush_order = \([^,]*\),.*/\1/p' "$dir/pci_amd_iommu.c")
[ -n "$order" ] || { echo "extract.sh: max_flush_order not found" >&2; exit 1; }
printf '#define AMD_MAX_FLUSH_ORDER (%s)\n\n' "$order"
for f in set_field_in_reg_u32:iommu.h invalidate_iommu_pages:iommu_cmd.c \
         invalidate_iotlb_pages:iommu_cmd.c \
         amd_iommu_flush_iotlb_pages:iommu_map.c; do
    out=$(fn "${f%%:*}" "$dir/${f#*:}")
    [ -n "$out" ] || { echo "extract.sh: ${f%%:*} not found" >&2; exit 1; }
    printf '%s\n\n' "$out"
done
