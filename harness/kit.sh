#!/bin/bash
# kit.sh (make kit)
# The kit for testers with a real Xen host (kit/README.md): from the tree
# under test, the base and patched hypervisors as make builds them (debug,
# counters, release-order oracle) and both in release without the
# test-only patches (for timing), the dom0 workload's source with the
# tree's public headers, the torture module's source, the netback
# benchmark's dom0 script and domU init, and the host tool
# (kit/pg-kit).  Writes out/kit/<name>/ and out/kit/<name>.tar.gz, where
# <name> is pg-kit-<base>-<tree>; prints the tarball's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -n "${XEN_SRC:-}" ] || "$PG_ROOT/harness/get-tree.sh"
tree=$(pg_tree)
base=$(pg_tree_base "$tree")
[ -n "$(pg_series "$base")" ] || die "no series in patches/$base: no kit"
desc=$(pg_tree_describe "$tree")
name=pg-kit-$base-$(echo "$desc" | tr -c 'A-Za-z0-9.+\n-' '_')
kit=$PG_OUT/kit/$name
step "kit $name: tree $tree"

# NAME VARIANT CONFIG: what each build is called on the host.
builds="base:base:debug patched:patched:debug"
builds="$builds base-release:plain:release patched-release:series:release"
rm -rf "$kit"
mkdir -p "$kit/src/workload" "$kit/src/torture" "$kit/src/xen/include"
manifest=()
for b in $builds; do
    IFS=: read -r bname variant config <<<"$b"
    bin=$("$PG_ROOT/harness/build-xen.sh" "$variant" "$config")
    src=$(dirname "$bin")/src/xen
    [ -s "$src/xen.gz" ] && [ -s "$src/xen-syms" ] ||
        die "$variant ($config): no xen.gz/xen-syms in $src"
    id=$(readelf -n "$src/xen-syms" | awk '/Build ID:/ {print $3; exit}')
    [ -n "$id" ] || die "$variant ($config): xen-syms has no build ID"
    cp "$src/xen.gz" "$kit/xen-$bname.gz"
    manifest+=("$bname" "$config" "$id" \
               "$(sha256sum < "$kit/xen-$bname.gz" | cut -d' ' -f1)")
done

cp "$PG_ROOT/workload/gntpg.c" "$PG_ROOT/workload/Makefile" "$kit/src/workload/"
# (src/xen/include/public: the layout workload/Makefile expects of a tree)
cp -r "$tree/xen/include/public" "$kit/src/xen/include/"
cp "$PG_ROOT/torture/gntt.c" "$PG_ROOT/torture/Kbuild" "$kit/src/torture/"
mkdir -p "$kit/src/netback"
cp "$PG_ROOT"/bench/netback/{dom0-bench.py,domU-init.sh,vif-bench.sh} "$kit/src/netback/"
cp "$PG_ROOT/kit/pg-kit" "$PG_ROOT/kit/grub-entries" "$PG_ROOT/kit/compare.py" \
   "$PG_ROOT/kit/runlog.py" "$PG_ROOT/harness/problems.py" \
   "$PG_ROOT/kit/README.md" "$kit/"
# The rounds of make and the quick torture cases of make check.
rounds=$(sed -n 's/^ROUNDS=${ROUNDS:-"\(.*\)"}$/\1/p' "$PG_ROOT/harness/run.sh")
cases=$(sed -n 's/^quick="\(.*\)"$/\1/p' "$PG_ROOT/harness/torture.sh")
[ -n "$rounds" ] && [ -n "$cases" ] || die "no ROUNDS in run.sh or quick= in torture.sh"
python3 - "$kit/MANIFEST.json" "$base" "$desc" "$(pg_tree_version "$tree")" \
    "$rounds" "$cases" "${manifest[@]}" <<'PY'
import json, sys
out, base, desc, version, rounds, cases, *b = sys.argv[1:]
builds = [dict(zip(("name", "config", "build_id", "sha256"), b[i:i + 4]))
          for i in range(0, len(b), 4)]
for x in builds:
    x["file"] = f"xen-{x['name']}.gz"
    x["counters"] = x["config"] == "debug"
json.dump({"format": "pg-kit/1", "series_base": base, "tree": desc,
           "xen_version": version, "builds": builds,
           # the proving ground's options that are not emulator workarounds
           "xen_args": "dom0=pvh iommu=verbose loglvl=all guest_loglvl=all"
                        " conring_size=4m",
           "rounds": rounds, "torture_cases": cases},
          open(out, "w"), indent=1)
PY
tar -C "$PG_OUT/kit" -czf "$PG_OUT/kit/$name.tar.gz" "$name"
step "kit: $PG_OUT/kit/$name.tar.gz ($(du -sh "$PG_OUT/kit/$name.tar.gz" | cut -f1))" >&2
echo "$PG_OUT/kit/$name.tar.gz"
