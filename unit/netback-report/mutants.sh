#!/bin/bash
# Each check of bench/netback/report.py that test.sh tests must be
# caught taken out: test.sh runs on a copy of the project's checker
# (bench/netback/report.py, harness/*.py beside it as in the project)
# where one check's code is replaced, and must print FAIL for the tests
# of that check while the fixtures still pass (a mutant that breaks the
# checker as a whole catches nothing).  A replaced text no longer in
# report.py fails too (the mutant would test nothing).
set -uo pipefail
. "$(dirname "$0")/../../harness/lib.sh"

# mutant TESTS FROM TO [FROM TO]...: test.sh fails each of TESTS (one a
# line) on the copy.
mutant() {
    local tests=$1 tmp out t rc=1
    shift
    tmp=$(mktemp -d)
    mkdir -p "$tmp/bench/netback" "$tmp/harness"
    cp "$PG_ROOT/bench/netback/report.py" "$tmp/bench/netback/"
    cp "$PG_ROOT"/harness/*.py "$tmp/harness/"
    if pg_mutate "$tmp/bench/netback/report.py" "$@"; then
        out=$(NB_REPORT_PY=$tmp/bench/netback/report.py \
              bash "$(dirname "$0")/test.sh" 2>/dev/null)
        grep -qxF "ok: $good" <<<"$out" && rc=0
        while read -r t; do
            grep -qxF "FAIL: $t" <<<"$out" || rc=1
        done <<<"$tests"
    fi
    rm -rf "$tmp"
    return $rc
}
# lines FILE...: test.sh's name of each problem line of FILE (WHAT|LINE).
lines() {
    grep -hv "^#" "$@" | while IFS='|' read -r what line; do
        echo "a problem line fails patched ($what): $line"
    done
}

good="the fixtures pass: rule held per grant, no problem, xl's soft lockups counted apart"
fix=$PG_ROOT/unit/netback-report/fixtures
rule="patched with 2 p2m flushes per unmap batch fails, machine and row named
patched with more IOTLB invalidations per grant than base fails, machine and row named
patched with more flushes per MB than base fails (without the grant counters)"

mutant "$rule" 'return 1 if problems or failures or not rows else 0' \
    'return 1 if problems or not rows else 0'
pg_result $? "mutant whose exit status ignores the rule (make bench passing it NOT held): ${rule//$'\n'/; }"
mutant "$rule" 'for row, how in rule_breaks(d0, per)' 'for row, how in []'
pg_result $? "mutant naming no row that breaks the rule: ${rule//$'\n'/; }"
t="patched with 2 p2m flushes per unmap batch fails, machine and row named"
mutant "$t" 'held = p2m <= 1 + 1e-9 and iotlb <= 1 + 1e-9' 'held = iotlb <= 1 + 1e-9'
pg_result $? "mutant without the rule's p2m bound: $t"

t="$(lines "$PG_ROOT/unit/oopses.txt" "$fix/problems.txt")
a problem line fails base's log too"
mutant "$t" 'PROBLEMS = PROBLEM_PATTERNS + BENCH_PROBLEMS' 'PROBLEMS = []'
pg_result $? "mutant with the problem list emptied: every problem line"
t="$(lines "$PG_ROOT/unit/oopses.txt")
a problem line fails base's log too"
mutant "$t" 'PROBLEMS = PROBLEM_PATTERNS + BENCH_PROBLEMS' 'PROBLEMS = BENCH_PROBLEMS'
pg_result $? "mutant without harness/problems.py's list: unit/oopses.txt's lines"
t=$(lines <(grep '^AMD-Vi' "$fix/problems.txt"))
mutant "$t" '    (re.compile(r"AMD-Vi: IO_PAGE_FAULT|amdvi_page_fault"), "AMD-Vi fault"),
' ''
pg_result $? "mutant without AMD-Vi's fault: $t"
# The bench's list before harness/problems.py's was used (the audit's
# N1): it missed these, and called every soft lockup a problem.
t="$(lines <(cat "$PG_ROOT/unit/oopses.txt" "$fix/problems.txt" | grep -v \
    "BUG: kernel NULL\|WARNING: CPU:\|Panic on CPU\|Assertion\|DMAR\|NB-ERROR\|pg-oracle"))
a problem line fails base's log too
a soft lockup outside xl is no problem (harness/problems.py), nor counted as xl's"
mutant "$t" 'PROBLEMS = PROBLEM_PATTERNS + BENCH_PROBLEMS' 'PROBLEMS = [
    (re.compile(r"Assertion '"'.*'"' failed"), "Xen assertion"),
    (re.compile(r"\*\*\*\* Panic on CPU|Xen BUG at|FATAL (PAGE FAULT|TRAP)"),
     "Xen panic"),
    (re.compile(r"(Oops|BUG:|Kernel panic|WARNING: CPU:)"), "guest oops"),
    (re.compile(r"DMAR:\[DMA (Read|Write)\]|vtd_dmar_fault"), "VT-d fault"),
    (re.compile(r"^NB-ERROR"), "benchmark error"),
    (re.compile(r"pg-oracle: "), "grant released before its flushes (oracle)"),
]'
pg_result $? "mutant with the bench's own list before N1: ${t//$'\n'/; }"

pg_tally
