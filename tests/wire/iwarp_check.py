#!/usr/bin/env python3
"""Wire checks of softrnic against Wireshark's iWARP dissectors (tshark).

  iwarp_check.py roundtrip --demo PATH --dump PATH [--workdir DIR]
      Generates pcaps with softrnic-demo (our encoder) in several variants and checks that
      tshark decodes every frame with payload as MPA, shows "Good CRC32" on every FPDU when CRC
      is on, no malformed packet or expert error, valid IPv4/TCP checksums, no TCP analysis
      flags, and DDP/RDMAP fields equal to what was encoded (the demo's expectation TSV).

  iwarp_check.py pcap --pcap PCAP --expect TSV --dump PATH [--list]
      The same checks on one pcap softrnic-demo wrote (its -e TSV); --list prints tshark's
      view of every FPDU. Ends with a one-line verdict (scripts/demo.sh shows it).

  iwarp_check.py golden --dump PATH --traces DIR
      For every pcap under DIR (and DIR/linux-6.1), decodes all FPDUs with iwarp-dump (our
      decoder) and compares them FPDU by FPDU with tshark's view of the same file.

Exit status 0 only if every check passed; a missing prerequisite (tshark, an input) fails.
"""
import argparse
import collections
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

TSHARK_TIMEOUT = 120
SEV_ERROR = 0x00800000  # _ws.expert.severity of "Error"
SEV_WARN = 0x00600000

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def num(s):
    return int(s, 0)


def tshark_cmd():
    t = shutil.which("tshark")
    if not t:
        print("FAIL: tshark not found (run scripts/deps.sh)")
        sys.exit(1)
    return t


def run(cmd, timeout=TSHARK_TIMEOUT):
    env = dict(os.environ, LC_ALL="C")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                       env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


class Fpdu:
    def __init__(self, frame, stream, src):
        self.frame, self.stream, self.src = frame, stream, src
        self.f = {}          # field name -> show value
        self.crc_check = None  # showname of iwarp_mpa.crc_check
        self.pad = 0
        self.has_ddp = False


class Packet:
    def __init__(self):
        self.frame = 0
        self.stream = None
        self.src = None
        self.tcp_len = 0
        self.reassembled_in = None
        self.mpa_frames = []   # dicts for Request/Reply
        self.fpdus = []
        self.malformed = False
        self.errors = []
        self.warnings = []
        self.tcp_csum = None
        self.ip_csum = None
        self.analysis_flags = []


def walk(elem):
    yield elem
    for ch in elem:
        yield from walk(ch)


def parse_pdml(path, checksums):
    """Runs tshark on path and returns the list of Packet. checksums: have tshark verify the
    IPv4 and TCP checksums (our own pcaps; captures taken on a host with checksum offload
    carry unfinished checksums, which says nothing about iWARP)."""
    cmd = [tshark_cmd(), "-2", "-n", "-r", path, "--enable-heuristic", "iwarp_mpa_tcp",
           "--disable-protocol", "rpcordma", "-T", "pdml"]
    if checksums:
        cmd += ["-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"]
    rc, out, err = run(cmd)
    if rc != 0:
        fail("tshark failed on %s: %s" % (path, err.strip()[:300]))
        return []
    root = ET.fromstring(out)
    pkts = []
    for pe in root.iter("packet"):
        pk = Packet()
        ip_src = None
        for proto in pe.findall("proto"):
            name = proto.get("name")
            if name == "geninfo":
                for f in proto.iter("field"):
                    if f.get("name") == "num":
                        pk.frame = num(f.get("show"))
            elif name == "ip":
                for f in proto.iter("field"):
                    if f.get("name") == "ip.src":
                        ip_src = f.get("show")
                    elif f.get("name") == "ip.checksum.status":
                        pk.ip_csum = f.get("showname")
            elif name == "tcp":
                sport = None
                for f in proto.iter("field"):
                    n = f.get("name")
                    if n == "tcp.stream":
                        pk.stream = num(f.get("show"))
                    elif n == "tcp.srcport":
                        sport = f.get("show")
                    elif n == "tcp.len":
                        pk.tcp_len = num(f.get("show"))
                    elif n == "tcp.reassembled_in":
                        pk.reassembled_in = num(f.get("show"))
                    elif n == "tcp.checksum.status":
                        pk.tcp_csum = f.get("showname")
                    elif n and n.startswith("tcp.analysis.") and n not in (
                            "tcp.analysis.initial_rtt", "tcp.analysis.bytes_in_flight",
                            "tcp.analysis.push_bytes_sent", "tcp.analysis.acks_frame",
                            "tcp.analysis.ack_rtt", "tcp.analysis.flags"):
                        if n in ("tcp.analysis.retransmission", "tcp.analysis.out_of_order",
                                 "tcp.analysis.lost_segment", "tcp.analysis.ack_lost_segment",
                                 "tcp.analysis.duplicate_ack", "tcp.analysis.fast_retransmission",
                                 "tcp.analysis.spurious_retransmission",
                                 "tcp.analysis.zero_window", "tcp.analysis.window_full"):
                            pk.analysis_flags.append(n)
                pk.src = "%s:%s" % (ip_src, sport)
            elif name == "iwarp_mpa":
                fields = {f.get("name"): f for f in walk(proto) if f.tag == "field"}
                if "iwarp_mpa.req" in fields or "iwarp_mpa.rep" in fields:
                    d = {"kind": "req" if "iwarp_mpa.req" in fields else "rep"}
                    for k in ("marker_flag", "crc_flag", "rej_flag", "rev", "pdlength"):
                        f = fields.get("iwarp_mpa." + k)
                        d[k] = num(f.get("show")) if f is not None else None
                    pk.mpa_frames.append(d)
                else:
                    fp = Fpdu(pk.frame, pk.stream, pk.src)
                    for f in walk(proto):
                        if f.tag != "field":
                            continue
                        n = f.get("name")
                        if n == "iwarp_mpa.ulpdulength":
                            fp.f["ulpdu_len"] = num(f.get("show"))
                        elif n == "iwarp_mpa.crc_check":
                            fp.crc_check = f.get("showname")
                        elif n == "iwarp_mpa.pad":
                            fp.pad = num(f.get("size"))
                    pk.fpdus.append(fp)
            elif name == "iwarp_ddp_rdmap":
                if not pk.fpdus:
                    fail("frame %d: DDP/RDMAP without an MPA FPDU" % pk.frame)
                    continue
                fp = pk.fpdus[-1]
                fp.has_ddp = True
                for f in walk(proto):
                    if f.tag == "field" and f.get("name", "").startswith("iwarp_"):
                        if f.get("show") not in (None, ""):
                            fp.f.setdefault(f.get("name"), f.get("show"))
            elif name == "_ws.malformed":
                pk.malformed = True
            for f in walk(proto):
                if f.tag != "field":
                    continue
                n = f.get("name", "")
                if n.startswith("_ws.malformed"):
                    pk.malformed = True
                if n == "_ws.expert":
                    sev = None
                    msg = f.get("showname")
                    for g in f.iter("field"):
                        if g.get("name") == "_ws.expert.severity":
                            sev = num(g.get("show"))
                    if sev is not None and sev >= SEV_ERROR:
                        pk.errors.append(msg)
                    elif sev is not None and sev >= SEV_WARN:
                        pk.warnings.append(msg)
        pkts.append(pk)
    return pkts


# Mapping from our TSV columns to tshark fields.
def tshark_view(fp):
    g = fp.f
    out = {"ulpdu_len": g.get("ulpdu_len")}
    if "iwarp_ddp.tagged_flag" in g:
        out["tagged"] = num(g["iwarp_ddp.tagged_flag"])
        out["last"] = num(g["iwarp_ddp.last_flag"])
    if "iwarp_rdma.opcode" in g:
        out["opcode"] = num(g["iwarp_rdma.opcode"])
    for ours, theirs in (("stag", "iwarp_ddp.stag"), ("to", "iwarp_ddp.tagged_offset"),
                         ("qn", "iwarp_ddp.qn"), ("msn", "iwarp_ddp.msn"), ("mo", "iwarp_ddp.mo"),
                         ("inval", "iwarp_rdma.inval_stag"),
                         ("sink_stag", "iwarp_rdma.sinkstag"), ("sink_to", "iwarp_rdma.sinkto"),
                         ("rd_size", "iwarp_rdma.rdmardsz"), ("src_stag", "iwarp_rdma.srcstag"),
                         ("src_to", "iwarp_rdma.srcto"), ("term_layer", "iwarp_rdma.term_layer")):
        if theirs in g:
            out[ours] = num(g[theirs])
    for k in ("iwarp_rdma.term_etype_rdma", "iwarp_rdma.term_etype_ddp",
              "iwarp_rdma.term_etype_llp"):
        if k in g:
            out["term_etype"] = num(g[k])
    for k in ("iwarp_rdma.term_errcode_rdma", "iwarp_rdma.term_errcode_ddp_tagged",
              "iwarp_rdma.term_errcode_ddp_untagged", "iwarp_rdma.term_errcode_llp",
              "iwarp_rdma.term_errcode"):
        if k in g:
            out["term_ecode"] = num(g[k])
    return out


COLS = ["frame", "conn", "dir", "idx", "ulpdu_len", "tagged", "last", "opcode", "stag", "to",
        "qn", "msn", "mo", "inval", "sink_stag", "sink_to", "rd_size", "src_stag", "src_to",
        "crc", "pad", "term_layer", "term_etype", "term_ecode", "mpa_pos", "wire_len"]


def read_tsv(text):
    """Parses our TSV (iwarp-dump -t or the demo's expectations)."""
    conns, rows, mpa, errors = {}, [], [], []
    for line in text.splitlines():
        if not line:
            continue
        parts = line.split("\t")
        if parts[0] == "#conn":
            conns[int(parts[1])] = (parts[2], parts[3])
        elif parts[0] in ("#req", "#rep"):
            mpa.append({"kind": parts[0][1:], "conn": int(parts[1]), "frame": int(parts[2]),
                        "marker_flag": int(parts[3]), "crc_flag": int(parts[4]),
                        "rej_flag": int(parts[5]), "rev": int(parts[6]),
                        "pdlength": int(parts[7])})
        elif parts[0] == "#error":
            errors.append(line)
        elif parts[0].startswith("#"):
            continue
        else:
            r = {}
            for i, c in enumerate(COLS):
                r[c] = parts[i] if c == "dir" else num(parts[i])
            r["error"] = parts[len(COLS)] if len(parts) > len(COLS) else "-"
            rows.append(r)
    return conns, rows, mpa, errors


def group_tshark(pkts, conns):
    """tshark FPDUs grouped by (conn, dir), conn found by the client endpoint."""
    by_client = {v[0]: k for k, v in conns.items()}
    by_server = {}
    groups = collections.defaultdict(list)
    stream_conn = {}
    for pk in pkts:
        for fp in pk.fpdus:
            c = stream_conn.get(fp.stream)
            d = "c>s"
            if fp.src in by_client:
                c = by_client[fp.src]
                stream_conn[fp.stream] = c
            else:
                d = "s>c"
                if c is None:
                    by_server.setdefault(fp.stream, []).append(fp)
                    continue
            groups[(c, d)].append(fp)
    # Server FPDUs seen before any client FPDU of their stream.
    for s, lst in by_server.items():
        if s in stream_conn:
            groups[(stream_conn[s], "s>c")] = lst + groups[(stream_conn[s], "s>c")]
        else:
            fail("tshark FPDUs in TCP stream %d belong to no connection we know" % s)
    return groups


def marker_cutoffs(rows, marker_dirs):
    """tshark 4.0 loses FPDU sync in a marker stream at the first FPDU that ends exactly on a
    marker position (the next FPDU then starts with a marker, FPDUPTR 0, as RFC 5044 wants).
    Returns {(conn, dir): index of that FPDU} for the directions that carry markers."""
    cut = {}
    for r in rows:
        key = (r["conn"], r["dir"])
        if key in marker_dirs and key not in cut and \
                (r["mpa_pos"] + r["wire_len"]) % 512 == 0:
            cut[key] = r["idx"]
    return cut


def compare(label, pkts, conns, rows, crc_conns, cut=None, check_frames=True):
    """FPDU by FPDU comparison of our rows against tshark. Returns per-opcode counts."""
    cut = cut or {}
    groups = group_tshark(pkts, conns)
    ours = collections.defaultdict(list)
    for r in rows:
        ours[(r["conn"], r["dir"])].append(r)
    for key, k in cut.items():
        n = len(ours[key])
        ours[key] = [r for r in ours[key] if r["idx"] < k]
        groups[key] = groups.get(key, [])[:len(ours[key])]
        print("  note: %s conn %d %s: tshark loses marker sync at FPDU %d, which ends on a "
              "marker position; compared the %d FPDUs before it (of %d)"
              % (label, key[0], key[1], k, len(ours[key]), n))
        if len(ours[key]) < 10:
            fail("%s conn %d %s: fewer than 10 FPDUs before the marker boundary" %
                 (label, key[0], key[1]))
    keys = set(groups) | set(ours)
    counts_ours, counts_ts = collections.Counter(), collections.Counter()
    nfpdu = 0
    for key in sorted(keys):
        a, b = ours.get(key, []), groups.get(key, [])
        if len(a) != len(b):
            fail("%s conn %d %s: we have %d FPDUs, tshark %d" % (label, key[0], key[1],
                                                                len(a), len(b)))
        for r, fp in zip(a, b):
            nfpdu += 1
            v = tshark_view(fp)
            counts_ours[r["opcode"]] += 1
            counts_ts[v.get("opcode")] += 1
            where = "%s conn %d %s FPDU %d (frame %d)" % (label, key[0], key[1], r["idx"],
                                                          r["frame"])
            if r.get("error", "-") != "-":
                fail("%s: our decoder rejected it: %s" % (where, r["error"]))
            if check_frames and fp.frame != r["frame"]:
                fail("%s: tshark shows it in frame %d" % (where, fp.frame))
            if not fp.has_ddp:
                fail("%s: tshark decoded no DDP/RDMAP header" % where)
                continue
            want = {"ulpdu_len": r["ulpdu_len"], "tagged": r["tagged"], "last": r["last"],
                    "opcode": r["opcode"]}
            if r["tagged"]:
                want.update(stag=r["stag"], to=r["to"])
            else:
                want.update(qn=r["qn"], msn=r["msn"], mo=r["mo"])
            if r["opcode"] in (4, 6):
                want["inval"] = r["inval"]
            if r["opcode"] == 1:
                want.update(sink_stag=r["sink_stag"], sink_to=r["sink_to"],
                            rd_size=r["rd_size"], src_stag=r["src_stag"], src_to=r["src_to"])
            if r["opcode"] == 7:
                want.update(term_layer=r["term_layer"], term_etype=r["term_etype"],
                            term_ecode=r["term_ecode"])
            for k, val in want.items():
                if v.get(k) != val:
                    fail("%s: %s ours %r, tshark %r" % (where, k, val, v.get(k)))
            if fp.pad != r["pad"]:
                fail("%s: pad ours %d, tshark %d" % (where, r["pad"], fp.pad))
            if key[0] in crc_conns:
                if not fp.crc_check or "Good CRC32" not in fp.crc_check:
                    fail("%s: tshark CRC check: %r" % (where, fp.crc_check))
            elif fp.crc_check and "Bad" in fp.crc_check:
                fail("%s: CRC off but tshark says %r" % (where, fp.crc_check))
    return nfpdu, counts_ours, counts_ts


def check_frames_generic(label, pkts, ours_generated, skip_from=None):
    """Every payload frame is MPA; no malformed, no expert errors; checksums and TCP flags.
    skip_from: {src endpoint: frame} from which tshark is known to be out of marker sync."""
    skip_from = skip_from or {}
    mpa_streams = {pk.stream for pk in pkts if pk.mpa_frames or pk.fpdus}
    for pk in pkts:
        if pk.src in skip_from and pk.frame >= skip_from[pk.src]:
            continue
        if pk.malformed:
            fail("%s frame %d: tshark says Malformed" % (label, pk.frame))
        for e in pk.errors:
            fail("%s frame %d: expert error: %s" % (label, pk.frame, e))
        if pk.tcp_len > 0 and pk.stream in mpa_streams:
            if not pk.mpa_frames and not pk.fpdus and pk.reassembled_in is None:
                fail("%s frame %d: %d payload octets not decoded as MPA" %
                     (label, pk.frame, pk.tcp_len))
        if ours_generated:
            if pk.tcp_csum is None or "Good" not in pk.tcp_csum:
                fail("%s frame %d: TCP checksum %r" % (label, pk.frame, pk.tcp_csum))
            if pk.ip_csum is None or "Good" not in pk.ip_csum:
                fail("%s frame %d: IPv4 checksum %r" % (label, pk.frame, pk.ip_csum))
            for a in pk.analysis_flags:
                fail("%s frame %d: TCP analysis flag %s" % (label, pk.frame, a))


def compare_mpa(label, pkts, mpa_rows):
    ts = [dict(d, frame=pk.frame) for pk in pkts for d in pk.mpa_frames]
    if len(ts) != len(mpa_rows):
        fail("%s: %d MPA Request/Reply frames ours, %d tshark" % (label, len(mpa_rows), len(ts)))
    for a, b in zip(mpa_rows, sorted(ts, key=lambda d: d["frame"])):
        for k in ("kind", "frame", "marker_flag", "crc_flag", "rej_flag", "rev", "pdlength"):
            if a[k] != b.get(k):
                fail("%s MPA %s conn %d: %s ours %r tshark %r" % (label, a["kind"], a["conn"], k,
                                                                 a[k], b.get(k)))


def marker_sync(conns, rows, mpa_rows):
    """Where tshark loses marker sync (marker_cutoffs) as {(conn, dir): FPDU index}, and as
    {sender endpoint: first frame tshark no longer dissects}."""
    marker_dirs = set()
    for m in mpa_rows:
        if m["marker_flag"]:
            # M in the Request: markers in what the server sends; in the Reply: client.
            marker_dirs.add((m["conn"], "s>c" if m["kind"] == "req" else "c>s"))
    cut = marker_cutoffs(rows, marker_dirs)
    skip_from = {}
    for (c, d), k in cut.items():
        r = [x for x in rows if x["conn"] == c and x["dir"] == d and x["idx"] == k][0]
        src = conns[c][0] if d == "c>s" else conns[c][1]
        skip_from[src] = r["frame"]
    return cut, skip_from


def check_generated(label, pkts, conns, rows, mpa_rows):
    """Frame-level and MPA Request/Reply checks of a pcap softrnic-demo wrote. Returns the
    marker cutoffs for compare()."""
    cut, skip_from = marker_sync(conns, rows, mpa_rows)
    check_frames_generic(label, pkts, True, skip_from)
    compare_mpa(label, pkts, mpa_rows)
    return cut


def crc_connections(mpa_rows):
    """Connections whose Request or Reply sets C (CRC on both ways)."""
    by_conn = collections.defaultdict(dict)
    for m in mpa_rows:
        by_conn[m["conn"]][m["kind"]] = m
    return {c for c, d in by_conn.items()
            if d.get("req", {}).get("crc_flag") or d.get("rep", {}).get("crc_flag")}


def good_crc_count(pkts):
    return sum(1 for pk in pkts for fp in pk.fpdus
               if fp.crc_check and "Good CRC32" in fp.crc_check)


OPNAMES = {0: "Write", 1: "ReadReq", 2: "ReadResp", 3: "Send", 4: "SendInv", 5: "SendSE",
           6: "SendSEInv", 7: "Terminate"}
# As softrnic's decoder prints them (iwd_opcode_name).
OPNAMES_LONG = {0: "Write", 1: "Read Request", 2: "Read Response", 3: "Send",
                4: "Send w/ Invalidate", 5: "Send w/ SE", 6: "Send w/ SE+Invalidate",
                7: "Terminate"}


def fmt_counts(c):
    return ", ".join("%s %d" % (OPNAMES.get(k, str(k)), v) for k, v in sorted(c.items(),
                                                                               key=lambda x: str(x[0])))


def roundtrip(args):
    variants = [
        ("demo-default", ["--scenario", "demo"]),
        ("demo-nocrc", ["--scenario", "demo", "--crc", "0"]),
        ("sweep-crc", ["--scenario", "sweep", "--crc", "1", "--seed", "1"]),
        ("sweep-nocrc", ["--scenario", "sweep", "--crc", "0", "--seed", "2"]),
        ("sweep-markers-crc", ["--scenario", "sweep", "--crc", "1", "--markers", "1",
                               "--seed", "3"]),
        ("sweep-mss536", ["--scenario", "sweep", "--crc", "1", "--mss", "536", "--seed", "4"]),
        ("sweep-markers-mss536", ["--scenario", "sweep", "--crc", "1", "--markers", "1",
                                  "--mss", "536", "--seed", "5"]),
        ("sweep-mulpdu-gt-mss", ["--scenario", "sweep", "--crc", "1", "--mss", "1000",
                                 "--mulpdu", "2500", "--seed", "6"]),
        ("sweep-small-mulpdu", ["--scenario", "sweep", "--crc", "1", "--mulpdu", "100",
                                "--seed", "7"]),
        ("sweep-coalesce3", ["--scenario", "sweep", "--crc", "1", "--coalesce", "3",
                             "--seed", "8"]),
        # Not with markers: tshark 4.0 places markers relative to each TCP segment's
        # sequence number, so it cannot dissect several marker-carrying FPDUs per segment.
        ("sweep-coalesce4-mss536", ["--scenario", "sweep", "--crc", "1", "--mss", "536",
                                    "--coalesce", "4", "--seed", "9"]),
        ("sweep-port", ["--scenario", "sweep", "--crc", "1", "--port", "18515", "--seed", "10"]),
    ]
    work = args.workdir or tempfile.mkdtemp(prefix="iwarp-rt-")
    os.makedirs(work, exist_ok=True)
    total = 0
    for name, opts in variants:
        pcap = os.path.join(work, name + ".pcap")
        exp = os.path.join(work, name + ".tsv")
        rc, out, err = run([args.demo, "-q", "-o", pcap, "-e", exp] + opts, timeout=60)
        if rc != 0:
            fail("%s: softrnic-demo exit %d: %s %s" % (name, rc, out[-500:], err[-500:]))
            continue
        with open(exp) as f:
            conns, rows, _, _ = read_tsv(f.read())
        # MPA frame flags: from our dump of the same file.
        rc, dout, derr = run([args.dump, "-t", pcap], timeout=60)
        if rc != 0:
            fail("%s: iwarp-dump exit %d: %s" % (name, rc, derr[-300:]))
        _, drows, mpa_rows, _ = read_tsv(dout)
        crc_on = "--crc" not in opts or opts[opts.index("--crc") + 1] == "1"
        crc_conns = set(conns) if crc_on else ({1} if name.startswith("demo") else set())
        pkts = parse_pdml(pcap, True)
        if not pkts:
            fail("%s: tshark shows no packets" % name)
            continue
        cut = check_generated(name, pkts, conns, rows, mpa_rows)
        for pk in pkts:
            for d in pk.mpa_frames:
                if d["kind"] == "req":
                    want_c = 1 if (crc_on or pk.stream == 1) else 0
                    if d["crc_flag"] != want_c:
                        fail("%s: Request CRC flag %r, wanted %d" % (name, d["crc_flag"], want_c))
        n, co, ct = compare(name, pkts, conns, rows, crc_conns, cut)
        # Our decoder (iwarp-dump) must agree with the encoder too.
        if len(drows) != len(rows):
            fail("%s: iwarp-dump found %d FPDUs, encoder wrote %d" % (name, len(drows), len(rows)))
        goodcrc = good_crc_count(pkts)
        print("%-26s %4d frames %4d FPDUs, tshark Good CRC32 %4d; %s" %
              (name, len(pkts), n, goodcrc, fmt_counts(ct)))
        if co != ct:
            fail("%s: opcode counts ours %s, tshark %s" % (name, fmt_counts(co), fmt_counts(ct)))
        total += n
    print("roundtrip: %d variants, %d FPDUs compared, %d failures" %
          (len(variants), total, len(failures)))


def list_tshark_fpdus(pkts, conns):
    """One line per FPDU as tshark dissects it."""
    clients = {v[0] for v in conns.values()}
    print("frame dir opcode                ULPDU_Length  CRC (tshark)")
    for pk in pkts:
        for fp in pk.fpdus:
            v = tshark_view(fp)
            crc = fp.crc_check.split("(")[-1].rstrip(")") if fp.crc_check else "not checked"
            print("%5d %s %-21s %12s  %s" % (fp.frame, "c>s" if fp.src in clients else "s>c",
                                              OPNAMES_LONG.get(v.get("opcode"), "?"),
                                              v.get("ulpdu_len"), crc))


def check_pcap(args):
    with open(args.expect) as f:
        conns, rows, _, _ = read_tsv(f.read())
    rc, dout, derr = run([args.dump, "-t", args.pcap], timeout=60)
    if rc != 0:
        fail("iwarp-dump exit %d: %s" % (rc, derr[-300:]))
    _, _, mpa_rows, _ = read_tsv(dout)
    pkts = parse_pdml(args.pcap, True)
    if not pkts:
        fail("tshark shows no packets")
        return
    if args.list:
        list_tshark_fpdus(pkts, conns)
    cut = check_generated(args.pcap, pkts, conns, rows, mpa_rows)
    n, co, ct = compare(args.pcap, pkts, conns, rows, crc_connections(mpa_rows), cut)
    if co != ct:
        fail("opcode counts ours %s, tshark %s" % (fmt_counts(co), fmt_counts(ct)))
    nts = sum(len(pk.fpdus) for pk in pkts)
    print("tshark: %d FPDUs, %d with Good CRC32; %d of the %d FPDUs encoded compared field by "
          "field, %d differences" % (nts, good_crc_count(pkts), n, len(rows), len(failures)))


def golden(args):
    files = sorted(glob.glob(os.path.join(args.traces, "*.pcap")) +
                   glob.glob(os.path.join(args.traces, "linux-6.1", "*.pcap")))
    if not files:
        fail("no pcap files in %s" % args.traces)
        return
    total = 0
    for path in files:
        name = os.path.relpath(path, args.traces)
        rc, out, err = run([args.dump, "-t", path], timeout=60)
        if rc != 0:
            fail("%s: iwarp-dump exit %d: %s" % (name, rc, (out + err)[-600:]))
        conns, rows, mpa_rows, errors = read_tsv(out)
        for e in errors:
            fail("%s: %s" % (name, e))
        crc_conns = crc_connections(mpa_rows)
        pkts = parse_pdml(path, False)
        check_frames_generic(name, pkts, False)
        compare_mpa(name, pkts, mpa_rows)
        n, co, ct = compare(name, pkts, conns, [r for r in rows], crc_conns)
        nmpa = sum(1 for m in mpa_rows if m["kind"] == "req")
        print("%-34s %d MPA conns%s, %4d FPDUs: %s" % (name, nmpa,
              " (CRC)" if crc_conns else "", n, fmt_counts(co)))
        if co != ct:
            fail("%s: opcode counts ours %s, tshark %s" % (name, fmt_counts(co), fmt_counts(ct)))
        total += n
    print("golden: %d files, %d FPDUs compared, %d failures" % (len(files), total, len(failures)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["roundtrip", "golden", "pcap"])
    ap.add_argument("--pcap", help="pcap mode: the file softrnic-demo wrote")
    ap.add_argument("--demo")
    ap.add_argument("--dump", required=True)
    ap.add_argument("--traces")
    ap.add_argument("--workdir")
    ap.add_argument("--expect", help="pcap mode: softrnic-demo's -e TSV")
    ap.add_argument("--list", action="store_true", help="pcap mode: print tshark's FPDUs")
    args = ap.parse_args()
    tshark_cmd()
    for p in (args.demo, args.dump):
        if p and not os.access(p, os.X_OK):
            print("FAIL: %s is not executable" % p)
            return 1
    if args.mode == "pcap":
        if not args.pcap or not args.expect:
            print("FAIL: pcap mode needs --pcap and --expect")
            return 1
        check_pcap(args)
    elif args.mode == "roundtrip":
        if not args.demo:
            print("FAIL: --demo is required")
            return 1
        roundtrip(args)
    else:
        if not args.traces or not os.path.isdir(args.traces):
            print("FAIL: traces directory %r missing" % args.traces)
            return 1
        golden(args)
    if failures:
        print("%d FAILURES" % len(failures))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
