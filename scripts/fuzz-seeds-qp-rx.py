#!/usr/bin/env python3
"""Writes the seed corpus of the qp_rx fuzz target (tests/fuzz/fuzz_qp_rx.c): one input per
operation a peer may send a connected QP, each a valid exchange under a configuration that
accepts it, in the target's input format (3 configuration octets, then records; the target
frames ULPDUs with CRC and markers and fills in the real STags itself). Some seeds are run
with CRC, some with markers, some through the lending transport or the handoff's pre-read
octets, and a few are deliberately broken (bad CRC, bad framing, a peer's Terminate).
Usage: scripts/fuzz-seeds-qp-rx.py [OUT_DIR] (default tests/fuzz/corpus/qp_rx)."""
import hashlib
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# c0 bits
CRC, MARKERS, SRQ, LEND, TOLERANT, MW, READ, PRE = (1 << i for i in range(8))
# c1: receives posted (0..3) | IRD index << 2 | these
W_RWRITE, W_RREAD, QP_WRITE, QP_READ = 0x10, 0x20, 0x40, 0x80
# c2
ZERO, W_INV, FIN = 0x01, 0x02, 0x04
# symbolic STags (the target's names)
N_R, N_W, N_MW, N_X, N_K = 1, 2, 3, 4, 5

OP_WRITE, OP_READ_REQ, OP_READ_RESP, OP_SEND, OP_SEND_INV, OP_SEND_SE, OP_TERM = 0, 1, 2, 3, 4, 5, 7
OP_IMM = 0xC


def ctrl(tagged, last, opcode):
    return bytes([(0x80 if tagged else 0) | (0x40 if last else 0) | 0x01, 0x40 | opcode])


def untagged(opcode, qn, msn, mo, payload=b"", last=True, inv=0):
    return ctrl(False, last, opcode) + struct.pack(">IIII", inv, qn, msn, mo) + payload


def tagged(opcode, stag, to, payload, last=True):
    return ctrl(True, last, opcode) + struct.pack(">IQ", stag, to) + payload


def read_req(msn, sink_stag, sink_to, size, src_stag, src_to):
    body = struct.pack(">IQIIQ", sink_stag, sink_to, size, src_stag, src_to)
    return untagged(OP_READ_REQ, 1, msn, 0, body)


FILL_UNIT = 512  # QP_RX_FILL_UNIT


def fpdu(ulpdu, kind=0, fill=0):
    """fill: octets the target appends to the ULPDU, a multiple of FILL_UNIT (< 32 units)."""
    return bytes([kind | (fill // FILL_UNIT) << 2]) + struct.pack(">H", len(ulpdu)) + ulpdu


def raw(data):
    return fpdu(data, 2)


def barrier(post_recv=False, post_read=False, poll=False):
    return bytes([3 | (4 if post_recv else 0) | (8 if post_read else 0) | (0x10 if poll else 0)])


def cfg(c0, c1, c2):
    return bytes([c0, c1, c2])


def data(n, seed=0):
    return bytes((seed + i * 7) & 0xff for i in range(n))


def seeds():
    send = fpdu(untagged(OP_SEND, 0, 1, 0, data(40)))
    yield "send-crc", cfg(CRC, 2, FIN | 0x28) + send
    yield "send-markers", cfg(MARKERS, 2, FIN | 0x50) + send
    yield "send-crc-markers-lend", cfg(CRC | MARKERS | LEND, 2, FIN | 0x18) + send
    yield "send-srq-pre", cfg(SRQ | PRE, 3, FIN | 0x30) + send
    yield "send-two-segments", cfg(CRC, 1, FIN) + \
        fpdu(untagged(OP_SEND, 0, 1, 0, data(24), last=False)) + \
        fpdu(untagged(OP_SEND, 0, 1, 24, data(16, 24)))
    yield "send-se-then-barrier-recv", cfg(0, 1, FIN | 0x40) + \
        fpdu(untagged(OP_SEND_SE, 0, 1, 0, data(8))) + barrier(post_recv=True, poll=True) + \
        fpdu(untagged(OP_SEND, 0, 2, 0, data(60)))
    yield "send-inv-then-write", cfg(CRC, 1 | QP_WRITE | W_RWRITE, W_INV | FIN) + \
        fpdu(untagged(OP_SEND_INV, 0, 1, 0, data(12), inv=N_W)) + \
        fpdu(tagged(OP_WRITE, N_W, 0, data(16)))
    yield "send-inv-window", cfg(MW, 1 | QP_WRITE, FIN) + \
        fpdu(untagged(OP_SEND_INV, 0, 1, 0, data(12), inv=N_MW)) + \
        fpdu(tagged(OP_WRITE, N_MW, 0, data(16)))
    yield "send-too-long", cfg(CRC, 1, FIN) + fpdu(untagged(OP_SEND, 0, 1, 0, data(100)))
    yield "send-no-recv", cfg(CRC | TOLERANT, 0, FIN) + send
    yield "write-mr", cfg(CRC, QP_WRITE | W_RWRITE, FIN | 0x08) + \
        fpdu(tagged(OP_WRITE, N_W, 16, data(200)))
    yield "write-mr-markers-lend", cfg(MARKERS | LEND, QP_WRITE | W_RWRITE, FIN) + \
        fpdu(tagged(OP_WRITE, N_W, 0, data(256)))
    yield "write-zero-based", cfg(0, QP_WRITE | W_RWRITE, ZERO | FIN) + \
        fpdu(tagged(OP_WRITE, N_W, 0, data(64)))
    yield "write-window", cfg(CRC | MW, QP_WRITE, FIN) + \
        fpdu(tagged(OP_WRITE, N_MW, 8, data(100)))
    yield "write-window-zero-based", cfg(MW, QP_WRITE, ZERO | FIN) + \
        fpdu(tagged(OP_WRITE, N_MW, 0, data(128)))
    yield "write-no-access", cfg(CRC, QP_WRITE, FIN) + fpdu(tagged(OP_WRITE, N_W, 0, data(32)))
    yield "write-then-imm", cfg(CRC, 1 | QP_WRITE | W_RWRITE, FIN) + \
        fpdu(tagged(OP_WRITE, N_W, 0, data(32))) + \
        fpdu(untagged(OP_IMM, 0, 1, 0, struct.pack(">Q", 0x1122334455667788)))
    # RFC 7306 Immediate Data as a prefix (kind 1) of the next Send, and out of order
    imm_prefix = fpdu(untagged(OP_IMM, 0, 1, 0, struct.pack(">IB3x", 0x0badcafe, 1)))
    yield "imm-prefix-send", cfg(CRC, 1, FIN) + imm_prefix + \
        fpdu(untagged(OP_SEND, 0, 2, 0, data(20)))
    yield "imm-prefix-then-write", cfg(0, 1 | QP_WRITE | W_RWRITE, FIN) + imm_prefix + \
        fpdu(tagged(OP_WRITE, N_W, 0, data(20)))
    yield "read-req", cfg(CRC, (1 << 2) | QP_READ, FIN | 0x20) + \
        fpdu(read_req(1, 0x7700, 0x1000, 64, N_X, 16))
    yield "read-req-window-markers", cfg(MARKERS | MW, (2 << 2) | QP_READ, FIN) + \
        fpdu(read_req(1, 0x7700, 0, 128, N_MW, 0))
    yield "read-req-two-ird1", cfg(0, (1 << 2) | QP_READ | W_RREAD, FIN) + \
        fpdu(read_req(1, 0x7700, 0, 32, N_W, 0)) + fpdu(read_req(2, 0x7700, 32, 32, N_W, 32))
    yield "read-resp", cfg(CRC | READ, QP_WRITE, FIN) + \
        fpdu(tagged(OP_READ_RESP, N_K, 32, data(64)))
    yield "read-resp-two-segments-lend", cfg(READ | LEND | MARKERS, QP_WRITE, FIN | 0x38) + \
        fpdu(tagged(OP_READ_RESP, N_K, 32, data(40), last=False)) + \
        fpdu(tagged(OP_READ_RESP, N_K, 72, data(24)))
    yield "read-resp-second-read", cfg(CRC | READ, QP_WRITE, FIN) + \
        fpdu(tagged(OP_READ_RESP, N_K, 32, data(64))) + barrier(post_read=True) + \
        fpdu(tagged(OP_READ_RESP, N_K, 128, b""), fill=6144)
    # payloads above RN_RX_DIRECT_MIN: the transport reads them straight into their target
    # (after one large FPDU the QP's reads stop at the next one's head: the second goes direct)
    yield "write-mr-direct", cfg(0, QP_WRITE | W_RWRITE, FIN | 0x40) + \
        fpdu(tagged(OP_WRITE, N_W, 100, data(16)), fill=8192) + \
        fpdu(tagged(OP_WRITE, N_W, 0, data(16)), fill=8192)
    yield "send-direct", cfg(0, 2, FIN | 0x20) + \
        fpdu(untagged(OP_SEND, 0, 1, 0, data(8))) + \
        fpdu(untagged(OP_SEND, 0, 2, 0, data(40)), fill=7168)
    yield "read-resp-direct-lend", cfg(LEND, QP_WRITE, FIN) + barrier(post_read=True) + \
        fpdu(tagged(OP_READ_RESP, N_K, 128, b""), fill=6144)
    yield "read-req-big", cfg(CRC, (1 << 2) | QP_READ, FIN | 0x08) + \
        fpdu(read_req(1, 0x7700, 0, 8000, N_X, 100))
    yield "terminate-from-peer", cfg(CRC, 2, 0) + \
        fpdu(untagged(OP_TERM, 2, 1, 0, bytes([0x20, 0x02, 0x00, 0x00])))
    yield "bad-crc", cfg(CRC, 2, 0) + fpdu(untagged(OP_SEND, 0, 1, 0, data(40)), kind=1)
    yield "bad-framing", cfg(CRC, 2, 0) + send + raw(b"\xff\xf0" + data(30))
    yield "bad-msn", cfg(0, 2, FIN) + fpdu(untagged(OP_SEND, 0, 5, 0, data(4)))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "fuzz", "corpus", "qp_rx")
    os.makedirs(out, exist_ok=True)
    for _name, blob in seeds():
        with open(os.path.join(out, hashlib.sha1(blob).hexdigest()[:16]), "wb") as f:
            f.write(blob)


if __name__ == "__main__":
    main()
