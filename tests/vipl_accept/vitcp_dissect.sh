#!/bin/sh
# VI/TCP on the wire (docs/vipl.md "VI/TCP in Wireshark"): a capture of real VI/TCP sessions
# (the acceptance scenarios of Reject, Send with immediate data, Reliable Reception, RDMA
# Write with immediate data and RDMA Read, two of them again with the CRC option taken, then
# the hostile peer for ConnectNoMatch) in a network namespace of its own, decoded with
# tools/wireshark/vitcp.lua: every message type of the draft must be there with the fields of
# its headers.
# usage: vitcp_dissect.sh LUA VIPL_ACCEPT VT_ECHO HOSTILE_PY
set -eu
lua=$1 va=$2 echo=$3 hostile=$4
[ "$(id -u)" = 0 ] || { echo "vitcp_dissect: needs root (network namespace)"; exit 77; }
command -v tshark >/dev/null && command -v dumpcap >/dev/null ||
	{ echo "vitcp_dissect: tshark and dumpcap are not installed"; exit 77; }
ns=vtdis$$
dir=$(mktemp -d)
cap_pid=
cleanup() {
	[ -n "$cap_pid" ] && kill "$cap_pid" 2>/dev/null && wait "$cap_pid" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
ip netns add "$ns"
ip -n "$ns" link set lo up
ip netns exec "$ns" dumpcap -q -i lo -f tcp -w "$dir/cap.pcapng" 2>"$dir/dumpcap.log" &
cap_pid=$!
for _ in $(seq 50); do grep -q 'Capturing on' "$dir/dumpcap.log" 2>/dev/null && break; sleep 0.1; done
grep -q 'Capturing on' "$dir/dumpcap.log" || { cat "$dir/dumpcap.log"; exit 1; }
for t in T09 T12 T17 T18 T20; do
	ip netns exec "$ns" env SOFTRNIC_VIPL_WIRE=vitcp "$va" "$t" >"$dir/$t.log" 2>&1 ||
		{ cat "$dir/$t.log"; exit 1; }
done
# two of them again with the CRC option taken (docs/vipl.md D265): every segment has a trailer
for t in T12 T20; do
	ip netns exec "$ns" env SOFTRNIC_VIPL_WIRE=vitcp SOFTRNIC_VITCP_CRC=1 "$va" "$t" \
		>"$dir/$t-crc.log" 2>&1 || { cat "$dir/$t-crc.log"; exit 1; }
done
ip netns exec "$ns" python3 "$hostile" "$echo" >"$dir/hostile.log" 2>&1 ||
	{ cat "$dir/hostile.log"; exit 1; }
sleep 0.5 # the last segments reach the capture
kill "$cap_pid"
wait "$cap_pid" || true
cap_pid=

count() { # frames matching the display filter $1
	tshark -r "$dir/cap.pcapng" -X lua_script:"$lua" -o vitcp.ports:1-65535 -Y "$1" \
		-T fields -e frame.number 2>/dev/null | wc -l
}
fails=0
check() { # $1 what, $2 display filter that must match at least one frame
	n=$(count "$2")
	if [ "$n" -gt 0 ]; then
		echo "ok: $1 ($n frames)"
	else
		echo "FAIL: $1: no frame matches '$2'"
		fails=$((fails + 1))
	fi
}
check "Send with immediate data" 'vitcp.type == 0 && vitcp.flags.idv == 1 && vitcp.payload_len > 0'
check "RdmaWrite with its RDMA header" 'vitcp.type == 1 && vitcp.rdma.handle && vitcp.rdma.length > 0'
check "RdmaWrite with immediate data" 'vitcp.type == 1 && vitcp.flags.idv == 1'
check "RdmaReadRequest" 'vitcp.type == 2 && vitcp.rdma.addr && vitcp.payload_len == 0'
check "RdmaReadResponse with data" 'vitcp.type == 3 && vitcp.payload_len > 0 && vitcp.flags.eom == 1'
check "RdmaReadResponse with Transmit Error" 'vitcp.type == 3 && vitcp.flags.tre == 1'
check "NOP with a Message ACK" 'vitcp.type == 4 && vitcp.ack > 0'
check "ConnectRequest with its CE header" 'vitcp.type == 5 && vitcp.ce.mtu > 0 && vitcp.ce.called_len > 0'
check "ConnectRequest of Reliable Reception" 'vitcp.type == 5 && vitcp.ce.rr == 1'
check "ConnectRequest with softrnic's options" 'vitcp.type == 5 && vitcp.ce.option == 0x8001'
check "ConnectAccept" 'vitcp.type == 6 && vitcp.ce.mtu > 0 && vitcp.ce.read_window > 0'
check "ConnectReject" 'vitcp.type == 7 && vitcp.seglen == 24'
check "ConnectNoMatch" 'vitcp.type == 8'
check "segments split across one message" 'vitcp.offset > 0'
check "ConnectRequest and ConnectAccept with the CRC option" 'vitcp.type == 6 && vitcp.ce.option == 1 && vitcp.crc'
check "Send with its CRC trailer" 'vitcp.type == 0 && vitcp.crc && vitcp.payload_len > 0'
check "RdmaReadRequest with its CRC trailer" 'vitcp.type == 2 && vitcp.crc && vitcp.payload_len == 0'
# docs/vipl.md's command, as written, from a folder laid out like the source tree
mkdir -p "$dir/tools/wireshark"
cp "$lua" "$dir/tools/wireshark/vitcp.lua"
cp "$dir/cap.pcapng" "$dir/vitcp.pcapng"
(cd "$dir" &&
tshark -X lua_script:tools/wireshark/vitcp.lua -o vitcp.ports:1024-65535 -Y vitcp -r vitcp.pcapng
) >"$dir/doc.out" 2>/dev/null
if grep -q 'ConnectRequest' "$dir/doc.out" && grep -q 'RdmaWrite' "$dir/doc.out"; then
	echo "ok: docs/vipl.md's tshark command"
else
	echo "FAIL: docs/vipl.md's tshark command decodes no VI/TCP"
	fails=$((fails + 1))
fi
exit $((fails > 0))
