#!/usr/bin/env python3
"""A DPDK telemetry v2 client (the protocol dpdk-telemetry.py speaks): connect to a process's
socket, read its greeting, send each command, print one JSON line per answer.

Usage: telemetry_query.py SOCKET COMMAND..."""
import json
import socket
import sys


def main():
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.settimeout(5)
    sock.connect(sys.argv[1])
    hello = json.loads(sock.recv(16384).decode())
    size = hello["max_output_len"]
    for cmd in sys.argv[2:]:
        sock.send(cmd.encode())
        print(json.dumps(json.loads(sock.recv(size).decode())))
    sock.close()


main()
