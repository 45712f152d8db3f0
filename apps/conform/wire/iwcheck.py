"""The wire checks' common part: a scripted iWARP peer with its own encoding (iwarp.py), no
RNIC under it; the regions the wire target (iwarp-conform --wire-target) tells it in its MPA
Reply; the target's report of each connection's end; and the catalogue of exchanges that
both iwarp-conform-wire (conformance of any device) and softrnic's adversary
(tests/adversary/hostile.py) run. Each exchange returns what the target must do:
  ("term", (layer, etype, ecode) | ANY)  a Terminate with that code, then a close
  ("refused", None)                      an MPA Reply with R set (or none), then a close
  ("closed", None)                       the handshake refused: the target just closes
  ("served", None | "W changed" | "events")
                                         a legal exchange, checked by the exchange itself"""
import socket
import struct
import time

import iwarp as iw

TERM_WAIT = 5.0       # a Terminate or a close must come within this
ANY = "any"           # any Terminate code


class Fail(Exception):
    pass


class NoEnhanced(Fail):
    """The target answered an RFC 6581 (revision 2) Request with revision 1: RFC 6581 is
    optional, so a check that needs it does not apply."""


class Info:
    """The wire target's regions (wt_proto.h), from the MPA Reply's private data."""

    def __init__(self, pd):
        if len(pd) < 88:
            raise Fail(f"reply private data of {len(pd)} octets, want 88")
        magic, self.stale, self.recv_count, self.recv_len, self.ird, _ = \
            struct.unpack(">6I", pd[:24])
        if magic != 0x41445631:
            raise Fail("reply private data is not a wire target's")
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
        # an exchange whose Read Requests are legal until one of them is not sets it: the
        # responses to the legal ones are then no sign of a refused Read served
        self.legal_reads = False

    def request(self, flags, rev=1, pdata=b"", pd_len=None):
        self.s.sendall(iw.mpa_frame(iw.REQ_KEY, flags, rev, pdata, pd_len))

    def reply(self):
        """The MPA Reply as (flags, rev, pdata), or None if the target closed instead."""
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
            raise Fail("the target closed instead of replying to a valid MPA Request")
        flags, rev, pdata = r
        if flags & iw.FLAG_R:
            raise Fail("the target rejected a valid MPA Request")
        crc_on = bool((flags | (iw.FLAG_C if crc else 0)) & iw.FLAG_C)
        self.tx = iw.Tx(crc_on, bool(flags & iw.FLAG_M))
        self.rx = iw.Rx(crc_on, markers)
        self.rx.feed(self.buf)
        self.buf = b""
        if p2p:
            if rev == 1:
                raise NoEnhanced("the device answers an RFC 6581 (revision 2) Request with "
                                 "revision 1: no enhanced connection setup")
            if rev != 2 or not flags & iw.FLAG_S:
                raise Fail(f"reply rev {rev} flags 0x{flags:02x} to an enhanced Request")
            pdata = pdata[4:]
        self.info = Info(pdata)
        return self.info

    def _recv_some(self, end):
        left = end - time.time()
        if left <= 0:
            raise Silent("nothing from the target in time")
        self.s.settimeout(left)
        try:
            data = self.s.recv(65536)
        except socket.timeout:
            raise Silent("nothing from the target in time")
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
        """Yields the ULPDUs the target sends until it closes; raises on a silent target."""
        end = time.time() + wait
        while True:
            got = self.rx.next_ulpdu()
            if got:
                u, crc_ok = got
                if not crc_ok:
                    raise Fail("the target sent an FPDU with a bad CRC")
                yield iw.parse_ulpdu(u)
                continue
            if not self._recv_some(end):
                return

    def terminate(self, wait=TERM_WAIT):
        """The target's Terminate (its other ULPDUs skipped, the octets of its Read
        Responses counted in read_octets); then it must close."""
        term = None
        self.read_octets = 0
        for d in self.ulpdus(wait):
            if d["opcode"] == iw.READ_RESP and d["tagged"]:
                self.read_octets += len(d["payload"])
            if d["opcode"] == iw.TERMINATE and not d["tagged"]:
                if term is not None:
                    raise Fail("two Terminates")
                term = d
        return term

    def closed(self, wait=TERM_WAIT):
        """True once the target closes; fails on a silent open connection."""
        end = time.time() + wait
        while self._recv_some(end):
            pass
        return True

    def close(self):
        self.s.close()


# ---------------------------------------------------------------------------------------
# The catalogue. Exchanges that get as far as an RDMA connection also name whether W may
# change ("W changed") or the target's QP must meet an error ("events").

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


def terminate_garbage(p):
    """A Terminate of nonsense: the target's QP ends; it must not answer with a Terminate."""
    p.handshake()
    p.send(iw.terminate(0xF, 0xF, 0xEE, hdrct=0xFFFF, extra=b"\xff" * 40))
    if p.terminate() is not None:
        raise Fail("the target answered a Terminate with a Terminate")
    return "served", "events"


# ---------------------------------------------------------------------------------------
# checks after each attack


def code_str(c):
    return "/".join("*" if x == ANY else str(x) for x in c[:2]) + "/" + \
        ("*" if c[2] == ANY else f"0x{c[2]:02x}")


class Silent(Fail):
    """The target neither answered nor closed in time."""


def check_term(p, want):
    try:
        term = p.terminate()
    except Silent:
        raise Silent(f"no Terminate (want {code_str(want) if want != ANY else 'one'}) and no "
                     f"close within {TERM_WAIT:.0f} s" + served(p))
    if p.read_octets and not p.legal_reads:
        raise Fail("the refused exchange was answered" + served(p))
    if term is None:
        raise Fail(f"no Terminate (want {code_str(want) if want != ANY else 'one'}); "
                   "the target just closed")
    got = (term["layer"], term["etype"], term["ecode"])
    if want != ANY:
        for g, w in zip(got, want):
            if w != ANY and g != w:
                raise Fail(f"Terminate {code_str(got)}, RFC wants {code_str(want)}")
    if term["qn"] != iw.QN_TERMINATE or term["msn"] != 1:
        raise Fail(f"Terminate on QN {term['qn']} MSN {term['msn']}")
    return code_str(got)


def served(p):
    """What the target gave out in Read Responses to an exchange it must refuse."""
    n = 0 if p.legal_reads else getattr(p, "read_octets", 0)
    return f"; the target sent {n} octets of Read Response" if n else ""


def check_refused(p):
    """A refused handshake: an MPA Reply with R set (or none), then the close."""
    r = p.reply()
    if r is not None and not r[0] & iw.FLAG_R:
        raise Fail("the target accepted a request it must refuse")
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


class Report:
    """The wire target's line for one connection (wt_target.c):
    conn N peer PORT dev DEV: guards ok|VIOLATION (...), W same|changed, recv N,
      echo drops N, events [A; B], wc [recv:X; send:Y]"""

    # a connection's normal end, the informational events, and "unflushed" (WRs still
    # posted after the target moved its QP to Error: a flush error, which the verbs half's
    # checks judge, not an answer to what the peer sent)
    IGNORED_EVENTS = {"RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_ESTABLISHED", "COMM_EST",
                      "SQ_DRAINED", "QP_LAST_WQE_REACHED", "unflushed"}

    def __init__(self, line):
        self.line = line
        head, _, body = line.partition(": ")
        words = head.split()
        self.port = int(words[3])
        self.dev = words[5] if len(words) > 5 else "?"
        self.guards = body.split(", W ", 1)[0]   # "guards ok" or what was violated
        self.guards_ok = self.guards == "guards ok"
        self.w_changed = ", W changed," in body
        self.events = self._list(body, "events [")
        self.wcs = self._list(body, "wc [")

    @staticmethod
    def _list(body, key):
        inner = body.split(key, 1)[1].split("]", 1)[0] if key in body else ""
        return [x for x in inner.split("; ") if x]

    def errors(self):
        """The QP's errors the application saw: async events and connection manager events
        other than a normal end, and completion statuses other than a flush."""
        ev = [e for e in self.events if e not in self.IGNORED_EVENTS]
        wc = [w for w in self.wcs if not w.endswith(":WR_FLUSH_ERR")]
        return ev, wc


def report_key(line):
    """The peer port a report line is about, or None for any other line."""
    if not line.startswith("conn ") or " peer " not in line:
        return None
    try:
        return int(line.split(" peer ")[1].split()[0].rstrip(":"))
    except (IndexError, ValueError):
        return None
