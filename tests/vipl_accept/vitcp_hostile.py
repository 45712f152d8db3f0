#!/usr/bin/env python3
"""VI/TCP hostile peer (docs/vipl.md "VI/TCP: a hostile peer"): a raw TCP socket speaks
draft-dicecco-vitcp-01 to vt_echo's server and sends what no VIPL would: garbage, malformed CE
headers, unknown types, short lengths, out-of-order segments, RDMA Writes outside the
registered page and under a wrong handle, Read Requests outside it, oversized Sends. Each must
end that connection (or, for the Read, draw a Transmit Error response) while the server lives
on, its guard pages intact; a well-formed Send over the same raw socket is echoed (so the
encoder here is right), and a real VIPL client is served at the end.

usage: vitcp_hostile.py VT_ECHO"""
import os
import socket
import struct
import subprocess
import sys
import time

HDR = 24
SEND, WRITE, READ_REQ, READ_RESP, NOP, CREQ, CACC, CREJ, CNOMATCH = range(9)
EOM, IDV, TRE = 0x80, 0x40, 0x20
RD, RWE, RRE, P2P = 0x0002, 0x0008, 0x0010, 0x0040


def fail(msg):
    print("vitcp_hostile: FAIL: " + msg)
    sys.exit(1)


def seg(typ, flags=EOM, body=b"", msgno=0, offset=0, imm=0, ack=0, posted=0, rerr=0,
        seg_len=None, version=1):
    n = HDR + len(body) if seg_len is None else seg_len
    return struct.pack(">BBHIIIIHH", version, flags | typ, n, offset, imm, msgno, ack, posted,
                       rerr) + body


def ce(attrs, calling=b"raw", called=b"echo", mtu=65536, window=4, called_len=None):
    cl = len(called) if called_len is None else called_len
    return (struct.pack(">HHI", attrs, len(calling), mtu) + calling.ljust(64, b"\0") +
            struct.pack(">HH", window, cl) + called.ljust(64, b"\0"))


def crc32_vitcp(data):
    """§3.6: generator 0x1DB710641, initial ones, complemented, MSB first (D265)."""
    c = 0xFFFFFFFF
    for x in data:
        c ^= x << 24
        for _ in range(8):
            c = ((c << 1) ^ 0xDB710641) if c & 0x80000000 else c << 1
            c &= 0xFFFFFFFF
    return c ^ 0xFFFFFFFF


def creq_with_crc(attrs, good=True):
    """A ConnectRequest with the CRC option and its trailer (§3.5, §3.6)."""
    body = ce(attrs) + struct.pack(">HHH", 1, 4, 0)  # CRC option, End of Option List
    return sealed(seg(CREQ, body=body), good)


def rdma(addr, handle, length):
    return struct.pack(">QII", addr, handle, length)


def recv_seg(s, timeout=5.0):
    """One whole segment (header fields, body), or None when the server closed."""
    s.settimeout(timeout)
    buf = b""
    try:
        while len(buf) < HDR:
            d = s.recv(HDR - len(buf))
            if not d:
                return None
            buf += d
        n = struct.unpack(">H", buf[2:4])[0]
        while len(buf) < n:
            d = s.recv(n - len(buf))
            if not d:
                return None
            buf += d
    except (ConnectionResetError, socket.timeout):
        return None
    f = struct.unpack(">BBHIIIIHH", buf[:HDR])
    return {"type": f[1] & 0x1F, "flags": f[1], "msgno": f[5], "body": buf[HDR:], "raw": buf}


def sealed(s, good=True):
    """Segment s with its trailer (§3.5): Segment Length counts it (D261)."""
    s = s[:2] + struct.pack(">H", len(s) + 4) + s[4:]
    return s + struct.pack(">I", crc32_vitcp(s) ^ (0 if good else 1))


def trailer_good(r):
    """The received segment r ends in the CRC of what precedes it."""
    raw = r["raw"]
    return len(raw) >= HDR + 4 and struct.unpack(">I", raw[-4:])[0] == crc32_vitcp(raw[:-4])


def closed_by_server(s, timeout=5.0):
    """True when the server ends the stream (segments before the end are read and dropped)."""
    end = time.monotonic() + timeout
    s.settimeout(0.5)
    while time.monotonic() < end:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return True
        if not d:
            return True
    return False


class Server:
    def __init__(self, exe, port, crc="0"):
        env = dict(os.environ, SOFTRNIC_VIPL_WIRE="vitcp",
                   SOFTRNIC_VIPL_ADDR="127.0.0.1:%d" % port, SOFTRNIC_VITCP_CRC=crc)
        self.p = subprocess.Popen([exe, "-s"], env=env, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline().split()
        if len(line) != 4 or line[0] != "region":
            fail("server did not start: %r" % line)
        self.addr, self.handle, self.len = int(line[1]), int(line[2]), int(line[3])
        self.port = port

    def alive(self, what):
        if self.p.poll() is not None:
            fail("server died after %s (status %d)" % (what, self.p.returncode))

    def stop(self):
        self.p.terminate()
        self.p.wait(10)


def connect(port):
    deadline = time.monotonic() + 5
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def handshake(port):
    s = connect(port)
    s.sendall(seg(CREQ, body=ce(RD | RWE | RRE), posted=4))
    a = recv_seg(s)
    if a is None or a["type"] != CACC:
        fail("no ConnectAccept for a well-formed ConnectRequest: %r" % a)
    return s


def expect_closed(srv, name, data, after_handshake=True):
    s = handshake(srv.port) if after_handshake else connect(srv.port)
    s.sendall(data)
    if not closed_by_server(s):
        fail(name + ": the server kept the connection")
    s.close()
    srv.alive(name)
    print("ok: " + name)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def crc_handshake(port):
    """A ConnectRequest with the CRC option to a server that takes it: the Accept has the
    option and a good trailer (§3.5, §3.6)."""
    s = connect(port)
    s.sendall(creq_with_crc(RD | RWE | RRE))
    a = recv_seg(s)
    if a is None or a["type"] != CACC or not trailer_good(a) or \
            b"\x00\x01\x00\x04\x00\x00" not in a["body"][140:]:
        fail("SOFTRNIC_VITCP_CRC=1: no ConnectAccept with the CRC option and trailer: %r" % a)
    return s


def crc_phase(exe):
    """The CRC option taken (SOFTRNIC_VITCP_CRC=1): every segment after the CE segments
    carries a trailer both ways; a bad one ends the connection; a request without the option
    still connects, without trailers; real clients with and without the option are served."""
    srv = Server(exe, free_port(), crc="1")
    try:
        s = crc_handshake(srv.port)
        s.sendall(sealed(seg(SEND, body=b"crc ping", msgno=1, posted=4)))
        e = recv_seg(s)
        if e is None or e["type"] != SEND or not trailer_good(e) or \
                e["body"][:-4] != b"crc ping":
            fail("a Send with a good CRC was not echoed with a good one: %r" % e)
        s.close()
        print("ok: CRC echo")
        s = crc_handshake(srv.port)
        s.sendall(sealed(seg(SEND, body=b"crc pong", msgno=1, posted=4), good=False))
        if not closed_by_server(s):
            fail("a Send with a bad CRC: the server kept the connection")
        s.close()
        srv.alive("a bad CRC")
        print("ok: bad CRC closes")
        s = crc_handshake(srv.port)
        s.sendall(seg(SEND, body=b"no trailer", msgno=1, posted=4))
        if not closed_by_server(s):
            fail("a Send without its trailer: the server kept the connection")
        s.close()
        print("ok: missing trailer closes")
        s = handshake(srv.port)  # no CRC option asked: none used
        s.sendall(seg(SEND, body=b"plain", msgno=1, posted=4))
        e = recv_seg(s)
        if e is None or e["type"] != SEND or e["body"] != b"plain":
            fail("CRC server, request without the option: %r" % e)
        s.close()
        print("ok: CRC not asked, not used")
        for crc in ("1", "0"):
            env = dict(os.environ, SOFTRNIC_VIPL_WIRE="vitcp", SOFTRNIC_VITCP_CRC=crc,
                       SOFTRNIC_VIPL_ADDR="127.0.0.1:%d" % free_port())
            c = subprocess.run([exe, "-c", "127.0.0.1:%d" % srv.port], env=env,
                               capture_output=True, text=True, timeout=30)
            if c.returncode != 0 or "echo ok" not in c.stdout:
                fail("a real client (SOFTRNIC_VITCP_CRC=%s): %d %s %s" %
                     (crc, c.returncode, c.stdout, c.stderr))
            srv.alive("a real client")
        print("ok: real clients with and without the CRC")
    finally:
        srv.stop()


def crc_requester(exe):
    """vt_echo -c with SOFTRNIC_VITCP_CRC=1 against a raw server: its ConnectRequest offers
    the CRC with a good trailer, and once the Accept takes it, its Send carries one too."""
    lis = socket.socket()
    lis.bind(("127.0.0.1", 0))
    lis.listen(1)
    lis.settimeout(10)
    env = dict(os.environ, SOFTRNIC_VIPL_WIRE="vitcp", SOFTRNIC_VITCP_CRC="1",
               SOFTRNIC_VIPL_ADDR="127.0.0.1:%d" % free_port())
    c = subprocess.Popen([exe, "-c", "127.0.0.1:%d" % lis.getsockname()[1]], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        s, _ = lis.accept()
        r = recv_seg(s)
        if r is None or r["type"] != CREQ or not trailer_good(r) or \
                b"\x00\x01\x00\x04\x00\x00" not in r["body"][140:]:
            fail("SOFTRNIC_VITCP_CRC=1: the ConnectRequest has no CRC option and trailer: %r" % r)
        body = ce(RD | RWE | RRE, calling=b"echo", called=b"raw") + struct.pack(">HHH", 1, 4, 0)
        s.sendall(sealed(seg(CACC, body=body, posted=4)))
        m = recv_seg(s)
        if m is None or m["type"] != SEND or not trailer_good(m) or \
                not m["body"].startswith(b"hello"):
            fail("SOFTRNIC_VITCP_CRC=1: the requester's Send has no good trailer: %r" % m)
        s.sendall(sealed(seg(SEND, body=m["body"][:-4], msgno=1, posted=4)))  # its echo
        out, err = c.communicate(timeout=30)
        if c.returncode != 0 or "echo ok" not in out:
            fail("the requester with the CRC: %d %s %s" % (c.returncode, out, err))
        s.close()
    finally:
        if c.poll() is None:
            c.kill()
            c.wait()
        lis.close()
    print("ok: CRC requester")


def main():
    crc_requester(sys.argv[1])
    crc_phase(sys.argv[1])
    srv = Server(sys.argv[1], free_port())
    a, h, n = srv.addr, srv.handle, srv.len
    try:
        # positive control: a Send is echoed, numbered 1 (D263)
        s = handshake(srv.port)
        s.sendall(seg(SEND, body=b"ping!", msgno=1, posted=4))
        e = recv_seg(s)
        if e is None or e["type"] != SEND or e["body"] != b"ping!" or e["msgno"] != 1:
            fail("a well-formed Send was not echoed: %r" % e)
        s.close()
        srv.alive("the echo")
        print("ok: echo")
        # a peer-to-peer request nobody waits for: ConnectNoMatch (§4.3)
        s = connect(srv.port)
        s.sendall(seg(CREQ, body=ce(RD | P2P)))
        r = recv_seg(s)
        if r is None or r["type"] != CNOMATCH:
            fail("no ConnectNoMatch for an unmatched peer request: %r" % r)
        s.close()
        print("ok: no match")
        # a ConnectRequest with the CRC option: checked, answered without it (D265)
        s = connect(srv.port)
        s.sendall(creq_with_crc(RD | RWE | RRE))
        r = recv_seg(s)
        if r is None or r["type"] != CACC or b"\x00\x01\x00\x04" in r["body"][140:]:
            fail("a ConnectRequest with a good CRC: %r" % r)
        s.close()
        print("ok: CRC option")
        expect_closed(srv, "a ConnectRequest with a bad CRC", creq_with_crc(RD, False), False)
        expect_closed(srv, "garbage before the CE", b"\x09" * 64, False)
        expect_closed(srv, "discriminator length 200",
                      seg(CREQ, body=ce(RD, called_len=200)), False)
        expect_closed(srv, "two reliability levels", seg(CREQ, body=ce(RD | 0x0004)), False)
        expect_closed(srv, "data before the CE", seg(SEND, body=b"x", msgno=1), False)
        expect_closed(srv, "unknown type 0x1f", seg(0x1F, msgno=1))
        expect_closed(srv, "version 2", seg(SEND, body=b"x", msgno=1, version=2))
        expect_closed(srv, "segment length under the header", seg(SEND, msgno=1, seg_len=10))
        expect_closed(srv, "a ConnectRequest while connected", seg(CREQ, body=ce(RD)))
        expect_closed(srv, "message number out of order", seg(SEND, body=b"x", msgno=7))
        expect_closed(srv, "continuation at a wrong offset",
                      seg(SEND, flags=0, body=b"x" * 8, msgno=1) +
                      seg(SEND, body=b"y", msgno=1, offset=100))
        expect_closed(srv, "Send larger than the receive",
                      seg(SEND, body=b"z" * 1000, msgno=1))
        expect_closed(srv, "RDMA Write past the region's end",
                      seg(WRITE, body=rdma(a + n - 8, h, 64) + b"W" * 64, msgno=1))
        expect_closed(srv, "RDMA Write before the region",
                      seg(WRITE, body=rdma(a - 64, h, 64) + b"W" * 64, msgno=1))
        expect_closed(srv, "RDMA Write with a wrong handle",
                      seg(WRITE, body=rdma(a, h ^ 0x5A5A, 16) + b"W" * 16, msgno=1))
        expect_closed(srv, "RDMA Write longer than its RDMA Length",
                      seg(WRITE, body=rdma(a, h, 8) + b"W" * 64, msgno=1))
        expect_closed(srv, "RDMA Write address wrapping around",
                      seg(WRITE, body=rdma(2**64 - 8, h, 64) + b"W" * 64, msgno=1))
        expect_closed(srv, "RDMA Read Response nobody asked for",
                      seg(READ_RESP, body=b"r" * 8, msgno=1))
        expect_closed(srv, "NOP with a payload", seg(NOP, body=b"n"))
        # a Read Request outside the region: a Transmit Error response (D266)
        s = handshake(srv.port)
        s.sendall(seg(READ_REQ, body=rdma(a + n, h, 32), msgno=1))
        r = recv_seg(s)
        if r is None or r["type"] != READ_RESP or not r["flags"] & TRE or r["body"]:
            fail("no Transmit Error response to a Read outside the region: %r" % r)
        # and one inside it is answered with the page's octets
        s.sendall(seg(READ_REQ, body=rdma(a, h, 32), msgno=2))
        r = recv_seg(s)
        if r is None or r["type"] != READ_RESP or r["flags"] & TRE or len(r["body"]) != 32:
            fail("a valid Read Request was not answered: %r" % r)
        s.close()
        srv.alive("the Read Requests")
        print("ok: Read Requests")
        # a segment cut short by the end of the stream
        s = handshake(srv.port)
        s.sendall(seg(SEND, body=b"x" * 100, msgno=1)[:60])
        s.close()
        time.sleep(0.3)
        srv.alive("a truncated segment")
        print("ok: truncated segment")
        # a real client is still served
        env = dict(os.environ, SOFTRNIC_VIPL_WIRE="vitcp", SOFTRNIC_VIPL_ADDR="127.0.0.1:%d" % free_port())
        c = subprocess.run([sys.argv[1], "-c", "127.0.0.1:%d" % srv.port], env=env,
                           capture_output=True, text=True, timeout=30)
        if c.returncode != 0 or "echo ok" not in c.stdout:
            fail("the real client after the attacks: %d %s %s" % (c.returncode, c.stdout,
                                                                 c.stderr))
        srv.alive("the real client")
        print("ok: real client")
    finally:
        srv.stop()
    print("vitcp_hostile: PASS")


if __name__ == "__main__":
    main()
