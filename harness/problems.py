"""What no boot log may hold: one list for harness/report.py,
harness/torture-report.py, bench/netback/report.py and the kit's
runlog.py (harness/kit.sh copies this file into the kit, beside
runlog.py); and what a torture run must
have run (incomplete()), for torture-report.py and runlog.py.

PROBLEM_PATTERNS: (pattern, what) for a line that is a problem wherever
it appears, in Xen's or dom0's own console format (dom0's lines may
start with a kernel timestamp, "[   31.200000] ").  dom0's oopses as
Debian 12's 6.1 kernel prints them: die()'s header carries its counter
("general protection fault, probably for non-canonical address ...:
0000 [#1] PREEMPT SMP NOPTI", "invalid opcode: 0000 [#1] ..."), BUG()
prints "kernel BUG at FILE:LINE!", and an oops or WARN ends with "---[
end trace ... ]---".  Xen's: its assertions, BUG, panics and fatal
traps, "Xen WARN at FILE:LINE" (WARN_ON()), and a failed IOMMU or ATS
device flush ("d0: IOMMU IOTLB flush failed: -110, dfn ...", drivers/
passthrough/iommu.c; "IOMMU: flush IOTLB failed", vtd/iommu.c; "dom0:
ATS device ... flush failed", pci.c).  "watchdog: BUG: soft lockup" is
not one: a stall fails the boot that stalls (boot-qemu.sh).
"""
import re

PROBLEM_PATTERNS = [
    (re.compile(r"Assertion '.*' failed"), "Xen assertion"),
    (re.compile(r"\*\*\*\* Panic on CPU|Xen BUG at|FATAL (PAGE FAULT|TRAP)"),
     "Xen panic"),
    (re.compile(r"Xen WARN at"), "Xen WARN"),
    (re.compile(r"IOMMU\b.*\bflush\b.*\bfailed|ATS device .* flush failed"),
     "failed IOMMU flush"),
    (re.compile(r"^(\[ *[0-9.]+\] )?(Oops|BUG:|Kernel panic|WARNING: CPU:)|"
                r"\[#\d+\]|kernel BUG at|general protection fault|"
                r"---\[ end trace"),
     "dom0 oops"),
    (re.compile(r"^PG-ERROR"), "workload error"),
]


# gntt's last line (torture/README.md), for incomplete()'s END.
END = re.compile(r"PG-T-END pages=(\d+) dma_pages=(\d+) stale_dma=(\d+) "
                 r"stale_cpu=(\d+) failed=(\d+) dma=(\d+) vcpus=(\d+) "
                 r"leaked=(\d+)")


def incomplete(cases, requested, end, vcpus):
    """What keeps a torture run's cases from standing for the run asked
    for.  CASES: its case lines as (name, passed), in order; REQUESTED:
    the cases asked for (gntt's cases= split at '.'), None if unknown;
    END: PG-T-END's (failed, vcpus), None without one (the caller names
    a run that did not finish); VCPUS: the vCPUs it was booted with.  A
    case the module rejected ("PG-T error: bad case") has no line but
    counts in failed=."""
    problems = []
    names = [c for c, _ in cases]
    failed = sum(not ok for _, ok in cases)
    if requested is None:
        problems.append("the cases requested are unknown")
    elif names != requested:
        problems.append("cases run %s, requested %s%s" % (
            ".".join(names) or "none", ".".join(requested),
            "; missing: " + ", ".join(c for c in requested if c not in names)
            if set(requested) - set(names) else ""))
    if end is not None and end[0] != failed:
        problems.append("PG-T-END failed=%d, but %d case lines failed (a "
                        "case the module rejected has no line)" % (
                            end[0], failed))
    if end is not None and end[1] != vcpus:
        problems.append("%d vCPUs online, booted with %d" % (end[1], vcpus))
    return problems
