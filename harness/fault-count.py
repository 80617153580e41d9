#!/usr/bin/env python3
"""How often dom0 triple-faults on its IDT, per build, over boots of the
same cases booted side by side with retries off (harness/fault-count.sh).

    fault-count.py --out RECORD --cases CASES --vcpus N --machine M
                   --describe TREE --base BASE [--ledger LEDGER] RUN...
    fault-count.py RECORD      (prints it: harness/README.md carries it)

Each RUN is one round's PG_OUT (torture/<build>.log per build).  Every
boot is one of:
- idt-fault: a dom0 triple fault whose CR2 is fffffe0000000080, the
  IDT's #DF entry in the CPU entry area.  The CR2 is the one
  test-patches/instrument's pg-tf dump reads from the VMCB, else Xen's
  register dump (on 4.17 under SVM Xen's dump shows a stale CR2, so
  there only pg-tf can tell);
- triple-fault: another dom0 triple fault;
- fail: the boot did not end its cases (no PG-T-END) or a case failed;
- pass.
The record holds every boot's class, the case it died in, the guest
registers Xen dumped, the pg-tf dump's first lines, the boot's pg-svm
lines (test-patches/svm-state: a failed VMCB check, the dump at a
triple fault), every boot's first failed VMCB check ("pg-svm: ... check
failed", the boots that passed too: svm_check_failed), and per build the
rate of idt-faults with its 95 %
Wilson interval.  A boot that is not classified as pass is never
dropped: the counts are over every boot of every round; a boot that was
booted again (LOG.retries) fails the count.  With svm-state in
--test-patches, a triple fault without svm-state's dump ("pg-svm: ...
triple fault (") is a broken detector: it is recorded (svm_dump_missing)
and printed, and the exit is non-zero, the record and ledger written.

With --ledger (fault-count.sh: results/BASE-fault-ledger.json), the
run's counts per build are appended to that ledger under the hash of the
series' mails, if the run is the one it pre-registered (machine, vCPUs,
cases, builds, QEMU's major.minor; else a non-zero exit, the record
written), and the
ledger's verdict on each kind it names is printed (harness/retry.py).
"""

import argparse
import datetime
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bootlog import STAMP as KSTAMP, BootLog  # noqa: E402
from record import emulators, host, mails, run  # noqa: E402
from retry import CLASSES, TRIPLE, judge  # noqa: E402

IDT_CR2 = "fffffe0000000080"
PGSVM_KEEP = 80         # pg-svm: lines kept (test-patches/svm-state)
SVM_FAILED = re.compile(r"pg-svm: .* check failed .*")
SVM_DUMP = re.compile(r"pg-svm: \S+ triple fault \(")
PGTF_CR2 = re.compile(r"pg-tf: (d0v\d+) .*\bcr2 ([0-9a-f]+) ")
XEN_CR2 = re.compile(r"\(XEN\) cr3: [0-9a-f]+ +cr2: ([0-9a-f]+)")
XEN_RIP = re.compile(r"\(XEN\) RIP: +[0-9a-f]+:\[<([0-9a-f]+)>\]")
XEN_REGS = re.compile(r"^\(XEN\) (RIP|RFLAGS|r[a-z0-9]+|cr[0-9]|fsb|ds) *:")
STAMP = re.compile("^" + KSTAMP)
CASE = re.compile(r"^PG-T case=(\S+) .*result=(\w+)")
END = re.compile(r"^PG-T-END .*failed=(\d+)")


def classify(path):
    """{class, vcpu, cr2, rip, after (the last case that ended), dump}"""
    out = {"class": "fail", "after": None, "dump": [], "regs": [], "svm": [],
           "svm_failed": None, "svm_dump": False}
    triple = cr2 = xen_cr2 = rip = None
    failed = end = None
    for _, line in BootLog(path):
        line = STAMP.sub("", line.rstrip())
        if "pg-svm:" in line and len(out["svm"]) < PGSVM_KEEP:
            out["svm"].append(line[line.index("pg-svm:"):])
        m = SVM_FAILED.search(line)
        if m and out["svm_failed"] is None:
            out["svm_failed"] = m.group(0)[:240]
        out["svm_dump"] = out["svm_dump"] or bool(SVM_DUMP.search(line))
        m = TRIPLE.search(line)
        if m and triple is None:
            triple = m.group(1)
        if triple is not None:
            m = PGTF_CR2.search(line)
            if m and cr2 is None:
                cr2 = m.group(2).lstrip("0") or "0"
            m = XEN_CR2.search(line)
            if m and xen_cr2 is None:
                xen_cr2 = m.group(1).lstrip("0") or "0"
            m = XEN_RIP.search(line)
            if m and rip is None:
                rip = m.group(1)
            if XEN_REGS.search(line) and len(out["regs"]) < 12 and \
                    not out["dump"]:
                out["regs"].append(line[6:])
            if "pg-tf:" in line and len(out["dump"]) < 16:
                out["dump"].append(line[line.index("pg-tf:"):])
            continue
        m = CASE.search(line)
        if m:
            out["after"] = m.group(1)
            if m.group(2) != "pass":
                failed = m.group(1)
        m = END.search(line)
        if m:
            end = int(m.group(1))
    if triple is not None:
        cr2 = cr2 or xen_cr2
        out.update({"vcpu": triple, "cr2": cr2, "rip": rip,
                    "cr2_from": "pg-tf" if out["dump"] else "xen"})
        out["class"] = "idt-fault" if cr2 == IDT_CR2 else "triple-fault"
    elif end == 0 and failed is None:
        out["class"] = "pass"
    return out


def wilson(k, n, z=1.96):
    """The 95 % Wilson score interval of k in n, as (low, high)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (round(max(0.0, c - h), 4), round(min(1.0, c + h), 4))


def show(path):
    """Print a record: per build the counts, then each boot that failed."""
    r = json.load(open(path))
    t = r["tree"]
    print(f"  {r['what']}, {r['date'][:10]}, commit {r['commit']}")
    print(f"  Xen {t['describe']} ({t['base']}), QEMU {r['emulators']['qemu']}")
    extra = f", dom0={r['dom0']}" if r.get("dom0", "pvh") != "pvh" else ""
    if r.get("test_patches"):
        extra += ", with " + " ".join(r["test_patches"])
    print(f"  {r['rounds']} rounds on {r['machine']}, {r['vcpus']} vCPUs, "
          f"cases {r['cases']}, retries off{extra}")
    print()
    print(f"  {'build':<9} {'boots':>5} {'IDT fault':>10}  {'rate (95 %)':<17}"
          f" {'other TF':>8} {'no end':>7}")
    for b, c in r["counts"].items():
        lo, hi = c["wilson95"]
        rate = f"{c['rate']:.2f} ({lo:.2f}-{hi:.2f})"
        print(f"  {b:<9} {c['boots']:>5} {c['idt_fault']:>10}  {rate:<17}"
              f" {c['triple_fault']:>8} {c['fail']:>7}")
    if r["boots"]:
        print()
    for i, b, line in r.get("svm_check_failed", []):
        print(f"  round {i:>2} {b:<8} failed VMCB check: {line[:100]}")
    for i, b in r.get("svm_dump_missing", []):
        print(f"  round {i:>2} {b:<8} triple fault without svm-state's dump")
    for x in r["boots"]:
        what = {"idt-fault": "IDT fault", "triple-fault": "triple fault",
                "fail": "no end"}[x["class"]]
        where = f", {x['vcpu']} RIP {x['rip']} CR2 {x['cr2']}" \
            if x["class"] != "fail" else ""
        print(f"  round {x['round']:>2} {x['build']:<8} {what}"
              f"{where}, after {x['after'] or 'no case'}")


def append(path, rec):
    """Append the run REC to the ledger at PATH and print its verdict on
    each kind; returns why it was refused, or None."""
    with open(path) as f:
        led = json.load(f)
    pre, base = led["preregistered"], rec["tree"]["base"]
    if led["base"] != base:
        return "a run of %s, the ledger's base is %s" % (base, led["base"])
    for k in ("machine", "vcpus", "cases", "builds"):
        if rec[k] != pre[k]:
            return "%s %s, pre-registered %s" % (k, rec[k], pre[k])
    if rec["dom0"] != "pvh":
        return "dom0=%s, the ledger counts dom0=pvh" % rec["dom0"]
    qemu = (rec["emulators"]["qemu"] or "none").split(" ")[0]
    if qemu.rsplit(".", 1)[0] != pre["qemu"]:
        return "QEMU %s, pre-registered %s" % (qemu, pre["qemu"])
    series = rec["series"][base]
    if not series:
        return "no series of %s" % base
    led["runs"].append({
        "date": rec["date"], "commit": rec["commit"], "series": series,
        "command": rec["command"], "rounds": rec["rounds"],
        "test_patches": rec["test_patches"],
        "counts": {b: {k: c[k] for k in ("boots",) + CLASSES}
                   for b, c in rec["counts"].items()},
        "failed": [[x["round"], x["build"], x["class"], x["after"]]
                   for x in rec["boots"]]})
    with open(path, "w") as f:
        json.dump(led, f, indent=1, sort_keys=True)
        f.write("\n")
    for kind in sorted(pre["kinds"]):
        ok, why = judge(led, kind, series)
        print("ledger %s: %s %s (%s)" % (os.path.basename(path), kind,
                                        "tolerated" if ok else
                                        "not tolerated", why))
    return None


def main(argv):
    if len(argv) == 1 and argv[0].endswith(".json"):
        show(argv[0])
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--vcpus", type=int, required=True)
    ap.add_argument("--machine", required=True)
    ap.add_argument("--describe", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--builds", default="base patched")
    ap.add_argument("--command", default=None)
    ap.add_argument("--dom0", default="pvh", help="Xen's dom0= option")
    ap.add_argument("--test-patches", default="",
                    help="folders of test-patches/ every build carried")
    ap.add_argument("--commit", default=None,
                    help="this project's commit the rounds ran (default: now)")
    ap.add_argument("--ledger", help="the ledger to append the counts to")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args(argv)

    builds = a.builds.split()
    boots, missing = [], []
    for i, d in enumerate(a.runs, 1):
        for b in builds:
            log = os.path.join(d, "torture", b + ".log")
            if a.machine != "vt-d":
                log = os.path.join(d, "torture", a.machine, b + ".log")
            if not os.path.exists(log):
                missing.append(log)
                continue
            if os.path.exists(log + ".retries"):
                missing.append(log + " (booted again: retries were on)")
                continue
            boots.append(dict(classify(log), round=i, build=b,
                              qemu_int=os.path.exists(log + ".qemu-int")))
    if missing:
        print("fault-count: no log, or one booted again: " + ", ".join(missing), file=sys.stderr)
        return 1
    counts = {}
    for b in builds:
        mine = [x for x in boots if x["build"] == b]
        k = sum(x["class"] == "idt-fault" for x in mine)
        counts[b] = {"boots": len(mine), "idt_fault": k,
                     "triple_fault": sum(x["class"] == "triple-fault"
                                         for x in mine),
                     "fail": sum(x["class"] == "fail" for x in mine),
                     "rate": round(k / len(mine), 4) if mine else None,
                     "wilson95": wilson(k, len(mine))}
    rec = {"record": 1, "what": "fault-count",
           "date": datetime.datetime.now(datetime.timezone.utc)
           .strftime("%Y-%m-%dT%H:%MZ"),
           "commit": a.commit or run("git", "describe", "--always",
                                     "--dirty", "--abbrev=12"),
           "emulators": emulators(), "host": host(),
           "tree": {"base": a.base, "describe": a.describe},
           "series": {a.base: mails(a.base)},
           "command": a.command, "machine": a.machine, "vcpus": a.vcpus,
           "builds": a.builds,
           "dom0": a.dom0, "test_patches": a.test_patches.split(),
           "cases": a.cases, "rounds": len(a.runs), "counts": counts,
           "boots": [x for x in boots if x["class"] != "pass"],
           "svm_check_failed": [[x["round"], x["build"], x["svm_failed"]]
                                for x in boots if x["svm_failed"]],
           "svm_dump_missing": [[x["round"], x["build"]] for x in boots
                                if "svm-state" in a.test_patches.split() and
                                x["class"] in ("idt-fault", "triple-fault")
                                and not x["svm_dump"]],
           "passed": {b: [x["round"] for x in boots
                          if x["build"] == b and x["class"] == "pass"]
                      for b in builds}}
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
        f.write("\n")
    for b, c in counts.items():
        print("%-10s %d boots: idt-fault %d (%.2f, 95%% %.2f-%.2f), other "
              "triple fault %d, other failure %d" % (
                  b, c["boots"], c["idt_fault"], c["rate"] or 0,
                  c["wilson95"][0], c["wilson95"][1], c["triple_fault"],
                  c["fail"]))
    for i, b, line in rec["svm_check_failed"]:
        print("round %d %s: failed VMCB check: %s" % (i, b, line))
    why = a.ledger and append(a.ledger, rec)
    if why:
        print("fault-count: not appended to %s: %s" % (a.ledger, why),
              file=sys.stderr)
    for i, b in rec["svm_dump_missing"]:
        print("fault-count: round %d %s: a triple fault without "
              "svm-state's dump" % (i, b), file=sys.stderr)
    return 1 if why or rec["svm_dump_missing"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
