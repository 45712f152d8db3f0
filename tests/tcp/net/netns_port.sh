#!/bin/sh
# softrnic-port on net_af_packet against the Linux kernel: two namespaces of our own joined by
# a veth; softrnic-port owns veth-a in A (no kernel address there), the kernel has
# 198.51.100.2/24 on veth-b in B. The kernel's `ping -c 5` of our 198.51.100.1 gets 5 replies,
# `ip neigh` in B shows our MAC, our own --ping of the kernel (poll thread mode) gets
# replies, and the pcap file decodes with tshark (ARP reply and ICMP echo replies in it).
# Needs root (exit 77 otherwise). Usage: netns_port.sh SOFTRNIC_PORT
TEST_NAME=tcp_net_netns
PORT_BIN=$1
[ "$(id -u)" -eq 0 ] || { echo "$TEST_NAME: needs root: skipped"; exit 77; }
command -v ping >/dev/null 2>&1 || { echo "$TEST_NAME: no ping (iputils-ping): skipped"; exit 77; }
command -v tshark >/dev/null 2>&1 || { echo "$TEST_NAME: no tshark: skipped"; exit 77; }
[ -x "$PORT_BIN" ] || { echo "$TEST_NAME: FAIL: no softrnic-port at '$PORT_BIN'" >&2; exit 1; }

TMP=$(mktemp -d /tmp/srn-net.XXXXXX)
NSA=srn-net-a-$$
NSB=srn-net-b-$$
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() {
	echo "$TEST_NAME: FAIL: $*" >&2
	for f in "$TMP"/*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; } >&2; done
	exit 1
}

ip netns add "$NSA" || fail "ip netns add"
ip netns add "$NSB" || fail "ip netns add"
ip -n "$NSA" link add veth-a type veth peer name veth-b netns "$NSB" || fail "veth"
ip -n "$NSB" addr add 198.51.100.2/24 dev veth-b || fail "address in B"
for ns in "$NSA" "$NSB"; do ip -n "$ns" link set lo up; done
ip -n "$NSA" link set veth-a up || fail "veth-a up"
ip -n "$NSB" link set veth-b up || fail "veth-b up"

# port [ARGS...]: softrnic-port in A over veth-a, capturing into $TMP/cap.pcap (bounded by
# its --seconds). exec: in the background, $! is softrnic-port itself.
port() {
	exec ip netns exec "$NSA" env \
		SOFTRNIC_DPDK_EAL="--no-huge -m 128 --vdev=net_af_packet0,iface=veth-a,qdisc_bypass=1" \
		SOFTRNIC_DPDK_IP=198.51.100.1/24 SOFTRNIC_DPDK_PCAP="$TMP/cap.pcap" \
		"$PORT_BIN" "$@"
}

# 1. The kernel pings us.
(port --seconds 20 >"$TMP/port.log" 2>&1) &
PID=$!
i=0
until grep -q "softrnic-port: up" "$TMP/port.log" 2>/dev/null; do
	kill -0 "$PID" 2>/dev/null || fail "softrnic-port exited early"
	[ "$i" -lt 100 ] || fail "softrnic-port not up after 10 s"
	sleep 0.1
	i=$((i + 1))
done
MAC=$(sed -n 's/.* mac \([0-9a-f:]*\) .*/\1/p' "$TMP/port.log" | head -1)
[ -n "$MAC" ] || fail "no MAC in softrnic-port's output"
ip netns exec "$NSB" ping -c 5 -i 0.2 -W 2 -w 10 198.51.100.1 >"$TMP/ping.log" 2>&1 ||
	fail "kernel ping of softrnic-port failed"
grep -q "5 packets transmitted, 5 received" "$TMP/ping.log" || fail "not 5 of 5 replies"
ip -n "$NSB" neigh show 198.51.100.1 dev veth-b | grep -qi "lladdr $MAC" ||
	fail "kernel neighbour table has not our MAC $MAC: $(ip -n "$NSB" neigh show)"
kill -TERM "$PID"
wait "$PID" || fail "softrnic-port exit status $?"
PID=
grep -q "icmp_echo_out=5" "$TMP/port.log" || fail "softrnic-port counted not 5 echo replies"
grep -q "arp_replies_out=[1-9]" "$TMP/port.log" || fail "no ARP reply counted"

# 2. The capture decodes: our ARP reply and 5 echo replies from our IP.
n=$(tshark -r "$TMP/cap.pcap" -Y "icmp.type == 0 && ip.src == 198.51.100.1" 2>/dev/null | wc -l)
[ "$n" -eq 5 ] || fail "pcap: $n echo replies from us, want 5"
n=$(tshark -r "$TMP/cap.pcap" -Y "arp.opcode == 2 && arp.src.proto_ipv4 == 198.51.100.1" \
	2>/dev/null | wc -l)
[ "$n" -ge 1 ] || fail "pcap: no ARP reply from us"
n=$(tshark -r "$TMP/cap.pcap" -Y "icmp.type == 8 && ip.dst == 198.51.100.1" 2>/dev/null | wc -l)
[ "$n" -eq 5 ] || fail "pcap: $n echo requests to us, want 5"

# 3. We ping the kernel (our ARP request, the kernel's reply, our echo requests), this time
# with the port's poll thread driving the stack.
ip -n "$NSB" neigh flush dev veth-b
(port --thread --seconds 10 --ping 198.51.100.2 --count 3 --interval 100 \
	>"$TMP/ourping.log" 2>&1) ||
	fail "softrnic-port --ping of the kernel failed"
grep -q "3 sent, 3 received" "$TMP/ourping.log" || fail "our ping: not 3 of 3"
echo "$TEST_NAME: ok"
