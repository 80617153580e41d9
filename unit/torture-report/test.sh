#!/bin/bash
# torture-report.py, the checker of the unmap torture, on crafted logs:
# a clean build and a caught control pass, every kind of failure and every
# control not caught where torture/README.md requires fails.  Could wrongly
# pass if a crafted log stopped matching what gntt.c and the oracle print.
# And torture.sh, with stand-ins for the builds and boots: which boots it
# asks for and what it tells the report; and its own lists: a control on
# every machine it boots, on every base.
# TORTURE_REPORT_PY=path checks another copy of the report, TORTURE_SH
# another copy of torture.sh.
set -uo pipefail
. "$(dirname "$0")/../../harness/lib.sh"
report_py=${TORTURE_REPORT_PY:-$PG_ROOT/harness/torture-report.py}
torture_sh=${TORTURE_SH:-$PG_ROOT/harness/torture.sh}
tout=$(mktemp) tjson=$(mktemp)
trap 'rm -f "$tout" "$tjson"' EXIT

# treport [-b] SPEC...: torture-report.py --check on crafted logs; its
# status, its output in $tout and its JSON in $tjson.  SPEC:
#   NAME:TEXT          the log of NAME (a variant or MACHINE/VARIANT)
#   NAME=CASES         the cases NAME was asked for ('-': none given);
#                      else the cases its log prints
# On a machine with patched (or patched-4vcpu) and no neg-* or negative
# log, a caught neg-late-flush is added last (its absence alone fails the
# report): the cases below test what they name.  -b: not added.
treport() {
    local dir spec n m log c rc args=() add=1
    local -A want=() pat=() neg=()
    [ "${1:-}" != -b ] || { add=; shift; }
    for spec in "$@"; do
        n=${spec%%:*}
        case $n in *=*) continue ;; esac
        m=vt-d
        case $n in */*) m=${n%%/*} ;; esac
        case ${n#*/} in
        patched|patched-4vcpu) pat[$m]=1 ;;
        neg-*|negative|negative-4vcpu) neg[$m]=1 ;;
        esac
    done
    for m in "${!pat[@]}"; do
        [ -n "$add" ] && [ -z "${neg[$m]:-}" ] || continue
        case $m in
        vt-d) set -- "$@" "neg-late-flush:$tctl" ;;
        *) set -- "$@" "$m/neg-late-flush:$tctl" ;;
        esac
    done
    dir=$(mktemp -d)
    for spec in "$@"; do
        n=${spec%%:*}
        case $n in
        *=*) want[${spec%%=*}]=${spec#*=} ;;
        *) printf '%b' "${spec#*:}" > "$dir/$(echo "$n" | tr / _).log" ;;
        esac
    done
    for spec in "$@"; do
        n=${spec%%:*}
        case $n in *=*) continue ;; esac
        log=$dir/$(echo "$n" | tr / _).log
        c=${want[$n]-$(grep -o 'PG-T case=[^ ]*' "$log" | cut -d= -f2 |
                       paste -sd.)}
        [ "$c" = - ] || args+=(--cases "${n/\//:}=${c:-.}")
        args+=("${n/\//:}=$log")
    done
    (cd "$dir" && python3 "$report_py" --check --json "$dir/t.json" \
        "${args[@]}") > "$tout" 2>&1
    rc=$?
    cp "$dir/t.json" "$tjson" 2>/dev/null || : > "$tjson"
    rm -rf "$dir"
    return $rc
}
# tno SPEC...: treport fails them (status 1: not a usage error).
tno() { treport "$@"; [ $? = 1 ]; }
# tsays TEXT: the last report printed TEXT.
tsays() { grep -qF -- "$1" "$tout"; }
# tjs EXPR: a Python expression on the last report's JSON (j) holds.
tjs() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); \
sys.exit(0 if ($1) else 1)" "$tjson" 2>/dev/null; }

# The oracle's totals, as Xen logs them before the first case and before
# each case's result: every key of test-patches/instrument/<base>/ (0002,
# 0004, 0005), each 0 unless given as KEY=N, left out if given as -KEY.
tkeys="releases frees bad_tlb bad_iotlb bad_free unmap_flushes narrow"
tkeys="$tkeys dirty1 dirty2 dirty3 dirty4 dev_invs dev_multi dev_wide"
tkeys="$tkeys dev_short pt_queued bad_stale"
tkv() {
    local k a v line='(XEN) pg-oracle-stats:'
    for k in $tkeys; do
        v=0
        for a in "$@"; do
            case $a in "$k="*) v=${a#*=} ;; "-$k") v= ;; esac
        done
        [ -z "$v" ] || line="$line $k=$v"
    done
    printf '%s\\n' "$line"
}
# tstats RELEASES BAD_TLB UNMAP_FLUSHES DIRTY1 DIRTY2: releases, bad TLB
# releases, unmap flushes, flushes with the domain dirty on 1 and on 2 CPUs.
tstats() {
    tkv releases="$1" bad_tlb="$2" unmap_flushes="$3" dirty1="$4" dirty2="$5"
}
tc32='PG-T case=c32 n=32 rc=0 want=0 pages=32 dma_pages=2 stale_dma=0 stale_cpu=0 stale_race=0 bad=0 result=pass\n'
tend='PG-T-END pages=32 dma_pages=2 stale_dma=0 stale_cpu=0 failed=0 dma=2 vcpus=2 leaked=32\n'
t0=$(tstats 0 0 0 0 0)
tpass=$t0$(tstats 32 0 1 0 1)$tc32$tend

# tlog [-e FAILED] [-v VCPUS] [-k KEY] [-n] CASE[:FIELD=N,...]...: the log
# of a run of the cases in order.  Each case releases 32 pages and
# flushes once with the domain dirty on 2 CPUs, plus each FIELD=N: a
# field of its case line (rc, want, stale_dma, stale_race, result, ...),
# of a kN case's placement line (wanted, placed: both N / 2 per vCPU
# unless given; kept=NAME: the line names case NAME; kept=-: no line),
# or N more of the oracle's count FIELD (bad_tlb, pt_queued, ...).  Then
# PG-T-END with failed= the cases whose result is FAIL, or FAILED; vcpus=
# VCPUS (2).  -k: the totals lack KEY; -n: the last case's totals are
# missing.
tcasekeys="n=32 rc=0 want=0 pages=32 dma_pages=2 stale_dma=0 stale_cpu=0"
tcasekeys="$tcasekeys stale_race=0 bad=0 result=pass"
tlog() {
    local failed= vcpus=2 drop= last= spec k v f line nfail=0 out
    local kept kw kp
    local -A tot=()
    while [ $# -gt 0 ]; do
        case $1 in
        -e) failed=$2; shift 2 ;;
        -v) vcpus=$2; shift 2 ;;
        -k) drop="$drop -$2"; shift 2 ;;
        -n) last=1; shift ;;
        *) break ;;
        esac
    done
    out=$(tkv $drop)
    for spec in "$@"; do
        kept= kw=0 kp=0
        case ${spec%%:*} in
        k[0-9]*) kept=${spec%%:*} kw=$((${kept#k} / 2 * vcpus)) kp=$kw ;;
        esac
        tot[releases]=$((${tot[releases]:-0} + 32))
        tot[unmap_flushes]=$((${tot[unmap_flushes]:-0} + 1))
        tot[dirty2]=$((${tot[dirty2]:-0} + 1))
        line="PG-T case=${spec%%:*}"
        for k in $tcasekeys; do
            v=${k#*=}
            for f in $(echo "${spec#"${spec%%:*}"}" | tr ':,' '  '); do
                [ "${f%%=*}" = "${k%%=*}" ] && v=${f#*=}
            done
            line="$line ${k%%=*}=$v"
        done
        for f in $(echo "${spec#"${spec%%:*}"}" | tr ':,' '  '); do
            case " $tcasekeys " in *" ${f%%=*}="*) continue ;; esac
            case ${f%%=*} in
            wanted) kw=${f#*=}; continue ;;
            placed) kp=${f#*=}; continue ;;
            kept) kept=${f#*=}; continue ;;
            esac
            tot[${f%%=*}]=$((${tot[${f%%=*}]:-0} + ${f#*=}))
        done
        [ -z "$kept" ] || [ "$kept" = - ] ||
            out="${out}PG-T kept case=$kept wanted=$kw placed=$kp\\n"
        [ -n "$last" ] && [ "$spec" = "${*: -1}" ] ||
            out=$out$(tkv $drop $(for k in "${!tot[@]}"; do
                                      echo "$k=${tot[$k]}"; done))
        case $line in *result=FAIL) nfail=$((nfail + 1)) ;; esac
        out="$out$line\\n"
    done
    printf '%sPG-T-END pages=%d dma_pages=2 stale_dma=0 stale_cpu=0 failed=%d dma=2 vcpus=%d leaked=0\\n' \
        "$out" $((32 * $#)) "${failed:-$nfail}" "$vcpus"
}
# The control treport adds: neg-late-flush, caught by the oracle in c33
# and p64 (where p64's granter read stale too).
tctl=$(tlog c33:bad_tlb=32 p64:bad_tlb=32,stale_race=2,result=FAIL)

# --- Verdicts of base/patched, and the oracle's deterministic controls
tfail=$t0$(tstats 28 0 1 0 1)'PG-T case=a20 n=28 rc=-14 want=-14 pages=28 dma_pages=28 stale_dma=3 stale_cpu=0 stale_race=0 bad=0 result=FAIL\nPG-T-END pages=28 dma_pages=28 stale_dma=3 stale_cpu=0 failed=1 dma=2 vcpus=2 leaked=28\n'
treport "patched:$tpass" "neg-efault-noflush:$tfail"
pg_result $? "torture report passes a clean build and a caught mutation"
tno "patched:$tfail"
pg_result $? "torture report catches a failed case"
tno "patched:${tpass%%PG-T-END*}"
pg_result $? "torture report catches an unfinished run"
# A log boot-qemu.sh moved away after its third emulator failure.
t=$(mktemp -d)
python3 "$report_py" --check "neg-tlb-self=$t/gone.log" > "$t/out" 2>&1
[ $? = 1 ] && grep -q "no log" "$t/out" && ! grep -q Traceback "$t/out"
pg_result $? "torture report fails a missing log by name, not by a traceback"
rm -rf "$t"
tno "patched:$tpass" "neg-efault-noflush:$(tlog c32 a20 a45)"
pg_result $? "torture report catches an uncaught negative control"
tno "patched:$tpass(XEN) Assertion 'x' failed at common/grant_table.c:1\n"
pg_result $? "torture report catches a Xen assertion"
toracle='(XEN) pg-oracle: d0 gfn 0x1 released before its p2m-TLB flush\n'
tno "patched:$toracle$tpass"
pg_result $? "torture report catches an oracle report on patched"
treport "patched:$tpass" "neg-late-flush:$toracle$t0$(tstats 32 3 1 0 1)$tc32$(tstats 64 6 2 0 2)${tc32//c32 n=32 rc=0 want=0 pages=32 dma_pages=2 stale_dma=0 stale_cpu=0 stale_race=0 bad=0 result=pass/p64 n=32 rc=0 want=0 pages=32 dma_pages=2 stale_dma=0 stale_cpu=0 stale_race=1 bad=0 result=FAIL}${tend/failed=0/failed=1}"
pg_result $? "torture report counts the oracle's reports as a catch"
tno "patched:$t0$(tstats 32 0 1 1 0)$tc32$tend"
pg_result $? "torture report requires a flush with the domain dirty on 2 CPUs"
tno "patched:$tc32$tend"
pg_result $? "torture report requires the oracle's totals"
tno "patched:$t0$(tstats 32 5 1 0 1)$tc32$tend"
pg_result $? "torture report counts the oracle's totals on patched"
# With ATS (machine vt-d-ats): the device-IOTLB counts.
# tats RELEASES BAD_TLB UNMAP_FLUSHES DIRTY1 DIRTY2 DEV_INVS DEV_MULTI
# DEV_SHORT.
tats() {
    tkv releases="$1" bad_tlb="$2" unmap_flushes="$3" dirty1="$4" \
        dirty2="$5" dev_invs="$6" dev_multi="$7" dev_short="$8"
}
a0=$(tats 0 0 0 0 0 0 0 0)
treport "vt-d-ats/patched:$a0$(tats 32 0 1 0 1 1 1 0)$tc32$tend"
pg_result $? "torture report passes patched with ATS exercised"
tno "vt-d-ats/patched:$tpass"
pg_result $? "torture report: ATS boot without device-IOTLB invalidations fails"
tno "vt-d-ats/patched:$a0$(tats 32 0 1 0 1 1 1 1)$tc32$tend"
pg_result $? "torture report: a flush missing an ATS device fails"
tc33=${tc32//c32 n=32/c33 n=33}
tself=$t0$(tstats 32 32 1 0 1)$tc32$(tstats 65 32 3 2 1)$tc33$tend
treport "patched:$tpass" "neg-tlb-self:$tself"
pg_result $? "torture report: a must-catch control caught where it is exercised"
tself=$t0$(tstats 32 32 1 0 1)$tc32$(tstats 65 32 3 1 2)$tc33$tend
tno "patched:$tpass" "neg-tlb-self:$tself"
pg_result $? "torture report: a must-catch control missed in one case fails"
tdev=$a0$(tats 32 0 1 0 1 1 0 0)$tc32$(tats 65 0 3 1 1 2 1 0)$tc33$tend
tno "vt-d-ats/patched:$a0$(tats 32 0 1 0 1 1 1 0)$tc32$tend" \
    "vt-d-ats/neg-devtlb-narrow:$tdev"
pg_result $? "torture report: neg-devtlb-narrow missed where a device invalidation covered 2+ pages fails"
tdev=$a0$(tats 32 0 1 0 1 1 0 0)$tc32$(tats 65 5 3 1 1 2 1 0)$tc33$tend
treport "vt-d-ats/patched:$a0$(tats 32 0 1 0 1 1 1 0)$tc32$tend" \
    "vt-d-ats/neg-devtlb-narrow:$tdev"
pg_result $? "torture report: neg-devtlb-narrow caught where a device invalidation covered 2+ pages"
# AMD-Vi with ATS: a device invalidation sent for 2+ pages must encode
# 2+ (dev_wide: sent for 2+ pages, dev_multi: encoding 2+).
# tw RELEASES BAD_TLB DEV_INVS DEV_MULTI DEV_WIDE: a flush per device
# invalidation, with the domain dirty on 2 CPUs.
tw() {
    tkv releases="$1" bad_tlb="$2" unmap_flushes="$3" dirty2="$3" \
        dev_invs="$3" dev_multi="$4" dev_wide="$5"
}
w0=$(tw 0 0 0 0 0)
tamd=$w0$(tw 32 0 1 1 1)$tc32$tend
treport "amd-vi-ats/patched:$tamd"
pg_result $? "torture report passes patched on amd-vi-ats"
tno "amd-vi-ats/patched:$w0$(tw 32 0 1 0 1)$tc32$tend"
pg_result $? "torture report: a device invalidation sent for 2+ pages encoding one fails"
tsbit=$w0$(tw 32 0 1 0 0)$tc32$(tw 65 3 3 0 2)$tc33$tend
treport "amd-vi-ats/patched:$tamd" "amd-vi-ats/neg-amd-sbit:$tsbit"
pg_result $? "torture report: neg-amd-sbit caught where a device invalidation was sent for 2+ pages"
tsbit=$w0$(tw 32 0 1 0 1)$tc32$(tw 65 3 3 0 2)$tc33$tend
tno "amd-vi-ats/patched:$tamd" "amd-vi-ats/neg-amd-sbit:$tsbit"
pg_result $? "torture report: neg-amd-sbit missed where a device invalidation was sent for 2+ pages fails"
# tpt RELEASES PT_QUEUED BAD_STALE
tpt() {
    tkv releases="$1" unmap_flushes=1 dirty2=1 pt_queued="$2" bad_stale="$3"
}
tlate=$(tpt 0 0 0)$(tpt 32 0 0)$tc32$(tpt 65 2 2)$tc33$tend
treport "patched:$tpass" "neg-pt-flush-late:$tlate"
pg_result $? "torture report: neg-pt-flush-late caught by stale reports where a table was unlinked"
tlate=$(tpt 0 0 0)$(tpt 32 1 0)$tc32$(tpt 65 2 2)$tc33$tend
tno "patched:$tpass" "neg-pt-flush-late:$tlate"
pg_result $? "torture report: neg-pt-flush-late missed where a table was unlinked fails"
tlate=$(tpt 0 0 0)$(tpt 32 0 0)$tc32$(tpt 65 2 2)$tc33$tend
treport "patched:$tpass" "neg-pt-flush-unlocked:$tlate"
pg_result $? "torture report: neg-pt-flush-unlocked caught at the p2m lock's release where a table was unlinked"
tlate=$(tpt 0 0 0)$(tpt 32 1 0)$tc32$(tpt 65 2 2)$tc33$tend
tno "patched:$tpass" "neg-pt-flush-unlocked:$tlate"
pg_result $? "torture report: neg-pt-flush-unlocked missed where a table was unlinked fails"

# --- 1. Each control caught by its detectors, in its cases (CONTROLS)
quick="c31 c32 c33 c65 c1000 a20 a45 b e d256 s256 m256 p64 p256 k64"
treport "patched:$(tlog $quick)"
pg_result $? "torture report passes the quick cases, every case counted"
# neg-efault-noflush: DMA in a20, the oracle in aK.
treport "patched:$tpass" \
    "neg-efault-noflush:$(tlog c33 a20:stale_dma=3,result=FAIL a45 e)"
pg_result $? "torture report: neg-efault-noflush caught by DMA in a20"
treport "patched:$tpass" "neg-efault-noflush:$(tlog c33 a20 a45:bad_tlb=13 e)"
pg_result $? "torture report: neg-efault-noflush caught by the oracle in a45"
tno "patched:$tpass" \
    "neg-efault-noflush:$(tlog c33 a20 a45 e:rc=-14,want=-38,result=FAIL)" &&
    tsays "NOT CAUGHT"
pg_result $? "torture report: neg-efault-noflush with a20 clean and e failing on its rc is not caught"
tno "patched:$tpass" "neg-efault-noflush:$(tlog c33:bad_tlb=3 a20 a45 e)"
pg_result $? "torture report: neg-efault-noflush reported by the oracle in c33 only is not caught"
tno "patched:$tpass" "neg-efault-noflush:$(tlog c33 a20 a45:stale_cpu=2,result=FAIL e)"
pg_result $? "torture report: neg-efault-noflush failing a45 on a stale CPU read is not caught"
tno "patched:$tpass" \
    "neg-efault-noflush:$(tlog c33 a20 a45 e)(XEN) Assertion 'x' failed at common/grant_table.c:1\n"
pg_result $? "torture report: a Xen assertion is no catch"
# neg-late-flush: the oracle in every case (pN's granter only reported).
treport "patched:$tpass" \
    "neg-late-flush:$(tlog c33:bad_tlb=32 a20:bad_tlb=8 p64:bad_tlb=2,stale_race=1,result=FAIL)" &&
    tsays "seen in c33 (oracle), a20 (oracle), p64 (oracle); required"
pg_result $? "torture report: neg-late-flush caught by the oracle in every case"
tno "patched:$tpass" \
    "neg-late-flush:$(tlog c33:bad_tlb=32 a20 p64:bad_tlb=2,stale_race=1,result=FAIL)" &&
    tsays "missed in a20"
pg_result $? "torture report: neg-late-flush missed by the oracle in one case fails, whatever else failed"
# Under Bochs (bochs-ept), neg-tlb-self must be seen stale by pN's
# granter too; under QEMU the oracle alone is required of it.
treport "bochs-ept/patched:$tpass" \
    "bochs-ept/neg-tlb-self:$(tlog c33:bad_tlb=32 p64:bad_tlb=32,stale_race=2,result=FAIL)"
pg_result $? "torture report: neg-tlb-self under Bochs seen stale by pN's granter passes"
tno "bochs-ept/patched:$tpass" \
    "bochs-ept/neg-tlb-self:$(tlog c33:bad_tlb=32 p64:bad_tlb=32)" &&
    tsays "missed in p64 (race)"
pg_result $? "torture report: neg-tlb-self under Bochs not seen stale fails"
tno "bochs-ept/patched:$tpass" "bochs-ept/neg-tlb-self:$(tlog c33:bad_tlb=32 d64:bad_tlb=32)" &&
    tsays "no pN case ran: the race detector was not shown"
pg_result $? "torture report: neg-tlb-self under Bochs without a pN case fails"
treport "patched:$tpass" "neg-tlb-self:$(tlog c33:bad_tlb=32 p64:bad_tlb=32)"
pg_result $? "torture report: neg-tlb-self under QEMU needs the oracle only"
# Mutant: bochs-ept's rule of neg-tlb-self without the granter's stale
# read passes the fixture that fails above.
t=$(mktemp -d) keep=$report_py
cp "$PG_ROOT"/harness/*.py "$t/" &&
    pg_mutate "$t/torture-report.py" '._replace(seen=("race", "pN"))' '' &&
    report_py=$t/torture-report.py &&
    treport "bochs-ept/patched:$tpass" \
        "bochs-ept/neg-tlb-self:$(tlog c33:bad_tlb=32 p64:bad_tlb=32)"
pg_result $? "torture report: mutant: bochs-ept's neg-tlb-self rule without the stale read is caught by the test above"
report_py=$keep; rm -rf "$t"
# neg-density-drop: the oracle in every kN case.
treport "patched:$tpass" \
    "neg-density-drop:$(tlog c33 d256 k64:bad_iotlb=30,stale_dma=2,result=FAIL)"
pg_result $? "torture report: neg-density-drop caught by the oracle in k64"
tno "patched:$tpass" "neg-density-drop:$(tlog c33:bad_iotlb=3 d256:bad_iotlb=1 k64)" &&
    tsays "missed in k64"
pg_result $? "torture report: neg-density-drop reported outside kN only is not caught"
tno "patched:$tpass" "neg-density-drop:$(tlog c33 k64:stale_dma=2,result=FAIL)"
pg_result $? "torture report: neg-density-drop seen by DMA alone in k64 is not caught"
tno "patched:$tpass" "neg-density-drop:$(tlog c33:bad_iotlb=3 d256)" &&
    tsays "not exercised"
pg_result $? "torture report: neg-density-drop without a kN case fails"
# kN's placement: patched's and neg-density-drop's kN must be preceded by
# gntt.c's PG-T kept line, every one of their N / 2 2M regions per vCPU
# placed as designed (two frames and a mapped spacer in each).
grep -qF 'pr_warn("PG-T kept case=%s wanted=%u placed=%u\n"' \
    "$PG_ROOT/torture/gntt.c"
pg_result $? "torture report: gntt.c prints kN's placement as the fixtures below do"
treport "patched:$(tlog c33 k64)" &&
    tjs 'j["runs"][0]["cases"][1]["kept"] == {"wanted": 64, "placed": 64}
         and j["runs"][0]["cases"][0]["kept"] is None'
pg_result $? "torture report: patched's k64 with 64 of 64 regions placed passes"
tno "patched:$(tlog c33 k64:placed=63)" &&
    tsays "k64: 63 of 64 2M regions placed as designed"
pg_result $? "torture report: patched's k64 with 63 of 64 regions placed fails"
tno "patched:$(tlog c33 k64:kept=-)" && tsays "k64: no PG-T kept line"
pg_result $? "torture report: patched's k64 without its placement fails"
tno "patched:$(tlog c33 k64:kept=k32,wanted=32,placed=32)" &&
    tsays "k64: no PG-T kept line"
pg_result $? "torture report: patched's k64 after another case's placement fails"
tno "patched:$(tlog c33 k64:wanted=32,placed=32)" &&
    tsays "k64: 32 of 32 2M regions placed as designed (two frames and a mapped spacer in each; 64 wanted"
pg_result $? "torture report: patched's k64 wanting fewer than N / 2 regions per vCPU fails"
treport "patched-4vcpu:$(tlog -v 4 k64)" &&
    tno "patched-4vcpu:$(tlog -v 4 k64:wanted=64,placed=64)"
pg_result $? "torture report: a 4-vCPU k64 wants 128 regions"
t=$(tlog c33 k64)
tno "patched:${t/placed=64/placed=x}" && tsays "a PG-T line that does not parse"
pg_result $? "torture report: a placement line that does not parse fails"
treport "patched:${t/ placed=64/(XEN) grant table grows\\n placed=64}" &&
    tjs 'j["runs"][0]["cases"][1]["kept"] == {"wanted": 64, "placed": 64}'
pg_result $? "torture report: a placement line cut by a Xen message is read whole"
treport "base:$(tlog c33 k64:kept=-)" "patched:$tpass" \
    "neg-late-flush:$(tlog c33:bad_tlb=32 k64:bad_tlb=32,kept=- p64:bad_tlb=32,stale_race=1,result=FAIL)"
pg_result $? "torture report: base's and other controls' kN need no placement"
treport "patched:$tpass" "neg-density-drop:$(tlog c33 k64:bad_iotlb=30)" &&
    tsays "negative control caught; seen in k64 (oracle)"
pg_result $? "torture report: neg-density-drop caught in k64 with every region placed"
tno "patched:$tpass" "neg-density-drop:$(tlog c33 d256 k64:bad_iotlb=30,placed=40)" &&
    tsays "NOT JUDGED" && tsays "k64: 40 of 64 2M regions placed as designed"
pg_result $? "torture report: neg-density-drop caught in a k64 with 40 of 64 regions placed fails"
tno "patched:$tpass" "neg-density-drop:$(tlog c33 k64:bad_iotlb=30,kept=-)" &&
    tsays "NOT JUDGED" && tsays "k64: no PG-T kept line"
pg_result $? "torture report: neg-density-drop caught in a k64 without its placement fails"
# neg-domain-state with 4 vCPUs: the oracle where vCPUs unmap at once,
# the race detector in pN.
t4="-v 4 p256 p1000 d256 m256"
treport "patched-4vcpu:$(tlog -v 4 p256)" \
    "neg-domain-state-4vcpu:$(tlog $t4:bad_tlb=1)"
pg_result $? "torture report: neg-domain-state (4 vCPUs) caught by the oracle in m256"
treport "patched-4vcpu:$(tlog -v 4 p256)" \
    "neg-domain-state-4vcpu:$(tlog -v 4 p256 p1000:stale_race=1,result=FAIL d256 m256)"
pg_result $? "torture report: neg-domain-state (4 vCPUs) caught by the race detector in p1000"
tno "patched-4vcpu:$(tlog -v 4 p256)" \
    "neg-domain-state-4vcpu:$(tlog -v 4 c33:bad_tlb=5,rc=-22,result=FAIL d256 m256)"
pg_result $? "torture report: neg-domain-state (4 vCPUs) reported and failed in c33 only is not caught"
tno "patched:$tpass" "neg-x:$tfail" && tsays "no rule in CONTROLS"
pg_result $? "torture report: a neg-* build with no rule fails, failed cases or not"
# neg-ptp-window (ASSERT_CONTROLS): Xen fails 6/6's assertion in the
# first case requested, before any case ends; nothing else is a catch.
tfree="(XEN) Assertion 'this_cpu(p2m_deferring_flush) != p2m' failed at arch/x86/mm/p2m.c:502\n(XEN) **** Panic on CPU 1:\n"
treport "patched:$tpass" "neg-ptp-window=c33" "neg-ptp-window:$t0$tfree" &&
    tsays "negative control caught"
pg_result $? "torture report: neg-ptp-window caught by its assertion in the first case"
tno "patched:$tpass" "neg-ptp-window=c33" \
    "neg-ptp-window:$t0${tfree/p2m_deferring_flush/p2m_deferring}"
pg_result $? "torture report: neg-ptp-window failing another assertion is not caught"
tno "patched:$tpass" "neg-ptp-window=c33" "neg-ptp-window:$tfree"
pg_result $? "torture report: neg-ptp-window's assertion before the torture began is not caught"
tno "patched:$tpass" "neg-ptp-window=c32.c33" "neg-ptp-window:$t0$(tstats 32 0 1 0 1)$tc32$tfree"
pg_result $? "torture report: neg-ptp-window's assertion after a case ended is not caught"
tno "patched:$tpass" "neg-ptp-window=c32" "neg-ptp-window:$tpass" &&
    tsays "Xen failed no assertion"
pg_result $? "torture report: neg-ptp-window running every case is not caught"
tno "patched:$tpass" "neg-ptp-window=c33" \
    "neg-ptp-window:$t0[   1.0] BUG: unable to handle page fault\n$tfree"
pg_result $? "torture report: neg-ptp-window's assertion after a dom0 oops is not caught"

# Every line of harness/problems.py's list fails base and patched, in
# the consoles' own format (6.1's timestamps): between two cases that
# pass, and the same run without it passes.
ts() { printf '[   %s] %s\\n' "$1" "$2"; }
toops() { # LINE...: patched's run of c32 and c33, LINE(s) between them
    local l
    printf '%s' "$t0$(tstats 32 0 1 0 1)"
    ts 12.100000 "${tc32%\\n}"
    for l; do printf '%s\\n' "$l"; done
    printf '%s' "$(tstats 64 0 2 0 2)"
    ts 13.100000 "PG-T case=c33 n=32 rc=0 want=0 pages=32 dma_pages=2 stale_dma=0 stale_cpu=0 stale_race=0 bad=0 result=pass"
    ts 14.000000 "PG-T-END pages=64 dma_pages=4 stale_dma=0 stale_cpu=0 failed=0 dma=2 vcpus=2 leaked=64"
}
treport "patched:$(toops)" && tsays "patched                      pass: 2 cases"
pg_result $? "torture report: patched with timestamped case lines passes (the fixture of the oopses below)"
while IFS='|' read -r what line; do
    tno "patched:$(toops "$line")" && tsays "problem: $what: $line"
    pg_result $? "torture report: patched fails on $line"
done < <(grep -v "^#" "$PG_ROOT/unit/oopses.txt")
treport "patched:$(toops "[   67.361715] watchdog: BUG: soft lockup - CPU#0 stuck for 52s! [migration/0:16]" \
    "[   31.200000] CPU: 1 PID: 57 Comm: kworker/1:2 Not tainted 6.1.0-28-amd64 #1 Debian 6.1.119-1")"
pg_result $? "torture report: a soft lockup and a CPU line alone pass"

# --- 2. Every case requested, and PG-T-END, in every build
tno "patched:$tpass" "neg-tlb-self=c33.c65.a20.b.d256.m256.p64" \
    "neg-tlb-self:$t0$(tstats 33 33 1 0 1)$tc33"
pg_result $? "torture report: neg-tlb-self caught in c33, then dom0 died, fails"
tno "patched:$tpass" "neg-tlb-self=c33.c65.a20.b.d256.m256.p64" \
    "neg-tlb-self:$(tlog c33:bad_tlb=1 c65:bad_tlb=1)" &&
    tsays "missing: a20, b, d256, m256, p64"
pg_result $? "torture report: a control missing requested cases fails, with PG-T-END"
tno "patched=c32.c33" "patched:$tpass"
pg_result $? "torture report: patched missing a requested case fails"
tno "patched=c33.c32" "patched:$(tlog c32 c33)"
pg_result $? "torture report: cases run out of the order requested fail"
tno "patched=-" "patched:$tpass" && tsays "cases requested are unknown"
pg_result $? "torture report: a run whose requested cases are not given fails"

# --- 3. PG-T-END's failed= against the case lines
tno "patched:$(tlog -e 1 c32 c33)"
pg_result $? "torture report: patched with failed=1 and every case line passing fails"
tno "patched:$tpass" \
    "neg-tlb-self:$(tlog -e 1 c32:bad_tlb=1 c33:bad_tlb=1 | sed "s/PG-T-END/PG-T error: bad case 'x9'\\\\nPG-T-END/")" &&
    tsays "failed=1, but 0 case lines failed"
pg_result $? "torture report: a control with a case the module rejected fails"
treport "patched:$tpass" "neg-tlb-self:$(tlog c32:bad_tlb=1,stale_race=1,result=FAIL c33:bad_tlb=1)"
pg_result $? "torture report: a control whose failed= counts its failed case passes"

# --- 4. Every key of the oracle's totals, before every case
tno "patched:$(tlog -k bad_stale c32 c33)"
pg_result $? "torture report: patched whose totals lack bad_stale fails"
tno "vt-d-ats/patched:$(tlog -k dev_short c32:dev_invs=1 c33:dev_invs=1)"
pg_result $? "torture report: patched with ATS whose totals lack dev_short fails"
treport "vt-d-ats/patched:$(tlog c32:dev_invs=1 c33:dev_invs=1)"
pg_result $? "torture report: patched with ATS and every key passes"
tno "patched:$(tlog -n c32 c33)"
pg_result $? "torture report: patched with a case's totals missing fails"
tno "patched:$tpass" "neg-tlb-self:$(tlog -n c32:bad_tlb=1 c33)"
pg_result $? "torture report: neg-tlb-self with the totals of its missed case missing fails"

# --- 5. neg-domain-state with 2 vCPUs: a probe, not a control
treport "patched:$tpass" "neg-domain-state:$(tlog c33 d256 s256 p64)" \
    "neg-late-flush:$tctl" &&
    tsays "probe (not a control, never required): not seen" &&
    tjs 'j["runs"][1]["role"] == "probe" and j["ok"]'
pg_result $? "torture report: neg-domain-state (2 vCPUs) not seen passes as a probe"
treport "patched:$tpass" "neg-domain-state:$(tlog c33 d256 s256:bad_tlb=2 p64)" \
    "neg-late-flush:$tctl" &&
    tsays "probe (not a control, never required): seen in s256 (oracle)"
pg_result $? "torture report: neg-domain-state (2 vCPUs) seen in s256 is reported"
tno "patched-4vcpu:$(tlog -v 4 p256)" "neg-domain-state-4vcpu:$(tlog $t4)" &&
    tjs 'j["runs"][1]["role"] == "control"'
pg_result $? "torture report: neg-domain-state (4 vCPUs) not caught fails, a control"
tno "patched-4vcpu:$(tlog p256)"
pg_result $? "torture report: a 4-vCPU boot with 2 vCPUs online fails"

# --- 6. A negative control on every machine that boots patched
# torture.sh's pick() leaves out a control whose test-patches/neg-*/<base>/
# is absent: the report (from the --cases given) fails a machine left
# with patched and no neg-* control or negative, naming it.
tsbit_ok=$w0$(tw 32 0 1 0 0)$tc32$(tw 65 3 3 0 2)$tc33$tend
tdevp=$a0$(tats 32 0 1 0 1 1 1 0)$tc32$tend
treport -b "amd-vi-ats/patched:$tamd" "amd-vi-ats/neg-amd-sbit:$tsbit_ok" &&
    tjs 'j["problems"] == [] and j["ok"]'
pg_result $? "torture report: patched and its control on amd-vi-ats pass (the fixture of the next case)"
tno -b "amd-vi-ats/patched:$tamd" &&
    tsays "problem: amd-vi-ats: patched booted with no negative control" &&
    tjs 'len(j["problems"]) == 1 and j["problems"][0].startswith("amd-vi-ats: ")
         and not j["ok"]'
pg_result $? "torture report --check: patched alone on amd-vi-ats fails, naming the machine"
tno -b "base:$tpass" "patched:$tpass" "neg-late-flush:$tctl" \
    "vt-d-ats/base:$tdevp" "vt-d-ats/patched:$tdevp" &&
    tsays "problem: vt-d-ats: patched booted with no negative control (a neg-* control or negative; booted: base, patched)" &&
    ! tsays "problem: vt-d:"
pg_result $? "torture report: a control on another machine (vt-d) is none for vt-d-ats, base is none"
tno -b "patched:$tpass" "neg-domain-state:$(tlog c33 d256 s256 p64)" &&
    tsays "problem: vt-d: patched booted with no negative control"
pg_result $? "torture report: a probe (neg-domain-state, 2 vCPUs) is no negative control"
treport -b "patched-4vcpu:$(tlog -v 4 p256)" \
    "neg-domain-state-4vcpu:$(tlog $t4:bad_tlb=1)" &&
    treport -b "patched:$tpass" "negative:$tpass"
pg_result $? "torture report: neg-domain-state-4vcpu (a control) and a build named negative count as the machine's control"

# --- 7. torture.sh, with stand-ins for the builds and the boots
# tsh BASE ARGS...: torture.sh ARGS on a tree of BASE (without the
# test-patches/ folders of the controls TSH_DROP names); the stand-in
# boot-qemu.sh records each boot (MACHINE VARIANT-BUILD LOG CASES) in
# $root/boots and writes the log the build prints: every case clean (kN
# with every region placed), a neg-* build reported by the oracle in
# each.  $root stays for the test.
tsh() {
    local b=$1 v
    shift
    root=$(mktemp -d)
    mkdir -p "$root/harness" "$root/tree/xen" "$root/patches/$b" \
        "$root/out/torture"
    cp "$PG_ROOT"/harness/{lib.sh,bootlog.py,problems.py,record.py,report.py} \
        "$root/harness/"
    cp "$torture_sh" "$root/harness/torture.sh"
    cp "$report_py" "$root/harness/torture-report.py"
    cp -r "$PG_ROOT/harness/machines" "$root/harness/"
    touch "$root/patches/$b/0001-x.patch"
    for v in "$PG_ROOT"/test-patches/neg-*/"$b"/; do
        v=$(basename "${v%/"$b"/}")
        case " ${TSH_DROP:-} " in *" $v "*) continue ;; esac
        mkdir -p "$root/test-patches/$v/$b"
    done
    case $b in
    staging) printf 'export XEN_VERSION       = 4\nexport XEN_SUBVERSION    = 23\nexport XEN_EXTRAVERSION ?= -unstable$(XEN_VENDORVERSION)\n' ;;
    *) printf 'export XEN_VERSION       = 4\nexport XEN_SUBVERSION    = 17\nexport XEN_EXTRAVERSION ?= .5$(XEN_VENDORVERSION)\n' ;;
    esac > "$root/tree/xen/Makefile"
    printf '#!/bin/bash\necho "$PG_BUILD/xen-$1"\n' > "$root/harness/build-xen.sh"
    printf '#!/bin/bash\necho "$PG_BUILD/gntt.ko"\n' > "$root/harness/build-gntt.sh"
    printf '#!/bin/bash\n' > "$root/harness/mk-dom0.sh"
    cat > "$root/harness/boot-qemu.sh" <<'EOF'
#!/bin/bash
# XEN DOM0 LOG CASES DMA, as torture.sh calls it.
. "$(dirname "$0")/lib.sh"
v=${1##*/xen-} log=$3 n=0 r=0 f=0
echo "${PG_IOMMU:-vt-d} $v $log $4" >> "$PG_ROOT/boots"
stats() {
    printf '(XEN) pg-oracle-stats:'
    for k in releases frees bad_tlb bad_iotlb bad_free unmap_flushes narrow \
             dirty1 dirty2 dirty3 dirty4 dev_invs dev_multi dev_wide \
             dev_short pt_queued bad_stale; do
        case $k in
        releases|unmap_flushes|dirty2|dev_invs|dev_multi|dev_wide|pt_queued)
            printf ' %s=%d' $k $n ;;
        bad_tlb) printf ' %s=%d' $k $r ;;
        *) printf ' %s=0' $k ;;
        esac
    done
    echo
}
{
    stats
    case $v in neg-ptp-window)
        echo "(XEN) Assertion 'this_cpu(p2m_deferring_flush) != p2m' failed at arch/x86/mm/p2m.c:502"
        exit 1 ;;
    esac
    # TSH_DIES: the build whose boot dies after its first case.
    [ "$v" != "${TSH_DIES:-}" ] || {
        echo "PG-T case=${4%%.*} n=1 rc=0 want=0 pages=1 dma_pages=1 stale_dma=0 stale_cpu=0 stale_race=0 bad=0 result=pass"
        echo "(XEN) d0v1 Triple fault - invoking HVM shutdown action 1"
        exit 1
    }
    for c in $(echo "$4" | tr . ' '); do
        n=$((n + 1))
        case $v in neg-*) r=$n ;; esac
        case $c in k[0-9]*)
            w=$((${c#k} / 2 * ${PG_QEMU_SMP:-2}))
            echo "PG-T kept case=$c wanted=$w placed=$w" ;;
        esac
        stats
        # neg-late-flush's stale reads, as pN's granter often sees them.
        race=0 res=pass
        case $v:$c in neg-late-flush*:p[0-9]*) race=1 res=FAIL f=$((f + 1)) ;; esac
        echo "PG-T case=$c n=1 rc=0 want=0 pages=1 dma_pages=1 stale_dma=0 stale_cpu=0 stale_race=$race bad=0 result=$res"
    done
    echo "PG-T-END pages=$n dma_pages=$n stale_dma=0 stale_cpu=0 failed=$f dma=2 vcpus=${PG_QEMU_SMP:-2} leaked=0"
} > "$log"
EOF
    chmod +x "$root"/harness/*.sh
    XEN_SRC=$root/tree PG_OUT=$root/out PG_BUILD=$root/build PG_JOBS=4 \
        "$root/harness/torture.sh" "$@" > "$root/out.txt" 2>&1
}
# tboots MACHINE VARIANT: the cases of that boot in $root/boots.
tboots() { awk -v m="$1" -v v="$2" '$1 == m && $2 == v { print $4 }' \
               "$root/boots"; }
q=c31.c32.c33.c65.c1000.a20.a45.b.e.d256.s256.m256.p64.p256.k64
qm=c33.c65.a20.b.d256.m256.p64.k64
tsh staging --check && ok=0 || ok=1
for m in vt-d amd-vi vt-d-ats none; do
    [ -z "$(tboots $m base)" ] && [ "$(tboots $m patched)" = $q ] || ok=1
done
for m in vt-d amd-vi; do
    [ "$(tboots $m neg-density-drop)" = $qm ] || ok=1
done
[ -z "$(tboots amd-vi-ats base)" ] && [ "$(tboots amd-vi-ats patched)" = $q ] &&
    python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
runs = {(r['iommu'], r['variant']): r for r in j['runs']}
assert runs['vt-d', 'patched']['requested'] == sys.argv[2].split('.')
assert all(r.get('requested') for r in j['runs']) and j['ok']
assert j['tree'] == {'base': 'staging', 'xen_version': '4.23-unstable',
                     'describe': sys.argv[3]}, j['tree']
" "$root/out/torture.json" $q "$(pg_tree_describe "$root/tree")" || ok=1
[ $ok = 0 ] || cat "$root/out.txt" "$root/boots"
pg_result $ok "torture.sh on staging, quick: no base boot, patched's cases on every machine, neg-density-drop in kN under VT-d and AMD-Vi, every boot's cases and the tree to the report"
rm -rf "$root"
tsh stable-4.17 --check && [ -z "$(tboots vt-d base)" ] &&
    [ "$(tboots vt-d patched)" = $q ] && [ "$(tboots none patched)" = $q ] &&
    [ "$(tboots vt-d neg-ptp-window)" = c33 ] &&
    [ "$(tboots vt-d neg-density-drop)" = $qm ] &&
    [ "$(tboots amd-vi neg-density-drop)" = $qm ] &&
    [ -z "$(grep -v '^vt-d ' "$root/boots" | grep neg-ptp-window)" ]
pg_result $? "torture.sh on stable-4.17, quick: no base boot; neg-ptp-window in c33 under VT-d; neg-density-drop in kN under VT-d and AMD-Vi"
rm -rf "$root"
# A build's boot that died: torture.sh fails, and the report (the
# record's torture verdicts) is written all the same, naming it.
TSH_DIES=patched tsh staging --check; rc=$?
[ $rc != 0 ] && grep -q 'torture boot of patched failed' "$root/out.txt" &&
    python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
runs = {(r['iommu'], r['variant']): r for r in j['runs']}
assert not j['ok'] and runs['vt-d', 'neg-late-flush']['ok']
assert not runs['vt-d', 'patched']['ok']
assert any('PG-T-END' in p for p in runs['vt-d', 'patched']['problems'])
" "$root/out/torture.json"
pg_result $? "torture.sh: a build's boot that dies fails the run, and its report is written (the record's torture verdicts)"
rm -rf "$root"
# Two control folders gone on staging: torture.sh notes each control it
# leaves out, boots both ATS machines with patched alone, and --check
# fails them by name.
TSH_DROP="neg-amd-sbit neg-devtlb-narrow" tsh staging --check; rc=$?
[ $rc != 0 ] && [ -z "$(tboots vt-d-ats neg-devtlb-narrow)" ] &&
    [ -z "$(tboots amd-vi-ats neg-amd-sbit)" ] &&
    [ "$(tboots amd-vi-ats patched)" = $q ] &&
    grep -q 'note: torture: no test-patches/neg-amd-sbit/staging' "$root/out.txt" &&
    grep -q '^problem: vt-d-ats: patched booted with no negative control' "$root/out.txt" &&
    grep -q '^problem: amd-vi-ats: patched booted with no negative control' "$root/out.txt" &&
    ! grep -q '^problem: \(vt-d\|amd-vi\|none\):' "$root/out.txt"
pg_result $? "torture.sh on staging without neg-amd-sbit/ and neg-devtlb-narrow/staging: both ATS machines booted with patched alone fail --check by name"
rm -rf "$root"

# --- 8. torture.sh's own lists, as it evaluates them (CI's, without
# --full): on every base, every machine it boots runs patched and a
# negative control (torture-report.py's negative()).  pick() leaves out
# a control whose folder the base lacks, so this pins each machine's.
# tlists ROOT BASE: "MACHINE: VARIANTS" for each machine torture.sh
# boots, with ROOT's test-patches/.
tlists() {
    { printf 'die() { echo "error: $*"; exit 1; }; pg_machine() { :; }\n'
      printf 'full= base=%q PG_ROOT=%q\n' "$2" "$1"
      sed -n '/^negs=\$(cd/,/^declare -A xen/p' "$torture_sh" | sed '$d'
      cat <<'SH'
for m in $iommus; do
    case $m in
    vt-d) l=$variants ;; amd-vi) l=$quick_variants ;;
    vt-d-ats) l=$ats_variants ;; amd-vi-ats) l=$amd_ats_variants ;;
    none) l=$none_variants ;; *) l="?" ;;
    esac
    echo "$m:" $l
done
SH
    } | env -u TORTURE_VARIANTS -u TORTURE_IOMMUS bash 2>/dev/null
}
# tpin ROOT BASE: tlists puts a control on every machine: prints each
# machine's controls, or what lacks one.
tpin() {
    tlists "$1" "$2" | python3 -c '
import importlib.util, os, sys
sys.path[:0] = [os.path.dirname(sys.argv[1]), sys.argv[2]]
spec = importlib.util.spec_from_file_location("torture_report", sys.argv[1])
tr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tr)
out, bad = [], []
for line in sys.stdin.read().splitlines():
    m, _, vs = line.partition(":")
    ctl = [v for v in vs.split() if tr.negative(v)]
    out.append("%s (%s)" % (m, ", ".join(ctl)))
    if "patched" not in vs.split() or not ctl:
        bad.append("%s: %s, no negative control" % (m, vs.strip() or "nothing"))
print("; ".join(bad or out or ["no machine"]))
sys.exit(1 if bad or not out else 0)
' "$report_py" "$PG_ROOT/harness"
}
for b in $( { echo staging stable-4.17 stable-4.19 | tr ' ' '\n'
              for d in "$PG_ROOT"/patches/*/; do
                  d=${d%/}; [ -z "$(pg_series "${d##*/}")" ] || echo "${d##*/}"
              done; } | sort -u); do
    t=$(tpin "$PG_ROOT" "$b")
    pg_result $? "torture.sh's quick lists on $b: a negative control on every machine it boots: $t"
done
# The pin itself: two control folders gone from a copy of test-patches/.
t=$(mktemp -d)
cp -r "$PG_ROOT/test-patches" "$t/"
rm -r "$t/test-patches/neg-amd-sbit/staging" "$t/test-patches/neg-devtlb-narrow/staging"
o=$(tpin "$t" staging); rc=$?
[ $rc != 0 ] && [ "$o" = "vt-d-ats: patched, no negative control; amd-vi-ats: patched, no negative control" ]
pg_result $? "torture.sh's lists pinned: without neg-amd-sbit/ and neg-devtlb-narrow/staging the pin fails ($o)"
tpin "$t" stable-4.17 >/dev/null
pg_result $? "torture.sh's lists pinned: stable-4.17 in the same copy keeps its controls"
rm -rf "$t"
pg_tally
