#!/bin/bash
# check.sh: everything `make check` (and so CI) runs, on the tree under
# test (XEN_SRC, else Debian 12's xen source): unit tests and lint, the
# reproducer of QEMU's IGNNE race under Debian's QEMU and ours, every
# prefix of the series built (x86_64 debug; arm64 the whole series), the
# QEMU boots of base/patched/negative-control with their thresholds under
# VT-d, AMD-Vi and without an IOMMU (and the density control under VT-d
# and AMD-Vi), the quick torture (patched on all
# five machines, ATS included, one control per detector and at least one
# on every machine; base too on staging), and the EPT boots under Bochs
# with their control.  Ends with the run's record, out/record-check.json,
# the environment and each stage's verdict, failed ones first; a boot
# that fails fails its stage.  It runs its
# defaults only: a variable changing what it runs fails it at once
# (harness/record.py, ENV_RUN).  `make configs` builds every
# prefix in release and arm64 too, `make` boots the ATS machines, `make
# torture` every control.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

pass=0 fail=0 stages=()
run() {
    local name=$1; shift
    step "check: $name"
    if "$@"; then pass=$((pass + 1)); echo "check ok: $name"
        stages+=(--stage "$name=ok")
    else fail=$((fail + 1)); echo "check FAILED: $name"
        stages+=(--stage "$name=failed"); fi
}

python3 "$PG_ROOT/harness/record.py" --defaults || exit 1
"$PG_ROOT/harness/setup-host.sh" && "$PG_ROOT/harness/get-qemu.sh" || exit 1
[ -n "${XEN_SRC:-}" ] || "$PG_ROOT/harness/get-tree.sh" || exit 1
base=$(pg_tree_base "$(pg_tree)") || exit 1

# This run's outputs only: an earlier run's are not its record.
outs=("$PG_OUT/report.json" "$PG_OUT/torture.json" "$PG_OUT/report-ept.json"
      "$PG_OUT/torture-ept.json")
rm -f "${outs[@]}"
run "unit tests and lint" "$PG_ROOT/harness/unit.sh"
run "QEMU's IGNNE race: shown on Debian's QEMU, not on ours" \
    "$PG_ROOT/harness/qemu/repro/run.sh" --check
run "series prefixes build ($base)" "$PG_ROOT/harness/build-prefixes.sh" \
    debug arm64:last
run "boots and thresholds ($base)" \
    env PG_IOMMUS="vt-d amd-vi none" "$PG_ROOT/harness/run.sh" --check
run "unmap torture, quick ($base)" "$PG_ROOT/harness/torture.sh" --check
run "EPT boots under Bochs ($base)" "$PG_ROOT/harness/ept.sh" --check
# The run's record (results/README.md) and its environment.
python3 "$PG_ROOT/harness/record.py" --what "make check" \
    --out "$PG_OUT/record-check.json" "${stages[@]}" "${outs[@]}"
# Each stage's verdict, the failed ones first.
for s in "${stages[@]}"; do [ "${s%=failed}" = "$s" ] || echo "FAILED: ${s%=failed}"; done
for s in "${stages[@]}"; do [ "${s%=ok}" = "$s" ] || echo "ok: ${s%=ok}"; done
echo "checks: $pass passed, $fail failed; record: $PG_OUT/record-check.json"
# Outside the record, which a run on new mails writes for the letters to
# be regenerated from: the letters' records are of the mails as they are.
python3 "$PG_ROOT/harness/check-letters.py" || fail=$((fail + 1))
[ $fail -eq 0 ]
