#!/bin/bash
# kit-e2e.sh (make kit-e2e)
# The kit end to end on an emulated host: the netback benchmark's Debian 12
# root file system (harness/bench-mk-image.sh) plus Debian's Xen
# (xen-hypervisor-4.17-amd64), GRUB's tools and a compiler, as a tester's
# host has them (for a staging tree the tree's own tools in place of
# Debian's, as make bench's dom0 has them), on a disk of its own, booted
# three times under the proving ground's QEMU machine with VT-d (one CPU,
# as make bench), each boot running one step of harness/kit-e2e-init.sh
# as PID 1:
#   1. Linux alone (QEMU loads the kernel): pg-kit install, grub-reboot
#   2. GRUB (a BIOS rescue image whose config reads the disk's grub.cfg)
#      boots the entry pg-kit-base: pg-kit run, grub-reboot
#   3. GRUB boots pg-kit-patched: pg-kit run, compare, uninstall
# Then, here: each run's build is the one its GRUB entry names, the
# counts of every unmap round equal those of `make` on VT-d for the same
# tree and build (out/report.json; flush IPIs left out: they depend on
# the CPUs), compare printed the tables, uninstall restored the host.
# A run's counts are its first repetition's, as make boots once: the
# next ones unmap frames the first left behind, whose IOMMU page tables
# may now be freed (domain-wide flushes), on base and patched alike.
# pg-kit's own checks (packages, GRUB's default, the IOMMU, the build)
# run inside.  E2E_RUN_ARGS: pg-kit run's options (default: netback with
# 1 and 4 streams, no torture: the emulated host has no kernel headers).
# Could wrongly pass: GRUB here is loaded from a CD image, not installed
# in the disk's boot sector (grub-install needs a partitioned device).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
pg_qemu

[ -n "${XEN_SRC:-}" ] || "$PG_ROOT/harness/get-tree.sh"
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
desc=$(pg_tree_describe "$tree")
report=$PG_OUT/report.json
python3 - "$report" "$desc" <<'PY' || die "kit-e2e compares with make's counts on VT-d for this tree: run 'PG_IOMMUS=vt-d make' first"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tree"]["describe"] == sys.argv[2]
assert {r["variant"] for r in d["runs"] if r["iommu"] == "vt-d"} >= {"base", "patched"}
PY

"$PG_ROOT/harness/bench-mk-image.sh"
kit_tar=$("$PG_ROOT/harness/kit.sh" | tail -1)
[ -s "$kit_tar" ] || die "make kit gave no tarball"

# The host's root file system: the benchmark's, plus what a tester's host
# has (Debian's Xen, GRUB's tools) and what the kit builds with.
pkgs="xen-hypervisor-4.17-amd64 grub2-common grub-pc-bin gcc make libc6-dev xorriso mtools"
root=$PG_CACHE/kit-e2e/rootfs
mkdir -p "$PG_CACHE/kit-e2e"
if [ "$(cat "$root/.kit-e2e" 2>/dev/null)" != "$pkgs" ]; then
    step "kit-e2e: the host's root file system (+ $pkgs)"
    rm -rf "$root.tmp"
    cp -a "$PG_CACHE/bench/rootfs" "$root.tmp"
    printf '#!/bin/sh\nexit 101\n' > "$root.tmp/usr/sbin/policy-rc.d"
    chmod +x "$root.tmp/usr/sbin/policy-rc.d"
    mount --bind /proc "$root.tmp/proc"
    trap 'umount "$root.tmp/proc" 2>/dev/null || true' EXIT
    { chroot "$root.tmp" apt-get update -q &&
      chroot "$root.tmp" env DEBIAN_FRONTEND=noninteractive \
          apt-get install -y -q --no-install-recommends $pkgs; } \
        > "$PG_CACHE/kit-e2e/apt.log" 2>&1 ||
        die "apt-get in the host's root failed, log: $PG_CACHE/kit-e2e/apt.log"
    umount "$root.tmp/proc"
    trap - EXIT
    rm -f "$root.tmp/usr/sbin/policy-rc.d" "$root.tmp"/var/cache/apt/archives/*.deb
    echo "$pkgs" > "$root.tmp/.kit-e2e"
    rm -rf "$root"
    mv "$root.tmp" "$root"
fi
kver=$(cd "$root/boot" && ls vmlinuz-* | sed 's/^vmlinuz-//' | sort -V | tail -1)

# Debian's toolstack cannot query a hypervisor of another release: a host
# testing another tree runs that tree's tools, as make bench's dom0 does.
tools=
[ "$base" = stable-4.17 ] || tools=$("$PG_ROOT/harness/bench-tools.sh")

# This run's host disk: the kit unpacked in /root/kit, the init, the
# tree's tools unless Debian's are its own, the host's GRUB settings
# (serial console, its own Xen and Linux options:
# iommu=no-sharept as make's boots have it, for an emulated VT-d beside
# an AMD CPU, where Xen 4.17's PVH dom0 otherwise fails vPCI's setup of
# the AHCI disk), GRUB's modules where grub-install would put them.
out=$PG_BUILD/kit-e2e
logs=$PG_OUT/kit-e2e
fs=$out/fs
rm -rf "$out" "$logs"
mkdir -p "$out" "$logs"
step "kit-e2e: the host's disk ($(basename "$kit_tar"))"
cp -a "$root" "$fs"
[ -z "$tools" ] || pg_tools_over_debian "$fs" "$tools"
tar -xzf "$kit_tar" -C "$fs/root"
mv "$fs/root/$(basename "$kit_tar" .tar.gz)" "$fs/root/kit"
install -m 755 "$PG_ROOT/harness/kit-e2e-init.sh" "$fs/usr/local/sbin/pg-kit-e2e"
echo "${E2E_RUN_ARGS:---netback --no-torture --reps 2 --time 5 --streams 1:4}" > "$fs/root/e2e-run-args"
mkdir -p "$fs/boot/grub/i386-pc"
cp "$fs"/usr/lib/grub/i386-pc/*.{mod,lst} "$fs/boot/grub/i386-pc/"
. "$(pg_machine vt-d)"
cat > "$fs/etc/default/grub" <<EOF
GRUB_DEFAULT=0
GRUB_TIMEOUT=1
GRUB_DISTRIBUTOR=Debian
GRUB_TERMINAL=serial
GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
GRUB_DISABLE_OS_PROBER=true
GRUB_CMDLINE_LINUX_DEFAULT=""
GRUB_CMDLINE_LINUX="console=hvc0 fsck.mode=skip init=/usr/local/sbin/pg-kit-e2e"
GRUB_CMDLINE_XEN_DEFAULT="console=com1 com1=115200,8n1 sync_console dom0_mem=1024M,max:1024M dom0_max_vcpus=1 iommu=no-sharept${MACHINE_XEN_ARGS:+ $MACHINE_XEN_ARGS}"
EOF
uuid=6b1e2c3d-4a5f-4e6d-8c7b-9a0f1e2d3c4b
mkfs.ext4 -q -F -L pgkithost -U "$uuid" -d "$fs" "$out/disk.img" 4G ||
    die "mkfs.ext4 -d failed"
rm -rf "$fs"

# GRUB on a CD: find the disk, read its grub.cfg (and grubenv: grub-reboot).
mkdir -p "$root/tmp/pg-iso/boot/grub"
cat > "$root/tmp/pg-iso/boot/grub/grub.cfg" <<EOF
serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
search --no-floppy --fs-uuid --set=root $uuid
set prefix=(\$root)/boot/grub
configfile /boot/grub/grub.cfg
EOF
chroot "$root" grub-mkrescue -o /tmp/pg-grub.iso /tmp/pg-iso > "$logs/grub-mkrescue.log" 2>&1 ||
    die "grub-mkrescue failed, log: $logs/grub-mkrescue.log"
mv "$root/tmp/pg-grub.iso" "$out/grub.iso"
rm -rf "$root/tmp/pg-iso"

# boot NAME STEP QEMU-ARGS...: one boot of the host; its init must print
# E2E-STEP STEP.
boot() {
    local name=$1 want=$2 log=$logs/$1.log rc
    shift 2
    step "kit-e2e: boot $name"
    set +e
    timeout --kill-after=10 "${E2E_BOOT_TIMEOUT:-2400}" nice -n 5 "$PG_QEMU" \
        -machine q35 -accel tcg,thread=multi -cpu qemu64,+svm,+npt -m 3072 -smp 1 \
        -nodefaults -no-user-config -display none -no-reboot \
        ${MACHINE_DEVICES[@]+"${MACHINE_DEVICES[@]}"} \
        -drive file="$out/disk.img",format=raw,if=none,id=root,cache=unsafe \
        -device ide-hd,drive=root,bus=ide.0 \
        -chardev stdio,id=ser0,signal=off -serial chardev:ser0 "$@" \
        </dev/null >"$log" 2>&1 &
    pg_watch $! "$log" "${E2E_STALL:-900}"
    rc=$?
    set -e
    tr -d '\r' < "$log" > "$log.txt"
    if grep -q '^E2E-ERROR' "$log.txt" || ! grep -q "^E2E-STEP $want\$" "$log.txt"; then
        grep -E '^E2E-|pg-kit: error|Panic|Assertion' "$log.txt" | tail -n 8 >&2 || true
        die "kit-e2e: boot $name did not end with its step (QEMU exit $rc, log: $log)"
    fi
}
boot install installed -kernel "$root/boot/vmlinuz-$kver" \
    -initrd "$root/boot/initrd.img-$kver" \
    -append "root=/dev/sda rw fsck.mode=skip console=ttyS0 init=/usr/local/sbin/pg-kit-e2e"
cd_args=(-drive file="$out/grub.iso",format=raw,if=none,id=cd,readonly=on,media=cdrom
         -device ide-cd,drive=cd,bus=ide.1 -boot order=d)
boot base base "${cd_args[@]}"
boot patched patched "${cd_args[@]}"

# The results the host's console carried.
res=$logs/results
sed -n 's/^E2E-RESULTS //p' "$logs/patched.log.txt" | base64 -d | tar -xz -C "$logs" ||
    die "kit-e2e: no results on the last boot's console"
grep -q "pg-kit: uninstalled; the host's packages and GRUB settings are as before install" \
    "$logs/patched.log.txt" || die "kit-e2e: uninstall did not confirm the host's state"
python3 - "$report" "$res" "$logs/install.log.txt" <<'PY' || die "kit-e2e: the kit's results differ from make's (above)"
import glob, json, sys
report, res, _ = sys.argv[1:]
make = {}
for r in json.load(open(report))["runs"]:
    if r["iommu"] == "vt-d" and r["phase"] == "unmap":
        make[(r["variant"], r["n"], r["stride"])] = {
            "inv": r["xen_iotlb_page"] + r["xen_iotlb_domain"] + r["xen_iotlb_global"],
            "dom": r["xen_iotlb_domain"] + r["xen_iotlb_global"],
            "pages": r["iotlb_pages_covered"], "wait": r["xen_iotlb_wait"],
            "p2m": r["p2m_tlb_flushes"]}
bad = 0
for build in ("base", "patched"):
    files = glob.glob(f"{res}/{build}-*.json")
    assert len(files) == 1, (build, files)
    run = json.load(open(files[0]))
    assert run["build"]["name"] == build, run["build"]
    assert run["host"]["iommu"] == "vt-d", run["host"]
    assert run["netback"], "no netback rows"
    # Every round make ran on this build, each in the kit's run: an empty
    # or short run is a difference, not a pass.
    want = sorted(k for k in make if k[0] == build)
    assert want, f"make's report has no unmap rounds of {build} on vt-d"
    got = {(build, u["n"], u["stride"]) for u in run["unmap"]}
    for key in want:
        if key not in got:
            print(f"  {build:8} N={key[1]:<4} stride={key[2]:<4} in make's "
                  "run, not in the kit's: MISSING")
            bad += 1
    for u in run["unmap"]:
        key = (build, u["n"], u["stride"])
        kit = {k: u["counts"][k] for k in ("inv", "dom", "pages", "wait", "p2m")}
        ok = make.get(key) == kit
        bad += not ok
        print(f"  {build:8} N={u['n']:<4} stride={u['stride']:<4} kit {kit}"
              + ("" if ok else f"  make {make.get(key)} MISMATCH")
              + (" (later repetitions differ)" if u["counts_vary"] else ""))
cmp = open(f"{res}/compare.txt").read()
for want in ("Xen's counters for one unmap", "unmap hypercall time",
             "netback, Gbit/s", "flushes per MB"):
    if want not in cmp:
        print(f"  compare.txt lacks '{want}'")
        bad += 1
sys.exit(1 if bad else 0)
PY
step "kit-e2e: ok: install, GRUB entries pg-kit-base and pg-kit-patched, run, compare, uninstall; counts as make's (results: $res)"
cat "$res/compare.txt"
