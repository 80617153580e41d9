#!/usr/bin/env python3
"""The compact record of one run of the proving ground, for results/.

    record.py --what WHAT --out RECORD [--judge]
              [--stage NAME=ok|failed ...] JSON...
    record.py --defaults

JSON are the run's outputs (out/report.json, out/torture.json,
out/report-ept.json, out/torture-ept.json, bench.sh's out/netback-*.json with the batches
netback unmapped, packed; a missing one is skipped and
named in the record).  The record keeps what a reader of the READMEs and
cover letters needs to check a figure: this project's commit, the
series' mails (a hash per base), the tree, the emulators, the host, the
environment (ENV_RUN, ENV_NOTED), each stage's verdict, the unmap
phase's counts per machine and build with the rounds booted, the
torture's verdicts and cases per build with its problems.  Documents
cite a record by its file name; harness/cover-table.py prints its tables.
With --judge (recorded.sh: one stage, whose command may exit 0 on failed
checks it does not enforce), a stage given as ok is written "failed (not
enforced)" when a JSON holds a failure or a problem (judged()).

--defaults exits 1, naming each, when a variable of ENV_RUN is set, or
any other of the proving ground's (a name starting with one of
PREFIXES) but those of ENV_NOTED and ENV_WHERE (check.sh: `make check`
runs its defaults).
"""

import argparse
import datetime
import glob
import hashlib
import json
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The environment a record keeps.  `make check` runs its defaults: a
# variable that changes what it builds, boots or checks (ENV_RUN, and
# any other of PREFIXES) fails it; one that changes only how fast it
# runs, how long it waits or what it prints (ENV_NOTED) is recorded and
# printed; ENV_WHERE, where files go, is neither (a path of the machine).
ENV_RUN = ("TORTURE_VARIANTS", "TORTURE_IOMMUS", "TORTURE_CASES",
           "TORTURE_DMA", "ROUNDS", "WORKLOAD_ARGS", "KEPT_ROUNDS",
           "NEGATIVE_ARGS", "DENSITY_ARGS", "EPT_WORKLOAD_ARGS",
           "EPT_NEGATIVE_ARGS", "EPT_TORTURE_CASES", "PG_BOCHS_CPUS",
           "PG_IOMMUS", "PG_QEMU", "PG_QEMU_SMP",
           "PG_QEMU_TRACE", "XEN_CMDLINE", "PG_STALL_S",
           "REPORT_PY", "TORTURE_REPORT_PY", "TORTURE_SH", "BOOTLOG_PY",
           "COMPARE_PY", "REPRO_ROUNDS", "REPRO_DELAY", "REPRO_WARM",
           "PG_QEMU_FIX")
ENV_NOTED = ("PG_JOBS", "PG_VERBOSE", "PG_QEMU_INT", "PG_BOOT_TIMEOUT",
             "PG_BOCHS_TIMEOUT",
             "REPRO_TIMEOUT", "BENCH_BOOTS", "BENCH_REPS", "BENCH_TIME",
             "BENCH_STREAMS", "BENCH_DIRS", "BENCH_IOMMUS", "BENCH_SMPS",
             "BENCH_TCG_THREAD", "BENCH_QEMU_TRACE", "BENCH_XEN_CMDLINE",
             "BENCH_XEN_BASE", "BENCH_XEN_PATCHED", "BENCH_BOOT_TIMEOUT")
ENV_WHERE = ("PG_CACHE", "PG_BUILD", "PG_OUT")
PREFIXES = ("PG_", "TORTURE_", "EPT_", "REPRO_", "FAULT_")
COUNTS = ("hypercalls", "iotlb_inv_pages", "iotlb_inv_domain",
          "iotlb_inv_global", "iotlb_waits", "iotlb_pages_covered",
          "p2m_tlb_flushes", "flush_ipis", "dev_iotlb_inv",
          "dev_iotlb_pages")


def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              cwd=ROOT).stdout.strip()
    except OSError:
        return None


def mails(base):
    """A hash of the series' mails for BASE (what `git am` applies: not
    the cover letter, which names the record)."""
    h = hashlib.sha256()
    files = sorted(glob.glob(os.path.join(ROOT, "patches", base,
                                          "000[1-9]-*.patch")))
    for p in files:
        with open(p, "rb") as f:
            h.update(f.read())
    return {"mails": len(files), "sha256": h.hexdigest()[:16]} if files \
        else None


def host():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%d x %s" % (os.cpu_count() or 0, model)


def emulators():
    q = run(os.environ.get("PG_QEMU") or os.path.join(
        os.environ.get("PG_CACHE") or os.path.join(ROOT, "cache"),
        "qemu", "bin", "qemu-system-x86_64"), "--version")
    b = run("dpkg-query", "-W", "-f=${Version}", "bochs")
    return {"qemu": q.splitlines()[0].replace("QEMU emulator version ", "")
            if q else None, "bochs": b or None}


def boots(rep):
    """The unmap phase of make's boots, per machine and build."""
    out = {}
    for r in rep.get("runs", []):
        if r.get("phase") != "unmap":
            continue
        m = out.setdefault(r.get("iommu", "vt-d"), {})
        m.setdefault(r["variant"], []).append(
            dict({"n": r["n"], "stride": r.get("stride", 1),
                  "kept": r.get("kept", False)},
                 **{k: r[k] for k in COUNTS if k in r}))
    return {"rows": out, "dma_after_unmap": rep.get("dma_after_unmap"),
            "oracle": rep.get("oracle"), "problems": rep.get("problems", []),
            "failures": rep.get("failures", []), "rounds": rep.get("rounds"),
            "density_control": rep.get("density_control"),
            "oracle_base_sbit": rep.get("oracle_base_sbit")}


def torture(t):
    """The torture's verdict per build: the cases asked for, cases,
    pages, result (and why, when it failed); and its problems."""
    out = []
    for r in t.get("runs", []):
        out.append({k: r[k] for k in (
            "build", "variant", "iommu", "ok", "must_catch", "missed",
            "missed_cases", "caught_by", "role", "requested") if k in r} | {
            "cases": len(r.get("cases", [])),
            "pages": sum(c.get("pages", 0) for c in r.get("cases", [])),
            "caught_in": [c["case"] for c in r.get("cases", [])
                          if c.get("oracle") or not c.get("pass", True)]} |
            ({} if r.get("ok") else {"problems": r.get("problems", [])}))
    return {"ok": t.get("ok"), "builds": out,
            "problems": t.get("problems", [])}


def judged(data):
    """What a run's JSON output says failed: report.py's failures and
    problems, the torture's and the benchmark's problems and failures, a
    build of configs.sh, the torture's ok."""
    bad = list(data.get("failures", [])) + list(data.get("problems", []))
    bad += ["%s: %s" % (k, v) for k, v in data.get("builds", {}).items()
            if v != "ok"]
    if data.get("ok") is False and not bad:
        bad.append("not ok")
    return bad


def defaults():
    """0 when no variable of ENV_RUN, nor any other of PREFIXES but
    ENV_NOTED's and ENV_WHERE's, is set; else 1, naming each."""
    bad = sorted(k for k in os.environ if k in ENV_RUN or (
        k.startswith(PREFIXES) and k not in ENV_NOTED + ENV_WHERE))
    for k in bad:
        print("error: %s is set (%r): make check runs its defaults only "
              "(%s); unset it" % (k, os.environ[k],
                                  "it changes what is built, booted or checked"
                                  if k in ENV_RUN else
                                  "not a variable make check knows"),
              file=sys.stderr)
    return 1 if bad else 0


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--what")
    ap.add_argument("--out")
    ap.add_argument("--judge", action="store_true",
                    help="a stage given as ok whose JSON holds a failure "
                    "is written 'failed (not enforced)'")
    ap.add_argument("--stage", action="append", default=[])
    ap.add_argument("--defaults", action="store_true")
    ap.add_argument("json", nargs="*")
    a = ap.parse_args(argv)
    if a.defaults:
        return defaults()
    if not a.what or not a.out:
        ap.error("--what and --out are required")

    rec = {"record": 1, "what": a.what,
           "date": datetime.datetime.now(datetime.timezone.utc)
           .strftime("%Y-%m-%dT%H:%MZ"),
           "commit": run("git", "describe", "--always", "--dirty",
                         "--abbrev=12"),
           "emulators": emulators(), "host": host(),
           "env": {k: os.environ[k] for k in ENV_RUN + ENV_NOTED
                   if k in os.environ},
           "stages": dict(s.split("=", 1) for s in a.stage),
           "missing": []}
    for path in a.json:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            rec["missing"].append(os.path.basename(path))
            continue
        name = os.path.basename(path)
        if a.judge and judged(data):
            rec["stages"] = {k: "failed (not enforced)" if v == "ok" else v
                             for k, v in rec["stages"].items()}
        if "tree" in data:
            rec.setdefault("tree", data["tree"])
        if name.startswith("report-ept"):
            rec["ept"] = boots(data)
        elif name.startswith("report"):
            rec["boots"] = boots(data)
        elif name == "torture-ept.json":
            rec["torture_ept"] = torture(data)
        elif name.startswith("torture"):
            rec["torture"] = torture(data)
            rec.setdefault("tree", {"base": data.get("base")})
        elif name.startswith("configs"):
            rec["configs"] = data.get("builds")
        elif name.endswith("-policies.json"):    # bench.sh, per machine
            rec.setdefault("bench", {}).setdefault(
                name[len("netback-"):-len("-policies.json")], {}).update(
                    policies=data["policies"], batches=data["batches"])
        elif name.startswith("netback"):
            rec.setdefault("bench", {}).setdefault(
                name[len("netback-"):-len(".json")], {}).update({
                    k: data[k] for k in (
                        "iommu", "rows", "boots", "runs_per_row",
                        "domU_dom0_flush_bound", "unmap_batch", "meta",
                        "problems", "failures") if k in data})
    base = rec.get("tree", {}).get("base")
    rec["series"] = {base: mails(base)} if base else None
    # Paths as a reader of the repository reads them: the logs' under
    # this checkout relative to it, nothing of this machine's.
    text = json.dumps(rec, indent=1, sort_keys=True)
    with open(a.out, "w") as f:
        f.write(text.replace(json.dumps(ROOT + os.sep)[1:-1], "") + "\n")
    print("record: %s" % a.out)
    print("environment: %s" % (" ".join(
        "%s=%s" % (k, shlex.quote(v)) for k, v in sorted(rec["env"].items()))
        or "the defaults"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
