#!/bin/bash
# boot-qemu.sh XEN DOM0DIR LOG [WORKLOAD ARGS...]
# Boot XEN with a PVH dom0 under qemu-system-x86_64 (software emulation:
# q35, SVM+NPT CPU, QEMU's edu DMA device, and the IOMMU of the machine
# PG_IOMMU names, harness/machines/qemu-PG_IOMMU) and run the workload.  The serial console (stdout) and QEMU's
# IOMMU trace events (stderr) go to one log in the order QEMU wrote them;
# QEMU runs either IOMMU's commands when Xen writes its queue's tail and
# Xen's console is synchronous, so a marker the workload prints precedes
# every invalidation its next step issues.  Exits non-zero when the workload
# does not finish (PG-DONE) within PG_BOOT_TIMEOUT seconds.  PG_QEMU_SMP
# sets the number of CPUs (default 2); PG_QEMU_TRACE=0 drops the trace;
# PG_IOMMU picks the machine: vt-d (default), amd-vi or none.
# PG_QEMU_INT=1 writes QEMU's log of every interrupt and exception it
# delivers, with the CPU state it used (-d int), to LOG.qemu-int (large).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

xen=${1:?usage: boot-qemu.sh XEN DOM0DIR LOG [ARGS...]}
dom0=${2:?}
log=${3:?}
shift 3
pg_boot_inputs "$xen" "$dom0"
pg_qemu

# QEMU splits the module list at commas: no comma in module command lines.
args=$(echo "$*" | tr ' ' '+')
case "$args" in *,*) die "workload arguments must not contain commas" ;; esac
XEN_CMDLINE=${XEN_CMDLINE:-"dom0=pvh iommu=verbose,no-sharept dom0_mem=1024M dom0_max_vcpus=2 console=com1 com1=115200,8n1 sync_console loglvl=all guest_loglvl=all"}
DOM0_CMDLINE="console=hvc0 loglevel=5 pg.args=$args"

machine=$(pg_machine "${PG_IOMMU:-vt-d}")
. "$machine"
XEN_CMDLINE="$XEN_CMDLINE${MACHINE_XEN_ARGS:+ $MACHINE_XEN_ARGS}"
trace=(${MACHINE_TRACE[@]+"${MACHINE_TRACE[@]}"})
[ "${PG_QEMU_TRACE:-1}" = 1 ] || trace=()
[ "${PG_QEMU_INT:-0}" = 1 ] && trace+=(-d int -D "$log.qemu-int")
timeout_s=${PG_BOOT_TIMEOUT:-900}
# A dom0 that stops printing, or reports a CPU stuck, for PG_STALL_S
# seconds before its init ran (PG-INIT) is stopped: the boot failed.
stall_s=${PG_STALL_S:-300}
booted() { [ -e "$log" ] && grep -q '^PG-INIT' <(tr -d '\r' < "$log"); }
finished() { grep -q '^PG-DONE' <(tr -d '\r' < "$log"); }
timeout --kill-after=10 "$timeout_s" "$PG_QEMU" \
    -machine q35,accel=tcg -cpu qemu64,+svm,+npt -m 2048 -smp "${PG_QEMU_SMP:-2}" \
    -nodefaults -no-user-config -display none -no-reboot \
    ${MACHINE_DEVICES[@]+"${MACHINE_DEVICES[@]}"} \
    -device edu,addr=04.0,dma_mask=0xffffffffffff \
    -chardev stdio,id=ser0,signal=off -serial chardev:ser0 \
    ${trace[@]+"${trace[@]}"} \
    -kernel "$xen" -append "$XEN_CMDLINE" \
    -initrd "$dom0/vmlinuz $DOM0_CMDLINE,$dom0/initrd.gz" \
    </dev/null >"$log" 2>&1 &
qemu=$!
size=-1 quiet=0
while kill -0 $qemu 2>/dev/null && ! booted; do
    sleep 2
    new=$(stat -c %s "$log" 2>/dev/null || echo 0)
    if [ "$new" = "$size" ]; then quiet=$((quiet + 2)); else quiet=0 size=$new; fi
    if [ $quiet -ge "$stall_s" ] || pg_boot_stuck "$log" "$stall_s"; then
        pkill -P $qemu 2>/dev/null || true
        kill $qemu 2>/dev/null || true
        wait $qemu || true
        die "dom0 stalled in its boot for ${stall_s}s (log: $log)"
    fi
done
set +e
wait $qemu
rc=$?
set -e
[ $rc -eq 124 ] || [ $rc -eq 137 ] &&
    die "QEMU did not finish within ${timeout_s}s (log: $log)"
finished || {
    tr -d '\r' < "$log" | grep -E 'PG-ERROR|Panic|Assertion|BUG' | head -5 >&2 || true
    die "workload did not finish (QEMU exit $rc, log: $log)"
}
