#!/bin/bash
# harness/qubes-tree.sh on fixtures: a Xen repository with a release tag
# and a qubes-vmm-xen whose xen.spec.in lists three patches whose file
# names sort otherwise.  The tree must have them applied in the spec's
# order (each patch needs the one before it), --with must slot mails in
# by number, a spec declaring its patches out of numeric order,
# and a patch that does not apply, a missing one, or a number taken
# must fail with a non-zero exit.  Could wrongly pass if the fixtures'
# patches did not depend on their order (they do: each edits the line
# the previous one wrote).
set -u
. "$(dirname "$0")/../../harness/lib.sh"
qt=$PG_ROOT/harness/qubes-tree.sh
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
g() { git -c user.name=t -c user.email=t@t "$@"; }
patchfile() { # FROM TO: a -p1 patch of f from the line FROM to TO
    printf -- '--- a/f\n+++ b/f\n@@ -1 +1 @@\n-%s\n+%s\n' "$1" "$2"
}
(cd "$t" && mkdir x && cd x && git init -q && echo zero > f &&
 g add f && g commit -q -m base && g tag RELEASE-4.19.5) >/dev/null
(cd "$t" && mkdir q && cd q && git init -q && echo 4.19.5 > version &&
 patchfile zero one > 0300-z.patch && patchfile one two > 0400-b.patch &&
 patchfile two three > 0900-a.patch &&
 printf 'Name: xen\nPatch0300: 0300-z.patch\nPatch0400: 0400-b.patch\n\nPatch0900: 0900-a.patch\n%%prep\n%%autosetup -p1 -n xen\n' > xen.spec.in &&
 g add -A && g commit -q -m q && g branch -q release4.3) >/dev/null
mkdir "$t/m"
patchfile three four > "$t/m/0001-d.patch"
patchfile four five > "$t/m/0002-e.patch"

"$qt" "$t/q" "$t/x" "$t/out" >/dev/null 2>&1 &&
    [ "$(cat "$t/out/f")" = three ] &&
    [ "$(git -C "$t/out" log --format=%s RELEASE-4.19.5..HEAD | xargs)" = \
      "Qubes: 0900-a.patch Qubes: 0400-b.patch Qubes: 0300-z.patch" ]
pg_result $? "the spec's patches, in the spec's order, a commit each"
"$qt" --with "$t/m@0950" "$t/q" "$t/x" "$t/out2" >/dev/null 2>&1 &&
    [ "$(cat "$t/out2/f")" = five ]
pg_result $? "--with DIR@NNNN adds the mails after the spec's lower numbers"
! "$qt" --with "$t/m@0200" "$t/q" "$t/x" "$t/out3" >/dev/null 2>&1
pg_result $? "--with before a patch the mails need fails"
! "$qt" --with "$t/m@0900" "$t/q" "$t/x" "$t/out4" >/dev/null 2>&1
pg_result $? "--with at a number the spec takes fails"
! "$qt" "$t/q" "$t/x" "$t/out" >/dev/null 2>&1
pg_result $? "an existing OUT fails"
(cd "$t/q" && sed -i 's/^Patch0400:/Patch0200:/' xen.spec.in &&
 g commit -q -a -m order && g branch -q -f release4.3)
! "$qt" "$t/q" "$t/x" "$t/out5" >/dev/null 2>&1
pg_result $? "a spec declaring its patches out of numeric order fails"
(cd "$t/q" && git checkout -q release4.3~1 -- xen.spec.in && git rm -q 0900-a.patch &&
 g commit -q -a -m gone && g branch -q -f release4.3)
! "$qt" "$t/q" "$t/x" "$t/out6" >/dev/null 2>&1
pg_result $? "a patch the spec lists that is not there fails"
pg_tally
