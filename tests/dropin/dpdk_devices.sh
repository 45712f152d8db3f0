#!/bin/sh
# Debian's ibv_devices and ibv_devinfo (ibverbs-utils) on our libibverbs.so.1 with the DPDK
# transport selected: the device softrnic0, iWARP, port 1 active, and the node GUID and GID 0
# taken from the DPDK port's MAC (docs/dpdk.md), not from a kernel interface:
#   memif     the port's MAC given with SOFTRNIC_DPDK_MAC
#   afpacket  no MAC given: the port reports the veth end's MAC (in its own namespace)
# Usage: dpdk_devices.sh LIBIBVERBS_DIR LIBRDMACM_DIR memif|afpacket
set -u
TEST_NAME=dropin_dpdk_devices
. "$(dirname "$0")/dpdk_common.sh"
need_debian ibv_devices ibverbs-utils
need_debian ibv_devinfo ibverbs-utils
uses_ours ibv_devinfo

if [ "$DD_LINK" = memif ]; then
	# memif needs its peer only for link up; the device is queried without one
	mac=02:53:52:0a:0b:0c
	export SOFTRNIC_DPDK_MAC=$mac
else
	mac=$(ip -n "$DPDK_NS_A" -o link show veth-a | sed -E 's/.*link\/ether ([0-9a-f:]{17}).*/\1/')
fi
# siw's node GUID rule: EUI-64 of the MAC with the universal/local bit flipped
b1=$(printf '%02x' $((0x${mac%%:*} ^ 2)))
guid=$(echo "$mac" | awk -F: -v b1="$b1" '{ print b1 $2 $3 "fffe" $4 $5 $6 }')

out=$(on_a timeout "$PROG_TIMEOUT" ibv_devices 2>&1) || fail "ibv_devices failed: $out"
printf '%s\n' "$out"
printf '%s\n' "$out" >"$DPDK_DIR/devices.err"
dpdk_skip_if_no_eal "$DPDK_DIR/devices.err"
printf '%s\n' "$out" | grep -q 'DPDK transport unavailable' && fail "DPDK port did not open: $out"
printf '%s\n' "$out" | grep -Eq "^[[:space:]]+softrnic0[[:space:]]+$guid\$" ||
	fail "ibv_devices does not list softrnic0 with GUID $guid (port MAC $mac)"

out=$(on_a timeout "$PROG_TIMEOUT" ibv_devinfo -v 2>&1) || fail "ibv_devinfo failed: $out"
printf '%s\n' "$out"
g=$(echo "$guid" | sed -E 's/(....)(....)(....)(....)/\1:\2:\3:\4/')
for pat in 'hca_id:[[:space:]]+softrnic0' 'transport:[[:space:]]+iWARP \(1\)' \
	'state:[[:space:]]+PORT_ACTIVE \(4\)' 'link_layer:[[:space:]]+Ethernet' \
	"node_guid:[[:space:]]+$g" 'phys_port_cnt:[[:space:]]+1' 'gid_tbl_len:[[:space:]]+1'; do
	printf '%s\n' "$out" | grep -Eq "$pat" || fail "ibv_devinfo: no line matching '$pat'"
done
echo "$TEST_NAME: OK (GUID $guid from port MAC $mac)"
