#!/bin/bash
# boot-qemu.sh's retries and lib.sh's matchers behind them, with a
# stand-in QEMU printing what a boot would: which failed attempts are booted
# again, which fail at once, and what is kept of them.  Could wrongly pass
# if the stand-in's lines stopped matching what Xen and dom0 print.
set -uo pipefail
. "$(dirname "$0")/../../harness/lib.sh"
pass=0 fail=0
result() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok: $2"
           else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

# pg_emulator_fault: a triple fault whose saved state is Xen's own is the
# emulator's; one in the guest's own code is a real failure.
t=$(mktemp)
printf '(XEN) d0v1 Triple fault - invoking HVM shutdown action 1\r\n(XEN) RIP:    e008:[<ffff82d0402043fb>]\r\n(XEN) ds: 0000   es: 0000   fs: 0000   gs: 0000   ss: 0000   cs: e008\r\n' > "$t"
pg_emulator_fault "$t"
result $? "pg_emulator_fault recognises a guest state lost by the emulator"
sed -i 's/cs: e008/cs: 0010/' "$t"
! pg_emulator_fault "$t"
result $? "pg_emulator_fault leaves a guest's own triple fault a failure"
# pg_idt_fault: a triple fault on dom0's read of its IDT's #DF entry.
printf '(XEN) d0v0 Triple fault - invoking HVM shutdown action 1\r\n(XEN) cr3: 0000000002a10000   cr2: fffffe0000000080\r\n' > "$t"
pg_idt_fault "$t"
result $? "pg_idt_fault recognises dom0 faulting on its IDT"
sed -i 's/cr2: fffffe0000000080/cr2: fffffe0000000088/' "$t"
! pg_idt_fault "$t"
result $? "pg_idt_fault leaves another fault address a failure"
# pg_boot_stuck: the kernel's soft-lockup report, compared as a number.
printf '[   67.361715] watchdog: BUG: soft lockup - CPU#0 stuck for 52s! [migration/0:16]\r\n' > "$t"
! pg_boot_stuck "$t" 300
result $? "pg_boot_stuck leaves a shorter lockup alone"
printf '[ 2196.402894] watchdog: BUG: soft lockup - CPU#3 stuck for 2034s! [migration/3:30]\r\n' >> "$t"
pg_boot_stuck "$t" 300
result $? "pg_boot_stuck recognises a CPU stuck for the limit"
rm -f "$t"

# boot-qemu.sh's retries: a dom0 silent or stuck before PG-INIT, one that
# triple-faults on its IDT, or one whose state the emulator lost, is booted
# again, and failed after three tries; another triple fault in the guest's
# own code fails at once; one that finishes passes (a stand-in QEMU prints
# what a boot would).
t=$(mktemp -d); mkdir -p "$t/bin" "$t/dom0"
touch "$t/xen" "$t/dom0/vmlinuz" "$t/dom0/initrd.gz"
echo x > "$t/xen"; echo x > "$t/dom0/vmlinuz"; echo x > "$t/dom0/initrd.gz"
cat > "$t/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/sh
echo "(XEN) booting"
[ -e "$STUB_DIR/stall" ] && exec sleep 60
if [ -e "$STUB_DIR/stuck" ]; then
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        echo "[ 9.1] watchdog: BUG: soft lockup - CPU#0 stuck for ${i}s! [migration/0:16]"
        sleep 0.5
    done
fi
idt() {
    echo "(XEN) d0v0 Triple fault - invoking HVM shutdown action 1"
    echo "(XEN) cr3: 0000000002a10000   cr2: fffffe0000000080"
    exit 0
}
[ -e "$STUB_DIR/idt-boot" ] && idt
echo PG-INIT dom0 userspace up
[ -e "$STUB_DIR/idt" ] && idt
if [ -e "$STUB_DIR/triple" ]; then
    echo "(XEN) d0v1 Triple fault - invoking HVM shutdown action 1"
    echo "(XEN) ds: 0000   es: 0000   fs: 0000   gs: 0000   ss: 0000   cs: $(cat "$STUB_DIR/triple")"
    exit 0
fi
echo PG-DONE
QEMU
chmod +x "$t/bin/qemu-system-x86_64"
# stub WHAT [VAR=VALUE...]: boot-qemu.sh's status with the stand-in QEMU
# told WHAT ($t/WHAT, kept if already written), its logs of before gone.
stub() {
    local what=$1 rc
    shift
    rm -f "$t"/log*
    touch "$t/$what"
    env PATH="$t/bin:$PATH" STUB_DIR="$t" "$@" \
        "$PG_ROOT/harness/boot-qemu.sh" "$t/xen" "$t/dom0" "$t/log" 2>/dev/null
    rc=$?
    rm -f "$t/$what"
    return $rc
}
! stub stall PG_STALL_S=2 && [ -e "$t/log.stall-1" ] &&
    [ -e "$t/log.stall-2" ] && [ -e "$t/log.stall-3" ]
result $? "boot-qemu.sh boots a stalled dom0 again and fails after 3 stalls"
! stub stuck PG_STALL_S=4 && [ -e "$t/log.stall-3" ]
result $? "boot-qemu.sh boots a dom0 stuck (but not silent) again, 3 times at most"
! stub idt-boot && [ -e "$t/log.idt-fault-3" ]
result $? "boot-qemu.sh boots again after dom0 faulted on its IDT in its boot, 3 times at most"
! stub idt && [ -e "$t/log.idt-fault-3" ]
result $? "boot-qemu.sh boots again after dom0 faulted on its IDT in the workload, 3 times at most"
echo e008 > "$t/triple"
! stub triple && [ -e "$t/log.emulator-fault-3" ]
result $? "boot-qemu.sh boots again after the emulator lost dom0's state, 3 times at most"
echo 0010 > "$t/triple"
! stub triple && ! ls "$t"/log.*-[123] >/dev/null 2>&1
result $? "boot-qemu.sh fails a triple fault in dom0's own code at once"
stub finish PG_STALL_S=2 && ! ls "$t"/log.stall-* >/dev/null 2>&1
result $? "boot-qemu.sh passes a boot that finishes"
rm -rf "$t"


echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
