# Helpers of the DPDK transport tests (sourced after tests/lib/common.sh; POSIX sh).
#   dpdk_tmpdir               DPDK_DIR: a private temp dir (memif socket, logs), removed on exit
#   dpdk_eal ROLE VDEV        prints SOFTRNIC_DPDK_EAL=... for one process: --no-huge, its own
#                             main lcore (0 for ROLE server, 1 for client when there are two
#                             cores; rn_dpdk_port.c restores the thread's CPU set after EAL
#                             start, so nothing is pinned), the vdev
#   memif_vdev ROLE           the net_memif vdev of this test's link (socket in DPDK_DIR)
#   dpdk_skip_if_no_eal FILE  exit 77 when FILE (a program's stderr) says EAL itself cannot
#                             start (any other port error is a failure)
# Run a program over DPDK with:
#   env SOFTRNIC_TRANSPORT=dpdk "$(dpdk_eal server "$(memif_vdev server)")" \
#       SOFTRNIC_DPDK_IP=198.51.100.1/24 PROGRAM ...
DPDK_DIR=
dpdk_cleanup() {
	[ -n "$DPDK_DIR" ] && rm -rf "$DPDK_DIR"
	DPDK_DIR=
}
EXIT_HOOKS="$EXIT_HOOKS dpdk_cleanup"

dpdk_tmpdir() {
	DPDK_DIR=$(mktemp -d /tmp/srn-dpdk-XXXXXX) || fail "mktemp"
}

dpdk_eal() { # ROLE VDEV
	n=$(nproc 2>/dev/null || echo 1)
	lc=0
	[ "$1" = client ] && [ "$n" -gt 1 ] && lc=1
	echo "SOFTRNIC_DPDK_EAL=--no-huge -m 256 -l $lc --vdev=$2"
}

memif_vdev() { # ROLE
	echo "net_memif0,role=$1,socket=$DPDK_DIR/memif.sock"
}

dpdk_skip_if_no_eal() { # FILE
	# Only EAL itself failing is a skip: any other port error (memory, a vdev) is a failure.
	if grep -Eq 'DPDK EAL could not start|DPDK needs hugepages|built without DPDK' "$1" \
		2>/dev/null; then
		cat "$1" >&2
		echo "${TEST_NAME:-test}: SKIP: DPDK cannot start here" >&2
		exit 77
	fi
}

# dpdk_head_start: give a just-started server time to open its port and listen. There is no
# kernel socket to wait for (ss), and a client whose SYN reaches a port that is up but not yet
# listening gets a RST (REJECTED), as from a kernel. Opening a port with the transmit pool
# sized at open (2026-11-22) takes over a second under --no-huge on this machine.
dpdk_head_start() {
	sleep "${DPDK_HEAD_START:-3}"
}
