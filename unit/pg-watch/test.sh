#!/bin/bash
# pg_watch (harness/lib.sh), the hung-boot detector of the QEMU boots of
# make bench and make kit-e2e: a process whose log goes silent is stopped
# and reported; one that keeps writing, or ends, is left alone and its
# status returned.  Could wrongly pass if the poll were never reached
# (every case here ends within seconds).
. "$(dirname "$0")/../../harness/lib.sh"
export PG_WATCH_POLL=1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

: > "$t/silent"
sleep 60 &
pid=$!
start=$(date +%s)
pg_watch $pid "$t/silent" 2 2> "$t/err"
rc=$?
[ $rc -ne 0 ] && ! kill -0 $pid 2>/dev/null && [ $(( $(date +%s) - start )) -lt 20 ] &&
    grep -q "no console output" "$t/err"
pg_result $? "a silent boot is stopped and reported (rc $rc)"

(for i in 1 2 3 4 5 6; do echo line >> "$t/busy"; sleep 0.5; done; exit 3) &
pg_watch $! "$t/busy" 2 2> "$t/err"
rc=$?
[ $rc = 3 ] && [ ! -s "$t/err" ]
pg_result $? "a boot that keeps writing runs to its end, its status returned (rc $rc)"

pg_tally
