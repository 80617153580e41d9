#!/bin/busybox sh
# init of the benchmark's PVH domUs: a busybox ramdisk with iperf3 and
# xen-netfront.  The address comes from the command line (bench.ip=).
# Serves iperf3 and a shell on TCP port 7000 (for domU-to-domU runs,
# which dom0 starts in this domU); no persistent state.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp /dev/pts
mount -t devpts devpts /dev/pts
for m in $(cat /mod/order); do insmod /mod/$m.ko || echo "domU: insmod $m failed"; done
ip=$(sed -n 's/.*bench\.ip=\([0-9.]*\).*/\1/p' /proc/cmdline)
# TSO packet size: at emulation speed TCP's autosizing makes 1-2 segment
# packets; at Gbit/s (the hardware) it makes 64 KB ones (see README).
tso=$(sed -n 's/.*bench\.tso=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$tso" ] && echo "$tso" > /proc/sys/net/ipv4/tcp_min_tso_segs
n=0
while ! ip link show eth0 >/dev/null 2>&1 && [ $n -lt 300 ]; do sleep 0.2; n=$((n+1)); done
ip link set lo up
ip addr add "$ip/24" dev eth0
ip link set eth0 up
# Static neighbours (dom0's bridge and the two domUs): see dom0-init.sh.
# busybox's ip has no "neigh replace"; its arp -s makes permanent entries.
arp -i eth0 -s 10.0.0.1 02:00:0a:00:00:01 || echo "domU: arp -s failed"
arp -i eth0 -s 10.0.0.2 00:16:3e:00:00:02 || echo "domU: arp -s failed"
arp -i eth0 -s 10.0.0.3 00:16:3e:00:00:03 || echo "domU: arp -s failed"
iperf3 -s -D
nc -ll -p 7000 -e /bin/sh &
echo "domU $ip up"
while true; do sleep 3600; done
