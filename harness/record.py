#!/usr/bin/env python3
"""The compact record of one run of the proving ground, for results/.

    record.py --what WHAT --out RECORD [--stage NAME=ok|failed ...] JSON...

JSON are the run's outputs (out/report.json, out/torture.json,
out/report-ept.json, out/netback*.json; a missing one is skipped and
named in the record).  The record keeps what a reader of the READMEs and
cover letters needs to check a figure: this project's commit, the
series' mails (a hash per base), the tree, the emulators, the host, each
stage's verdict, the unmap phase's counts per machine and build, the
torture's verdicts per build, and every retried boot.  Documents cite a
record by its file name; harness/cover-table.py prints its tables.
"""

import argparse
import datetime
import glob
import hashlib
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
    q = run("qemu-system-x86_64", "--version")
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
            "failures": rep.get("failures", [])}


def torture(t):
    """The torture's verdict per build: cases, pages, result."""
    out = []
    for r in t.get("runs", []):
        out.append({k: r[k] for k in (
            "build", "variant", "iommu", "ok", "must_catch", "missed",
            "missed_cases", "caught_by", "role") if k in r} | {
            "cases": len(r.get("cases", [])),
            "pages": sum(c.get("pages", 0) for c in r.get("cases", [])),
            "caught_in": [c["case"] for c in r.get("cases", [])
                          if c.get("oracle") or not c.get("pass", True)]})
    return {"ok": t.get("ok"), "builds": out}


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--what", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--stage", action="append", default=[])
    ap.add_argument("json", nargs="*")
    a = ap.parse_args(argv)

    rec = {"record": 1, "what": a.what,
           "date": datetime.datetime.now(datetime.timezone.utc)
           .strftime("%Y-%m-%dT%H:%MZ"),
           "commit": run("git", "describe", "--always", "--dirty",
                         "--abbrev=12"),
           "emulators": emulators(), "host": host(),
           "stages": dict(s.split("=", 1) for s in a.stage),
           "missing": [], "retries": []}
    for path in a.json:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            rec["missing"].append(os.path.basename(path))
            continue
        name = os.path.basename(path)
        if "tree" in data:
            rec.setdefault("tree", data["tree"])
        for r in data.get("retries", []):
            rec["retries"].append(dict(r, source=name))
        if name.startswith("report-ept"):
            rec["ept"] = boots(data)
        elif name.startswith("report"):
            rec["boots"] = boots(data)
        elif name.startswith("torture"):
            rec["torture"] = torture(data)
            rec.setdefault("tree", {"base": data.get("base")})
        elif name.startswith("configs"):
            rec["configs"] = data.get("builds")
        elif name.startswith("netback"):
            rec.setdefault("bench", {})[name] = {
                k: data[k] for k in ("iommu", "rows", "boots",
                                     "domU_dom0_flush_bound", "unmap_batch",
                                     "meta") if k in data}
    base = rec.get("tree", {}).get("base")
    rec["series"] = {base: mails(base)} if base else None
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
        f.write("\n")
    print("record: %s (%d retried boot%s)" % (
        a.out, len(rec["retries"]), "" if len(rec["retries"]) == 1 else "s"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
