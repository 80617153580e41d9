#!/bin/bash
# harness/record.py, the run's record, and the scripts around it: a
# stage whose command exits 0 on failed checks it does not enforce is
# recorded as failed; the torture's problems, the rounds and the
# environment are kept; `make check` refuses a variable that changes
# what it runs, or one of the proving ground's it does not know; the
# torture names its tree; a record holds no path of the checkout; a bench record
# keeps each machine's rows and batches, and cover-table.py prints them
# with each machine's verdict on the series' rule.  Could wrongly pass
# if the crafted JSONs stopped matching what report.py and
# torture-report.py write.
set -uo pipefail
# Pipes into grep read the writer's whole output (no -q): grep -q closes
# the pipe at its first match, and the writer may then die of EPIPE.
. "$(dirname "$0")/../../harness/lib.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
H=$PG_ROOT/harness
# Nothing of the caller's environment that record.py keeps.
for v in $(cd "$H" && python3 -c 'import record; print(*record.ENV_RUN, *record.ENV_NOTED)'); do
    unset "$v"
done
rec() { python3 "$H/record.py" --what "make check" --out "$t/rec.json" "$@" > "$t/said"; }
js() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$t/rec.json" "$1"; }

# 1. make's stage verdict (recorded.sh): run.sh exits 0 on failed checks
# it does not enforce; the record says they failed.
mkdir -p "$t/out"
echo '{"tree": {"base": "staging"}, "runs": [], "failures": ["vt-d density control: NOT caught"], "problems": []}' > "$t/out/report.json"
rec --judge --stage run=ok "$t/out/report.json" && js 'r["stages"] == {"run": "failed (not enforced)"}'
pg_result $? "record.py --judge: a stage ok beside a failure is recorded as failed (not enforced)"
echo '{"tree": {"base": "staging"}, "runs": [], "failures": [], "problems": ["x.log: Xen WARN"]}' > "$t/out/report.json"
rec --judge --stage run=ok "$t/out/report.json" && js 'r["stages"] == {"run": "failed (not enforced)"}'
pg_result $? "record.py --judge: a problem too"
echo '{"base": "staging", "runs": [], "problems": [], "ok": false}' > "$t/out/torture.json"
echo '{"tree": {"base": "staging"}, "builds": {"prefixes": "ok", "configs": "failed"}}' > "$t/out/configs.json"
for j in torture configs; do
    rec --judge --stage $j=ok "$t/out/$j.json" && js 'r["stages"] == {"'$j'": "failed (not enforced)"}'
    pg_result $? "record.py --judge: a $j output that failed"
done
echo '{"tree": {"base": "staging"}, "runs": [], "failures": [], "problems": []}' > "$t/out/report.json"
rec --judge --stage run=ok "$t/out/report.json" && js 'r["stages"] == {"run": "ok"}'
pg_result $? "record.py --judge: a clean output leaves ok"
echo '{"tree": {"base": "staging"}, "runs": [], "failures": ["f"], "problems": []}' > "$t/out/report.json"
rec --stage "unit=ok" "$t/out/report.json" && js 'r["stages"] == {"unit": "ok"}'
pg_result $? "record.py without --judge keeps the stages as given (check.sh's)"
mkdir -p "$t/rd/harness"
cp "$H"/{recorded.sh,lib.sh,record.py} "$t/rd/harness/"
PG_OUT=$t/rd/out "$t/rd/harness/recorded.sh" run report.json -- bash -c \
    'mkdir -p "$1" && echo "{\"runs\": [], \"failures\": [\"f\"]}" > "$1/report.json"' _ "$t/rd/out" > /dev/null &&
    python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["stages"] != {"run": "failed (not enforced)"})' "$t/rd/out/record-run.json"
pg_result $? "recorded.sh: a command exiting 0 on failed checks is recorded as failed (not enforced)"
rm -rf "$t/out"

# 2. What the stages' JSONs say beyond counts: torture's problems, the
# cases each build was given and why one failed; the rounds, density
# control and base's S-bit count of make's boots.
mkdir -p "$t/out"
cat > "$t/out/report.json" <<'JSON'
{"tree": {"base": "stable-4.17", "describe": "d", "xen_version": "4.17.5"},
 "runs": [], "dma_after_unmap": {}, "oracle": {},
 "problems": [], "failures": [], "rounds": {"base": ["1", "32k512"]},
 "density_control": {"vt-d": "broke the bound"}, "oracle_base_sbit": 7}
JSON
cat > "$t/out/torture.json" <<'JSON'
{"base": "stable-4.17", "tree": {"base": "stable-4.17"}, "ok": false,
 "problems": ["vt-d patched: no negative control booted"],
 "runs": [{"build": "patched", "variant": "patched", "iommu": "vt-d",
           "role": "build", "ok": false, "requested": ["c31", "p256"],
           "problems": ["no PG-T-END: the run did not finish"],
           "cases": [{"case": "c31", "pages": 31, "pass": true}]},
          {"build": "base", "variant": "base", "iommu": "vt-d",
           "role": "build", "ok": true, "requested": ["c31"],
           "problems": ["ignored"], "cases": []}]}
JSON
rec "$t/out/report.json" "$t/out/torture.json"
js 'r["torture"]["problems"] == ["vt-d patched: no negative control booted"]'
pg_result $? "record.py keeps the torture's problems"
js 'r["torture"]["builds"][0]["requested"] == ["c31", "p256"] and
    r["torture"]["builds"][0]["problems"] == ["no PG-T-END: the run did not finish"] and
    "problems" not in r["torture"]["builds"][1]'
pg_result $? "record.py keeps each torture build's cases, and why a failed one failed"
js 'r["boots"]["rounds"] == {"base": ["1", "32k512"]} and r["boots"]["oracle_base_sbit"] == 7
    and r["boots"]["density_control"] == {"vt-d": "broke the bound"}'
pg_result $? "record.py keeps make's rounds, density control and base's S-bit reports"
python3 "$H/record-summary.py" "$t/rec.json" |
    grep '^  torture problem: vt-d patched: no negative control booted$' >/dev/null
pg_result $? "record-summary.py prints the torture's problems"

# 3. The environment: recorded and printed; make check refuses what
# changes what it runs.
PG_JOBS=1 TORTURE_CASES=c33 rec "$t/out/report.json" &&
    js 'r["env"] == {"PG_JOBS": "1", "TORTURE_CASES": "c33"}' &&
    grep -qx 'environment: PG_JOBS=1 TORTURE_CASES=c33' "$t/said"
pg_result $? "record.py records and prints the environment set"
rec "$t/out/report.json" && js 'r["env"] == {}' &&
    grep -qx 'environment: the defaults' "$t/said"
pg_result $? "record.py says when the environment is the defaults"
PG_JOBS=1 PG_VERBOSE=1 PG_CACHE=/c PG_OUT=/o PG_BUILD=/b python3 "$H/record.py" --defaults
pg_result $? "record.py --defaults lets PG_JOBS, PG_VERBOSE and the folders by"
PG_CACHE=/c PG_OUT=/o PG_BUILD=/b rec "$t/out/report.json" && js 'r["env"] == {}'
pg_result $? "record.py keeps no folder of the machine"
for v in TORTURE_CASES KEPT_ROUNDS PG_IOMMUS PG_TEST_EXTRA TORTURE_DOM0 PG_SOMETHING_NEW FAULT_PATCHES EPT_ROUNDS; do
    ! env "$v=" python3 "$H/record.py" --defaults 2> "$t/err" &&
        grep -q "^error: $v is set" "$t/err"
    pg_result $? "record.py --defaults fails $v, naming it"
done
# check.sh, in a copy whose setup-host.sh says it ran: it refuses at
# once, before anything runs.
mkdir -p "$t/c/harness"
cp "$H"/{check.sh,lib.sh,record.py} "$t/c/harness/"
cp -r "$H/machines" "$t/c/harness/"
printf '#!/bin/sh\ntouch "%s/setup"\nexit 1\n' "$t/c" > "$t/c/harness/setup-host.sh"
chmod +x "$t/c/harness/"*.sh
! TORTURE_VARIANTS=patched "$t/c/harness/check.sh" 2> "$t/err" &&
    grep -q '^error: TORTURE_VARIANTS is set' "$t/err" && [ ! -e "$t/c/setup" ]
pg_result $? "check.sh fails at once when a variable changes what it runs"
PG_JOBS=1 "$t/c/harness/check.sh" 2>/dev/null; [ -e "$t/c/setup" ]
pg_result $? "check.sh runs with PG_JOBS set"

# 4. The torture's JSON names its tree, and the record takes it.
printf '[ 1.0] PG-T case=c33 n=33 rc=0 want=0 pages=33 dma_pages=2 stale_dma=0 stale_cpu=0 stale_race=0 bad=0 result=pass\n[ 2.0] PG-T-END pages=33 dma_pages=2 stale_dma=0 stale_cpu=0 failed=0 dma=2 vcpus=2 leaked=0\n' > "$t/t.log"
python3 "$H/torture-report.py" --base stable-4.17 --describe debian-src-x \
    --xen-version 4.17.5 --json "$t/out/torture.json" "patched=$t/t.log" >/dev/null
rm -f "$t/out/report.json"
rec "$t/out/report.json" "$t/out/torture.json" &&
    js 'r["tree"] == {"base": "stable-4.17", "describe": "debian-src-x", "xen_version": "4.17.5"}'
pg_result $? "the torture's record names its tree"

# 6. make bench's record: each machine's report and batches by machine
# (netback-M.json, netback-M-policies.json); cover-table.py prints its
# rows, its rule's verdict as report.py judged it, the batches replayed,
# and the problems found.
row='{"direction": "domU-dom0", "streams": 1'
for v in base patched; do
    g=18; inv=18; [ $v = patched ] && inv=1
    row="$row, \"${v}_grants_per_batch\": $g, \"${v}_iotlb_inv_per_batch\": $inv, \"${v}_p2m_per_batch\": $inv, \"${v}_ipi_per_batch\": 0, \"${v}_iotlb_per_grant\": $inv / $g, \"${v}_p2m_per_grant\": $inv / $g, \"${v}_ipi_per_grant\": 0, \"${v}_iotlb_pages_per_page\": 1"
done
python3 - "$t/out" "$row}" <<'PY'
import json, sys
row = eval(sys.argv[2])
tree = {"base": "staging", "describe": "d", "xen_version": "4.23"}
for m, held in (("vt-d-1cpu", True), ("amd-vi-2cpu", False)):
    json.dump({"iommu": m[:-5], "rows": [row], "runs_per_row": 2, "tree": tree,
               "domU_dom0_flush_bound": {"held": held},
               "problems": [] if held else ["x.log:9: Xen assertion: ..."]},
              open(f"{sys.argv[1]}/netback-{m}.json", "w"))
    json.dump({"policies": [], "batches": {"base-1, 1 streams": ["100,1", "300"]}},
              open(f"{sys.argv[1]}/netback-{m}-policies.json", "w"))
PY
# A machine whose report is missing (its boots failed): its verdict is
# "no report".
cp "$t/out/netback-vt-d-1cpu-policies.json" "$t/out/netback-vt-d-2cpu-policies.json"
python3 "$H/record.py" --what "make bench" --out "$t/b.json" \
    "$t"/out/netback-*.json "$t/out/netback-vt-d-2cpu.json" >/dev/null &&
    python3 "$H/cover-table.py" "$t/b.json" > "$t/b.txt" &&
    grep -qx '  VT-d, dom0 with 2 vCPUs: no report (its boots failed)' "$t/b.txt" &&
    rm "$t/out/netback-vt-d-2cpu-policies.json" &&
    python3 "$H/record.py" --what "make bench" --out "$t/b.json" "$t"/out/netback-*.json >/dev/null &&
    python3 "$H/cover-table.py" "$t/b.json" > "$t/b.txt" &&
    grep -qx '  VT-d, dom0 with 1 vCPU: held; runs per row and build: 2' "$t/b.txt" &&
    grep -qx '  AMD-Vi, dom0 with 2 vCPUs: NOT held; runs per row and build: 2' "$t/b.txt" &&
    grep -qx '        1 base     18.0  18.00 18.00  0.00  1.00  1.00  0.00   1.0' "$t/b.txt" &&
    grep -qx '          patched  18.0   1.00  1.00  0.00  0.06  0.06  0.00   1.0' "$t/b.txt" &&
    [ "$(grep -c '^    base-1, 1 str  *1.50 (1.0)  *1.00 (1.0)  ' "$t/b.txt")" = 2 ] &&
    grep -qx '  flushes, IOMMU faults, oracle reports): 1' "$t/b.txt"
pg_result $? "a bench record keeps each machine's rows, verdict and batches; cover-table.py prints them"

# 7. No path of this machine in a record: the logs' under the checkout
# are written relative to it.
echo "{\"runs\": [], \"problems\": [\"$PG_ROOT/out/amd-vi/x.log: no PG-DONE\"]}" \
    > "$t/out/report.json"
rec "$t/out/report.json" && js 'r["boots"]["problems"] == ["out/amd-vi/x.log: no PG-DONE"]' &&
    ! grep -qF "$PG_ROOT/" "$t/rec.json"
pg_result $? "a record names a log under the checkout relative to it"

pg_tally
