#!/bin/sh
# MPA FPDU alignment on the wire (RFC 5044 5): softrnic-perf over net_memif with the ports'
# pcap capture on; every TCP segment after the MPA exchange must start with an FPDU (the QP
# puts its stream in record mode, rn_conn_set_records). RDMA Read (64 KiB responses: a short
# FPDU ends each) and Write. Needs tshark and python3 (exit 77 without them).
# Usage: fpdu_align.sh /path/to/softrnic-perf
set -u
TEST_NAME=dpdk_fpdu_align
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
PERF=${1:?usage: fpdu_align.sh /path/to/softrnic-perf}
CHECK=$(dirname "$0")/fpdu_align.py
for c in tshark python3; do
	command -v "$c" >/dev/null 2>&1 || { echo "$TEST_NAME: SKIP: no $c" >&2; exit 77; }
done
dpdk_tmpdir
PORT=7971
A=198.51.100.1
B=198.51.100.2

for t in read write; do
	start_server timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
		SOFTRNIC_DPDK_PCAP="$DPDK_DIR/$t.pcap" \
		"$PERF" -p "$PORT" -T 20 -y -b $A >/dev/null 2>"$DPDK_DIR/server.err"
	dpdk_head_start
	dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
	timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk \
		"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
		"$PERF" -p "$PORT" -T 20 -y -t $t -s 65536 -n 100 $A >"$DPDK_DIR/client.out" 2>&1 ||
		{ cat "$DPDK_DIR/client.out" "$DPDK_DIR/server.err"; fail "perf -t $t failed"; }
	wait_server "-t $t"
	PORT=$((PORT + 1))
	# the server's capture holds both directions of the connection
	tshark -r "$DPDK_DIR/$t.pcap" -Y "tcp.len>0" -T fields -e ip.src -e tcp.srcport \
		-e tcp.seq -e tcp.len -e tcp.payload 2>/dev/null >"$DPDK_DIR/$t.txt" ||
		fail "tshark cannot read $t.pcap"
	python3 "$CHECK" <"$DPDK_DIR/$t.txt" || fail "-t $t: segments that do not start with an FPDU"
done
echo "$TEST_NAME: OK"
