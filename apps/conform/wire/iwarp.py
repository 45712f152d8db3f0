"""The iWARP wire as an attacker writes it: MPA frames and FPDUs (RFC 5044, RFC 6581), DDP
segments (RFC 5041), RDMAP messages (RFC 5040, RFC 7306) and CRC32c, encoded here from the
RFCs and independent of softrnic's own codecs, so that a mistake in those cannot hide in
both ends. Every field is a parameter: the catalogue sets them wrong on purpose."""

import struct

REQ_KEY = b"MPA ID Req Frame"
REP_KEY = b"MPA ID Rep Frame"
FLAG_M, FLAG_C, FLAG_R, FLAG_S = 0x80, 0x40, 0x20, 0x10
MARKER_INTERVAL = 512
# the RFC 6581 IRD/ORD block: flags in the IRD and ORD fields
V2_P2P, V2_ZERO_RTR = 0x8000, 0x4000          # IRD field
V2_WRITE_RTR, V2_READ_RTR = 0x8000, 0x4000    # ORD field

# RDMAP opcodes (RFC 5040 4.2, RFC 7306 4)
WRITE, READ_REQ, READ_RESP, SEND, SEND_INV, SEND_SE, SEND_SE_INV, TERMINATE = range(8)
# untagged queues (RFC 5040 4.2)
QN_SEND, QN_READ_REQ, QN_TERMINATE = 0, 1, 2

# Terminate layers and error types (RFC 5040 4.8, RFC 5041 7, RFC 5044 8)
LAYER_RDMAP, LAYER_DDP, LAYER_LLP = 0, 1, 2
RDMAP_PROTECTION, RDMAP_OPERATION = 1, 2
DDP_TAGGED, DDP_UNTAGGED = 1, 2


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data, crc=0):
    """CRC32c (Castagnoli), as iSCSI and MPA use it."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def mpa_frame(key, flags=0, rev=1, pdata=b"", pd_len=None):
    """An MPA Request or Reply frame; pd_len may lie about the private data's length."""
    n = len(pdata) if pd_len is None else pd_len
    return key + struct.pack(">BBH", flags, rev, n) + pdata


def parse_mpa_frame(buf):
    """(key, flags, rev, pdata, octets used) or None while incomplete."""
    if len(buf) < 20:
        return None
    flags, rev, n = struct.unpack(">BBH", buf[16:20])
    if len(buf) < 20 + n:
        return None
    return buf[:16], flags, rev, buf[20:20 + n], 20 + n


def ddp_ctrl(tagged, last=True, dv=1):
    return (0x80 if tagged else 0) | (0x40 if last else 0) | (dv & 3)


def rdmap_ctrl(opcode, rv=1):
    return ((rv & 3) << 6) | (opcode & 0xF)


def tagged(opcode, stag, to, payload=b"", last=True, dv=1, rv=1):
    """A tagged DDP segment (Write, Read Response) carrying payload."""
    return struct.pack(">BBIQ", ddp_ctrl(True, last, dv), rdmap_ctrl(opcode, rv), stag,
                       to & 0xFFFFFFFFFFFFFFFF) + payload


def untagged(opcode, qn, msn, mo=0, payload=b"", last=True, inv_stag=0, dv=1, rv=1):
    """An untagged DDP segment (Send, Read Request, Terminate) carrying payload."""
    return struct.pack(">BBIIII", ddp_ctrl(False, last, dv), rdmap_ctrl(opcode, rv), inv_stag,
                       qn, msn, mo) + payload


def read_request(msn, sink_stag, sink_to, size, src_stag, src_to, **kw):
    body = struct.pack(">IQIIQ", sink_stag, sink_to & 0xFFFFFFFFFFFFFFFF, size, src_stag,
                       src_to & 0xFFFFFFFFFFFFFFFF)
    return untagged(READ_REQ, QN_READ_REQ, msn, 0, body, **kw)


def terminate(layer, etype, ecode, msn=1, hdrct=0, extra=b""):
    body = struct.pack(">BBH", (layer << 4) | etype, ecode, hdrct) + extra
    return untagged(TERMINATE, QN_TERMINATE, msn, 0, body)


class Tx:
    """The sending side of an FPDU stream: framing, pad, CRC and (when the peer asked for
    them) markers at every 512th octet of the stream, counted from the first FPDU."""

    def __init__(self, crc, markers):
        self.crc = crc
        self.markers = markers
        self.pos = 0

    def fpdu(self, ulpdu, bad_crc=False, ulpdu_len=None):
        """One FPDU around ulpdu; ulpdu_len may lie about its length, bad_crc spoils it."""
        n = len(ulpdu) if ulpdu_len is None else ulpdu_len
        body = struct.pack(">H", n & 0xFFFF) + ulpdu
        body += b"\0" * (-len(body) % 4)
        start = self.pos
        out = bytearray()
        self._put(out, body, start)
        value = crc32c(bytes(out)) if self.crc else 0
        self._put(out, struct.pack("<I", value ^ (1 if bad_crc else 0)), start)
        return bytes(out)

    def _put(self, out, data, start):
        for b in data:
            if self.markers and self.pos % MARKER_INTERVAL == 0:
                out += struct.pack(">HH", 0, (self.pos - start) & 0xFFFF)
                self.pos += 4
            out.append(b)
            self.pos += 1


class Rx:
    """The receiving side: splits the stream into ULPDUs (markers removed, CRC checked)."""

    def __init__(self, crc, markers):
        self.crc = crc
        self.markers = markers
        self.pos = 0
        self.buf = bytearray()

    def feed(self, data):
        for b in data:
            if self.markers and self.pos % MARKER_INTERVAL < 4:
                self.pos += 1
                continue
            self.buf.append(b)
            self.pos += 1

    def next_ulpdu(self):
        """(ulpdu, crc_ok) or None while incomplete. Ignores the markers' values."""
        if len(self.buf) < 2:
            return None
        n = struct.unpack(">H", self.buf[:2])[0]
        total = 2 + n + (-(2 + n) % 4) + 4
        if len(self.buf) < total:
            return None
        fpdu = bytes(self.buf[:total])
        del self.buf[:total]
        ok = not self.crc or struct.unpack("<I", fpdu[-4:])[0] == crc32c(fpdu[:-4])
        return fpdu[2:2 + n], ok


def parse_ulpdu(u):
    """A dict of the DDP/RDMAP fields of one ULPDU."""
    c0, c1 = u[0], u[1]
    d = {"tagged": bool(c0 & 0x80), "last": bool(c0 & 0x40), "dv": c0 & 3,
         "rv": c1 >> 6, "opcode": c1 & 0xF}
    if d["tagged"]:
        d["stag"], d["to"] = struct.unpack(">IQ", u[2:14])
        d["payload"] = u[14:]
    else:
        d["inv"], d["qn"], d["msn"], d["mo"] = struct.unpack(">IIII", u[2:18])
        d["payload"] = u[18:]
    if d["opcode"] == TERMINATE and not d["tagged"] and len(d["payload"]) >= 4:
        p = d["payload"]
        d["layer"], d["etype"], d["ecode"] = p[0] >> 4, p[0] & 0xF, p[1]
        d["hdrct"] = struct.unpack(">H", p[2:4])[0]
    return d
