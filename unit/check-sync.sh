#!/bin/sh
# Check that the code the unit tests compile is the code of the patches.
# usage: check-sync.sh <patchdir>   (e.g. patches/stable-4.17)
# Rebuilds the patches' post-image (what the files hold once the whole
# series is applied, as far as the hunks show it), then extracts from it
# each function a header copies, and each block between
# "/* from the patch: */" and "/* :end */" in a test's header, and diffs
# it against the copy in the header.
set -u
dir=${1:?usage: $0 <patchdir>}
here=$(cd "$(dirname "$0")" && pwd)
rc=0
post=$(mktemp)
trap 'rm -f "$post" /tmp/check-sync.$$.a /tmp/check-sync.$$.b' EXIT

# The post-image: every line the hunks of the series show (context and
# added lines), at its line number in the file with the whole series
# applied: each patch's hunks replace the lines of their pre-image and
# move the lines after them, so a later patch's change to a function an
# earlier one added replaces that function's lines (patch 5's
# iommu_end_deferral(), which patch 4 added).  Printed as runs of
# consecutive lines, each run after a line "@@@ <file> <first line>".
# A hunk whose pre-image differs from the lines an earlier hunk put
# there is an error: no stale copy is ever compared.
python3 - "$dir"/*.patch > "$post" <<'PY' || { echo "post-image: cannot rebuild from $dir"; exit 1; }
import re, sys
files = {}                              # file -> {line number: text}
for path in sys.argv[1:]:
    if path.endswith("0000-cover-letter.patch"):
        continue
    hunks, name, cur = [], None, None   # (file, a, b, c, d, lines)
    for l in open(path, errors="replace").read().split("\n"):
        if l.startswith("diff "):
            name = cur = None
        elif l.startswith("+++ ") and cur is None:
            name = l[4:].split("/", 1)[1] if l[4:] != "/dev/null" else None
        elif l == "-- ":
            name = cur = None
        elif l.startswith("@@") and name:
            m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", l)
            a, b, c, d = (int(x) if x is not None else 1 for x in m.groups())
            cur = []
            hunks.append((name, a, b, c, d, cur))
        elif cur is not None and l[:1] in (" ", "+", "-"):
            cur.append(l)
    for name in dict.fromkeys(h[0] for h in hunks):
        old = files.get(name, {})
        mine = [h for h in hunks if h[0] == name]
        # pre-image ranges [a0, a0 + b): b == 0 inserts after line a
        spans = [(a if b else a + 1, b, d - b) for _, a, b, c, d, _ in mine]
        new = {}
        for p, text in old.items():
            if any(a0 <= p < a0 + b for a0, b, _ in spans):
                continue                # replaced by the hunk
            new[p + sum(s for a0, b, s in spans if a0 + b <= p)] = text
        for (_, a, b, c, d, lines), (a0, _, _) in zip(mine, spans):
            pre = [l[1:] for l in lines if l[0] in " -"]
            postl = [l[1:] for l in lines if l[0] in " +"]
            if len(pre) != b or len(postl) != d:
                sys.exit("%s: a hunk of %s does not add up" % (path, name))
            for i, t in enumerate(pre):
                if old.get(a0 + i, t) != t:
                    sys.exit("%s: a hunk of %s does not apply to the "
                             "series' earlier lines (line %d)"
                             % (path, name, a0 + i))
            c0 = c if d else c + 1
            for i, t in enumerate(postl):
                new[c0 + i] = t
        files[name] = new
for name, lines in files.items():
    prev = None
    for p in sorted(lines):
        if prev is None or p != prev + 1:
            print("@@@ %s %d" % (name, p))
        print(lines[p])
        prev = p
PY

# extract <function> <file...>: the function's text, from the line
# starting its definition (at column 0, "static" or not) to the closing
# "}" line, within one run of the post-image.
extract() {
    fn=$1; shift
    awk -v fn="$fn" '
        p && /^@@@ / { exit }
        p == 0 && $0 ~ ("^(static )?[a-z].*[ *]" fn "\\(") { p = 1 }
        p { print; if ( $0 == "}" ) exit }' "$@"
}

# block <header> <n>: the lines between the n-th pair of markers.
block() {
    awk -v n="$2" '/\/\* :end \*\//{ p = 0 } p { print }
        /\/\* from the patch: \*\//{ p = (++i == n) }' "$1"
}
nblocks() { grep -c '/\* from the patch: \*/' "$1" 2>/dev/null; }

# block_in_patch <block>: the block if the post-image holds it, as
# consecutive lines of one file; otherwise as many lines from the last
# line equal to its first (what differs), or nothing.
block_in_patch() {
    BLOCK=$1 python3 -c '
import os, sys
want = os.environ["BLOCK"].split("\n")
runs, found = [], ""
for l in open(sys.argv[1]).read().split("\n"):
    if l.startswith("@@@ "):
        runs.append([])
    elif runs:
        runs[-1].append(l.replace("d->is_shutting_down",
                                  "domain_shutting_down(d)"))
for r in runs:
    for i, l in enumerate(r):
        if l == want[0]:
            cand = r[i:i + len(want)]
            if cand == want:
                print("\n".join(cand))
                sys.exit(0)
            found = "\n".join(cand)
print(found)' "$post"
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
        rc=1
    fi
}

check_fn() {
    compare "$1" "$(extract "$1" "$post")" "$(extract "$1" "$2")" "$2"
}

# check_block <header>: each of its blocks.
check_block() {
    n=$(nblocks "$1") i=1
    n=${n:-0}
    if [ "$n" = 0 ]; then
        echo "$(basename "$1"): no block between markers"
        rc=1
    fi
    while [ "$i" -le "$n" ]; do
        b=$(block "$1" "$i")
        what="block of $(basename "$1")"
        [ "$n" = 1 ] || what="block $i of $(basename "$1")"
        compare "$what" "$(block_in_patch "$b")" "$b" "$1"
        i=$((i + 1))
    done
}

check_block "$here/vtd-psi/psi.h"
check_block "$here/vtd-order/order.h"
for fn in flush_add iommu_flush_gathered iommu_defer_flushes \
          iommu_end_deferral; do
    check_fn $fn "$here/iotlb-gather/gather.h"
done
check_block "$here/iotlb-gather/gather.h"
check_block "$here/iotlb-gather/record.h"
exit $rc
