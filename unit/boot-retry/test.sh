#!/bin/bash
# harness/retry.py's rules for booting a failed attempt again, on crafted
# attempts in Debian 12's 6.1 console format, in a copy of the project
# with fault ledgers of its own; boot-qemu.sh's retries with a stand-in
# QEMU; lib.sh's matchers behind them; and each record retry.py cites,
# which must show the kind on a base build.  Could wrongly pass if the
# fixtures' lines stopped matching what Xen and dom0 print.
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

# A copy of the project to judge retries in: harness/, the netback
# checker, the records RECORDED cites, a series of one mail per base (its
# hash is the "current mails") and a fault ledger per base that the
# tests write.
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
root=$t/root
mkdir -p "$root/results" "$root/bench" "$root/patches/staging" \
    "$root/patches/stable-4.17" "$t/bin" "$t/dom0"
cp -r "$PG_ROOT/harness" "$root/"
# The copy's RECORDED cites staging's two base faults of QEMU's race, as
# the project's did before harness/qemu/ closed it.
python3 - "$root/harness/retry.py" <<'CITE'
import sys
p = sys.argv[1]
s = open(p).read()
assert "\nRECORDED = {}\n" in s
open(p, "w").write(s.replace("\nRECORDED = {}\n", """
RECORDED = {
    ("idt-fault", "staging"): ("2026-12-04-staging-fault-count.json",
                               "boots", {"build": "base", "round": 5}),
    ("emulator-fault", "staging"): ("2026-12-04-staging-check.json",
                                    "retries", {"variant": "base",
                                                "machine": "vt-d",
                                                "source": "torture.json",
                                                "try": 1}),
}
""", 1))
CITE
cp -r "$PG_ROOT/bench/netback" "$root/bench/"
cp "$PG_ROOT"/results/2026-12-04-staging-{check,fault-count}.json \
    "$PG_ROOT"/results/2026-12-04-stable-4.17-fault-count.json "$root/results/"
echo a > "$root/patches/staging/0001-a.patch"
echo b > "$root/patches/stable-4.17/0001-b.patch"
export PYTHONDONTWRITEBYTECODE=1
# ledger BASE BASE-COUNTS PATCHED-COUNTS [SERIES]: BASE's ledger in the
# copy, with the committed ledger's pre-registration, holding one run of
# the current mails (SERIES "other": of other mails); COUNTS are
# boots:idt_fault:triple_fault:fail.
ledger() {
    python3 - "$PG_ROOT" "$root" "$@" <<'PY'
import json, sys
top, root, base, b, p = sys.argv[1:6]
sys.path.insert(0, root + "/harness")
from record import mails
led = json.load(open(top + "/results/staging-fault-ledger.json"))
series = mails(base)
if sys.argv[6:] == ["other"]:
    series = dict(series, sha256="0" * 16)
def counts(s):
    return dict(zip(("boots", "idt_fault", "triple_fault", "fail"),
                    map(int, s.split(":"))))
led.update(base=base, runs=[{"series": series, "counts": {
    "base": counts(b), "patched": counts(p)}}])
json.dump(led, open("%s/results/%s-fault-ledger.json" % (root, base), "w"))
PY
}
tolerate() { ledger staging 100:7:0:0 100:7:0:0; ledger stable-4.17 100:7:0:0 100:7:0:0; }

# Fixtures as Debian 12's 6.1 kernel and Xen print them (gntt.c's
# pr_warn lines after a kernel timestamp), and the two triple-fault
# dumps of results/2026-12-04-staging-check.json.
S='(XEN) pg-oracle-stats: releases=%d frees=0 bad_tlb=%d bad_iotlb=0 bad_free=0 unmap_flushes=0 narrow=0 dirty1=0 dirty2=0 dirty3=0 dirty4=0 dev_invs=0 dev_multi=0 dev_wide=0 dev_short=0 pt_queued=0 bad_stale=0'
python3 - "$PG_ROOT/results/2026-12-04-staging-check.json" "$t" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["retries"]:
    name = {"idt-fault": "idt", "emulator-fault": "emu"}[x["kind"]]
    open("%s/%s.dump" % (sys.argv[2], name), "w").write(
        "\n".join(x["signature"][:15]) + "\n")
PY
grep -q 'cr2: fffffe0000000080' "$t/idt.dump" && grep -q 'cs: e008$' "$t/emu.dump"
result $? "the fixtures' dumps are the staging record's IDT and emulator faults"
# torture DIRT DUMP: a torture attempt (c31 passed, p256 under way), DIRT
# (lines) before DUMP (a file).
torture() {
    echo '(XEN) Xen version 4.23-unstable'; echo 'PG-INIT dom0 userspace up'
    printf "$S\n" 0 0; printf "$S\n" 31 0
    echo '[   12.100000] PG-T case=c31 n=31 rc=0 want=0 pages=31 dma_pages=2 stale_dma=0 stale_cpu=0 stale_race=0 bad=0 result=pass'
    printf "$S\n" 287 0
    [ -z "$1" ] || printf '%s\n' "$1"
    cat "$2"
}
# make DIRT DUMP: an attempt of make's workload (report.py's log).
make_log() {
    printf '%s\n' 'PG-INIT dom0 userspace up' 'PG-START version=1 perfc=14' \
        'PG-BEGIN n=1 phase=map' 'PG-END n=1 phase=map hypercalls=1' \
        'PG-BEGIN n=1 phase=unmap'
    [ -z "$1" ] || printf '%s\n' "$1"
    cat "$2"
}
# cls BASE LOG [VAR=VALUE...]: retry.py classify of LOG on BASE in the
# copy, as torture.sh's boot of patched asks it (base booted beside it);
# 0 when retried.  Why not is in $t/why.
cls() {
    local b=$1 log=$2
    shift 2
    rm -f "$log.retries"
    env PG_VARIANT=patched PG_CHECKER=torture PG_BASE_BOOTS=1 PG_IOMMU=vt-d \
        "$@" python3 "$root/harness/retry.py" classify "$log" "$b" 1 \
        >/dev/null 2>"$t/why"
}
why() { grep -q "$1" "$t/why" || { cat "$t/why"; false; }; }

# --- The retry, when every rule allows it
tolerate
torture "" "$t/idt.dump" > "$t/a.log"
cls staging "$t/a.log" && grep -q '"recorded": "2026-12-04-staging-fault-count.json"' "$t/a.log.retries" &&
    grep -q '"ledger": "1 runs of the current mails' "$t/a.log.retries"
result $? "staging, tolerated: a clean torture attempt with the IDT fault is retried, its record and ledger named"
torture "" "$t/emu.dump" > "$t/a.log"
cls staging "$t/a.log"
result $? "staging, tolerated: a clean torture attempt with the emulator fault is retried"

# --- 1. The attempt judged by its real checker, alone (timestamped lines)
for dirt in \
    "[   40.400000] PG-T case=p256 n=256 rc=0 want=0 pages=256 dma_pages=16 stale_dma=1 stale_cpu=1 stale_race=2 bad=0 result=FAIL|case p256 failed" \
    "[   40.300000] PG-T stale-cpu tag=2 i=7 reads the granter's pattern|PG-T stale-cpu" \
    "[   40.300000] PG-T stale-dma tag=2 i=7 reads 0x5a5a5a5a|PG-T stale-dma" \
    "[   40.300000] PG-T error tag=1 i=2: unmapped gfn reads 0x5a5a|PG-T error" \
    "[   40.300000] PG-T case=p256 n=256 rc=0|does not parse" \
    "(XEN) pg-oracle: d0 gfn 0x1 released before its IOTLB flush|oracle report" \
    "$(printf "$S" 300 1)|bad_tlb rose to 1" \
    "[   31.200000] BUG: unable to handle page fault for address: ffff888000000000|dom0 oops" \
    "(XEN) Assertion 'x' failed at arch/x86/mm/p2m.c:306|Xen assertion" \
    "PG-ERROR unmap: Invalid argument|workload error"; do
    torture "${dirt%|*}" "$t/idt.dump" > "$t/a.log"
    ! cls staging "$t/a.log" && why "idt-fault after: .*${dirt#*|}" && [ ! -e "$t/a.log.retries" ]
    result $? "torture: an IDT fault after this is not retried: ${dirt:0:60}"
done
# The v5 audit's demos 1a (a failed case and a stale read, then the IDT
# fault) and 4c's place (a dom0 oops, then the IDT fault).
torture "$(printf '%s\n' "[   40.300000] PG-T stale-cpu tag=2 i=7 reads the granter's pattern" \
    "[   40.400000] PG-T case=p256 n=256 rc=0 want=0 pages=256 dma_pages=16 stale_dma=1 stale_cpu=1 stale_race=2 bad=0 result=FAIL")" \
    "$t/idt.dump" > "$t/a.log"
! cls staging "$t/a.log" && why "case p256 failed"
result $? "demo 1a: a failed case and a stale read, timestamped, then the IDT fault: not retried"
for dirt in \
    "(XEN) [VT-D]DMAR:[DMA Read] Request device [0000:00:04.0] fault addr 1000|unexpected IOMMU fault" \
    "PG-DMA n=33 when=after-unmap data=3 fault=30 other=0|stale DMA read" \
    "(XEN) pg-oracle: d0 gfn 0x1 released before its IOTLB flush|oracle report" \
    "[   31.200000] Oops: 0000 [#1] PREEMPT SMP NOPTI|dom0 oops" \
    "PG-ERROR unmap: Invalid argument|workload error"; do
    make_log "${dirt%|*}" "$t/emu.dump" > "$t/a.log"
    ! cls staging "$t/a.log" PG_CHECKER=report && why "emulator-fault after: .*${dirt#*|}"
    result $? "make's boot: an emulator fault after this is not retried: ${dirt:0:60}"
done
make_log "" "$t/emu.dump" > "$t/a.log"
cls staging "$t/a.log" PG_CHECKER=report
result $? "make's boot: a clean attempt with the emulator fault is retried"
printf '%s\n' 'NB-START x' 'NB-ERROR iperf3 failed' > "$t/a.log"; cat "$t/emu.dump" >> "$t/a.log"
! cls staging "$t/a.log" PG_CHECKER=bench && why "benchmark error" &&
    sed -i '/NB-ERROR/d' "$t/a.log" && cls staging "$t/a.log" PG_CHECKER=bench
result $? "bench's boot: judged by bench/netback/report.py (an NB-ERROR is not retried, without it is)"
torture "" "$t/idt.dump" > "$t/a.log"
! cls staging "$t/a.log" PG_CHECKER= && why "no checker named"
result $? "an attempt whose checker is not named is not retried"

# --- N6: every triple fault must have the signature
{ torture "" /dev/null; printf '%s\n' '(XEN) d0v1 Triple fault - invoking HVM shutdown action 1' \
    '(XEN) RFLAGS: 0000000000010046   CONTEXT: hvm guest (d0v1)' \
    '(XEN) cr3: 0000000002a10000   cr2: ffff888012345000' \
    '(XEN) ds: 0000   es: 0000   fs: 0000   gs: 0000   ss: 0018   cs: 0010'
  cat "$t/emu.dump"; } > "$t/a.log"
! cls staging "$t/a.log" && why "not all of one signature: d0v1 (none), d0v0 emulator-fault"
result $? "demo 2: dom0's own triple fault on d0v1, then an emulator-class dump of d0v0: not retried"
{ torture "" "$t/emu.dump"; sed 's/d0v0/d0v1/' "$t/idt.dump"; } > "$t/a.log"
! cls staging "$t/a.log" && why "d0v0 emulator-fault, d0v1 idt-fault"
result $? "an emulator fault and an IDT fault in one attempt: not retried"
{ torture "" "$t/idt.dump"; sed 's/d0v0/d0v1/' "$t/idt.dump"; } > "$t/a.log"
cls staging "$t/a.log"
result $? "two vCPUs' IDT faults in one attempt: retried (both the signature)"

# --- Base beside it (the v5 audit's N1)
torture "" "$t/idt.dump" > "$t/a.log"
! cls staging "$t/a.log" PG_BASE_BOOTS=0 && why "no base booted beside it" &&
    ! cls staging "$t/a.log" PG_BASE_BOOTS=0 PG_VARIANT=neg-late-flush &&
    cls staging "$t/a.log" PG_BASE_BOOTS=0 PG_VARIANT=base
result $? "patched or a control with no base booted beside it is not retried; base is"
! cls staging "$t/a.log" PG_VARIANT= && why "build not named"
result $? "an attempt of a build not named is not retried"

# --- 2. Only (kind, base) pairs a record shows on base
! cls stable-4.17 "$t/a.log" && why "not retried on stable-4.17: no record"
result $? "stable-4.17 (its ledger tolerating): the IDT fault is not retried"
sed 's/Xen-4.23-unstable/Xen-4.17.5/' "$t/emu.dump" > "$t/emu417.dump"
torture "" "$t/emu417.dump" > "$t/a.log"
! cls stable-4.17 "$t/a.log" && why "not retried on stable-4.17: no record"
result $? "stable-4.17 (its ledger tolerating): the emulator fault is not retried"
( cd "$root/harness" && python3 - <<'PY'
import retry
for (kind, base), cite in sorted(retry.RECORDED.items()):
    why = retry.shown(kind, base)
    assert why is None, (kind, base, why)
    print("  %s on %s: %s, %s" % (kind, base, cite[0], cite[2]))
assert {b for _, b in retry.RECORDED} == {"staging"}, retry.RECORDED
assert {k for k, _ in retry.RECORDED} == {"idt-fault", "emulator-fault"}
PY
)
result $? "each (kind, base) retried cites a committed record whose base build shows it"
( cd "$root/harness" && python3 - <<'PY'
import retry
R = retry.RECORDED
bad = {
    "patched's IDT fault (round 10)": ("idt-fault", "staging", (
        R["idt-fault", "staging"][0], "boots", {"build": "patched", "round": 10})),
    "a round that has no fault": ("idt-fault", "staging", (
        R["idt-fault", "staging"][0], "boots", {"build": "base", "round": 6})),
    "the 4.17 record": ("idt-fault", "stable-4.17", (
        "2026-12-04-stable-4.17-fault-count.json", "boots", {"build": "base", "round": 5})),
    "base's IDT fault cited for the emulator fault": ("emulator-fault", "staging",
        R["idt-fault", "staging"]),
    "patched's retry in the check record": ("idt-fault", "staging", (
        R["emulator-fault", "staging"][0], "retries",
        {"variant": "patched", "machine": "vt-d", "source": "torture.json", "try": 1})),
    "a record not there": ("idt-fault", "staging", ("gone.json", "boots", {})),
}
for what, (kind, base, cite) in bad.items():
    why = retry.shown(kind, base, {(kind, base): cite})
    assert why, what
    print("  refused, %s: %s" % (what, why))
PY
)
result $? "a citation whose record does not show the kind on base is refused"
ledger staging 100:7:0:0 100:7:0:0
printf '%s\n' '(XEN) booting' '[   67.361715] watchdog: BUG: soft lockup - CPU#0 stuck for 300s! [migration/0:16]' > "$t/a.log"
! cls staging "$t/a.log" && ! env PG_VARIANT=base PG_CHECKER=torture PG_BASE_BOOTS=1 \
    python3 "$root/harness/retry.py" classify "$t/a.log" staging 1 stall 2>"$t/why" >/dev/null &&
    why "stall, not retried on staging: no record"
result $? "a stall is never retried (no record of a base stall)"

# --- 3. Only while the ledger shows no excess, at its size
torture "" "$t/idt.dump" > "$t/a.log"
( cd "$PG_ROOT/harness" && python3 -c '
import retry
assert "%.2f %.2f" % (retry.fisher(1, 30, 1, 30), retry.fisher(3, 30, 1, 30)) == "0.75 0.31"
assert retry.fisher(0, 100, 0, 100) == 1 and retry.fisher(12, 100, 2, 100) < 0.01' )
result $? "Fisher's one-sided test gives the v5 audit's p (1/30 vs 1/30: 0.75; 3/30 vs 1/30: 0.31)"
ledger staging 100:5:0:0 100:13:0:0
! cls staging "$t/a.log" && why "not tolerated by staging's fault ledger: .*idt-fault: patched 13, base 5, p=0.04"
result $? "ledger: patched's IDT faults above base's (13 vs 5 in 100, p < 0.05): not retried"
ledger staging 100:5:0:0 100:5:3:5
! cls staging "$t/a.log" && why "every failure: patched 13, base 5"
result $? "ledger: the kind alike but every failure above base's: not retried"
ledger staging 99:7:0:0 100:7:0:0
! cls staging "$t/a.log" && why "base 99 boots, patched 100, 100 each pre-registered"
result $? "ledger: short of its pre-registered size (99 base boots): not retried"
ledger staging 100:7:0:0 100:7:0:0 other
! cls staging "$t/a.log" && why "0 runs of the current mails"
result $? "ledger: counts of other mails do not count: not retried"
rm "$root/results/staging-fault-ledger.json"
! cls staging "$t/a.log" && why "no usable ledger"
result $? "no ledger: not retried"
# The project as committed retries no kind on any base.
( cd "$PG_ROOT/harness" && python3 -c 'import retry; assert retry.RECORDED == {}' )
result $? "as committed, RECORDED cites nothing"
bad=0
for k in idt emu; do
    torture "" "$t/$k.dump" > "$t/real.log"
    ! env PG_VARIANT=base PG_CHECKER=torture PG_BASE_BOOTS=1 python3 \
        "$PG_ROOT/harness/retry.py" classify "$t/real.log" staging 1 2>"$t/why" >/dev/null &&
        why "not retried on staging: no record of a base build" &&
        [ ! -e "$t/real.log.retries" ] || bad=1
done
result $bad "as committed: base's clean IDT and emulator faults on staging are not retried"

# --- boot-qemu.sh, with a stand-in QEMU: attempt N prints the file
# $t/N if there is one, else $t/all, else a finished boot.
echo x > "$t/xen"; echo x > "$t/dom0/vmlinuz"; echo x > "$t/dom0/initrd.gz"
cat > "$t/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/sh
n=$(($(cat "$STUB_DIR/count" 2>/dev/null || echo 0) + 1))
echo $n > "$STUB_DIR/count"
f=$STUB_DIR/$n; [ -e "$f" ] || f=$STUB_DIR/all
[ -e "$f" ] || { printf '(XEN) booting\nPG-INIT dom0 userspace up\nPG-DONE\n'; exit 0; }
cat "$f"
QEMU
chmod +x "$t/bin/qemu-system-x86_64"
# stub BASE [VAR=VALUE...]: boot-qemu.sh's status on BASE (the copy's),
# as torture.sh boots patched with base beside it.
stub() {
    local b=$1
    shift
    rm -f "$t/count"
    env PG_QEMU="$t/bin/qemu-system-x86_64" STUB_DIR="$t" PG_BASE="$b" PG_VARIANT=patched \
        PG_CHECKER=torture PG_BASE_BOOTS=1 "$@" \
        "$root/harness/boot-qemu.sh" "$t/xen" "$t/dom0" "$t/log" 2>"$t/err"
}
attempts() { rm -f "$t/1" "$t/2" "$t/3" "$t/all" "$t/log"*; }
tries() { grep -c . "$t/log.retries" 2>/dev/null || echo 0; }
tolerate
attempts; torture "" "$t/idt.dump" > "$t/1"
stub staging && [ "$(tries)" = 1 ] && [ -e "$t/log.idt-fault-1" ] &&
    grep -q '"signature".*cr2: fffffe0000000080' "$t/log.retries" &&
    grep -q 'retried: idt-fault' "$t/err"
result $? "boot-qemu.sh: an attempt retry.py allows is booted again, recorded and kept"
attempts; torture "" "$t/idt.dump" > "$t/all"
! stub staging && [ "$(tries)" = 3 ] && [ -e "$t/log.idt-fault-3" ]
result $? "boot-qemu.sh: booted again twice at most, each try recorded"
attempts; torture "" "$t/idt.dump" > "$t/1"
! stub staging PG_RETRY=0 && [ "$(tries)" = 0 ]
result $? "boot-qemu.sh: PG_RETRY=0 turns the retry off"
# The v5 audit's demos 1b and 1c: a failed case, then the fault, on a
# machine where no base boots.
for b in stable-4.17:emu417 staging:idt; do
    attempts; torture "[   40.400000] PG-T case=p256 n=256 rc=0 want=0 pages=256 dma_pages=16 stale_dma=1 stale_cpu=1 stale_race=2 bad=0 result=FAIL" \
        "$t/${b#*:}.dump" > "$t/1"
    ! stub "${b%:*}" PG_BASE_BOOTS=0 && [ "$(tries)" = 0 ] && grep -q 'not retried: ' "$t/err"
    result $? "boot-qemu.sh, demo 1b/1c on ${b%:*}: a failed case, then the fault, no base beside it: fails at once"
done
attempts; printf '%s\n' 'echo "(XEN) booting"' 'exec sleep 60' > "$t/all"
sed -i 's/^cat "\$f"$/case $(head -c4 "$f") in echo) . "$f" ;; *) cat "$f" ;; esac/' "$t/bin/qemu-system-x86_64"
! stub staging PG_STALL_S=2 && [ "$(tries)" = 0 ] && grep -q 'dom0 stalled' "$t/err"
result $? "boot-qemu.sh: a dom0 silent before its init is stopped, not retried"
attempts; torture "" "$t/idt.dump" > "$t/1"
stub staging && mkdir -p "$t/old" && cp "$t/log.idt-fault-1" "$t/old/" &&
    attempts && torture "" "$t/idt.dump" > "$t/1" && mv "$t/old/log.idt-fault-1" "$t/" &&
    echo '{}' > "$t/log.retries" && stub staging &&
    ls "$t"/retried/*/log.idt-fault-1 >/dev/null && [ "$(tries)" = 1 ]
result $? "boot-qemu.sh: an earlier run's retried logs are moved to retried/, not deleted"
attempts
stub stable-4.17 && [ ! -e "$t/log.retries" ]
result $? "boot-qemu.sh: a boot that finishes passes, with no retry"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
