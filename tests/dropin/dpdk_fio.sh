#!/bin/sh
# Debian's fio with its rdma ioengine, unmodified, on our drop-in libraries over softrnic's
# TCP engine on DPDK: the server job on side A, the client job on side B. The cases are in
# fio_lib.sh, the same as over kernel sockets (fio.sh).
# Usage: dpdk_fio.sh LIBIBVERBS_DIR LIBRDMACM_DIR memif|afpacket write|read|send|behind
set -u
TEST_NAME=dropin_dpdk_fio
. "$(dirname "$0")/dpdk_common.sh"
CASE=${1:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR memif|afpacket write|read|send|behind}
TEST_NAME=dropin_dpdk_fio_${CASE}_$DD_LINK
. "$(dirname "$0")/fio_lib.sh"
fio_case "$CASE"
PORT=7881

# shellcheck disable=SC2086 # FIO_RUN, FIO_SRV and FIO_CLI are word lists
dd_start_server "$DPDK_DIR/server.out" $FIO_RUN --name=server --port=$PORT $FIO_SRV
if [ "$CASE" = behind ]; then
	# shellcheck disable=SC2086
	(
		DD_EXEC=1
		on_b $FIO_RUN --name=client --hostname=$A --port=$PORT $FIO_CLI
	) >"$DPDK_DIR/client.out" 2>&1 &
	FIO_CLIENT_PID=$!
	fio_behind "$SERVER_PID" "$DPDK_DIR/server.out" "$FIO_CLIENT_PID" "$DPDK_DIR/client.out"
	SERVER_PID= FIO_CLIENT_PID=
	echo "$TEST_NAME: OK (the receiver fell behind: an error on both sides)"
	exit 0
fi
# shellcheck disable=SC2086
dd_client $FIO_RUN --name=client --hostname=$A --port=$PORT $FIO_CLI
cat "$DPDK_DIR/client.err" >&2
[ "$rc" -eq 0 ] || { cat "$DPDK_DIR/client.out" "$DPDK_DIR/server.out"; fail "client exited with status $rc"; }
wait_server "fio server: $(cat "$DPDK_DIR/server.out")"
fio_check_done "$CASE" "$DPDK_DIR/server.out" "$DPDK_DIR/client.out"
echo "$TEST_NAME: OK"
