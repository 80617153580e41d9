# The proving ground of "x86/HVM: batch the flushes of grant unmaps".
#   make          set up, build base/patched/negative-control from the tree
#                 (XEN_SRC, else Debian 12's xen source), boot them under
#                 QEMU, print a verdict per machine, write the tables to
#                 out/report.txt (PG_VERBOSE=1 prints them) and
#                 out/report.json
#   make check    everything CI runs: unit tests, patch lint, the series'
#                 prefix builds, and the boots with their thresholds
#   make torture  the unmap torture (error paths, continuations, concurrent
#                 unmaps) on base, patched and every negative control,
#                 into out/torture.json (a quick part of it is in check)
#   make configs  every prefix of the series in x86_64 debug and release
#                 and arm64, and the whole series without HVM, without
#                 either IOMMU driver, without grant tables, and with clang
#   make ept      the EPT path: base/patched booted under Bochs (VMX+EPT),
#                 p2m flushes of the unmaps into out/report-ept.json (1
#                 CPU), and the torture with 2 CPUs into
#                 out/torture-ept.json
#   make bench    the netback benchmark (not part of check): base vs patched
#                 under QEMU with a Debian 12 PVH dom0, PVH domUs and iperf3,
#                 VT-d and AMD-Vi, dom0 with 1 and 2 vCPUs; prints the
#                 tables, writes out/netback-*.json and out/record-bench.json
#   make kit      the kit for a real Xen host (kit/README.md): the tree's
#                 hypervisors and the host tool, into out/kit/
#   make kit-e2e  the kit end to end on an emulated Debian host (slow, not
#                 part of check; after make on VT-d): install, boot its
#                 GRUB entries, run, compare, uninstall
SHELL := /bin/bash
.DEFAULT_GOAL := run

.PHONY: run setup tree check unit lint prefixes configs boots torture ept bench kit kit-e2e clean
setup:
	harness/setup-host.sh
	harness/get-qemu.sh

tree: setup
	@[ -n "$(XEN_SRC)" ] || harness/get-tree.sh

run: tree
	harness/recorded.sh run report.json -- harness/run.sh

unit: tree
	harness/unit.sh

lint:
	python3 harness/lint-patches.py patches/*/

prefixes: tree
	harness/build-prefixes.sh

configs: tree
	harness/recorded.sh configs configs.json -- harness/configs.sh

boots: tree
	harness/run.sh --check

torture: tree
	harness/recorded.sh torture torture.json -- harness/torture.sh --check --full

ept: tree
	harness/recorded.sh ept report-ept.json torture-ept.json -- harness/ept.sh

bench: tree
	ms=$$(harness/bench.sh --machines) && \
	harness/recorded.sh bench $$(for m in $$ms; do \
	    echo netback-$$m.json netback-$$m-policies.json; done) -- harness/bench.sh

kit: tree
	harness/kit.sh

kit-e2e: tree
	harness/kit-e2e.sh

check: setup
	harness/check.sh

clean:
	rm -rf build out
