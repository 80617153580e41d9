#!/bin/sh
# Check that the code the unit tests compile is the code of the patches.
# usage: check-sync.sh <patchdir>   (e.g. patches/stable-4.17)
# Extracts each function from the added lines ("+") of the patch files,
# and each block between "/* from the patch: */" and "/* :end */" in a
# test's header from the patches' post-image, and diffs it against the
# copy in the header.
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

# block <header>: the lines between the markers.
block() {
    awk '/\/\* :end \*\//{ p = 0 } p { print } /\/\* from the patch: \*\//{ p = 1 }' "$1"
}

# block_in_patch <first line> <count>: that many lines of the patches'
# post-image (added and context lines), from <first line> on: in the
# last patch whose hunk holds that many lines from there.
block_in_patch() {
    FIRST=$1 N=$2 python3 -c '
import os, sys
first, n, found = os.environ["FIRST"], int(os.environ["N"]), ""
for path in sys.argv[1:]:
    hunks, cur = [], None
    for l in open(path, errors="replace").read().split("\n"):
        if l.startswith("@@"):
            cur = []; hunks.append(cur)
        elif l.startswith("diff ") or l == "-- ":
            cur = None
        elif cur is not None and l[:1] in (" ", "+"):
            cur.append(l[1:])
    for h in hunks:
        for i, l in enumerate(h):
            if l == first and len(h) - i >= n:
                found = "\n".join(h[i:i + n])
print(found)' "$dir"/*.patch
}

# The one line the bases spell differently: 4.17 has no
# domain_shutting_down(), so its patch reads the field itself.
compare() {
    what=$1 from_patch=$(printf '%s\n' "$2" |
        sed 's/d->is_shutting_down/domain_shutting_down(d)/') from_header=$3 header=$4
    if [ -z "$from_patch" ]; then
        echo "$what: not found in $dir"
        rc=1
    elif [ "$from_patch" = "$from_header" ]; then
        echo "$what: in sync"
    else
        echo "$what: DIFFERS between $dir and $header:"
        printf '%s\n' "$from_patch" > /tmp/check-sync.$$.a
        printf '%s\n' "$from_header" > /tmp/check-sync.$$.b
        diff -u /tmp/check-sync.$$.a /tmp/check-sync.$$.b
        rm -f /tmp/check-sync.$$.a /tmp/check-sync.$$.b
        rc=1
    fi
}

check_fn() {
    compare "$1" "$(cat "$dir"/*.patch | sed -n 's/^+//p' | extract "$1")" \
        "$(extract "$1" "$2")" "$2"
}

check_block() {
    b=$(block "$1")
    compare "block of $(basename "$1")" \
        "$(block_in_patch "$(printf '%s\n' "$b" | head -n 1)" \
                          "$(printf '%s\n' "$b" | wc -l)")" "$b" "$1"
}

check_block "$here/vtd-psi/psi.h"
for fn in flush_add iommu_flush_gather iommu_defer_flushes iommu_end_deferral \
          flush_iotlb; do
    check_fn $fn "$here/iotlb-gather/gather.h"
done
check_block "$here/iotlb-gather/gather.h"
check_block "$here/iotlb-gather/record.h"
exit $rc
