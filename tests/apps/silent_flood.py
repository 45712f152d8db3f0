#!/usr/bin/env python3
"""An attacker's silent TCP connections against softrnic-rping's server (backlog 1), issue 27
item 1: 10,000 connections that never send an MPA Request are opened and held; a real client
must still get its pings through, and the server must hold no more than a bounded number of
them (the listener keeps 256 before their MPA Request and drops the oldest for new ones).
Usage: silent_flood.py /path/to/softrnic-rping"""
import os
import resource
import socket
import subprocess
import sys
import time

SILENT = 10000
KEPT = 256  # RCM_EMBRYONIC_MAX (verbs/rdmacm/rcm_int.h)
NAME = "apps_silent_flood"


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


def main():
    rping = sys.argv[1]
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (SILENT + 1024, SILENT + 1024))
    except (ValueError, OSError) as e:
        fail(f"cannot allow {SILENT + 1024} descriptors (needs root): {e}")
    port = free_port()
    server = subprocess.Popen([rping, "-s", "-a", "127.0.0.1", "-p", str(port), "-C", "5",
                               "-V", "-t", "60"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    socks = []
    try:
        wait_listen(port, server)
        base = open_fds(server.pid)
        t0 = time.time()
        for i in range(SILENT):
            s = socket.socket()
            socks.append(s)
            try:
                s.connect(("127.0.0.1", port))
            except OSError as e:
                fail(f"the listener turned silent connection {i} away: {e}")
        print(f"{NAME}: {SILENT} silent connections open in {time.time() - t0:.2f} s",
              flush=True)
        held = 0
        for _ in range(10):  # the server accepts them all, keeping at most KEPT
            time.sleep(0.1)
            held = max(held, open_fds(server.pid) - base)
        if held > KEPT + 16:
            fail(f"the server held {held} descriptors more than before the flood")
        t0 = time.time()
        client = subprocess.run([rping, "-c", "-a", "127.0.0.1", "-p", str(port), "-C", "5",
                                 "-V", "-t", "20"], capture_output=True, text=True, timeout=60)
        took = time.time() - t0
        print(client.stdout + client.stderr, end="", flush=True)
        if client.returncode != 0:
            fail(f"the real client failed ({client.returncode}) behind {SILENT} silent sockets")
        if "5 pings of 64 bytes, verified" not in client.stdout + client.stderr:
            fail("the client's summary is missing")
        try:
            out, _ = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            fail("the server did not end after its 5 pings")
        print(out, end="")
        if server.returncode != 0:
            fail(f"server exited with status {server.returncode}")
        print(f"{NAME}: OK (client through in {took:.2f} s; the server held at most {held} "
              f"descriptors over its base during the flood)")
    finally:
        for s in socks:
            s.close()
        if server.poll() is None:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
