#!/usr/bin/env python3
"""Which failed boots are booted again, and the record of each retry.

boot-qemu.sh asks, for each attempt that did not finish (PG-DONE):

    retry.py classify LOG BASE TRY [stall]

It exits 0 and prints the kind (stall, idt-fault, emulator-fault) when
the attempt may be booted again, after appending the retry's record to
LOG.retries (one JSON object a line); otherwise it exits 1 and prints
why on stderr.  An attempt is booted again only when:

- its signature is one of SIGNATURES and allowed on BASE (a base whose
  own boots have been recorded showing it);
- the attempt is otherwise clean: no oracle report, no bad_* count of
  the oracle's totals above its first value, no failed torture case, no
  stale read, no PG-ERROR, no Xen assertion, BUG, panic or FATAL, no
  dom0 oops, and no PG-T error;
- PG_RETRY is not 0.

`retry.py load LOG` prints LOG's retries as a JSON list; the checkers
import load() to put them into their JSON, and `retry.py summary
JSON...` prints every retry those files list (check.sh's summary).
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bootlog import BootLog  # noqa: E402

TRIPLE = re.compile(r"\(XEN\) (d0v\d+) Triple fault - invoking HVM shutdown")
XEN_ERROR = re.compile(r"Assertion '.*' failed|\*\*\*\* Panic on CPU|"
                       r"Xen BUG at|FATAL (PAGE FAULT|TRAP)")

# What makes a failed attempt unclean (and so a failure, not a retry).
DIRTY = [
    (re.compile(r"pg-oracle: "), "oracle report"),
    (XEN_ERROR, "Xen assertion, BUG or panic"),
    (re.compile(r"^(\[ *[0-9.]+\] )?(Oops|BUG:|Kernel panic|WARNING: CPU:)"),
     "dom0 oops"),
    (re.compile(r"^PG-ERROR"), "workload error"),
    (re.compile(r"^PG-T (error|stale-\w+) "), "torture error or stale read"),
    (re.compile(r"^PG-T case=.* result=FAIL"), "failed case"),
]
STATS = re.compile(r"pg-oracle-stats: (.*)$")
DMA_AFTER = re.compile(r"^PG-DMA n=\d+ when=after-unmap data=(\d+) fault=\d+ "
                       r"other=(\d+)")

# Signatures: kind -> the bases on which base builds were seen showing it.
# - stall: dom0 silent, or a CPU it reports stuck, before its init ran
#   (QEMU's TCG, under AMD-Vi while dom0 brings its second vCPU up, and
#   with 4 vCPUs in stop_machine).
# - emulator-fault: a triple fault whose saved guest state is Xen's own
#   (CONTEXT: hvm guest with CS e008, RIP right after VMRUN), which no
#   guest can reach; what puts it there is not shown (harness/README.md).
# - idt-fault: a triple fault on dom0's read of its IDT's #DF entry (CR2
#   fffffe0000000080), staging only; its cause is not known.
SIGNATURES = {
    "stall": ("staging", "stable-4.17"),
    "emulator-fault": ("staging", "stable-4.17"),
    "idt-fault": ("staging",),
}


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


def signature(text, stalled):
    """(kind, lines) of the attempt's retried signature, or None."""
    if stalled:
        return "stall", [l for l in text if "soft lockup" in l][-3:]
    for vcpu, dump in dumps(text):
        if any(l.rstrip().endswith("cr2: fffffe0000000080") for l in dump):
            return "idt-fault", dump
        # The guest's saved state is Xen's own (CS e008): the emulator's.
        if any("CONTEXT: hvm guest" in l for l in dump) and \
           any(re.search(r"^\(XEN\) ds: .* cs: e008$", l.rstrip())
               for l in dump):
            return "emulator-fault", dump
    return None


def unclean(text):
    """What the attempt printed that a retry would hide: [(what, line)]."""
    found, first = [], None
    for line in text:
        for pat, what in DIRTY:
            if pat.search(line):
                found.append((what, line))
        m = STATS.search(line)
        if m:
            bad = {k: int(v) for k, v in re.findall(r"(bad_\w+)=(\d+)",
                                                     m.group(1))}
            if first is None:
                first = bad
            for k, v in bad.items():
                if v > first.get(k, 0):
                    found.append(("oracle count %s rose to %d" % (k, v), line))
        m = DMA_AFTER.search(line)
        if m and (int(m.group(1)) or int(m.group(2))):
            found.append(("stale read", line))
    return found


def classify(path, base, attempt, stalled):
    text = read(path)
    sig = signature(text, stalled)
    if sig is None:
        return None, "no retried signature"
    kind, lines = sig
    if os.environ.get("PG_RETRY", "1") == "0":
        return None, "%s, and PG_RETRY=0" % kind
    if base not in SIGNATURES[kind]:
        return None, "%s, not retried on %s" % (kind, base)
    dirty = unclean(text)
    if dirty:
        return None, "%s after: %s" % (kind, "; ".join(
            "%s (%s)" % (w, l.strip()[:120]) for w, l in dirty[:5]))
    rec = {"kind": kind, "try": attempt, "base": base,
           "machine": os.environ.get("PG_IOMMU", "vt-d"),
           "log": "%s.%s-%d" % (os.path.basename(path), kind, attempt),
           "signature": [l.strip() for l in lines[:40]],
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
