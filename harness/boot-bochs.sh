#!/bin/bash
# boot-bochs.sh XEN DOM0DIR LOG [WORKLOAD ARGS...]
# Boot XEN with a PVH dom0 under Bochs (Intel CPU with VMX, EPT and VPID;
# PG_BOCHS_CPUS CPUs, default 1; no IOMMU) and run the workload.  The
# serial console (COM1: Xen, dom0 on hvc0, the workload's PG- lines) goes
# to LOG; Bochs' own log to LOG's name with .bochs appended.  GRUB
# (multiboot v1: multiboot2 triple-faults inside GRUB under Bochs) boots
# from an ISO made in build/bochs/<LOG's name>/.  Exits non-zero when
# the workload does not finish (PG-DONE) within PG_BOCHS_TIMEOUT seconds:
# Bochs exits 1 after a normal ACPI power-off, which counts as success
# only with PG-DONE.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

xen=${1:?usage: boot-bochs.sh XEN DOM0DIR LOG [ARGS...]}
dom0=${2:?}
log=${3:?}
shift 3
xen=$(realpath -m "$xen"); dom0=$(realpath -m "$dom0"); log=$(realpath -m "$log")
pg_boot_inputs "$xen" "$dom0"
for c in bochs grub-mkrescue xorriso mformat; do
    command -v $c >/dev/null || die "$c not installed (harness/setup-host.sh)"
done
bios=/usr/share/bochs/BIOS-bochs-latest
vgabios=/usr/share/vgabios/vgabios.bin
[ -s "$bios" ] || die "no Bochs BIOS at $bios (package bochsbios)"
[ -s "$vgabios" ] || die "no VGA BIOS at $vgabios (package vgabios)"

# The dom0 kernel as a gzip-compressed ELF, made once per kernel: Xen
# decompresses Debian's xz bzImage payload in ~75 s under Bochs, and the
# plain ELF (66 MB) is slow to read from the ISO.  GRUB must pass it on
# compressed (--nounzip): its own gunzip costs more than a minute.
kernel=$dom0/vmlinux.gz
exec 8>"$dom0/.vmlinux.lock"
flock 8
sum=$(cksum < "$dom0/vmlinuz")
if [ ! -s "$kernel" ] || [ "$(cat "$kernel.src" 2>/dev/null)" != "$sum" ]; then
    off=$(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$dom0/vmlinuz" | cut -d: -f1 | sed -n 1p)
    [ -n "$off" ] || die "no xz payload in $dom0/vmlinuz"
    # (xz stops at the end of its stream: tail's SIGPIPE is expected.)
    tail -c +$((off + 1)) "$dom0/vmlinuz" 2>/dev/null |
        xz -dc 2>/dev/null > "$kernel.elf" || true
    [ "$(head -c 4 "$kernel.elf" | od -An -c | tr -d ' ')" = "177ELF" ] ||
        die "extracting the ELF kernel from $dom0/vmlinuz failed"
    gzip -9 -c -n "$kernel.elf" > "$kernel.tmp"
    rm -f "$kernel.elf"
    mv "$kernel.tmp" "$kernel"
    echo "$sum" > "$kernel.src"
fi
flock -u 8

XEN_CMDLINE=${XEN_CMDLINE:-"dom0=pvh dom0-iommu=none apicv=0 dom0_mem=512M dom0_max_vcpus=1 console=com1 com1=115200,8n1 sync_console loglvl=all guest_loglvl=all"}
args=$(echo "$*" | tr ' ' '+')
# (cryptomgr.notests: the kernel's crypto self-tests cost ~8 of dom0's
# ~28 emulated seconds of boot.)
DOM0_CMDLINE="console=hvc0 loglevel=5 cryptomgr.notests pg.args=$args"

# One folder per log: boots of one hypervisor may run at once.
work=$PG_BUILD/bochs/$(basename "$log" .log)
rm -rf "$work"; mkdir -p "$work/iso/boot/grub"
cp "$xen" "$work/iso/boot/xen"
cp "$kernel" "$work/iso/boot/vmlinux.gz"
cp "$dom0/initrd.gz" "$work/iso/boot/initrd.gz"
cat > "$work/iso/boot/grub/grub.cfg" <<CFG
set timeout=0
set default=0
menuentry "xen" {
    multiboot /boot/xen $XEN_CMDLINE
    module --nounzip /boot/vmlinux.gz vmlinux $DOM0_CMDLINE
    module --nounzip /boot/initrd.gz initrd
}
CFG
grub-mkrescue -d /usr/lib/grub/i386-pc -o "$work/boot.iso" "$work/iso" \
    >"$work/grub-mkrescue.log" 2>&1 || {
    cat "$work/grub-mkrescue.log" >&2; die "grub-mkrescue failed"
}

# Bochs: Haswell (corei7_skylake_x would need cpuid=no-xsavec), headless
# (Debian's Bochs has no 'nogui': rfb without waiting for a client), the
# built-in debugger told to continue.  With two CPUs Xen needs
# x2apic=false and dom0 the null scheduler (ept.sh's command line).
cpus=${PG_BOCHS_CPUS:-1}
case $cpus in [1-9]) ;; *) die "PG_BOCHS_CPUS: 1 to 9, not $cpus" ;; esac
mkdir -p "$(dirname "$log")"
: > "$log"
cat > "$work/bochsrc" <<RC
megs: 1024
cpu: model=corei7_haswell_4770, count=$cpus, ips=100000000, reset_on_triple_fault=0
romimage: file=$bios
vgaromimage: file=$vgabios
ata0-master: type=cdrom, path=$work/boot.iso, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev=$log
clock: sync=none, time0=local
display_library: rfb, options="timeout=0"
log: $log.bochs
panic: action=fatal
error: action=report
info: action=ignore
debug: action=ignore
RC
echo c > "$work/debugger.rc"
rm -f "$log.bochs"

timeout_s=${PG_BOCHS_TIMEOUT:-900}
set +e
# (Debian's Bochs 2.7 aborts with "buffer overflow detected" under a
# UTF-8 locale, e.g. LANG=C.UTF-8.)
(cd "$work" && LANG=C LC_ALL=C timeout --kill-after=10 "$timeout_s" \
    bochs -q -f "$work/bochsrc" -rc "$work/debugger.rc" </dev/null \
    >"$work/bochs.stdout" 2>&1)
rc=$?
set -e
[ $rc -eq 124 ] || [ $rc -eq 137 ] &&
    die "Bochs did not finish within ${timeout_s}s (log: $log)"
grep -q '^PG-DONE' <(tr -d '\r' < "$log") || {
    tr -d '\r' < "$log" | grep -E 'PG-ERROR|Panic|Assertion|BUG' | head -5 >&2 || true
    tail -3 "$log.bochs" >&2 || true
    die "workload did not finish (Bochs exit $rc, log: $log)"
}
