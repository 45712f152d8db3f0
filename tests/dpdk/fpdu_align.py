#!/usr/bin/env python3
"""MPA alignment check (RFC 5044 5): every TCP segment that carries payload after the MPA
exchange starts with an FPDU, unless the FPDU before it is longer than the segment (a record
longer than the MSS may be split). Reads `tshark -T fields -e ip.src -e tcp.srcport -e
tcp.seq -e tcp.len -e tcp.payload` lines (relative sequence numbers) on stdin; prints the
misaligned segments; exit 1 when there is any, 2 when no FPDU stream was found."""
import bisect
import sys

streams = {}
for line in sys.stdin:
    f = line.split()
    if len(f) < 5 or int(f[3]) == 0:
        continue
    streams.setdefault((f[0], f[1]), []).append((int(f[2]), bytes.fromhex(f[4])))

bad = checked = 0
for key, segs in streams.items():
    data = {}
    for seq, p in segs:
        for i, b in enumerate(p):
            data.setdefault(seq + i, b)
    pos = 1
    key_bytes = bytes(data.get(pos + i, 0) for i in range(16))
    if not key_bytes.startswith(b"MPA ID "):
        continue
    pd_len = data[pos + 18] << 8 | data[pos + 19]
    pos += 20 + pd_len  # the MPA Request / Reply; FPDUs follow
    bounds, longest = {}, 0
    while pos + 1 in data:
        u = data[pos] << 8 | data[pos + 1]
        n = 2 + u + ((4 - ((2 + u) & 3)) & 3) + 4
        bounds[pos] = n
        pos += n
    starts = sorted(bounds)
    mss = max(len(p) for _, p in segs)
    for seq, p in sorted(segs):
        if not starts or seq < starts[0]:
            continue
        checked += 1
        if seq in bounds:
            continue
        i = bisect.bisect_right(starts, seq) - 1
        rec = bounds[starts[i]] if i >= 0 else 0
        if rec > mss:  # inside a record longer than any segment: split at the MSS
            continue
        bad += 1
        if bad <= 10:
            print(f"{key[0]}:{key[1]} seq {seq} len {len(p)}: inside the FPDU at "
                  f"{starts[i]} ({rec} octets)")
print(f"{checked} segments checked, {bad} do not start with an FPDU")
sys.exit(2 if checked == 0 else 1 if bad else 0)
