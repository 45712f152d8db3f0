#!/usr/bin/env bash
# softrnic demo, in two parts, ending with one verdict line:
#   wire:  encode a realistic iWARP session with our MPA/DDP/RDMAP code, write it to
#          demo-out/demo.pcap, decode it back with our own decoder, then check what Wireshark
#          (tshark) makes of the same file;
#   RDMA:  two processes move data with RDMA over loopback through the verbs and rdma_cm
#          libraries: softrnic-rping (RDMA Read + Write, verified) and softrnic-perf (RDMA Write
#          latency and bandwidth); then the same rping over softrnic's own TCP/IP engine on a
#          DPDK memif link between the two processes (no kernel TCP on the data path).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC2034  # TEST_NAME prefixes the FAIL messages of tests/lib/common.sh
TEST_NAME=demo
# pick_port, wait_listen, start_server/wait_server; a server still running is killed on exit.
. tests/lib/common.sh

bash scripts/deps.sh >/dev/null
BUILD=${BUILD:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" >/dev/null
fi
ninja -C "$BUILD" apps/softrnic-demo apps/iwarp-dump apps/verbs/softrnic-rping \
  apps/verbs/softrnic-perf >/dev/null
RPING=$BUILD/apps/verbs/softrnic-rping
PERF=$BUILD/apps/verbs/softrnic-perf

mkdir -p demo-out
echo "== 1. softrnic-demo: our encoder writes the pcap, our decoder reads it back"
demo_ok=1
"./$BUILD/apps/softrnic-demo" -o demo-out/demo.pcap -e demo-out/demo-expected.tsv || demo_ok=0

echo
echo "== 2. tshark (Wireshark's iWARP dissectors) on demo-out/demo.pcap"
# tests/wire/iwarp_check.py compares tshark's view of every FPDU with what was encoded.
tshark_out=$(python3 tests/wire/iwarp_check.py pcap --list --pcap demo-out/demo.pcap \
             --expect demo-out/demo-expected.tsv --dump "$BUILD/apps/iwarp-dump" 2>&1) \
  && tshark_ok=1 || tshark_ok=0
grep -v '^OK$' <<<"$tshark_out"

wire_ok=0
[ "$demo_ok" = 1 ] && [ "$tshark_ok" = 1 ] && wire_ok=1
fpdus=$(grep -c 'Good CRC32$' <<<"$tshark_out" || true)

now_ms() { echo $(($(date +%s%N) / 1000000)); }

echo
COUNT=10
SIZE=4096
echo "== 3. softrnic-rping: two processes on loopback, $COUNT pings of $SIZE bytes (-V: verified)"
# Each ping: the server RDMA-Reads the client's source buffer, then RDMA-Writes it into the
# client's destination buffer; the client compares the two (rping's protocol, 4 Sends a ping).
rping_ok=0
pick_port
start_server timeout 30 "$RPING" -s -a 127.0.0.1 -p "$PORT" -V
if wait_listen "$PORT"; then
  t0=$(now_ms)
  rc=0
  timeout 30 "$RPING" -c -a 127.0.0.1 -p "$PORT" -C "$COUNT" -S "$SIZE" -V || rc=$?
  t1=$(now_ms)
  src=0
  wait "$SERVER_PID" || src=$?
  SERVER_PID=
  if [ "$rc" = 0 ] && [ "$src" = 0 ]; then
    rping_ok=1
    echo "moved: $COUNT RDMA Reads + $COUNT RDMA Writes of $SIZE bytes" \
         "($((2 * COUNT * SIZE / 1024)) KiB) and $((4 * COUNT)) Sends;" \
         "$COUNT/$COUNT pings verified; $((t1 - t0)) ms including connection setup"
  else
    echo "rping FAILED: client exited $rc, server exited $src"
  fi
else
  echo "rping FAILED: the server is not listening on port $PORT"
fi

echo
echo "== 4. softrnic-perf: RDMA Write latency (8 B) and bandwidth (64 KiB), two processes"
perf_run() { # client options; prints the result table (header + line) or a FAILED line
  local out rc=0 src=0
  pick_port
  # -y: spin with sched_yield(), kinder to a shared machine than a pure busy poll.
  start_server timeout 30 "$PERF" -p "$PORT" -q -y
  wait_listen "$PORT" || { echo "perf FAILED: no server on port $PORT"; return; }
  out=$(timeout 30 "$PERF" -p "$PORT" -q -y "$@" 127.0.0.1 2>&1) || rc=$?
  wait "$SERVER_PID" || src=$?
  SERVER_PID=
  if [ "$rc" = 0 ] && [ "$src" = 0 ]; then
    grep -A1 '#bytes' <<<"$out"
  else
    echo "perf FAILED ($*): client exited $rc, server exited $src: $out"
  fi
}
lat=$(perf_run -t write -l -s 8 -n 2000)
echo "$lat"
bw=$(perf_run -t write -s 65536 -n 5000)
echo "$bw"
perf_ok=1
grep -q FAILED <<<"$lat$bw" && perf_ok=0
lat_us=$(awk 'NR == 2 { print $5 }' <<<"$lat")
bw_mib=$(awk 'NR == 2 { print $4 }' <<<"$bw")

echo
echo "== 5. softrnic-rping over softrnic's own TCP/IP engine: DPDK net_memif between the processes"
# Each process runs the TCP engine on its end of a memif link (198.51.100.1 <-> .2); the kernel
# carries nothing. EAL without hugepages; --no-pci is always added (docs/tcp.md).
dpdk_ok=0
dpdk_note=
ddir=$(mktemp -d /tmp/srn-demo-XXXXXX)
dpdk_run() { # ROLE IP, then the program and its arguments (bounded to 30 s)
  local role=$1 ip=$2
  shift 2
  timeout 30 env SOFTRNIC_TRANSPORT=dpdk SOFTRNIC_DPDK_IP="$ip/24" \
    "SOFTRNIC_DPDK_EAL=--no-huge -m 256 --vdev=net_memif0,role=$role,socket=$ddir/memif.sock" "$@"
}
# A DPDK listener has no kernel socket to wait for: the server logs its listening port to
# SOFTRNIC_DPDK_LISTEN_LOG; the wait ends there, or after 10 s (the client then reports).
start_server dpdk_run server 198.51.100.1 env SOFTRNIC_DPDK_LISTEN_LOG="$ddir/listen.log" \
  "$RPING" -s -a 198.51.100.1 -p 7474 -V 2>"$ddir/server.err"
for _ in $(seq 100); do [ -s "$ddir/listen.log" ] && break; sleep 0.1; done
t0=$(now_ms)
rc=0
dpdk_run client 198.51.100.2 "$RPING" -c -a 198.51.100.1 -p 7474 -C "$COUNT" -S "$SIZE" -V \
  2>"$ddir/client.err" || rc=$?
t1=$(now_ms)
src=0
wait "$SERVER_PID" || src=$?
SERVER_PID=
if [ "$rc" = 0 ] && [ "$src" = 0 ]; then
  dpdk_ok=1
  echo "moved over memif: $COUNT RDMA Reads + $COUNT RDMA Writes of $SIZE bytes;" \
       "$COUNT/$COUNT pings verified; $((t1 - t0)) ms including EAL start and connection setup"
elif grep -Eq 'DPDK EAL could not start|DPDK needs hugepages|built without DPDK' \
     "$ddir/server.err" "$ddir/client.err" 2>/dev/null; then
  dpdk_ok=1
  dpdk_note=" (DPDK could not start here: step 5 skipped)"
  echo "skipped: DPDK cannot start on this machine:"; cat "$ddir/client.err"
else
  echo "rping over DPDK FAILED: client exited $rc, server exited $src"
  cat "$ddir/server.err" "$ddir/client.err"
fi
rm -rf "$ddir"

echo
if [ "$wire_ok" = 1 ] && [ "$rping_ok" = 1 ] && [ "$perf_ok" = 1 ] && [ "$dpdk_ok" = 1 ]; then
  echo "VERDICT: PASS - wire: all $fpdus FPDUs decoded by us and by tshark exactly as encoded," \
       "good CRC32; RDMA: $COUNT/$COUNT rping pings of $SIZE bytes verified between two" \
       "processes; RDMA Write ${lat_us} us typical latency (8 B), ${bw_mib} MiB/s (64 KiB);" \
       "the same rping over softrnic's own TCP on DPDK memif${dpdk_note}"
else
  echo "VERDICT: FAIL - wire $([ "$wire_ok" = 1 ] && echo ok || echo FAILED)," \
       "rping $([ "$rping_ok" = 1 ] && echo ok || echo FAILED)," \
       "perf $([ "$perf_ok" = 1 ] && echo ok || echo FAILED)," \
       "rping over DPDK $([ "$dpdk_ok" = 1 ] && echo ok || echo FAILED); see the lines above"
  exit 1
fi
