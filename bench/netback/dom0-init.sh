#!/bin/sh
# PID 1 of the netback benchmark's dom0 (init= on the kernel command line;
# Debian's initramfs has mounted the root file system and moved /dev,
# /proc, /sys onto it).  Starts the Xen toolstack by hand (no systemd:
# under emulation every second of boot counts), creates the bridge and
# the two PVH domUs, runs the iperf3 matrix (dom0-bench.py), powers off.
# Marker lines (NB-...) on the console are what the host parses.
# (Debian's 4.17 tools live in /usr/lib/xen-4.17; a tree's own, built by
# harness/bench-tools.sh, in /usr/sbin and /usr/lib/xen/bin.)
export PATH=/usr/lib/xen-4.17/bin:/usr/lib/xen/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
say() { echo "NB-$*"; }
fail() { say "ERROR $*"; finish; }
finish() {
    for f in /var/log/xen/*.log /var/log/xen/console/*.log; do
        [ -s "$f" ] || continue
        echo "---- $f"; tail -n 40 "$f"
    done
    sync
    echo o > /proc/sysrq-trigger 2>/dev/null
    poweroff -f
    sleep 3600
}

mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -o remount,rw / 2>/dev/null
mkdir -p /run/xen /run/xenstored /var/lib/xen /var/lib/xenstored \
         /var/log/xen/console /run/lock
say "INIT dom0 userspace up: $(uname -r), $(nproc) vCPUs, $(awk '/MemTotal/{print $2}' /proc/meminfo) kB"

for m in xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xen-netback bridge; do
    modprobe "$m" || say "ERROR modprobe $m"
done
mountpoint -q /proc/xen || mount -t xenfs xenfs /proc/xen || fail "mount xenfs"

xenstored --pid-file /run/xenstored.pid || fail "xenstored"
xen-init-dom0 >/dev/null || fail "xen-init-dom0"
xenconsoled --pid-file=/run/xenconsoled.pid --log=guest \
    --log-dir=/var/log/xen/console || say "ERROR xenconsoled"
ip link set lo up
# Fixed addresses and static neighbours: under emulation a domU may answer
# ARP later than Linux waits (EHOSTUNREACH); nothing here needs ARP.
ip link add xenbr0 address 02:00:0a:00:00:01 type bridge || fail "bridge"
ip neigh replace 10.0.0.2 lladdr 00:16:3e:00:00:02 dev xenbr0 nud permanent
ip neigh replace 10.0.0.3 lladdr 00:16:3e:00:00:03 dev xenbr0 nud permanent
ip addr add 10.0.0.1/24 dev xenbr0
ip link set xenbr0 up
xl info | grep -E '^(xen_version|xen_changeset|xen_commandline|nr_cpus|total_memory|free_memory)' |
    sed 's/^/NB-XLINFO /'
say "TOOLSTACK up"

args=$(sed -n 's/.*bench\.args=\([^ ]*\).*/\1/p' /proc/cmdline | tr '+' ' ')
python3 /usr/local/lib/bench/dom0-bench.py $args
say "EXIT rc=$?"
finish
