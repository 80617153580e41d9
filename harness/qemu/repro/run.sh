#!/bin/bash
# run.sh [--check] [QEMU...]: build repro.c, QEMU's cpu_clear_ignne()
# race without Xen, and boot it for REPRO_ROUNDS rounds (default 1000000;
# REPRO_DELAY PAUSEs before the first, default 0; the second vCPU held
# back for REPRO_WARM rounds, default 0) under each QEMU given
# (default: the proving ground's, PG_QEMU), with
# two vCPUs, a TCG thread each (the race needs two host CPUs).  Prints
# each QEMU's verdict: "no race in N rounds" or the round the race was
# met in.  --check: the proving ground's QEMU must pass, and Debian's own
# /usr/bin/qemu-system-x86_64, the control, must show the race.  Exits
# non-zero on any other outcome (a QEMU that hangs, errs, resets or
# stops short).
set -euo pipefail
. "$(dirname "$0")/../../lib.sh"

check=0
[ "${1:-}" != --check ] || { check=1; shift; }
here=$PG_ROOT/harness/qemu/repro
out=$PG_BUILD/repro
rounds=${REPRO_ROUNDS:-1000000}
[[ $rounds =~ ^[1-9][0-9]{0,8}$ ]] || die "REPRO_ROUNDS=$rounds: a count of rounds"
delay=${REPRO_DELAY:-0}
[[ $delay =~ ^[0-9]{1,9}$ ]] || die "REPRO_DELAY=$delay: a count of PAUSEs"
warm=${REPRO_WARM:-0}
[[ $warm =~ ^[0-9]{1,9}$ ]] || die "REPRO_WARM=$warm: a count of rounds"
[ "$(nproc)" -ge 2 ] || die "the race needs two host CPUs, this machine has $(nproc)"
mkdir -p "$out"
cflags=(-m32 -ffreestanding -fno-pic -fno-stack-protector -fno-builtin -O2 -Wall -Werror)
gcc "${cflags[@]}" -c "$here/repro.c" -o "$out/repro.o"
gcc -m32 -c "$here/entry.S" -o "$out/entry.o"
ld -m elf_i386 --no-warn-rwx-segments -T "$here/link.ld" -o "$out/repro.elf" \
    "$out/entry.o" "$out/repro.o"

# boot QEMU LOG: the reproducer's verdict, as its exit: 0 no race, 1 the
# race, 2 anything else.
boot() {
    local rc=0
    timeout --kill-after=10 "${REPRO_TIMEOUT:-600}" "$1" \
        -machine q35 -accel tcg,thread=multi -cpu qemu64,+svm,+npt \
        -smp 2 -m 64 -nodefaults -no-user-config -display none -no-reboot \
        -serial stdio \
        -device isa-debug-exit,iobase=0xf4,iosize=1 \
        -kernel "$out/repro.elf" -append "rounds=$rounds delay=$delay warm=$warm" \
        </dev/null >"$2" 2>&1 || rc=$?
    sed 's/^/  /' "$2"
    # One boot, to its end: a reset would start the rounds again.
    if [ "$(grep -c '^repro: [0-9]* rounds' "$2")" != 1 ]; then
        echo "  $1: not one boot of the reproducer"
        return 2
    fi
    case $rc in
    33) grep -q "^repro: no race in $rounds rounds" "$2" && return 0
        echo "  $1: exit 33 without its verdict line" ;;
    35) grep -q '^repro: round [0-9]*: the ' "$2" && return 1
        echo "  $1: exit 35 without its verdict line" ;;
    124|137) echo "  $1: no verdict within ${REPRO_TIMEOUT:-600} s" ;;
    *) echo "  $1: exit $rc, no verdict" ;;
    esac
    return 2
}

if [ $check = 1 ]; then
    [ $# = 0 ] || die "--check takes no QEMU"
    pg_qemu
    rc=0
    step "repro: the proving ground's QEMU, $("$PG_QEMU" --version | head -1), $rounds rounds"
    boot "$PG_QEMU" "$out/fixed.log" || rc=$?
    [ $rc = 0 ] || { echo "FAIL: the proving ground's QEMU does not pass"; exit 1; }
    step "repro: the control, Debian's $(/usr/bin/qemu-system-x86_64 --version | head -1)"
    boot /usr/bin/qemu-system-x86_64 "$out/control.log" || rc=$?
    [ $rc = 1 ] || { echo "FAIL: the control did not show the race"; exit 1; }
    echo "repro: the race is shown on the control and absent from the proving ground's QEMU"
    exit 0
fi
[ $# -gt 0 ] || { pg_qemu; set -- "$PG_QEMU"; }
worst=0 n=0
for q in "$@"; do
    n=$((n + 1))
    step "repro: $q ($("$q" --version | head -1))"
    rc=0
    boot "$q" "$out/qemu-$n.log" || rc=$?
    [ $rc -le $worst ] || worst=$rc
done
exit $worst
