#!/usr/bin/env python3
"""dom0 side of the netback benchmark: create two PVH domUs on xenbr0,
run iperf3 in three directions with 1, 2, 4 streams, and print one
NB-RUN line per run with the bytes received and the deltas of Xen's
pg_* performance counters (read with xenperf) over the run.

Arguments (from the dom0 kernel command line, bench.args=, '+' for ' '):
  --time T  --reps R  --streams 1:2:4  --dirs domU-dom0:domU-domU:dom0-domU
  --domu-mem MB  --kernel PATH  --ramdisk PATH  --label LABEL
  --destroy 0|1 (the last step: u1 destroyed while netback maps its grants)
  --frames 0|1 (record the frames of netback's unmap batches in the first
               repetition's domU-dom0 runs: frames_ctl)
  --counters 0|1 (0: a build without Xen's counters, deltas left out)
  --bridge NAME (the bridge of the domUs' vifs, 10.0.0.1/24 in dom0)
  --name-prefix P (the domUs are named Pu1 and Pu2)
"""
import argparse
import ctypes
import fcntl
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

U1, U2 = "10.0.0.2", "10.0.0.3"
USE_COUNTERS = True
U1_NAME, U2_NAME = "u1", "u2"


def say(line):
    sys.stdout.write("NB-" + line + "\n")
    sys.stdout.flush()


def sh(cmd, timeout=120):
    return subprocess.run(cmd, shell=isinstance(cmd, str), timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def counters():
    """Xen's pg_* counters (summed over pCPUs) and the grant-table
    hypercall count, from xenperf; none without --counters 1."""
    if not USE_COUNTERS:
        return {}
    r = sh(["xenperf", "-p"], timeout=60)
    if r.returncode:
        raise RuntimeError("xenperf failed: " + r.stdout[-300:])
    c = {}
    in_hc = False
    for line in r.stdout.splitlines():
        m = re.match(r"^(\S+)\s+T=\s*(\d+)", line)
        if m:
            c[m.group(1)] = int(m.group(2))
            in_hc = m.group(1) == "hypercalls"
            continue
        if in_hc:
            m = re.match(r"^\s*(\S+)\s+(\d+)\s*$", line)
            if m and m.group(1) == "grant_table_op":
                c["hc_grant_table_op"] = int(m.group(2))
    return c


# _IOC(_IOC_NONE, 'P', 0, sizeof(struct privcmd_hypercall)): op, 5 args.
PRIVCMD_HYPERCALL = 0x305000
GRANT_TABLE_OP, GNTTABOP_QUERY_SIZE = 20, 6
FRAMES_ARM, FRAMES_DUMP = 0x7ffa, 0x7ff9


def frames_ctl(domid):
    """GNTTABOP_query_size for a test-only domain ID of the instrumented
    hypervisor: FRAMES_ARM starts recording the frames of every unmap
    batch, FRAMES_DUMP prints them on Xen's console ("pg-frames: ...")
    and stops."""
    q = ctypes.create_string_buffer(struct.pack("<HxxIIhxx", domid, 0, 0, 0))
    hc = struct.pack("<6Q", GRANT_TABLE_OP, GNTTABOP_QUERY_SIZE,
                     ctypes.addressof(q), 1, 0, 0)
    fd = os.open("/dev/xen/privcmd", os.O_RDWR)
    try:
        fcntl.ioctl(fd, PRIVCMD_HYPERCALL, hc)
    finally:
        os.close(fd)


def deltas(c0, c1):
    """What each counter of interest (Xen's pg_* counters, grant-table
    hypercalls) grew by from c0 to c1; Xen's counters wrap at 2^32."""
    return {k: (c1[k] - c0.get(k, 0)) % (1 << 32) for k in sorted(c1)
            if k.startswith("pg_") or k == "hc_grant_table_op"}


def kvs(d):
    return " ".join(f"{k}={v}" for k, v in d.items())


def start_domu(name, ip, mac, a):
    """Start 'xl -vvv create' for one domU; returns the running process."""
    cfg = f"/run/bench/{name}.cfg"
    tso = f" bench.tso={a.tso_segs}" if a.tso_segs else ""
    with open(cfg, "w") as f:
        f.write(f'name = "{name}"\ntype = "pvh"\n'
                f'kernel = "{a.kernel}"\nramdisk = "{a.ramdisk}"\n'
                f'cmdline = "console=hvc0 loglevel=4 bench.ip={ip}{tso}"\n'
                f'memory = {a.domu_mem}\nvcpus = 1\n'
                f'vif = [ "bridge={a.bridge},mac={mac},script={a.vif_script}" ]\n'
                'on_crash = "destroy"\n')
    p = subprocess.Popen(["xl", "-vvv", "create", cfg], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    return p


def finish_domu(name, p, t0):
    """Wait for xl create; keep its log with the time of every line and
    report the longest pauses between lines (where creation spends time)."""
    lines, last, gaps = [], t0, []
    for line in p.stdout:
        now = time.time()
        prev = lines[-1].split(None, 1)[-1][:140] if lines else "(start)"
        gaps.append((now - last, len(lines), prev + " ==> " + line.strip()[:140]))
        lines.append(f"{now - t0:8.2f} {line.rstrip()}")
        last = now
    rc = p.wait()
    open(f"/var/log/xen/xl-create-{name}.log", "w").write("\n".join(lines) + "\n")
    for g, n, what in sorted(gaps, reverse=True)[:4]:
        say(f"XLGAP {name} {g:.1f}s at line {n}: {what}")
    if rc:
        say(f"ERROR xl create {name} rc={rc}: " + " | ".join(lines[-6:]))
        return False
    say(f"DOMU {name} created in {time.time() - t0:.1f}s")
    return True


def wait_port(ip, port, limit):
    t0 = time.time()
    while time.time() - t0 < limit:
        try:
            with socket.create_connection((ip, port), timeout=3):
                return time.time() - t0
        except OSError:
            time.sleep(1)
    return None


def remote(ip, cmd, timeout):
    """Run cmd in a domU through its busybox 'nc -e /bin/sh' on port 7000."""
    with socket.create_connection((ip, 7000), timeout=30) as s:
        s.settimeout(timeout)
        s.sendall((cmd + "\nexit\n").encode())
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    return out.decode(errors="replace")


def iperf(direction, streams, a):
    base = f"iperf3 -t {a.time} -P {streams} -i 0 --json"
    tmo = a.time * 3 + 120
    if direction == "domU-dom0":        # u1 transmits, dom0 receives
        out = sh(f"{base} -c {U1} -R", timeout=tmo).stdout
    elif direction == "dom0-domU":      # dom0 transmits, u1 receives
        out = sh(f"{base} -c {U1}", timeout=tmo).stdout
    else:                               # u1 transmits, u2 receives
        out = remote(U1, f"{base} -c {U2} 2>&1", timeout=tmo)
    i = out.find("{")
    j = json.loads(out[i:])
    if "error" in j:
        raise RuntimeError("iperf3: " + j["error"])
    e = j["end"]
    rx, tx = e["sum_received"], e["sum_sent"]
    cpu = e.get("cpu_utilization_percent", {})
    return dict(bytes=rx["bytes"], secs=round(rx["seconds"], 3),
                bps=int(rx["bits_per_second"]),
                retrans=tx.get("retransmits", -1),
                cpu_host=round(cpu.get("host_total", -1), 1),
                cpu_remote=round(cpu.get("remote_total", -1), 1))


def unmap_cost(a):
    """Time of one grant unmap batch in this machine: the proving ground's
    gntpg maps N of dom0's own grants and unmaps them in one hypercall
    batch; the PG-BEGIN/PG-END lines of its unmap phase are timed as they
    arrive.  base issues 2 flushes per page there, patched 2 per 32."""
    exe = "/usr/local/lib/bench/gntpg"
    if not a.unmap_rounds or not os.path.exists(exe):
        return
    try:
        with open("/sys/module/xen_gntalloc/parameters/limit", "w") as f:
            f.write("65536")
    except OSError:
        pass
    rounds = a.unmap_rounds.split(":")
    p = subprocess.Popen([exe] + rounds, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    t_begin = None
    for line in p.stdout:
        now = time.time()
        if line.startswith("PG-BEGIN") and "phase=unmap" in line:
            t_begin = now
        elif line.startswith("PG-END") and "phase=unmap" in line and t_begin:
            kv = line.split()[1:]
            say(f"UNMAP ms={1e3 * (now - t_begin):.2f} " + " ".join(kv))
            t_begin = None
        elif line.startswith("PG-ERROR"):
            say("ERROR gntpg: " + line.strip())
    p.wait()


def destroy_test():
    """A domU granter destroyed while dom0 maps its grants: u1 transmits
    to dom0 (netback maps u1's grants for every packet) when 'xl destroy'
    kills it.  The domain must go away (a domain whose pages are still
    mapped by dom0 stays behind as a zombie, "(null)" in xl list, until
    they are unmapped) and dom0 must keep working.  Xen's console is
    checked by the report (assertions, the release-order oracle)."""
    p = subprocess.Popen(["iperf3", "-t", "60", "-P", "4", "-c", U1, "-R"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(5)
    c0 = counters()
    t0 = time.time()
    r = sh(["xl", "destroy", U1_NAME], timeout=300)
    gone, left = None, ""
    while time.time() - t0 < 300:
        rows = [ln.split()[0] for ln in sh(["xl", "list"]).stdout.splitlines()[1:]
                if ln.split()]
        left = ",".join(n for n in rows if n in (U1_NAME, "(null)"))
        if not left:
            gone = time.time() - t0
            break
        time.sleep(1)
    p.kill()
    p.wait()
    c1 = counters()
    if r.returncode or gone is None:
        say(f"ERROR destroy: xl destroy rc={r.returncode}, still listed "
            f"after 300s: {left} | {r.stdout.strip()[-200:]}")
        return
    say(f"DESTROY ok=1 gone_secs={gone:.1f} {kvs(deltas(c0, c1))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--streams", default="1:2:4")
    ap.add_argument("--dirs", default="domU-dom0:domU-domU:dom0-domU")
    ap.add_argument("--domu-mem", type=int, default=256)
    ap.add_argument("--kernel", default="/var/lib/bench/vmlinuz")
    ap.add_argument("--ramdisk", default="/var/lib/bench/domU-initrd.gz")
    ap.add_argument("--label", default="")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--unmap-rounds", default="256:256:256")
    ap.add_argument("--vif-script", default="/usr/local/lib/bench/vif-bench.sh",
                    help="vif hotplug script (vif-bridge: Debian's)")
    ap.add_argument("--destroy", type=int, default=1,
                    help="end with the destroy test (see destroy_test)")
    ap.add_argument("--frames", type=int, default=1,
                    help="record netback's unmapped frames (frames_ctl)")
    ap.add_argument("--tso-segs", type=int, default=44,
                    help="net.ipv4.tcp_min_tso_segs in dom0 and the domUs")
    ap.add_argument("--counters", type=int, default=1)
    ap.add_argument("--bridge", default="xenbr0")
    ap.add_argument("--name-prefix", default="")
    a = ap.parse_args()
    global USE_COUNTERS, U1_NAME, U2_NAME
    USE_COUNTERS = bool(a.counters)
    U1_NAME, U2_NAME = a.name_prefix + "u1", a.name_prefix + "u2"
    streams = [int(s) for s in a.streams.split(":")]
    dirs = a.dirs.split(":")
    os.makedirs("/run/bench", exist_ok=True)
    if a.tso_segs:
        with open("/proc/sys/net/ipv4/tcp_min_tso_segs", "w") as f:
            f.write(str(a.tso_segs))
    say(f"PLAN label={a.label} time={a.time} reps={a.reps} "
        f"streams={a.streams} dirs={a.dirs} tso_segs={a.tso_segs}")
    try:
        counters()
    except Exception as ex:     # noqa: BLE001
        say(f"ERROR {ex}")
        return 1

    need_u2 = "domU-domU" in dirs
    c0 = counters()
    t0 = time.time()
    doms = [(U1_NAME, U1, "00:16:3e:00:00:02")]
    if need_u2:
        doms.append((U2_NAME, U2, "00:16:3e:00:00:03"))
    # Both at once: each xl spends most of its time in one dom0 vCPU.
    ok = {}
    threads = [threading.Thread(target=lambda n=d[0], p=start_domu(*d, a):
                                ok.__setitem__(n, finish_domu(n, p, t0)))
               for d in doms]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not all(ok.values()) or len(ok) != len(doms):
        return 1
    c1 = counters()
    say(f"CREATE secs={time.time() - t0:.1f} {kvs(deltas(c0, c1))}")
    for ip in [U1] + ([U2] if need_u2 else []):
        w = wait_port(ip, 5201, 600)
        if w is None:
            say(f"ERROR domU {ip} did not answer on port 5201 within 600s")
            return 1
        say(f"READY {ip} after {w:.1f}s")
    for line in sh(["xl", "list"]).stdout.splitlines():
        say("XL " + line)

    if a.warmup:
        for d in dirs:
            try:
                a2 = argparse.Namespace(**vars(a))
                a2.time = a.warmup
                r = iperf(d, 1, a2)
                say(f"WARMUP dir={d} bps={r['bps']}")
            except Exception as ex:     # noqa: BLE001
                say(f"ERROR warmup {d}: {ex}")

    rc = 0
    for rep in range(1, a.reps + 1):
        for d in dirs:
            for s in streams:
                say(f"BEGIN rep={rep} dir={d} streams={s}")
                record = a.frames and rep == 1 and d == "domU-dom0"
                try:
                    if record:
                        frames_ctl(FRAMES_ARM)
                except OSError as ex:
                    say(f"ERROR frames: {ex}")
                    record = False
                r = None
                try:
                    c0 = counters()
                    t0 = time.time()
                    r = iperf(d, s, a)
                    wall = time.time() - t0
                    c1 = counters()
                except Exception as ex:     # noqa: BLE001
                    say(f"ERROR rep={rep} dir={d} streams={s}: {ex}")
                if record:
                    say(f"FRAMES rep={rep} dir={d} streams={s}")
                    try:
                        frames_ctl(FRAMES_DUMP)
                    except OSError as ex:
                        say(f"ERROR frames: {ex}")
                if r is None:
                    rc = 1
                    continue
                say(f"RUN rep={rep} dir={d} streams={s} wall={wall:.1f} "
                    f"{kvs(r)} {kvs(deltas(c0, c1))}")
    try:
        unmap_cost(a)
    except Exception as ex:     # noqa: BLE001
        say(f"ERROR unmap timing: {ex}")
    if a.destroy and "domU-dom0" in dirs:
        try:
            destroy_test()
        except Exception as ex:     # noqa: BLE001
            say(f"ERROR destroy: {ex}")
    for line in sh("xl dmesg | tail -n 20").stdout.splitlines():
        print("xl-dmesg: " + line)
    say("DONE")
    return rc


if __name__ == "__main__":
    sys.exit(main())
