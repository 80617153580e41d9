#!/bin/bash
# bench-boot.sh XEN LOG [DOM0-BENCH ARGS...]
# Boot XEN under the proving ground's QEMU machine (q35 TCG, SVM+NPT,
# emulated VT-d, or AMD-Vi with BENCH_IOMMU=amd-vi) with BENCH_SMP CPUs
# (1; dom0 gets as many vCPUs), more memory and the benchmark's disk
# (build/bench/<base>/disk.img on the q35 AHCI controller, copy-on-write: the
# image is never changed), a PVH dom0 of the image's own kernel and
# initramfs, and run the netback benchmark (bench/netback/dom0-bench.py
# with ARGS).  The serial console goes to LOG.  Exits non-zero when the
# benchmark does not finish (NB-DONE) within BENCH_BOOT_TIMEOUT seconds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pg_qemu

xen=${1:?usage: bench-boot.sh XEN LOG [ARGS...]}
log=${2:?}
shift 2
img=$PG_BUILD/bench/$(pg_tree_base "$(pg_tree)")
[ -s "$xen" ] || die "no hypervisor at $xen"
[ -s "$img/disk.img" ] && [ -s "$img/vmlinuz" ] && [ -s "$img/initrd.img" ] ||
    die "no benchmark image in $img (harness/bench-mk-image.sh)"

args=$(echo "$*" | tr ' ' '+')
case "$args" in *,*) die "benchmark arguments must not contain commas" ;; esac
smp=${BENCH_SMP:-1}
case "$smp" in 1|2|4) ;; *) die "BENCH_SMP: 1, 2 or 4" ;; esac
XEN_CMDLINE=${BENCH_XEN_CMDLINE:-"dom0=pvh iommu=verbose,no-sharept dom0_mem=1024M,max:1024M dom0_max_vcpus=$smp console=com1 com1=115200,8n1 sync_console loglvl=all guest_loglvl=all"}
DOM0_CMDLINE="root=/dev/sda rw fsck.mode=skip init=/usr/local/sbin/bench-dom0 console=hvc0 loglevel=4 bench.args=$args"
iommu=${BENCH_IOMMU:-vt-d}
. "$(pg_machine "$iommu")"
XEN_CMDLINE="$XEN_CMDLINE${MACHINE_XEN_ARGS:+ $MACHINE_XEN_ARGS}"
trace=()
# QEMU's own count of IOTLB invalidations, as in the proving ground (off
# by default: one trace line per invalidation costs time in base).
[ "${BENCH_QEMU_TRACE:-0}" = 1 ] && case $iommu in
vt-d) trace=(-trace 'vtd_inv_desc_iotlb*' -trace 'vtd_inv_desc_wait*') ;;
amd-vi) trace=(-trace amdvi_pages_inval -trace amdvi_completion_wait) ;;
esac

tcg_thread=${BENCH_TCG_THREAD:-multi}
case "$tcg_thread" in single|multi) ;; *) die "BENCH_TCG_THREAD: single or multi" ;; esac
timeout_s=${BENCH_BOOT_TIMEOUT:-2400}
stall_s=${BENCH_STALL:-600}
set +e
timeout --kill-after=10 "$timeout_s" nice -n 5 "$PG_QEMU" \
    -machine q35 -accel tcg,thread="$tcg_thread" -cpu qemu64,+svm,+npt -m "${BENCH_MEM:-3072}" -smp "$smp" \
    -nodefaults -no-user-config -display none -no-reboot \
    ${MACHINE_DEVICES[@]+"${MACHINE_DEVICES[@]}"} \
    -drive file="$img/disk.img",format=raw,if=none,id=root,snapshot=on,cache=unsafe \
    -device ide-hd,drive=root,bus=ide.0 \
    -chardev stdio,id=ser0,signal=off -serial chardev:ser0 "${trace[@]}" \
    -monitor unix:"$log.monitor",server=on,wait=off \
    -kernel "$xen" -append "$XEN_CMDLINE" \
    -initrd "$img/vmlinuz $DOM0_CMDLINE,$img/initrd.img" \
    </dev/null >"$log" 2>&1 &
# A boot whose console stays silent for stall_s seconds is hung (seen
# once under heavy host load, before dom0's initramfs): stop it early.
pg_watch $! "$log" "$stall_s"
rc=$?
set -e
rm -f "$log.monitor"
[ $rc -ne 143 ] || die "console silent for ${stall_s}s: stopped (log: $log)"
[ $rc -eq 124 ] || [ $rc -eq 137 ] &&
    die "QEMU did not finish within ${timeout_s}s (log: $log)"
grep -q '^NB-DONE' <(tr -d '\r' < "$log") || {
    tr -d '\r' < "$log" | grep -E 'NB-ERROR|Panic|Assertion|BUG|Kernel panic' | head -5 >&2 || true
    die "benchmark did not finish (QEMU exit $rc, log: $log)"
}
