#!/usr/bin/env bash
# softrnic demo: encode a realistic iWARP session with our MPA/DDP/RDMAP code, write it to
# demo-out/demo.pcap, decode it back with our own decoder, then check what Wireshark (tshark)
# makes of the same file, and end with one verdict line.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh >/dev/null
BUILD=${BUILD:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" >/dev/null
fi
ninja -C "$BUILD" apps/softrnic-demo apps/iwarp-dump >/dev/null

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

echo
if [ "$demo_ok" = 1 ] && [ "$tshark_ok" = 1 ]; then
  fpdus=$(grep -c 'Good CRC32$' <<<"$tshark_out" || true)
  echo "VERDICT: PASS - all $fpdus FPDUs have a good CRC32 in tshark; our decoder and tshark" \
       "both show exactly the fields we encoded"
else
  echo "VERDICT: FAIL - see the MISMATCH/FAIL lines above"
  exit 1
fi
