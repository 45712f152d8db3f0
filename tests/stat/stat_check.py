#!/usr/bin/env python3
"""Checks one `softrnic-stat --json` sample of a softrnic-perf write run (stat_perf.sh): the
client's and the server's counters are exactly what N Writes of S octets and perf's two
control Sends each way (64 octets, then an empty one) make, on the device and on its QP.

Usage: stat_check.py JSON_FILE CLIENT_PID SERVER_PID N S [dpdk]"""
import json
import sys


def fpdu(ulpdu):
    """Octets of the FPDU of a ULPDU: length field, ULPDU, pad to 4, CRC field."""
    return 2 + ulpdu + (4 - (2 + ulpdu) % 4) % 4 + 4


def main():
    path, cpid, spid, n, s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4]), int(sys.argv[5])
    dpdk = len(sys.argv) > 6 and sys.argv[6] == "dpdk"
    with open(path) as f:
        sample = json.loads(f.readline())
    procs = {p["pid"]: p for p in sample["processes"]}
    errors = []

    def expect(who, rec, name, want):
        got = rec["counters"].get(name)
        if got != want:
            errors.append(f"{who} {rec['kind']} {rec['label']}: {name} = {got}, expected {want}")

    # Writes: tagged header 14; control Sends: untagged header 18, 64 octets then none
    data_octets = n * fpdu(14 + s)
    ctl_octets = fpdu(18 + 64) + fpdu(18)
    sides = {
        cpid: {"tx_write": n, "tx_write_octets": n * s, "rx_write": 0,
               "tx_fpdus": n + 2, "tx_octets": data_octets + ctl_octets,
               "rx_fpdus": 2, "rx_octets": ctl_octets},
        spid: {"rx_write": n, "rx_write_octets": n * s, "tx_write": 0,
               "rx_fpdus": n + 2, "rx_octets": data_octets + ctl_octets,
               "tx_fpdus": 2, "tx_octets": ctl_octets},
    }
    common = {"tx_send": 2, "tx_send_octets": 64, "rx_send": 2, "rx_send_octets": 64,
              "tx_read_req": 0, "crc_errors": 0, "marker_errors": 0,
              "term_tx_rdmap_etype0": 0, "term_rx_rdmap_etype0": 0}
    for pid, want in sides.items():
        p = procs.get(pid)
        if p is None or "error" in p:
            errors.append(f"pid {pid}: not in the sample ({p})")
            continue
        devs = [r for r in p["records"] if r["kind"] == "device"]
        qps = [r for r in p["records"] if r["kind"] == "qp"]
        ports = [r for r in p["records"] if r["kind"] == "port"]
        if len(devs) != 1 or len(qps) != 1:
            errors.append(f"pid {pid}: {len(devs)} devices and {len(qps)} QPs, expected 1 and 1")
            continue
        for rec in (devs[0], qps[0]):
            for name, v in {**want, **common}.items():
                expect(pid, rec, name, v)
        # the QP's label: number, device, state, the stream's peer
        if " softrnic0 RTS peer " not in qps[0]["label"]:
            errors.append(f"pid {pid}: QP label {qps[0]['label']!r} lacks 'softrnic0 RTS peer'")
        expect(pid, devs[0], "qps_open", 1)
        expect(pid, devs[0], "conn_setup_fails", 0)
        expect(pid, devs[0], "cq_overruns", 0)
        if dpdk:
            if len(ports) != 1:
                errors.append(f"pid {pid}: {len(ports)} ports, expected 1")
                continue
            c = ports[0]["counters"]
            # every FPDU went through this port's TCP engine, in frames with headers
            if not (c["tcp_out_segs"] >= want["tx_fpdus"] and c["tx_bytes"] > want["tx_octets"]
                    and c["tcp_in_segs"] >= want["rx_fpdus"] and c["rx_bytes"] > want["rx_octets"]
                    and c["rx_pool_size"] > 0 and c["link_up"] == 1 and c["tcp_cur_conns"] >= 1):
                errors.append(f"pid {pid}: port figures do not fit the run: {c}")
        elif ports:
            errors.append(f"pid {pid}: a port record on kernel sockets")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)
    print(f"stat_check: exact for {n} Writes of {s} octets")


main()
