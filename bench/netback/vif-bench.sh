#!/bin/sh
# vif hotplug script of the benchmark's domUs (script= in the vif spec):
# what Debian's vif-bridge does for a bridged vif, in two commands.
# vif-bridge sources half a dozen helpers and calls xenstore-read and
# brctl several times; in emulation under a loaded host it overran
# libxl's 40 s hotplug timeout ("async_exec_timeout: killing execution
# of /etc/xen/scripts/vif-bridge"), and xl create failed.
# libxl runs it with the action as $1 and vif, bridge in the environment.
case "$1" in
online|add)
    ip link set dev "$vif" master "${bridge:-xenbr0}" &&
        ip link set dev "$vif" up ;;
offline|remove)
    ip link set dev "$vif" down 2>/dev/null
    exit 0 ;;
esac
