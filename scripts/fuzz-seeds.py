#!/usr/bin/env python3
"""Builds the initial fuzz corpora from the golden Linux siw captures in shared/traces.

For each capture: the MPA Request and Reply become mpa_frame seeds, each direction's
Full Operation stream becomes an mpa_stream seed (configured with the capture's CRC
setting), and each FPDU's ULPDU becomes an rdmap_ulpdu seed. Needs tshark.
Usage: scripts/fuzz-seeds.py [TRACES_DIR] (default ../shared/traces)."""
import hashlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def streams(pcap):
    """Reassembled payload per (tcp.stream, source), in sequence order, duplicates dropped."""
    out = subprocess.run(
        ["tshark", "-r", pcap, "-o", "tcp.relative_sequence_numbers:FALSE",
         "-T", "fields", "-e", "tcp.stream", "-e", "ip.src", "-e", "tcp.srcport",
         "-e", "tcp.seq", "-e", "tcp.payload", "-Y", "tcp.len > 0"],
        check=True, capture_output=True, text=True).stdout
    segs = {}
    for line in out.splitlines():
        stream, src, port, seq, payload = line.split("\t")
        segs.setdefault((stream, src, port), {})[int(seq)] = bytes.fromhex(payload)
    result = {}
    for key, by_seq in segs.items():
        data, nxt = b"", None
        for seq in sorted(by_seq):
            chunk = by_seq[seq]
            if nxt is not None and seq < nxt:
                chunk = chunk[nxt - seq:]
            data += chunk
            nxt = seq + len(by_seq[seq]) if nxt is None else max(nxt, seq + len(by_seq[seq]))
        result[key] = data
    return result


def save(kind, blob):
    d = os.path.join(CORPUS, kind)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(blob).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(blob)


def ulpdus(stream, crc):
    off = 0
    while off + 2 <= len(stream):
        n = int.from_bytes(stream[off:off + 2], "big")
        total = 2 + n + (-(2 + n) % 4) + (4 if crc else 0)
        if off + total > len(stream):
            return
        yield stream[off + 2:off + 2 + n]
        off += total


def main():
    traces = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "traces")
    pcaps = [os.path.join(dp, f) for dp, _, fs in os.walk(traces) for f in fs if f.endswith(".pcap")]
    for pcap in sorted(pcaps):
        for data in streams(pcap).values():
            if not data.startswith(b"MPA ID "):
                continue
            pd_len = int.from_bytes(data[18:20], "big")
            frame = data[:20 + pd_len]
            crc = bool(data[16] & 0x40)
            save("mpa_frame", bytes([2]) + frame)
            fpdus = data[len(frame):]
            if fpdus:
                # config octet: CRC bit, default head, seed from the file; max ULPDU 0xffff
                save("mpa_stream", bytes([(1 if crc else 0) | 0x30, 0xff, 0xff]) + fpdus[:4096])
                for u in list(ulpdus(fpdus, crc))[:8]:
                    save("rdmap_ulpdu", bytes([0]) + u[:128])


if __name__ == "__main__":
    main()
