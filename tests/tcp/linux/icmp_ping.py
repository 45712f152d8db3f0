#!/usr/bin/env python3
# ICMP echo over a raw socket (iputils' ping may not be installed; needs root): 3 requests
# to argv[1], each must be answered within 2 s with our identifier, sequence, payload and a
# correct checksum. Exit 0 only then.
import os
import socket
import struct
import sys
import time


def csum(b):
    b += b"\0" * (len(b) & 1)
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(2)
ident = os.getpid() & 0xFFFF
for seq in range(3):
    payload = b"softrnic-ping-%d" % seq
    hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    pkt = struct.pack("!BBHHH", 8, 0, csum(hdr + payload), ident, seq) + payload
    t0 = time.monotonic()
    s.sendto(pkt, (sys.argv[1], 0))
    while True:
        data = s.recv(2048)  # socket.timeout ends the script with an error
        icmp = data[(data[0] & 15) * 4:]
        t, _, _, i, q = struct.unpack("!BBHHH", icmp[:8])
        if t == 0 and i == ident and q == seq:
            if icmp[8:] != payload or csum(icmp) != 0:
                sys.exit("bad echo reply (payload or checksum)")
            print("reply seq=%d %.3f ms" % (seq, (time.monotonic() - t0) * 1e3))
            break
print("3 replies, 0% packet loss")
