#!/usr/bin/env python3
"""Print the proving ground's numbers (out/report.json, or a record of
results/) as the plain-text tables the cover letter carries: unmap
phase, base vs patched, one table per IOMMU."""
import json
import sys

r = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "out/report.json"))
retried = None
if "boots" in r:        # a record (harness/record.py)
    retried = len([x for x in r["retries"]
                   if x.get("source", "").startswith("report")])
    r = {"tree": r["tree"], "dma_after_unmap": r["boots"]["dma_after_unmap"],
         "runs": [dict(x, phase="unmap", variant=v, iommu=i)
                  for i, vs in r["boots"]["rows"].items()
                  for v, xs in vs.items() for x in xs]}


def cell(x, n):
    inv = x["iotlb_inv_pages"] + x["iotlb_inv_domain"] + x["iotlb_inv_global"]
    dom = x["iotlb_inv_domain"] + x["iotlb_inv_global"]
    return (f"{inv:>4} {dom:>3} {x['iotlb_pages_covered'] / n:>5.1f} "
            f"{x['iotlb_waits']:>4} {x['p2m_tlb_flushes']:>4} "
            f"{x['flush_ipis']:>4}")


WHAT = {
    "vt-d": ("VT-d", [
        "VT-d: unmap of N grants, per run: inv = IOTLB invalidations,",
        "dom = how many of them domain-wide (QEMU's count), pg/N = pages",
        "invalidated page-selectively per page unmapped, wait = VT-d wait",
        "descriptors, p2m = guest TLB flushes of p2m changes, ipi = flush",
        "IPI rounds"]),
    "amd-vi": ("AMD-Vi", [
        "AMD-Vi: unmap of N grants, per run: inv = INVALIDATE_IOMMU_PAGES",
        "commands, dom = how many of them of all the domain's pages (Xen's",
        "counts; QEMU's total agrees), pg/N = pages the others cover",
        "per page unmapped, wait = COMPLETION_WAITs, p2m = guest TLB",
        "flushes of p2m changes, ipi = flush IPI rounds"]),
    "none": ("no IOMMU", [
        "No IOMMU (dom0-iommu=none): unmap of N grants, per run: p2m =",
        "guest TLB flushes of p2m changes, ipi = flush IPI rounds"]),
}
t = r["tree"]
print(f"  Xen {t['xen_version']} ({t['base']}, {t['describe']})")
for iommu, (name, legend) in WHAT.items():
    rows = {}
    for x in r["runs"]:
        if x["phase"] == "unmap" and x["variant"] in ("base", "patched") \
                and x.get("iommu", "vt-d") == iommu:
            rows.setdefault((x["stride"], x["n"]), {})[x["variant"]] = x
    if not rows:
        continue
    print()
    for line in legend:
        print("  " + line)
    print()
    w = 29 if iommu != "none" else 9
    print(f"  {'':12} {'base':^{w}} {'patched':^{w}}".rstrip())
    hdr = f"{'inv':>4} {'dom':>3} {'pg/N':>5} {'wait':>4} {'p2m':>4} {'ipi':>4}"
    if iommu == "none":
        hdr = f"{'p2m':>4} {'ipi':>4}"
    print(f"  {'frames':<8}{'N':>4} {hdr} {hdr}")
    for (stride, n) in sorted(rows):
        v = rows[(stride, n)]
        if "base" not in v or "patched" not in v:
            continue
        what = "contig." if stride == 1 else f"1 in {stride}"
        c = cell if iommu != "none" else \
            (lambda x, n: f"{x['p2m_tlb_flushes']:>4} {x['flush_ipis']:>4}")
        print(f"  {what:<8}{n:>4} {c(v['base'], n)} {c(v['patched'], n)}")
print()
print("  DMA after unmap (QEMU edu, 33 pages):")
for iommu in WHAT:
    d = r["dma_after_unmap"].get(iommu)
    if iommu == "none" or not d:
        continue
    print(f"  {WHAT.get(iommu, (iommu,))[0]}: base {d['base']}, patched "
          f"{d['patched']}, negative control {d['negative-control']}")
if retried is not None:
    print()
    print(f"  Boots booted again: {retried}")
