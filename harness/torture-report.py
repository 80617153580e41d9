#!/usr/bin/env python3
"""Read the console logs of torture boots (harness/torture.sh), print a
table of the cases per build and write out/torture.json (its "tree" as
--base, --describe and --xen-version name it).

Each log is [IOMMU:]VARIANT=PATH, IOMMU the machine (harness/machines):
vt-d (the default), amd-vi, vt-d-ats and amd-vi-ats (with an ATS device)
or none (no IOMMU, no DMA detector); a VARIANT ending in -4vcpu was
booted with 4 vCPUs, any other with 2.  --cases [IOMMU:]VARIANT=CASES
gives the cases the boot was asked to run ('.' between them, as gntt.c
takes them).

Every build, controls included, must have run: PG-T-END, with the
vCPUs it was booted with, one case line for each case requested, in
their order, a failed= total equal to the case lines that failed (a
case the module rejected, "PG-T error: bad case", counts there and has
no line), and the oracle's totals with every key before each case.

base and patched must pass every case (the expected return code, 0
stale DMA reads, 0 stale CPU reads, no error), and show no Xen
assertion, panic, dom0 oops or report of the release-order oracle
("pg-oracle: ...", from the test-only patches: a grant released before
its flushes).  A neg-* build is a deliberately broken hypervisor: a
control, caught only by the detectors CONTROLS names for it, in the
cases it names (a case failing on anything else, an assertion, or an
oracle report in another case is no catch); or a probe, whose result is
reported but is not required, because nothing forces what it needs.

The oracle logs its totals ("pg-oracle-stats: ...") before the first case
and before each case's result line; a case's counts are the difference.
Among them: the guest TLB flushes issued inside unmap hypercalls, by the
number of CPUs the domain was dirty on at the time (dirty1 .. dirty4, the
last for 4 or more).  base and patched must have at least one case with a
flush while the domain was dirty on 2 or more CPUs: without one, a flush
that misses a CPU cannot be seen.

Every machine on which patched booted (the --cases given, i.e. the
IOMMU:VARIANT pairs) must have booted a negative control too: a neg-*
build that is a control (not a probe) or negative.  Without one, nothing
shows that the detectors could have seen a broken hypervisor there
(torture.sh's pick() leaves out a control whose test-patches/neg-*/<base>/
is absent); the machine is named in the JSON's "problems".

patched's and neg-density-drop's kN cases must each be preceded by
their placement ("PG-T kept case=kN wanted=W placed=P"), every one of
the N / 2 2M regions per vCPU placed as designed: a catch in a kN whose
frames lay elsewhere would not be kN's.
With --check, a base/patched failure, an uncaught control, or a machine
with patched and no negative control is a non-zero exit.
"""
import argparse
import collections
import json
import re
import sys

import bootlog
from problems import END, PROBLEM_PATTERNS, incomplete
from report import ORACLE

CASE = re.compile(r"PG-T case=(\S+) n=(\d+) rc=(-?\d+) want=(-?\d+) "
                  r"pages=(\d+) dma_pages=(\d+) stale_dma=(\d+) "
                  r"stale_cpu=(\d+) "
                  r"stale_race=(\d+) bad=(\d+) result=(\w+)")
NOTE = re.compile(r"PG-T (note|stale-\w+|error|leak) (.*)$")
# kN's placement, just before its case line: the 2M regions it wanted
# (N / 2 per vCPU) and those it placed as designed (two frames and a
# spacer, still mapped across the frames' unmap, in each).
KEPT = re.compile(r"PG-T kept case=(\S+) wanted=(\d+) placed=(\d+)")
STATS = re.compile(r"pg-oracle-stats: (.*)$")
# The oracle's totals.  build-xen.sh applies every patch of
# test-patches/instrument/<base>/ to base, patched and each neg-* build,
# on both bases, so every log of the torture prints every key: 0002 the
# first eleven; 0004 the device-IOTLB invalidations inside IOTLB flushes
# (all, of more than one page, sent for a range of more than one page)
# and the flushes that missed one of the domain's ATS devices; 0005 the
# IOMMU page tables unlinked inside unmaps and the reports of a table
# left unflushed past the p2m lock or at an IOMMU mapping.  A totals line
# without one of them is a problem, never a 0.
STAT_KEYS = ("releases", "frees", "bad_tlb", "bad_iotlb", "bad_free",
             "unmap_flushes", "narrow", "dirty1", "dirty2", "dirty3", "dirty4",
             "dev_invs", "dev_multi", "dev_wide", "dev_short", "pt_queued",
             "bad_stale")
MACHINES = ("vt-d", "amd-vi", "vt-d-ats", "amd-vi-ats", "none", "bochs-ept")


def multi_cpu(s):
    return s["dirty2"] + s["dirty3"] + s["dirty4"]


def vcpus(variant):
    """The vCPUs torture.sh boots VARIANT with."""
    return 4 if variant.endswith("-4vcpu") else 2


# The detectors of a case that can catch a control, each a count of its
# case line or of the oracle's totals for it (torture/README.md): the
# oracle's reports (bad_tlb + bad_iotlb + bad_free + bad_stale), stale
# DMA reads after the hypercall, and the racing granter's stale reads.
DETECTORS = {
    "oracle": lambda c: c["oracle"],
    "DMA": lambda c: c["stale_dma"],
    "race": lambda c: c["stale_race"],
}

# What catches each neg-* build; torture/README.md's table of the
# controls says the same.  role: "control" (--check requires the catch)
# or "probe" (the result is reported, a miss is no failure).  detectors:
# [(DETECTOR, CASES)], CASES case names as torture/README.md writes them,
# N or K standing for any number and "*" for every case: only DETECTOR
# seeing the mutation in one of CASES is a catch.
# every: None, caught when one of them saw it in one case; or (WHAT,
# EXERCISED): caught when they saw it in every one of CASES whose oracle
# counts EXERCISED accepts (WHAT says what that is), and there is one.
# seen: None, or (DETECTOR, CASES): and DETECTOR saw it in one of CASES
# too (a stale read observed, not only a release order inferred).
Control = collections.namedtuple("Control", "role detectors every seen",
                                 defaults=(None,))
ALL = "*"
RELEASE = ("a release", lambda s: s["releases"] > 0)
# Where two or more vCPUs unmap at once: sN (the one-entry batches begin
# and end inside the first vCPU's), dN, mN (the mappers unmap theirs at
# the end) and pN with 3 unmapping vCPUs when two batches happen to
# overlap; the granter racing the releases in pN.
DOMAIN_STATE = [("oracle", "sN dN mN pN"), ("race", "pN")]
CONTROLS = {
    "neg-efault-noflush": Control("control", [("DMA", "a20"),
                                              ("oracle", "aK")], None),
    # pN's granter reads the granted data after most releases here, but
    # only by chance of timing under QEMU: reported, not required.
    "neg-late-flush": Control("control", [("oracle", ALL)], RELEASE),
    # Nothing forces two vCPUs' batches to interleave, one ending while
    # the other's is open.  With 2 vCPUs only sN, dN and mN give them the
    # chance, and a run may well have none: a probe.  With 4, three
    # vCPUs unmap at once in each concurrent case: a control.
    "neg-domain-state": Control("probe", DOMAIN_STATE, None),
    "neg-domain-state-4vcpu": Control("control", DOMAIN_STATE, None),
    # The oracle's deterministic controls, each with what a case must
    # have to exercise what it breaks.
    "neg-tlb-self": Control("control", [("oracle", ALL)], (
        "a flush with the domain dirty on 2+ CPUs", lambda s: multi_cpu(s) > 0)),
    "neg-tlb-p2m-mask": Control("control", [("oracle", ALL)], (
        "a flush inside an unmap", lambda s: s["unmap_flushes"] > 0)),
    "neg-iotlb-narrow": Control("control", [("oracle", ALL)], RELEASE),
    "neg-ptp-free": Control("control", [("oracle", ALL)], RELEASE),
    # Booted without an IOMMU only (torture.sh), where no batch gathers an
    # IOTLB flush: every batch's TLB flush is skipped.
    "neg-tlb-needs-iotlb": Control("control", [("oracle", ALL)], RELEASE),
    # Booted with ATS only: a device-IOTLB invalidation of 2^k pages covers
    # 2^(k-1).
    "neg-devtlb-narrow": Control("control", [("oracle", ALL)], (
        "a multi-page device-IOTLB invalidation", lambda s: s["dev_multi"] > 0)),
    # AMD-Vi with ATS only: INVALIDATE_IOTLB_PAGES goes out with S clear,
    # one page, whatever range it was sent for.
    "neg-amd-sbit": Control("control", [("oracle", ALL)], (
        "a device-IOTLB invalidation for more than one page",
        lambda s: s["dev_wide"] > 0)),
    "neg-pt-flush-late": Control("control", [("oracle", ALL)], (
        "an IOMMU page table unlinked inside an unmap",
        lambda s: s["pt_queued"] > 0)),
    # The same flush issued just after put_gfn(): past the p2m lock, still
    # inside the unmap; reported at the lock's release.
    "neg-pt-flush-unlocked": Control("control", [("oracle", ALL)], (
        "an IOMMU page table unlinked inside an unmap",
        lambda s: s["pt_queued"] > 0)),
    # A gather the density rule rejects is dropped unflushed: only kN's
    # frames, two to a 2M region whose IOMMU page table stays linked,
    # take that path in every batch (placement() requires kN's PG-T kept
    # line to show them so); other cases (d256, m256) may by chance, and
    # are not counted.
    "neg-density-drop": Control("control", [("oracle", "kN")], RELEASE),
}
# Controls of the series' own debug checks, each caught only when Xen
# fails the assertion named (its text) in the first case requested, before
# any case ends: every unmap meets the mutation, so the first must fail.
# The run ends there; what it then lacks (the other cases, PG-T-END) is
# the assertion's doing.  4.17's 6/6: no p2m page table freed between
# p2m_defer_pending_flush() and p2m_take_pending_flush().
ASSERT_CONTROLS = {
    "neg-ptp-window": "this_cpu(p2m_deferring_flush) != p2m",
}
ASSERTION = re.compile(r"Assertion '(.*)' failed")


def named(names, case):
    """Whether CASES of a rule (above) name case."""
    return names == ALL or any(
        re.fullmatch(re.sub(r"(?<=[a-z])[NK]$", r"\\d+", n), case)
        for n in names.split())


# A control's rule on one machine, over CONTROLS'.  Bochs empties a
# vCPU's TLB at its VM exits only: where the flush misses the granter's
# CPU, pN's granter reads the granted data after the release.
MACHINE_CONTROLS = {
    ("bochs-ept", "neg-tlb-self"):
        CONTROLS["neg-tlb-self"]._replace(seen=("race", "pN")),
}


def control(variant, machine=None):
    """The rule of a neg-* VARIANT on MACHINE (its 4-vCPU boot has the
    2-vCPU rule unless CONTROLS names it), or None."""
    return MACHINE_CONTROLS.get((machine, variant)) or \
        CONTROLS.get(variant) or \
        CONTROLS.get(variant[:-len("-4vcpu")] if variant.endswith("-4vcpu")
                     else None)


def parse(variant, path):
    run = {"variant": variant, "log": path, "cases": [], "end": None,
           "problems": [], "notes": [], "oracle_outside_cases": 0,
           "oracle_stats": False, "crashes": []}
    oracle = []     # oracle reports since the last case line
    # The oracle's totals at the last case (or before the first), and its
    # latest totals when the oracle printed them since: a case's counts
    # are the difference, None (never a guess) when its own are missing.
    prev = stats = None
    kept = None     # (case, counts) of a PG-T kept line not yet used
    try:
        log = bootlog.BootLog(path)
    except OSError as e:
        run["problems"].append("no log: %s" % e)
        return run
    for lineno, line in log:
        m = CASE.search(line)
        if not m and "PG-T case=" in line or \
                not END.search(line) and "PG-T-END" in line or \
                not KEPT.search(line) and "PG-T kept" in line:
            log.problem(lineno, line, "a PG-T line that does not parse")
            continue
        k = KEPT.search(line)
        if k:
            kept = (k.group(1), {"wanted": int(k.group(2)),
                                 "placed": int(k.group(3))})
            continue
        if m:
            g = m.groups()
            delta = None
            if stats is not None and prev is not None:
                delta = {k: stats[k] - prev[k] for k in STAT_KEYS}
            prev, stats = stats, None
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
                "oracle_counts": delta,
                "kept": kept[1] if kept and kept[0] == g[0] else None})
            kept = None
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
            if kv is not None and prev is None and not run["cases"]:
                prev = kv       # the totals before the first case
            elif kv is not None:
                stats = kv
            continue
        m = ORACLE.search(line)
        if m:
            oracle.append(m.group(1).strip()[:200])
            continue
        for pat, what in PROBLEM_PATTERNS:
            if pat.search(line) and not line.startswith("PG-T"):
                run["problems"].append("%s: %s" % (what, line.strip()[:160]))
                run["crashes"].append(run["problems"][-1])
                m = ASSERTION.search(line)
                run["first_crash"] = run.get("first_crash") or {
                    "assertion": m and m.group(1),
                    "cases_done": len(run["cases"]),
                    "started": prev is not None}
    run["problems"] += log.problems
    run["oracle_outside_cases"] = len(oracle)
    run["oracle_stats"] = any(c["oracle_counts"] for c in run["cases"])
    if oracle:
        run["notes"].append("oracle after the last case: %s" % oracle[0])
    if run["end"] is None:
        run["problems"].append("no PG-T-END: the run did not finish")
    return run


def complete(run):
    """Append to run's problems what keeps its cases from standing for
    the run it was asked for."""
    end, cases, problems = run["end"], run["cases"], run["problems"]
    problems += incomplete([(c["case"], c["pass"]) for c in cases],
                           run.get("requested"),
                           end and (end["failed"], end["vcpus"]),
                           vcpus(run["variant"]))
    blind = [c["case"] for c in cases if not c["oracle_counts"]]
    if blind:
        problems.append("no pg-oracle-stats with every key before %s: the "
                        "oracle's counts of the case are unknown" %
                        ", ".join(blind))


# The builds whose kN must show its frames placed as designed: patched,
# where the density rule must split every batch, and the control that
# drops what the rule rejects, whose catch in kN stands for kN's
# placement only if the placement was made.
PLACED = ("patched", "neg-density-drop")


def placement(run):
    """Append to run's problems each kN case of a PLACED build without a
    PG-T kept line, or whose regions placed as designed are fewer than
    the N / 2 per vCPU it must want.

    Only the placement is checked, not that the rule split the batches:
    the oracle's unmap_flushes counts guest TLB flushes inside unmaps
    (one per batch on patched, whatever the IOTLB gather did), and no
    per-case count of IOTLB flushes reaches the log."""
    variant = run["variant"]
    if variant.endswith("-4vcpu"):
        variant = variant[:-len("-4vcpu")]
    if variant not in PLACED:
        return
    for c in run["cases"]:
        if not named("kN", c["case"]):
            continue
        want = int(c["case"][1:]) // 2 * vcpus(run["variant"])
        k = c["kept"]
        if k is None:
            run["problems"].append("%s: no PG-T kept line: where its frames "
                                   "lay is unknown" % c["case"])
        elif k["wanted"] != want or k["placed"] < want:
            run["problems"].append(
                "%s: %d of %d 2M regions placed as designed (two frames "
                "and a mapped spacer in each; %d wanted, N / 2 per vCPU)" %
                (c["case"], k["placed"], k["wanted"], want))


def catches(rule, cases):
    """The detections rule counts: ["CASE (DETECTOR)"]."""
    return ["%s (%s)" % (c["case"], d) for c in cases
            for d, names in rule.detectors
            if named(names, c["case"]) and DETECTORS[d](c)]


def assert_verdict(run, want):
    """An ASSERT_CONTROLS build: caught when the first thing to go wrong
    is Xen failing WANT in the first case requested."""
    first = run.get("first_crash") or {}
    run["role"] = "control"
    run["rule"] = "Xen's assertion '%s' in the first case" % want
    first_case = (run.get("requested") or ["?"])[0]
    run["caught"] = first.get("assertion") == want and first["started"] \
        and first["cases_done"] == 0
    run["caught_by"] = ["%s (assertion)" % first_case] if run["caught"] else []
    if not first:
        run["problems"].append("Xen failed no assertion")
    elif not run["caught"]:
        run["problems"].append("not the assertion in the first case: %s" %
                               run["crashes"][0])
    run["ok"] = run["caught"] and not [
        p for p in run["problems"] if p not in run["crashes"] and
        not p.startswith("no PG-T-END")]
    return run["ok"]


def verdict(run):
    if run["variant"] in ASSERT_CONTROLS:
        return assert_verdict(run, ASSERT_CONTROLS[run["variant"]])
    failed = [c["case"] for c in run["cases"] if not c["pass"]]
    oracle = [c["case"] + " (oracle)" for c in run["cases"]
              if c["oracle"] or c["oracle_lines"]]
    complete(run)
    placement(run)
    if run["variant"].startswith("neg-"):
        rule = control(run["variant"], run.get("iommu"))
        run["role"] = rule.role if rule else "control"
        if rule is None:
            run["problems"].append("no rule in CONTROLS: what catches it "
                                   "is not known")
            run["caught_by"], run["ok"] = [], False
            return False
        # A crash may be the mutation's doing: reported, not held
        # against it.  Anything else leaves the run unjudged.
        unjudged = [p for p in run["problems"] if p not in run["crashes"]]
        run["rule"] = ", or ".join(
            "%s in %s" % (d, "every case" if n == ALL else n)
            for d, n in rule.detectors) + (
            " with %s" % rule.every[0] if rule.every else ", in one case")
        run["caught_by"] = catches(rule, run["cases"])
        run["caught"] = bool(run["caught_by"])
        if rule.every:
            what, exercised = rule.every
            cases = [c for c in run["cases"] if c["oracle_counts"] and
                     any(named(n, c["case"]) for _, n in rule.detectors) and
                     exercised(c["oracle_counts"])]
            run["must_catch"] = what
            run["missed_cases"] = [c["case"] for c in cases
                                   if not catches(rule, [c])]
            run["caught"] = bool(cases) and not run["missed_cases"]
            if not cases:
                run["problems"].append("no case had %s: the control was "
                                       "not exercised" % what)
        if rule.seen:
            d, names = rule.seen
            run["rule"] += ", and a stale read seen by %s in %s" % (d, names)
            ran = [c for c in run["cases"] if named(names, c["case"])]
            seen = [c["case"] for c in ran if DETECTORS[d](c)]
            run["caught_by"] += ["%s (%s)" % (c, d) for c in seen]
            run["caught"] = run["caught"] and bool(seen)
            if not ran:
                run["problems"].append("no %s case ran: the %s detector "
                                       "was not shown" % (names, d))
            elif not seen:
                run["missed_cases"] = run.get("missed_cases", []) + [
                    "%s (%s)" % (c["case"], d) for c in ran]
        run["ok"] = run["caught"] and not unjudged or rule.role == "probe"
    else:
        run["role"] = "build"
        if oracle or run["oracle_outside_cases"]:
            run["problems"].append("the release-order oracle reported "
                                   "releases before their flushes: %s" %
                                   ", ".join(oracle or ["after the last case"]))
        counts = [c["oracle_counts"] for c in run["cases"]
                  if c["oracle_counts"]]
        if counts and not any(multi_cpu(s) for s in counts):
            run["problems"].append("no case flushed while the domain was "
                                   "dirty on 2 or more CPUs: a flush missing "
                                   "a CPU could not be seen")
        if run.get("iommu", "").endswith("-ats") and counts:
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


def negative(variant):
    """Whether VARIANT (its 4-vCPU boot too) is a negative control: a
    neg-* build whose rule is a control's (ASSERT_CONTROLS', or none: it
    fails as such), not a probe's; or negative."""
    if variant in ("negative", "negative-4vcpu") or variant in ASSERT_CONTROLS:
        return True
    rule = control(variant)
    return variant.startswith("neg-") and (rule is None or
                                           rule.role == "control")


def uncontrolled(pairs):
    """The machines of PAIRS ((IOMMU, VARIANT) booted) on which patched
    (or patched-4vcpu) booted and no negative control: [problem]."""
    return ["%s: patched booted with no negative control (a neg-* "
            "control or negative; booted: %s): nothing shows that the "
            "detectors on this machine can fail" % (m, ", ".join(sorted(
                v for i, v in pairs if i == m)))
            for m in MACHINES
            if (m, "patched") in pairs or (m, "patched-4vcpu") in pairs
            if not any(i == m and negative(v) for i, v in pairs)]


def build_key(ap, spec, what):
    """(IOMMU, VARIANT, VALUE) of an [IOMMU:]VARIANT=VALUE argument."""
    variant, _, value = spec.partition("=")
    iommu, _, variant = variant.rpartition(":")
    if iommu not in ("",) + MACHINES or not variant or not value:
        ap.error("%s: not [IOMMU:]VARIANT=%s (IOMMU one of %s)" %
                 (spec, what, ", ".join(MACHINES)))
    return iommu or "vt-d", variant, value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--base", default="")
    ap.add_argument("--describe", default="?")
    ap.add_argument("--xen-version", default="?")
    ap.add_argument("--cases", action="append", default=[],
                    metavar="[IOMMU:]VARIANT=CASES",
                    help="the cases the boot was asked for, '.' between")
    ap.add_argument("logs", nargs="+", help="[IOMMU:]VARIANT=LOG")
    a = ap.parse_intermixed_args()

    requested = {}
    for spec in a.cases:
        iommu, variant, cases = build_key(ap, spec, "CASES")
        requested[iommu, variant] = [c for c in cases.split(".") if c]
    booted = set(requested)
    runs = []
    for spec in a.logs:
        iommu, variant, path = build_key(ap, spec, "LOG")
        if any((r["iommu"], r["variant"]) == (iommu, variant) for r in runs):
            ap.error("%s: a second log of %s on %s" % (spec, variant, iommu))
        run = parse(variant, path)
        run["iommu"] = iommu
        run["build"] = variant + ("" if iommu == "vt-d" else "/" + iommu)
        if (iommu, variant) in requested:
            run["requested"] = requested.pop((iommu, variant))
        runs.append(run)
    if requested:
        ap.error("--cases of no log: %s" % ", ".join(
            "%s:%s" % k for k in sorted(requested)))
    ok = all([verdict(r) for r in runs])
    problems = uncontrolled(booted)
    ok = ok and not problems

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
        if r["role"] == "build":
            print("%-28s %s: %d cases, %d pages unmapped and checked%s" % (
                r["build"], "pass" if r["ok"] else "FAIL",
                len(r["cases"]), pages,
                " (no IOMMU: by CPU and the oracle, DMA detector off)"
                if r["iommu"] == "none" else ""))
            continue
        if "rule" not in r:
            print("%-28s negative control FAILED: %s" % (
                r["build"], r["problems"][-1]))
            continue
        seen = ", ".join(r["caught_by"]) or "no case"
        if r["role"] == "probe":
            print("%-28s probe (not a control, never required): %s; "
                  "counted: %s" % (r["build"], "seen in " + seen
                                   if r["caught"] else "not seen",
                                   r["rule"]))
            continue
        print("%-28s negative control %s; seen in %s; required: %s%s" % (
            r["build"], "caught" if r["ok"] else
            "NOT JUDGED (its problems above)" if r["caught"]
            else "NOT CAUGHT", seen, r["rule"],
            ("; missed in " + ", ".join(r["missed_cases"]))
            if r.get("missed_cases") else ""))
    for p in problems:
        print("problem: %s" % p)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"base": a.base, "tree": {
                "base": a.base, "describe": a.describe,
                "xen_version": a.xen_version}, "runs": runs,
                "problems": problems, "ok": ok}, f,
                indent=1)
    if a.check and not ok:
        print("torture: FAILED", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
