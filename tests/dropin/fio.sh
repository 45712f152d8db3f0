#!/bin/sh
# Debian's fio with its rdma ioengine, unmodified, on our drop-in libraries over kernel
# sockets: the server job and the client job as two processes on loopback, or across two
# network namespaces joined by a veth pair (root). The cases are in fio_lib.sh.
# Usage: fio.sh LIBIBVERBS_DIR LIBRDMACM_DIR lo|netns write|read|send|behind
set -u
TEST_NAME=dropin_fio
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dropin.sh"
WHERE=${1:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR lo|netns write|read|send|behind}
CASE=${2:?usage: $0 LIBIBVERBS_DIR LIBRDMACM_DIR lo|netns write|read|send|behind}
TEST_NAME=dropin_fio_${CASE}_$WHERE
. "$(dirname "$0")/fio_lib.sh"
fio_case "$CASE"

SRV_NS= CLI_NS= SRV_ADDR=127.0.0.1
case "$WHERE" in
lo) ;;
netns)
	. "$(dirname "$0")/../lib/netns.sh"
	netns_setup fio
	SRV_NS=$NETNS_A CLI_NS=$NETNS_B SRV_ADDR=$NETNS_ADDR_A
	;;
*) fail "unknown place '$WHERE' (lo or netns)" ;;
esac

pick_port
SOUT=$(mktemp) COUT=$(mktemp)
cleanup_files() { rm -f "$SOUT" "$COUT"; }
EXIT_HOOKS="$EXIT_HOOKS cleanup_files"
# shellcheck disable=SC2086 # FIO_RUN, FIO_SRV and FIO_CLI are word lists
start_server in_ns "$SRV_NS" $FIO_RUN --name=server --port="$PORT" $FIO_SRV >"$SOUT" 2>&1
wait_listen "$PORT" "$SRV_NS" || { cat "$SOUT"; fail "fio server is not listening on $PORT"; }
if [ "$CASE" = behind ]; then
	# shellcheck disable=SC2086
	(in_ns "$CLI_NS" $FIO_RUN --name=client --hostname="$SRV_ADDR" --port="$PORT" $FIO_CLI) \
		>"$COUT" 2>&1 &
	FIO_CLIENT_PID=$!
	fio_behind "$SERVER_PID" "$SOUT" "$FIO_CLIENT_PID" "$COUT"
	SERVER_PID= FIO_CLIENT_PID=
	echo "$TEST_NAME: OK (the receiver fell behind: an error on both sides)"
	exit 0
fi
# shellcheck disable=SC2086
(in_ns "$CLI_NS" $FIO_RUN --name=client --hostname="$SRV_ADDR" --port="$PORT" $FIO_CLI) \
	>"$COUT" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$COUT" "$SOUT"; fail "client exited with status $rc"; }
wait_server "fio server: $(cat "$SOUT")"
fio_check_done "$CASE" "$SOUT" "$COUT"
echo "$TEST_NAME: OK"
