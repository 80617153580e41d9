#!/usr/bin/env python3
"""Print the proving ground's numbers (out/report.json) as the plain-text
table the cover letter carries: unmap phase, base vs patched."""
import json
import sys

r = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "out/report.json"))
rows = {}
for x in r["runs"]:
    if x["phase"] == "unmap" and x["variant"] in ("base", "patched"):
        rows.setdefault((x["stride"], x["n"]), {})[x["variant"]] = x


def cell(x):
    inv = x["iotlb_inv_pages"] + x["iotlb_inv_domain"] + x["iotlb_inv_global"]
    dom = x["iotlb_inv_domain"] + x["iotlb_inv_global"]
    return (f"{inv:>4}{'*' if dom else ' '} {x['iotlb_waits']:>4} "
            f"{x['p2m_tlb_flushes']:>4} {x['flush_ipis']:>4}")


t = r["tree"]
print(f"  Xen {t['xen_version']} ({t['base']}, {t['describe']})")
print("  unmap of N grants, per run:")
print("  invalidations (IOTLB, QEMU's count; * = some domain-wide),")
print("  waits (VT-d wait descriptors), p2m (guest TLB flushes of p2m")
print("  changes) and ipi (flush IPI rounds, Xen's counters)")
print()
print(f"  {'':17} {'base':^19}   {'patched':^19}".rstrip())
print(f"  {'frames':<8}{'N':>5}    {'inv':>4} {'wait':>4} {'p2m':>4} {'ipi':>4}"
      f"    {'inv':>4} {'wait':>4} {'p2m':>4} {'ipi':>4}")
for (stride, n) in sorted(rows):
    v = rows[(stride, n)]
    if "base" not in v or "patched" not in v:
        continue
    what = "contig." if stride == 1 else f"1 in {stride}"
    print(f"  {what:<8}{n:>5}    {cell(v['base'])}    {cell(v['patched'])}")
d = r["dma_after_unmap"]
print()
print("  DMA after unmap (QEMU edu, 33 pages):")
print(f"  base {d['base']}, patched {d['patched']}, negative control "
      f"{d['negative-control']}")
