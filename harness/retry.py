#!/usr/bin/env python3
"""Which failed boots are booted again, and the record of each retry.

boot-qemu.sh and bench.sh ask, for each attempt that did not finish:

    retry.py classify LOG BASE TRY [stall]

with PG_VARIANT the build booted, PG_CHECKER the checker of its log
(torture: torture-report.py; report: report.py, make's boots; bench:
bench/netback/report.py) and PG_BASE_BOOTS=1 when base boots on the same
machine in the same run.  It exits 0 and prints the kind (stall,
idt-fault, emulator-fault) when the attempt may be booted again, after
appending the retry's record to LOG.retries (one JSON object a line);
otherwise it exits 1 and prints why on stderr.  An attempt is booted
again only when all of these hold:

- PG_RETRY is not 0;
- it stalled, or every dom0 triple fault in it has one signature;
- RECORDED cites a committed record of a base build of BASE showing that
  kind (unit/boot-retry checks each citation against its record);
- BASE's fault ledger (results/BASE-fault-ledger.json) tolerates the
  kind (tolerated(): retries-off counts of the current mails, at the
  ledger's pre-registered size, patched not above base);
- the build is base, or base boots beside it (PG_BASE_BOOTS=1);
- the real checker of the log, run on this attempt alone, finds nothing
  wrong but the missing end (wrong()).

`retry.py load LOG` prints LOG's retries as a JSON list; the checkers
import load() to put them into their JSON, and `retry.py summary
JSON...` prints every retry those files list (check.sh's summary).
"""

import importlib.util
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bootlog import BootLog  # noqa: E402

TRIPLE = re.compile(r"\(XEN\) (d0v\d+) Triple fault - invoking HVM shutdown")
XEN_ERROR = re.compile(r"Assertion '.*' failed|\*\*\*\* Panic on CPU|"
                       r"Xen BUG at|FATAL (PAGE FAULT|TRAP)")
STATS = re.compile(r"pg-oracle-stats: (.*)$")
EMU_CS = re.compile(r"^\(XEN\) ds: .* cs: e008$")

# Signatures:
# - stall: dom0 silent, or a CPU it reports stuck, before its init ran.
# - emulator-fault: a triple fault whose saved guest state is Xen's own
#   (CONTEXT: hvm guest with CS e008, RIP right after VMRUN), which no
#   guest can reach.
# - idt-fault: a triple fault on dom0's read of its IDT's #DF entry (CR2
#   fffffe0000000080).
# Both came from QEMU's cpu_clear_ignne() race under a TCG thread per
# vCPU, which the proving ground's QEMU closes (harness/qemu/).
# RECORDED: (kind, base) -> the committed record showing a base build of
# that base with it: (file under results/, its list of boots, the boot's
# fields).  A pair not here is never retried.  Empty: no record shows a
# base stall, nor anything on stable-4.17, and staging's two (base round
# 5 of 2026-12-04-staging-fault-count.json; base's torture boot in
# 2026-12-04-staging-check.json) were that race.
RECORDED = {}
# fault-count.py's classes of a failed boot, as its records count them.
CLASSES = ("idt_fault", "triple_fault", "fail")


def read(path):
    return [t for _, t in BootLog(path)]


def dumps(text):
    """Each dom0 vCPU's triple fault with the lines of its own dump:
    [(vcpu, [lines])].  The dump is Xen's lines after the triple fault,
    up to a second register dump ("----[", which an assertion or a crash
    during the shutdown prints), another triple fault, or a Xen error."""
    out, cur, heads = [], None, 0
    for line in text:
        m = TRIPLE.search(line)
        if m:
            cur, heads = (m.group(1), [line]), 0
            out.append(cur)
            continue
        if cur is None or not line.startswith("(XEN)"):
            continue
        if line.startswith("(XEN) ----["):
            heads += 1
        if heads > 1 or XEN_ERROR.search(line):
            cur = None
        else:
            cur[1].append(line)
    return out


def fault_kind(dump):
    """The signature of one triple fault's own dump, or None."""
    if any(l.rstrip().endswith("cr2: fffffe0000000080") for l in dump):
        return "idt-fault"
    # The guest's saved state is Xen's own (CS e008): the emulator's.
    if any("CONTEXT: hvm guest" in l for l in dump) and \
       any(EMU_CS.search(l.rstrip()) for l in dump):
        return "emulator-fault"
    return None


def signature(text, stalled):
    """(kind, lines) of the attempt's retried signature, or (None, why):
    a stall with no triple fault, or triple faults all of one kind."""
    faults = dumps(text)
    if stalled and not faults:
        return "stall", [l for l in text if "soft lockup" in l][-3:]
    kinds = [fault_kind(d) for _, d in faults]
    if not faults:
        return None, "no retried signature"
    if None in kinds or len(set(kinds)) > 1:
        return None, "triple faults not all of one signature: " + ", ".join(
            "%s %s" % (v, k or "(none)") for (v, _), k in zip(faults, kinds))
    return kinds[0], faults[0][1]


def shown(kind, base, recorded=RECORDED):
    """None when the record RECORDED cites shows a base build of BASE
    with KIND at the boot it names, else why not."""
    cite = recorded.get((kind, base))
    if cite is None:
        return "no record of a base build of %s showing it" % base
    name, key, boot = cite
    try:
        with open(os.path.join(ROOT, "results", name)) as f:
            rec = json.load(f)
    except (OSError, ValueError) as e:
        return "%s: %s" % (name, e)
    if rec.get("tree", {}).get("base") != base:
        return "%s is not a record of %s" % (name, base)
    hits = [b for b in rec.get(key, [])
            if all(b.get(k) == v for k, v in boot.items())]
    if len(hits) != 1:
        return "%s: %d boots with %s" % (name, len(hits), boot)
    b = hits[0]
    if b.get("build", b.get("variant")) != "base":
        return "%s: the boot cited is not base's" % name
    lines = b.get("signature") or (
        ["(XEN) %s Triple fault - invoking HVM shutdown action 1" %
         b.get("vcpu")] + ["(XEN) " + r for r in b.get("regs", [])])
    got, _ = signature(lines, False)
    if got != kind:
        return "%s: the boot's dump is %s, not %s" % (name, got, kind)
    return None


def fisher(k1, n1, k0, n0):
    """One-sided Fisher exact test of arm 1's rate above arm 0's: P(X >=
    k1), X arm 1's failures of the k1 + k0 under equal rates."""
    k, n = k1 + k0, n1 + n0
    return sum(math.comb(k, i) * math.comb(n - k, n1 - i)
               for i in range(k1, min(k, n1) + 1)) / math.comb(n, n1)


def judge(ledger, kind, series):
    """(tolerated, why): KIND by LEDGER's pre-registered rule over its
    runs of the mails SERIES (record.py's mails())."""
    pre = ledger["preregistered"]
    size, alpha = pre["boots_per_arm"], pre["alpha"]
    runs = [r for r in ledger["runs"] if r["series"] == series]
    n = {b: {c: sum(r["counts"][b][c] for r in runs)
             for c in ("boots",) + CLASSES} for b in ("base", "patched")}
    b, p = n["base"], n["patched"]
    why = "%d runs of the current mails: base %d boots, patched %d" % (
        len(runs), b["boots"], p["boots"])
    if kind not in pre["kinds"]:
        return False, "%s not in the ledger" % kind
    if min(b["boots"], p["boots"]) < size:
        return False, "%s, %d each pre-registered" % (why, size)
    tests = []
    for what, cls in ((kind, pre["kinds"][kind]),
                      ("every failure", CLASSES)):
        pv = fisher(sum(p[c] for c in cls), p["boots"],
                    sum(b[c] for c in cls), b["boots"])
        tests.append((pv, "%s: patched %d, base %d, p=%.3f" % (
            what, sum(p[c] for c in cls), sum(b[c] for c in cls), pv)))
    why = "%s; %s" % (why, "; ".join(t for _, t in tests))
    if any(pv < alpha for pv, _ in tests):
        return False, "%s: patched above base (p < %g)" % (why, alpha)
    return True, why


def tolerated(kind, base):
    """(tolerated, why): KIND on BASE by results/BASE-fault-ledger.json."""
    path = os.path.join(ROOT, "results", base + "-fault-ledger.json")
    try:
        with open(path) as f:
            ledger = json.load(f)
        from record import mails
        return judge(ledger, kind, mails(base))
    except (OSError, ValueError, KeyError, TypeError) as e:
        return False, "no usable ledger %s (%s: %s)" % (
            os.path.basename(path), e.__class__.__name__, e)


def module(name, path):
    """The checker at PATH (a hyphen in its name), imported."""
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def wrong(path, checker, variant):
    """What the real checker of the log finds wrong in this attempt
    alone, but the missing end: [str]."""
    out = []
    if checker == "torture":
        tr = module("torture_report", os.path.join(HERE, "torture-report.py"))
        run = tr.parse(variant, path)
        # The cases it was asked for are those it ran: the rest are the
        # missing end's.
        run["requested"] = [c["case"] for c in run["cases"]]
        tr.complete(run)
        out += [p for p in run["problems"] if not p.startswith("no PG-T-END")]
        out += ["case %s failed" % c["case"] for c in run["cases"]
                if not c["pass"]]
        out += ["oracle report in %s" % c["case"] for c in run["cases"]
                if c["oracle"] or c["oracle_lines"]]
        if run["oracle_outside_cases"]:
            out.append("oracle report after the last case")
        out += [n for n in run["notes"] if not n.startswith(("PG-T note",
                                                             "oracle "))]
    elif checker == "report":
        import report
        _, dma, problems, oracle = report.parse(path)
        out += [p for p in problems
                if not p.endswith("the workload did not finish (no PG-DONE)")]
        out += ["oracle report: " + o for o in oracle]
        verdict, why = report.dma_verdict(dma)
        out += why + (["a stale DMA read after unmap"]
                      if verdict == "stale" else [])
    elif checker == "bench":
        nb = module("netback_report", os.path.join(ROOT, "bench", "netback",
                                                   "report.py"))
        out += [p for p in nb.parse(path)[2]
                if not p.endswith("(no NB-DONE)")]
    else:
        return ["no checker named (PG_CHECKER=%s)" % (checker or "")]
    # A bad_* total above its first value, in the case the attempt died
    # in (its result line never came).
    first = None
    for line in read(path):
        m = STATS.search(line)
        if not m:
            continue
        bad = {k: int(v) for k, v in re.findall(r"(bad_\w+)=(\d+)",
                                                 m.group(1))}
        first = bad if first is None else first
        out += ["oracle count %s rose to %d" % (k, v)
                for k, v in bad.items() if v > first.get(k, 0)]
    return out


def classify(path, base, attempt, stalled):
    text = read(path)
    kind, lines = signature(text, stalled)
    if kind is None:
        return None, lines
    if os.environ.get("PG_RETRY", "1") == "0":
        return None, "%s, and PG_RETRY=0" % kind
    why = shown(kind, base)
    if why:
        return None, "%s, not retried on %s: %s" % (kind, base, why)
    ok, ledger = tolerated(kind, base)
    if not ok:
        return None, "%s, not tolerated by %s's fault ledger: %s" % (
            kind, base, ledger)
    variant = os.environ.get("PG_VARIANT", "")
    if not variant:
        return None, "%s, of a build not named (PG_VARIANT)" % kind
    if variant != "base" and \
            os.environ.get("PG_BASE_BOOTS") != "1":
        return None, "%s of %s, with no base booted beside it" % (
            kind, variant)
    dirty = wrong(path, os.environ.get("PG_CHECKER"), variant)
    if dirty:
        return None, "%s after: %s" % (kind, "; ".join(
            d.strip()[:160] for d in dirty[:5]))
    rec = {"kind": kind, "try": attempt, "base": base,
           "machine": os.environ.get("PG_IOMMU", "vt-d"),
           "log": "%s.%s-%d" % (os.path.basename(path), kind, attempt),
           "signature": [l.strip() for l in lines[:40]],
           "recorded": RECORDED[kind, base][0], "ledger": ledger,
           "lines": len(text),
           "last": [l.strip() for l in text if not l.startswith("(XEN)")
                    ][-5:]}
    with open(path + ".retries", "a") as f:
        f.write(json.dumps(rec) + "\n")
    return kind, None


def load(log):
    """The retries boot-qemu.sh recorded for LOG: a list of dicts."""
    try:
        with open(log + ".retries") as f:
            return [json.loads(l) for l in f if l.strip()]
    except FileNotFoundError:
        return []


def summary(paths):
    """Print each retry the JSON records list; returns their number."""
    n = 0
    for p in paths:
        try:
            with open(p) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print("  no record: %s (%s)" % (p, e.__class__.__name__))
            continue
        for r in data.get("retries", []):
            n += 1
            print("  retried: %s %s/%s, %s, try %d: %s" % (
                r.get("source", os.path.basename(p)), r.get("machine", "?"),
                r.get("variant", "?"), r["kind"], r["try"],
                (r.get("signature") or ["?"])[0]))
    print("retried boots: %d" % n)
    return n


def main(argv):
    if len(argv) >= 4 and argv[0] == "classify":
        kind, why = classify(argv[1], argv[2], int(argv[3]),
                             len(argv) > 4 and argv[4] == "stall")
        if kind is None:
            print(why, file=sys.stderr)
            return 1
        print(kind)
        return 0
    if len(argv) == 2 and argv[0] == "load":
        print(json.dumps(load(argv[1]), indent=1))
        return 0
    if argv and argv[0] == "summary":
        summary(argv[1:])
        return 0
    print("usage: retry.py classify LOG BASE TRY [stall] | load LOG | "
          "summary JSON...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
