#!/bin/sh
# Key memif_csum = off: over a memif link both ends skip the TCP checksum (Linux does on
# loopback). softrnic-rping, unchanged, 30 verified pings of 64 KiB with CRC32c, the server's
# port capturing; tshark, told to check TCP checksums, must find every data segment's
# checksum wrong with the key off on both ends (none was computed, and both ends took them),
# and every one right without the key (so the check itself can tell). Then the key on one end
# only: the end that checks drops every segment of the other (their checksum is left to an
# offload), the client cannot connect, and the server says why on stderr, naming the key.
# Needs tshark (77).
# Usage: memif_csum.sh /path/to/softrnic-rping
set -u
TEST_NAME=dpdk_memif_csum
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/dpdk_lib.sh"
RPING=${1:?usage: memif_csum.sh /path/to/softrnic-rping}
command -v tshark >/dev/null 2>&1 || { echo "$TEST_NAME: SKIP: no tshark" >&2; exit 77; }
dpdk_tmpdir
PORT=8071
A=198.51.100.1
B=198.51.100.2
export SOFTRNIC_MPA=crc SOFTRNIC_DPDK_MTU=9000

run() { # memif_csum value for both ends; "bad good" data segments of the capture -> $DPDK_DIR/counts
	cap="$DPDK_DIR/csum-$1.pcap"
	start_server timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_MEMIF_CSUM="$1" \
		"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
		SOFTRNIC_DPDK_PCAP="$cap" "$RPING" -s -a $A -p "$PORT" -V 2>"$DPDK_DIR/server.err"
	dpdk_head_start
	dpdk_skip_if_no_eal "$DPDK_DIR/server.err"
	out=$(timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_MEMIF_CSUM="$1" \
		"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
		"$RPING" -c -a $A -p "$PORT" -C 30 -S 65536 -V 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out"
		cat "$DPDK_DIR/server.err" >&2
		fail "client exited with status $rc (memif_csum $1)"
	fi
	printf '%s\n' "$out" | grep -q '30 pings of 65536 bytes, verified' ||
		fail "summary missing (memif_csum $1)"
	wait_server "memif_csum $1"
	PORT=$((PORT + 1))
	# A data segment counts as "no checksum" when its checksum field holds exactly the
	# pseudo-header's sum (what a sender leaves to an offload), and as "one" when tshark finds
	# the checksum right. Not "wrong": a payload can make the pseudo-header's sum the right
	# checksum by chance, and rping's repeating pattern makes that happen now and then.
	tshark -r "$cap" -o tcp.check_checksum:TRUE -Y "tcp.len>0" -T fields -E separator=' ' \
		-e ip.src -e ip.dst -e tcp.hdr_len -e tcp.len -e tcp.checksum -e tcp.checksum.status \
		2>/dev/null | awk '
		function words(ip,   a) { split(ip, a, "."); return (a[1] * 256 + a[2]) + (a[3] * 256 + a[4]) }
		function hex(h,   i, v) { v = 0; h = tolower(substr(h, 3))
			for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return v }
		{
			s = words($1) + words($2) + 6 + $3 + $4
			while (s > 65535) s = int(s / 65536) + s % 65536
			if (hex($5) == s) b++; else if ($6 == 1) g++; else x++
		}
		END { printf "%d %d %d\n", b, g, x }' >"$DPDK_DIR/counts"
}

run off
set -- $(cat "$DPDK_DIR/counts")
echo "memif_csum off: $1 data segments with no checksum, $2 with one, $3 wrong"
[ "$1" -gt 60 ] && [ "$2" -eq 0 ] && [ "$3" -eq 0 ] || fail "memif_csum off: expected every data segment unchecksummed"
run on
set -- $(cat "$DPDK_DIR/counts")
echo "memif_csum on: $1 data segments with no checksum, $2 with one, $3 wrong"
[ "$2" -gt 60 ] && [ "$3" -eq 0 ] && [ "$1" -le $(($2 / 100)) ] || fail "memif_csum on: expected every data segment checksummed"

# the key off on the client only: its SYNs carry the pseudo-header's sum alone
start_server timeout "$PROG_TIMEOUT" env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_MEMIF_CSUM=on \
	"$(dpdk_eal server "$(memif_vdev server)")" SOFTRNIC_DPDK_IP=$A/24 \
	"$RPING" -s -a $A -p "$PORT" -V 2>"$DPDK_DIR/server.err"
dpdk_head_start
timeout 5 env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_MEMIF_CSUM=off \
	"$(dpdk_eal client "$(memif_vdev client)")" SOFTRNIC_DPDK_IP=$B/24 \
	"$RPING" -c -a $A -p "$PORT" -C 1 -S 64 -V >"$DPDK_DIR/mismatch.out" 2>&1 &&
	fail "memif_csum off against on: the client connected, the server took unchecked segments"
kill_server
if ! grep -q "dropping TCP segments whose checksum holds only the pseudo-header's sum.*the peer has memif_csum = off" \
	"$DPDK_DIR/server.err"; then
	cat "$DPDK_DIR/server.err" >&2
	fail "memif_csum on one end only: the server did not say why it dropped the client's segments"
fi
echo "memif_csum off at the client only: refused, the server named the key"
echo "$TEST_NAME: OK"
