#!/bin/bash
# harness/fault-count.py on crafted boot logs: each class of boot (pass,
# IDT fault by pg-tf's CR2 or by Xen's, another triple fault, a boot cut
# short, a failed case) must come out as that class, the counts and
# intervals must be over every boot, and a missing log must fail.
set -u
here=$(cd "$(dirname "$0")" && pwd)
fc=$here/../../harness/fault-count.py
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
pass=0 fail=0
result() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok: $2"
           else fail=$((fail + 1)); echo "FAIL: $2"; fi; }

case_line() { echo "[   12.5] PG-T case=$1 n=256 rc=0 want=0 pages=256 dma_pages=8 stale_dma=0 stale_cpu=0 stale_race=0 bad=0 result=${2:-pass}"; }
end_line() { echo "[   13.0] PG-T-END pages=512 dma_pages=16 stale_dma=0 stale_cpu=0 failed=${1:-0} dma=2 vcpus=2 leaked=0"; }
triple() { # VCPU XEN_CR2 [PGTF_CR2]
    echo "(XEN) $1 Triple fault - invoking HVM shutdown action 1"
    echo "(XEN) RIP:    0010:[<ffffffff8107ee05>]"
    echo "(XEN) cr3: 0000000006390000   cr2: $2"
    [ -z "${3:-}" ] || echo "(XEN) pg-tf: $1 cr0 80050033 cr2 $3 cr3 6390000 cr4 6e0 efer d01 idtr fffffe0000000000 limit fff, record #1"
}
mk() { mkdir -p "$t/$1/torture"; cat >"$t/$1/torture/$2.log"; }
# The QEMU a record names: a stand-in of the proving ground's 7.2.
mkdir -p "$t/q72"
printf '#!/bin/sh\necho "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18, harness/qemu x)"\n' >"$t/q72/qemu-system-x86_64"
chmod +x "$t/q72/qemu-system-x86_64"
export PG_QEMU=$t/q72/qemu-system-x86_64

{ case_line p256; case_line s256; end_line; } | mk r1 pass
{ case_line p256; triple d0v0 0000000000000000 fffffe0000000080; } | mk r1 idt-pgtf
{ case_line p256; triple d0v1 fffffe0000000080; } | mk r1 idt-xen
{ case_line p256; triple d0v0 ffffc9000004e080; } | mk r1 other-tf
{ case_line p256; } | mk r1 cut
{ case_line p256 FAIL; end_line 1; } | mk r1 failed
{ case_line p256 FAIL; end_line 0; } | mk r1 failed-end0

want() { # LOG CLASS
    got=$(python3 - "$fc" "$t/r1/torture/$1.log" <<'PY'
import importlib.util, sys
s = importlib.util.spec_from_file_location("fc", sys.argv[1])
m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
x = m.classify(sys.argv[2])
print(x["class"], x.get("cr2"), x.get("after"))
PY
)
    case $got in "$2 "*) r=0 ;; *) r=1 ;; esac
    result $r "$1 is $2 ($got)"
}
want pass pass
want idt-pgtf idt-fault
want idt-xen idt-fault
want other-tf triple-fault
want cut fail
want failed fail
want failed-end0 fail

# The guest registers Xen dumped are kept, up to the pg-tf dump.
python3 - "$fc" "$t/r1/torture/idt-pgtf.log" <<'PY'
import importlib.util, sys
s = importlib.util.spec_from_file_location("fc", sys.argv[1])
m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
x = m.classify(sys.argv[2])
assert x["regs"] == ["RIP:    0010:[<ffffffff8107ee05>]",
                     "cr3: 0000000006390000   cr2: 0000000000000000"], x["regs"]
assert x["dump"][0].startswith("pg-tf: d0v0 "), x["dump"]
PY
result $? "the dumped registers and pg-tf lines are kept"

# The pg-svm lines (svm-state) are kept, a failed check before the triple
# fault as well as the dump after it; a boot with none keeps none.
{ case_line p256
  echo "(XEN) pg-svm: d0v0 vmrun: vmcb np 0, Xen wrote 1"
  triple d0v0 0000000000000000 fffffe0000000080
  echo "(XEN) pg-svm: d0v0 triple fault (VMEXIT_SHUTDOWN) on cpu0: exit 7f"
} | mk r1 svm
touch "$t/r1/torture/svm.log.qemu-int"
python3 - "$fc" "$t/r1/torture/svm.log" "$t/r1/torture/idt-pgtf.log" <<'PY'
import importlib.util, sys
s = importlib.util.spec_from_file_location("fc", sys.argv[1])
m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
x = m.classify(sys.argv[2])
assert x["class"] == "idt-fault", x
assert x["svm"] == ["pg-svm: d0v0 vmrun: vmcb np 0, Xen wrote 1",
                    "pg-svm: d0v0 triple fault (VMEXIT_SHUTDOWN) on cpu0: exit 7f"], x["svm"]
assert m.classify(sys.argv[3])["svm"] == []
PY
result $? "the pg-svm lines are kept, before and after the triple fault"

# A failed VMCB check reaches the record in a boot that passed too.
mkdir -p "$t/v"
{ case_line p256
  echo "(XEN) pg-svm: d0v0 vmrun check failed on cpu0: vmcb ncr3 7ffb8000 (p2m root 7ffb8000) efer 1d01"
  end_line; } | mk v1 base
{ case_line p256; end_line; } | mk v1 patched
python3 "$fc" --out "$t/v/rec.json" --cases p256 --vcpus 2 --machine vt-d \
    --describe x --base staging "$t/v1" >"$t/v/out" 2>&1 &&
python3 - "$t/v/rec.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["counts"]["base"]["boots"] == 1 and r["boots"] == [], r
assert r["svm_check_failed"] == [[1, "base", "pg-svm: d0v0 vmrun check failed on cpu0: vmcb ncr3 7ffb8000 (p2m root 7ffb8000) efer 1d01"]], r["svm_check_failed"]
PY
[ $? = 0 ] && grep -q "round 1 base: failed VMCB check: pg-svm: d0v0 vmrun check failed" "$t/v/out" &&
    python3 "$fc" "$t/v/rec.json" | grep -q "round  1 base     failed VMCB check"
result $? "a failed VMCB check is recorded and printed, in a boot that passed too"

# With svm-state, a triple fault must carry svm-state's dump: one without
# it is a broken detector (recorded, printed, a non-zero exit).
mkdir -p "$t/d"
{ case_line p256; triple d0v0 0000000000000000 fffffe0000000080; } | mk d1 base
{ case_line p256
  echo "(XEN) pg-svm: d0v0 triple fault (VMEXIT_SHUTDOWN) on cpu0: exit 7f"
  triple d0v0 0000000000000000 fffffe0000000080; } | mk d1 patched
python3 "$fc" --out "$t/d/rec.json" --cases p256 --vcpus 2 --machine vt-d \
    --describe x --base staging --test-patches svm-state "$t/d1" >"$t/d/out" 2>&1
[ $? = 1 ] && python3 - "$t/d/rec.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["svm_dump_missing"] == [[1, "base"]], r["svm_dump_missing"]
PY
[ $? = 0 ] && grep -q "round 1 base: a triple fault without svm-state's dump" "$t/d/out" &&
    python3 "$fc" "$t/d/rec.json" | grep -q "round  1 base     triple fault without svm-state's dump"
result $? "with svm-state, a triple fault without its dump fails the count"
python3 "$fc" --out "$t/d/rec2.json" --cases p256 --vcpus 2 --machine vt-d \
    --describe x --base staging "$t/d1" >/dev/null 2>&1
result $? "without svm-state, no dump is asked for"

# Pg-tf's CR2 wins over Xen's (4.17's stale one).
{ case_line p256; triple d0v0 fffffe0000000080 ffffc9000004e080; } | mk r1 stale
want stale triple-fault

# Counts over two rounds of two builds: base faults once, patched never.
{ case_line p256; end_line; } | mk r2 base
{ case_line p256
  echo "(XEN) pg-svm: d0v0 triple fault (VMEXIT_SHUTDOWN) on cpu0: exit 7f"
  triple d0v0 fffffe0000000080; } | mk r3 base
for r in r2 r3; do { case_line p256; end_line; } | mk $r patched; done
python3 "$fc" --out "$t/rec.json" --cases p256 --vcpus 2 --machine vt-d \
    --describe x --base staging --dom0 pvh,pf-fixup=0 \
    --test-patches svm-state "$t/r2" "$t/r3" >"$t/out" 2>&1
rc=$?
python3 - "$t/rec.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["counts"]
assert c["base"]["boots"] == 2 and c["base"]["idt_fault"] == 1, c
assert c["patched"]["boots"] == 2 and c["patched"]["idt_fault"] == 0, c
assert c["base"]["rate"] == 0.5, c
lo, hi = c["patched"]["wilson95"]
assert lo == 0.0 and 0.65 < hi < 0.66, (lo, hi)
assert [b["round"] for b in r["boots"]] == [2], r["boots"]
assert r["passed"] == {"base": [1], "patched": [1, 2]}, r["passed"]
assert r["dom0"] == "pvh,pf-fixup=0" and r["test_patches"] == ["svm-state"], r
assert r["boots"][0]["qemu_int"] is False, r["boots"]
PY
py=$?
[ $rc = 0 ] && [ $py = 0 ]; result $? "the counts and intervals are over every boot"

# A round without a build's log fails the count.
rm "$t/r3/torture/patched.log"
python3 "$fc" --out "$t/rec2.json" --cases p256 --vcpus 2 --machine vt-d \
    --describe x --base staging "$t/r2" "$t/r3" >/dev/null 2>&1
[ $? != 0 ] && [ ! -e "$t/rec2.json" ]; result $? "a missing log fails the count"

# The ledger: a run as pre-registered is appended under the mails' hash;
# another run (other cases, dom0=, QEMU) is refused, the ledger
# unchanged; a boot
# booted again fails the count.
python3 -c "
import json, sys
led = json.load(open(sys.argv[1]))
led['runs'] = []
json.dump(led, open(sys.argv[2], 'w'))
" "$here/../../results/staging-fault-ledger.json" "$t/ledger.json"
for r in r2 r3; do { case_line p256; end_line; } | mk $r patched; done
c=p256.s256.p256.d256.p256.p256
python3 "$fc" --out "$t/rec3.json" --cases $c --vcpus 2 --machine vt-d \
    --describe x --base staging --ledger "$t/ledger.json" "$t/r2" "$t/r3" >"$t/out" 2>&1 &&
python3 - "$t/ledger.json" "$here/../../harness" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[2])
from record import mails
led = json.load(open(sys.argv[1]))
(run,) = led["runs"]
assert run["series"] == mails("staging"), run["series"]
assert run["counts"]["base"] == {"boots": 2, "idt_fault": 1, "triple_fault": 0, "fail": 0}, run
assert run["failed"] == [[2, "base", "idt-fault", "p256"]], run["failed"]
PY
[ $? = 0 ] && grep -q "ledger ledger.json: idt-fault not tolerated (1 runs of the current mails: base 2 boots, patched 2, 100 each" "$t/out"
result $? "a pre-registered run is appended to the ledger under the mails' hash, and judged"
cp "$t/ledger.json" "$t/before.json"
! python3 "$fc" --out "$t/rec4.json" --cases p256 --vcpus 2 --machine vt-d \
    --describe x --base staging --ledger "$t/ledger.json" "$t/r2" "$t/r3" 2>"$t/err" >/dev/null &&
    cmp -s "$t/ledger.json" "$t/before.json" && grep -q "cases p256, pre-registered $c" "$t/err"
result $? "a run other than the pre-registered one is refused, the ledger unchanged"
! python3 "$fc" --out "$t/rec5.json" --cases $c --vcpus 2 --machine vt-d \
    --describe x --base staging --dom0 pvh,pf-fixup=0 --ledger "$t/ledger.json" \
    "$t/r2" "$t/r3" 2>"$t/err" >/dev/null &&
    cmp -s "$t/ledger.json" "$t/before.json" &&
    grep -q "dom0=pvh,pf-fixup=0, the ledger counts dom0=pvh" "$t/err"
result $? "a run with another dom0= is refused by the ledger, the ledger unchanged"
mkdir -p "$t/q10"
printf '#!/bin/sh\necho "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)"\n' >"$t/q10/qemu-system-x86_64"
chmod +x "$t/q10/qemu-system-x86_64"
! PG_QEMU=$t/q10/qemu-system-x86_64 python3 "$fc" --out "$t/rec6.json" --cases $c --vcpus 2 \
    --machine vt-d --describe x --base staging --ledger "$t/ledger.json" \
    "$t/r2" "$t/r3" 2>"$t/err" >/dev/null &&
    cmp -s "$t/ledger.json" "$t/before.json" &&
    grep -q "QEMU 10.0.2, pre-registered 7.2" "$t/err"
result $? "a run under another QEMU is refused by the ledger, the ledger unchanged"
echo '{}' > "$t/r3/torture/patched.log.retries"
! python3 "$fc" --out "$t/rec5.json" --cases $c --vcpus 2 --machine vt-d \
    --describe x --base staging "$t/r2" "$t/r3" >/dev/null 2>&1
result $? "a boot that was booted again fails the count"
# The committed ledgers: pre-registered (size, alpha, the test, the kinds).
python3 - "$here/../../results" <<'PY'
import glob, json, sys
fs = sorted(glob.glob(sys.argv[1] + "/*-fault-ledger.json"))
assert len(fs) == 2, fs
for f in fs:
    led = json.load(open(f))
    pre = led["preregistered"]
    assert f.endswith("/%s-fault-ledger.json" % led["base"]), f
    assert pre["boots_per_arm"] >= 100 and pre["alpha"] == 0.05, pre
    assert "Fisher" in pre["test"] and "Fisher" in pre["size"], pre
    assert set(pre["kinds"]) == {"idt-fault", "emulator-fault"}, pre
    assert pre["qemu"].count(".") == 1, pre
PY
result $? "the committed ledgers are pre-registered: size, alpha, test and kinds written"

echo "  $pass passed, $fail failed"
[ $fail = 0 ]
