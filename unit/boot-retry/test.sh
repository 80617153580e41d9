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

# pg_boot_stuck: the kernel's soft-lockup report, compared as a number.
t=$(mktemp)
printf '[   67.361715] watchdog: BUG: soft lockup - CPU#0 stuck for 52s! [migration/0:16]\r\n' > "$t"
! pg_boot_stuck "$t" 300
result $? "pg_boot_stuck leaves a shorter lockup alone"
printf '[ 2196.402894] watchdog: BUG: soft lockup - CPU#3 stuck for 2034s! [migration/3:30]\r\n' >> "$t"
pg_boot_stuck "$t" 300
result $? "pg_boot_stuck recognises a CPU stuck for the limit"
rm -f "$t"

# boot-qemu.sh's retries, with a stand-in QEMU: attempt N prints the
# file $t/N if there is one, else $t/all, else a finished boot.
t=$(mktemp -d); mkdir -p "$t/bin" "$t/dom0"
trap 'rm -rf "$t"' EXIT
echo x > "$t/xen"; echo x > "$t/dom0/vmlinuz"; echo x > "$t/dom0/initrd.gz"
cat > "$t/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/sh
n=$(($(cat "$STUB_DIR/count" 2>/dev/null || echo 0) + 1))
echo $n > "$STUB_DIR/count"
f=$STUB_DIR/$n; [ -e "$f" ] || f=$STUB_DIR/all
[ -e "$f" ] || { printf '(XEN) booting\nPG-INIT dom0 userspace up\nPG-DONE\n'; exit 0; }
. "$f"
QEMU
chmod +x "$t/bin/qemu-system-x86_64"
# stub BASE [VAR=VALUE...]: boot-qemu.sh's status on BASE with the
# stand-in; $t/1, $t/2, $t/all say what each attempt prints.
stub() {
    local b=$1
    shift
    rm -f "$t/count"
    env PATH="$t/bin:$PATH" STUB_DIR="$t" PG_BASE="$b" "$@" \
        "$PG_ROOT/harness/boot-qemu.sh" "$t/xen" "$t/dom0" "$t/log" 2>"$t/err"
}
# attempts FILE...: what the attempts print, the rest finishing.
attempts() { rm -f "$t/1" "$t/2" "$t/3" "$t/all" "$t/log"*; }
tries() { grep -c . "$t/log.retries" 2>/dev/null || echo 0; }
init='echo "(XEN) booting"; echo "PG-INIT dom0 userspace up"'
idt='echo "(XEN) d0v0 Triple fault - invoking HVM shutdown action 1"
echo "(XEN) *** Dumping Dom0 vcpu#0 state: ***"
echo "(XEN) ----[ Xen-4.23-unstable  x86_64  debug=y  Not tainted ]----"
echo "(XEN) RIP:    0010:[<ffffffff8107ee05>]"
echo "(XEN) RFLAGS: 0000000000010046   CONTEXT: hvm guest (d0v0)"
echo "(XEN) cr3: 0000000002a10000   cr2: fffffe0000000080"
echo "(XEN) ds: 0000   es: 0000   fs: 0000   gs: 0000   ss: 0018   cs: 0010"'
emu='echo "(XEN) d0v1 Triple fault - invoking HVM shutdown action 1"
echo "(XEN) *** Dumping Dom0 vcpu#1 state: ***"
echo "(XEN) ----[ Xen-4.17.5  x86_64  debug=y  Not tainted ]----"
echo "(XEN) RIP:    e008:[<ffff82d0402043fb>]"
echo "(XEN) RFLAGS: 0000000000000002   CONTEXT: hvm guest (d0v1)"
echo "(XEN) ds: 0000   es: 0000   fs: 0000   gs: 0000   ss: 0000   cs: e008"'
stats='echo "(XEN) pg-oracle-stats: releases=$1 frees=0 bad_tlb=$2 bad_iotlb=0 bad_free=0"'

attempts; echo "$init; $idt" > "$t/1"
stub staging && [ "$(tries)" = 1 ] && [ -e "$t/log.idt-fault-1" ] &&
    grep -q '"signature".*cr2: fffffe0000000080' "$t/log.retries" &&
    grep -q 'retried: idt-fault' "$t/err"
result $? "staging: a clean attempt faulting on its IDT is booted again, recorded and kept"
attempts; echo "$init; $idt" > "$t/all"
! stub staging && [ "$(tries)" = 3 ] && [ -e "$t/log.idt-fault-3" ]
result $? "staging: the IDT fault is booted again twice at most, each try recorded"
attempts; echo "$init; $idt" > "$t/1"
! stub stable-4.17 && [ "$(tries)" = 0 ] && grep -q 'not retried on stable-4.17' "$t/err"
result $? "stable-4.17: the IDT fault, never seen on its base, fails at once"
attempts; echo "$init; $idt" > "$t/1"
! stub staging PG_RETRY=0 && [ "$(tries)" = 0 ]
result $? "PG_RETRY=0 turns the retry off"
for dirt in 'echo "(XEN) pg-oracle: d0 gfn 0x1 released before its IOTLB flush"' \
    'echo "PG-T case=p256 n=256 rc=0 want=0 pages=256 dma_pages=0 stale_dma=0 stale_cpu=0 stale_race=2 bad=0 result=FAIL"' \
    'echo "PG-T stale-cpu tag=1 i=2 reads the granter'"'"'s pattern"' \
    'echo "PG-DMA n=33 when=after-unmap data=3 fault=30 other=0"' \
    'echo "PG-ERROR unmap: Invalid argument"' \
    'echo "[   12.3] BUG: unable to handle page fault for address: ffff8880"' \
    'echo "(XEN) Assertion '"'x'"' failed at arch/x86/mm/p2m.c:306"' \
    "set -- 0 0; $stats; set -- 32 3; $stats"; do
    attempts; echo "$init; $dirt; $idt" > "$t/1"
    ! stub staging && [ "$(tries)" = 0 ] && grep -q 'not retried: idt-fault after' "$t/err"
    result $? "staging: an IDT fault after what a retry would hide fails at once: ${dirt:6:50}"
done
attempts; echo "$init; $emu" > "$t/1"
stub stable-4.17 && [ -e "$t/log.emulator-fault-1" ]
result $? "a guest state lost by the emulator (hvm guest context at CS e008) is booted again"
# dom0's own triple fault, then an assertion whose own dump is Xen's (e008)
attempts; echo "$init; ${idt//fffffe0000000080/0000000000001000}
echo \"(XEN) Assertion 'x' failed at arch/x86/domain.c:2175\"
echo \"(XEN) ----[ Xen-4.17.5  x86_64  debug=y  Not tainted ]----\"
echo \"(XEN) RIP:    e008:[<ffff82d0402043fb>] context_switch+0x1/0x2\"
echo \"(XEN) RFLAGS: 0000000000010002   CONTEXT: hypervisor (d0v0)\"
echo \"(XEN) ds: 0000   es: 0000   fs: 0000   gs: 0000   ss: 0000   cs: e008\"" > "$t/1"
! stub stable-4.17 && [ "$(tries)" = 0 ]
result $? "a triple fault in dom0's code, then a Xen assertion's dump, fails at once"
attempts; echo "$init; ${emu//e008/0010}" > "$t/1"
! stub stable-4.17 && [ "$(tries)" = 0 ]
result $? "a triple fault in dom0's own code fails at once"
attempts; echo 'echo "(XEN) booting"; exec sleep 60' > "$t/all"
! stub stable-4.17 PG_STALL_S=2 && [ "$(tries)" = 3 ] && [ -e "$t/log.stall-3" ]
result $? "a dom0 silent before its init is booted again, and fails after 3 stalls"
attempts; printf '%s\n' 'echo "(XEN) booting"' 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do echo "[ 9.1] watchdog: BUG: soft lockup - CPU#0 stuck for ${i}s! [migration/0:16]"; sleep 0.5; done' > "$t/all"
! stub stable-4.17 PG_STALL_S=4 && [ "$(tries)" = 3 ] && [ -e "$t/log.stall-3" ]
result $? "a dom0 stuck (but not silent) before its init is booted again, 3 times at most"
attempts; echo "$init; $idt" > "$t/1"
stub staging && mkdir -p "$t/old" && cp "$t/log.idt-fault-1" "$t/old/" &&
    attempts && echo "$init; $idt" > "$t/1" && mv "$t/old/log.idt-fault-1" "$t/" &&
    echo '{}' > "$t/log.retries" && stub staging &&
    ls "$t"/retried/*/log.idt-fault-1 >/dev/null && [ "$(tries)" = 1 ]
result $? "an earlier run's retried logs are moved to retried/, not deleted"
attempts
stub stable-4.17 && [ ! -e "$t/log.retries" ]
result $? "a boot that finishes passes, with no retry"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
