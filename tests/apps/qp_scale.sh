#!/bin/sh
# Many QPs between two processes (bench/scale/qp_scale): 2,000 over kernel sockets on
# loopback, then 2,000 over the DPDK engine on memif. Both ends must set up, answer on,
# and tear down every QP and exit 0; the numbers are the benchmark's (scripts/bench-scale.sh),
# not judged here. Each end runs with an open-file limit of N + 600: a QP may cost one
# descriptor on either transport (docs/rnic.md), so 10,000 QPs fit a limit a little above
# 10,000.
# Usage: qp_scale.sh /path/to/qp_scale
set -u
TEST_NAME=apps_qp_scale
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../dpdk/dpdk_lib.sh"
QP_SCALE=${1:?usage: qp_scale.sh qp_scale}
N=2000
# meson's MALLOC_PERTURB_ fills every allocation: 2,000 QPs' buffers (about 600 KiB each,
# docs/rnic.md) would all be touched, which is time and memory this test does not measure
unset MALLOC_PERTURB_
dpdk_tmpdir
FDS=$((N + 600))

# run a command with the open-file limit (soft and hard) at FDS; exec keeps its PID
nofile() {
	ulimit -n "$FDS" && exec "$@"
}

check() { # WHAT CLIENT_OUTPUT
	printf '%s\n' "$2" | grep -q "^qp_scale: $N QPs; setup of $((N - 1)) " ||
		fail "$1: client summary missing"
	wait_server "$1"
	grep -q "^qp_scale server: $N QPs served" "$DPDK_DIR/server.out" ||
		fail "$1: server summary missing"
	printf '%s\n' "$2" | tail -1
	tail -1 "$DPDK_DIR/server.out"
}

pick_port
start_server nofile timeout "$PROG_TIMEOUT" "$QP_SCALE" -s -b 127.0.0.1 -p "$PORT" -n "$N" \
	>"$DPDK_DIR/server.out" 2>&1
wait_listen "$PORT" || fail "server is not listening on port $PORT"
out=$(nofile timeout "$PROG_TIMEOUT" "$QP_SCALE" -c 127.0.0.1 -p "$PORT" -n "$N" -i 200 2>&1) ||
	fail "kernel sockets: client exited with status $?: $out"
check "kernel sockets" "$out"

if have_dpdk_pmd memif; then
	start_server nofile timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "$(memif_file_vdev server)")" SOFTRNIC_DPDK_IP=198.51.100.1/24 \
		"$QP_SCALE" -s -b 198.51.100.1 -p 7471 -n "$N" >"$DPDK_DIR/server.out" 2>&1
	dpdk_head_start
	dpdk_skip_if_no_eal "$DPDK_DIR/server.out"
	out=$(nofile timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "$(memif_file_vdev client)")" SOFTRNIC_DPDK_IP=198.51.100.2/24 \
		"$QP_SCALE" -c 198.51.100.1 -p 7471 -n "$N" -i 200 2>&1) ||
		fail "DPDK memif: client exited with status $?: $out"
	check "DPDK memif" "$out"
fi
echo "$TEST_NAME: OK"
