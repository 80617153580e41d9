#!/usr/bin/env python3
"""machine.py MACHINE < LOG: test.sh's crafted VT-d boot (vlog) as the
same boot on MACHINE (amd-vi, vt-d-ats, amd-vi-ats or none) prints it.
Each IOTLB invalidation keeps its pages: on AMD-Vi an
INVALIDATE_IOMMU_PAGES whose size Xen counts (4K, <=2M, <=1G) and whose
pages it adds up; with ATS each also invalidates the device IOTLB over
the same pages (a 4K one without the S bit) and waits for it apart;
without an IOMMU nothing is invalidated, there is no DMA detector and
the oracle alone reports the control."""
import re
import sys

MASK = re.compile(r"^vtd_inv_desc_iotlb_pages .* mask 0x([0-9a-f]+)$")
FAULT = {"amd-vi": "(XEN) AMD-Vi: IO_PAGE_FAULT: 0000:00:04.0 d0 addr "
                   "0000000000001000 flags 0"}
FAULT["amd-vi-ats"] = FAULT["amd-vi"]


def convert(lines, machine):
    amd, ats = machine.startswith("amd-vi"), machine.endswith("-ats")
    out, masks = [], []
    for line in lines:
        m = MASK.match(line)
        if line.startswith("PG-BEGIN"):
            masks = []
        if machine == "none" and (line.startswith(("vtd_", "PG-DMA"))
                                  or "DMAR" in line):
            continue
        if m:
            k = int(m.group(1), 16)
            masks.append(k)
            out.append("amdvi_pages_inval domid 0" if amd else line)
            if ats:
                # ADDR's low bits with S: 2 << (trailing ones) pages.
                hi = ((1 << (k - 1)) - 1) << 12 | 1 if k else 0
                out.append("amdvi_iotlb_inval devid 0x20" if amd else
                           f"vtd_inv_desc type device high {hi:#x} low 0x3")
            continue
        if line.startswith("vtd_inv_desc_wait"):
            w = "amdvi_completion_wait addr 0x0 data 0x0" if amd else line
            out += [w] * (2 if ats else 1)
            continue
        if "DMAR" in line and machine in FAULT:
            line = FAULT[machine]
        if line.startswith("PG-END"):
            inv, pages = len(masks), sum(1 << k for k in masks)
            if machine == "none":
                inv = 0
            line = re.sub(r"pg_iotlb_page=\d+", f"pg_iotlb_page={inv}", line)
            line = re.sub(r"pg_iotlb_wait=\d+",
                          f"pg_iotlb_wait={inv * (2 if ats else 1)}", line)
            if ats:
                line = re.sub(r"pg_dev_iotlb=\d+ pg_dev_iotlb_pages=\d+",
                              f"pg_dev_iotlb={inv} pg_dev_iotlb_pages={pages}",
                              line)
            if amd:
                line += (f" pg_iotlb_2m={sum(1 for k in masks if 0 < k <= 9)}"
                         f" pg_iotlb_1g={sum(1 for k in masks if k > 9)}"
                         f" pg_iotlb_pages={pages}")
        out.append(line)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("amd-vi", "vt-d-ats",
                                                 "amd-vi-ats", "none"):
        sys.exit("usage: machine.py amd-vi|vt-d-ats|amd-vi-ats|none < LOG")
    print("\n".join(convert(sys.stdin.read().splitlines(), sys.argv[1])))
