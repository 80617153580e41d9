#!/bin/bash
# unit.sh: the userspace unit tests (one folder each under unit/) and
# the negative controls of the lint.  Prints "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

pass=0 fail=0
result() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok: $2"
           else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

for d in "$PG_ROOT"/unit/*/; do
    [ -f "$d/Makefile" ] || continue
    make -s -C "$d" check >/tmp/pg-unit.$$ 2>&1; rc=$?
    sed 's/^/  /' /tmp/pg-unit.$$; rm -f /tmp/pg-unit.$$
    result $rc "unit/$(basename "$d")"
done
for b in "$PG_ROOT"/patches/*/; do
    [ -x "$PG_ROOT/unit/check-sync.sh" ] || break
    "$PG_ROOT/unit/check-sync.sh" "$b" >/dev/null 2>&1
    result $? "unit helpers are the ones in patches/$(basename "$b")"
done

# The lint must pass on the series and catch each known-bad sample.
python3 "$PG_ROOT/harness/lint-patches.py" "$PG_ROOT"/patches/*/ >/dev/null
result $? "lint of patches/*"
python3 "$PG_ROOT/harness/lint-patches.py" "$PG_ROOT/harness/lint-samples/good.patch" >/dev/null
result $? "lint passes the good sample"
for bad in "$PG_ROOT"/harness/lint-samples/bad-*.patch; do
    [ -f "$bad" ] || continue
    python3 "$PG_ROOT/harness/lint-patches.py" "$bad" >/dev/null
    [ $? = 1 ]; result $? "lint catches $(basename "$bad")"
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
