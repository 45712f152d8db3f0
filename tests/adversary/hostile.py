#!/usr/bin/env python3
"""A hostile iWARP peer: runs a catalogue of attacks against iwarp-conform's wire target over
plain TCP sockets, with its own MPA/DDP/RDMAP encoding (apps/conform/wire: iwarp.py, and the
catalogue it shares with iwarp-conform-wire in iwcheck.py). After every attack it checks that
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
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "apps", "conform", "wire"))
import iwarp as iw  # noqa: E402
from iwcheck import (  # noqa: E402
    ONE_FPDU, Fail, Peer, Report, crc_error, echo, edges_legal,
    hs_bad_key, hs_bad_rev, hs_half_then_close, hs_long_pdata, hs_pd_len_lies,
    hs_reject_flag, hs_reply_key, hs_reserved_bits_rev1, one_fpdu_attack, outcome,
    p2p_no_rtr, p2p_rtr_echo, p2p_wrong_rtr, read_zero_then_huge, report_key, send_mo_gap,
    terminate_garbage, write_then_read_back)

NAME = "adversary"
REPORT_WAIT = 10.0    # the server's report of a connection's end
MPA_TIMEOUT = 10.0    # softrnic drops a peer silent before its MPA Request after this
STALL_RCVBUF = 4096   # the receive buffer of an attacker that stops reading
STALL_READS = 2000    # 8 MB of Read Responses: more than any socket buffers hold


def read_ird_overflow(p):
    """Read Requests while the attacker reads nothing: the target cannot send the responses,
    its IRD fills, and the next Request is one too many (RDMA Verbs 6.5: 0x1203). Meanwhile
    (the stream stalled) a real client must still be served."""
    p.handshake()
    p.legal_reads = True   # the first IRD of them are answered
    to, stag, _ = p.info.region["W"]
    p.s.sendall(b"".join(p.tx.fpdu(iw.read_request(i + 1, 0x99, 0, 4096, stag, to))
                         for i in range(STALL_READS)))
    real_client(p.cfg, "during_stall")
    return "term", (iw.LAYER_DDP, iw.DDP_UNTAGGED, 0x03)


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
            if code != (iw.LAYER_DDP, iw.DDP_UNTAGGED, 0x02):
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
            port = report_key(line)
            if port is not None:
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
    r = Report(line)
    if not r.guards_ok:
        raise Fail("report: " + line)
    if w_changed != r.w_changed:
        raise Fail("W " + ("unchanged" if w_changed else "changed") + ": " + line)
    ev, wc = r.errors()
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
    return "term", (iw.LAYER_LLP, 0, 0x03)


def marker_missing(p):
    """FPDUs without the markers the target asked for: the first 512-octet boundary finds
    FPDU octets where a marker must be (RFC 5044 8: 0x03)."""
    p.handshake(crc=False)
    p.tx.markers = False
    for m in range(1, 4):
        p.send(iw.untagged(iw.SEND, iw.QN_SEND, m, 0, b"n" * 200))
    return "term", (iw.LAYER_LLP, 0, 0x03)


MARKER_ATTACKS = [marker_echo, marker_bad_pointer, marker_missing]

if __name__ == "__main__":
    sys.exit(main())
