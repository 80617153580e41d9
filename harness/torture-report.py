#!/usr/bin/env python3
"""Read the console logs of torture boots (harness/torture.sh), print a
table of the cases per build and write out/torture.json.

Each log is VARIANT=PATH.  base and patched must pass every case (the
expected return code, 0 stale DMA reads, 0 stale CPU reads, no error),
print PG-T-END and show no Xen assertion, panic, dom0 oops or report of
the release-order oracle ("pg-oracle: ...", from the test-only patches:
a grant released before its flushes).  A neg-* build is a deliberately
broken hypervisor: it is caught when at least one case fails on it, the
oracle reports a release during a case, or a Xen assertion fires; the
report names the cases and the detector.
With --check, a base/patched failure or an uncaught negative control is a
non-zero exit.
"""
import argparse
import json
import re
import sys

import bootlog
from report import ORACLE, PROBLEM_PATTERNS

CASE = re.compile(r"PG-T case=(\S+) n=(\d+) rc=(-?\d+) want=(-?\d+) "
                  r"pages=(\d+) dma_pages=(\d+) stale_dma=(\d+) "
                  r"stale_cpu=(\d+) "
                  r"stale_race=(\d+) bad=(\d+) result=(\w+)")
END = re.compile(r"PG-T-END pages=(\d+) dma_pages=(\d+) stale_dma=(\d+) "
                 r"stale_cpu=(\d+) failed=(\d+) dma=(\d+) vcpus=(\d+) "
                 r"leaked=(\d+)")
NOTE = re.compile(r"PG-T (note|stale-\w+|error|leak) (.*)$")

# Mutations no guest-driven case can reach, with the reason; reported as
# not caught, not counted as a failure of the detectors.
UNREACHABLE = {
    "neg-ptp-free": "no grant unmap frees a p2m page table: "
    "replace_grant_p2m_mapping() clears one 4K entry, and p2m_free_ptp() "
    "runs inside a batch only when splitting a superpage fails for lack of "
    "memory, on a table never linked into the p2m",
}

# Mutations whose wrong ordering only shows when two vCPUs' batches
# interleave, which no case can force: the oracle (or, rarely, the race
# detector) sees it when they do.  A miss is reported, not a failure.
PROBABILISTIC = {
    "neg-domain-state": "needs two vCPUs' batches to overlap, one ending "
    "while the other is open",
}


def parse(variant, path):
    run = {"variant": variant, "log": path, "cases": [], "end": None,
           "problems": [], "notes": [], "oracle_outside_cases": 0}
    oracle = []     # oracle reports since the last case line
    try:
        log = bootlog.BootLog(path)
    except OSError as e:
        run["problems"].append("no log: %s" % e)
        return run
    for lineno, line in log:
        m = CASE.search(line)
        if not m and "PG-T case=" in line or \
                not END.search(line) and "PG-T-END" in line:
            log.problem(lineno, line, "a PG-T line that does not parse")
            continue
        if m:
            g = m.groups()
            run["cases"].append({
                "case": g[0], "n": int(g[1]), "rc": int(g[2]),
                "want": int(g[3]), "pages": int(g[4]),
                "dma_pages": int(g[5]), "stale_dma": int(g[6]),
                "stale_cpu": int(g[7]), "stale_race": int(g[8]),
                "bad": int(g[9]), "pass": g[10] == "pass",
                "oracle": len(oracle)})
            if oracle:
                run["notes"].append("oracle during %s: %s" % (g[0], oracle[0]))
            oracle = []
            continue
        m = END.search(line)
        if m:
            p, dp, sd, sc, f, dma, vcpus, leak = map(int, m.groups())
            run["end"] = {"pages": p, "dma_pages": dp, "stale_dma": sd,
                          "stale_cpu": sc, "failed": f, "dma_per_32": dma,
                          "vcpus": vcpus, "leaked_granter_pages": leak}
            continue
        m = NOTE.search(line)
        if m:
            run["notes"].append(m.group(0))
        m = ORACLE.search(line)
        if m:
            oracle.append(m.group(1).strip()[:200])
            continue
        for pat, what in PROBLEM_PATTERNS:
            if pat.search(line) and not line.startswith("PG-T"):
                run["problems"].append("%s: %s" % (what, line.strip()[:160]))
    run["problems"] += log.problems
    run["oracle_outside_cases"] = len(oracle)
    if oracle:
        run["notes"].append("oracle after the last case: %s" % oracle[0])
    if run["end"] is None:
        run["problems"].append("no PG-T-END: the run did not finish")
    return run


def verdict(run):
    failed = [c["case"] for c in run["cases"] if not c["pass"]]
    oracle = [c["case"] + " (oracle)" for c in run["cases"] if c["oracle"]]
    asserts = [p for p in run["problems"] if p.startswith("Xen assertion")]
    if run["variant"].startswith("neg-"):
        run["caught_by"] = failed + oracle + \
            (["oracle, after the last case"] if run["oracle_outside_cases"]
             else []) + (["Xen assertion"] if asserts else [])
        run["ok"] = bool(run["caught_by"])
        if not run["ok"] and run["variant"] in UNREACHABLE:
            run["unreachable"] = UNREACHABLE[run["variant"]]
            run["ok"] = True
        elif not run["ok"] and run["variant"] in PROBABILISTIC:
            run["missed"] = PROBABILISTIC[run["variant"]]
            run["ok"] = True
    else:
        if oracle or run["oracle_outside_cases"]:
            run["problems"].append("the release-order oracle reported "
                                   "releases before their flushes: %s" %
                                   ", ".join(oracle or ["after the last case"]))
        run["ok"] = not failed and not run["problems"] and bool(run["cases"])
    return run["ok"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--base", default="")
    ap.add_argument("logs", nargs="+", help="VARIANT=LOG")
    a = ap.parse_args()

    runs = []
    for spec in a.logs:
        variant, _, path = spec.partition("=")
        runs.append(parse(variant, path))
    ok = all([verdict(r) for r in runs])

    print("%-22s %-8s %6s %5s %5s %4s %9s %9s %10s %6s  %s" % (
        "build", "case", "pages", "rc", "want", "dma", "stale_dma",
        "stale_cpu", "stale_race", "oracle", "result"))
    for r in runs:
        for c in r["cases"]:
            print("%-22s %-8s %6d %5d %5d %4d %9d %9d %10d %6d  %s" % (
                r["variant"], c["case"], c["pages"], c["rc"], c["want"],
                c["dma_pages"], c["stale_dma"], c["stale_cpu"],
                c["stale_race"], c["oracle"],
                "pass" if c["pass"] else "FAIL"))
        for p in r["problems"][:5]:
            print("%-22s problem: %s" % (r["variant"], p))
    print()
    for r in runs:
        pages = sum(c["pages"] for c in r["cases"])
        if r["variant"].startswith("neg-") and r.get("missed"):
            print("%-22s negative control not caught in this run (%s)" % (
                r["variant"], r["missed"]))
        elif r["variant"].startswith("neg-") and r.get("unreachable"):
            print("%-22s negative control not caught, as expected: %s" % (
                r["variant"], r["unreachable"]))
        elif r["variant"].startswith("neg-"):
            print("%-22s negative control %s%s" % (
                r["variant"], "caught by " if r["ok"] else "NOT CAUGHT",
                ", ".join(r["caught_by"])))
        else:
            print("%-22s %s: %d cases, %d pages unmapped and checked" % (
                r["variant"], "pass" if r["ok"] else "FAIL",
                len(r["cases"]), pages))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"base": a.base, "runs": runs,
                       "ok": ok}, f, indent=1)
    if a.check and not ok:
        print("torture: FAILED", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
