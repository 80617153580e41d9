#!/bin/bash
# recorded.sh WHAT JSON... -- CMD...
# Run CMD (a job of the Makefile), then write the compact record of the
# run (harness/record.py) as out/record-WHAT.json from the JSON outputs
# CMD wrote, with CMD's verdict, or "failed (not enforced)" when CMD
# exited 0 on failed checks its JSON holds (`make` does not enforce
# them); exits with CMD's status.  An output left by an earlier run is
# removed first: it is not this run's.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

what=${1:?usage: recorded.sh WHAT JSON... -- CMD...}
shift
outs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do outs+=("$PG_OUT/$1"); shift; done
[ "${1:-}" = -- ] && [ $# -gt 1 ] || die "usage: recorded.sh WHAT JSON... -- CMD..."
shift
rm -f "${outs[@]}"
"$@"
rc=$?
verdict=ok; [ $rc = 0 ] || verdict=failed
mkdir -p "$PG_OUT"
python3 "$PG_ROOT/harness/record.py" --what "make $what" --judge \
    --out "$PG_OUT/record-$what.json" --stage "$what=$verdict" "${outs[@]}"
exit $rc
