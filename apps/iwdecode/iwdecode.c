/* iwdecode: MPA/DDP/RDMAP decoding of reassembled TCP streams with softrnic's own codecs. */
#include "iwdecode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp.h"
#include "rdmap.h"

#define ULPDU_BUF (MPA_MAX_ULPDU + 1)

/* One direction's stream from the end of its MPA Request or Reply (Full Operation Phase). */
struct dir_decoder {
	struct iwd_conn *c;
	const struct wt_stream *s;
	int dir;
	uint64_t base;          /* stream offset of the first Full Operation octet */
	uint8_t *ulpdu;         /* ULPDU_BUF octets: the current FPDU's ULPDU */
	iwd_seg_cb cb;
	void *arg;
};

/* Only the first error is kept in c->error; the format is checked like printf's. */
static void conn_error(struct iwd_conn *c, uint32_t frame, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void conn_error(struct iwd_conn *c, uint32_t frame, const char *fmt, ...)
{
	c->errors++;
	if (c->error[0])
		return;
	int n = snprintf(c->error, sizeof(c->error), "frame %u: ", frame);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(c->error))
		vsnprintf(c->error + n, sizeof(c->error) - (size_t)n, fmt, ap);
	va_end(ap);
}

static const char *side_name(int dir)
{
	return dir == WT_CLIENT ? "client" : "server";
}

/* The frame carrying stream offset off (ready: the frame after which it was contiguous);
 * past the end, the last frame with data. */
static uint32_t frame_at(const struct wt_stream *s, uint64_t off, bool ready)
{
	const struct wt_chunk *ch = wt_stream_locate(s, off);
	if (!ch)
		return s->nchunks ? s->chunks[s->nchunks - 1].frame : 0;
	return ready ? ch->ready : ch->frame;
}

static void copy_ddp_fields(struct iwd_seg *g, const struct rdmap_msg *m)
{
	const struct ddp_hdr *h = &m->ddp;
	g->tagged = h->tagged;
	g->last = h->last;
	g->dv = h->dv;
	g->rsvd = h->rsvd;
	g->stag = h->stag;
	g->to = h->to;
	g->qn = h->qn;
	g->msn = h->msn;
	g->mo = h->mo;
	g->rv = m->rv;
	g->opcode = m->opcode;
	g->payload_len = (uint32_t)m->payload_len;
}

/* The opcode-specific RDMAP fields of a message that validated. */
static void copy_rdmap_fields(struct iwd_seg *g, const struct rdmap_msg *m)
{
	if (m->opcode == RDMAP_OP_SEND_INV || m->opcode == RDMAP_OP_SEND_SE_INV)
		g->inval_stag = m->inv_stag;
	if (m->opcode == RDMAP_OP_READ_REQ) {
		g->sink_stag = m->u.read_req.sink_stag;
		g->sink_to = m->u.read_req.sink_to;
		g->rd_size = m->u.read_req.size;
		g->src_stag = m->u.read_req.src_stag;
		g->src_to = m->u.read_req.src_to;
	}
	/* Only the first segment of a Terminate carries its error fields. */
	if (m->opcode == RDMAP_OP_TERMINATE && m->ddp.mo == 0) {
		g->term_layer = m->u.term.err.layer;
		g->term_etype = m->u.term.err.etype;
		g->term_ecode = m->u.term.err.ecode;
	}
}

/* Runs g->ulpdu through the DDP and RDMAP decoders; g->error says why it was refused. */
static void decode_ulpdu(struct iwd_seg *g)
{
	struct rdmap_msg m;
	struct iwarp_err e;
	memset(&m, 0, sizeof(m));
	if (rdmap_msg_decode(g->ulpdu, g->ulpdu_len, &m, &e)) {
		g->error = rdmap_err_str(e);
		return;
	}
	copy_ddp_fields(g, &m);
	if (ddp_hdr_validate(&m.ddp, RDMAP_NQUEUES, &e)) {
		g->error = ddp_err_str(e);
		return;
	}
	g->ddp_ok = true;
	if (rdmap_msg_validate(&m, RDMAP_NQUEUES, false, &e)) {
		g->error = rdmap_err_str(e);
		return;
	}
	g->rdmap_ok = true;
	copy_rdmap_fields(g, &m);
}

/* The FPDU at stream offsets [start, end) is complete: decode it and report it. */
static void deliver_fpdu(struct dir_decoder *dd, uint64_t start, uint64_t end, size_t ulpdu_len)
{
	struct iwd_conn *c = dd->c;
	const struct wt_stream *s = dd->s;
	const struct wt_chunk *first = wt_stream_locate(s, start);
	struct iwd_seg g;
	memset(&g, 0, sizeof(g));
	g.conn = c->index;
	g.dir = dd->dir;
	g.index = c->fpdus[dd->dir];
	g.off = start;
	g.mpa_pos = (uint32_t)(start - dd->base);
	g.wire_len = (size_t)(end - start);
	g.first_frame = frame_at(s, start, false);
	g.frame = frame_at(s, end - 1, true);
	g.seq = first->seq + (uint32_t)(start - first->off);
	g.ulpdu_len = ulpdu_len;
	g.crc = c->crc;
	g.ulpdu = dd->ulpdu;
	decode_ulpdu(&g);
	if (g.error)
		conn_error(c, g.frame, "%s FPDU %zu: %s", side_name(dd->dir), g.index, g.error);
	else
		c->fpdus[dd->dir]++;
	if (dd->cb)
		dd->cb(dd->arg, c, &g);
}

/* Feeds the whole stream to the FPDU decoder, delivering each complete FPDU, until the
 * input runs out (the rest is counted as trailing) or a framing error. */
static void decode_direction(struct dir_decoder *dd)
{
	struct iwd_conn *c = dd->c;
	const struct wt_stream *s = dd->s;
	struct mpa_rx_cfg cfg = { .crc = c->crc, .markers = c->markers[dd->dir], .pos = 0 };
	struct mpa_rx rx;
	mpa_rx_init(&rx, &cfg);
	uint64_t off = dd->base, start = dd->base;
	for (;;) {
		struct mpa_rx_piece p;
		off += mpa_rx_next(&rx, s->data + off, s->len - off, &p);
		switch (p.kind) {
		case MPA_RX_NEED_MORE:
			c->trailing[dd->dir] = (size_t)(s->len - start);
			return;
		case MPA_RX_HEAD:
		case MPA_RX_DATA:
			if (p.len)
				memcpy(dd->ulpdu + p.off, p.data, p.len);
			break;
		case MPA_RX_ERROR:
			conn_error(c, frame_at(s, off < s->len ? off : s->len - 1, false),
				   "%s stream offset %llu: MPA error 0x%02x: %s", side_name(dd->dir),
				   (unsigned long long)off, p.err.ecode,
				   p.err.reason ? p.err.reason : "?");
			return;
		case MPA_RX_END:
			deliver_fpdu(dd, start, off, p.ulpdu_len);
			start = off;
			break;
		}
	}
}

/* Parses the MPA Request or Reply at the start of s into *f, and sets *frame to the frame
 * that completes it. Returns its length, or 0 after recording why it does not parse. */
static size_t parse_mpa_frame(struct iwd_conn *c, const struct wt_stream *s,
			      enum mpa_frame_expect kind, struct mpa_frame *f, uint32_t *frame)
{
	struct mpa_parse_opts opts;
	struct mpa_error err;
	mpa_parse_opts_init(&opts, kind);
	*frame = frame_at(s, 0, true);
	ssize_t n = mpa_frame_parse(s->data, s->len, &opts, f, &err);
	if (n <= 0) {
		conn_error(c, *frame, "MPA %s: %s", kind == MPA_EXPECT_REQUEST ? "Request" : "Reply",
			   n == 0 ? "incomplete" : err.reason);
		return 0;
	}
	*frame = frame_at(s, (uint64_t)n - 1, true);
	return (size_t)n;
}

/* MPA Request at the start of the client stream, Reply at the start of the server's; sets
 * base[d] to where each direction's Full Operation Phase starts. Returns 1 if the client
 * stream is not MPA, -1 on an error, 0 otherwise (c->rejected if the Reply rejects). */
static int parse_handshake(struct iwd_conn *c, const struct wt_conn *k, uint64_t base[2])
{
	const struct wt_stream *cs = &k->dir[WT_CLIENT], *ss = &k->dir[WT_SERVER];
	if (cs->len < MPA_KEY_LEN || memcmp(cs->data, MPA_KEY_REQ, MPA_KEY_LEN))
		return 1;
	c->mpa = true;
	base[WT_CLIENT] = parse_mpa_frame(c, cs, MPA_EXPECT_REQUEST, &c->req, &c->req_frame);
	if (!base[WT_CLIENT])
		return -1;
	if (ss->len == 0) {
		conn_error(c, c->req_frame, "no MPA Reply in the capture");
		return -1;
	}
	base[WT_SERVER] = parse_mpa_frame(c, ss, MPA_EXPECT_REPLY, &c->rep, &c->rep_frame);
	if (!base[WT_SERVER])
		return -1;
	if (c->rep.reject) {
		c->rejected = true;
		return 0;
	}
	/* C from either side turns CRC on both ways; M asks for markers in what its sender
	 * receives. */
	c->crc = c->req.crc || c->rep.crc;
	c->markers[WT_CLIENT] = c->rep.markers;
	c->markers[WT_SERVER] = c->req.markers;
	return 0;
}

int iwd_decode_conn(const struct wt_capture *cap, size_t idx, struct iwd_conn *c,
		    iwd_seg_cb cb, void *arg)
{
	const struct wt_conn *k = &cap->conns[idx];
	memset(c, 0, sizeof(*c));
	c->index = idx;
	wt_endpoint_str(&k->dir[WT_CLIENT].src, c->client, sizeof(c->client));
	wt_endpoint_str(&k->dir[WT_SERVER].src, c->server, sizeof(c->server));

	uint64_t base[2];
	int rc = parse_handshake(c, k, base);
	if (rc || c->rejected)
		return rc;
	uint8_t *buf = malloc(ULPDU_BUF);
	if (!buf) {
		conn_error(c, 0, "out of memory");
		return -1;
	}
	for (int d = 0; d < 2; d++) {
		struct dir_decoder dd = { .c = c, .s = &k->dir[d], .dir = d, .base = base[d],
					  .ulpdu = buf, .cb = cb, .arg = arg };
		decode_direction(&dd);
	}
	free(buf);
	return c->errors ? -1 : 0;
}
