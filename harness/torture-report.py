#!/usr/bin/env python3
"""Read the console logs of torture boots (harness/torture.sh), print a
table of the cases per build and write out/torture.json.

Each log is [IOMMU:]VARIANT=PATH, IOMMU the machine (harness/machines):
vt-d (the default), amd-vi, vt-d-ats and amd-vi-ats (with an ATS device)
or none (no IOMMU, no DMA detector).  base and patched must pass every case (the
expected return code, 0 stale DMA reads, 0 stale CPU reads, no error),
print PG-T-END and show no Xen assertion, panic, dom0 oops or report of
the release-order oracle ("pg-oracle: ...", from the test-only patches:
a grant released before its flushes).  A neg-* build is a deliberately
broken hypervisor: it is caught when at least one case fails on it, the
oracle reports a release during a case, or a Xen assertion fires; the
report names the cases and the detector.  The controls in MUST_CATCH
must be caught by the oracle in every case that exercises what they break.

The oracle logs its totals ("pg-oracle-stats: ...") before the first case
and before each case's result line; a case's counts are the difference.
Among them: the guest TLB flushes issued inside unmap hypercalls, by the
number of CPUs the domain was dirty on at the time (dirty1 .. dirty4, the
last for 4 or more).  base and patched must have at least one case with a
flush while the domain was dirty on 2 or more CPUs: without one, a flush
that misses a CPU cannot be seen.
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
STATS = re.compile(r"pg-oracle-stats: (.*)$")
STAT_KEYS = ("releases", "frees", "bad_tlb", "bad_iotlb", "bad_free",
             "unmap_flushes", "narrow", "dirty1", "dirty2", "dirty3", "dirty4")
# Totals of the later oracle patches, 0 where a log lacks them:
# device-IOTLB invalidations inside IOTLB flushes (all, of more than one
# page, sent for a range of more than one page), flushes that missed one
# of the domain's ATS devices, IOMMU page tables unlinked inside unmaps,
# and reports of a table left unflushed past the p2m lock or at an IOMMU
# mapping.
LATER_KEYS = ("dev_invs", "dev_multi", "dev_wide", "dev_short", "pt_queued",
              "bad_stale")
MACHINES = ("vt-d", "amd-vi", "vt-d-ats", "amd-vi-ats", "none")


def multi_cpu(s):
    return s["dirty2"] + s["dirty3"] + s["dirty4"]


# Controls the oracle must catch in every case that exercises what they
# break (deterministically), with what a case must have to exercise it.
MUST_CATCH = {
    "neg-tlb-self": ("a flush with the domain dirty on 2+ CPUs",
                     lambda s: multi_cpu(s) > 0),
    "neg-tlb-p2m-mask": ("a flush inside an unmap",
                         lambda s: s["unmap_flushes"] > 0),
    "neg-iotlb-narrow": ("a release", lambda s: s["releases"] > 0),
    "neg-ptp-free": ("a release", lambda s: s["releases"] > 0),
    # Booted without an IOMMU only (torture.sh), where no batch gathers an
    # IOTLB flush: every batch's TLB flush is skipped.
    "neg-tlb-needs-iotlb": ("a release", lambda s: s["releases"] > 0),
    # Booted with ATS only: a device-IOTLB invalidation of 2^k pages covers
    # 2^(k-1).
    "neg-devtlb-narrow": ("a multi-page device-IOTLB invalidation",
                          lambda s: s["dev_multi"] > 0),
    # AMD-Vi with ATS only: INVALIDATE_IOTLB_PAGES goes out with S clear,
    # one page, whatever range it was sent for.
    "neg-amd-sbit": ("a device-IOTLB invalidation for more than one page",
                     lambda s: s["dev_wide"] > 0),
    "neg-pt-flush-late": ("an IOMMU page table unlinked inside an unmap",
                          lambda s: s["pt_queued"] > 0),
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
           "problems": [], "notes": [], "oracle_outside_cases": 0,
           "oracle_stats": False}
    oracle = []     # oracle reports since the last case line
    stats = prev = None     # the oracle's latest totals, and at the last case
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
            delta = None
            if stats is not None and prev is not None:
                delta = {k: stats[k] - prev[k] for k in STAT_KEYS + LATER_KEYS}
            prev = stats
            run["cases"].append({
                "case": g[0], "n": int(g[1]), "rc": int(g[2]),
                "want": int(g[3]), "pages": int(g[4]),
                "dma_pages": int(g[5]), "stale_dma": int(g[6]),
                "stale_cpu": int(g[7]), "stale_race": int(g[8]),
                "bad": int(g[9]), "pass": g[10] == "pass",
                "oracle": (delta["bad_tlb"] + delta["bad_iotlb"] +
                           delta["bad_free"] + delta["bad_stale"])
                if delta else len(oracle),
                "oracle_lines": len(oracle),
                "oracle_counts": delta})
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
        m = STATS.search(line)
        if m:
            kv = log.fields(lineno, m.group(1), need=STAT_KEYS)
            if kv is not None:
                for k in LATER_KEYS:
                    kv.setdefault(k, 0)
                stats = kv
                if prev is None:
                    prev = kv       # the totals before the first case
            continue
        m = ORACLE.search(line)
        if m:
            oracle.append(m.group(1).strip()[:200])
            continue
        for pat, what in PROBLEM_PATTERNS:
            if pat.search(line) and not line.startswith("PG-T"):
                run["problems"].append("%s: %s" % (what, line.strip()[:160]))
    run["problems"] += log.problems
    run["oracle_outside_cases"] = len(oracle)
    run["oracle_stats"] = any(c["oracle_counts"] for c in run["cases"])
    if oracle:
        run["notes"].append("oracle after the last case: %s" % oracle[0])
    if run["end"] is None:
        run["problems"].append("no PG-T-END: the run did not finish")
    return run


def verdict(run):
    failed = [c["case"] for c in run["cases"] if not c["pass"]]
    oracle = [c["case"] + " (oracle)" for c in run["cases"]
              if c["oracle"] or c["oracle_lines"]]
    asserts = [p for p in run["problems"] if p.startswith("Xen assertion")]
    must = MUST_CATCH.get(run["variant"].split("-4vcpu")[0])
    if (must or not run["variant"].startswith("neg-")) and \
            not run["oracle_stats"]:
        run["problems"].append("no pg-oracle-stats: the oracle's counts "
                               "per case are unknown")
    if run["variant"].startswith("neg-"):
        run["caught_by"] = failed + oracle + \
            (["oracle, after the last case"] if run["oracle_outside_cases"]
             else []) + (["Xen assertion"] if asserts else [])
        run["ok"] = bool(run["caught_by"])
        if must:
            what, exercised = must
            cases = [c for c in run["cases"]
                     if c["oracle_counts"] and exercised(c["oracle_counts"])]
            run["must_catch"] = what
            run["missed_cases"] = [c["case"] for c in cases if not c["oracle"]]
            run["ok"] = bool(cases) and not run["missed_cases"]
            if not cases:
                run["problems"].append("no case had %s: the control was "
                                       "not exercised" % what)
        elif not run["ok"] and run["variant"] in PROBABILISTIC:
            run["missed"] = PROBABILISTIC[run["variant"]]
            run["ok"] = True
    else:
        if oracle or run["oracle_outside_cases"]:
            run["problems"].append("the release-order oracle reported "
                                   "releases before their flushes: %s" %
                                   ", ".join(oracle or ["after the last case"]))
        if run["oracle_stats"] and not any(
                c["oracle_counts"] and multi_cpu(c["oracle_counts"])
                for c in run["cases"]):
            run["problems"].append("no case flushed while the domain was "
                                   "dirty on 2 or more CPUs: a flush missing "
                                   "a CPU could not be seen")
        if run.get("iommu", "").endswith("-ats") and run["oracle_stats"]:
            counts = [c["oracle_counts"] for c in run["cases"]
                      if c["oracle_counts"]]
            if not any(s["dev_invs"] for s in counts):
                run["problems"].append("no device-IOTLB invalidation inside "
                                       "an IOTLB flush: ATS not exercised")
            if any(s["dev_short"] for s in counts):
                run["problems"].append("an IOTLB flush missed one of the "
                                       "domain's ATS devices")
            if any(s["dev_wide"] > s["dev_multi"] for s in counts):
                run["problems"].append("a device-IOTLB invalidation sent "
                                       "for more than one page encodes one")
        run["ok"] = not failed and not run["problems"] and bool(run["cases"])
    return run["ok"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--base", default="")
    ap.add_argument("logs", nargs="+", help="[IOMMU:]VARIANT=LOG")
    a = ap.parse_args()

    runs = []
    for spec in a.logs:
        variant, _, path = spec.partition("=")
        iommu, _, variant = variant.rpartition(":")
        if iommu not in ("",) + MACHINES or not path:
            ap.error("%s: not [IOMMU:]VARIANT=LOG (IOMMU one of %s)" %
                     (spec, ", ".join(MACHINES)))
        run = parse(variant, path)
        run["iommu"] = iommu or "vt-d"
        run["build"] = variant + ("" if run["iommu"] == "vt-d"
                                  else "/" + run["iommu"])
        runs.append(run)
    ok = all([verdict(r) for r in runs])

    # flushes: guest TLB flushes inside unmap hypercalls, and (dirty) how
    # many of them found the domain dirty on 1/2/3/4+ CPUs.
    print("%-28s %-8s %6s %5s %5s %4s %9s %9s %10s %6s %7s %-15s  %s" % (
        "build", "case", "pages", "rc", "want", "dma", "stale_dma",
        "stale_cpu", "stale_race", "oracle", "flushes", "dirty 1/2/3/4+",
        "result"))
    for r in runs:
        for c in r["cases"]:
            s = c["oracle_counts"]
            print("%-28s %-8s %6d %5d %5d %4d %9d %9d %10d %6d %7s %-15s  %s" % (
                r["build"], c["case"], c["pages"], c["rc"], c["want"],
                c["dma_pages"], c["stale_dma"], c["stale_cpu"],
                c["stale_race"], c["oracle"],
                s["unmap_flushes"] if s else "-",
                "/".join(str(s["dirty%d" % i]) for i in range(1, 5))
                if s else "-", "pass" if c["pass"] else "FAIL"))
        for p in r["problems"][:5]:
            print("%-28s problem: %s" % (r["build"], p))
    print()
    for r in runs:
        pages = sum(c["pages"] for c in r["cases"])
        if r["variant"].startswith("neg-") and r.get("missed"):
            print("%-28s negative control not caught in this run (%s)" % (
                r["build"], r["missed"]))
        elif r["variant"].startswith("neg-") and "must_catch" in r:
            print("%-28s negative control %s by the oracle in %s; "
                  "required in every case with %s%s" % (
                      r["build"], "caught" if r["ok"] else "NOT CAUGHT",
                      ", ".join(c["case"] for c in r["cases"] if c["oracle"])
                      or "no case", r["must_catch"],
                      (", missed: " + ", ".join(r["missed_cases"]))
                      if r["missed_cases"] else ""))
        elif r["variant"].startswith("neg-"):
            print("%-28s negative control %s%s" % (
                r["build"], "caught by " if r["ok"] else "NOT CAUGHT",
                ", ".join(r["caught_by"])))
        else:
            print("%-28s %s: %d cases, %d pages unmapped and checked%s" % (
                r["build"], "pass" if r["ok"] else "FAIL",
                len(r["cases"]), pages,
                " (no IOMMU: by CPU and the oracle, DMA detector off)"
                if r["iommu"] == "none" else ""))
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
