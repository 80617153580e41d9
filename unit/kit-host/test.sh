#!/bin/bash
# The kit's host side (kit/pg-kit, kit/grub-entries) on a fake Debian host:
# a root folder (PG_KIT_ROOT) with GRUB's files, /sys and /proc folders
# (PG_KIT_SYS, PG_KIT_PROC; the build ID in bytes, as Linux gives it),
# and stand-ins for dpkg-query, update-grub
# (which runs the root's /etc/grub.d generators as grub-mkconfig would,
# with a stand-in grub-mkconfig_lib), grub-editenv and xl.
# Proves: install adds only the kit's files and GRUB entries (ids
# pg-kit-<build>, PVH dom0, the manifest's options), after the host's,
# leaves packages, GRUB's settings and environment alone; uninstall
# leaves grub.cfg byte for byte as before; each refusal (not Debian, no
# Xen package, a tampered hypervisor, installed twice; run on PV dom0, on
# a foreign build, without the IOMMU, on a release build without
# --netback, without xl, without kernel headers for the torture; --netback
# with a dynamic busybox or on a host using its subnet; the torture when
# a line written to Xen's debug console does not reach xl dmesg) exits
# non-zero naming the cause; run cuts Xen's log of the torture at its
# marker (after the ring wrapped, where a line count finds nothing), and
# a marker the ring lost fails the torture; the IOMMU and its shared
# tables come from the CPU and virt_caps once Xen's boot lines are gone;
# runlog.py's torture verdict needs the oracle's totals, every key,
# before the first case and after each, and a flush with the domain
# dirty on 2+ CPUs (each missing: a failure naming it), and fails a
# line of harness/problems.py (which kit.sh packs); runlog.py reads
# the netback benchmark's lines (with and without Xen's counters) and
# fails a run that stopped.  Negative control: an installer that
# changes GRUB's default is caught by its own check.
# Could wrongly pass: the stand-ins are not GRUB; whether GRUB boots the
# entries is for the emulated host (issue's end-to-end run) to show.  Nor
# are they Xen: that a PVH dom0's writes to port 0xe9 reach xl dmesg is
# Xen's code (hvm_print_line), shown on a host only by run's own check.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../harness/lib.sh"
src=$here/../../kit
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
kver=$(uname -r)

# The kit: two builds, hypervisors of a few bytes.
kit=$t/kit
mkdir -p "$kit"
cp "$src/pg-kit" "$src/grub-entries" "$src/runlog.py" "$src/compare.py" \
   "$here/../../harness/problems.py" "$kit/"
echo base > "$kit/xen-base.gz"; echo patched > "$kit/xen-patched.gz"
echo rel > "$kit/xen-patched-release.gz"
python3 - "$kit" <<'PY'
import hashlib, json, sys
k = sys.argv[1]
b = [{"name": n, "config": c, "build_id": i,
      "sha256": hashlib.sha256(open(f"{k}/xen-{n}.gz", "rb").read()).hexdigest()}
     for n, c, i in (("base", "debug", "b1"), ("patched", "debug", "c1"),
                     ("patched-release", "release", "e1"))]
json.dump({"format": "pg-kit/1", "series_base": "staging", "tree": "t",
           "xen_version": "4.23", "builds": b,
           "xen_args": "dom0=pvh iommu=verbose", "rounds": "1 32",
           "torture_cases": "c31.c32"},
          open(f"{k}/MANIFEST.json", "w"))
PY

# The host.
R=$t/root
mkdir -p "$R/etc/grub.d" "$R/etc/default" "$R/boot/grub" "$R/var/lib"
printf 'ID=debian\nVERSION_ID="12"\n' > "$R/etc/os-release"
echo 'GRUB_DEFAULT=0' > "$R/etc/default/grub"
echo kernel > "$R/boot/vmlinuz-$kver"; echo initrd > "$R/boot/initrd.img-$kver"
cat > "$R/etc/grub.d/20_linux_xen" <<'EOF'
#!/bin/sh
echo "menuentry 'Debian GNU/Linux, with Xen hypervisor' --id xen-default {"
echo "}"
EOF
chmod +x "$R/etc/grub.d/20_linux_xen"
bin=$t/bin lib=$t/lib
mkdir -p "$bin" "$lib"
cat > "$lib/grub-mkconfig_lib" <<'EOF'
prepare_grub_to_access_device() { echo "search --no-floppy --fs-uuid --set=root boot-uuid"; }
make_system_path_relative_to_its_root() { echo "${1#$PG_KIT_ROOT}"; }
EOF
cat > "$bin/update-grub" <<EOF
#!/bin/sh
set -e
export pkgdatadir=$lib grub_probe=$bin/grub-probe GRUB_DEVICE_UUID=root-uuid
export GRUB_CMDLINE_XEN_DEFAULT=dom0_mem=4G GRUB_CMDLINE_LINUX_DEFAULT=quiet
for g in \$(ls "\$PG_KIT_ROOT/etc/grub.d"); do
    [ -x "\$PG_KIT_ROOT/etc/grub.d/\$g" ] && "\$PG_KIT_ROOT/etc/grub.d/\$g"
done > "\$PG_KIT_ROOT/boot/grub/grub.cfg.new"
mv "\$PG_KIT_ROOT/boot/grub/grub.cfg.new" "\$PG_KIT_ROOT/boot/grub/grub.cfg"
EOF
printf '#!/bin/sh\necho /dev/sda1\n' > "$bin/grub-probe"
printf '#!/bin/sh\necho saved_entry=0\n' > "$bin/grub-editenv"
cat > "$bin/dpkg-query" <<'EOF'
#!/bin/sh
# -W -f=FORMAT [PATTERN]: the packages, or those matching PATTERN
[ -e "$PG_KIT_ROOT/no-xen" ] || echo "xen-hypervisor-4.17-amd64 4.17.5 ii "
[ $# -gt 2 ] || echo "grub-pc 2.06 ii "
EOF
cat > "$bin/xl" <<'EOF'
#!/bin/sh
case "$1" in
dmesg) cat "$PG_KIT_ROOT/xl-dmesg" ;;
info) echo "nr_cpus                : 8"
      [ -e "$PG_KIT_ROOT/xl-foreign" ] ||
      echo "virt_caps              : $(cat "$PG_KIT_ROOT/xl-caps")" ;;
esac
EOF
# root, unless the test says otherwise (CI may not run as root)
cat > "$bin/id" <<'EOF'
#!/bin/sh
[ "$1" = -u ] && { cat "$PG_KIT_ROOT/uid" 2>/dev/null || echo 0; exit 0; }
exec /usr/bin/id "$@"
EOF
chmod +x "$bin"/*
export PG_KIT_ROOT=$R PATH=$bin:$PATH
echo 1000 > "$R/uid"
! "$kit/pg-kit" install > "$t/out" 2>&1 && grep -q "install needs root" "$t/out" &&
    [ ! -e "$R/boot/pg-kit" ]
pg_result $? "install refuses to run without root"
rm "$R/uid"
"$bin/update-grub"
cp "$R/boot/grub/grub.cfg" "$t/grub.cfg.orig"

# Install.
"$kit/pg-kit" install > "$t/out" 2>&1
pg_result $? "install on a Debian 12 host with Xen"
cfg=$R/boot/grub/grub.cfg
grep -q "^menuentry 'Xen patched (pg-kit), PVH dom0, Linux $kver' --class xen --id pg-kit-patched {" "$cfg" &&
    grep -q "multiboot2	/boot/pg-kit/xen-patched.gz placeholder  dom0_mem=4G dom0=pvh iommu=verbose$" "$cfg" &&
    grep -q "module2	/boot/vmlinuz-$kver placeholder root=UUID=root-uuid ro  quiet$" "$cfg" &&
    grep -q "module2	--nounzip /boot/initrd.img-$kver$" "$cfg"
pg_result $? "an entry per build: its hypervisor, the manifest's options, the running kernel"
[ "$(grep -c '^menuentry' "$cfg")" = 4 ] && head -1 "$cfg" | grep -q xen-default
pg_result $? "the kit's entries come after the host's"
[ "$(cd "$R" && find . -type f | sort | grep -v '^./boot/grub/grub.cfg$' | grep -v '^./var/lib/pg-kit/')" = \
  "$(printf '%s\n' ./boot/initrd.img-$kver ./boot/pg-kit/MANIFEST.json ./boot/pg-kit/entry.conf \
     ./boot/pg-kit/xen-base.gz ./boot/pg-kit/xen-patched-release.gz ./boot/pg-kit/xen-patched.gz \
     ./boot/vmlinuz-$kver ./etc/default/grub ./etc/grub.d/20_linux_xen ./etc/grub.d/42_pg-kit \
     ./etc/os-release | sort)" ]
pg_result $? "install adds the kit's files only"
! "$kit/pg-kit" install > "$t/out" 2>&1 && grep -q "already installed" "$t/out"
pg_result $? "install refuses to install twice"

# Run: refusals.
S=$t/sys P=$t/proc
mkdir -p "$S/hypervisor/properties" "$P/xen"
export PG_KIT_SYS=$S PG_KIT_PROC=$P
echo xen > "$S/hypervisor/type"; echo control_d > "$P/xen/capabilities"
refuse_run() { # WHAT PATTERN
    ! "$kit/pg-kit" run --out "$t" > "$t/out" 2>&1 && grep -q "$2" "$t/out"
    pg_result $? "run refuses $1"
}
echo PV > "$S/hypervisor/guest_type"
refuse_run "a PV dom0" "dom0 is PV, not PVH"
echo PVH > "$S/hypervisor/guest_type"; printf '\x01\x23' > "$S/hypervisor/properties/buildid"
refuse_run "a hypervisor the kit did not install" "build id 0123) is not one of the kit's"
printf '\xc1' > "$S/hypervisor/properties/buildid"
echo "pv hvm hap shadow" > "$R/xl-caps"
echo "(XEN) I/O virtualisation disabled" > "$R/xl-dmesg"
refuse_run "a host without the IOMMU" "the IOMMU is off"
echo "pv hvm hvm_directio pv_directio hap shadow" > "$R/xl-caps"
printf '(XEN) Intel VT-d Snoop Control enabled.\n(XEN) I/O virtualisation enabled\n' > "$R/xl-dmesg"
printf '\xe1' > "$S/hypervisor/properties/buildid"
refuse_run "a release build (no counters)" "patched-release is a release build"
printf '\xc1' > "$S/hypervisor/properties/buildid"
touch "$R/xl-foreign"
refuse_run "a toolstack of another Xen release" "a kit of a staging tree needs that tree's tools"
rm "$R/xl-foreign"
mv "$bin/xl" "$t/xl"
refuse_run "without xl" "xl not found"
mv "$t/xl" "$bin/xl"
refuse_run "the torture without the kernel's headers" "apt-get install linux-headers-$kver"

# --netback, the one part of a run on a release build: its refusals.
printf '\xe1' > "$S/hypervisor/properties/buildid"
for c in iperf3 cpio modprobe busybox; do printf '#!/bin/sh\nexit 0\n' > "$bin/$c"; done
printf '#!/bin/sh\necho "\tlinux-vdso.so.1 (0x0000)"\n' > "$bin/ldd"
cat > "$bin/ip" <<'EOF'
#!/bin/sh
[ -e "$PG_KIT_ROOT/ip-used" ] && [ "$1" = -o ] &&
    echo "2: eth1    inet 10.0.0.7/24 brd 10.0.0.255 scope global eth1"
exit 0
EOF
chmod +x "$bin"/*
refuse_netback() { # WHAT PATTERN
    ! "$kit/pg-kit" run --netback --out "$t" > "$t/out" 2>&1 && grep -q "$2" "$t/out"
    pg_result $? "run --netback refuses $1"
}
refuse_netback "a dynamically linked busybox for the domU" "apt-get install busybox-static"
printf '#!/bin/sh\necho "\tnot a dynamic executable"; exit 1\n' > "$bin/ldd"
touch "$R/ip-used"
refuse_netback "a host already using 10.0.0.0/24" "10.0.0.0/24 is in use"
rm -f "$R/ip-used" "$bin"/{iperf3,cpio,modprobe,busybox,ldd,ip}
printf '\xc1' > "$S/hypervisor/properties/buildid"

# run on patched, the workload and the torture, with stand-ins for the
# builds (make, gcc: a gntpg printing one run), the module (insmod: its
# PG-T lines to dom0's log, the oracle's totals to Xen's console ring,
# which then wraps and loses its first $R/wrap lines) and the logs
# (dmesg, xl dmesg; $R/dev/port, Xen's debug console, writes to the ring).
# Xen's boot lines are gone from the ring: the IOMMU is the CPU vendor's
# and the shared tables Xen's flag in virt_caps.
mkdir -p "$R/lib/modules/$kver/build" "$R/dev" "$kit/src/workload" "$kit/src/torture"
touch "$R/lib/modules/$kver/build/Makefile"
echo "vendor_id	: GenuineIntel" > "$P/cpuinfo"
echo "pv hvm hvm_directio pv_directio hap shadow iommu_hap_pt_share" > "$R/xl-caps"
for i in 1 2; do
    echo "PG-START version=1 perfc=40"
    for n in 1 32; do
        echo "PG-END n=$n phase=unmap hypercalls=1 unmap_ns=$((n * 1000)) pg_iotlb_page=1 pg_iotlb_domain=0 pg_iotlb_global=0 pg_iotlb_pages=$n pg_iotlb_wait=1 pg_p2m_tlb_flush=1 pg_flush_ipi=1"
    done
    echo PG-DONE
done > "$R/gntpg.out"
printf '#!/bin/sh\nsed -n "/PG-START/,/PG-DONE/p;/PG-DONE/q" "$PG_KIT_ROOT/gntpg.out"\n' > "$R/gntpg"
cat > "$bin/make" <<'EOF2'
#!/bin/sh
for a; do case "$a" in OUT=*) cp "$PG_KIT_ROOT/gntpg" "${a#OUT=}/gntpg" ;; esac; done
EOF2
cat > "$bin/insmod" <<'EOF2'
#!/bin/sh
R=$PG_KIT_ROOT
{ tail -n +"$(($(cat "$R/wrap") + 1))" "$R/xl-dmesg"; cat "$R/torture-xen"; } > "$R/ring"
mv "$R/ring" "$R/xl-dmesg"
cat "$R/torture-dom0" >> "$R/dev/kmsg"
EOF2
printf '#!/bin/sh\ncat "$PG_KIT_ROOT/dev/kmsg"\n' > "$bin/dmesg"
for c in gcc rmmod; do printf '#!/bin/sh\nexit 0\n' > "$bin/$c"; done
chmod +x "$bin"/* "$R/gntpg"
xstats() { # RELEASES DIRTY1 DIRTY2 [BAD_TLB]: the oracle's totals as Xen logs them
    echo "(XEN) pg-oracle-stats: releases=$1 frees=0 bad_tlb=${4:-0} bad_iotlb=0 bad_free=0 unmap_flushes=$(($2 + $3)) narrow=0 dirty1=$2 dirty2=$3 dirty3=0 dirty4=0 dev_invs=0 dev_multi=0 dev_wide=0 dev_short=0 pt_queued=0 bad_stale=0"
}
tcase() { # NAME N: a case that passed, as gntt.c prints it
    echo "[ 1.0] PG-T case=$1 n=$2 rc=0 want=0 pages=$2 dma_pages=0 stale_dma=0 stale_cpu=0 stale_race=0 bad=0 result=pass"
}
# pg-kit gives runlog.py dom0's online CPUs, here this machine's.
printf '%s\n' "$(tcase c31 31)" "$(tcase c32 32)" \
    "[ 2.0] PG-T-END pages=63 dma_pages=0 stale_dma=0 stale_cpu=0 failed=0 dma=0 vcpus=$(getconf _NPROCESSORS_ONLN) leaked=63" > "$R/torture-dom0"
printf '%s\n' "$(xstats 0 0 0)" "$(xstats 31 1 30)" "$(xstats 63 3 60)" > "$R/torture-xen"
# kit_run WRAP: a run with a ring of 60 lines of an earlier boot that
# loses its first WRAP lines during the torture.
kit_run() {
    seq 1 60 | sed 's/^/(XEN) an earlier line /' > "$R/xl-dmesg"
    echo "$1" > "$R/wrap"
    : > "$R/dev/kmsg"
    rm -rf "$t/run"; mkdir -p "$t/run"
    "$kit/pg-kit" run --reps 2 --out "$t/run" > "$t/out" 2>&1
}
ln -sf ../xl-dmesg "$R/dev/port"
kit_run 40 && python3 - "$t"/run/patched-*.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["torture"]["pass"], d["torture"]
assert [c["oracle_counts"]["releases"] for c in d["torture"]["cases"]] == [31, 32]
assert len(d["unmap"]) == 2, d["unmap"]
PY
rc=$?; [ $rc = 0 ] || cat "$t/out"
pg_result $rc "run: the torture's log of Xen cut at its marker, after the ring wrapped"
python3 - "$t"/run/patched-*.json <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["host"]
assert (h["iommu"], h["hap"], h["iommu_pt_shared"]) == ("vt-d", "ept", True), h
PY
pg_result $? "run: IOMMU vt-d and shared tables from the CPU and virt_caps, Xen's boot lines gone"
kit_run 1000; rc=$?
[ $rc != 0 ] && grep -q "pg-kit: Xen's log of the torture is lost: xl dmesg no longer has its marker pg-kit-torture-" "$t/out" &&
    grep -q "torture: FAILED" "$t/out" &&
    python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["torture"]["pass"])' "$t"/run/patched-*.json
pg_result $? "run: a ring that lost the torture's marker fails the torture, naming the cause, and run exits non-zero"
rm "$R/dev/port"; touch "$R/dev/port"
kit_run 0
[ $? != 0 ] && grep -q "cannot mark Xen's log" "$t/out" && [ ! -e "$t/run/pg-kit-work/gntpg" ]
pg_result $? "run refuses the torture, before the workload, when Xen's log cannot be marked"
rm -rf "${R:?}/dev" "${R:?}/lib" "$P/cpuinfo" "$bin"/{make,insmod,dmesg,gcc,rmmod}

# runlog.py: the unmap table and JSON from two runs of the workload, the
# torture's verdict from its log; a run cut short is an error.
L=$t/runlog
mkdir -p "$L"
for i in 1 2; do
    echo "PG-START version=1 perfc=40"
    for n in 1 32; do
        echo "PG-END n=$n phase=map hypercalls=1"
        echo "PG-END n=$n phase=unmap hypercalls=1 unmap_ns=$((n * 1000 + i * 100)) pg_iotlb_page=1 pg_iotlb_domain=0 pg_iotlb_global=0 pg_iotlb_pages=$n pg_iotlb_wait=1 pg_p2m_tlb_flush=1 pg_flush_ipi=$i"
    done
    echo PG-DONE
done > "$L/log"
# The torture's log as pg-kit run writes it: dom0's kernel log from the
# run's marker, then Xen's.  The oracle's totals come before the first
# case and before each case's result, as gntt.c asks for them.
printf '%s\n' "[ 0.9] pg-kit-torture-1-2-3" "$(tcase c31 31)" "$(tcase c32 32)" \
    "[ 2.0] PG-T-END pages=63 dma_pages=0 stale_dma=0 stale_cpu=0 failed=0 dma=0 vcpus=2 leaked=63" > "$L/tdom0"
s0=$(xstats 0 0 0) s1=$(xstats 31 1 30) s2=$(xstats 63 3 60)
printf '%s\n' "(d0) pg-kit-torture-1-2-3" "$s0" "$s1" "$s2" > "$L/txen"
cat "$L/tdom0" "$L/txen" > "$L/tlog"
runlog() { python3 "$kit/runlog.py" --build patched --config debug \
    --manifest "$kit/MANIFEST.json" --iommu vt-d --hap ept --shared true \
    --cpus 8 --vcpus 2 --reps 2 --out "$L" "$@"; }
runlog --torture "$L/tlog" "$L/log" > "$t/out" 2>&1 &&
    grep -q "^  contig.   32    1   0   1.0    1    1    1      32.2 [*]$" "$t/out" &&
    grep -q "2/2 cases passed, 63 pages, 0 oracle reports, 60 flushes with the domain dirty on 2+ CPUs" "$t/out" &&
    python3 - "$L"/patched-*.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
u = {(r["n"], r["stride"]): r for r in d["unmap"]}
assert d["format"] == "pg-kit-run/1" and d["build"]["build_id"] == "c1"
assert u[(32, 1)]["counts"]["pages"] == 32 and u[(32, 1)]["counts_vary"]
assert u[(32, 1)]["us"] == [32.1, 32.2] and d["torture"]["pass"]
c = {x["case"]: x["oracle_counts"] for x in d["torture"]["cases"]}
assert c["c31"]["releases"] == 31 and c["c31"]["dirty2"] == 30, c
assert c["c32"]["releases"] == 32 and c["c32"]["dirty1"] == 2, c
PY
pg_result $? "runlog: the table, the JSON, counts that vary marked, the torture passed with the oracle's counts per case"
# torture_fails WHAT PATTERN: runlog writes the run of $L/t, whose
# torture failed, names the cause and exits non-zero.
torture_fails() {
    rm -f "$L"/patched-*.json
    ! runlog --torture "$L/t" "$L/log" > "$t/out" 2>&1 && grep -qF -- "$2" "$t/out" &&
        grep -q "runlog: error: the torture failed" "$t/out" &&
        grep -q "torture: FAILED" "$t/out" &&
        python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["torture"]["pass"])' "$L"/patched-*.json
    local rc=$?; [ $rc = 0 ] || cat "$t/out"; pg_result $rc "runlog: the torture fails $1"
}
{ cat "$L/tlog"; echo "(XEN) pg-oracle: released gfn 1 before its flush"; } > "$L/t"
torture_fails "on an oracle report" "2/2 cases passed, 63 pages, 1 oracle reports"
cp "$L/tdom0" "$L/t"
torture_fails "without Xen's log (no oracle totals at all)" \
    "0 lines of the oracle's totals (pg-oracle-stats) for 2 cases, 3 expected"
printf '%s\n' "(d0) pg-kit-torture-1-2-3" "$s1" "$s2" | cat "$L/tdom0" - > "$L/t"
torture_fails "without the oracle's totals before the first case" \
    "2 lines of the oracle's totals (pg-oracle-stats) for 2 cases, 3 expected"
printf '%s\n' "(d0) pg-kit-torture-1-2-3" "$s0" "$s2" | cat "$L/tdom0" - > "$L/t"
torture_fails "without the oracle's totals after a case" \
    "2 lines of the oracle's totals (pg-oracle-stats) for 2 cases, 3 expected"
sed 's/ dirty4=0 / /' "$L/tlog" > "$L/t"
torture_fails "on a line of the oracle's totals without a key" "pg-oracle-stats without dirty4"
sed 's/ pt_queued=0 / /' "$L/tlog" > "$L/t"
torture_fails "on a line of the oracle's totals without a later oracle patch's key" \
    "pg-oracle-stats without pt_queued"
printf '%s\n' "(d0) pg-kit-torture-1-2-3" "$s0" "$(xstats 31 31 0)" "$(xstats 63 63 0)" |
    cat "$L/tdom0" - > "$L/t"
torture_fails "when no flush found the domain dirty on 2+ CPUs" \
    "no case flushed while the domain was dirty on 2 or more CPUs"
printf '%s\n' "(d0) pg-kit-torture-1-2-3" "$s0" "$s1" "$(xstats 63 3 60 1)" |
    cat "$L/tdom0" - > "$L/t"
torture_fails "on a violation the oracle counted but did not print" \
    "2/2 cases passed, 63 pages, 1 oracle reports"
printf '%s\n' "(d0) pg-kit-torture-1-2-3" "$s0" "$s2" "$s1" | cat "$L/tdom0" - > "$L/t"
torture_fails "when the oracle's totals go down" "the oracle's totals went down in case c32"
{ cat "$L/tdom0"; echo "pg-kit: Xen's log of the torture is lost: xl dmesg no longer has its marker"; } > "$L/t"
torture_fails "when pg-kit lost Xen's log" "pg-kit: Xen's log of the torture is lost"
while IFS='|' read -r _ line; do
    { cat "$L/tdom0"; echo "$line"; cat "$L/txen"; } > "$L/t"
    torture_fails "on $line (unit/oopses.txt)" "$line"
done < <(grep -v "^#" "$here/../oopses.txt")
# The torture's completeness rule (harness/problems.py, incomplete()).
sed 's/ failed=0 / failed=1 /' "$L/tlog" > "$L/t"
torture_fails "on failed=1 without a failed case line (a case the module rejected)" \
    "PG-T-END failed=1, but 0 case lines failed"
{ cat "$L/tdom0"; echo "[ 1.9] PG-T error: bad case c33"; cat "$L/txen"; } |
    sed 's/ failed=0 / failed=1 /' > "$L/t"
torture_fails "on a case the module rejected (PG-T error, failed=1)" \
    "PG-T-END failed=1, but 0 case lines failed"
printf '%s\n' "$(tcase c31 31)" "[ 2.0] PG-T-END pages=31 dma_pages=0 stale_dma=0 stale_cpu=0 failed=0 dma=0 vcpus=2 leaked=31" \
    "(d0) pg-kit-torture-1-2-3" "$s0" "$s1" > "$L/t"
torture_fails "when a case asked for did not run" "cases run c31, requested c31.c32; missing: c32"
cp "$kit/MANIFEST.json" "$L/manifest"
python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); del m["torture_cases"]; json.dump(m, open(sys.argv[1], "w"))' "$kit/MANIFEST.json"
cp "$L/tlog" "$L/t"
torture_fails "when the manifest names no cases" "the cases requested are unknown"
cp "$L/manifest" "$kit/MANIFEST.json"
sed 's/ vcpus=2 / vcpus=1 /' "$L/tlog" > "$L/t"
torture_fails "on fewer vCPUs online than dom0 has" "1 vCPUs online, booted with 2"
sed 's/ leaked=63//' "$L/tlog" > "$L/t"
torture_fails "on a PG-T-END that does not parse" "a PG-T-END that does not parse"
grep -v "PG-T-END" "$L/tlog" > "$L/t"
torture_fails "without PG-T-END" "the module did not finish"
python3 -B - "$src" "$here/../../harness" <<'PY'
import importlib.util, sys
sys.path[:0] = sys.argv[1:]
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
kit = load(sys.argv[1] + "/runlog.py", "runlog")
pg = load(sys.argv[2] + "/torture-report.py", "torture_report")
keys = pg.STAT_KEYS + getattr(pg, "LATER_KEYS", ())
assert set(kit.STAT_KEYS) == set(keys), (kit.STAT_KEYS, keys)
PY
pg_result $? "runlog requires every key of the oracle's totals torture-report.py reads"
python3 -B - "$here/../.." <<'PY'
import ast, os, sys
root = sys.argv[1]
tree = ast.parse(open(f"{root}/kit/runlog.py").read())
mods = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
mods |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
ours = [f"{d}/{m}.py" for m in mods for d in ("kit", "harness")
        if os.path.exists(f"{root}/{d}/{m}.py")]
kit_sh = open(f"{root}/harness/kit.sh").read()
assert "harness/problems.py" in ours, ours
missing = [f for f in ours if f'"$PG_ROOT/{f}"' not in kit_sh]
assert not missing, f"kit.sh does not pack {missing}"
PY
pg_result $? "kit.sh packs every module of the project runlog.py imports (the kit above holds them)"
head -n -1 "$L/log" > "$L/cut"
! runlog "$L/cut" > "$t/out" 2>&1 && grep -q "2 complete runs expected" "$t/out"
pg_result $? "runlog: a run cut short is an error"

# runlog.py --netback: per stream count the Gbit/s of each repetition and
# the flushes per MB (IOTLB invalidations and p2m flushes) over them.
for rep in 1 2; do
    for s in 1 4; do
        echo "NB-RUN rep=$rep dir=domU-dom0 streams=$s wall=10.2 bytes=$((s * 1000000000)) secs=10.0 bps=$((s * 800000000 + rep * 20000000)) retrans=0 hc_grant_table_op=9 pg_flush_ipi=0 pg_iotlb_domain=1 pg_iotlb_global=0 pg_iotlb_page=$((s * 100 - 1)) pg_iotlb_pages=7 pg_iotlb_wait=7 pg_p2m_tlb_flush=$s"
    done
done > "$L/nb"
echo NB-DONE >> "$L/nb"
rm -f "$L"/patched-*.json
runlog --netback "$L/nb" > "$t/out" 2>&1 &&
    grep -q "domU to dom0,  4 streams:   3.23 Gbit/s, 0.1 flushes per MB" "$t/out" &&
    python3 - "$L"/patched-*.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
nb = {r["streams"]: r for r in d["netback"]}
assert d["unmap"] == [] and sorted(nb) == [1, 4], d
assert nb[1]["gbps"] == [0.82, 0.84] and nb[1]["flushes_per_mb"] == 0.101
assert nb[4]["gbps"] == [3.22, 3.24] and nb[4]["flushes_per_mb"] == 0.101
PY
pg_result $? "runlog: netback rows, Gbit/s per repetition, flushes per MB"
sed 's/ hc_grant_table_op=.*//' "$L/nb" > "$L/nb-release"
rm -f "$L"/patched-*.json
runlog --netback "$L/nb-release" > "$t/out" 2>&1 &&
    python3 -c 'import json, sys; assert all(r["flushes_per_mb"] == -1 for r in json.load(open(sys.argv[1]))["netback"])' "$L"/patched-*.json
pg_result $? "runlog: netback without Xen's counters (a release build): flushes -1"
grep -v NB-DONE "$L/nb" > "$L/nb-cut"
! runlog --netback "$L/nb-cut" > "$t/out" 2>&1 && grep -q "did not finish" "$t/out"
pg_result $? "runlog: a netback run without NB-DONE is an error"
{ cat "$L/nb"; echo "NB-ERROR xl create pgkit-u1 rc=1"; } > "$L/nb-err"
! runlog --netback "$L/nb-err" > "$t/out" 2>&1 && grep -q "xl create pgkit-u1" "$t/out"
pg_result $? "runlog: an NB-ERROR line is an error"
head -n 3 "$L/nb" > "$L/nb-short"; echo NB-DONE >> "$L/nb-short"
! runlog --netback "$L/nb-short" > "$t/out" 2>&1 && grep -q "4 streams: 1 of 2 runs" "$t/out"
pg_result $? "runlog: a stream count missing a repetition is an error"

# Uninstall.
"$kit/pg-kit" uninstall > "$t/out" 2>&1 && cmp -s "$cfg" "$t/grub.cfg.orig" &&
    [ ! -e "$R/boot/pg-kit" ] && [ ! -e "$R/etc/grub.d/42_pg-kit" ] &&
    [ ! -e "$R/var/lib/pg-kit" ]
pg_result $? "uninstall removes every file and leaves grub.cfg as before"
! "$kit/pg-kit" uninstall > "$t/out" 2>&1 && grep -q "not installed" "$t/out"
pg_result $? "uninstall refuses when nothing is installed"

# Install: refusals.
refuse_install() { # WHAT PATTERN
    rm -rf "$R/var/lib/pg-kit"
    ! "$kit/pg-kit" install > "$t/out" 2>&1 && grep -q "$2" "$t/out" &&
        [ ! -e "$R/boot/pg-kit" ]
    local rc=$?; [ $rc = 0 ] || cat "$t/out"; pg_result $rc "install refuses $1"
}
printf 'ID=ubuntu\nVERSION_ID="24.04"\n' > "$R/etc/os-release"
refuse_install "a host that is not Debian 12 or 13" "needs Debian 12 or 13"
printf 'ID=debian\nVERSION_ID="13"\n' > "$R/etc/os-release"
touch "$R/no-xen"
refuse_install "a host without Debian's Xen" "Debian's Xen is not installed"
rm "$R/no-xen"
echo tampered > "$kit/xen-patched.gz"
refuse_install "a hypervisor that does not match the manifest" "xen-patched.gz does not match"
echo patched > "$kit/xen-patched.gz"
rm -rf "$R/var/lib/pg-kit"

# Negative control: an installer which makes its entry the default.
sed 's|^    install -m 0755 "$kit/grub-entries" "$grubd"$|&; echo GRUB_DEFAULT=pg-kit-patched >> "$R/etc/default/grub"|' \
    "$kit/pg-kit" > "$kit/pg-kit-bad"
chmod +x "$kit/pg-kit-bad"
! grep -q "GRUB_DEFAULT=pg-kit" "$kit/pg-kit" && grep -q "GRUB_DEFAULT=pg-kit" "$kit/pg-kit-bad" &&
    ! "$kit/pg-kit-bad" install > "$t/out" 2>&1 && grep -q "GRUB settings changed" "$t/out"
pg_result $? "mutant: an installer changing GRUB's default is caught"

pg_tally
