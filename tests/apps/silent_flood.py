#!/usr/bin/env python3
"""An attacker's idle TCP connections against softrnic-rping's server (backlog 1), issue 27.
10,000 connections that never complete an MPA Request are opened and held, and a real client
must still get its pings through while the server holds no more than a bounded number of
them (the listener keeps 256 before their MPA Request and drops the oldest for new ones).
  silent   the connections send nothing
  trickle  they send an MPA Request one octet every TRICKLE_GAP seconds (every other one
           announces 200 octets of private data in a whole header and trickles those): no
           octet may keep one alive, so by the MPA timeout (10 s) after a first wave was
           opened the server has dropped every one of it; a second wave trickles while the
           real client is served
Usage: silent_flood.py /path/to/softrnic-rping [silent|trickle]"""
import os
import resource
import socket
import struct
import subprocess
import sys
import time

FLOOD = 10000
KEPT = 256  # RCM_EMBRYONIC_MAX (verbs/rdmacm/rcm_int.h)
MPA_TIMEOUT = 10.0  # RN_CM_DEFAULT_TIMEOUT_MS (rnic/include/rn_cm.h)
TRICKLE_GAP = 2.0
SLOTS = 20  # the trickle's 2 s cycle in 100 ms slots
NAME = "apps_silent_flood"
# "MPA ID Req Frame", no flags, revision 1, PD_Length 200
REQ_HEADER = b"MPA ID Req Frame" + struct.pack("!BBH", 0, 1, 200)


def fail(msg):
    print(f"{NAME}: FAIL: {msg}", flush=True)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listen(port, server, seconds=10):
    end = time.time() + seconds
    while time.time() < end:
        if server.poll() is not None:
            fail(f"server exited ({server.returncode}) before listening")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return  # this probe is one silent connection more
        time.sleep(0.05)
    fail(f"server is not listening on port {port}")


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class Trickler:
    """Each connection's next octet goes out in its slot of the cycle; a send that fails
    means the server dropped the connection."""

    def __init__(self, socks):
        self.socks = socks
        self.todo = [REQ_HEADER if i % 2 == 0 else b"\x5a" * 200 for i in range(len(socks))]
        self.off = [0] * len(socks)
        self.alive = set(range(len(socks)))
        for i in range(1, len(socks), 2):  # the whole header now, the private data later
            self.send(i, REQ_HEADER)
        self.tick = 0

    def send(self, i, data):
        try:
            self.socks[i].send(data)
        except OSError:
            self.alive.discard(i)

    def step(self):
        """One 100 ms slot: an octet on each live connection of the slot."""
        for i in range(self.tick % SLOTS, len(self.socks), SLOTS):
            if i in self.alive and self.off[i] < len(self.todo[i]):
                self.send(i, self.todo[i][self.off[i]:self.off[i] + 1])
                self.off[i] += 1
        self.tick += 1

    def run_for(self, seconds, until=None):
        end = time.time() + seconds
        while time.time() < end and not (until and until()):
            self.step()
            time.sleep(TRICKLE_GAP / SLOTS)

    def still_open(self):
        """Connections the server has not closed or reset (a read says which)."""
        left = 0
        for i in list(self.alive):
            try:
                if self.socks[i].recv(1, socket.MSG_DONTWAIT) == b"":
                    continue
            except BlockingIOError:
                left += 1
            except OSError:
                pass
        return left


def open_wave(port, mode):
    socks = []
    t0 = time.time()
    for i in range(FLOOD):
        s = socket.socket()
        socks.append(s)
        try:
            s.connect(("127.0.0.1", port))
        except OSError as e:
            for x in socks:
                x.close()
            fail(f"the listener turned {mode} connection {i} away: {e}")
    print(f"{NAME}: {FLOOD} {mode} connections open in {time.time() - t0:.2f} s", flush=True)
    return socks


def drop_check(socks, pid, base):
    """A first wave trickles for the MPA timeout and some slack: by then the server must have
    dropped every connection of it, octets still coming in or not."""
    trickler = Trickler(socks)
    held = 0
    t0 = time.time()
    while time.time() - t0 < MPA_TIMEOUT + 3:
        trickler.run_for(0.5)
        held = max(held, open_fds(pid) - base)
    left = trickler.still_open()
    now = open_fds(pid) - base
    for s in socks:
        s.close()
    print(f"{NAME}: after {time.time() - t0:.1f} s of trickling {left} of {FLOOD} connections "
          f"open, the server holding {now} descriptors over its base (at most {held})",
          flush=True)
    if left:
        fail(f"{left} trickling connections outlived the MPA timeout")
    if held > KEPT + 16:
        fail(f"the server held {held} descriptors more than before the flood")
    if now > 16:
        fail(f"the server still holds {now} descriptors more than before the flood")


def run_client(rping, port):
    return subprocess.Popen([rping, "-c", "-a", "127.0.0.1", "-p", str(port), "-C", "5", "-V",
                             "-t", "20"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def main():
    global NAME
    rping = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "silent"
    if mode not in ("silent", "trickle"):
        fail(f"unknown mode {mode}")
    NAME = f"apps_{mode}_flood"
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FLOOD + 1024, FLOOD + 1024))
    except (ValueError, OSError) as e:
        fail(f"cannot allow {FLOOD + 1024} descriptors (needs root): {e}")
    port = free_port()
    server = subprocess.Popen([rping, "-s", "-a", "127.0.0.1", "-p", str(port), "-C", "5",
                               "-V", "-t", "60"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    socks = []
    try:
        wait_listen(port, server)
        base = open_fds(server.pid)
        if mode == "trickle":
            drop_check(open_wave(port, mode), server.pid, base)
        socks = open_wave(port, mode)
        trickler = Trickler(socks) if mode == "trickle" else None
        held = 0
        for _ in range(10):  # the server accepts them all, keeping at most KEPT
            if trickler:
                trickler.step()
            time.sleep(0.1)
            held = max(held, open_fds(server.pid) - base)
        if held > KEPT + 16:
            fail(f"the server held {held} descriptors more than before the flood")
        t0 = time.time()
        client = run_client(rping, port)
        if trickler:
            trickler.run_for(60, until=lambda: client.poll() is not None)
        try:
            out, _ = client.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            client.kill()
            fail("the real client did not end in 60 s")
        took = time.time() - t0
        print(out, end="", flush=True)
        if client.returncode != 0:
            fail(f"the real client failed ({client.returncode}) behind {FLOOD} {mode} sockets")
        if "5 pings of 64 bytes, verified" not in out:
            fail("the client's summary is missing")
        try:
            out, _ = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            fail("the server did not end after its 5 pings")
        print(out, end="")
        if server.returncode != 0:
            fail(f"server exited with status {server.returncode}")
        print(f"{NAME}: client through in {took:.2f} s; the server held at most {held} "
              f"descriptors over its base during the flood", flush=True)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for s in socks:
            s.close()
    print(f"{NAME}: OK")


if __name__ == "__main__":
    main()
