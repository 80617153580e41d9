#!/bin/bash
# Each --check test of test.sh must fail on report.py with the check it
# tests taken out: test.sh runs on a copy of report.py (with bootlog.py,
# problems.py and record.py beside it) where one check's code is
# replaced, and must print FAIL for that test, while the crafted boots
# still pass (a mutant that breaks report.py as a whole catches
# nothing).  A replaced text no longer in report.py fails too (the
# mutant would test nothing).
set -uo pipefail
. "$(dirname "$0")/../../harness/lib.sh"

# mutant TESTS FROM TO [FROM TO]...: test.sh fails each of TESTS (one a
# line) on the copy.
mutant() {
    local tests=$1 tmp out t rc=1
    shift
    tmp=$(mktemp -d)
    cp "$PG_ROOT"/harness/{report,bootlog,record,problems}.py "$tmp/"
    if pg_mutate "$tmp/report.py" "$@"; then
        out=$(REPORT_PY=$tmp/report.py bash "$(dirname "$0")/test.sh")
        grep -qxF "ok: $good" <<<"$out" && rc=0
        while read -r t; do
            grep -qxF "FAIL: $t" <<<"$out" || rc=1
        done <<<"$tests"
    fi
    rm -rf "$tmp"
    return $rc
}

good="check: the crafted boots pass (the DMA detector's faults in its window)"
rounds='return fails + missing_rounds({i: per[i]}, want)'
t="check: a round of ROUNDS missing from patched's log fails, named
check: a round of ROUNDS begun but not ended fails, named
check: the negative control's round missing from its log fails"
mutant "$t" "$rounds" 'return fails'
pg_result $? "mutant without the rounds check: ${t//$'\n'/; }"
t="check: VT-d without Xen's IOTLB counters fails (both observers required)"
mutant "$t" 'if xv < 0 and need:' 'if False:'
pg_result $? "mutant skipping a missing Xen counter: $t"
t="check: a patched round that base's log lacks fails"
mutant "$t" '        if b is None:
            fails.append(f"{tag}: base has no unmap of this round to "
                         "compare with")
        else:' '        if b is not None:'
pg_result $? "mutant skipping a round base lacks: $t"
t="check: patched with no p2m flush for an unmap fails (VT-d)
check: patched with no p2m flush for an unmap fails (no IOMMU)"
mutant "$t" '        elif r["p2m_tlb_flushes"] == 0 and n >= 1:' '        elif False:' \
    '        elif v == "patched" and series and r["p2m_tlb_flushes"] == 0 \
                and n >= 1:' '        elif False:'
pg_result $? "mutant without the p2m lower bound: ${t//$'\n'/; }"
t="check: an IOMMU fault after a round's unmap other than the DMA round's fails
check: an IOMMU fault after the last round's unmap fails"
mutant "$t" 'key == (dma_round, "unmap", 1)' 'key and key[1] == "unmap"'
pg_result $? "mutant opening the DMA window after every unmap: ${t//$'\n'/; }"
t="check: an IOMMU fault after the last round's unmap fails"
mutant "$t" '        if line.startswith("PG-"):
            dma_window = False
' ''
pg_result $? "mutant leaving the DMA window open: $t"
t="check: no kept round fails, and the summary says the density bound was not exercised"
mutant "$t" 'fails.append(f"{iommu} patched: no kept round, so nothing "' \
    'print(f"{iommu} patched: no kept round, so nothing "'
pg_result $? "mutant without the kept-round requirement: $t"
mutant "$t" '"not exercised (no kept round)"' '"held"'
pg_result $? "mutant calling an unexercised bound held: $t"

t="check: a kept round within the bound and the density control caught pass, kept rows apart"
# The crafted boots have a kept round (without one patched fails): this
# mutant fails them too, and must leave the log scan working.
good="log scan catches a Xen assertion" mutant "$t" 'kv.get("kept", 0) == 1)' 'False)' \
    'kv.pop("kept", 0) == 1) if kv else cur' 'False) if kv else cur'
pg_result $? "mutant reading no kept round: $t"
t="check: patched breaking the density bound in a kept round fails"
mutant "$t" '        if density_broken(r):
            fails.append(f"{tag}: {density_broken(r)}")
' ''
pg_result $? "mutant without patched's density bound: $t"
t="check: a domain-wide invalidation in a kept round fails, on base and patched"
mutant "$t" '        if r["phase"] == "unmap" and r["kept"] and wide(r) and (' \
    '        if False and ('
pg_result $? "mutant allowing domain-wide flushes in kept rounds: $t"
t="check: the density control within the bound fails (not caught)"
mutant "$t" '    return "caught" if any(' '    return "caught" if True or any('
pg_result $? "mutant calling the density control always caught: $t"
t="check: a kept round on patched without the density control's boot fails"
mutant "$t" '    elif got is None and series and not ats and any(' \
    '    elif False and any('
pg_result $? "mutant not requiring the density control: $t"

t="summary: five machines in a few short lines, each as its counts say; the tables in a file"
mutant "$t" 'if a.tables or os.environ.get("PG_VERBOSE") == "1":' 'if True:'
pg_result $? "mutant printing the tables always: $t"
t="summary: a failed check is named first, on its machine's line too (--check)"
mutant "$t" '        says.append(f"{len(fails[iommu])} FAILED" if fails[iommu]' \
    '        says.append(f"{len(fails[iommu])} FAILED" if False'
pg_result $? "mutant calling every machine passed: $t"

pg_tally
