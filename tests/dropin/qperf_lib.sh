# The qperf tests of the drop-in suites (sourced; POSIX sh) by qperf.sh (kernel sockets) and
# dpdk_qperf.sh (DPDK). The caller has a qperf server running (SERVER_PID, its output in
# SOUT), PORT its control port, HOST the server's address, QT the seconds of each test, OUT /
# ERR scratch files, on_b CMD... running CMD as the client side, and optionally QPERF_PRE, a
# command run before each client, and QPERF_ARGS, more qperf options.
#   qperf_all   every RC test qperf has, each checked as below; fails at the first wrong one
#   rc_bw rc_bi_bw rc_lat rc_rdma_read_bw rc_rdma_read_lat rc_rdma_write_bw rc_rdma_write_lat
#   rc_rdma_write_poll_lat: both sides exit 0, the client prints its result line (rc_bw,
#   rc_bi_bw and rc_rdma_write_bw with 1 MiB messages, qperf's default size for the others).
#   rc_compare_swap_mr rc_fetch_add_mr: iWARP has no atomics (atomic_cap NONE, the post is
#   refused with EINVAL, as on siw): the client fails at once with qperf's "failed to post"
#   message, and the server's test process ends (the next test runs on the same server).
# docs/dropin.md "qperf" says why each result is what it is.

# client TEST: runs the client once (stdout OUT, stderr ERR), sets rc
client() {
	[ -z "${QPERF_PRE:-}" ] || $QPERF_PRE
	# qperf has no flow control for Sends (below): 1 MiB messages make its 1024 Receives cover
	# about a second of data, not 50 ms, so only a receiver starved that long runs dry
	case "$1" in
	rc_bw | rc_bi_bw | rc_rdma_write_bw) msz="-m 1M" ;;
	*) msz= ;;
	esac
	on_b timeout "$PROG_TIMEOUT" qperf -lp "$PORT" -cm1 -t "$QT" $msz ${QPERF_ARGS:-} "$HOST" \
		"$1" >"$OUT" 2>"$ERR"
	rc=$?
}

# ok TEST WHAT: the test passes, with a WHAT line (bw, latency). A Send-based bandwidth test
# (qperf keeps 1024 Sends in flight against 1024 Receives and has no flow control) whose
# receiver could not repost in time fails as iWARP must (no RNR retry: the Send that finds no
# Receive terminates the stream, the sender sees its WRs flushed, as on siw); only that exact
# failure, on either side, is run again, at most twice, and said on stderr.
ok() {
	t=1
	while :; do
		client "$1"
		[ "$rc" -eq 0 ] && break
		case "$1" in rc_bw | rc_bi_bw | rc_rdma_write_bw) ;; *) break ;; esac
		# either side can be the one that sees it first; qperf prefixes the server's errors
		grep -Eqx "(server: )?$1 failed: WR flush failure" "$OUT" "$ERR" 2>/dev/null || break
		[ "$t" -le 2 ] || break
		echo "$TEST_NAME: $1: the receiver ran out of Receives (iWARP, no RNR), again" >&2
		t=$((t + 1))
	done
	if [ "$rc" -ne 0 ]; then
		cat "$OUT" "$ERR" "$SOUT" >&2
		fail "$1: client exited with status $rc"
	fi
	grep -Eq "^ *$2 += +[0-9.]+ [a-zA-Z/]+" "$OUT" || { cat "$OUT" >&2; fail "$1: no '$2' line"; }
	echo "$TEST_NAME: $1: $(grep -E "^ *$2 +=" "$OUT" | tr -s ' ')"
}

# refused TEST MESSAGE: the client fails at once with MESSAGE (not a timeout)
refused() {
	client "$1"
	[ "$rc" -ne 0 ] || fail "$1: client succeeded, but iWARP has no atomics"
	[ "$rc" -ne 124 ] || fail "$1: client did not end (timeout)"
	grep -q "^$2\$" "$ERR" "$OUT" || { cat "$OUT" "$ERR" >&2; fail "$1: not '$2'"; }
	echo "$TEST_NAME: $1: refused as expected ($2)"
}

qperf_all() {
	ok rc_lat latency
	ok rc_rdma_write_lat latency
	ok rc_rdma_write_poll_lat latency
	ok rc_rdma_read_lat latency
	ok rc_bw bw
	ok rc_bi_bw bw
	ok rc_rdma_write_bw bw
	ok rc_rdma_read_bw bw
	refused rc_compare_swap_mr "failed to post compare and swap"
	refused rc_fetch_add_mr "failed to post fetch and add"
	# the server's side of the refused tests ended: the server takes the next test
	ok rc_lat latency
	kill -0 "$SERVER_PID" 2>/dev/null || fail "qperf server ended: $(cat "$SOUT")"
}
