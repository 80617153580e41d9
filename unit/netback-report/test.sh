#!/bin/bash
# bench/netback/report.py, the checker of make bench, on one boot of
# each build as the bench's serial console shows it (fixtures/base.log,
# fixtures/patched.log: Xen's lines, Debian 12's 6.1 dom0 kernel with
# xl's soft lockup, dom0-bench.py's NB- lines; patched keeps the series'
# rule, one p2m flush per unmap batch): the pair passes; each problem
# line (unit/oopses.txt, fixtures/problems.txt), the rule broken and no
# run read each fail it, exit status 1, named in its output and JSON.
# Could wrongly pass if the fixtures stopped matching what the bench
# prints (dom0-bench.py's lines, the instrument patches' counters).
# NB_REPORT_PY=path tests another copy (mutants.sh).
set -uo pipefail
. "$(dirname "$0")/../../harness/lib.sh"
report=${NB_REPORT_PY:-$PG_ROOT/bench/netback/report.py}
fix=$PG_ROOT/unit/netback-report/fixtures
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# fresh: the fixtures' pair in $d.
fresh() { cp "$fix/base.log" "$fix/patched.log" "$d/"; rm -f "$d/out.json"; }
# judge [IOMMU]: the checker on $d's pair (vt-d by default); its exit
# status, its output in $d/out, its JSON in $d/out.json.
judge() {
    python3 "$report" --json "$d/out.json" --iommu "${1:-vt-d}" \
        base="$d/base.log" patched="$d/patched.log" > "$d/out" 2>&1
}
# fails [IOMMU]: judge exits with status 1.
fails() { judge "$@"; [ $? = 1 ]; }
# says TEXT: a line of the checker's output is TEXT.
says() { grep -qxF -- "$1" "$d/out"; }
# json PYTHON: PYTHON's assertions hold on the JSON, j.
json() {
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); exec(sys.argv[2])' "$d/out.json" "$1"
}
# before_done LOG LINE: LINE put into LOG before its NB-DONE; prints
# LINE's line number.
before_done() {
    python3 - "$@" <<'PY'
import sys
p, line = sys.argv[1:]
ls = open(p).read().split("\n")
i = ls.index("NB-DONE")
open(p, "w").write("\n".join(ls[:i] + [line] + ls[i:]))
print(i + 1)
PY
}
# runs LOG DIR STREAMS PYTHON: PYTHON changes c, the key=value pairs of
# LOG's NB-RUN lines of DIR with STREAMS streams (counters as int); at
# least one such line.
runs() {
    python3 - "$@" <<'PY'
import sys
p, d, s, code = sys.argv[1:]
ls, n = open(p).read().split("\n"), 0
for i, line in enumerate(ls):
    if line.startswith("NB-RUN ") and f" dir={d} streams={s} " in line:
        c = dict(t.split("=", 1) for t in line.split()[1:])
        c = {k: int(v) if v.isdigit() else v for k, v in c.items()}
        exec(code)
        ls[i] = "NB-RUN " + " ".join(f"{k}={v}" for k, v in c.items())
        n += 1
assert n, "no such run"
open(p, "w").write("\n".join(ls))
PY
}
HELD="patched: p2m TLB flushes at most one per unmap batch, IOTLB invalidations per grant at most base's"

fresh
judge && says "  the series' rule ($HELD): held" && json '
b = j["domU_dom0_flush_bound"]
assert b["held"] is True and b["per"] == "grant" and b["p2m_per_batch"] == 1, b
assert j["problems"] == [] and j["failures"] == [], j
assert j["xl_soft_lockups"] == 2 and "retries" not in j, j
assert len(j["rows"]) == 6 and j["runs_per_row"] == 2, j["rows"]'
pg_result $? "the fixtures pass: rule held per grant, no problem, xl's soft lockups counted apart"
judge amd-vi && says "  the series' rule ($HELD): held" &&
    json 'assert j["iommu"] == "amd-vi" and j["rows"][0]["patched_amd_4k_per_mb"] > 0, j'
pg_result $? "the fixtures pass as AMD-Vi's boots (with the invalidations by size)"

# Each problem line in patched's log fails the pair, named with its line.
while IFS='|' read -r what line; do
    fresh
    n=$(before_done "$d/patched.log" "$line")
    m=vt-d
    case $what in AMD-Vi*) m=amd-vi ;; esac
    fails $m && says "  problem: $d/patched.log:$n: $what: $line" &&
        json 'assert len(j["problems"]) == 1 and j["failures"] == [], j'
    pg_result $? "a problem line fails patched ($what): $line"
done < <(grep -hv "^#" "$PG_ROOT/unit/oopses.txt" "$fix/problems.txt")
fresh
n=$(before_done "$d/base.log" "(XEN) Xen WARN at drivers/passthrough/iommu.c:512")
fails && says "  problem: $d/base.log:$n: Xen WARN: (XEN) Xen WARN at drivers/passthrough/iommu.c:512"
pg_result $? "a problem line fails base's log too"
fresh
n=$(before_done "$d/patched.log" "[  300.100000] watchdog: BUG: soft lockup - CPU#0 stuck for 23s! [migration/0:16]")
judge && json 'assert j["problems"] == [] and j["xl_soft_lockups"] == 2, j'
pg_result $? "a soft lockup outside xl is no problem (harness/problems.py), nor counted as xl's"

# The series' rule: patched issues at most one p2m TLB flush per unmap
# batch and no more IOTLB invalidations per grant than base.
fresh
runs "$d/patched.log" domU-dom0 4 'c["pg_p2m_tlb_flush"] = 2 * c["pg_gnt_flush"]'
fails && says "  the series' rule ($HELD): NOT held" &&
    says "  FAIL: VT-d domU to dom0, 4 streams: the series' rule NOT held: patched 2.00 p2m TLB flushes per unmap batch (at most 1)" &&
    json 'assert j["domU_dom0_flush_bound"]["held"] is False and j["problems"] == [], j
assert j["failures"] == ["VT-d domU to dom0, 4 streams: the series\x27 rule NOT held: patched 2.00 p2m TLB flushes per unmap batch (at most 1)"], j["failures"]'
pg_result $? "patched with 2 p2m flushes per unmap batch fails, machine and row named"
fresh
runs "$d/patched.log" domU-dom0 1 'c["pg_iotlb_page"] = 2 * c["pg_gnt_unmap"]'
fails amd-vi && json 'assert j["failures"] == ["AMD-Vi domU to dom0, 1 stream: the series\x27 rule NOT held: patched 2.00 IOTLB invalidations per grant, base 1.00"], j["failures"]'
pg_result $? "patched with more IOTLB invalidations per grant than base fails, machine and row named"
# Without the grant counters the rule is judged per MB.
fresh
sed -i 's/ pg_gnt_flush=[0-9]* pg_gnt_unmap=[0-9]*//' "$d/base.log" "$d/patched.log"
judge && json 'assert j["domU_dom0_flush_bound"]["per"] == "MB" and j["failures"] == [], j'
pg_result $? "the fixtures without the grant counters pass, judged per MB"
runs "$d/patched.log" domU-dom0 1 'c["pg_p2m_tlb_flush"] = 100000'
fails && json 'f = j["failures"]
assert len(f) == 1 and "VT-d domU to dom0, 1 stream: the series\x27 rule NOT held: patched " in f[0] and " flushes per MB, base " in f[0], f'
pg_result $? "patched with more flushes per MB than base fails (without the grant counters)"
fresh
runs "$d/patched.log" domU-dom0 1 'del c["pg_iotlb_page"]'
fails && json 'assert any("has no pg_iotlb_page" in p for p in j["problems"]), j
assert j["failures"] == ["VT-d domU to dom0: the series\x27 rule NOT held: a run without a flush counter (see the problems)"], j["failures"]'
pg_result $? "a run without a flush counter fails: the rule cannot be judged"

# No run read: no row, nothing judged.
fresh
sed -i '/^NB-RUN /d' "$d/base.log" "$d/patched.log"
fails && json 'assert j["rows"] == [], j'
pg_result $? "logs without a run fail"
fresh
sed -i '/^NB-RUN .* dir=domU-dom0 /d' "$d/base.log" "$d/patched.log"
fails && says "  FAIL: VT-d domU to dom0: the series' rule NOT held: no run of this direction"
pg_result $? "logs without a domU to dom0 run fail: the rule is not judged"
fresh
sed -i '/^NB-DONE/d' "$d/patched.log"
fails && json 'assert any("did not finish" in p for p in j["problems"]), j'
pg_result $? "a boot without NB-DONE fails"

pg_tally
