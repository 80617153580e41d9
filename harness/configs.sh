#!/bin/bash
# configs.sh: `make configs`: every prefix of the series in x86_64 debug
# and release and arm64 (build-prefixes.sh), then the whole series in
# the configurations of build-configs.sh; writes out/configs.json (the
# tree and each step's verdict) for the run's record.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tree=$(pg_tree) || exit 1
base=$(pg_tree_base "$tree") || exit 1
prefixes=ok configs=ok
"$PG_ROOT/harness/build-prefixes.sh" || prefixes=failed
"$PG_ROOT/harness/build-configs.sh" || configs=failed
mkdir -p "$PG_OUT"
python3 - "$PG_OUT/configs.json" "$base" "$(pg_tree_describe "$tree")" \
    "$(pg_tree_version "$tree")" "$prefixes" "$configs" <<'PY'
import json, sys
out, base, describe, version, prefixes, configs = sys.argv[1:]
json.dump({"tree": {"base": base, "describe": describe,
                    "xen_version": version},
           "builds": {"prefixes (debug, release, arm64)": prefixes,
                      "configs (no-hvm, no-amd-iommu, no-intel-iommu, "
                      "no-grant-table, clang)": configs}},
          open(out, "w"), indent=1)
PY
[ $prefixes = ok ] && [ $configs = ok ]
