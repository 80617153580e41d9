#!/usr/bin/env python3
"""Merge a base and a patched kit run into the tables of a cover letter.

Usage: compare.py BASE.json PATCHED.json [--json OUT]

Each file is one boot's result in the format "pg-kit-run/1" (build,
host, date, unmap rounds, torture, netback).  Printed on stdout:

- the host and the two builds;
- Xen's counters for one unmap of each round, base against patched
  (IOTLB invalidations, domain-wide ones, pages covered per grant,
  IOMMU waits, p2m TLB flushes, flush IPI rounds; "-" when a counter is
  not available, a trailing "*" when they varied between repetitions).
  Left out, with a note, when the patched build is a release build
  without counters (all -1);
- the unmap hypercall time of each round: median +/- interquartile
  range / median (statistics.quantiles, n=4, "inclusive"; 0 with fewer
  than 2 samples) and the median's %change, patched against base; "-"
  for a round without times (the workload times an unmap only when the
  hypercall ran in it);
- torture: cases passed and oracle reports of each build, when both
  files have it, and the first problems of a run that failed;
- netback: mean Gbit/s +/- relative sample standard deviation and the
  means' %change per direction and stream count, then the flushes per
  MB of each build, when both files have it.

--json OUT also writes the merged data: both inputs' rows paired with
the computed medians, spreads (fractions), means, rsd (fractions) and
change_pct (%change; null when the base value is 0).

Refused (a message on stderr, exit status 2): a file missing, not JSON,
not "pg-kit-run/1", or with a field missing or of the wrong type; BASE
not a build named "base" or PATCHED not "patched" (or "base-release",
"patched-release", the kit's release builds); the files from
different hosts (name, cpu, iommu or hap) or of a different
series_base or tree; rounds (N, stride) or netback rows present in one
file only, or twice in one; a file without unmap rounds unless it has
netback rows (a release build: netback only); netback in only one file
(rerun the missing part), or from a debug and a release build.
"""
import argparse
import json
import math
import statistics
import sys

FORMAT = "pg-kit-run/1"
COUNTS = ("hypercalls", "inv", "dom", "pages", "wait", "p2m", "ipi")
DIRS = {"domU-dom0": "domU to dom0", "domU-domU": "domU to domU",
        "dom0-domU": "dom0 to domU"}
SAME_HOST = ("name", "cpu", "iommu", "hap")
SAME_BUILD = ("series_base", "tree")


class Refuse(Exception):
    pass


# --- reading and checking a file

def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def is_num(x):
    return (isinstance(x, (int, float)) and not isinstance(x, bool)
            and math.isfinite(x))


def check(ok, where, what):
    if not ok:
        raise Refuse(f"{where}: {what}")


def fields(obj, where, spec):
    """Check that obj is an object whose keys of spec pass their test;
    where is "FILE: a.b" (or "FILE:" for the file's top level)."""
    check(isinstance(obj, dict), where, "not an object")
    sep = " " if where.endswith(":") else "."
    for key, (test, what) in spec.items():
        check(key in obj, where.rstrip(":"), f"no {key!r}")
        check(test(obj[key]), f"{where}{sep}{key}", f"not {what}")


STR = (lambda x: isinstance(x, str), "a string")
BOOL = (lambda x: isinstance(x, bool), "true or false")
POS = (lambda x: is_int(x) and x >= 1, "an integer >= 1")
COUNT = (lambda x: is_int(x) and x >= -1, "an integer >= -1")
NUM = (is_num, "a number")
TIMES = (lambda x: isinstance(x, list)
         and all(is_num(v) and v >= 0 for v in x), "a list of numbers >= 0")
SAMPLES = (lambda x: TIMES[0](x) and x, "a non-empty list of numbers >= 0")
LIST = (lambda x: isinstance(x, list), "a list")
OBJ = (lambda x: isinstance(x, dict), "an object")


def load(path):
    try:
        with open(path) as f:
            run = json.load(f)
    except OSError as e:
        raise Refuse(f"{path}: cannot read: {e.strerror}")
    except (ValueError, UnicodeDecodeError) as e:
        raise Refuse(f"{path}: not JSON: {e}")
    check(isinstance(run, dict) and run.get("format") == FORMAT, path,
          f'not a kit run (format "{FORMAT}")')
    fields(run, f"{path}:",
           {"build": OBJ, "host": OBJ, "date": STR, "unmap": LIST})
    fields(run["build"], f"{path}: build",
           dict.fromkeys(("name", "config", "series_base", "xen_version",
                          "build_id", "tree"), STR))
    fields(run["host"], f"{path}: host",
           {**dict.fromkeys(("name", "cpu", "iommu", "hap", "kernel"), STR),
            "cpus": POS, "dom0_vcpus": POS, "iommu_pt_shared": BOOL})
    check(run["unmap"] or run.get("netback"), f"{path}: unmap",
          "no rounds (and no netback)")
    for i, r in enumerate(run["unmap"]):
        where = f"{path}: unmap[{i}]"
        fields(r, where, {"n": POS, "stride": POS, "counts": OBJ,
                          "counts_vary": BOOL, "us": TIMES})
        fields(r["counts"], f"{where}.counts",
               dict.fromkeys(COUNTS, COUNT))
    t = run.get("torture")
    if t is not None:
        fields(t, f"{path}: torture", {"pass": BOOL, "cases": LIST})
        check(all(isinstance(x, str) for x in t.get("problems", [])),
              f"{path}: torture.problems", "not a list of strings")
        for i, c in enumerate(t["cases"]):
            fields(c, f"{path}: torture.cases[{i}]",
                   {"case": STR, "pass": BOOL, "pages": COUNT,
                    "oracle": (lambda x: is_int(x) and x >= 0,
                               "an integer >= 0")})
    nb = run.get("netback")
    if nb is not None:
        check(isinstance(nb, list), f"{path}: netback", "not a list")
        for i, r in enumerate(nb):
            fields(r, f"{path}: netback[{i}]",
                   {"dir": (DIRS.__contains__, "one of " + ", ".join(DIRS)),
                    "streams": POS, "gbps": SAMPLES, "flushes_per_mb": NUM})
    return run


# --- the numbers

def frames(stride):
    return "contig." if stride == 1 else f"1 in {stride}"


def round_name(key):
    return f"N={key[0]} {frames(key[1])}"


def nb_name(key):
    return f"{DIRS[key[0]]}, {streams(key[1])}"


def streams(s):
    return f"{s} stream" + ("s" if s > 1 else "")


def change(base, patched):
    """Percent change of patched against base; None if base is 0 or
    either is None."""
    if not base or patched is None:
        return None
    return 100 * (patched - base) / base


def median(us):
    return statistics.median(us) if us else None


def spread(us):
    """Interquartile range / median; 0 with fewer than 2 samples, None
    with a median of 0."""
    if len(us) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(us, n=4, method="inclusive")
    med = statistics.median(us)
    return (q3 - q1) / med if med else None


def rsd(g):
    """Sample standard deviation / mean; 0 with one sample or mean 0."""
    mean = statistics.mean(g)
    return statistics.stdev(g) / mean if len(g) > 1 and mean else 0.0


def keyed(rows, key, name, path, what):
    """rows by key, refusing a key that appears twice."""
    out = {}
    for r in rows:
        k = key(r)
        check(k not in out, path, f"{what} {name(k)} twice")
        out[k] = r
    return out


def paired(base, patched, paths, key, name, what):
    """Pairs of base's and patched's rows in base's order; refuses rows
    present in one file only, listing them."""
    b = keyed(base, key, name, paths[0], what)
    p = keyed(patched, key, name, paths[1], what)
    only = [f"only in {which}: " + ", ".join(name(k) for k in ks)
            for which, ks in (("base", [k for k in b if k not in p]),
                              ("patched", [k for k in p if k not in b]))
            if ks]
    check(not only, f"{what}s differ", "; ".join(only))
    return [(k, b[k], p[k]) for k in b]


def merge(base, patched, paths):
    """The merged data of the two runs (what --json writes)."""
    for run, want, path in ((base, "base", paths[0]),
                            (patched, "patched", paths[1])):
        name = run["build"]["name"]
        check(name in (want, f"{want}-release"), path,
              f'build "{name}", expected "{want}" (arguments: BASE PATCHED)')
    for part, keys in (("host", SAME_HOST), ("build", SAME_BUILD)):
        diff = [f"{k} {base[part][k]!r} against {patched[part][k]!r}"
                for k in keys if base[part][k] != patched[part][k]]
        check(not diff, f"base and patched are not from the same {part}",
              "; ".join(diff))
    has = [w for w, r in (("base", base), ("patched", patched))
           if r.get("netback") is not None]
    if len(has) == 1:
        raise Refuse(f"netback: only in {has[0]}: rerun it for the other "
                     "build")
    cb, cp = base["build"]["config"], patched["build"]["config"]
    check(not has or cb == cp, "netback",
          f"base is a {cb} build, patched a {cp} build: compare "
          "throughput of like builds")

    counts_shown = not (patched["build"]["config"] == "release" and all(
        v == -1 for r in patched["unmap"] for v in r["counts"].values()))
    rounds = []
    for (n, stride), b, p in paired(
            base["unmap"], patched["unmap"], paths,
            lambda r: (r["n"], r["stride"]), round_name, "round"):
        row = {"n": n, "stride": stride, "frames": frames(stride)}
        for which, r in (("base", b), ("patched", p)):
            row[which] = {**r, "median": median(r["us"]),
                          "spread": spread(r["us"])}
        row["change_pct"] = change(row["base"]["median"],
                               row["patched"]["median"])
        rounds.append(row)

    netback = None
    if base.get("netback") is not None:
        order = list(DIRS)
        pairs = paired(base["netback"], patched["netback"], paths,
                       lambda r: (r["dir"], r["streams"]), nb_name,
                       "netback row")
        netback = []
        for (d, s), b, p in sorted(pairs, key=lambda x: (
                order.index(x[0][0]), x[0][1])):
            row = {"dir": d, "streams": s}
            for which, r in (("base", b), ("patched", p)):
                row[which] = {**r, "mean": statistics.mean(r["gbps"]),
                              "rsd": rsd(r["gbps"])}
            row["change_pct"] = change(row["base"]["mean"],
                                   row["patched"]["mean"])
            netback.append(row)

    return {"format": "pg-kit-compare/1",
            "host": base["host"],
            "host_patched": patched["host"],
            "builds": {w: {**r["build"], "date": r["date"]}
                       for w, r in (("base", base), ("patched", patched))},
            "counts_shown": counts_shown,
            "unmap": rounds,
            "torture": {"base": base.get("torture"),
                        "patched": patched.get("torture")},
            "netback": netback}


# --- the tables

COUNTS_HEAD = (
    "                           base                         patched",
    "  frames     N  inv dom  pg/N wait  p2m  ipi  inv dom  pg/N wait"
    "  p2m  ipi")


def fmt_counts(c, n):
    d = lambda k, w: f"{'-' if c[k] == -1 else c[k]:>{w}}"
    pg = "-" if c["pages"] == -1 else f"{c['pages'] / n:.1f}"
    return (d("inv", 5) + d("dom", 4) + f"{pg:>6}" + d("wait", 5)
            + d("p2m", 5) + d("ipi", 5))


def fmt_change(c, whole_from=None):
    if c is None:
        return "-"
    if whole_from is not None and abs(c) >= whole_from:
        return f"{c:+.0f}%"
    return f"{c:+.1f}%"


def fmt_gbps(x):
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def header(m):
    h, hp = m["host"], m["host_patched"]
    shared = "shared with" if h["iommu_pt_shared"] else "apart from"
    out = [f"  host:    {h['name']}: {h['cpu']}, {h['cpus']} CPUs",
           f"           IOMMU {h['iommu']}, HAP {h['hap']}, IOMMU page "
           f"tables {shared} the p2m",
           f"           dom0 {h['dom0_vcpus']} vCPUs, kernel {h['kernel']}"]
    for k in ("cpus", "iommu_pt_shared", "dom0_vcpus", "kernel"):
        if h[k] != hp[k]:
            out.append(f"  note:    {k} differs: base {json.dumps(h[k])}"
                       f", patched {json.dumps(hp[k])}")
    for w, b in m["builds"].items():
        out += [f"  {w + ':':8} {b['config']} build, "
                f"Xen {b['xen_version']}, run {b['date']}",
                f"           build id {b['build_id']}"]
    b = m["builds"]["base"]
    out.append(f"  series:  on {b['series_base']}, tree {b['tree']}")
    return out


def counts_table(m):
    if not m["unmap"]:
        return []
    if not m["counts_shown"]:
        return ["  counts: patched is a release build (no counters)"]
    out = ["  Xen's counters for one unmap: IOTLB invalidations, "
           "domain-wide ones,", "  pages covered per grant, IOMMU waits, "
           "p2m TLB flushes, flush IPI rounds", *COUNTS_HEAD]
    vary = False
    for r in m["unmap"]:
        star = r["base"]["counts_vary"] or r["patched"]["counts_vary"]
        vary |= star
        out.append(f"  {r['frames']:<8}{r['n']:>4}"
                   + fmt_counts(r["base"]["counts"], r["n"])
                   + fmt_counts(r["patched"]["counts"], r["n"])
                   + (" *" if star else ""))
    if vary:
        out.append("  * counts differed between repetitions")
    return out


def time_table(m):
    if not m["unmap"]:
        return []
    reps = sorted({len(r[w]["us"]) for r in m["unmap"]
                   for w in ("base", "patched")})
    rr = str(reps[0]) if len(reps) == 1 else f"{reps[0]} to {reps[-1]}"
    out = ["  unmap hypercall time, us: median +/- interquartile range /",
           f"  median, over {rr} repetitions",
           f"  {'frames':<8}{'N':>4}{'base':>10}{'':8}{'patched':>10}{'':8}"
           f"{'%change':>8}"]

    def col(s):
        if s["median"] is None:
            return f"{'-':>10}"
        sp = "-" if s["spread"] is None else f"{100 * s['spread']:.0f}%"
        return f"{s['median']:10.1f} +/-{sp}"
    for r in m["unmap"]:
        out.append(f"  {r['frames']:<8}{r['n']:>4}{col(r['base']):18}"
                   f"{col(r['patched']):18}{fmt_change(r['change_pct']):>8}")
    return out


def torture_lines(m):
    has = [w for w, t in m["torture"].items() if t is not None]
    if len(has) < 2:
        return [f"  torture: only in {w}, not shown" for w in has]
    out = []
    for w, t in m["torture"].items():
        ok = sum(c["pass"] for c in t["cases"])
        out.append(f"  torture: {w} {ok}/{len(t['cases'])} cases passed, "
                   f"{sum(c['oracle'] for c in t['cases'])} oracle reports"
                   + ("" if t["pass"] else " (run failed)"))
        # why, as runlog.py found it (the first few)
        out += [f"    {p}" for p in t.get("problems", [])[:3]]
    return out


def netback_table(m):
    out = [f"  {'':17}{'base':14}{'patched':14}{'%change':>7}"]
    col = lambda s: f"{fmt_gbps(s['mean'])} +/-{100 * s['rsd']:.0f}%"
    flushes = ["  flushes per MB", f"  {'':17}{'base':>8}{'patched':>9}"]
    f = lambda x: "-" if x == -1 else f"{x:.1f}"
    last = None
    for r in m["netback"]:
        if r["dir"] != last:
            out.append(f"  {DIRS[r['dir']]}")
            flushes.append(f"  {DIRS[r['dir']]}")
            last = r["dir"]
        label = f"    {streams(r['streams']):15}"
        out.append(f"{label}{col(r['base']):14}{col(r['patched']):14}"
                   f"{fmt_change(r['change_pct'], 100):>7}")
        flushes.append(f"{label}{f(r['base']['flushes_per_mb']):>8}"
                       f"{f(r['patched']['flushes_per_mb']):>9}")
    return ["  netback, Gbit/s: mean +/- relative standard deviation", *out,
            "", *flushes]


def report(m):
    parts = [header(m), counts_table(m), time_table(m), torture_lines(m)]
    if m["netback"] is not None:
        parts.append(netback_table(m))
    return "\n\n".join("\n".join(p) for p in parts if p) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Merge a base and a patched kit run into the tables "
        "of a cover letter.")
    ap.add_argument("base", metavar="BASE.json")
    ap.add_argument("patched", metavar="PATCHED.json")
    ap.add_argument("--json", metavar="OUT", help="write the merged data")
    a = ap.parse_args(argv)
    try:
        base, patched = load(a.base), load(a.patched)
        m = merge(base, patched, (a.base, a.patched))
        text = report(m)
        if a.json:
            try:
                with open(a.json, "w") as f:
                    json.dump(m, f, indent=1)
                    f.write("\n")
            except OSError as e:
                raise Refuse(f"{a.json}: cannot write: {e.strerror}")
    except Refuse as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
