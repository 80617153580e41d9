#!/usr/bin/env python3
"""Replay the frames a boot's workload unmapped (its PG-FRAMES lines: the
frames of each round's pages, in the order of the unmap hypercall's
operations) through IOTLB gather policies, batch by batch (32 unmaps),
and count the invalidations each would issue and the pages they would
cover once VT-d rounds each range up to a naturally aligned power of two
(patch 1): per page (base), the union of the batch (the previous version
of the series), and the series' bound, a naturally aligned block of
2^iommu_max_flush_order pages, for MAMV 9 and 18 (QEMU's VT-d, and
AMD-Vi).  Page-table frees, which make a flush domain-wide whatever the
policy, are not modelled: the boots measure them.

usage: scatter-policies.py LOG [--json OUT]
"""
import json
import re
import sys

BATCH = 32


def block(first, last):
    order = (first ^ last).bit_length()
    return 1 << order


def replay(frames, policy):
    """Invalidations and pages covered for one batch under a policy."""
    inv, covered = 0, 0
    rec = None
    for f in frames:
        if rec is None:
            rec = [f, f]
            continue
        lo, hi = min(rec[0], f), max(rec[1], f)
        merge = {
            "per-page": False,
            "union": True,
            "block-2^9": not (lo ^ hi) >> 9,
            "block-2^18": not (lo ^ hi) >> 18,
        }[policy]
        if merge:
            rec = [lo, hi]
        else:
            inv += 1
            covered += block(*rec)
            rec = [f, f]
    if rec:
        inv += 1
        covered += block(*rec)
    return inv, covered


def main():
    rounds = {}
    for line in open(sys.argv[1], errors="replace"):
        line = line.replace("\r", "").rstrip("\n")
        if line.startswith("PG-FRAMES"):
            kv = dict(re.findall(r"(\w+)=(\S+)", line))
            rounds[(int(kv["n"]), int(kv["stride"]))] = \
                [int(x, 16) for x in kv["pfns"].split(",")]
    if not rounds:
        sys.exit(f"{sys.argv[1]}: no PG-FRAMES lines")
    policies = ("per-page", "union", "block-2^9", "block-2^18")
    out = []
    print("IOTLB invalidations / pages they cover per unmap, by merge policy")
    print(f"{'N':>4} {'stride':>6} | " + " | ".join(f"{p:>16}" for p in policies))
    for (n, st), frames in sorted(rounds.items(), key=lambda x: (x[0][1], x[0][0])):
        cells, row = [], {"n": n, "stride": st}
        for p in policies:
            inv = cov = 0
            for i in range(0, n, BATCH):
                a, b = replay(frames[i:i + BATCH], p)
                inv += a
                cov += b
            cells.append(f"{inv:>6} {cov:>9}")
            row[p] = {"invalidations": inv, "pages_covered": cov}
        out.append(row)
        print(f"{n:>4} {st:>6} | " + " | ".join(cells))
    if len(sys.argv) > 3 and sys.argv[2] == "--json":
        with open(sys.argv[3], "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
