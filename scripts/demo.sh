#!/usr/bin/env bash
# softrnic demo: encode a realistic iWARP session with our MPA/DDP/RDMAP code, write it to
# demo-out/demo.pcap, decode it back with our own decoder, then show what Wireshark (tshark)
# makes of the same file.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
BUILD=${BUILD:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" >/dev/null
fi
ninja -C "$BUILD" apps/softrnic-demo apps/iwarp-dump >/dev/null

mkdir -p demo-out
echo "== softrnic-demo (our encoder, then our decoder on the pcap)"
"./$BUILD/apps/softrnic-demo" -o demo-out/demo.pcap

# tshark 4.0 cannot "Decode As" iwarp_mpa by port (-d tcp.port==P,iwarp_mpa is refused: the
# dissector is registered only as a TCP heuristic), so the heuristic is enabled explicitly.
TSHARK=(tshark -r demo-out/demo.pcap --enable-heuristic iwarp_mpa_tcp --disable-protocol rpcordma)
echo
echo "== tshark (Wireshark's iWARP dissectors) on demo-out/demo.pcap"
"${TSHARK[@]}" -Y "iwarp_mpa || tcp.flags.syn==1 || tcp.flags.fin==1" 2>/dev/null | cut -c1-120
fpdus=$("${TSHARK[@]}" -T fields -e iwarp_mpa.ulpdulength -Y iwarp_mpa.fpdu 2>/dev/null \
        | tr ',' '\n' | grep -c .)
good=$("${TSHARK[@]}" -V 2>/dev/null | grep -c 'Good CRC32' || true)
bad=$("${TSHARK[@]}" -V 2>/dev/null | grep -c 'Bad CRC32' || true)
echo
echo "tshark: $fpdus FPDUs, $good with Good CRC32, $bad with Bad CRC32"
