#!/usr/bin/env python3
"""Turn the proving ground's boot logs into the side-by-side table and
out/report.json, and (with --check) judge them against the thresholds.

Each log holds the serial console (Xen, dom0, the workload's PG- lines)
and QEMU's IOMMU trace events, in the order QEMU wrote them.  Two
observers are counted per phase: QEMU (trace events) and Xen
(performance counters the workload reads through XEN_SYSCTL_perfc_op).
Logs are [IOMMU:]VARIANT=PATH, IOMMU vt-d (the default), amd-vi or none.

VT-d: QEMU's vtd_inv_desc_* events give each invalidation's granularity
and, for page-selective ones, the pages it covers.  AMD-Vi: QEMU's
amdvi_pages_inval carries only the domain (QEMU 7.2 drops all of the
domain's cached translations whatever the range), so the split of
INVALIDATE_IOMMU_PAGES into 4K/2M/1G blocks and all-pages, and the pages
covered, come from Xen's counters; QEMU's count of the commands, of
INVALIDATE_IOMMU_ALL and of COMPLETION_WAIT must equal Xen's.  With an
IOMMU, both observers are required: a Xen counter missing from a phase
is a problem, not a comparison skipped.

With --rounds (--negative-rounds for the negative control,
--density-rounds for the density control), the workload's arguments
each log was booted with: --check fails a log that lacks the map or
unmap phase of one of their rounds.
"""
import argparse
import contextlib
import io
import json
import math
import os
import re
import sys

import bootlog
import record
from problems import PROBLEM_PATTERNS

# density-control: the series without the density rule of its IOTLB gather
# (test-patches/neg-density), booted with kept rounds only.
VARIANTS = ("base", "patched", "negative-control", "density-control")
# The release-order oracle of the test-only patches: a grant released
# before its flushes (a problem, except on the negative control).
ORACLE = re.compile(r"pg-oracle: (.*)$")
IOMMU_FAULT = re.compile(r"DMAR:\[DMA (Read|Write)\]|vtd_dmar_fault|"
                         r"IO_PAGE_FAULT|amdvi_page_fault")
TRACE = re.compile(r"^(?:\d+@[\d.]+:)?(vtd_inv_desc(?:_\w+)?|amdvi_\w+) ?(.*)$")
DEV_DESC = re.compile(r"type device high (0x[0-9a-f]+) low (0x[0-9a-f]+)")
IOMMUS = ("vt-d", "amd-vi", "vt-d-ats", "amd-vi-ats")
ROUND = re.compile(r"(\d+)(?:([sk])(\d+))?")


def run_key(n, phase, stride=1, kept=False):
    """parse()'s key of a phase: (N, PHASE, STRIDE), with True after them
    for a kept round (NkS: the frames' IOMMU page tables stay linked)."""
    return (n, phase, stride) + ((True,) if kept else ())


def parse(path):
    """Counts per run_key(), DMA verdict lines, problems and release-order
    oracle reports of one log."""
    runs, dma, problems, oracle = {}, [], [], []
    cur = None
    # The DMA detector's faults are expected only from the DMA round's
    # unmap PG-END to its after-unmap PG-DMA line, with no other workload
    # line between; the DMA round is the one whose "mapped" PG-DMA line
    # came last, stride 1.
    dma_round, dma_window = None, False
    log = bootlog.BootLog(path)
    lines = log.physical
    done = False
    for lineno, line in log:
        m = TRACE.match(line)
        if m and m.group(1) != "amdvi_page_fault":
            if cur is None:
                continue
            ev, rest = m.groups()
            c = runs[cur]
            if ev == "vtd_inv_desc_iotlb_pages":
                c["iotlb_inv_pages"] += 1
                mm = re.search(r"mask (0x[0-9a-f]+|\d+)", rest)
                c["pages_covered"] += 1 << int(mm.group(1), 0) if mm else 1
            elif ev == "vtd_inv_desc_iotlb_domain":
                c["iotlb_inv_domain"] += 1
            elif ev == "vtd_inv_desc_iotlb_global":
                c["iotlb_inv_global"] += 1
            elif ev.startswith("vtd_inv_desc_wait"):
                c["iotlb_waits"] += 1
            elif ev == "vtd_inv_desc" and DEV_DESC.search(rest):
                pages = ats_pages(int(DEV_DESC.search(rest).group(1), 16))
                c["dev_iotlb_inv"] += 1
                if pages is None:
                    c["dev_iotlb_all"] += 1
                else:
                    c["dev_iotlb_pages"] += pages
            elif ev == "amdvi_pages_inval":
                c["amd_inv_pages"] += 1
            elif ev == "amdvi_all_inval":
                c["iotlb_inv_global"] += 1
            elif ev == "amdvi_completion_wait":
                c["iotlb_waits"] += 1
            elif ev == "amdvi_iotlb_inval":
                c["amd_iotlb_inval"] += 1
            continue
        if line.startswith("PG-"):
            dma_window = False
        if line.startswith("PG-BEGIN"):
            kv = log.fields(lineno, line, keep=("phase",), need=("n", "phase"))
            cur = kv and run_key(kv["n"], kv["phase"], kv.get("stride", 1),
                                 kv.get("kept", 0) == 1)
            if cur:
                runs[cur] = dict(iotlb_inv_pages=0, iotlb_inv_domain=0,
                                 iotlb_inv_global=0, iotlb_waits=0,
                                 pages_covered=0, amd_inv_pages=0,
                                 amd_iotlb_inval=0,
                                 dev_iotlb_inv=0, dev_iotlb_pages=0,
                                 dev_iotlb_all=0, xen={})
            continue
        if line.startswith("PG-END"):
            # A counter that cannot be read stays out of "xen": -1 below.
            kv = log.fields(lineno, line, keep=("phase",), need=("n", "phase"))
            key = run_key(kv.pop("n"), kv.pop("phase"), kv.pop("stride", 1),
                          kv.pop("kept", 0) == 1) if kv else cur
            if kv and key not in runs:
                log.problem(lineno, line, "PG-END without its PG-BEGIN")
            elif kv == {}:
                log.problem(lineno, line, "PG-END without a counter")
            elif kv:
                runs[key]["xen"] = kv
            cur = None
            if key == (dma_round, "unmap", 1):
                dma_round, dma_window = None, True
            continue
        if line.startswith("PG-DMA"):
            kv = log.fields(lineno, line, keep=("when",),
                            need=("when", "data", "fault", "other"))
            if kv:
                dma.append(kv)
                if kv["when"] == "mapped":
                    dma_round = kv.get("n")
            continue
        if line.startswith("PG-DONE"):
            done = True
        m = ORACLE.search(line)
        if m:
            oracle.append(f"{path}:{lineno}: {m.group(1)[:300]}")
        if IOMMU_FAULT.search(line) and not dma_window:
            problems.append(f"{path}:{lineno}: unexpected IOMMU fault: {line.strip()}")
        for pat, what in PROBLEM_PATTERNS:
            if pat.search(line):
                ctx = " | ".join(l.strip() for l in lines[lineno - 1:lineno + 4])
                problems.append(f"{path}:{lineno}: {what}: {ctx[:400]}")
    problems += log.problems
    if not done:
        problems.append(f"{path}: the workload did not finish (no PG-DONE)")
    return runs, dma, problems, oracle


def ats_pages(hi):
    """Pages a VT-d Device-TLB Invalidate Descriptor covers, from its high
    word (S in bit 0, ADDR in bits 63:12, read as the PCIe ATS encoding):
    None for all of them."""
    pfn = hi >> 12
    if not hi & 1:
        return 1
    k = 0
    while pfn >> k & 1:
        k += 1
    return None if k >= 51 else 2 << k


def dma_verdict(dma):
    after = [d for d in dma if d.get("when") == "after-unmap"]
    mapped = [d for d in dma if d.get("when") == "mapped"]
    if not after:
        return "not-run", []
    why = []
    for d in mapped:
        total = d["data"] + d["fault"] + d["other"]
        if d["data"] != total:
            why.append(f"while mapped only {d['data']}/{total} pages read the data")
    for d in after:
        if d["data"] or d["other"]:
            return "stale", why
    return "fault", why


def run_record(variant, iommu, n, phase, stride, c, kept=False):
    """One phase of one boot, as out/report.json carries it."""
    x = c["xen"]
    r = {"variant": variant, "iommu": iommu, "n": n, "phase": phase,
         "stride": stride, "kept": kept,
         "hypercalls": x.get("hypercalls", -1),
         "iotlb_inv_pages": c["iotlb_inv_pages"],
         "iotlb_inv_domain": c["iotlb_inv_domain"],
         "iotlb_inv_global": c["iotlb_inv_global"],
         "iotlb_waits": c["iotlb_waits"],
         "p2m_tlb_flushes": x.get("pg_p2m_tlb_flush", -1),
         "flush_ipis": x.get("pg_flush_ipi", -1),
         "iotlb_pages_covered": c["pages_covered"],
         "xen_iotlb_page": x.get("pg_iotlb_page", -1),
         "xen_iotlb_domain": x.get("pg_iotlb_domain", -1),
         "xen_iotlb_global": x.get("pg_iotlb_global", -1),
         "xen_iotlb_wait": x.get("pg_iotlb_wait", -1),
         # Device-IOTLB invalidations and the pages they cover: QEMU's
         # decoded descriptors on VT-d, Xen's decoded commands on AMD-Vi.
         "dev_iotlb_inv": c["dev_iotlb_inv"],
         "dev_iotlb_pages": c["dev_iotlb_pages"],
         "dev_iotlb_all": c["dev_iotlb_all"],
         "xen_dev_iotlb": x.get("pg_dev_iotlb", -1),
         "xen_dev_iotlb_pages": x.get("pg_dev_iotlb_pages", -1),
         "xen_dev_iotlb_all": x.get("pg_dev_iotlb_all", -1)}
    if iommu.startswith("amd-vi"):
        # QEMU counts INVALIDATE_IOMMU_PAGES commands; Xen says which
        # covered a 4K/2M/1G block and which all of the domain's pages.
        page, dom = r["xen_iotlb_page"], r["xen_iotlb_domain"]
        m2, g1 = x.get("pg_iotlb_2m", -1), x.get("pg_iotlb_1g", -1)
        known = min(page, dom, m2, g1) >= 0
        r["qemu_inv_pages_cmds"] = c["amd_inv_pages"]
        r["iotlb_inv_pages"] = page if known else c["amd_inv_pages"]
        r["iotlb_inv_domain"] = dom if known else 0
        r["iotlb_pages_covered"] = x.get("pg_iotlb_pages", -1)
        r["iotlb_inv_by_size"] = ({"4k": page - m2 - g1, "<=2m": m2,
                                   "<=1g": g1} if known else None)
        # QEMU 7.2 traces INVALIDATE_IOTLB_PAGES without its words: it
        # counts them, Xen decodes them.
        r["qemu_dev_iotlb_cmds"] = c["amd_iotlb_inval"]
        for k in ("dev_iotlb_inv", "dev_iotlb_pages", "dev_iotlb_all"):
            r[k] = max(x.get("pg_" + k.replace("_inv", ""), 0), 0)
    return r


def observers_disagree(r):
    """Where QEMU's trace and Xen's counters differ on a run, or Xen's
    counter is missing: its IOTLB counters on a machine with an IOMMU,
    its device-IOTLB ones on a machine with ATS."""
    if r["iommu"].startswith("amd-vi"):
        pairs = [("qemu_inv_pages_cmds", r["qemu_inv_pages_cmds"],
                  r["xen_iotlb_page"] + r["xen_iotlb_domain"]
                  if min(r["xen_iotlb_page"], r["xen_iotlb_domain"]) >= 0
                  else -1),
                 ("iotlb_inv_global", r["iotlb_inv_global"],
                  r["xen_iotlb_global"]),
                 ("iotlb_waits", r["iotlb_waits"], r["xen_iotlb_wait"]),
                 ("qemu_dev_iotlb_cmds", r["qemu_dev_iotlb_cmds"],
                  r["xen_dev_iotlb"])]
    else:
        pairs = [(q, r[q], r[xk]) for q, xk in (
            ("iotlb_inv_pages", "xen_iotlb_page"),
            ("iotlb_inv_domain", "xen_iotlb_domain"),
            ("iotlb_inv_global", "xen_iotlb_global"),
            ("dev_iotlb_inv", "xen_dev_iotlb"),
            ("dev_iotlb_pages", "xen_dev_iotlb_pages"),
            ("dev_iotlb_all", "xen_dev_iotlb_all"))]
    stride = f" stride={r['stride']}" if r["stride"] > 1 else ""
    stride += " kept=1" if r["kept"] else ""
    tag = f"{r['iommu']} {r['variant']} n={r['n']}{stride} {r['phase']}"
    out = []
    for q, qv, xv in pairs:
        need = r["iommu"].endswith("-ats") if "dev_iotlb" in q else \
            r["iommu"] != "none"
        if xv < 0 and need:
            out.append(f"{tag}: QEMU saw {q} {qv}, Xen's counter of it is "
                       "not in the log")
        elif xv >= 0 and qv != xv:
            out.append(f"{tag}: QEMU saw {q} {qv}, Xen counted {xv}")
    return out


def round_name(n, stride, kept=False):
    """A round as the workload's argument spells it: N, NsS or NkS."""
    return f"{n}{'k' if kept else 's'}{stride}" if stride > 1 else f"{n}"


def workload_rounds(args):
    """The rounds [(n, stride, kept)] of the workload's arguments ARGS, in
    order: each N, NsS or NkS; --dma BDF and --dma-n N are options
    (ValueError on anything else, or on no round)."""
    words, rounds = args.split(), []
    while words:
        w = words.pop(0)
        if w in ("--dma", "--dma-n"):
            if not words:
                raise ValueError(f"{w} without its value")
            words.pop(0)
            continue
        m = ROUND.fullmatch(w)
        if not m or m.group(2) == "k" and int(m.group(3)) < 2:
            raise ValueError(f"{w}: not a round (N, NsS or NkS, S > 1)")
        rounds.append((int(m.group(1)), int(m.group(3) or 1),
                       m.group(2) == "k"))
    if not rounds:
        raise ValueError("no round")
    return rounds


def missing_rounds(per, want):
    """Each requested round of each log: its map and unmap phases, each
    from PG-BEGIN to a PG-END whose counters could be read."""
    fails = []
    for iommu, logs in per.items():
        for v, runs in logs.items():
            for n, st, kept in want.get(v, ()):
                for phase in ("map", "unmap"):
                    if not runs.get(run_key(n, phase, st, kept),
                                    {}).get("xen"):
                        fails.append(f"{iommu} {v}: round "
                                     f"{round_name(n, st, kept)} has no "
                                     f"{phase} phase in the log")
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree-base", required=True)
    ap.add_argument("--describe", required=True)
    ap.add_argument("--xen-version", required=True)
    ap.add_argument("--series", type=int, default=1,
                    help="0 if the base has no series yet (patched == base)")
    ap.add_argument("--json", required=True)
    ap.add_argument("--check", action="store_true",
                    help="exit non-zero on a failed check or a problem")
    ap.add_argument("--tables", action="store_true",
                    help="print the tables before the summary (also with "
                         "PG_VERBOSE=1)")
    ap.add_argument("--tables-file", default=None, metavar="FILE",
                    help="write the tables, problems and checks to FILE")
    ap.add_argument("--machine", default=None,
                    help='recorded as "machine" in the report, e.g. bochs-vmx-ept')
    ap.add_argument("--no-iommu", action="store_true",
                    help="the machine has no IOMMU: judge the p2m flushes only "
                         "(no IOTLB thresholds, no DMA detector)")
    ap.add_argument("--stale-read-reason", default=None,
                    help='records "stale_read": null with this reason')
    ap.add_argument("--rounds", default=None, metavar="ARGS",
                    help="the workload's arguments of base and patched: "
                         "each log must hold every round's map and unmap")
    ap.add_argument("--negative-rounds", default=None, metavar="ARGS",
                    help="the same for the negative control (required "
                         "with --rounds when its log is given)")
    ap.add_argument("--density-rounds", default=None, metavar="ARGS",
                    help="the same for the density control (required "
                         "with --rounds when its log is given)")
    ap.add_argument("logs", nargs="+", help="[IOMMU:]VARIANT=LOG")
    a = ap.parse_args()
    want = {}
    for arg, variants in ((a.rounds, ("base", "patched")),
                          (a.negative_rounds, ("negative-control",)),
                          (a.density_rounds, ("density-control",))):
        if arg is None:
            continue
        try:
            rounds = workload_rounds(arg)
        except ValueError as e:
            ap.error(f"{arg!r}: {e}")
        want.update((v, rounds) for v in variants)

    report = {"tree": {"base": a.tree_base, "describe": a.describe,
                       "xen_version": a.xen_version},
              "runs": [], "dma_after_unmap": {}, "oracle": {},
              "density_control": {},
              "problems": [],
              "rounds": {v: [round_name(*x) for x in r]
                         for v, r in want.items()}}
    if a.machine:
        report["machine"] = a.machine
    if a.stale_read_reason is not None:
        report["stale_read"] = None
        report["stale_read_reason"] = a.stale_read_reason
    per = {}
    # The tables, printed with --tables; the problems of each machine.
    tables, problems_of = io.StringIO(), {}
    for spec in a.logs:
        variant, path = spec.split("=", 1)
        iommu, _, variant = variant.rpartition(":")
        iommu = "none" if a.no_iommu else iommu or "vt-d"
        if iommu not in IOMMUS + ("none",) or variant not in VARIANTS:
            ap.error(f"{spec}: not [IOMMU:]VARIANT=LOG with IOMMU one of "
                     f"{', '.join(IOMMUS)} and VARIANT one of "
                     f"{', '.join(VARIANTS)}")
        if want and variant not in want:
            ap.error(f"{spec}: no rounds given for {variant} "
                     "(--rounds, --negative-rounds, --density-rounds)")
        runs, dma, problems, oracle = parse(path)
        first = len(report["problems"])
        per.setdefault(iommu, {})[variant] = runs
        if iommu == "amd-vi-ats" and variant == "base":
            # Base's INVALIDATE_IOTLB_PAGES goes out without its S bit (the
            # series' first patch is the fix): its device invalidation of
            # all pages covers one, and the oracle reports each IOMMU page
            # table unlinked.  Counted, not failed.
            known = [o for o in oracle if " IOMMU page table " in o]
            oracle = [o for o in oracle if o not in known]
            report["oracle_base_sbit"] = len(known)
            print(f"note: {iommu} base: {len(known)} oracle reports of IOMMU "
                  "page tables left in the device IOTLB (base's S bit, "
                  "fixed by patch 1)", file=tables)
        report["oracle"].setdefault(iommu, {})[variant] = len(oracle)
        if variant != "negative-control":
            problems += [f"released before its flush: {o}" for o in oracle[:5]]
        verdict, why = dma_verdict(dma)
        d = report["dma_after_unmap"].setdefault(
            iommu, {v: "not-run" for v in VARIANTS})
        d[variant] = verdict
        report["problems"] += problems + [f"{iommu} {variant}: {w}" for w in why]
        for key, c in sorted(runs.items(), key=lambda x: (
                x[0][2], x[0][0], len(x[0]), x[0][1] != "map")):
            n, phase, stride = key[:3]
            r = run_record(variant, iommu, n, phase, stride, c, len(key) > 3)
            report["runs"].append(r)
            report["problems"] += observers_disagree(r)
            if iommu.startswith("amd-vi") and (
                    r["iotlb_inv_by_size"] is None
                    or r["iotlb_pages_covered"] < 0):
                report["problems"].append(
                    f"{iommu} {variant} n={n} {phase}: no Xen counters of "
                    "the invalidations' sizes in the log")
        problems_of.setdefault(iommu, []).extend(report["problems"][first:])

    with contextlib.redirect_stdout(tables):
        for iommu in per:
            if "density-control" in per[iommu]:
                report["density_control"][iommu] = density_verdict(
                    [r for r in report["runs"] if r["iommu"] == iommu])
            print_table(report, per[iommu], iommu)
    # Judged on every run, for the summary; --check enforces them.
    fails = {i: machine_failures(report, per, want, a.series, i) for i in per}
    failures = [f for i in per for f in fails[i]]
    report["failures"] = failures
    with open(a.json, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    bad = failures or report["problems"]
    verdict = "checks: " + ("passed" if not bad else "FAILED" if a.check else
                            "FAILED (not enforced: `make check` enforces them)")
    judged = ["FAIL: " + f for f in failures] + \
        ["problem: " + p for p in report["problems"]]
    if a.tables_file:
        with open(a.tables_file, "w") as f:
            f.write(tables.getvalue() + "".join(l + "\n" for l in judged)
                    + verdict + "\n")
    if a.tables or os.environ.get("PG_VERBOSE") == "1":
        print(tables.getvalue(), end="")
    for line in judged:
        print(line)
    print_summary(report, {i: fails[i] + problems_of[i] for i in per},
                  a.series)
    print(verdict)
    print("tables: " + (f"{shown(a.tables_file)} (PG_VERBOSE=1 prints them)"
                        if a.tables_file else "report.py --tables prints them")
          + f"; every count: {shown(a.json)}")
    sys.exit(1 if a.check and bad else 0)


def machine_failures(report, per, want, series, i):
    """The failed checks of machine I's boots."""
    fails = (check_p2m(report, series, i) if i == "none" else
             check(report, series, i))
    return fails + missing_rounds({i: per[i]}, want)


def shown(path):
    """PATH as a reader types it: relative to here when beneath it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


NAMES = {"vt-d": "VT-d", "amd-vi": "AMD-Vi", "vt-d-ats": "VT-d ATS",
         "amd-vi-ats": "AMD-Vi ATS", "none": "no IOMMU"}
DMA_SAYS = {"fault": "faults", "stale": "reads stale data",
            "not-run": "not run"}


def print_summary(report, fails, series):
    """The verdict in a few lines: the tree and series, then each
    machine's (FAILS: its failed checks and problems) unmap of the
    largest round of contiguous grants both base and patched ran
    (IOTLB invalidations / p2m TLB flushes), what
    the density bound (exercised by a kept round only) and the DMA
    detector (the oracle without an IOMMU) say."""
    t = report["tree"]
    m = record.mails(t["base"])
    print(f"tree: {t['base']} {t['describe']} (Xen {t['xen_version']})")
    print(f"series: {m['mails']} mails of patches/{t['base']}/, sha256 "
          f"{m['sha256']}" if m else f"series: no mails in patches/{t['base']}/")
    if not series:
        print("(no series on this base: patched is base)")
    for iommu in fails:
        mine = [r for r in report["runs"] if r["iommu"] == iommu
                and r["phase"] == "unmap"]
        rows = {(r["variant"], r["n"]): r for r in mine
                if r["stride"] == 1 and not r["kept"]}
        ns = [n for v, n in rows if v == "base" and ("patched", n) in rows]
        line = f"{report.get('machine') or NAMES[iommu]}: "
        if ns:
            b, p = (rows[v, max(ns)] for v in ("base", "patched"))
            p2m = lambda r: (r["p2m_tlb_flushes"] if r["p2m_tlb_flushes"] >= 0
                             else "?")
            line += (f"unmap of {max(ns)} grants, base {invalidations(b)} "
                     f"invalidations / {p2m(b)} p2m flushes, patched "
                     f"{invalidations(p)} / {p2m(p)}")
        else:
            line += "no round of contiguous grants on base and patched"
        says = [line]
        if iommu != "none":
            kept = [r for r in mine if r["variant"] == "patched"]
            if series:
                says.append("density bound " + (
                    "BROKEN" if any(density_broken(r) for r in kept) else
                    "held" if any(r["kept"] for r in kept) else
                    "not exercised (no kept round)"))
            d = report["dma_after_unmap"][iommu]
            says.append("DMA after unmap " + (
                DMA_SAYS[d["base"]] if d["base"] == d["patched"] else
                f"on base {DMA_SAYS[d['base']]}, on patched "
                f"{DMA_SAYS[d['patched']]}"))
        elif "negative-control" in report["oracle"].get(iommu, {}):
            says.append("oracle " + ("reported" if report["oracle"][iommu]
                                     ["negative-control"] else "MISSED")
                        + " the control")
        says.append(f"{len(fails[iommu])} FAILED" if fails[iommu]
                    else "checks passed")
        print("; ".join(says))


# Column headers: VT-d's descriptors, AMD-Vi's commands.
COLS = {"vt-d": [("hypercalls", "hcall"), ("iotlb_inv_pages", "psi"),
                 ("iotlb_inv_domain", "dsi"), ("iotlb_inv_global", "gsi"),
                 ("iotlb_waits", "wait"), ("p2m_tlb_flushes", "p2m"),
                 ("flush_ipis", "ipi")],
        "amd-vi": [("hypercalls", "hcall"), ("iotlb_inv_pages", "pages"),
                   ("iotlb_inv_domain", "allpg"), ("iotlb_inv_global", "all"),
                   ("iotlb_waits", "wait"), ("p2m_tlb_flushes", "p2m"),
                   ("flush_ipis", "ipi")]}
COLS["none"] = COLS["vt-d-ats"] = COLS["vt-d"]
COLS["amd-vi-ats"] = COLS["amd-vi"]
LEGEND = {
    "vt-d": "VT-d: psi/dsi/gsi: page/domain/global IOTLB invalidations "
            "(QEMU), wait: invalidation waits",
    "amd-vi": "AMD-Vi: pages/allpg: INVALIDATE_IOMMU_PAGES of a 4K/2M/1G "
              "block / of all the domain's pages (Xen), all: "
              "INVALIDATE_IOMMU_ALL, wait: COMPLETION_WAIT (QEMU)",
    "none": "no IOMMU",
}
LEGEND["vt-d-ats"] = LEGEND["vt-d"] + " (with an ATS device)"
LEGEND["amd-vi-ats"] = LEGEND["amd-vi"] + " (with an ATS device)"


def print_table(report, per, iommu):
    cols = COLS[iommu]
    mine = [r for r in report["runs"] if r["iommu"] == iommu]
    rows = {}
    for r in mine:
        if r["stride"] == 1:
            rows.setdefault((r["n"], r["phase"]), {})[r["variant"]] = r
    variants = [v for v in VARIANTS if v in per]
    t = report["tree"]
    print(f"tree: {t['base']} {t['describe']} (Xen {t['xen_version']})"
          + (f", machine {report['machine']}" if report.get("machine") else ""))
    print(LEGEND[iommu] + "; p2m: guest TLB flushes of p2m changes, ipi: "
          "flush IPI rounds (Xen)")
    head = f"{'N':>4} {'phase':<6}"
    for v in variants:
        head += " | " + v[:8].ljust(8) + " " + " ".join(f"{h:>5}" for _, h in cols[1:])
    print(head)
    for (n, phase) in sorted(rows, key=lambda k: (k[0], k[1] != "map")):
        line = f"{n:>4} {phase:<6}"
        for v in variants:
            r = rows[(n, phase)].get(v)
            cells = [f"{r[k]:>5}" if r else "    -" for k, _ in cols]
            line += " | " + f"hc {cells[0].strip():>5}" + " " + " ".join(cells[1:])
        print(line)
    def unmap_rows(title, cell):
        """One line per unmap phase: each variant's cell(r), or "-"."""
        print(title)
        for (n, phase) in sorted(rows):
            if phase == "unmap":
                print(f"{n:>4} {'':<6}" + "".join(
                    f" | {v[:8]:<8} " + (cell(rows[(n, phase)][v])
                                         if rows[(n, phase)].get(v) else "-")
                    for v in variants))

    def by_size(r):
        z = r["iotlb_inv_by_size"]
        return (f"{z['4k']:>4}/{z['<=2m']}/{z['<=1g']} cover "
                f"{r['iotlb_pages_covered']:>7}" if z else "-")
    if iommu.startswith("amd-vi"):
        unmap_rows("AMD-Vi, unmap phase: page invalidations by size "
                   "4K/<=2M/<=1G and the pages they cover (Xen)", by_size)
    if any(r["dev_iotlb_inv"] for r in mine):
        unmap_rows("device IOTLB (ATS), unmap phase: invalidations, the pages "
                   "they cover and how many cover all (decoded: QEMU's trace "
                   "on VT-d, Xen's words on AMD-Vi)",
                   lambda r: f"{r['dev_iotlb_inv']:>4} cover "
                             f"{r['dev_iotlb_pages']:>7} all {r['dev_iotlb_all']}")
    scattered = {}
    for r in mine:
        if r["stride"] > 1 and r["phase"] == "unmap":
            scattered.setdefault((r["n"], r["stride"], r["kept"]),
                                 {})[r["variant"]] = r
    if scattered:
        print("scattered frames (kept: their IOMMU page tables stay linked), "
              "unmap phase: invalidations "
              + "/".join(h for _, h in cols[1:4]) + " and pages they cover")
        for (n, st, kept) in sorted(scattered):
            line = f"{n:>4} stride {st:<4}" + (" kept" if kept else " " * 5)
            for v in variants:
                r = scattered[(n, st, kept)].get(v)
                if r:
                    line += (f" | {v[:8]:<8} {r['iotlb_inv_pages']:>4}/"
                             f"{r['iotlb_inv_domain']}/{r['iotlb_inv_global']}"
                             f" cover {r['iotlb_pages_covered']:>6}"
                             f" p2m {r['p2m_tlb_flushes']:>4}")
            print(line)
    if iommu in report["density_control"]:
        print(f"density control (no density rule), kept rounds: "
              f"{report['density_control'][iommu]}")
    d = report["dma_after_unmap"][iommu]
    if iommu == "none" or all(v == "not-run" for v in d.values()):
        return
    print("DMA after unmap: " + ", ".join(f"{v} {d[v]}" for v in variants
                                          if v != "density-control"))


def density_bound(invs, pages):
    """The density rule: each page-selective invalidation covers at most
    max(2^9, 64 k) pages for the k pages it is the first to cover, so
    INVS of them over PAGES pages unmapped cover at most this many."""
    return 512 * invs + 64 * pages


def density_broken(r):
    """How an unmap phase's page-selective invalidations break the density
    bound, or None."""
    bound = density_bound(r["iotlb_inv_pages"], r["n"])
    if r["iotlb_pages_covered"] > bound:
        return (f"invalidations cover {r['iotlb_pages_covered']} pages > "
                f"{bound} (density rule)")
    return None


def invalidations(r):
    """A run's IOTLB invalidations of every kind."""
    return r["iotlb_inv_pages"] + r["iotlb_inv_domain"] + r["iotlb_inv_global"]


def density_verdict(mine):
    """The density control's verdict on one machine's rows: "caught" when
    the unmap of one of its kept rounds breaks the density bound (it
    breaks nothing else a boot can see), else "not-caught"."""
    return "caught" if any(
        density_broken(r) for r in mine if r["variant"] == "density-control"
        and r["phase"] == "unmap" and r["kept"]) else "not-caught"


def check(report, series, iommu):
    """The thresholds of one IOMMU's boots.  Unmap of N contiguous grants:
    base N page invalidations, N waits and N p2m flushes; patched at most
    ceil(N/32) of each, none of them domain-wide unless base had one for
    the same unmaps, covering the N pages.  Every unmap of patched: 1 to
    ceil(N/32) p2m flushes, base's unmap of the same round to compare
    with, no more invalidations or waits than base, domain-wide ones
    only where base issued them (page tables freed: flushed at once, as
    base does), and the density rule: each page-selective invalidation
    covers at most max(2^9, 64 k) pages for the k pages it is the first
    to cover, so the row's pages covered stay within 2^9 per
    invalidation plus 64 per page unmapped.  A kept round (NkS: the
    frames' IOMMU page tables stay linked) frees no page table: no
    domain-wide invalidation on base or patched, so that the density
    rule alone splits patched's batch.  The density control (the rule
    dropped), where it ran, must break the density bound in the unmap
    of a kept round; without an ATS device, patched must have run one.
    A count missing from the log fails."""
    fails = []
    mine = [r for r in report["runs"] if r["iommu"] == iommu]
    runs = [r for r in mine if r["phase"] == "unmap" and r["stride"] == 1]
    # With ATS, each flush waits for the IOTLB's and the device's
    # invalidation apart.
    ats = iommu.endswith("-ats")
    wpi = 2 if ats else 1


    def wide(r):
        return r["iotlb_inv_domain"] + r["iotlb_inv_global"]
    base = {(r["n"], r["stride"], r["kept"]): r for r in mine
            if r["variant"] == "base" and r["phase"] == "unmap"}
    for r in mine:
        tag = (f"{iommu} {r['variant']} n={r['n']} stride={r['stride']}"
               + (" kept=1" if r["kept"] else "") + " unmap")
        if r["phase"] == "unmap" and r["p2m_tlb_flushes"] < 0 and (
                r["variant"] == "base" and r["stride"] == 1
                or r["variant"] == "patched" and series):
            fails.append(f"{tag}: no p2m flush counter in the log")
        if r["phase"] == "unmap" and r["kept"] and wide(r) and (
                r["variant"] == "base"
                or r["variant"] == "patched" and series):
            fails.append(f"{tag}: {wide(r)} domain-wide invalidations, "
                         "where no IOMMU page table is freed")
        if r["variant"] != "patched" or not series or r["phase"] != "unmap":
            continue
        n = r["n"]
        b = base.get((n, r["stride"], r["kept"]))
        if b is None:
            fails.append(f"{tag}: base has no unmap of this round to "
                         "compare with")
        else:
            for what, f in (("invalidations", invalidations), ("domain-wide", wide)):
                if f(r) > f(b):
                    fails.append(f"{tag}: {f(r)} {what} > base's {f(b)}")
            if r["iotlb_waits"] > b["iotlb_waits"]:
                fails.append(f"{tag}: {r['iotlb_waits']} waits > base's "
                             f"{b['iotlb_waits']}")
        if r["p2m_tlb_flushes"] > math.ceil(n / 32):   # < 0: missing, above
            fails.append(f"{tag}: {r['p2m_tlb_flushes']} p2m flushes > "
                         f"{math.ceil(n / 32)}")
        elif r["p2m_tlb_flushes"] == 0 and n >= 1:
            fails.append(f"{tag}: no p2m flush for {n} unmaps")
        if density_broken(r):
            fails.append(f"{tag}: {density_broken(r)}")
    got = report["density_control"].get(iommu)
    if got == "not-caught":
        fails.append(f"{iommu} density control: the invalidations of its "
                     "kept rounds stay within the density bound (the "
                     "density control was NOT caught)")
    elif got is None and series and not ats and any(
            r["kept"] for r in mine if r["variant"] == "patched"):
        fails.append(f"{iommu} density control: not booted, where patched "
                     "ran a kept round")
    if series and not ats and not any(r["kept"] for r in mine
                                      if r["variant"] == "patched"):
        fails.append(f"{iommu} patched: no kept round, so nothing "
                     "exercised the density rule")
    for r in runs:
        n, v = r["n"], r["variant"]
        tag = f"{iommu} {v} n={n} unmap"
        if v == "base":
            # A missing p2m count has failed above.
            for k, want in (("iotlb_inv_pages", n), ("iotlb_waits", wpi * n),
                            ("p2m_tlb_flushes", n)):
                if r[k] != want and (r[k] >= 0 or k != "p2m_tlb_flushes"):
                    fails.append(f"{tag}: {k} = {r[k]}, expected {want}"
                                 + (" (not in the log)" if r[k] < 0 else ""))
        elif v == "patched" and series:
            lim = math.ceil(n / 32)
            if invalidations(r) > lim:
                fails.append(f"{tag}: {invalidations(r)} IOTLB invalidations > {lim}")
            if r["iotlb_waits"] > wpi * lim:
                fails.append(f"{tag}: iotlb_waits = {r['iotlb_waits']} > "
                             f"{wpi * lim}")
            b = base.get((n, 1))
            if wide(r) and not (b and wide(b)):
                fails.append(f"{tag}: domain-wide invalidation for "
                             "contiguous frames")
            if r["iotlb_pages_covered"] < n and not wide(r):
                fails.append(f"{tag}: invalidations cover "
                             f"{r['iotlb_pages_covered']} < {n} pages")
    if ats:
        fails += check_ats(mine, series, iommu)
    want = {"base": "fault", "patched": "fault", "negative-control": "stale"}
    if ats:     # the control's DMA runs without ATS (run.sh)
        del want["negative-control"]
    for v, w in want.items():
        got = report["dma_after_unmap"][iommu].get(v)
        if got != w:
            fails.append(f"{iommu} DMA after unmap: {v} is {got}, expected {w}"
                         + (" (the negative control was NOT caught)" if v != "base" and w == "stale" else ""))
    if report["oracle"][iommu].get("negative-control") == 0:
        fails.append(f"{iommu} release-order oracle: the negative control "
                     "released grants before their IOTLB flush unreported")
    return fails


def check_ats(mine, series, iommu):
    """With an ATS device (one, dom0's): every unmap phase invalidates its
    device IOTLB.  Base: one 4K invalidation per page unmapped (contiguous
    frames).  Patched: no more device invalidations than IOTLB ones, none
    of everything, covering the N pages of contiguous frames, and within
    the density rule's bound."""
    fails = []
    for r in mine:
        if r["phase"] != "unmap":
            continue
        n, v = r["n"], r["variant"]
        tag = f"{iommu} {v} n={n} stride={r['stride']} unmap"
        if r["dev_iotlb_inv"] == 0:
            fails.append(f"{tag}: no device-IOTLB invalidation (ATS not "
                         "exercised)")
        elif v == "base" and r["stride"] == 1 and (
                r["dev_iotlb_inv"] != n or r["dev_iotlb_pages"] != n):
            fails.append(f"{tag}: {r['dev_iotlb_inv']} device invalidations "
                         f"of {r['dev_iotlb_pages']} pages, expected {n} of 1")
        elif v == "patched" and series:
            inv = invalidations(r)
            bound = density_bound(r["dev_iotlb_inv"], n)
            if r["dev_iotlb_inv"] > inv:
                fails.append(f"{tag}: {r['dev_iotlb_inv']} device "
                             f"invalidations > {inv} IOTLB ones")
            if r["dev_iotlb_pages"] > bound:
                fails.append(f"{tag}: device invalidations cover "
                             f"{r['dev_iotlb_pages']} pages > {bound} "
                             "(density rule)")
            if r["stride"] == 1 and (r["dev_iotlb_all"] or
                                     r["dev_iotlb_pages"] < n):
                fails.append(f"{tag}: device invalidations cover "
                             f"{r['dev_iotlb_pages']} pages (all: "
                             f"{r['dev_iotlb_all']}), expected N to "
                             "the bound")
    return fails


def check_p2m(report, series, iommu=None):
    """Thresholds of a machine without IOMMU (Bochs: VMX+EPT; QEMU's
    machine "none"): p2m TLB flush requests in the unmap phase, base = N,
    patched 1 to ceil(N/32)."""
    fails = []
    seen = set()
    for r in report["runs"]:
        if r["phase"] != "unmap" or iommu and r["iommu"] != iommu:
            continue
        n, v = r["n"], r["variant"]
        seen.add(v)
        tag = f"{v} n={n} stride={r['stride']} unmap"
        if r["p2m_tlb_flushes"] < 0:
            fails.append(f"{tag}: no p2m flush counter in the log")
        elif v == "base" and r["p2m_tlb_flushes"] != n:
            fails.append(f"{tag}: p2m_tlb_flushes = {r['p2m_tlb_flushes']}, "
                         f"expected {n}")
        elif v == "patched" and series and \
                r["p2m_tlb_flushes"] > math.ceil(n / 32):
            fails.append(f"{tag}: p2m_tlb_flushes = {r['p2m_tlb_flushes']} "
                         f"> {math.ceil(n / 32)}")
        elif v == "patched" and series and r["p2m_tlb_flushes"] == 0 \
                and n >= 1:
            fails.append(f"{tag}: no p2m flush for {n} unmaps")
    for v in ("base", "patched"):
        if v not in seen:
            fails.append(f"{v}: no unmap phase in the log")
    # The negative control (the series with the batch's p2m flush
    # dropped), wherever one ran, must be reported by the oracle.
    for i, o in report["oracle"].items():
        if (iommu is None or i == iommu) and o.get("negative-control") == 0:
            fails.append(f"{i} release-order oracle: the negative control "
                         "released grants before their p2m flush unreported")
    return fails


if __name__ == "__main__":
    main()
