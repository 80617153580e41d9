#!/usr/bin/env python3
"""Replay unmapped frames through IOTLB gather policies, batch by batch,
and count the invalidations each would issue and the pages they would
cover once the IOMMU rounds each range up to a naturally aligned power
of two (the VT-d and AMD-Vi patches):

  per-page        base: one invalidation per page
  v3 bound        v3's gather: merge while the union stays within one
                  aligned block of 2^18 pages (QEMU's MAMV; AMD-Vi)
  density         the series (iommu_end_deferral()): merge while the
                  union's block is at most max(2^9, 64 x pages
                  gathered), as removals come
  density, sorted the same rule over the batch's frames sorted first
                  (the follow-up the cover letter names: it needs the
                  batch's frames kept per CPU)
  density, 2      the same rule as removals come, over two ranges: a
                  frame joins the range whose block stays smallest,
                  else the older range is flushed and it starts a new one

Frames come from boot logs (PG-FRAMES lines of gntpg: the frames of each
round, in the order of the unmap hypercall's operations; batches of 32),
with --netback from the benchmark's boot logs (the batches netback
unmapped, as the instrumented hypervisor recorded them: "pg-frames:"
lines after each NB-FRAMES line, one row per boot and number of streams; the
JSON holds the table and the batches), with --record from a bench
record (results/, harness/record.py) those batches, per machine, or,
with --synthetic, from seeded random layouts (batches of 20, about
netback's: contiguous, clustered within 1 and 4 MiB, scattered over
4 GiB), or, with --pools, from k pools of 256 frames far apart, a
batch's frames taken from them in turn (the cost of one range: the
cover letter quotes this table verbatim).  Page-table frees, which make a flush domain-wide whatever the
policy, are not modelled: the boots measure them.

usage: scatter-policies.py LOG [--json OUT]
       scatter-policies.py --netback LOG... [--json OUT]
       scatter-policies.py --record RECORD
       scatter-policies.py --synthetic [--json OUT]
       scatter-policies.py --pools [--json OUT]
"""
import json
import os
import random
import re
import sys

POLICIES = ("per-page", "v3 bound", "density", "density, sorted",
            "density, 2")


def order(first, last):
    return (first ^ last).bit_length()


def density_fits(rec, f):
    """The order of rec's block with frame f added, if the rule allows it."""
    o = order(min(rec[0], f), max(rec[1], f))
    return o if (1 << o) <= max(1 << 9, 64 * (rec[2] + 1)) else None


def replay_two(frames):
    """"density, 2": two ranges [first, last, pages], the older first."""
    inv, covered, recs = 0, 0, []
    for f in frames:
        fits = [(o, i) for i, r in enumerate(recs)
                for o in [density_fits(r, f)] if o is not None]
        if fits:
            r = recs[min(fits)[1]]
            r[:] = [min(r[0], f), max(r[1], f), r[2] + 1]
            continue
        if len(recs) == 2:
            r = recs.pop(0)
            inv += 1
            covered += 1 << order(r[0], r[1])
        recs.append([f, f, 1])
    for r in recs:
        inv += 1
        covered += 1 << order(r[0], r[1])
    return inv, covered


def replay(frames, policy):
    """Invalidations and pages covered for one batch under a policy."""
    if policy == "density, 2":
        return replay_two(frames)
    if policy == "density, sorted":
        frames, policy = sorted(frames), "density"
    inv, covered = 0, 0
    rec = None
    for f in frames:
        if rec is None:
            rec = [f, f, 1]
            continue
        lo, hi = min(rec[0], f), max(rec[1], f)
        o = order(lo, hi)
        merge = {
            "per-page": False,
            "v3 bound": o <= 18,
            "density": density_fits(rec, f) is not None,
        }[policy]
        if merge:
            rec = [lo, hi, rec[2] + 1]
        else:
            inv += 1
            covered += 1 << order(rec[0], rec[1])
            rec = [f, f, 1]
    if rec:
        inv += 1
        covered += 1 << order(rec[0], rec[1])
    return inv, covered


def totals(batches, policy):
    """Invalidations and pages covered over batches under a policy."""
    inv = cov = 0
    for b in batches:
        a, c = replay(b, policy)
        inv += a
        cov += c
    return inv, cov


def table(rows, batch):
    """rows: (label, [batch of frames, ...]).  Prints and returns them."""
    out = []
    print(f"per batch of up to {batch}: invalidations / pages invalidated "
          "per page unmapped")
    print(f"{'frames':<22} " + " ".join(f"{p:>17}" for p in POLICIES))
    for label, batches in rows:
        pages = sum(len(b) for b in batches)
        row, cells = {"frames": label, "batches": len(batches),
                      "pages": pages}, []
        for p in POLICIES:
            inv, cov = totals(batches, p)
            row[p] = {"invalidations": inv, "pages_covered": cov}
            cells.append(f"{inv / len(batches):>7.2f} / {cov / pages:>7.1f}")
        out.append(row)
        print(f"{label:<22} " + " ".join(f"{c:>17}" for c in cells))
    return out


def from_log(path):
    rounds = {}
    for line in open(path, errors="replace"):
        line = line.replace("\r", "").rstrip("\n")
        if line.startswith("PG-FRAMES"):
            kv = dict(re.findall(r"(\w+)=(\S+)", line))
            rounds[(int(kv["n"]), int(kv["stride"]))] = \
                [int(x, 16) for x in kv["pfns"].split(",")]
    if not rounds:
        sys.exit(f"{path}: no PG-FRAMES lines")
    rows = []
    for (n, st), frames in sorted(rounds.items(),
                                  key=lambda x: (x[0][1], x[0][0])):
        label = f"{n}, " + ("contiguous" if st == 1 else f"1 in {st}")
        rows.append((label, [frames[i:i + 32] for i in range(0, n, 32)]))
    return table(rows, 32)


def batches_of(paths):
    """{row label: [batch, ...]}: the pg-frames lines Xen printed after
    each NB-FRAMES line, a row per boot (its log's name) and number of
    streams: where netback's frames lie is the boot's, not the build's."""
    rows = {}
    for path in paths:
        boot = os.path.basename(path).removesuffix(".log")
        cur = None
        for line in open(path, errors="replace"):
            line = line.replace("\r", "")
            m = re.search(r"NB-FRAMES rep=\d+ dir=(\S+) streams=(\d+)", line)
            if m:
                cur = rows.setdefault(f"{boot}, {m.group(2)} streams", [])
                continue
            m = re.search(r"pg-frames: pfns=([0-9a-f,]+)", line)
            if m and cur is not None:
                cur.append([int(x, 16) for x in m.group(1).split(",")])
            elif "pg-frames-end" in line:
                cur = None
    rows = {k: v for k, v in sorted(rows.items(), key=streams) if v}
    if not rows:
        sys.exit(f"{', '.join(paths)}: no recorded netback frames "
                 "(NB-FRAMES and pg-frames: lines)")
    return rows


def streams(item):
    boot, n = re.fullmatch(r"(.*), (\d+) streams", item[0]).groups()
    return boot, int(n)


def from_netback(paths):
    """The policies' table of netback's batches, and the batches, packed
    (pack()), for the record."""
    rows = batches_of(paths)
    return {"policies": table(list(rows.items()), 32),
            "batches": {k: [pack(b) for b in v] for k, v in rows.items()}}


def pack(batch):
    """A batch of frames as text: the first in hex, then each frame's
    difference from the one before it (signed hex)."""
    return ",".join([f"{batch[0]:x}"] + [
        f"{b - a:x}" if b >= a else f"-{a - b:x}"
        for a, b in zip(batch, batch[1:])])


def unpack(text):
    out = []
    for i, x in enumerate(text.split(",")):
        out.append(int(x, 16) + (out[-1] if i else 0))
    return out


COMPACT = (("per-page", "base"), ("density", "one range"),
           ("density, 2", "two ranges"), ("density, sorted", "sorted"))


def compact(rows, label):
    """rows: [(name, [batch, ...])]: invalidations per batch (pages
    invalidated per page unmapped) as the cover letter shows them."""
    print(f"{label:<18}" + "".join(f"{h:>13}" for _, h in COMPACT))
    for name, batches in rows:
        pages = sum(len(b) for b in batches)
        cells = []
        for p, _ in COMPACT:
            inv, cov = totals(batches, p)
            cells.append(f"{inv / len(batches):.2f} ({cov / pages:.1f})")
        print(f"{name:<18}" + "".join(f"{c:>13}" for c in cells))


def machine_label(m):
    """vt-d-2cpu: "VT-d, dom0 with 2 vCPUs"."""
    iommu, cpus = m.rsplit("-", 1)
    n = cpus.removesuffix("cpu")
    return ({"vt-d": "VT-d", "amd-vi": "AMD-Vi"}.get(iommu, iommu)
            + f", dom0 with {n} vCPU" + ("" if n == "1" else "s"))


def machine_order(m):
    return m.rsplit("-", 1)[0] != "vt-d", m


def from_record(path):
    """Each machine's recorded batches of a bench record, replayed."""
    bench = json.load(open(path)).get("bench") or {}
    machines = [(m, bench[m]["batches"]) for m in sorted(bench, key=machine_order)
                if bench[m].get("batches")]
    if not machines:
        sys.exit(f"{path}: no recorded netback frames")
    print("netback's unmap batches as recorded, per boot and number of")
    print("streams, replayed: invalidations per batch (pages invalidated")
    print("per page unmapped)")
    for m, rows in machines:
        print(machine_label(m))
        compact([("  %s, %d str" % streams((k, None)), [unpack(b) for b in v])
                 for k, v in sorted(rows.items(), key=streams)], "")


def synthetic(batches=5000, n=20):
    rnd = random.Random(1)
    kinds = {
        "contiguous": lambda b: list(range(b, b + n)),
        "clustered, 1 MiB": lambda b: rnd.sample(range(b, b + 256), n),
        "clustered, 4 MiB": lambda b: rnd.sample(range(b, b + 1024), n),
        "scattered, 4 GiB": lambda b: rnd.sample(range(1 << 20), n),
    }
    rows = []
    for label, make in kinds.items():
        rows.append((label, [make(rnd.randrange(1 << 20))
                             for _ in range(batches)]))
    return table(rows, n)


def pools(batches=5000, n=20):
    """Batches of n frames from k pools of 256 frames, 2^20 apart, taken
    in turn: invalidations per batch (pages invalidated per page)."""
    rnd = random.Random(1)
    cols = ("per-page", "density", "density, 2", "density, sorted")
    heads = ("base", "one range", "two ranges", "sorted")
    print(f"batches of {n} frames from k pools of 256 frames, taken in "
          "turn:")
    print("invalidations per batch (pages invalidated per page unmapped)")
    print("  k " + "".join(f"{h:>16}" for h in heads))
    out = []
    for k in (1, 2, 3, 4):
        rows = []
        for _ in range(batches):
            bases = [(i << 20) + rnd.randrange((1 << 20) - 256)
                     for i in range(k)]
            picks = [rnd.sample(range(b, b + 256), n) for b in bases]
            rows.append([picks[i % k][i // k] for i in range(n)])
        row, cells = {"pools": k, "batches": batches, "pages": n * batches}, []
        for p in cols:
            inv, cov = totals(rows, p)
            row[p] = {"invalidations": inv, "pages_covered": cov}
            cells.append(f"{inv / batches:.2f} ({cov / (n * batches):5.1f})")
        out.append(row)
        print(f"{k:>3} " + "".join(f"{c:>16}" for c in cells))
    return out


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__.strip().split("\n\n")[-1])
    js = None
    if "--json" in args:
        i = args.index("--json")
        js = args[i + 1]
        del args[i:i + 2]
    if args[0] == "--synthetic":
        out = synthetic()
    elif args[0] == "--pools":
        out = pools()
    elif args[0] == "--netback":
        out = from_netback(args[1:])
    elif args[0] == "--record":
        return from_record(args[1])
    else:
        out = from_log(args[0])
    if js:
        with open(js, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
