#!/bin/sh
# softrnic.conf as the tools meet it (docs/config.md): an error in the file (at reading, or in
# a value the layer using it checks) stops the program with a message naming the file, the
# line and what is allowed; the user's file is found under $HOME; the environment overrides
# the file key by key; DPDK is chosen and configured from the file alone.
# Usage: conf_tools.sh SOFTRNIC_DEVINFO SOFTRNIC_RPING
set -u
TEST_NAME=conf_tools
. "$(dirname "$0")/../lib/common.sh"
DEVINFO=${1:?usage: conf_tools.sh SOFTRNIC_DEVINFO SOFTRNIC_RPING}
RPING=${2:?usage: conf_tools.sh SOFTRNIC_DEVINFO SOFTRNIC_RPING}
T=$(mktemp -d)
cleanup_dir() { rm -rf "$T"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_dir"
C=$T/softrnic.conf
# none of the machine's or the caller's settings
unset SOFTRNIC_TRANSPORT SOFTRNIC_KEEPALIVE SOFTRNIC_MPA SOFTRNIC_DPDK_CONF SOFTRNIC_DPDK_EAL \
	SOFTRNIC_DPDK_IP XDG_CONFIG_HOME
export SOFTRNIC_CONF="$C"

# expect_fail WHAT PATTERN CMD...: CMD fails and its output has PATTERN (grep -F)
expect_fail() {
	what=$1 pat=$2
	shift 2
	if timeout "$PROG_TIMEOUT" "$@" >"$T/out" 2>&1; then
		cat "$T/out"
		fail "$what: succeeded"
	fi
	grep -qF -- "$pat" "$T/out" || { cat "$T/out"; fail "$what: no '$pat' in the output"; }
}

printf '# softrnic\ntransport = sock\ntransprot = dpdk\n' >"$C"
expect_fail "unknown key" "$C:3: unknown key 'transprot' (known: transport keepalive mpa" \
	"$DEVINFO"
printf 'transport = tcp\n' >"$C"
expect_fail "bad transport" "$C:1: key 'transport': 'tcp' is not a transport (allowed: sock, dpdk)" \
	"$DEVINFO"
expect_fail "no such file" "SOFTRNIC_CONF: no file '$T/none.conf'" \
	env SOFTRNIC_CONF="$T/none.conf" "$DEVINFO"

# the user's file, found from $HOME when SOFTRNIC_CONF is not set
mkdir -p "$T/home/.config/softrnic"
printf 'mtu = 9000\n' >"$T/home/.config/softrnic/softrnic.conf"
expect_fail "user's file" "$T/home/.config/softrnic/softrnic.conf:1: unknown key 'mtu'" \
	env -u SOFTRNIC_CONF HOME="$T/home" "$DEVINFO"
rm "$T/home/.config/softrnic/softrnic.conf"
env -u SOFTRNIC_CONF HOME="$T/home" "$DEVINFO" >/dev/null || fail "no user's file: devinfo failed"

# values the layers check when they use them, named by file and line
pick_port
printf 'transport = sock\nkeepalive = 1,2\n' >"$C"
expect_fail "bad keepalive" "$C:2 (keepalive): keepalive '1,2' is not IDLE,INTVL,PROBES" \
	"$RPING" -s -a 127.0.0.1 -p "$PORT"
printf 'mpa = crc,bogus\n' >"$C"
expect_fail "bad mpa" "$C:1 (mpa): mpa 'crc,bogus': unknown option 'bogus'" \
	"$RPING" -s -a 127.0.0.1 -p "$PORT"
printf 'transport = dpdk\ndpdk_ip = 198.51.100.1/24\ndpdk_mtu = 70000\n' >"$C"
expect_fail "bad DPDK key" "$C:3 (dpdk_mtu): key 'mtu': '70000' is not a number in 576..64000" \
	"$RPING" -s -a 198.51.100.1 -p "$PORT"

# the environment over the file, key by key: the file's bad keepalive is not used, its MPA
# options are (a pair with CRC both ways)
printf 'keepalive = 1,2\nmpa = crc\n' >"$C"
start_server env SOFTRNIC_KEEPALIVE=off timeout "$PROG_TIMEOUT" "$RPING" -s -a 127.0.0.1 \
	-p "$PORT" -V
wait_listen "$PORT" || fail "rping server (environment over the file) is not listening"
SOFTRNIC_KEEPALIVE=off timeout "$PROG_TIMEOUT" "$RPING" -c -a 127.0.0.1 -p "$PORT" -C 10 -V \
	>"$T/out" 2>&1 || { cat "$T/out"; fail "rping client (environment over the file) failed"; }
wait_server "rping server (environment over the file)"

# DPDK from the file alone: a memif port (no peer needed: a memif server does not wait for
# its link) that has no loopback, so 127.0.0.1 cannot listen there: the port is the file's.
printf 'transport = dpdk\ndpdk_eal = "--no-huge -m 256 -l 0 --vdev=net_memif0,role=server,socket=%s"\ndpdk_ip = 198.51.100.7/24\n' \
	"$T/memif.sock" >"$C"
if timeout "$PROG_TIMEOUT" "$RPING" -s -a 127.0.0.1 -p "$PORT" >"$T/out" 2>&1; then
	fail "DPDK from the file: a listener on 127.0.0.1 opened (kernel sockets?)"
fi
if grep -Eq 'DPDK EAL could not start|DPDK needs hugepages|built without DPDK' "$T/out"; then
	cat "$T/out"
	echo "$TEST_NAME: OK (DPDK cannot start here: the file's DPDK port not tried)"
	exit 0
fi
grep -q 'rdma_listen: Cannot assign requested address' "$T/out" ||
	{ cat "$T/out"; fail "DPDK from the file: not the port's refusal"; }
echo "$TEST_NAME: OK"
