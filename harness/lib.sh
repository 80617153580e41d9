# Shared helpers of the proving ground's scripts.  Source, don't run.
# Paths are relative to the project's root; nothing of the machine is kept.

PG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_CACHE=${PG_CACHE:-$PG_ROOT/cache}
PG_BUILD=${PG_BUILD:-$PG_ROOT/build}
PG_OUT=${PG_OUT:-$PG_ROOT/out}

# The default tree: Debian 12's xen source package (upstream stable-4.17).
PG_DEB_VERSION=4.17.5+72-g01140da4e8-1
PG_DEB_ORIG=xen_4.17.5+72-g01140da4e8.orig.tar.xz
PG_DEB_ORIG_SHA256=53922f4d0a02c577f2ea9d63f65989cd88715779eebeed879ca1d314103ee06e
PG_DEB_TREE=$PG_CACHE/tree/xen-4.17.5+72-g01140da4e8

# The emulator: Debian 12's QEMU, built from its source package with
# Debian's patches and harness/qemu/*.patch by get-qemu.sh.  PG_QEMU
# names another qemu-system-x86_64 (a stock one has the race that
# harness/qemu/ closes: harness/README.md, "QEMU's IGNNE race").
PG_QEMU_DEB_VERSION=1:7.2+dfsg-7+deb12u18
PG_QEMU_SRC_SHA256="6b6bd27b947ec89e40a1d6b26d9c9f3c698ca691da13163e0483f6061bbb20b3  qemu_7.2+dfsg-7+deb12u18.dsc
91aca71520040edc40b8d437aa3004dae614f58e286cf653ee8996c07af2962f  qemu_7.2+dfsg.orig.tar.xz
28a1c86310ee53b6bf1854cffe6f6be6ed29a08db7d05759f8ac57b8d6a6cb2f  qemu_7.2+dfsg-7+deb12u18.debian.tar.xz"
PG_QEMU=${PG_QEMU:-$PG_CACHE/qemu/bin/qemu-system-x86_64}

# The bases this project carries a series for, with their tree versions.
PG_BASES="staging (4.23-unstable) stable-4.17 (4.17.x) stable-4.19 (4.19.x)"

die() { echo "error: $*" >&2; exit 1; }
step() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# pg_qemu: fails unless PG_QEMU is a command (get-qemu.sh checks that
# its build runs; a boot is no place to run QEMU for nothing).
pg_qemu() {
    command -v "$PG_QEMU" >/dev/null ||
        die "no QEMU at $PG_QEMU: run 'make setup' (harness/get-qemu.sh)"
}

# The tree the commands work on: XEN_SRC, else Debian's source package.
pg_tree() {
    if [ -n "${XEN_SRC:-}" ]; then
        [ -f "$XEN_SRC/xen/Makefile" ] ||
            die "XEN_SRC=$XEN_SRC is not a Xen tree (no xen/Makefile)"
        (cd "$XEN_SRC" && pwd)
    else
        [ -f "$PG_DEB_TREE/xen/Makefile" ] ||
            die "default tree missing: run 'make setup' (harness/get-tree.sh)"
        echo "$PG_DEB_TREE"
    fi
}

# Tree version from xen/Makefile, e.g. 4.17.5 or 4.23-unstable.
pg_tree_version() {
    awk '/^export XEN_VERSION /{v=$4} /^export XEN_SUBVERSION /{s=$4}
         /^export XEN_EXTRAVERSION /{e=$4; sub(/\$\(XEN_VENDORVERSION\)/, "", e)}
         END {print v "." s e}' "$1/xen/Makefile"
}

# The base a tree belongs to, or an error naming the supported ones.
pg_tree_base() {
    local v
    v=$(pg_tree_version "$1")
    case "$v" in
    4.23-unstable) echo staging ;;
    4.17.*) echo stable-4.17 ;;
    4.19.*) echo stable-4.19 ;;
    *) die "tree $1 is Xen $v: no series for it; supported bases: $PG_BASES" ;;
    esac
}

# pg_tree_is_git TREE: whether TREE is the top of a git checkout (the
# default tree, unpacked inside this project's own checkout, is not).
pg_tree_is_git() {
    [ "$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)" = \
      "$(cd "$1" && pwd -P)" ]
}

# pg_tree_describe TREE: what TREE is: git describe, plus -dirty-HASH (of
# its changes and untracked files) when it has any; Debian's source
# package by its version.
pg_tree_describe() {
    local d h
    if pg_tree_is_git "$1"; then
        d=$(git -C "$1" describe --always --abbrev=12 2>/dev/null) || return
        [ -n "$(git -C "$1" status --porcelain --untracked-files=all)" ] ||
            { echo "$d"; return; }
        # Changed or untracked files: named by their content, so that a
        # tree edited again is another tree.
        h=$(cd "$1" && { git diff HEAD --binary
                         git ls-files -o --exclude-standard -z |
                             xargs -0 -r sha256sum; } | sha256sum | cut -c1-12)
        echo "$d-dirty-$h"
    else
        echo "debian-src-$PG_DEB_VERSION"
    fi
}

# pg_series BASE: the series' mails in patches/BASE in order, the cover
# letter left out, one per line; nothing when BASE carries no series yet.
pg_series() {
    ls "$PG_ROOT/patches/$1"/0*.patch 2>/dev/null | grep -v '/0000-' || true
}

# pg_start TREE BASE: the preamble of a job booting base and patched: says
# which tree, and when the base has no series, that patched equals base.
pg_start() {
    [ -n "$(pg_series "$2")" ] ||
        echo "note: no series in patches/$2 yet: 'patched' equals 'base'"
    step "tree: $1 (base $2, $(pg_tree_describe "$1"))"
}

# pg_gntpg_dom0 TREE BASE: the dom0 workload (gntpg, built against TREE's
# public headers) and its payload (kernel + initramfs); prints the folder.
pg_gntpg_dom0() {
    local dom0=$PG_BUILD/$2/dom0
    step "building the dom0 workload and payload" >&2
    make -s -C "$PG_ROOT/workload" XEN_SRC="$1" OUT="$dom0" >/dev/null ||
        die "workload build failed"
    "$PG_ROOT/harness/mk-dom0.sh" "$dom0/gntpg" "$dom0" >&2
    echo "$dom0"
}

# pg_torture_dom0 BASE: the torture driver (torture/gntt.c) built for the
# dom0 kernel and its payload; prints the folder.
pg_torture_dom0() {
    local mod d0=$PG_BUILD/$1/dom0-torture
    mod=$("$PG_ROOT/harness/build-gntt.sh") || die "torture driver build failed"
    "$PG_ROOT/harness/mk-dom0.sh" "$PG_ROOT/torture/dom0-run" "$d0" "$mod" >&2
    echo "$d0"
}

# pg_xen_make SRC CONFIG [ARGS...]: make in the Xen tree SRC for CONFIG:
# debug or release (x86_64), arm64 (cross-built with Debian's gcc).
pg_xen_make() {
    local src=$1 config=$2
    shift 2
    case "$config" in
    arm64) make -C "$src/xen" -j"$(nproc)" XEN_TARGET_ARCH=arm64 \
               CROSS_COMPILE=aarch64-linux-gnu- \
               CC="ccache aarch64-linux-gnu-gcc" "$@" ;;
    debug|release) make -C "$src/xen" -j"$(nproc)" CC="ccache gcc" "$@" ;;
    *) die "unknown config $config" ;;
    esac
}

# pg_xen_config SRC CONFIG [perf]: the .config of CONFIG: defconfig, plus
# CONFIG_DEBUG (and EXPERT) unless release, plus perf counters if asked.
pg_xen_config() {
    pg_xen_make "$1" "$2" defconfig || return
    if [ "$2" != release ]; then
        printf 'CONFIG_EXPERT=y\nCONFIG_DEBUG=y\n' >> "$1/xen/.config"
        [ "${3:-}" != perf ] || echo CONFIG_PERF_COUNTERS=y >> "$1/xen/.config"
    fi
    pg_xen_make "$1" "$2" olddefconfig
}

# pg_boot_stuck LOG SECONDS: whether dom0's kernel reported a CPU stuck for
# SECONDS or more (a soft lockup: boot-qemu.sh asks before dom0's init ran,
# where one was seen with every vCPU waiting in stop_machine, its reports
# keeping the console from going silent).
pg_boot_stuck() {
    tr -d '\r' < "$1" | grep -Eo 'soft lockup - CPU#[0-9]+ stuck for [0-9]+s' |
        awk -v s="$2" '$NF + 0 >= s { f = 1 } END { exit !f }'
}

# pg_machine NAME: the settings file of the QEMU machine with IOMMU NAME
# (harness/machines/qemu-NAME: vt-d, amd-vi, none), or an error.
pg_machine() {
    local f=$PG_ROOT/harness/machines/qemu-$1
    [ -n "$1" ] && [ -f "$f" ] ||
        die "unknown IOMMU '$1' ($(cd "$PG_ROOT/harness/machines" &&
                                   ls qemu-* | sed 's/^qemu-//' | xargs))"
    echo "$f"
}

# pg_machine_dma NAME: 1 if edu's DMA goes through an IOMMU there.
pg_machine_dma() {
    local f MACHINE_DMA=0
    f=$(pg_machine "$1") || exit 1
    . "$f"
    echo "$MACHINE_DMA"
}

# pg_boot_inputs XEN DOM0DIR: both there, or a clear error.
pg_boot_inputs() {
    [ -s "$1" ] || die "no hypervisor at $1"
    [ -s "$2/vmlinuz" ] && [ -s "$2/initrd.gz" ] || die "no dom0 payload in $2"
}

# The dom0 kernel: the package linux-image-amd64 depends on, e.g.
# linux-image-6.1.0-57-amd64 (from the host's apt lists).
pg_kernel_pkg() {
    local k
    k=$(apt-cache depends linux-image-amd64 2>/dev/null |
        awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    [ -n "$k" ] || die "cannot resolve linux-image-amd64 (apt-get update?)"
    echo "$k"
}

# Download Debian packages (by name) into cache/debs once; print nothing.
pg_debs() {
    local p
    mkdir -p "$PG_CACHE/debs"
    for p in "$@"; do
        ls "$PG_CACHE/debs/${p}"_*.deb >/dev/null 2>&1 && continue
        step "downloading $p" >&2
        (cd "$PG_CACHE/debs" && apt-get download -q "$p" >/dev/null 2>&1) ||
            die "apt-get download $p failed"
    done
}

# pg_mod_order MODDIR MODULE...: the modules' paths under MODDIR (an
# unpacked lib/modules/<kver>/kernel) in load order, dependencies first
# (read from .modinfo), one per line.
pg_mod_order() {
    local moddir=$1 names=() paths=() m
    shift
    _pg_mod_add() {
        local m=$1 f d
        for d in "${names[@]}"; do [ "$d" = "$m" ] && return 0; done
        f=$(find "$moddir" -name "$m.ko*" | head -1)
        [ -n "$f" ] || die "module $m not in $moddir"
        for d in $(strings -a "$f" | sed -n 's/^depends=//p' | tr ',' ' '); do
            _pg_mod_add "$d"
        done
        names+=("$m")
        paths+=("$f")
    }
    for m in "$@"; do _pg_mod_add "$m"; done
    printf '%s\n' "${paths[@]}"
}

# pg_bg CMD...: run CMD in the background once fewer than PG_JOBS
# (default: the CPUs) of this shell's jobs run; `wait` collects them.  A
# QEMU or Bochs boot keeps about one CPU busy.
pg_bg() {
    while [ "$(jobs -rp | wc -l)" -ge "${PG_JOBS:-$(nproc)}" ]; do
        wait -n || true
    done
    "$@" &
}

# pg_tools_over_debian ROOT TOOLS: the tree's tools (bench-tools.sh's
# DESTDIR) in place of Debian's 4.17 toolstack in the root file system
# ROOT.  Debian's /usr/sbin/xenstored, /usr/bin/vchan-socket-proxy, ...
# are symlinks to one wrapper script: replace them, never write through.
# Its libraries go too: the multiarch folder comes first in ld.so's
# search, and libxenstore.so.4 is both versions' soname.
pg_tools_over_debian() {
    rm -rf "$1/usr/lib/xen-4.17"
    rm -f "$1"/usr/lib/x86_64-linux-gnu/libxen*.so*
    cp -a --remove-destination "$2"/. "$1"/
    chroot "$1" ldconfig
}

# pg_watch PID LOG STALL: wait for the emulator PID, stopping it once LOG
# has had no output for STALL seconds (a hung boot); returns its status.
# PG_WATCH_POLL: seconds between looks (tests).
pg_watch() {
    local pid=$1 log=$2 stall=$3 age
    while kill -0 "$pid" 2>/dev/null; do
        sleep "${PG_WATCH_POLL:-10}"
        age=$(( $(date +%s) - $(stat -c %Y "$log") ))
        if [ "$age" -gt "$stall" ]; then
            echo "error: no console output for ${age}s, stopping QEMU (log: $log)" >&2
            kill "$pid"
            break
        fi
    done
    wait "$pid"
}

# Run a command with a bound on its time; a hang is an error, not a pass.
pg_timeout() {
    local secs=$1; shift
    timeout --kill-after=10 "$secs" "$@"
    local rc=$?
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "error: timed out after ${secs}s: $*" >&2
    return $rc
}

# The unit tests' tally: pg_result RC WHAT prints "ok: WHAT" when RC is 0,
# else "FAIL: WHAT", and counts it; pg_tally prints the counts and fails
# when a test failed.
pass=0 fail=0
pg_result() {
    if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok: $2"
    else fail=$((fail + 1)); echo "FAIL: $2"; fi
}
pg_tally() { echo "$pass passed, $fail failed"; [ "$fail" = 0 ]; }

# pg_mutate [-a] FILE FROM TO [FROM TO]...: each FROM, which must occur in
# FILE exactly once (with -a: at least once, every one replaced), replaced
# by its TO; FILE is left alone when one does not.
pg_mutate() {
    python3 -c 'import sys
a = sys.argv[1:]; every = a[:1] == ["-a"]; a = a[every:]
p = a.pop(0); s = open(p).read()
assert a and len(a) % 2 == 0, "FROM without TO"
for f, t in zip(a[::2], a[1::2]):
    n = s.count(f)
    assert n == 1 or every and n, "%d times: %s" % (n, f)
    s = s.replace(f, t)
open(p, "w").write(s)' "$@"
}

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}
export CCACHE_NOHASHDIR=1
export CCACHE_BASEDIR=$PG_BUILD
