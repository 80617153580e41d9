#!/bin/sh
# PID 1 of the kit's emulated host (harness/kit-e2e.sh; init= in the
# host's GRUB_CMDLINE_LINUX).  Does, one step per boot, what a tester does
# by hand (kit/README.md), as root in /root/kit:
#   Linux alone:          pg-kit install, grub-reboot pg-kit-base
#   Xen, pg-kit-base:     pg-kit run, grub-reboot pg-kit-patched
#   Xen, pg-kit-patched:  pg-kit run, compare, uninstall
# and powers off.  The host reads E2E- lines on the console: results as a
# base64 tarball of /root/results at the end.  No systemd here: the Xen
# toolstack is started as the netback benchmark's dom0 starts it.
export PATH=/usr/lib/xen-4.17/bin:/usr/lib/xen/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
say() { echo "E2E-$*"; }
off() { sync; echo o > /proc/sysrq-trigger; sleep 60; }
fail() { say "ERROR $*"; off; }

mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -o remount,rw / || fail "remount / rw"
mkdir -p /run/lock /root/results
cd /root/kit || fail "no /root/kit"

if [ "$(cat /sys/hypervisor/type 2>/dev/null)" != xen ]; then
    say "BOOT linux $(uname -r)"
    ./pg-kit install || fail "install rc=$?"
    grub-reboot pg-kit-base || fail "grub-reboot"
    say "STEP installed"
    off
fi

for m in xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xen-netback bridge; do
    modprobe "$m" || say "NOTE modprobe $m failed"
done
mountpoint -q /proc/xen || mount -t xenfs xenfs /proc/xen || fail "mount xenfs"
mkdir -p /run/xen /run/xenstored /var/lib/xenstored /var/log/xen/console
xenstored --pid-file /run/xenstored.pid || fail "xenstored"
xen-init-dom0 >/dev/null || fail "xen-init-dom0"
xenconsoled --pid-file=/run/xenconsoled.pid --log=guest \
    --log-dir=/var/log/xen/console || say "NOTE xenconsoled failed"
ip link set lo up
say "BOOT xen $(xl info | sed -n 's/^xen_commandline *: //p')"
args=$(cat /root/e2e-run-args)

if [ ! -e /root/e2e-base-done ]; then
    ./pg-kit run --out /root/results $args || fail "run (base) rc=$?"
    touch /root/e2e-base-done
    grub-reboot pg-kit-patched || fail "grub-reboot"
    say "STEP base"
    off
fi

./pg-kit run --out /root/results $args || fail "run (patched) rc=$?"
./pg-kit compare /root/results/base-*.json /root/results/patched-*.json \
    > /root/results/compare.txt || fail "compare rc=$?"
./pg-kit uninstall || fail "uninstall rc=$?"
say "STEP patched"
# One line the kernel must not break into: its messages off the console,
# and the results without the domU's ramdisk and the workload's binary.
dmesg -n 1
say "RESULTS $(tar -C /root --exclude='domU-initrd*' --exclude=gntpg -cz results | base64 -w0)"
say "DONE"
off
