#!/bin/bash
# qubes-tree.sh [--with DIR@NNNN] QUBES_GIT XEN_GIT OUT [REV]: the Xen tree Qubes OS builds,
# as a git checkout in OUT: upstream's RELEASE-<version> (qubes-vmm-xen's
# `version` at REV, default release4.3) with every PatchNNNN of its
# xen.spec.in applied in the spec's order (as %autosetup -p1 does, no
# fuzz), one commit each, so that `git am -3` of a series made on the
# plain release can merge into it.  QUBES_GIT: a git repository (bare or
# not) of QubesOS/qubes-vmm-xen; XEN_GIT: one of upstream Xen with its
# release tags.  Pass OUT as XEN_SRC.  --with DIR@NNNN: also the mails
# DIR/000[1-9]-*.patch, as a builder adds them to xen.spec.in (Patch
# NNNN, NNNN+1, ...), each in its place in the spec's order.
set -euo pipefail
die() { echo "qubes-tree.sh: $*" >&2; exit 1; }
with= at=
if [ "${1:-}" = --with ]; then
    [[ ${2:-} =~ ^(.+)@([0-9]{4})$ ]] || die "--with DIR@NNNN"
    with=${BASH_REMATCH[1]} at=$((10#${BASH_REMATCH[2]}))
    ls "$with"/000[1-9]-*.patch >/dev/null 2>&1 || die "$with: no mails"
    with=$(cd "$with" && pwd)
    shift 2
fi
[ $# -ge 3 ] || die "usage: qubes-tree.sh [--with DIR@NNNN] QUBES_GIT XEN_GIT OUT [REV]"
q=$1 x=$2 out=$3 rev=${4:-release4.3}
q=$(cd "$q" && pwd) && x=$(cd "$x" && pwd) || die "no such repository"
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
# "NUMBER NAME" per patch, in the spec's order, which must be the
# numbers' (%autosetup's order is then the same by either rule);
# --with's sorted in.
patches=$(sed -n 's/^Patch\([0-9]*\): *\([^ ]*\) *$/\1 \2/p' <<<"$spec")
[ -n "$patches" ] || die "xen.spec.in at $rev lists no patch"
[ "$patches" = "$(sort -n -s -k1,1 <<<"$patches")" ] ||
    die "xen.spec.in at $rev declares its patches out of numeric order"
if [ -n "$with" ]; then
    n=$at
    for m in "$with"/000[1-9]-*.patch; do
        grep -q "^0*$n " <<<"$patches" && die "Patch$n: taken in xen.spec.in"
        patches+=$'\n'"$n $m"
        n=$((n + 1))
    done
    patches=$(sort -n -s -k1,1 <<<"$patches")
fi

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
git clone -q --shared --no-checkout "$x" "$out"
cd "$out"
git checkout -q --detach "$tag"
git config user.name "qubes-tree.sh"
git config user.email "qubes-tree@invalid"
n=0
while read -r _ p; do
    if [ "${p#/}" != "$p" ]; then
        cp "$p" "$tmp"
    else
        git -C "$q" show "$rev:$p" >"$tmp" 2>/dev/null ||
            die "$p: listed in xen.spec.in, not in qubes-vmm-xen at $rev"
    fi
    patch -p1 -F0 -s --no-backup-if-mismatch <"$tmp" ||
        die "$p does not apply to $tag"
    git add -A
    if [ "${p#/}" != "$p" ]; then
        git commit -q -m "added: ${p##*/}" -m "$(basename "$with")/${p##*/}"
    else
        git commit -q --allow-empty -m "Qubes: $p" \
            -m "qubes-vmm-xen $(git -C "$q" rev-parse --short=12 "$rev"):$p"
    fi
    n=$((n + 1))
done <<<"$patches"
added=
[ -z "$with" ] || added=", $(basename "$with") from Patch$(printf %04d "$at")"
echo "$out: $tag with $n patches of qubes-vmm-xen $rev" \
     "($(git -C "$q" rev-parse --short=12 "$rev"))$added"
