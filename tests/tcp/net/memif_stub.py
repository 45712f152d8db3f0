#!/usr/bin/env python3
"""A stand-in for a memif server's control socket (tests/tcp/net/memif_relink.sh): listens on
the abstract socket a DPDK memif client with socket=PATH connects to, accepts every control
connection and never answers, for SECONDS. Prints "listening", then "accepted after T s" per
connection (T from the start of listening). Usage: memif_stub.py PATH SECONDS"""
import select
import socket
import sys
import time


def main():
    path, seconds = sys.argv[1], float(sys.argv[2])
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind("\0" + path)  # DPDK 22.11 memif: sockets are abstract by default
    srv.listen(16)
    start = time.monotonic()
    print("listening", flush=True)
    held = []
    while True:
        left = start + seconds - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([srv], [], [], left)
        if ready:
            conn, _ = srv.accept()
            held.append(conn)  # kept open, unanswered: the client's handshake stays pending
            print(f"accepted after {time.monotonic() - start:.3f} s", flush=True)
    for c in held:
        c.close()
    srv.close()


if __name__ == "__main__":
    main()
