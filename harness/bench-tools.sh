#!/bin/bash
# bench-tools.sh
# Build Xen's own tools (xl, libxl, libxc, xenstored, hotplug scripts) from
# the tree (XEN_SRC) with Debian 12's -dev packages, configured with only
# what a PVH dom0 running netback needs: no firmware (PVH domUs need none),
# no stub domains, no QEMU, no OCaml, Go, pygrub, XSM policy, monitors or
# docs.  Installs into build/bench-tools/<base>/dist (DESTDIR) and prints
# that path.  For the default tree the benchmark uses Debian's own
# xen-utils-4.17 (same source) instead.
# Host packages (in setup-host.sh): libyajl-dev (configure fails without
# yajl or json-c), acpica-tools (iasl, for libacpi), uuid-dev, zlib1g-dev,
# libncurses-dev, python3-dev, pkg-config.  Built on staging c447b7308b
# with exactly these.  bench-mk-image.sh puts them into the staging
# benchmark's dom0 image in place of Debian's 4.17 toolstack, whose libxc
# only speaks to a 4.17 hypervisor.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$(pg_tree)
base=$(pg_tree_base "$tree")
work=$PG_BUILD/bench-tools/$base
mkdir -p "$work"
exec 9>"$work/.lock"
flock 9
id="$(pg_tree_describe "$tree") $(pg_tree_version "$tree")"
if [ "$(cat "$work/.stamp" 2>/dev/null)" = "$id" ] && [ -x "$work/dist/usr/sbin/xl" ]; then
    echo "$work/dist"; exit 0
fi
step "building the tools of $base ($id)" >&2
rm -rf "$work/src" "$work/dist"
rsync -a --exclude=.git "$tree"/ "$work/src"/
(
    cd "$work/src"
    ./configure --prefix=/usr --disable-xen --disable-docs --disable-stubdom \
        --disable-ocamltools --disable-seabios --disable-golang --disable-pygrub \
        --disable-xsmpolicy --disable-pvshim --disable-monitors \
        --with-system-qemu=/bin/false --with-xenstored=xenstored
    # ccache through its gcc symlinks: the firmware Makefile re-invokes
    # make with an unquoted $(CC), so CC must be one word.
    [ -d /usr/lib/ccache ] && export PATH=/usr/lib/ccache:$PATH
    nice -n 5 make -j"$(nproc)" dist-tools
) >"$work/build.log" 2>&1 || {
    grep -E 'error:|Error [0-9]|Could not|Unable|No rule' "$work/build.log" | tail -n 10 >&2
    die "tools build failed, log: $work/build.log"
}
cp -a "$work/src/dist/install" "$work/dist"
echo "$id" > "$work/.stamp"
echo "$work/dist"
