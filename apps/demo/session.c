/* softrnic-demo encoding plumbing: one TCP connection whose two sides negotiate MPA with the
 * real negotiation code and then send RDMAP messages through DDP segmentation and MPA
 * framing. Every FPDU sent is recorded with the fields a decoder must find in it. */
#include "demo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp.h"

void demo_die(const char *what)
{
	fprintf(stderr, "softrnic-demo: %s\n", what);
	exit(2);
}

void demo_check(bool ok, const char *what)
{
	if (!ok)
		demo_die(what);
}

void sess_flush(struct sess *s)
{
	if (!s->pend_len)
		return;
	demo_check(wt_tcp_send(&s->tcp, s->pend_side, s->pend, s->pend_len) > 0,
		   "TCP send failed");
	s->pend_len = 0;
	s->pend_n = 0;
}

/* Keeps the latest untagged ULPDU of side: a Terminate from the peer quotes it. */
static void remember_untagged(struct sess *s, int side, const uint8_t *ulpdu, size_t len)
{
	if (len <= sizeof(s->last_ulpdu[side]) && len > 0 && !(ulpdu[0] & DDP_CTRL_T)) {
		memcpy(s->last_ulpdu[side], ulpdu, len);
		s->last_ulpdu_len[side] = len;
	}
}

static void record_expect(struct sess *s, int side, size_t ulpdu_len, struct iwd_seg *exp)
{
	struct demo_expect *x = s->expect;
	demo_check(x->n < DEMO_MAX_FPDUS, "too many FPDUs");
	exp->conn = s->conn;
	exp->dir = side;
	exp->index = s->nfpdu[side]++;
	exp->ulpdu_len = ulpdu_len;
	exp->crc = s->tx[side].crc;
	x->seg[x->n++] = *exp;
}

/* Frames one ULPDU from side and queues it for TCP; exp holds its DDP/RDMAP fields. */
static void send_ulpdu(struct sess *s, int side, const uint8_t *ulpdu, size_t len,
		       struct iwd_seg *exp)
{
	if (s->pend_len && s->pend_side != side)
		sess_flush(s);
	s->pend_side = side;
	struct iovec iov = { .iov_base = (void *)ulpdu, .iov_len = len };
	ssize_t n = mpa_tx_encode(&s->tx[side], &iov, 1, s->pend + s->pend_len,
				  sizeof(s->pend) - s->pend_len);
	if (n < 0) {
		fprintf(stderr, "mpa_tx_encode: %s\n", strerror((int)-n));
		exit(2);
	}
	s->pend_len += (size_t)n;
	s->pend_n++;
	remember_untagged(s, side, ulpdu, len);
	record_expect(s, side, len, exp);
	if (s->pend_n >= s->coalesce)
		sess_flush(s);
}

/* The fields a decoder must find in DDP segment seg of a message with opcode op. */
static void expect_segment(struct iwd_seg *e, const struct ddp_seg *seg, enum rdmap_opcode op,
			   uint32_t inv, const uint8_t *body)
{
	memset(e, 0, sizeof(*e));
	e->tagged = seg->hdr.tagged;
	e->last = seg->hdr.last;
	e->dv = seg->hdr.dv;
	e->stag = seg->hdr.stag;
	e->to = seg->hdr.to;
	e->qn = seg->hdr.qn;
	e->msn = seg->hdr.msn;
	e->mo = seg->hdr.mo;
	e->rv = 1;
	e->opcode = (uint8_t)op;
	e->payload_len = seg->payload_len;
	if (rdmap_opinfo(op)->inv_stag)
		e->inval_stag = inv;
	if (op == RDMAP_OP_READ_REQ) {
		/* the body is the Read Request header, which the decoder does not count as
		 * payload */
		struct rdmap_read_req rr;
		rdmap_read_req_decode(body, &rr);
		e->sink_stag = rr.sink_stag;
		e->sink_to = rr.sink_to;
		e->rd_size = rr.size;
		e->src_stag = rr.src_stag;
		e->src_to = rr.src_to;
		e->payload_len = 0;
	}
}

uint32_t sess_send_msg(struct sess *s, int side, enum rdmap_opcode op, uint32_t stag,
		       uint64_t to, uint32_t inv, const uint8_t *body, size_t len)
{
	const struct rdmap_opinfo *oi = rdmap_opinfo(op);
	uint32_t msn = oi->tagged ? 0 : s->msn[side][oi->qn]++;
	struct ddp_hdr tmpl = rdmap_ddp_tmpl(op, stag, to, msn, inv);
	struct ddp_seg_iter it;
	struct iwarp_err err;
	demo_check(ddp_seg_init(&it, &tmpl, len, s->mulpdu, 0, &err) == 0, "ddp_seg_init failed");
	struct ddp_seg seg;
	static uint8_t ulpdu[65536];
	while (ddp_seg_next(&it, &seg)) {
		size_t hl = ddp_hdr_encode(&seg.hdr, ulpdu, sizeof(ulpdu));
		demo_check(hl == ddp_hdr_len(seg.hdr.tagged), "ddp_hdr_encode failed");
		demo_check(hl + seg.payload_len <= sizeof(ulpdu), "segment too large");
		if (seg.payload_len)
			memcpy(ulpdu + hl, body + seg.payload_off, seg.payload_len);
		struct iwd_seg e;
		expect_segment(&e, &seg, op, inv, body);
		send_ulpdu(s, side, ulpdu, hl + seg.payload_len, &e);
	}
	return msn;
}

void sess_send_read_req(struct sess *s, int side, uint32_t sink_stag, uint64_t sink_to,
			uint32_t size, uint32_t src_stag, uint64_t src_to)
{
	struct rdmap_read_req rr = { sink_stag, sink_to, size, src_stag, src_to };
	uint8_t body[RDMAP_READ_REQ_LEN];
	rdmap_read_req_encode(&rr, body);
	sess_send_msg(s, side, RDMAP_OP_READ_REQ, 0, 0, 0, body, sizeof(body));
}

void sess_send_terminate(struct sess *s, int side, struct iwarp_err e)
{
	struct rdmap_term t;
	rdmap_term_build(e, s->last_ulpdu[!side], s->last_ulpdu_len[!side], &t);
	uint8_t ulpdu[DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_MAX_LEN];
	uint32_t msn = s->msn[side][RDMAP_QN_TERMINATE]++;
	size_t n = rdmap_term_ulpdu_encode(&t, msn, ulpdu, sizeof(ulpdu));
	demo_check(n > 0, "rdmap_term_ulpdu_encode failed");
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

/* Sends MPA Request or Reply f from side and parses the octets sent into *rx, as the peer
 * receives them. */
static void send_mpa_frame(struct sess *s, int side, const struct mpa_frame *f,
			   enum mpa_frame_expect kind, struct mpa_frame *rx)
{
	uint8_t buf[MPA_FRAME_HDR_LEN + MPA_PD_MAX_RFC];
	ssize_t n = mpa_frame_encode(f, buf, sizeof(buf));
	demo_check(n > 0, "mpa_frame_encode failed");
	demo_check(wt_tcp_send(&s->tcp, side, buf, (size_t)n) > 0, "TCP send failed");
	struct mpa_parse_opts po;
	struct mpa_error err;
	mpa_parse_opts_init(&po, kind);
	demo_check(mpa_frame_parse(buf, (size_t)n, &po, rx, &err) == n,
		   kind == MPA_EXPECT_REQUEST ? "own Request does not parse"
					      : "own Reply does not parse");
}

static void policy_for(const struct sess_params *p, struct mpa_policy *pol)
{
	mpa_policy_default(pol);
	pol->markers_wanted = p->markers;
	pol->ird = p->ird;
	pol->ord = p->ord;
}

/* MPA Request and Reply through mpa_negotiate_*; fills s->cp and s->sp. Only the client
 * asks for CRC (p->crc), so the server's default policy decides the rest. */
static void negotiate(struct sess *s, const struct sess_params *p)
{
	struct mpa_policy pc, ps;
	policy_for(p, &pc);
	pc.crc_required = p->crc;
	policy_for(p, &ps);
	struct mpa_frame req, req_rx, rep, rep_rx;
	struct mpa_error err;
	mpa_build_request(&pc, &req);
	send_mpa_frame(s, WT_CLIENT, &req, MPA_EXPECT_REQUEST, &req_rx);
	if (mpa_negotiate_request(&ps, &req_rx, &rep, &s->sp, &err) != MPA_REQ_ACCEPT) {
		fprintf(stderr, "server rejects: %s\n", err.reason);
		exit(2);
	}
	send_mpa_frame(s, WT_SERVER, &rep, MPA_EXPECT_REPLY, &rep_rx);
	if (mpa_negotiate_reply(&pc, &req, &rep_rx, &s->cp, &err) != MPA_REPLY_CONNECTED) {
		fprintf(stderr, "client refuses reply: %s\n", err.reason ? err.reason : "rejected");
		exit(2);
	}
	demo_check(s->cp.crc == s->sp.crc, "client and server disagree on CRC");
	demo_check(s->cp.markers_tx == s->sp.markers_rx && s->sp.markers_tx == s->cp.markers_rx,
		   "client and server disagree on markers");
}

/* The zero-length RDMA Write, Read or Send that P2P mode sends first. */
static void send_rtr(struct sess *s)
{
	switch (s->cp.rtr) {
	case MPA_RTR_WRITE:
		sess_send_msg(s, WT_CLIENT, RDMAP_OP_WRITE, 1, 0, 0, NULL, 0);
		break;
	case MPA_RTR_READ:
		sess_send_read_req(s, WT_CLIENT, 1, 0, 0, 1, 0);
		break;
	case MPA_RTR_SEND:
		sess_send_msg(s, WT_CLIENT, RDMAP_OP_SEND, 0, 0, 0, NULL, 0);
		break;
	default:
		demo_die("P2P without an RTR type");
	}
	sess_flush(s);
}

void sess_open(struct sess *s, struct wt_writer *w, size_t conn, const struct demo_opts *o,
	       const struct sess_params *p, struct demo_expect *expect)
{
	memset(s, 0, sizeof(*s));
	struct wt_endpoint cl, sv;
	wt_endpoint_make(&cl, 11, p->client_port);
	wt_endpoint_make(&sv, 12, (uint16_t)o->port);
	wt_tcp_init(&s->tcp, w, &cl, &sv, 0x1000000u * (uint32_t)(conn + 1) + o->seed,
		    0x80000000u + 0x100000u * (uint32_t)conn + o->seed, (uint16_t)o->mss);
	s->conn = conn;
	s->expect = expect;
	s->coalesce = o->coalesce ? o->coalesce : 1;
	for (int d = 0; d < 2; d++)
		for (unsigned q = 0; q < RDMAP_NQUEUES; q++)
			s->msn[d][q] = DDP_MSN_INITIAL;
	demo_check(wt_tcp_handshake(&s->tcp) == 0, "handshake failed");

	negotiate(s, p);
	mpa_tx_init(&s->tx[WT_CLIENT], s->cp.crc, s->cp.markers_tx);
	mpa_tx_init(&s->tx[WT_SERVER], s->sp.crc, s->sp.markers_tx);
	bool markers = s->cp.markers_tx || s->sp.markers_tx;
	s->mulpdu = o->mulpdu ? o->mulpdu : (uint32_t)mpa_mulpdu(s->tcp.mss, markers);
	if (!o->quiet)
		report_session(s);
	if (s->cp.p2p)
		send_rtr(s);
}

void sess_close(struct sess *s)
{
	sess_flush(s);
	wt_tcp_ack(&s->tcp, WT_CLIENT);
	wt_tcp_ack(&s->tcp, WT_SERVER);
	demo_check(wt_tcp_close(&s->tcp, WT_CLIENT) == 0, "close failed");
}
