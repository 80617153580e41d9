#!/bin/bash
# qubes-tree.sh QUBES_GIT XEN_GIT OUT [REV]: the Xen tree Qubes OS builds,
# as a git checkout in OUT: upstream's RELEASE-<version> (qubes-vmm-xen's
# `version` at REV, default release4.3) with every PatchNNNN of its
# xen.spec.in applied in the spec's order (as %autosetup -p1 does, no
# fuzz), one commit each, so that `git am -3` of a series made on the
# plain release can merge into it.  QUBES_GIT: a git repository (bare or
# not) of QubesOS/qubes-vmm-xen; XEN_GIT: one of upstream Xen with its
# release tags.  Pass OUT as XEN_SRC.
set -euo pipefail
die() { echo "qubes-tree.sh: $*" >&2; exit 1; }
[ $# -ge 3 ] || die "usage: qubes-tree.sh QUBES_GIT XEN_GIT OUT [REV]"
q=$1 x=$2 out=$3 rev=${4:-release4.3}
git -C "$q" rev-parse -q --verify "$rev^{commit}" >/dev/null ||
    die "$q: no revision $rev of qubes-vmm-xen"
ver=$(git -C "$q" show "$rev:version") || die "$q: no version file at $rev"
[[ $ver =~ ^4\.[0-9]+\.[0-9]+$ ]] || die "$q: version '$ver' is not a Xen release"
tag=RELEASE-$ver
git -C "$x" rev-parse -q --verify "$tag^{commit}" >/dev/null ||
    die "$x: no tag $tag"
[ ! -e "$out" ] || die "$out exists"
spec=$(git -C "$q" show "$rev:xen.spec.in") || die "$q: no xen.spec.in at $rev"
grep -q '^%autosetup -p1 ' <<<"$spec" ||
    die "xen.spec.in at $rev does not apply its patches with %autosetup -p1"
patches=$(sed -n 's/^Patch[0-9]*: *\([^ ]*\) *$/\1/p' <<<"$spec")
[ -n "$patches" ] || die "xen.spec.in at $rev lists no patch"

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
git clone -q --shared --no-checkout "$x" "$out"
cd "$out"
git checkout -q --detach "$tag"
git config user.name "qubes-tree.sh"
git config user.email "qubes-tree@invalid"
n=0
for p in $patches; do
    git -C "$q" show "$rev:$p" >"$tmp" 2>/dev/null ||
        die "$p: listed in xen.spec.in, not in qubes-vmm-xen at $rev"
    patch -p1 -F0 -s --no-backup-if-mismatch <"$tmp" ||
        die "$p does not apply to $tag"
    git add -A
    git commit -q --allow-empty -m "Qubes: $p" \
        -m "qubes-vmm-xen $(git -C "$q" rev-parse --short=12 "$rev"):$p"
    n=$((n + 1))
done
echo "$out: $tag with $n patches of qubes-vmm-xen $rev ($(git -C "$q" rev-parse --short=12 "$rev"))"
