#!/usr/bin/env python3
"""pg-kit run's report: the unmap phases of R runs of the workload (gntpg's
PG-END lines, workload/README.md) as one JSON file of format
"pg-kit-run/1" (compare.py reads two of them) and the table of `make`
for the running build, from Xen's own counters (on hardware there is no
emulator to count the descriptors):

  inv   IOTLB invalidations (pg_iotlb_page + pg_iotlb_domain +
        pg_iotlb_global), dom: how many of them domain-wide or global
  pg/N  pages the page-selective ones covered per page unmapped
  wait  IOMMU waits, p2m: guest TLB flushes of p2m changes, ipi: flush
        IPI rounds; us: the unmap hypercall's time, median of the runs

Counts must be the same in every run of a round; where they are not,
the round says so (counts_vary) and the table marks it.  A run that
stopped (no PG-DONE) or a round missing from a run is an error.

--torture TLOG: dom0's kernel log of the torture module (its PG-T lines)
followed by Xen's log of the same time (pg-kit cuts it at a marker): each
case passes if the module says so and the run passes if every case did,
the module finished (PG-T-END) having run the manifest's torture_cases
with dom0's --vcpus as the torture's own rule has it (harness/problems.py,
incomplete()), Xen printed no oracle report
(pg-oracle:), neither log holds a line of harness/problems.py's list (a
Xen assertion, panic, WARN or failed IOMMU flush, a dom0 oops), and the
oracle's totals are all there.
The module asks Xen for them (pg-oracle-stats:) once before the first
case and once before each case's result line, so the kth case's counts
are the difference between the (k+1)th and the kth line of totals,
whether Xen's lines are interleaved with dom0's or follow them: N cases
need exactly N+1 lines, each with every key (STAT_KEYS).  As in
torture-report.py, the violations the oracle counted in a case fail
it even where its printing was rate-limited, and some case must have
flushed while the domain was dirty on 2 or more CPUs (dirty2..dirty4),
without which a flush missing a CPU could not be seen.  A line of pg-kit
("pg-kit: ...", such as Xen's log being lost) fails the run.  There is
no DMA detector (QEMU's edu device only): the module's CPU and race
detectors and the oracle decide.

--netback NBLOG: the netback benchmark's output (bench/netback/
dom0-bench.py's NB- lines, domU to dom0): per stream count the Gbit/s of
each repetition (what iperf3's receiver got) and flushes per MB (10^6
bytes received), IOTLB invalidations plus p2m TLB flushes over all the
repetitions, as `make bench` counts them; -1 without Xen's counters (a
release build, whose file may then have netback alone, without LOG).
Every stream count must have its repetitions, and the run its NB-DONE.

The exit is non-zero when the torture failed (its JSON written first).

usage: runlog.py --build B --config C --manifest M --iommu I --hap H
                 --shared S --cpus N --vcpus V --reps R --out DIR
                 [--torture TLOG]
                 [--netback NBLOG] [LOG]
"""
import argparse
import datetime
import json
import os
import platform
import re
import sys

import compare  # beside this file, in the kit as in kit/
# beside this file in the kit (harness/kit.sh copies it), in harness/ here
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "..", "harness"))
from problems import END, PROBLEM_PATTERNS, incomplete  # noqa: E402

COUNTS = {"hypercalls": ("hypercalls",),
          "inv": ("pg_iotlb_page", "pg_iotlb_domain", "pg_iotlb_global"),
          "dom": ("pg_iotlb_domain", "pg_iotlb_global"),
          "pages": ("pg_iotlb_pages",), "wait": ("pg_iotlb_wait",),
          "p2m": ("pg_p2m_tlb_flush",), "ipi": ("pg_flush_ipi",)}


def fail(msg):
    print(f"runlog: error: {msg}", file=sys.stderr)
    sys.exit(1)


def parse(path, reps):
    runs, cur = [], None
    for line in open(path, errors="replace"):
        line = line.strip()
        if line.startswith("PG-START"):
            cur = {}
            runs.append(cur)
        elif line.startswith("PG-END") and cur is not None:
            kv = dict(re.findall(r"(\w+)=(\S+)", line))
            if kv.get("phase") != "unmap":
                continue
            key = (int(kv["n"]), int(kv.get("stride", 1)))
            cur[key] = kv
        elif line.startswith("PG-DONE") and cur is not None:
            cur["done"] = True
        elif line.startswith("PG-ERROR"):
            fail(f"{path}: {line}")
    if len(runs) != reps or not all(r.pop("done", False) for r in runs):
        fail(f"{path}: {reps} complete runs expected, found "
             f"{sum(1 for r in runs if r.get('done'))} of {len(runs)}")
    return runs


def rounds(runs):
    order = list(runs[0])
    out = []
    for key in order:
        per = []
        for i, r in enumerate(runs, 1):
            if key not in r:
                fail(f"run {i} has no unmap of n={key[0]} stride={key[1]}")
            kv = r[key]
            per.append(({c: (sum(int(kv[k]) for k in ks)
                             if all(k in kv for k in ks) else -1)
                         for c, ks in COUNTS.items()},
                        int(kv["unmap_ns"]) / 1000 if "unmap_ns" in kv
                        else None))
        counts = [p[0] for p in per]
        out.append({"n": key[0], "stride": key[1], "reps": len(per),
                    "counts": counts[0],
                    "counts_vary": any(c != counts[0] for c in counts),
                    "us": [round(p[1], 1) for p in per if p[1] is not None]})
    return out


CASE = re.compile(r"PG-T case=(\S+) n=(\d+) rc=(-?\d+) want=(-?\d+) "
                  r"pages=(\d+) .* result=(\w+)")
# The oracle's totals, with the keys harness/torture-report.py reads: the
# kit's debug builds have every oracle patch of test-patches/instrument/
# (0002, 0004, 0005), so a line without one of them is a problem, never 0.
STATS = re.compile(r"pg-oracle-stats: (.*)$")
STAT_KEYS = ("releases", "frees", "bad_tlb", "bad_iotlb", "bad_free",
             "unmap_flushes", "narrow", "dirty1", "dirty2", "dirty3", "dirty4",
             "dev_invs", "dev_multi", "dev_wide", "dev_short", "pt_queued",
             "bad_stale")
VIOLATIONS = ("bad_tlb", "bad_iotlb", "bad_free", "bad_stale")


def multi_cpu(s):
    return s["dirty2"] + s["dirty3"] + s["dirty4"]


def oracle_stats(text, problems):
    """The totals of one pg-oracle-stats line, or None (and a problem) if
    a required key is missing or a value is not a number."""
    kv, ok = {}, True
    for k, v in re.findall(r"(\w[\w-]*)=(\S+)", text):
        try:
            kv[k] = int(v)
        except ValueError:
            problems.append(f"pg-oracle-stats: cannot read {k}={v}")
            ok = False
    missing = [k for k in STAT_KEYS if k not in kv]
    if missing:
        problems.append("pg-oracle-stats without " + ", ".join(missing)
                        + ": " + text.strip()[:160])
    if missing or not ok:
        return None
    return {k: kv[k] for k in STAT_KEYS}


def torture(path, requested, vcpus):
    cases, stats, lines, bad, end = [], [], 0, [], None
    for line in open(path, errors="replace"):
        m = CASE.search(line)
        if m:
            cases.append({"case": m.group(1), "pages": int(m.group(5)),
                          "pass": m.group(6) == "pass", "oracle": 0,
                          "oracle_counts": None})
        m = END.search(line)
        if m:
            end = (int(m.group(5)), int(m.group(7)))
        elif "PG-T-END" in line:
            bad.append("a PG-T-END that does not parse: " + line.strip())
        m = STATS.search(line)
        if m:
            stats.append(oracle_stats(m.group(1), bad))
        if "pg-oracle: " in line:
            # Where Xen's lines follow dom0's they all land on the last
            # case; the oracle's counts below place them.
            lines += 1
            if cases:
                cases[-1]["oracle"] += 1
        for pat, what in PROBLEM_PATTERNS:
            if pat.search(line):
                bad.append(f"{what}: {line.strip()[:200]}")
        if line.startswith("pg-kit: "):
            bad.append(line.strip()[:200])
    if len(stats) != len(cases) + 1:
        bad.append(f"{len(stats)} lines of the oracle's totals "
                   f"(pg-oracle-stats) for {len(cases)} cases, "
                   f"{len(cases) + 1} expected (one before the first case, "
                   "one per case): Xen's log of the run is missing or cut")
    elif None not in stats:
        for c, before, after in zip(cases, stats, stats[1:]):
            d = {k: after[k] - before[k] for k in after}
            if any(v < 0 for v in d.values()):
                bad.append(f"the oracle's totals went down in case "
                           f"{c['case']}: its lines are out of order")
            c["oracle_counts"] = d
            # what the oracle counted, printed or not (it rate-limits)
            c["oracle"] = max(0, sum(d[k] for k in VIOLATIONS))
        if cases and not any(multi_cpu(c["oracle_counts"]) > 0
                             for c in cases):
            bad.append("no case flushed while the domain was dirty on 2 or "
                       "more CPUs (dirty2..dirty4): a flush missing a CPU "
                       "could not be seen")
        # printed reports the counts do not place: the run's last case
        extra = lines - sum(c["oracle"] for c in cases)
        if cases and extra > 0:
            cases[-1]["oracle"] += extra
    bad += incomplete([(c["case"], c["pass"]) for c in cases], requested,
                      end, vcpus)
    oracle = max(lines, sum(c["oracle"] for c in cases))
    ok = bool(cases) and end is not None and not oracle and not bad and \
        all(c["pass"] for c in cases)
    reach = sum(multi_cpu(c["oracle_counts"]) for c in cases
                if c["oracle_counts"])
    print(f"\n  torture: {sum(c['pass'] for c in cases)}/{len(cases)} cases "
          f"passed, {sum(c['pages'] for c in cases)} pages, {oracle} oracle "
          f"reports, {reach} flushes with the domain dirty on 2+ CPUs"
          f"{'' if end else ', the module did not finish'}"
          " (no DMA detector on hardware)")
    for b in bad:
        print(f"  {b}")
    if not ok:
        print("  torture: FAILED")
    return {"pass": ok, "cases": cases, "finished": end is not None,
            "problems": bad}


FLUSHES = ("pg_iotlb_page", "pg_iotlb_domain", "pg_iotlb_global",
           "pg_p2m_tlb_flush")


def netback(path, reps):
    runs, done = {}, False
    for line in open(path, errors="replace"):
        line = line.strip()
        if line.startswith("NB-ERROR"):
            fail(f"{path}: {line}")
        done |= line.startswith("NB-DONE")
        if not line.startswith("NB-RUN "):
            continue
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        runs.setdefault((kv["dir"], int(kv["streams"])), []).append(kv)
    if not done or not runs:
        fail(f"{path}: the netback benchmark did not finish (no NB-DONE)")
    rows = []
    print("\n  netback: Gbit/s (mean of the repetitions), flushes per MB")
    for (d, streams), rs in runs.items():
        if len(rs) != reps:
            fail(f"{path}: {d} {streams} streams: {len(rs)} of {reps} runs")
        mb = sum(int(r["bytes"]) for r in rs) / 1e6
        counted = all(k in r for r in rs for k in FLUSHES)
        fl = sum(int(r[k]) for r in rs for k in FLUSHES) if counted else -1
        row = {"dir": d, "streams": streams,
               "gbps": [int(r["bps"]) / 1e9 for r in rs],
               "flushes_per_mb": round(fl / mb, 3) if counted and mb else -1}
        print(f"  {compare.DIRS[d]}, {compare.streams(streams):>10}: "
              f"{compare.fmt_gbps(sum(row['gbps']) / reps):>6} Gbit/s, "
              + ("-" if fl == -1 else f"{row['flushes_per_mb']:.1f}")
              + " flushes per MB")
        rows.append(row)
    return rows


def table(rows, build, iommu):
    print(f"\n  {build} ({iommu}): unmap of N grants, Xen's counts per run;"
          " us: unmap time, median")
    print("  frames     N  inv dom  pg/N wait  p2m  ipi        us")
    for r in rows:
        us = compare.median(r["us"])
        print(f"  {compare.frames(r['stride']):<8}{r['n']:>4}"
              + compare.fmt_counts(r["counts"], r["n"])
              + f" {'-' if us is None else f'{us:.1f}':>9}"
              + (" *" if r["counts_vary"] else ""))
    if any(r["counts_vary"] for r in rows):
        print("  * counts differed between repetitions")


def main():
    ap = argparse.ArgumentParser()
    for a in ("build", "config", "manifest", "iommu", "hap", "shared",
              "cpus", "vcpus", "out"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--reps", type=int, required=True)
    ap.add_argument("--torture", default=None)
    ap.add_argument("--netback", default=None)
    ap.add_argument("log", nargs="?")
    a = ap.parse_args()
    m = json.load(open(a.manifest))
    b = [x for x in m["builds"] if x["name"] == a.build]
    if not b:
        fail(f"{a.build} is not a build of {a.manifest}")
    if not a.log and not a.netback:
        fail("nothing to report: no workload log and no --netback")
    rows = rounds(parse(a.log, a.reps)) if a.log else []
    cpu = "unknown"
    for line in open(os.environ.get("PG_KIT_CPUINFO", "/proc/cpuinfo")):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    now = datetime.datetime.now(datetime.timezone.utc)
    host = platform.node()
    doc = {"format": "pg-kit-run/1",
           "build": {"name": a.build, "config": a.config,
                     "series_base": m["series_base"],
                     "xen_version": m["xen_version"],
                     "build_id": b[0]["build_id"], "tree": m["tree"]},
           "host": {"name": host, "cpu": cpu, "cpus": int(a.cpus),
                    "iommu": a.iommu, "hap": a.hap,
                    "iommu_pt_shared": a.shared == "true",
                    "dom0_vcpus": int(a.vcpus),
                    "kernel": platform.release()},
           "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "unmap": rows, "torture": None, "netback": None}
    if rows:
        table(rows, a.build, a.iommu)
    if a.torture:
        cases = m.get("torture_cases")
        doc["torture"] = torture(a.torture, cases and cases.split("."),
                                 int(a.vcpus))
    if a.netback:
        doc["netback"] = netback(a.netback, a.reps)
    out = os.path.join(a.out, f"{a.build}-{host}-"
                       f"{now.strftime('%Y%m%dT%H%M%SZ')}.json")
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"\n  written: {out}")
    if doc["torture"] and not doc["torture"]["pass"]:
        fail("the torture failed")


if __name__ == "__main__":
    main()
