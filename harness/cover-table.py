#!/usr/bin/env python3
"""Print the proving ground's numbers (out/report.json, or a record of
results/) as the plain-text tables the cover letter carries: unmap
phase, base vs patched, one table per IOMMU, and what the density
control (the rule dropped) did in the kept rounds; for a bench record
(make bench), netback's counts per machine and its recorded unmap
batches replayed through the merge policies; for an EPT record (make
ept), Bochs' p2m flush requests and torture verdicts."""
import contextlib
import importlib.util
import io
import json
import os
import sys

r = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "out/report.json"))


def bench(r):
    """A bench record (make bench): per machine, domU to dom0, the
    counts per unmap batch and per grant of each build, the series'
    rule, and netback's recorded batches replayed (scatter-policies)."""
    spec = importlib.util.spec_from_file_location("scatter_policies", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "scatter-policies.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    t = r["tree"]
    print(f"  Xen {t['xen_version']} ({t['base']}, {t['describe']})")
    print()
    print("  Netback, a PVH domU sending to a PVH dom0 (iperf3, TCP), for")
    print("  the whole run (Xen's counters): g/b = grants unmapped per")
    print("  unmap batch; per batch (/b) and per grant (/g): inv = IOTLB")
    print("  invalidations, p2m = guest TLB flushes of p2m changes, ipi =")
    print("  flush IPI rounds; pg/g = pages invalidated per page unmapped")
    print()
    print(f"  {'streams':>7} {'build':<8}{'g/b':>5}{'inv/b':>7}{'p2m/b':>6}"
          f"{'ipi/b':>6}{'inv/g':>6}{'p2m/g':>6}{'ipi/g':>6}{'pg/g':>6}")
    held = []
    for m in sorted(r["bench"], key=mod.machine_order):
        b = r["bench"][m]
        label = mod.machine_label(m)
        print("  " + label)
        for x in b.get("rows", []):
            if x["direction"] != "domU-dom0":
                continue
            for v in ("base", "patched"):
                f = lambda k, w, d: (f"{x[v + '_' + k]:>{w}.{d}f}"
                                     if x.get(v + "_" + k) is not None
                                     else f"{'-':>{w}}")
                print(f"  {x['streams'] if v == 'base' else '':>7} {v:<8}"
                      f"{f('grants_per_batch', 5, 1)}"
                      f"{f('iotlb_inv_per_batch', 7, 2)}"
                      f"{f('p2m_per_batch', 6, 2)}{f('ipi_per_batch', 6, 2)}"
                      f"{f('iotlb_per_grant', 6, 2)}"
                      f"{f('p2m_per_grant', 6, 2)}{f('ipi_per_grant', 6, 2)}"
                      f"{f('iotlb_pages_per_page', 6, 1)}")
        bound = b.get("domU_dom0_flush_bound")
        held.append(f"{label}: " + (
            "no report (its boots failed)" if bound is None else
            ("held" if bound.get("held") else "NOT held")
            + f"; runs per row and build: {b.get('runs_per_row')}"))
    print()
    print("  The series' rule (patched: at most one p2m flush per unmap")
    print("  batch, IOTLB invalidations per grant at most base's):")
    for h in held:
        print("  " + h)
    print()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        mod.from_record(sys.argv[1])
    for line in out.getvalue().splitlines():
        print("  " + line if line else "")
    print()
    bad = sum(len(b.get("problems", [])) for b in r["bench"].values())
    print("  Problems in the boots' logs (assertions, oopses, WARNs, failed")
    print(f"  flushes, IOMMU faults, oracle reports): {bad or 'none'}")


def ept(r):
    """A make ept record: under Bochs, the p2m flush requests of each
    build's unmaps with one CPU, and the torture's verdicts with two."""
    t = r["tree"]
    print(f"  Xen {t['xen_version']} ({t['base']}, {t['describe']})")
    print()
    print("  Bochs (VMX with EPT, no IOMMU), one CPU: unmap of N grants,")
    print("  hc = grant_table_op hypercalls, p2m = p2m flush requests")
    print()
    print("                base      patched")
    print("       N      hc  p2m     hc  p2m")
    rows = {v: {x["n"]: x for x in xs if x["stride"] == 1}
            for v, xs in r["ept"]["rows"].get("none", {}).items()}
    for n in sorted(rows.get("base", {})):
        b, p = rows["base"][n], rows.get("patched", {}).get(n)
        print(f"  {n:>6}  {b['hypercalls']:>6} {b['p2m_tlb_flushes']:>4}"
              + (f" {p['hypercalls']:>6} {p['p2m_tlb_flushes']:>4}" if p
                 else "      -    -"))
    for v, o in sorted((r["ept"].get("oracle") or {}).get("none", {}).items()):
        what = " (the deferred flush dropped)" if v == "negative-control" else ""
        print(f"  {v}{what}: release-order reports {o}")
    if "torture_ept" in r:
        print()
        print("  Two CPUs, two-vCPU dom0: the unmap torture")
        for b in r["torture_ept"]["builds"]:
            if b.get("role", "build") == "build":
                what = "pass" if b["ok"] else "FAIL"
            else:
                what = ("caught by\n    " + ", ".join(b.get("caught_by", []))
                        if b["ok"] else "NOT CAUGHT")
            print(f"  {b['build']}: {b['cases']} cases, {b['pages']} "
                  f"grants, {what}")


if r.get("what") == "make bench":
    bench(r)
    sys.exit(0)
if r.get("what") == "make ept":
    ept(r)
    sys.exit(0)
if "boots" in r:        # a record (harness/record.py)
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
def frames(stride, kept):
    return ("contig." if stride == 1 else f"1 in {stride}") + \
        ("*" if kept else "")


t = r["tree"]
print(f"  Xen {t['xen_version']} ({t['base']}, {t['describe']})")
for iommu, (name, legend) in WHAT.items():
    rows = {}
    for x in r["runs"]:
        if x["phase"] == "unmap" and x["variant"] in ("base", "patched") \
                and x.get("iommu", "vt-d") == iommu:
            rows.setdefault((x["stride"], bool(x.get("kept")), x["n"]),
                            {})[x["variant"]] = x
    if not rows:
        continue
    print()
    for line in legend:
        print("  " + line)
    if any(k for _, k, _ in rows):
        print("  " + "*: other mappings keep each frame's IOMMU page table "
              "linked,")
        print("  " + "so that no unmap frees one")
    print()
    # The frames column: 8 wide, 9 with a kept round's mark.
    fw = max([8] + [len(frames(s, k)) for s, k, _ in rows])
    w = 29 if iommu != "none" else 9
    print(f"  {'':{fw + 4}} {'base':^{w}} {'patched':^{w}}".rstrip())
    hdr = f"{'inv':>4} {'dom':>3} {'pg/N':>5} {'wait':>4} {'p2m':>4} {'ipi':>4}"
    if iommu == "none":
        hdr = f"{'p2m':>4} {'ipi':>4}"
    print(f"  {'frames':<{fw}}{'N':>4} {hdr} {hdr}")
    for (stride, kept, n) in sorted(rows):
        v = rows[(stride, kept, n)]
        if "base" not in v or "patched" not in v:
            continue
        c = cell if iommu != "none" else \
            (lambda x, n: f"{x['p2m_tlb_flushes']:>4} {x['flush_ipis']:>4}")
        print(f"  {frames(stride, kept):<{fw}}{n:>4} {c(v['base'], n)} "
              f"{c(v['patched'], n)}")
# The density control boots kept rounds only: its invalidations and the
# pages they cover, against the rule's bound (harness/report.py).
ctl = [x for x in r["runs"] if x["phase"] == "unmap"
       and x["variant"] == "density-control"]
if ctl:
    print()
    print("  Density control (the density rule dropped), unmap: inv =")
    print("  page-selective IOTLB invalidations, pages = pages they cover,")
    print("  bound = the rule's, 2^9 per invalidation + 64 per page unmapped:")
    for iommu in WHAT:
        for x in sorted((x for x in ctl if x.get("iommu", "vt-d") == iommu),
                        key=lambda x: (x["stride"], x["n"])):
            print(f"  {WHAT[iommu][0]}: {x['n']} frames "
                  f"{frames(x['stride'], True)}: inv {x['iotlb_inv_pages']}, "
                  f"pages {x['iotlb_pages_covered']}, bound "
                  f"{512 * x['iotlb_inv_pages'] + 64 * x['n']}")
print()
print("  DMA after unmap (QEMU edu, 33 pages):")
for iommu in WHAT:
    d = r["dma_after_unmap"].get(iommu)
    if iommu == "none" or not d:
        continue
    print(f"  {WHAT.get(iommu, (iommu,))[0]}: base {d['base']}, patched "
          f"{d['patched']}, negative control {d['negative-control']}")
