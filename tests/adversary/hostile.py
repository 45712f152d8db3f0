#!/usr/bin/env python3
"""A hostile iWARP peer: runs a catalogue of attacks against adv_target over plain TCP
sockets, with its own MPA/DDP/RDMAP encoding (iwarp.py). After every attack it checks that
  - the answer is the one the RFCs name: the Terminate's layer, error type and code (RFC 5040
    4.8, RFC 5041 7, RFC 5044 8, RFC 6581), then the connection closed by the server; or the
    handshake refused and the connection closed;
  - the server reported the connection's end with its guard pages and protected regions
    intact, and, where its QP met an error, an asynchronous event;
  - the server is alive and still serves a real client (adv_client) to the end.

Usage: hostile.py [--only NAME,...] [--suite plain|markers] ADDR PORT SERVER_LOG SERVER_PID
                  CLIENT_CMD...
CLIENT_CMD is the command that runs adv_client; "ADDR PORT TAG" is appended to it."""
import argparse
import os
import select
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iwarp as iw  # noqa: E402

NAME = "adversary"
TERM_WAIT = 5.0       # a Terminate or a close must come within this
REPORT_WAIT = 10.0    # the server's report of a connection's end
MPA_TIMEOUT = 10.0    # softrnic drops a peer silent before its MPA Request after this
ANY = "any"           # any Terminate code
STALL_RCVBUF = 4096   # the receive buffer of an attacker that stops reading
STALL_READS = 2000    # 8 MB of Read Responses: more than any socket buffers hold


class Fail(Exception):
    pass


class Info:
    """adv_target's regions (adv_proto.h), from the MPA Reply's private data."""

    def __init__(self, pd):
        if len(pd) < 88:
            raise Fail(f"reply private data of {len(pd)} octets, want 88")
        magic, self.stale, self.recv_count, self.recv_len, self.ird, _ = \
            struct.unpack(">6I", pd[:24])
        if magic != 0x41445631:
            raise Fail("reply private data is not adv_target's")
        self.region = {}
        for i, name in enumerate("WRLF"):
            self.region[name] = struct.unpack(">QII", pd[24 + 16 * i:40 + 16 * i])


class Peer:
    """One TCP connection to the target and the FPDU streams on it."""

    def __init__(self, cfg, rcvbuf=None):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.settimeout(TERM_WAIT)
        self.s.connect((cfg.addr, cfg.port))
        self.port = self.s.getsockname()[1]
        self.buf = b""
        self.msn = {iw.QN_SEND: 1, iw.QN_READ_REQ: 1, iw.QN_TERMINATE: 1}
        self.info = None
        self.cfg = cfg

    def request(self, flags, rev=1, pdata=b"", pd_len=None):
        self.s.sendall(iw.mpa_frame(iw.REQ_KEY, flags, rev, pdata, pd_len))

    def reply(self):
        """The MPA Reply as (flags, rev, pdata), or None if the server closed instead."""
        end = time.time() + TERM_WAIT
        while True:
            got = iw.parse_mpa_frame(self.buf)
            if got:
                key, flags, rev, pdata, used = got
                if key != iw.REP_KEY:
                    raise Fail(f"reply key {key!r}")
                self.buf = self.buf[used:]
                return flags, rev, pdata
            if not self._recv_some(end):
                return None

    def handshake(self, crc=True, markers=False, p2p=False):
        """A correct rev 1 exchange, or with p2p an RFC 6581 one (rev 2, an IRD/ORD block
        offering a zero-length RDMA Write as the RTR); sets up the FPDU streams."""
        flags = (iw.FLAG_C if crc else 0) | (iw.FLAG_M if markers else 0)
        if p2p:
            self.request(flags | iw.FLAG_S, rev=2, pdata=struct.pack(
                ">HH", iw.V2_P2P | iw.V2_ZERO_RTR | 4, iw.V2_WRITE_RTR | 4))
        else:
            self.request(flags)
        r = self.reply()
        if r is None:
            raise Fail("server closed instead of replying to a valid MPA Request")
        flags, rev, pdata = r
        if flags & iw.FLAG_R:
            raise Fail("server rejected a valid MPA Request")
        crc_on = bool((flags | (iw.FLAG_C if crc else 0)) & iw.FLAG_C)
        self.tx = iw.Tx(crc_on, bool(flags & iw.FLAG_M))
        self.rx = iw.Rx(crc_on, markers)
        self.rx.feed(self.buf)
        self.buf = b""
        if p2p:
            if rev != 2 or not flags & iw.FLAG_S:
                raise Fail(f"reply rev {rev} flags 0x{flags:02x} to an enhanced Request")
            pdata = pdata[4:]
        self.info = Info(pdata)
        return self.info

    def _recv_some(self, end):
        left = end - time.time()
        if left <= 0:
            raise Fail("nothing from the server in time")
        self.s.settimeout(left)
        try:
            data = self.s.recv(65536)
        except socket.timeout:
            raise Fail("nothing from the server in time")
        except ConnectionResetError:
            return False
        if not data:
            return False
        if self.info is None:
            self.buf += data
        else:
            self.rx.feed(data)
        return True

    def send(self, ulpdu, **kw):
        self.s.sendall(self.tx.fpdu(ulpdu, **kw))

    def send_msg(self, payload, qn=iw.QN_SEND, opcode=iw.SEND, **kw):
        u = iw.untagged(opcode, qn, self.msn[qn], 0, payload, **kw)
        self.msn[qn] += 1
        self.send(u)

    def ulpdus(self, wait=TERM_WAIT):
        """Yields the ULPDUs the server sends until it closes; raises on a silent server."""
        end = time.time() + wait
        while True:
            got = self.rx.next_ulpdu()
            if got:
                u, crc_ok = got
                if not crc_ok:
                    raise Fail("the server sent an FPDU with a bad CRC")
                yield iw.parse_ulpdu(u)
                continue
            if not self._recv_some(end):
                return

    def terminate(self, wait=TERM_WAIT):
        """The server's Terminate (its other ULPDUs skipped); then it must close."""
        term = None
        for d in self.ulpdus(wait):
            if d["opcode"] == iw.TERMINATE and not d["tagged"]:
                if term is not None:
                    raise Fail("two Terminates")
                term = d
        return term

    def closed(self, wait=TERM_WAIT):
        """True once the server closes; fails on a silent open connection."""
        end = time.time() + wait
        while self._recv_some(end):
            pass
        return True

    def close(self):
        self.s.close()


# ---------------------------------------------------------------------------------------
# The catalogue. Each attack returns what the target must do:
#   ("term", (layer, etype, ecode) | ANY)  a Terminate with that code, then a close
#   ("closed", None)                       the handshake refused: the server just closes
#   ("served", None)                       a legal exchange, checked by the attack itself
# Attacks that get as far as an RDMA connection also name whether W may change.

T = iw


def read_req(p, region, off, size, sink_stag=0x1234, sink_to=0, src_stag=None, src_to=None):
    to, stag, _ = p.info.region[region]
    u = iw.read_request(p.msn[iw.QN_READ_REQ], sink_stag, sink_to, size,
                        stag if src_stag is None else src_stag,
                        to + off if src_to is None else src_to)
    p.msn[iw.QN_READ_REQ] += 1
    p.send(u)


def hs_bad_key(p):
    p.s.sendall(b"MPA ID Req Frxme" + struct.pack(">BBH", iw.FLAG_C, 1, 0))
    return "closed", None


def hs_bad_rev(p):
    p.request(iw.FLAG_C, rev=9)
    return "refused", None


def hs_long_pdata(p):
    p.request(iw.FLAG_C, pdata=b"x" * 600)
    return "refused", None


def hs_pd_len_lies(p):
    p.request(iw.FLAG_C, pdata=b"x" * 8, pd_len=0xFFFF)
    p.s.shutdown(socket.SHUT_WR)
    return "closed", None


def hs_reserved_bits_rev1(p):
    """RFC 5044 7.1: Res bits are not checked on reception; in rev 1 the RFC 6581 S bit is one
    of them, so the Request is a plain rev 1 one: a rev 1 Reply, no IRD/ORD block."""
    p.request(iw.FLAG_C | iw.FLAG_S | 0x0F, rev=1, pdata=b"\x00\x04\x00\x04")
    r = p.reply()
    if r is None or r[0] & (iw.FLAG_R | iw.FLAG_S) or r[1] != 1:
        raise Fail(f"reply {r and (hex(r[0]), r[1])} to a rev 1 Request with Res bits set")
    Info(r[2])
    return "served", None


def hs_reply_key(p):
    p.s.sendall(iw.mpa_frame(iw.REP_KEY, iw.FLAG_C, 1))
    return "closed", None


def hs_half_then_close(p):
    p.s.sendall(iw.REQ_KEY[:9])
    p.s.shutdown(socket.SHUT_WR)
    return "closed", None


def hs_reject_flag(p):
    p.request(iw.FLAG_C | iw.FLAG_R)
    return "refused", None


def p2p_rtr_echo(p):
    """RFC 6581: the zero-length RDMA Write RTR first, then a legal Send is echoed."""
    p.handshake(p2p=True)
    p.send(iw.tagged(iw.WRITE, 0, 0))
    return echo_checked(p)


def p2p_no_rtr(p):
    """RFC 6581: a Send where the RTR must come is answered with No Matching RTR (0x07)."""
    p.handshake(p2p=True)
    p.send_msg(b"not an RTR")
    return "term", (T.LAYER_LLP, 0, 0x07)


def p2p_wrong_rtr(p):
    """RFC 6581: the RTR must be of the type the Reply chose (a zero-length Write here):
    a zero-length Read Request instead is No Matching RTR."""
    p.handshake(p2p=True)
    read_req(p, "W", 0, 0, sink_stag=0, src_stag=0, src_to=0)
    return "term", (T.LAYER_LLP, 0, 0x07)


def crc_error(p):
    p.handshake()
    u = iw.untagged(iw.SEND, iw.QN_SEND, 1, 0, b"y" * 16)
    p.send(u, bad_crc=True)
    return "term", (T.LAYER_LLP, 0, 0x02)


def send_mo_gap(p):
    p.handshake()
    p.send(iw.untagged(iw.SEND, iw.QN_SEND, 1, 0, b"a" * 16, last=False))
    p.send(iw.untagged(iw.SEND, iw.QN_SEND, 1, 200, b"b" * 16))
    return "term", (T.LAYER_DDP, T.DDP_UNTAGGED, 0x04)


# One FPDU after a correct handshake, built from the target's regions (i: Info), and the
# Terminate the RFCs name for it: RFC 5040 4.8 (RDMAP), RFC 5041 7 (DDP), RFC 5044 8 (LLP).
Z = b"z" * 8
OPER, PROT = (T.LAYER_RDMAP, T.RDMAP_OPERATION), (T.LAYER_RDMAP, T.RDMAP_PROTECTION)
DDP_T, DDP_U = (T.LAYER_DDP, T.DDP_TAGGED), (T.LAYER_DDP, T.DDP_UNTAGGED)


def w_at(i, region, off, data, **kw):
    """A Write into region at offset off (negative: before it)."""
    to, stag, _ = i.region[region]
    return iw.tagged(iw.WRITE, stag, to + off, data, **kw)


def rr_at(i, region, off, size, sink_to=0, src_stag=None, src_to=None):
    """A Read Request (MSN 1) for size octets of region at offset off."""
    to, stag, _ = i.region[region]
    return iw.read_request(1, 0x1234, sink_to, size, stag if src_stag is None else src_stag,
                           to + off if src_to is None else src_to)


def send(payload, **kw):
    return iw.untagged(iw.SEND, iw.QN_SEND, 1, 0, payload, **kw)


def send_inv(stag):
    return iw.untagged(iw.SEND_INV, iw.QN_SEND, 1, 0, Z, inv_stag=stag)


ONE_FPDU = [
    ("ulpdu_tiny", lambda i: b"\x41\x43\x00\x00", (T.LAYER_DDP, 0, 0x00)),
    ("ddp_version_untagged", lambda i: send(Z, dv=2), DDP_U + (0x06,)),
    ("ddp_version_tagged", lambda i: w_at(i, "W", 0, Z, dv=0), DDP_T + (0x04,)),
    ("rdmap_version", lambda i: send(Z, rv=0), OPER + (0x05,)),
    ("opcode_reserved", lambda i: iw.untagged(0xF, iw.QN_SEND, 1, 0, Z), OPER + (0x06,)),
    ("atomic_request", lambda i: iw.untagged(0xA, 1, 1, 0, b"\0" * 52), OPER + (0x06,)),
    ("send_tagged", lambda i: iw.tagged(iw.SEND, i.region["W"][1], i.region["W"][0], Z),
     OPER + (0x06,)),
    ("write_untagged", lambda i: iw.untagged(iw.WRITE, iw.QN_SEND, 1, 0, Z), OPER + (0x06,)),
    ("qn_invalid", lambda i: iw.untagged(iw.SEND, 5, 1, 0, Z), DDP_U + (0x01,)),
    ("terminate_on_send_queue", lambda i: iw.untagged(iw.TERMINATE, iw.QN_SEND, 1, 0, Z),
     DDP_U + (0x01,)),
    ("msn_range", lambda i: iw.untagged(iw.SEND, iw.QN_SEND, 1000, 0, Z), DDP_U + (0x03,)),
    ("send_too_long", lambda i: send(b"L" * (i.recv_len + 1)), DDP_U + (0x05,)),
    ("send_huge_fpdu", lambda i: send(b"H" * 65000), DDP_U + (0x05,)),
    ("send_mo_beyond", lambda i: iw.untagged(iw.SEND, iw.QN_SEND, 1, 0xFFFFFFF0, Z),
     DDP_U + (0x04,)),
    ("send_inv_stale", lambda i: send_inv(i.stale), PROT + (0x00,)),
    ("send_inv_foreign", lambda i: send_inv(i.region["F"][1]), PROT + (0x03,)),
    # RDMA Verbs 7.4.2: an STag without remote rights cannot be remotely invalidated
    ("send_inv_local_only", lambda i: send_inv(i.region["L"][1]), PROT + (0x02,)),
    # nor an ibv_reg_mr region (docs/verbs.md, D52: only fast-registered MRs, type-2 windows)
    ("send_inv_reg_mr", lambda i: send_inv(i.region["W"][1]), PROT + (0x02,)),
    ("write_invalid_stag", lambda i: iw.tagged(iw.WRITE, 0xDEADBE00, 0, Z), DDP_T + (0x00,)),
    ("write_stale_stag", lambda i: iw.tagged(iw.WRITE, i.stale, i.region["W"][0], Z),
     DDP_T + (0x00,)),
    ("write_past_end", lambda i: w_at(i, "W", 4096 - 8, Z * 2), DDP_T + (0x01,)),
    ("write_before_start", lambda i: w_at(i, "W", -8, Z * 2), DDP_T + (0x01,)),
    ("write_to_wrap", lambda i: iw.tagged(iw.WRITE, i.region["W"][1], 2**64 - 8, Z * 2),
     DDP_T + (0x03,)),
    # RFC 5041 has no code for a tagged buffer without the right asked for; RFC 5040 4.8 names
    # it among RDMAP's protection errors (access rights violation)
    ("write_read_only", lambda i: w_at(i, "R", 0, Z), PROT + (0x02,)),
    ("write_local_only", lambda i: w_at(i, "L", 0, Z), PROT + (0x02,)),
    ("write_foreign_pd", lambda i: w_at(i, "F", 0, Z), DDP_T + (0x02,)),
    ("read_invalid_stag", lambda i: rr_at(i, "W", 0, 64, src_stag=0xDEADBE00), PROT + (0x00,)),
    ("read_past_end", lambda i: rr_at(i, "W", 4000, 200), PROT + (0x01,)),
    ("read_huge", lambda i: rr_at(i, "W", 0, 0xFFFFFFFF), PROT + (0x01,)),
    ("read_local_only", lambda i: rr_at(i, "L", 0, 64), PROT + (0x02,)),
    ("read_foreign_pd", lambda i: rr_at(i, "F", 0, 64), PROT + (0x03,)),
    ("read_src_to_wrap", lambda i: rr_at(i, "W", 0, 64, src_to=2**64 - 8), PROT + (0x04,)),
    ("read_sink_to_wrap", lambda i: rr_at(i, "W", 0, 64, sink_to=2**64 - 8), PROT + (0x04,)),
    ("read_req_short", lambda i: iw.untagged(iw.READ_REQ, iw.QN_READ_REQ, 1, 0, b"r" * 10),
     OPER + (0xFF,)),
    ("read_resp_unsolicited", lambda i: iw.tagged(iw.READ_RESP, i.region["W"][1],
                                                  i.region["W"][0], Z), OPER + (0x06,)),
]


def one_fpdu_attack(name, build, code):
    def attack(p):
        p.handshake()
        p.send(build(p.info))
        return "term", code
    attack.__name__ = name
    return attack


def write_then_read_back(p):
    """A legal Write of the whole of W in uneven segments, then a Read Request for it: the
    Read Response must carry exactly what was written."""
    info = p.handshake()
    data = bytes((i * 13 + 5) & 0xFF for i in range(4096))
    for off, n in ((0, 1000), (1000, 1), (1001, 3095)):
        p.send(w_at(p.info, "W", off, data[off:off + n], last=(off + n == 4096)))
    read_req(p, "W", 0, 4096, sink_stag=0x777, sink_to=0x10000)
    got = bytearray(4096)
    seen = 0
    for d in p.ulpdus():
        if d["opcode"] == iw.TERMINATE:
            raise Fail(f"Terminate {d['layer']}/{d['etype']}/0x{d['ecode']:02x} for a legal Write")
        if d["opcode"] == iw.READ_RESP:
            if d["stag"] != 0x777:
                raise Fail(f"Read Response to STag 0x{d['stag']:x}")
            off = d["to"] - 0x10000
            got[off:off + len(d["payload"])] = d["payload"]
            seen += len(d["payload"])
            if d["last"]:
                break
    if seen != 4096 or bytes(got) != data:
        raise Fail(f"Read Response gave {seen} octets, {'equal' if bytes(got) == data else 'different'}")
    del info
    return "served", "W changed"


def echo(p):
    """A legal Send: the target echoes it back."""
    p.handshake()
    return echo_checked(p)


def echo_checked(p):
    msg = b"an echo through our own encoder!"
    p.send_msg(msg)
    for d in p.ulpdus():
        if d["opcode"] in (iw.SEND, iw.SEND_SE) and not d["tagged"]:
            if d["payload"] != msg:
                raise Fail("echo differs")
            return "served", None
        if d["opcode"] == iw.TERMINATE:
            raise Fail("Terminate for a legal Send")
    raise Fail("no echo")


def edges_legal(p):
    """The last octets of W by Write and by Read, and zero-length ones at its end: all legal."""
    p.handshake()
    to, stag, ln = p.info.region["W"]
    p.send(w_at(p.info, "W", ln - 3, b"end"))
    p.send(w_at(p.info, "W", ln, b""))
    read_req(p, "W", ln - 3, 3, sink_stag=0x55, sink_to=0x1000)
    read_req(p, "W", ln, 0, sink_stag=0x56, sink_to=0x2000)
    got = {}
    for d in p.ulpdus():
        if d["opcode"] == iw.TERMINATE:
            code = code_str((d["layer"], d["etype"], d["ecode"]))
            raise Fail(f"Terminate {code} for legal edge accesses")
        if d["opcode"] == iw.READ_RESP:
            got[d["stag"]] = d["payload"]
            if len(got) == 2:
                break
    if got.get(0x55) != b"end" or got.get(0x56) != b"":
        raise Fail(f"Read Responses at W's end: {got}")
    return "served", "W changed"


def read_zero_then_huge(p):
    p.handshake()
    read_req(p, "W", 0, 0)
    read_req(p, "W", 0, 0xFFFFFFFF)
    return "term", (T.LAYER_RDMAP, T.RDMAP_PROTECTION, 0x01)


def read_ird_overflow(p):
    """Read Requests while the attacker reads nothing: the target cannot send the responses,
    its IRD fills, and the next Request is one too many (RDMA Verbs 6.5: 0x1203). Meanwhile
    (the stream stalled) a real client must still be served."""
    p.handshake()
    to, stag, _ = p.info.region["W"]
    p.s.sendall(b"".join(p.tx.fpdu(iw.read_request(i + 1, 0x99, 0, 4096, stag, to))
                         for i in range(STALL_READS)))
    real_client(p.cfg, "during_stall")
    return "term", (T.LAYER_DDP, T.DDP_UNTAGGED, 0x03)


def terminate_garbage(p):
    """A Terminate of nonsense: the target's QP ends; it must not answer with a Terminate."""
    p.handshake()
    p.send(iw.terminate(0xF, 0xF, 0xEE, hdrct=0xFFFF, extra=b"\xff" * 40))
    if p.terminate() is not None:
        raise Fail("the target answered a Terminate with a Terminate")
    return "served", "events"


def garbage_stream(p):
    p.handshake(crc=False)
    x = 987654321
    junk = bytearray()
    for _ in range(70000):   # any ULPDU_Length it starts with is complete
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        junk.append((x >> 16) & 0xFF)
    try:
        p.s.sendall(bytes(junk))
    except (BrokenPipeError, ConnectionResetError):
        pass
    return "term-or-close", None


def send_flood(p):
    """1,000 Sends in one burst at 4 posted receives: each echoed, or the Terminate for a
    Send without a receive (DDP untagged, no buffer), never anything else."""
    p.handshake()
    burst = b"".join(p.tx.fpdu(iw.untagged(iw.SEND, iw.QN_SEND, m, 0, b"f" * 32))
                     for m in range(1, 1001))
    p.s.sendall(burst)
    echoes = 0
    for d in p.ulpdus(wait=20):
        if d["opcode"] == iw.TERMINATE:
            code = (d["layer"], d["etype"], d["ecode"])
            if code != (T.LAYER_DDP, T.DDP_UNTAGGED, 0x02):
                raise Fail(f"flood answered with Terminate {code}")
            return "served", "events"
        echoes += 1
        if echoes == 1000:
            return "served", None
    raise Fail(f"{echoes} echoes and no Terminate")


ATTACKS = [
    hs_bad_key, hs_bad_rev, hs_long_pdata, hs_pd_len_lies, hs_reserved_bits_rev1,
    hs_reply_key, hs_half_then_close, hs_reject_flag,
    echo, write_then_read_back, edges_legal, p2p_rtr_echo, p2p_no_rtr, p2p_wrong_rtr,
    crc_error, send_mo_gap, read_zero_then_huge,
] + [one_fpdu_attack(*a) for a in ONE_FPDU] + [
    read_ird_overflow, terminate_garbage, garbage_stream, send_flood,
]
STALLING = [read_ird_overflow]


# ---------------------------------------------------------------------------------------
# checks after each attack


def code_str(c):
    return "/".join("*" if x == ANY else str(x) for x in c[:2]) + "/" + \
        ("*" if c[2] == ANY else f"0x{c[2]:02x}")


def check_term(p, want):
    term = p.terminate()
    if term is None:
        raise Fail(f"no Terminate (want {code_str(want) if want != ANY else 'one'}); "
                   "the server just closed")
    got = (term["layer"], term["etype"], term["ecode"])
    if want != ANY:
        for g, w in zip(got, want):
            if w != ANY and g != w:
                raise Fail(f"Terminate {code_str(got)}, RFC wants {code_str(want)}")
    if term["qn"] != iw.QN_TERMINATE or term["msn"] != 1:
        raise Fail(f"Terminate on QN {term['qn']} MSN {term['msn']}")
    return code_str(got)


def check_refused(p):
    """A refused handshake: an MPA Reply with R set (or none), then the close."""
    r = p.reply()
    if r is not None and not r[0] & iw.FLAG_R:
        raise Fail("the server accepted a request it must refuse")
    p.closed()
    return "rejected" if r is not None else "closed"


def outcome(p, kind, want):
    if kind == "term":
        return "Terminate " + check_term(p, want)
    if kind == "refused":
        return check_refused(p)
    if kind == "closed":
        p.closed()
        return "closed"
    if kind == "term-or-close":
        try:
            term = p.terminate()
        except Fail:
            raise
        return "Terminate " + code_str((term["layer"], term["etype"], term["ecode"])) \
            if term else "closed"
    return "served"


class Server:
    def __init__(self, log, pid):
        self.log = log
        self.pid = pid
        self.pos = 0
        self.lines = {}

    def alive(self):
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            raise Fail("the server is gone")
        self.scan()

    def scan(self):
        with open(self.log, "rb") as f:
            f.seek(self.pos)
            data = f.read()
        keep = data.rfind(b"\n") + 1
        self.pos += keep
        for line in data[:keep].decode(errors="replace").splitlines():
            if line.startswith("VIOLATION"):
                raise Fail("server: " + line)
            if line.startswith("conn ") and " peer " in line:
                port = int(line.split(" peer ")[1].split(":")[0])
                self.lines[port] = line

    def report(self, port):
        end = time.time() + REPORT_WAIT
        while time.time() < end:
            self.alive()
            if port in self.lines:
                return self.lines.pop(port)
            time.sleep(0.02)
        raise Fail(f"no report from the server for the connection from port {port}")


def check_report(line, w_changed, events):
    if "guards ok" not in line:
        raise Fail("report: " + line)
    if w_changed != ("W changed" in line):
        raise Fail("W " + ("unchanged" if w_changed else "changed") + ": " + line)
    ev = [e for e in line.split("events [")[1].split("]")[0].split("; ")
          if e and e != "RDMA_CM_EVENT_DISCONNECTED"]
    wc = [w for w in line.split("wc [")[1].split("]")[0].split("; ")
          if w and "Flushed" not in w]
    if events and not ev and not wc:
        raise Fail("the QP's error reached nobody (no async event, no completion error): "
                   + line)


def real_client(cfg, tag):
    try:
        r = subprocess.run(cfg.client + [cfg.addr, str(cfg.port), tag], capture_output=True,
                           text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise Fail("the real client hung")
    if r.returncode != 0 or "client ok" not in r.stdout:
        raise Fail(f"the real client failed ({r.returncode}): {r.stderr.strip()[-300:]}")


def run_attack(cfg, server, attack):
    p = Peer(cfg, rcvbuf=STALL_RCVBUF if attack in STALLING else None)
    try:
        kind, want = attack(p)
        result = outcome(p, kind, want)
        rdma = p.info is not None
    finally:
        p.close()
    if rdma:
        w_changed = want == "W changed"
        events = kind == "term" or want == "events"
        check_report(server.report(p.port), w_changed, events)
    server.alive()
    real_client(cfg, attack.__name__)
    return result


def silent_peer(cfg):
    s = socket.create_connection((cfg.addr, cfg.port), timeout=5)
    return s, time.time()


def check_silent(s, since):
    """The silent peer opened first must have been dropped on the MPA timer."""
    s.settimeout(max(0.1, since + MPA_TIMEOUT + 5 - time.time()))
    try:
        if s.recv(100) in (b"",):
            return
        raise Fail("the server sent something to a silent peer")
    except ConnectionResetError:
        return
    except socket.timeout:
        raise Fail(f"a peer silent for {MPA_TIMEOUT + 5:.0f} s is still connected")
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--suite", default="plain", choices=["plain", "markers"])
    ap.add_argument("addr")
    ap.add_argument("port", type=int)
    ap.add_argument("log")
    ap.add_argument("pid", type=int)
    ap.add_argument("client", nargs=argparse.REMAINDER)
    cfg = ap.parse_args()
    server = Server(cfg.log, cfg.pid)
    attacks = ATTACKS if cfg.suite == "plain" else MARKER_ATTACKS
    if cfg.only:
        names = cfg.only.split(",")
        attacks = [a for a in attacks if a.__name__ in names]
    silent = silent_peer(cfg) if not cfg.only and cfg.suite == "plain" else None
    failed = 0
    for a in attacks:
        t0 = time.time()
        try:
            result = run_attack(cfg, server, a)
            print(f"{NAME}: ok   {a.__name__:24} {result} ({time.time() - t0:.2f} s)", flush=True)
        except (Fail, OSError) as e:
            failed += 1
            print(f"{NAME}: FAIL {a.__name__:24} {e}", flush=True)
    if silent:
        try:
            check_silent(*silent)
            print(f"{NAME}: ok   silent_peer              dropped on the MPA timer", flush=True)
        except Fail as e:
            failed += 1
            print(f"{NAME}: FAIL silent_peer {e}", flush=True)
    print(f"{NAME}: {len(attacks) - failed} of {len(attacks)} attacks answered right"
          + (f", {failed} FAILED" if failed else ""), flush=True)
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------
# markers: the target runs with SOFTRNIC_MPA=markers, so every FPDU we send carries them


def marker_echo(p):
    p.handshake(crc=False)
    if not p.tx.markers:
        raise Fail("the target did not ask for markers")
    msg = bytes(range(256)) * 3
    p.send_msg(msg[:p.info.recv_len])
    p.send_msg(msg[:p.info.recv_len])
    for d in p.ulpdus():
        if d["opcode"] == iw.TERMINATE:
            raise Fail("Terminate for Sends with correct markers")
        if d["opcode"] == iw.SEND:
            return "served", None
    raise Fail("no echo")


def marker_bad_pointer(p):
    """A marker whose FPDUPTR points into the middle of the FPDU (RFC 5044 8: 0x03)."""
    p.handshake(crc=False)
    fp = bytearray(p.tx.fpdu(iw.untagged(iw.SEND, iw.QN_SEND, 1, 0, b"m" * 200)))
    fp2 = bytearray(p.tx.fpdu(iw.untagged(iw.SEND, iw.QN_SEND, 2, 0, b"m" * 200)))
    fp3 = bytearray(p.tx.fpdu(iw.untagged(iw.SEND, iw.QN_SEND, 3, 0, b"m" * 200)))
    stream = fp + fp2 + fp3
    # the second marker of the stream sits at stream offset 512
    struct.pack_into(">HH", stream, 512, 0, 3)
    p.s.sendall(bytes(stream))
    return "term", (T.LAYER_LLP, 0, 0x03)


def marker_missing(p):
    """FPDUs without the markers the target asked for: the first 512-octet boundary finds
    FPDU octets where a marker must be (RFC 5044 8: 0x03)."""
    p.handshake(crc=False)
    p.tx.markers = False
    for m in range(1, 4):
        p.send(iw.untagged(iw.SEND, iw.QN_SEND, m, 0, b"n" * 200))
    return "term", (T.LAYER_LLP, 0, 0x03)


MARKER_ATTACKS = [marker_echo, marker_bad_pointer, marker_missing]

if __name__ == "__main__":
    sys.exit(main())
