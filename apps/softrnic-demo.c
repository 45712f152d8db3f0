/* softrnic-demo: encode a realistic iWARP session with softrnic's MPA/DDP/RDMAP code, write it
 * to a pcap, read the pcap back and decode it with our own decoder.
 *
 *   softrnic-demo [-o FILE.pcap] [-e EXPECT.tsv] [-q] [options]
 *
 * Scenario "demo" (default): connection 1 with CRC: TCP handshake, MPA Request (rev 2,
 * enhanced, P2P offering Write/Read RTR, IRD/ORD) and Reply from the real negotiation code,
 * the zero-length RDMA Write RTR, then an rping-like exchange: Send with buf/rkey/len, RDMA
 * Read Request, multi-segment Read Response, multi-segment RDMA Write, Send with Invalidate,
 * Send with SE; FIN. Connection 2: the same with markers and CRC. Each FPDU is one TCP segment.
 *
 * Scenario "sweep" (for the tshark round-trip test): one connection carrying every opcode with
 * many sizes (payloads 0..N, every pad 0..3, multi-segment messages) in both directions and a
 * Terminate at the end.
 *
 * Options:
 *   --scenario demo|sweep   --crc 0|1   --markers 0|1   --mss N   --mulpdu N (DDP ULPDU limit,
 *   default from the MSS; larger than the MSS makes TCP split FPDUs)   --coalesce N (FPDUs per
 *   TCP send, default 1)   --port N (server port, default 7174)   --seed N
 *
 * After writing, the pcap is decoded (wiretrace reader + iwdecode) and every decoded FPDU is
 * compared with what was encoded; any difference makes the exit status 1. -e writes the
 * encoded fields (plus the frame each FPDU completes in) as TSV, for the tshark comparison.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp.h"
#include "iwdecode.h"
#include "mpa.h"
#include "rdmap.h"
#include "wiretrace.h"

#define MAX_EXPECT 4096
#define MAX_CONNS 4

struct opts {
	const char *out, *expect, *scenario;
	int crc, markers;
	unsigned mss, mulpdu, coalesce, port, seed;
	int quiet;
};

/* One connection being generated: the TCP model plus each side's MPA/DDP sender state. */
struct sess {
	struct wt_tcp tcp;
	size_t conn;                  /* index in the capture (order of SYNs) */
	struct mpa_tx tx[2];
	bool zero_crc[2];             /* CRC off: send the (always present) CRC field as zero */
	uint32_t msn[2][RDMAP_NQUEUES];
	size_t nfpdu[2];
	uint32_t mulpdu;
	unsigned coalesce;
	uint8_t pend[2 * 65536 + 4096];
	size_t pend_len;
	unsigned pend_n;
	int pend_side;
	struct mpa_conn_params cp, sp; /* client's and server's view */
	uint8_t last_ulpdu[2][65536]; /* the latest untagged ULPDU each side sent: the
				       * "offending" segment a Terminate reports */
	size_t last_ulpdu_len[2];
};

static struct iwd_seg expect[MAX_EXPECT];
static size_t nexpect;
static bool codec_omits_crc;
static int failures;

/* RFC 5044 §4.1: the CRC field is always present; with CRC off it is not checked. Our
 * mpa_tx leaves it out when CRC is off, so then we encode with CRC and zero the field (as
 * Linux siw sends it). Detected at run time so a fixed encoder is used as is. */
static bool mpa_codec_omits_crc_field(void)
{
	struct mpa_tx t;
	mpa_tx_init(&t, false, false);
	return mpa_tx_fpdu_len(&t, 0) == MPA_HDR_LEN + mpa_pad_len(0);
}

static void die(const char *what)
{
	fprintf(stderr, "softrnic-demo: %s\n", what);
	exit(2);
}

static void check(bool ok, const char *what)
{
	if (!ok)
		die(what);
}

static void flush(struct sess *s)
{
	if (!s->pend_len)
		return;
	check(wt_tcp_send(&s->tcp, s->pend_side, s->pend, s->pend_len) > 0, "TCP send failed");
	s->pend_len = 0;
	s->pend_n = 0;
}

/* Frames one ULPDU from side and queues it for TCP. */
static void send_ulpdu(struct sess *s, int side, const uint8_t *ulpdu, size_t len,
		       struct iwd_seg *exp)
{
	if (s->pend_len && s->pend_side != side)
		flush(s);
	s->pend_side = side;
	struct iovec iov = { .iov_base = (void *)ulpdu, .iov_len = len };
	ssize_t n = mpa_tx_encode(&s->tx[side], &iov, 1, s->pend + s->pend_len,
				  sizeof(s->pend) - s->pend_len);
	if (n < 0) {
		fprintf(stderr, "mpa_tx_encode: %s\n", strerror((int)-n));
		exit(2);
	}
	if (s->zero_crc[side])
		memset(s->pend + s->pend_len + n - MPA_CRC_LEN, 0, MPA_CRC_LEN);
	s->pend_len += (size_t)n;
	s->pend_n++;
	if (len <= sizeof(s->last_ulpdu[side]) && len > 0 && !(ulpdu[0] & DDP_CTRL_T)) {
		memcpy(s->last_ulpdu[side], ulpdu, len);
		s->last_ulpdu_len[side] = len;
	}
	check(nexpect < MAX_EXPECT, "too many FPDUs");
	exp->conn = s->conn;
	exp->dir = side;
	exp->index = s->nfpdu[side]++;
	exp->ulpdu_len = len;
	exp->crc = s->tx[side].crc && !s->zero_crc[side];
	expect[nexpect++] = *exp;
	if (s->pend_n >= s->coalesce)
		flush(s);
}

/* Segments and sends one RDMAP message. body/len is the DDP payload (for Read Request its
 * 28-octet RDMAP header). Returns the message's MSN (untagged) or 0. */
static uint32_t send_msg(struct sess *s, int side, enum rdmap_opcode op, uint32_t stag,
			 uint64_t to, uint32_t inv, const uint8_t *body, size_t len)
{
	const struct rdmap_opinfo *oi = rdmap_opinfo(op);
	uint32_t msn = oi->tagged ? 0 : s->msn[side][oi->qn]++;
	struct ddp_hdr tmpl = rdmap_ddp_tmpl(op, stag, to, msn, inv);
	struct ddp_seg_iter it;
	struct iwarp_err err;
	check(ddp_seg_init(&it, &tmpl, len, s->mulpdu, 0, &err) == 0, "ddp_seg_init failed");
	struct ddp_seg seg;
	static uint8_t ulpdu[65536];
	while (ddp_seg_next(&it, &seg)) {
		size_t hl = ddp_hdr_encode(&seg.hdr, ulpdu, sizeof(ulpdu));
		check(hl == ddp_hdr_len(seg.hdr.tagged), "ddp_hdr_encode failed");
		check(hl + seg.payload_len <= sizeof(ulpdu), "segment too large");
		if (seg.payload_len)
			memcpy(ulpdu + hl, body + seg.payload_off, seg.payload_len);
		struct iwd_seg e;
		memset(&e, 0, sizeof(e));
		e.tagged = seg.hdr.tagged;
		e.last = seg.hdr.last;
		e.dv = seg.hdr.dv;
		e.stag = seg.hdr.stag;
		e.to = seg.hdr.to;
		e.qn = seg.hdr.qn;
		e.msn = seg.hdr.msn;
		e.mo = seg.hdr.mo;
		e.rv = 1;
		e.opcode = (uint8_t)op;
		e.payload_len = seg.payload_len;
		if (oi->inv_stag)
			e.inval_stag = inv;
		if (op == RDMAP_OP_READ_REQ) {
			struct rdmap_read_req rr;
			rdmap_read_req_decode(body, &rr);
			e.sink_stag = rr.sink_stag;
			e.sink_to = rr.sink_to;
			e.rd_size = rr.size;
			e.src_stag = rr.src_stag;
			e.src_to = rr.src_to;
			e.payload_len = 0;
		}
		send_ulpdu(s, side, ulpdu, hl + seg.payload_len, &e);
	}
	return msn;
}

static void send_read_req(struct sess *s, int side, uint32_t sink_stag, uint64_t sink_to,
			  uint32_t size, uint32_t src_stag, uint64_t src_to)
{
	struct rdmap_read_req rr = { sink_stag, sink_to, size, src_stag, src_to };
	uint8_t body[RDMAP_READ_REQ_LEN];
	rdmap_read_req_encode(&rr, body);
	send_msg(s, side, RDMAP_OP_READ_REQ, 0, 0, 0, body, sizeof(body));
}

static void send_terminate(struct sess *s, int side, struct iwarp_err e)
{
	struct rdmap_term t;
	rdmap_term_build(e, s->last_ulpdu[!side], s->last_ulpdu_len[!side], &t);
	uint8_t ulpdu[DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_MAX_LEN];
	uint32_t msn = s->msn[side][RDMAP_QN_TERMINATE]++;
	size_t n = rdmap_term_ulpdu_encode(&t, msn, ulpdu, sizeof(ulpdu));
	check(n > 0, "rdmap_term_ulpdu_encode failed");
	struct iwd_seg x;
	memset(&x, 0, sizeof(x));
	x.last = true;
	x.dv = 1;
	x.rv = 1;
	x.opcode = RDMAP_OP_TERMINATE;
	x.qn = RDMAP_QN_TERMINATE;
	x.msn = msn;
	x.term_layer = e.layer;
	x.term_etype = e.etype;
	x.term_ecode = e.ecode;
	x.payload_len = (uint32_t)(n - DDP_UNTAGGED_HDR_LEN - rdmap_term_len(&t));
	send_ulpdu(s, side, ulpdu, n, &x);
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 17u + i * 7u + (i >> 9));
}

static void send_frame(struct sess *s, int side, const struct mpa_frame *f)
{
	uint8_t buf[MPA_FRAME_HDR_LEN + MPA_PD_MAX_RFC];
	ssize_t n = mpa_frame_encode(f, buf, sizeof(buf));
	check(n > 0, "mpa_frame_encode failed");
	check(wt_tcp_send(&s->tcp, side, buf, (size_t)n) > 0, "TCP send failed");
}

/* TCP handshake, MPA Request/Reply through the real negotiation, RTR if P2P. */
static void sess_open(struct sess *s, struct wt_writer *w, size_t conn, const struct opts *o,
		      uint16_t cport, bool crc, bool markers, uint16_t ird, uint16_t ord)
{
	memset(s, 0, sizeof(*s));
	struct wt_endpoint cl, sv;
	wt_endpoint_make(&cl, 11, cport);
	wt_endpoint_make(&sv, 12, (uint16_t)o->port);
	wt_tcp_init(&s->tcp, w, &cl, &sv, 0x1000000u * (uint32_t)(conn + 1) + o->seed,
		    0x80000000u + 0x100000u * (uint32_t)conn + o->seed, (uint16_t)o->mss);
	s->conn = conn;
	s->coalesce = o->coalesce ? o->coalesce : 1;
	for (int d = 0; d < 2; d++)
		for (unsigned q = 0; q < RDMAP_NQUEUES; q++)
			s->msn[d][q] = DDP_MSN_INITIAL;
	check(wt_tcp_handshake(&s->tcp) == 0, "handshake failed");

	struct mpa_policy pc, ps;
	mpa_policy_default(&pc);
	pc.crc_required = crc;
	pc.markers_wanted = markers;
	pc.ird = ird;
	pc.ord = ord;
	mpa_policy_default(&ps);
	ps.markers_wanted = markers;
	ps.ird = ird;
	ps.ord = ord;

	struct mpa_frame req, req_rx, rep, rep_rx;
	struct mpa_parse_opts po;
	struct mpa_error err;
	mpa_build_request(&pc, &req);
	send_frame(s, WT_CLIENT, &req);

	uint8_t buf[MPA_FRAME_HDR_LEN + MPA_PD_MAX_RFC];
	ssize_t n = mpa_frame_encode(&req, buf, sizeof(buf));
	mpa_parse_opts_init(&po, MPA_EXPECT_REQUEST);
	check(mpa_frame_parse(buf, (size_t)n, &po, &req_rx, &err) == n, "own Request does not parse");
	if (mpa_negotiate_request(&ps, &req_rx, &rep, &s->sp, &err) != MPA_REQ_ACCEPT) {
		fprintf(stderr, "server rejects: %s\n", err.reason);
		exit(2);
	}
	send_frame(s, WT_SERVER, &rep);

	uint8_t rbuf[MPA_FRAME_HDR_LEN + MPA_PD_MAX_RFC];
	n = mpa_frame_encode(&rep, rbuf, sizeof(rbuf));
	mpa_parse_opts_init(&po, MPA_EXPECT_REPLY);
	check(mpa_frame_parse(rbuf, (size_t)n, &po, &rep_rx, &err) == n, "own Reply does not parse");
	if (mpa_negotiate_reply(&pc, &req, &rep_rx, &s->cp, &err) != MPA_REPLY_CONNECTED) {
		fprintf(stderr, "client refuses reply: %s\n", err.reason ? err.reason : "rejected");
		exit(2);
	}
	check(s->cp.crc == s->sp.crc, "client and server disagree on CRC");
	check(s->cp.markers_tx == s->sp.markers_rx && s->sp.markers_tx == s->cp.markers_rx,
	      "client and server disagree on markers");
	mpa_tx_init(&s->tx[WT_CLIENT], s->cp.crc || codec_omits_crc, s->cp.markers_tx);
	mpa_tx_init(&s->tx[WT_SERVER], s->sp.crc || codec_omits_crc, s->sp.markers_tx);
	s->zero_crc[WT_CLIENT] = !s->cp.crc && codec_omits_crc;
	s->zero_crc[WT_SERVER] = !s->sp.crc && codec_omits_crc;
	if (s->zero_crc[0] && (s->cp.markers_tx || s->sp.markers_tx))
		die("markers without CRC need an MPA encoder that keeps the CRC field");
	size_t emss = s->tcp.mss;
	s->mulpdu = o->mulpdu ? o->mulpdu : (uint32_t)mpa_mulpdu(emss, s->cp.markers_tx || s->sp.markers_tx);

	if (!o->quiet) {
		printf("conn %zu: client %u.%u.%u.%u:%u -> server :%u  MPA rev %u%s, CRC %s, markers %s,"
		       " IRD/ORD %u/%u, RTR %s, MULPDU %u\n", conn, cl.ip[0], cl.ip[1], cl.ip[2],
		       cl.ip[3], cport, o->port, s->cp.rev, s->cp.enhanced ? " enhanced" : "",
		       s->cp.crc ? "on" : "off", s->cp.markers_tx ? "on" : "off", s->cp.local_ird,
		       s->cp.local_ord, s->cp.p2p ? mpa_rtr_name(s->cp.rtr) : "none", s->mulpdu);
	}
	if (s->cp.p2p) {
		switch (s->cp.rtr) {
		case MPA_RTR_WRITE:
			send_msg(s, WT_CLIENT, RDMAP_OP_WRITE, 1, 0, 0, NULL, 0);
			break;
		case MPA_RTR_READ:
			send_read_req(s, WT_CLIENT, 1, 0, 0, 1, 0);
			break;
		case MPA_RTR_SEND:
			send_msg(s, WT_CLIENT, RDMAP_OP_SEND, 0, 0, 0, NULL, 0);
			break;
		default:
			die("P2P without an RTR type");
		}
		flush(s);
	}
}

static void sess_close(struct sess *s)
{
	flush(s);
	wt_tcp_ack(&s->tcp, WT_CLIENT);
	wt_tcp_ack(&s->tcp, WT_SERVER);
	check(wt_tcp_close(&s->tcp, WT_CLIENT) == 0, "close failed");
}

/* rping-like exchange (rdma-core's rping: struct rping_rdma_info { be64 buf; be32 rkey;
 * be32 size; }). */
static void rping_exchange(struct sess *s, unsigned size, unsigned iter)
{
	static uint8_t data[65536];
	uint64_t cbuf = 0x00007f3a12340000ull + iter * 0x10000ull, sbuf = 0x000055d0aa000000ull;
	uint32_t crkey = 0x1a2b3c00u + iter, srkey = 0x5e6f7000u + iter;
	uint8_t info[16];
	for (int i = 0; i < 8; i++)
		info[i] = (uint8_t)(cbuf >> (56 - 8 * i));
	for (int i = 0; i < 4; i++) {
		info[8 + i] = (uint8_t)(crkey >> (24 - 8 * i));
		info[12 + i] = (uint8_t)(size >> (24 - 8 * i));
	}
	/* client: "here is my source buffer" */
	send_msg(s, WT_CLIENT, RDMAP_OP_SEND, 0, 0, 0, info, sizeof(info));
	wt_writer_advance(s->tcp.w, 100);
	/* server: RDMA READ the client's buffer into its own */
	send_read_req(s, WT_SERVER, srkey, sbuf, size, crkey, cbuf);
	fill(data, size, iter);
	send_msg(s, WT_CLIENT, RDMAP_OP_READ_RESP, srkey, sbuf, 0, data, size);
	wt_writer_advance(s->tcp.w, 100);
	/* server: "go ahead", then RDMA WRITE back, then Send with Invalidate of the rkey */
	for (int i = 0; i < 8; i++)
		info[i] = (uint8_t)(sbuf >> (56 - 8 * i));
	send_msg(s, WT_SERVER, RDMAP_OP_SEND, 0, 0, 0, info, sizeof(info));
	send_msg(s, WT_SERVER, RDMAP_OP_WRITE, crkey, cbuf, 0, data, size);
	send_msg(s, WT_SERVER, RDMAP_OP_SEND_INV, 0, 0, crkey, info, 16);
	wt_writer_advance(s->tcp.w, 100);
	/* client: done, with a solicited event */
	send_msg(s, WT_CLIENT, RDMAP_OP_SEND_SE, 0, 0, 0, (const uint8_t *)"rping done\n", 11);
	flush(s);
}

static unsigned lcg(unsigned *x)
{
	*x = *x * 1103515245u + 12345u;
	return (*x >> 8) & 0xffffff;
}

/* Every opcode, many sizes, both directions. */
static void sweep(struct sess *s, unsigned seed)
{
	static uint8_t data[3 * 65536];
	unsigned x = seed * 2654435761u + 1;
	fill(data, sizeof(data), seed);
	uint32_t maxpl = s->mulpdu - DDP_UNTAGGED_HDR_LEN;
	/* every small size: all four pads, zero-length messages */
	for (unsigned len = 0; len <= 9; len++) {
		send_msg(s, len & 1, RDMAP_OP_SEND, 0, 0, 0, data, len);
		send_msg(s, !(len & 1), RDMAP_OP_WRITE, 0x100 + len, 0x1000ull * len, 0, data, len);
	}
	/* around the MULPDU boundary and multi-segment */
	uint32_t sizes[] = { maxpl - 1, maxpl, maxpl + 1, maxpl + 4, 2 * maxpl + 3, 5000 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		send_msg(s, WT_CLIENT, RDMAP_OP_SEND, 0, 0, 0, data, sizes[i]);
		send_msg(s, WT_SERVER, RDMAP_OP_WRITE, 0xabcd0000u + (uint32_t)i,
			 0xffff800000000000ull + i * 0x10000, 0, data, sizes[i]);
	}
	/* reads of random sizes */
	for (unsigned i = 0; i < 6; i++) {
		uint32_t sz = lcg(&x) % (3 * maxpl + 1);
		uint64_t sink_to = 0x7f0000000000ull + lcg(&x), src_to = 0x550000000000ull + lcg(&x);
		send_read_req(s, i & 1, 0x2000u + i, sink_to, sz, 0x3000u + i, src_to);
		send_msg(s, !(i & 1), RDMAP_OP_READ_RESP, 0x2000u + i, sink_to, 0, data, sz);
	}
	/* the other Send flavours, random sizes */
	static const enum rdmap_opcode sends[] = { RDMAP_OP_SEND_INV, RDMAP_OP_SEND_SE,
						   RDMAP_OP_SEND_SE_INV, RDMAP_OP_SEND };
	for (unsigned i = 0; i < 12; i++) {
		uint32_t sz = lcg(&x) % (2 * maxpl + 7);
		send_msg(s, i & 1, sends[i % 4], 0, 0, 0xdead0000u + i, data, sz);
	}
	/* the server ends it with a Terminate (DDP untagged "MSN range", header copied) */
	flush(s);
	send_terminate(s, WT_SERVER, ddp_err_untagged(DDP_ECODE_U_MSN_RANGE));
	flush(s);
}

/* ---- verification ------------------------------------------------------------------------ */

struct verify {
	size_t next[MAX_CONNS][2];  /* next expectation index per conn/dir */
	size_t *map[MAX_CONNS][2];
	size_t nmap[MAX_CONNS][2];
	size_t seen;
	int quiet;
	struct iwd_seg decoded[MAX_EXPECT];
	size_t ndecoded;
};

#define CMP(field, fmt)                                                                      \
	do {                                                                                 \
		if (e->field != g->field) {                                                  \
			printf("MISMATCH conn %zu %s FPDU %zu: " #field " encoded " fmt          \
			       " decoded " fmt "\n", g->conn, g->dir ? "s>c" : "c>s", g->index,   \
			       e->field, g->field);                                           \
			failures++;                                                          \
		}                                                                            \
	} while (0)

static void verify_cb(void *arg, const struct iwd_conn *c, const struct iwd_seg *g)
{
	(void)c;
	struct verify *v = arg;
	if (v->ndecoded < MAX_EXPECT) {
		v->decoded[v->ndecoded] = *g;
		v->decoded[v->ndecoded++].ulpdu = NULL;
	}
	if (g->conn >= MAX_CONNS || v->next[g->conn][g->dir] >= v->nmap[g->conn][g->dir]) {
		printf("MISMATCH: decoded an FPDU that was never encoded (conn %zu dir %d)\n",
		       g->conn, g->dir);
		failures++;
		return;
	}
	size_t ei = v->map[g->conn][g->dir][v->next[g->conn][g->dir]++];
	struct iwd_seg *e = &expect[ei];
	v->seen++;
	if (g->error) {
		printf("MISMATCH conn %zu FPDU %zu: decoder error %s\n", g->conn, g->index, g->error);
		failures++;
	}
	CMP(index, "%zu");
	CMP(ulpdu_len, "%zu");
	CMP(tagged, "%d");
	CMP(last, "%d");
	CMP(opcode, "%u");
	CMP(stag, "0x%x");
	CMP(to, "0x%" PRIx64);
	CMP(qn, "%u");
	CMP(msn, "%u");
	CMP(mo, "%u");
	CMP(inval_stag, "0x%x");
	CMP(sink_stag, "0x%x");
	CMP(sink_to, "0x%" PRIx64);
	CMP(rd_size, "%u");
	CMP(src_stag, "0x%x");
	CMP(src_to, "0x%" PRIx64);
	CMP(crc, "%d");
	CMP(payload_len, "%u");
	if (e->opcode == RDMAP_OP_TERMINATE) {
		CMP(term_layer, "%u");
		CMP(term_etype, "%u");
		CMP(term_ecode, "%u");
	}
	/* what only the decoder knows, for the TSV */
	e->frame = g->frame;
	e->mpa_pos = g->mpa_pos;
	e->wire_len = g->wire_len;
	e->first_frame = g->first_frame;
	e->seq = g->seq;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct iwd_seg *x = a, *y = b;
	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	if (x->conn != y->conn)
		return x->conn < y->conn ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void write_expect(const char *path, const struct wt_capture *cap)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die("cannot write the expectation file");
	for (size_t i = 0; i < cap->nconns; i++) {
		char a[32], b[32];
		fprintf(f, "#conn\t%zu\t%s\t%s\n", i,
			wt_endpoint_str(&cap->conns[i].dir[0].src, a, sizeof(a)),
			wt_endpoint_str(&cap->conns[i].dir[1].src, b, sizeof(b)));
	}
	fprintf(f, "#frame\tconn\tdir\tidx\tulpdu_len\ttagged\tlast\topcode\tstag\tto\tqn\tmsn\t"
		   "mo\tinval\tsink_stag\tsink_to\trd_size\tsrc_stag\tsrc_to\tcrc\tpad\t"
		   "term_layer\tterm_etype\tterm_ecode\tmpa_pos\twire_len\n");
	for (size_t i = 0; i < nexpect; i++) {
		const struct iwd_seg *s = &expect[i];
		fprintf(f, "%u\t%zu\t%s\t%zu\t%zu\t%d\t%d\t%u\t0x%08x\t0x%016llx\t%u\t%u\t%u\t"
			   "0x%08x\t0x%08x\t0x%016llx\t%u\t0x%08x\t0x%016llx\t%d\t%zu\t%u\t%u\t%u\t%u\t%zu\n",
			s->frame, s->conn, s->dir ? "s>c" : "c>s", s->index, s->ulpdu_len, s->tagged,
			s->last, s->opcode, s->stag, (unsigned long long)s->to, s->qn, s->msn, s->mo,
			s->inval_stag, s->sink_stag, (unsigned long long)s->sink_to, s->rd_size,
			s->src_stag, (unsigned long long)s->src_to, s->crc, mpa_pad_len(s->ulpdu_len),
			s->term_layer, s->term_etype, s->term_ecode, s->mpa_pos, s->wire_len);
	}
	if (fclose(f))
		die("cannot write the expectation file");
}

static int verify_pcap(const struct opts *o, size_t nconns, const bool *want_crc,
		       const bool *want_markers)
{
	struct wt_capture cap;
	char err[256];
	if (wt_capture_load(o->out, &cap, err, sizeof(err))) {
		fprintf(stderr, "softrnic-demo: reading back: %s\n", err);
		return 1;
	}
	if (cap.bad_ip_csum || cap.bad_tcp_csum) {
		printf("MISMATCH: %zu bad IPv4 / %zu bad TCP checksums in our own pcap\n",
		       cap.bad_ip_csum, cap.bad_tcp_csum);
		failures++;
	}
	if (cap.nconns != nconns) {
		printf("MISMATCH: %zu connections written, %zu read back\n", nconns, cap.nconns);
		failures++;
	}
	static struct verify v;
	memset(&v, 0, sizeof(v));
	v.quiet = o->quiet;
	for (size_t i = 0; i < nexpect; i++) {
		size_t c = expect[i].conn;
		int d = expect[i].dir;
		size_t *m = realloc(v.map[c][d], (v.nmap[c][d] + 1) * sizeof(*m));
		if (!m)
			die("out of memory");
		m[v.nmap[c][d]++] = i;
		v.map[c][d] = m;
	}
	size_t per_op[16] = { 0 };
	for (size_t i = 0; i < cap.nconns && i < MAX_CONNS; i++) {
		struct iwd_conn ic;
		int rc = iwd_decode_conn(&cap, i, &ic, verify_cb, &v);
		if (rc != 0) {
			printf("MISMATCH: conn %zu does not decode: %s\n", i,
			       rc > 0 ? "not MPA" : ic.error);
			failures++;
			continue;
		}
		if (ic.crc != want_crc[i] || ic.markers[0] != want_markers[i] ||
		    ic.markers[1] != want_markers[i]) {
			printf("MISMATCH: conn %zu negotiated CRC %d markers %d/%d\n", i, ic.crc,
			       ic.markers[0], ic.markers[1]);
			failures++;
		}
		if (ic.trailing[0] || ic.trailing[1]) {
			printf("MISMATCH: conn %zu has %zu/%zu undecoded trailing octets\n", i,
			       ic.trailing[0], ic.trailing[1]);
			failures++;
		}
		for (int d = 0; d < 2; d++)
			if (v.next[i][d] != v.nmap[i][d]) {
				printf("MISMATCH: conn %zu dir %d: %zu FPDUs encoded, %zu decoded\n",
				       i, d, v.nmap[i][d], v.next[i][d]);
				failures++;
			}
	}
	if (!o->quiet) {
		/* one line per FPDU, in frame order */
		qsort(v.decoded, v.ndecoded, sizeof(v.decoded[0]), seg_cmp);
		printf("frame dir opcode                T/U L  fields\n");
		for (size_t i = 0; i < v.ndecoded; i++) {
			char line[256];
			iwd_seg_format(&v.decoded[i], line, sizeof(line));
			printf("%s\n", line);
		}
	}
	for (size_t i = 0; i < nexpect; i++)
		per_op[expect[i].opcode & 15]++;
	printf("%s: %zu frames, %zu connections, %zu FPDUs encoded, %zu decoded back, "
	       "%d mismatches\n  FPDUs per opcode:", o->out, cap.nframes, cap.nconns, nexpect,
	       v.seen, failures);
	for (unsigned op = 0; op < 16; op++)
		if (per_op[op])
			printf(" %s %zu;", iwd_opcode_name((uint8_t)op), per_op[op]);
	printf("\n");
	if (o->expect)
		write_expect(o->expect, &cap);
	for (size_t c = 0; c < MAX_CONNS; c++)
		for (int d = 0; d < 2; d++)
			free(v.map[c][d]);
	wt_capture_free(&cap);
	return failures ? 1 : 0;
}

static unsigned num(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || *end || v > 0xffffffffu) {
		fprintf(stderr, "softrnic-demo: bad %s '%s'\n", what, s);
		exit(2);
	}
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	struct opts o = { .out = "demo.pcap", .scenario = "demo", .crc = -1, .markers = -1,
			  .mss = 1460, .coalesce = 1, .port = 7174, .seed = 1 };
	static const struct option lo[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "crc", required_argument, NULL, 'c' },
		{ "markers", required_argument, NULL, 'm' },
		{ "mss", required_argument, NULL, 'M' },
		{ "mulpdu", required_argument, NULL, 'u' },
		{ "coalesce", required_argument, NULL, 'C' },
		{ "port", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "o:e:q", lo, NULL)) != -1) {
		switch (opt) {
		case 'o': o.out = optarg; break;
		case 'e': o.expect = optarg; break;
		case 'q': o.quiet = 1; break;
		case 's': o.scenario = optarg; break;
		case 'c': o.crc = (int)num(optarg, "--crc"); break;
		case 'm': o.markers = (int)num(optarg, "--markers"); break;
		case 'M': o.mss = num(optarg, "--mss"); break;
		case 'u': o.mulpdu = num(optarg, "--mulpdu"); break;
		case 'C': o.coalesce = num(optarg, "--coalesce"); break;
		case 'p': o.port = num(optarg, "--port"); break;
		case 'S': o.seed = num(optarg, "--seed"); break;
		default:
			fprintf(stderr, "usage: %s [-o FILE.pcap] [-e EXPECT.tsv] [-q] [--scenario "
					"demo|sweep] [--crc 0|1] [--markers 0|1] [--mss N] [--mulpdu N] "
					"[--coalesce N] [--port N] [--seed N]\n", argv[0]);
			return 2;
		}
	}
	if (o.mss < 64 || o.mss > 9000 || o.port == 0 || o.port > 65535 ||
	    (o.mulpdu && (o.mulpdu < 64 || o.mulpdu > MPA_MAX_ULPDU)))
		die("option out of range");
	codec_omits_crc = mpa_codec_omits_crc_field();

	char err[256];
	struct wt_writer *w = wt_writer_open(o.out, err, sizeof(err));
	if (!w)
		die(err);
	static struct sess s;
	bool want_crc[MAX_CONNS], want_markers[MAX_CONNS];
	size_t nconns;
	if (!strcmp(o.scenario, "demo")) {
		/* conn 0: CRC (default on), no markers; conn 1: markers + CRC */
		bool crc0 = o.crc != 0, mk0 = o.markers == 1;
		sess_open(&s, w, 0, &o, 40001, crc0, mk0, 4, 4);
		rping_exchange(&s, 6000, 0);
		sess_close(&s);
		want_crc[0] = crc0;
		want_markers[0] = mk0;
		wt_writer_advance(w, 5000);
		sess_open(&s, w, 1, &o, 40002, true, true, 1, 1);
		rping_exchange(&s, 3000, 1);
		sess_close(&s);
		want_crc[1] = true;
		want_markers[1] = true;
		nconns = 2;
	} else if (!strcmp(o.scenario, "sweep")) {
		bool crc = o.crc == 1, mk = o.markers == 1;
		sess_open(&s, w, 0, &o, 40000 + (uint16_t)(o.seed % 20000), crc, mk, 8, 8);
		sweep(&s, o.seed);
		sess_close(&s);
		want_crc[0] = crc;
		want_markers[0] = mk;
		nconns = 1;
	} else {
		die("unknown scenario");
	}
	if (wt_writer_close(w))
		die("writing the pcap failed");
	if (!o.quiet)
		printf("wrote %s; decoding it back with softrnic's decoder:\n", o.out);
	return verify_pcap(&o, nconns, want_crc, want_markers);
}
