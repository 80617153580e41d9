#!/bin/sh
# Check that the helpers the unit tests compile are the ones in the patches.
# usage: check-sync.sh <patchdir>   (e.g. patches/stable-4.17)
# Extracts each helper from the added lines ("+") of the patch files and
# diffs it against the copy in vtd-psi/psi.h or iotlb-record/record.h.
set -u
dir=${1:?usage: $0 <patchdir>}
here=$(cd "$(dirname "$0")" && pwd)
rc=0

# extract <function> <file...>: the function's text, from the line
# starting its definition (at column 0, "static" or not) to the closing
# "}" line.
extract() {
    fn=$1; shift
    awk -v fn="$fn" '
        p == 0 && $0 ~ ("^(static )?[a-z].*[ *]" fn "\\(") { p = 1 }
        p { print; if ( $0 == "}" ) exit }' "$@"
}

check() {
    fn=$1 header=$2
    from_patch=$(cat "$dir"/*.patch | sed -n 's/^+//p' | extract "$fn")
    from_header=$(extract "$fn" "$header")
    if [ -z "$from_patch" ]; then
        echo "$fn: not found in $dir"
        rc=1
    elif [ "$from_patch" = "$from_header" ]; then
        echo "$fn: in sync"
    else
        echo "$fn: DIFFERS between $dir and $header:"
        printf '%s\n' "$from_patch" > /tmp/check-sync.$$.a
        printf '%s\n' "$from_header" > /tmp/check-sync.$$.b
        diff -u /tmp/check-sync.$$.a /tmp/check-sync.$$.b
        rm -f /tmp/check-sync.$$.a /tmp/check-sync.$$.b
        rc=1
    fi
}

check psi_aligned_range "$here/vtd-psi/psi.h"
for fn in iotlb_record_merge iotlb_record_add iommu_iotlb_record_begin \
          iommu_iotlb_flush_recorded iommu_iotlb_drop_recorded; do
    check $fn "$here/iotlb-record/record.h"
done
exit $rc
