#!/usr/bin/env python3
"""Netback benchmark report: parse the serial logs of the boots of each
build (NB-RUN lines of bench/netback/dom0-bench.py), print the table in
the layout of the series' cover letter, write the JSON (--json).

Usage: report.py --json OUT [--meta K=V ...] VARIANT=LOG [VARIANT=LOG ...]
VARIANT is base or patched; a variant may have several logs (boots).

Per row and build: mean of the runs' Gbit/s (received, as iperf3's
receiver reports it) and their relative standard deviation (sample
standard deviation / mean); flushes per MB (10^6 bytes received) are
the build's total over the row's runs of Xen's counters, IOTLB
invalidations (page-, domain- and global-selective) plus guest TLB
flushes of p2m changes, divided by the total MB.  For domU to dom0 also
the IOTLB invalidations per unmap batch, the pages they cover per page
unmapped and the domain-wide ones.

Exit status 1, with the JSON's "problems" (a line of a log: those of
harness/problems.py and the bench's own, BENCH_PROBLEMS) or "failures"
(the series' rule not held, per machine and row) saying why, if there
is any, or if no run was read; else 0.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "harness"))
import bootlog  # noqa: E402
from problems import PROBLEM_PATTERNS  # noqa: E402
from report import density_bound  # noqa: E402

DIRS = ("domU-dom0", "domU-domU", "dom0-domU")
DIR_LABEL = {"domU-dom0": "domU to dom0", "domU-domU": "domU to domU",
             "dom0-domU": "dom0 to domU"}
# A line that is a problem in the bench's logs beside PROBLEM_PATTERNS:
# an IOMMU fault (the bench has no DMA detector, so none is expected;
# not in problems.py because make's boots and the torture expect their
# detector's), dom0-bench.py's errors and the release-order oracle's
# reports.  AMD-Vi's as drivers/passthrough/amd/iommu_init.c prints it:
# "AMD-Vi: IO_PAGE_FAULT: 0000:00:04.0 d0 addr 0000000012345000 flags 0x10 PR".
BENCH_PROBLEMS = [
    (re.compile(r"DMAR:\[DMA (Read|Write)\]|vtd_dmar_fault"), "VT-d fault"),
    (re.compile(r"AMD-Vi: IO_PAGE_FAULT|amdvi_page_fault"), "AMD-Vi fault"),
    (re.compile(r"^NB-ERROR"), "benchmark error"),
    (re.compile(r"pg-oracle: "), "grant released before its flushes (oracle)"),
]
PROBLEMS = PROBLEM_PATTERNS + BENCH_PROBLEMS


# Known under emulation, not a problem (counted apart): dom0's kernel
# unmaps a domU's foreign pages (xl create) in one loop without
# rescheduling, one hypercall per page, which takes minutes here.  No
# soft lockup is a problem (problems.py); only the run's end is judged.
SOFT_LOCKUP_XL = re.compile(r"watchdog: BUG: soft lockup - CPU#\d+ stuck for \d+s! \[xl:")
# What each line needs; a line without it is a problem and left out.
NEED = {"NB-RUN": ("dir", "streams", "bps", "bytes", "secs"),
        "NB-UNMAP": ("ms", "n"), "NB-CREATE": ("secs",),
        "NB-DESTROY": ("gone_secs",)}
# AMD-Vi's invalidations per MB by what they cover (stats()).
AMD_KEYS = ("amd_4k_per_mb", "amd_2m_per_mb", "amd_1g_per_mb",
            "amd_allpages_per_mb")
FLUSH_KEYS = ("pg_iotlb_page", "pg_iotlb_domain", "pg_iotlb_global",
              "pg_p2m_tlb_flush")


def parse(path):
    runs, info, problems, done = [], {}, [], False
    info["xl_soft_lockups"] = 0
    info["unmap"], info["create"], info["destroy"] = [], [], []
    log = bootlog.BootLog(path)
    for n, line in log:
        tag = line.split(" ", 1)[0]
        if tag in NEED:
            kv = log.fields(n, line, float, keep=("dir", "phase"), need=NEED[tag])
            if kv is None:
                pass
            elif tag == "NB-RUN":
                kv["where"] = f"{path}:{n}"
                runs.append(kv)
            else:
                kv.pop("phase", None)
                info[tag[3:].lower()].append(kv)
        elif line.startswith("NB-XLINFO "):
            m = re.match(r"NB-XLINFO (\S+)\s*:\s*(.*)$", line)
            if m:
                info[m.group(1)] = m.group(2).strip()
        elif line.startswith("NB-DONE"):
            done = True
        if SOFT_LOCKUP_XL.search(line):
            info["xl_soft_lockups"] += 1
            continue
        for pat, what in PROBLEMS:
            if pat.search(line):
                problems.append(f"{path}:{n}: {what}: {line.strip()[:300]}")
    problems += log.problems
    if not done:
        problems.append(f"{path}: the benchmark did not finish (no NB-DONE)")
    return runs, info, problems


def rule_breaks(rows, per):
    """The domU to dom0 rows breaking the series' rule, judged PER grant
    or per MB as main() judges it: [(ROW, HOW)], ROW "N streams"; [] if
    none does.  Per grant a value not known (NaN) breaks it; per MB a row
    whose ratio is not known is left out, as from main()'s worst ratio."""
    out = []
    for r in rows:
        if r["direction"] != "domU-dom0":
            continue
        label = f"{r['streams']} stream" + ("s" if r["streams"] > 1 else "")
        if per == "grant":
            p2m = r["patched_p2m_per_batch"]
            b, p = r["base_iotlb_per_grant"], r["patched_iotlb_per_grant"]
            if not p2m <= 1 + 1e-9:
                out.append((label, f"patched {p2m:.2f} p2m TLB flushes per "
                                   "unmap batch (at most 1)"))
            if not (p / b if b else math.inf) <= 1 + 1e-9:
                out.append((label, f"patched {p:.2f} IOTLB invalidations "
                                   f"per grant, base {b:.2f}"))
        elif r["flush_ratio"] > 1:
            out.append((label, f"patched {r['patched_flushes_per_mb']:.1f} "
                               f"flushes per MB, base "
                               f"{r['base_flushes_per_mb']:.1f}"))
    return out


def flushes(r):
    """IOTLB invalidations plus p2m TLB flushes; NaN if a counter is
    missing (never counted as 0)."""
    return sum(r.get(k, math.nan) for k in FLUSH_KEYS)


def stats(rs):
    g = [r["bps"] / 1e9 for r in rs]
    mean = statistics.mean(g) if g else float("nan")
    rsd = (statistics.stdev(g) / mean if len(g) > 1 and mean else 0.0)
    tot = lambda k: sum(r.get(k, math.nan) for r in rs)
    div = lambda a, b: a / b if b else math.nan
    mb = tot("bytes") / 1e6
    fl = sum(flushes(r) for r in rs)
    iotlb = tot("pg_iotlb_page") + tot("pg_iotlb_domain") + tot("pg_iotlb_global")
    batches, unmapped = tot("pg_gnt_flush"), tot("pg_gnt_unmap")
    return dict(gbps=mean, rsd=rsd, runs=len(g), mb=mb,
                flushes_per_mb=div(fl, mb),
                iotlb_per_mb=div(iotlb, mb),
                p2m_per_mb=div(tot("pg_p2m_tlb_flush"), mb),
                ipi_per_mb=div(tot("pg_flush_ipi"), mb),
                iotlb_wait_per_mb=div(tot("pg_iotlb_wait"), mb),
                gnttab_hc_per_mb=div(tot("hc_grant_table_op"), mb),
                unmapped_per_mb=div(unmapped, mb),
                ms_per_mb=div(1e3 * tot("secs"), mb),
                # The IOTLB invalidations against the grant unmaps (every
                # invalidation of the run counts, not only the unmaps'):
                # per flush point of the unmap hypercalls (one per batch),
                # pages the page-selective ones cover per grant mapping
                # unmapped, and the domain-wide ones.
                unmap_batches=batches, pages_unmapped=unmapped,
                iotlb_inv_per_batch=div(iotlb, batches),
                p2m_per_batch=div(tot("pg_p2m_tlb_flush"), batches),
                p2m_per_grant=div(tot("pg_p2m_tlb_flush"), unmapped),
                ipi_per_batch=div(tot("pg_flush_ipi"), batches),
                ipi_per_grant=div(tot("pg_flush_ipi"), unmapped),
                grants_per_batch=div(unmapped, batches),
                iotlb_per_grant=div(iotlb, unmapped),
                iotlb_pages_per_page=div(tot("pg_iotlb_pages"), unmapped),
                iotlb_page_invs=tot("pg_iotlb_page"),
                iotlb_pages_covered=tot("pg_iotlb_pages"),
                iotlb_domain_wide=tot("pg_iotlb_domain") + tot("pg_iotlb_global"),
                flushes_per_grant=div(fl, unmapped),
                # AMD-Vi's page invalidations by the block they cover, and
                # its invalidations of all of the domain's pages.
                amd_4k_per_mb=div(tot("pg_iotlb_page") - tot("pg_iotlb_2m")
                                  - tot("pg_iotlb_1g"), mb),
                amd_2m_per_mb=div(tot("pg_iotlb_2m"), mb),
                amd_1g_per_mb=div(tot("pg_iotlb_1g"), mb),
                amd_allpages_per_mb=div(tot("pg_iotlb_domain"), mb))


def fmt_g(x):
    """Gbit/s as Mbit/s: emulation is three orders below the hardware."""
    m = 1e3 * x
    return f"{m:.2f}" if m < 10 else f"{m:.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--meta", action="append", default=[])
    ap.add_argument("--iommu", choices=("vt-d", "amd-vi"), default="vt-d",
                    help="the IOMMU QEMU emulated (amd-vi: invalidations "
                         "by size too)")
    ap.add_argument("--tree-base", help="the tree's base (staging, ...)")
    ap.add_argument("--describe", default="")
    ap.add_argument("--xen-version", default="")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()

    runs = {"base": [], "patched": []}
    boots = {"base": 0, "patched": 0}
    problems, info, lockups = [], {}, 0
    unmaps = {"base": [], "patched": []}
    creates = {"base": [], "patched": []}
    destroys = {"base": [], "patched": []}
    for spec in a.logs:
        v, path = spec.split("=", 1)
        rs, inf, pr = parse(path)
        runs[v] += rs
        boots[v] += 1
        problems += pr
        lockups += inf.pop("xl_soft_lockups")
        # A reading of 0 ms: both lines reached dom0-bench.py in one read.
        um = [u for u in inf.pop("unmap") if u.get("ms", 0) > 0]
        unmaps[v] += um[1:] if len(um) > 1 else um
        creates[v] += inf.pop("create")
        destroys[v] += inf.pop("destroy")
        info.setdefault(v, inf)

    # Time of one grant unmap batch (gntpg, N pages, in dom0) per build,
    # and what one flush costs in this machine: the time patched saves per
    # flush it does not issue.  The first round of each boot is left out
    # (it also pays for first-time allocations).
    unmap = {}
    for v, rest in unmaps.items():
        if not rest:
            continue
        ms = [u["ms"] for u in rest]
        fl = [flushes(u) for u in rest]
        unmap[v] = {"n": int(rest[0]["n"]), "batches": len(ms),
                    "ms_mean": statistics.mean(ms),
                    "ms_median": statistics.median(ms),
                    "flushes_mean": statistics.mean(fl)}
    if "base" in unmap and "patched" in unmap:
        b, p = unmap["base"], unmap["patched"]
        dfl = b["flushes_mean"] - p["flushes_mean"]
        unmap["us_per_flush"] = (1e3 * (b["ms_median"] - p["ms_median"]) / dfl
                                 if dfl > 0 else None)
    create = {}
    for v, cs in creates.items():
        if cs:
            create[v] = {"secs_mean": statistics.mean(c["secs"] for c in cs),
                         "flushes_mean": statistics.mean(
                             c.get("pg_iotlb_page", math.nan)
                             + c.get("pg_p2m_tlb_flush", math.nan)
                             for c in cs)}

    rows = []
    keys = sorted({(r["dir"], int(r["streams"])) for v in runs for r in runs[v]},
                  key=lambda k: (DIRS.index(k[0]) if k[0] in DIRS else 9, k[1]))
    for d, s in keys:
        st = {v: stats([r for r in runs[v] if r["dir"] == d and int(r["streams"]) == s])
              for v in runs}
        b, p = st["base"], st["patched"]
        row = {"direction": d, "streams": s,
               "base_gbps": b["gbps"], "base_rsd": b["rsd"],
               "patched_gbps": p["gbps"], "patched_rsd": p["rsd"],
               "ratio": p["gbps"] / b["gbps"] if b["gbps"] else float("nan"),
               "base_flushes_per_mb": b["flushes_per_mb"],
               "patched_flushes_per_mb": p["flushes_per_mb"],
               "base_runs": b["runs"], "patched_runs": p["runs"]}
        for v, x in st.items():
            for k in ("iotlb_per_mb", "p2m_per_mb", "ipi_per_mb",
                      "iotlb_wait_per_mb", "gnttab_hc_per_mb", "ms_per_mb",
                      "unmap_batches", "pages_unmapped", "iotlb_inv_per_batch",
                      "iotlb_pages_per_page", "iotlb_domain_wide",
                      "unmapped_per_mb", "flushes_per_grant",
                      "p2m_per_batch", "iotlb_per_grant", "p2m_per_grant",
                      "ipi_per_batch", "ipi_per_grant",
                      "grants_per_batch") + (
                          AMD_KEYS if a.iommu == "amd-vi" else ()):
                row[f"{v}_{k}"] = x[k]
        # What the saved flushes are worth in this machine's time: the
        # time per MB the patched build saved, per flush it did not issue.
        df = b["flushes_per_mb"] - p["flushes_per_mb"]
        dt = 1e3 / (b["gbps"] * 125) - 1e3 / (p["gbps"] * 125) \
            if b["gbps"] and p["gbps"] else float("nan")      # ms per MB
        row["us_saved_per_flush_saved"] = (1e3 * dt / df) if df > 0 else float("nan")
        row["flush_ratio"] = (p["flushes_per_mb"] / b["flushes_per_mb"]
                              if b["flushes_per_mb"] else float("nan"))
        row["flush_ratio_per_grant"] = (p["flushes_per_grant"] / b["flushes_per_grant"]
                                        if b["flushes_per_grant"] else float("nan"))
        rows.append(row)
        bound = density_bound(p["iotlb_page_invs"], p["pages_unmapped"])
        if p["iotlb_pages_covered"] > bound:
            problems.append(f"patched {d}, {s} streams: invalidations cover "
                            f"{p['iotlb_pages_covered']:.0f} pages > "
                            f"{bound:.0f} (density rule)")
    # The series' rule for netback's unmaps: patched issues at most one
    # p2m TLB flush per unmap batch, and never more IOTLB invalidations
    # per grant unmapped than base (the density rule splits a batch of
    # scattered frames, so there is no fixed ratio).  Per grant, not per
    # MB: how many grants a MB takes varies from boot to boot with the
    # packets' shape.  Logs without the grant counters are judged per MB
    # (patched's flushes at most base's).  A run without one of the
    # flush counters leaves the rule unjudged.
    missing = [f"{r['where']}: NB-RUN dir={r['dir']} streams={r['streams']:.0f}"
               f" has no {k}: the domU to dom0 flush bound cannot be judged"
               for v in runs for r in runs[v] if r["dir"] == "domU-dom0"
               for k in FLUSH_KEYS if k not in r]
    problems += missing
    d0 = [r for r in rows if r["direction"] == "domU-dom0"]
    per = "grant" if d0 and all(r["flush_ratio_per_grant"] == r["flush_ratio_per_grant"]
                                for r in d0) else "MB"
    key = "flush_ratio_per_grant" if per == "grant" else "flush_ratio"
    ratios = [r[key] for r in d0 if r[key] == r[key]]
    worst = max(ratios) if ratios else None
    if per == "grant":
        p2m = max(r["patched_p2m_per_batch"] for r in d0)
        iotlb = max(r["patched_iotlb_per_grant"] / r["base_iotlb_per_grant"]
                    if r["base_iotlb_per_grant"] else math.inf for r in d0)
        held = p2m <= 1 + 1e-9 and iotlb <= 1 + 1e-9
        rule = ("patched: p2m TLB flushes at most one per unmap batch, "
                "IOTLB invalidations per grant at most base's")
    else:
        p2m = iotlb = None
        held = worst is not None and worst <= 1
        rule = "per MB: patched's flushes at most base's"
    bound = {"rule": rule, "per": per, "worst_ratio": worst, "p2m_per_batch": p2m,
             "iotlb_ratio": iotlb, "held": held and not missing}
    # Whenever the rule is not held, at least one line says why.
    name = {"vt-d": "VT-d", "amd-vi": "AMD-Vi"}[a.iommu]
    failures = [f"{name} domU to dom0, {row}: the series' rule NOT held: "
                f"{how}" for row, how in rule_breaks(d0, per)
                ] if not bound["held"] else []
    if not bound["held"] and not failures:
        failures.append(f"{name} domU to dom0: the series' rule NOT held: "
                        + ("a run without a flush counter (see the problems)"
                           if missing else "no run of this direction"
                           if not d0 else "not judged"))

    nruns = min([r[k] for r in rows for k in ("base_runs", "patched_runs")] or [0])
    out = {"iommu": a.iommu, "rows": rows, "runs_per_row": nruns, "boots": boots,
           "meta": dict(m.split("=", 1) for m in a.meta),
           "xen": info.get("base", {}), "unmap_batch": unmap,
           "domU_dom0_flush_bound": bound, "domu_creation": create,
           "xl_soft_lockups": lockups,
           "domu_destroyed_while_mapped": destroys,
           "problems": problems, "failures": failures}
    if a.tree_base:
        out["tree"] = {"base": a.tree_base, "describe": a.describe,
                       "xen_version": a.xen_version}
    json.dump(out, open(a.json, "w"), indent=1, default=lambda x: None)
    # NaN is not JSON: write null instead.
    txt = open(a.json).read()
    txt = re.sub(r"\bNaN\b", "null", txt)
    open(a.json, "w").write(txt)

    meta = out["meta"]
    print(f"  iperf3 between a PVH dom0 running netback and two PVH domUs, "
          f"under emulation")
    for k in ("machine", "emulation", "xen", "dom0", "domUs", "runs"):
        if k in meta:
            print(f"  {k + ':':9} {meta[k]}")
    print(f"  shown:    mean of the runs +/- their relative standard deviation,"
          f"\n            flushes (IOTLB invalidations + p2m TLB flushes) per MB")
    print()
    print(f"  {'':17}{'base':15}{'patched':15}{'%change':>8}{'ratio':>7}"
          f"   {'flushes per MB':>17}")  # noqa: E501
    print(f"  {'':17}{'Mbit/s':15}{'Mbit/s':15}{'':>8}{'':>7}"
          f"   {'base':>8} {'patched':>8}")
    last = None
    for r in rows:
        if r["direction"] != last:
            print(f"  {DIR_LABEL.get(r['direction'], r['direction'])}")
            last = r["direction"]
        label = f"{r['streams']} stream" + ("s" if r["streams"] > 1 else "")
        bcol = f"{fmt_g(r['base_gbps'])} +/-{100 * r['base_rsd']:.0f}%"
        pcol = f"{fmt_g(r['patched_gbps'])} +/-{100 * r['patched_rsd']:.0f}%"
        chg = 100 * (r["ratio"] - 1)
        print(f"    {label:15}{bcol:15}{pcol:15}{chg:+7.1f}%{r['ratio']:7.2f}"
              f"   {r['base_flushes_per_mb']:8.1f} {r['patched_flushes_per_mb']:8.1f}")
    print()
    print(f"  domU to dom0, IOTLB invalidations against grant unmaps: per unmap"
          f"\n  batch, pages covered per page unmapped, domain-wide (count);"
          f"\n  grant mappings unmapped per MB")
    print(f"  {'':15}{'inv/batch':>15}{'pages/page':>15}{'domain-wide':>15}"
          f"{'grants/MB':>15}")
    print(f"  {'':15}" + f"{'base':>7}{'patched':>8}" * 4)
    for r in rows:
        if r["direction"] != "domU-dom0":
            continue
        label = f"{r['streams']} stream" + ("s" if r["streams"] > 1 else "")
        c = lambda k, f: (format(r[f"base_{k}"], "7" + f)
                          + format(r[f"patched_{k}"], "8" + f))
        print(f"    {label:13}{c('iotlb_inv_per_batch', '.2f')}"
              f"{c('iotlb_pages_per_page', '.2f')}{c('iotlb_domain_wide', '.0f')}"
              f"{c('unmapped_per_mb', '.0f')}")
    if a.iommu == "amd-vi":
        print()
        print("  AMD-Vi, domU to dom0, per MB: INVALIDATE_IOMMU_PAGES of a 4K"
              "\n  page, of a block up to 2M or up to 1G, of all the domain's"
              "\n  pages; p2m TLB flushes")
        print(f"  {'':15}" + "".join(f"{h:>15}" for h in
                                     ("4K", "<=2M", "<=1G", "all pages", "p2m")))
        print(f"  {'':15}" + f"{'base':>7}{'patched':>8}" * 5)
        for r in rows:
            if r["direction"] != "domU-dom0":
                continue
            label = f"{r['streams']} stream" + ("s" if r["streams"] > 1 else "")
            print(f"    {label:13}" + "".join(
                format(r[f"base_{k}"], "7.1f") + format(r[f"patched_{k}"], "8.1f")
                for k in AMD_KEYS + ("p2m_per_mb",)))
    print()
    if worst is not None:
        print(f"  domU to dom0 flushes per {'grant unmapped' if per == 'grant' else 'MB'},"
              f" patched/base: at worst "
              f"{'1/%.1f' % (1 / worst) if worst else '0'}")
        if per == "grant":
            print(f"  patched at most {p2m:.2f} p2m TLB flushes per unmap batch and"
                  f" {iotlb:.2f} of base's IOTLB invalidations per grant")
        print(f"  the series' rule ({rule}):"
              f" {'held' if bound['held'] else 'NOT held'}")
    print(f"  runs per row and build: {nruns} "
          f"(boots: base {boots['base']}, patched {boots['patched']})")
    if "base" in unmap and "patched" in unmap:
        b, p = unmap["base"], unmap["patched"]
        print(f"  one unmap batch of {b['n']} grants in dom0 (gntpg), median of "
              f"{b['batches']}/{p['batches']}: base {b['ms_median']:.1f} ms "
              f"({b['flushes_mean']:.0f} flushes), patched {p['ms_median']:.1f} ms "
              f"({p['flushes_mean']:.0f} flushes)")
        if unmap.get("us_per_flush") is not None:
            print(f"  => one flush costs ~{unmap['us_per_flush']:.0f} us "
                  f"in this emulation")
    for v, c in create.items():
        print(f"  domU creation ({v}): {c['secs_mean']:.0f} s for both domUs, "
              f"{c['flushes_mean']:.0f} flushes (dom0's foreign unmaps)")
    for v, ds in destroys.items():
        if ds:
            print(f"  u1 destroyed while netback mapped its grants ({v}): gone "
                  f"in {', '.join('%.0f' % d['gone_secs'] for d in ds)} s, "
                  f"no assertion or oracle report in {len(ds)} boot(s)"
                  + (" (but see the problems)" if problems else ""))
    if lockups:
        print(f"  dom0 soft lockup warnings in xl (foreign unmaps of domU "
              f"creation, known under emulation): {lockups}")
    for f in failures:
        print("  FAIL: " + f)
    for p in problems[:20]:
        print("  problem: " + p)
    return 1 if problems or failures or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
