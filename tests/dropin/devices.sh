#!/bin/sh
# Debian's ibv_devices and ibv_devinfo (ibverbs-utils) on our libibverbs.so.1: the device
# softrnic0, iWARP transport, port 1 active on Ethernet.
set -u
TEST_NAME=dropin_devices
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dropin.sh"
need_debian ibv_devices ibverbs-utils
need_debian ibv_devinfo ibverbs-utils
uses_ours ibv_devices

out=$(timeout "$PROG_TIMEOUT" ibv_devices 2>&1) || fail "ibv_devices failed: $out"
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -Eq '^[[:space:]]+softrnic0[[:space:]]+[0-9a-f]{16}$' ||
	fail "ibv_devices does not list softrnic0 with its GUID"

out=$(timeout "$PROG_TIMEOUT" ibv_devinfo 2>&1) || fail "ibv_devinfo failed: $out"
printf '%s\n' "$out"
for pat in 'hca_id:[[:space:]]+softrnic0' 'transport:[[:space:]]+iWARP \(1\)' \
	'state:[[:space:]]+PORT_ACTIVE \(4\)' 'link_layer:[[:space:]]+Ethernet' \
	'phys_port_cnt:[[:space:]]+1'; do
	printf '%s\n' "$out" | grep -Eq "$pat" || fail "ibv_devinfo: no line matching '$pat'"
done

# -v goes through ibv_query_device_ex (a verbs_context op) and the port's GID table. No
# "GID[0]" line: like siw's, our GID is the MAC then zeros, which ibv_devinfo treats as null.
out=$(timeout "$PROG_TIMEOUT" ibv_devinfo -v -d softrnic0 2>&1) ||
	fail "ibv_devinfo -v failed: $out"
for pat in 'max_qp:[[:space:]]+[1-9]' 'atomic_cap:[[:space:]]+ATOMIC_NONE' \
	'gid_tbl_len:[[:space:]]+1'; do
	printf '%s\n' "$out" | grep -Eq "$pat" || fail "ibv_devinfo -v: no line matching '$pat'"
done

# A device that does not exist is an error, not a crash.
if out=$(timeout "$PROG_TIMEOUT" ibv_devinfo -d nosuchdev 2>&1); then
	fail "ibv_devinfo -d nosuchdev succeeded: $out"
fi
echo "$TEST_NAME: OK"
