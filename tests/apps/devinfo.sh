#!/bin/sh
# softrnic-devinfo shows the softrnic device: a name, iWARP transport, an active port, GID 0.
# Usage: devinfo.sh /path/to/softrnic-devinfo
set -u
TEST_NAME=apps_devinfo
. "$(dirname "$0")/../lib/common.sh"
DEVINFO=${1:?usage: devinfo.sh /path/to/softrnic-devinfo}

out=$(timeout "$PROG_TIMEOUT" "$DEVINFO" -v 2>&1) || fail "softrnic-devinfo -v exited $?: $out"
printf '%s\n' "$out"
for want in 'hca_id:' 'transport:[[:space:]]*iWARP' 'node_type:' 'node_guid:' 'fw_ver:' \
	'vendor_id:' 'phys_port_cnt:' 'state:[[:space:]]*PORT_ACTIVE' 'active_mtu:' 'GID\[0\]:' \
	'max_qp:' 'max_qp_wr:' 'max_cqe:' 'max_mr:' 'max_qp_rd_atom:'; do
	printf '%s\n' "$out" | grep -q "$want" || fail "output has no line matching '$want'"
done
name=$(printf '%s\n' "$out" | sed -n 's/^hca_id:[[:space:]]*//p' | head -1)
[ -n "$name" ] || fail "no device name"
timeout "$PROG_TIMEOUT" "$DEVINFO" -l | grep -q "$name" || fail "-l does not list $name"
timeout "$PROG_TIMEOUT" "$DEVINFO" -d "$name" >/dev/null || fail "-d $name failed"
if timeout "$PROG_TIMEOUT" "$DEVINFO" -d no-such-device >/dev/null 2>&1; then
	fail "-d no-such-device succeeded"
fi
echo "$TEST_NAME: OK ($name)"
