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


def cell(x, n):
    inv = x["iotlb_inv_pages"] + x["iotlb_inv_domain"] + x["iotlb_inv_global"]
    dom = x["iotlb_inv_domain"] + x["iotlb_inv_global"]
    return (f"{inv:>4} {dom:>3} {x['iotlb_pages_covered'] / n:>5.1f} "
            f"{x['iotlb_waits']:>4} {x['p2m_tlb_flushes']:>4} "
            f"{x['flush_ipis']:>4}")


t = r["tree"]
print(f"  Xen {t['xen_version']} ({t['base']}, {t['describe']})")
print("  unmap of N grants, per run: inv = IOTLB invalidations, dom = how")
print("  many of them domain-wide (QEMU's count), pg/N = pages invalidated")
print("  page-selectively per page unmapped, wait = VT-d wait descriptors,")
print("  p2m = guest TLB flushes of p2m changes, ipi = flush IPI rounds")
print()
print(f"  {'':12} {'base':^29} {'patched':^29}".rstrip())
hdr = f"{'inv':>4} {'dom':>3} {'pg/N':>5} {'wait':>4} {'p2m':>4} {'ipi':>4}"
print(f"  {'frames':<8}{'N':>4} {hdr} {hdr}")
for (stride, n) in sorted(rows):
    v = rows[(stride, n)]
    if "base" not in v or "patched" not in v:
        continue
    what = "contig." if stride == 1 else f"1 in {stride}"
    print(f"  {what:<8}{n:>4} {cell(v['base'], n)} {cell(v['patched'], n)}")
d = r["dma_after_unmap"]
print()
print("  DMA after unmap (QEMU edu, 33 pages):")
print(f"  base {d['base']}, patched {d['patched']}, negative control "
      f"{d['negative-control']}")
