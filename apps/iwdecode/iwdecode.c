/* iwdecode: MPA/DDP/RDMAP decoding of reassembled TCP streams with softrnic's own codecs. */
#include "iwdecode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp.h"
#include "rdmap.h"

#define ULPDU_BUF (MPA_MAX_ULPDU + 1)

/* RFC 5044 §4.1: the CRC field is always present; with CRC off it "may contain any value"
 * and is not checked. Our mpa_rx decoder leaves the field out when cfg.crc is false, so with
 * CRC off we consume the 4 octets ourselves after each FPDU (see the report: this is a
 * divergence from the RFC and from Linux siw). Detected at run time so a fixed codec is used
 * as is. */
static bool codec_omits_crc_field(void)
{
	struct mpa_tx tx;
	mpa_tx_init(&tx, false, false);
	return mpa_tx_fpdu_len(&tx, 0) == MPA_HDR_LEN + mpa_pad_len(0);
}

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

const char *iwd_opcode_name(uint8_t opcode)
{
	switch (opcode) {
	case 0x0: return "Write";
	case 0x1: return "Read Request";
	case 0x2: return "Read Response";
	case 0x3: return "Send";
	case 0x4: return "Send w/ Invalidate";
	case 0x5: return "Send w/ SE";
	case 0x6: return "Send w/ SE+Invalidate";
	case 0x7: return "Terminate";
	default: return "reserved opcode";
	}
}

static uint32_t frame_at(const struct wt_stream *s, uint64_t off, bool ready)
{
	const struct wt_chunk *ch = wt_stream_locate(s, off);
	if (!ch)
		return s->nchunks ? s->chunks[s->nchunks - 1].frame : 0;
	return ready ? ch->ready : ch->frame;
}

/* Reads the 4 CRC octets that end at stream offset end, skipping marker octets (markers at
 * every 512 octets from base). */
static uint32_t crc_field(const struct wt_stream *s, uint64_t base, uint64_t end, bool markers)
{
	uint8_t b[4];
	int got = 0;
	uint64_t p = end;
	while (got < 4 && p > base) {
		p--;
		uint64_t rel = p - base;
		if (markers && rel % MPA_MARKER_INTERVAL < MPA_MARKER_LEN)
			continue;
		b[3 - got++] = s->data[p];
	}
	if (got < 4)
		return 0;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void decode_ulpdu(struct iwd_seg *g)
{
	struct rdmap_msg m;
	struct iwarp_err e;
	memset(&m, 0, sizeof(m));
	if (rdmap_msg_decode(g->ulpdu, g->ulpdu_len, &m, &e)) {
		g->error = rdmap_err_str(e);
		return;
	}
	const struct ddp_hdr *h = &m.ddp;
	g->tagged = h->tagged;
	g->last = h->last;
	g->dv = h->dv;
	g->rsvd = h->rsvd;
	g->stag = h->stag;
	g->to = h->to;
	g->qn = h->qn;
	g->msn = h->msn;
	g->mo = h->mo;
	g->rv = m.rv;
	g->opcode = m.opcode;
	g->payload_len = (uint32_t)m.payload_len;
	if (ddp_hdr_validate(h, RDMAP_NQUEUES, &e)) {
		g->error = ddp_err_str(e);
		return;
	}
	g->ddp_ok = true;
	if (rdmap_msg_validate(&m, RDMAP_NQUEUES, false, &e)) {
		g->error = rdmap_err_str(e);
		return;
	}
	g->rdmap_ok = true;
	if (m.opcode == RDMAP_OP_SEND_INV || m.opcode == RDMAP_OP_SEND_SE_INV)
		g->inval_stag = m.inv_stag;
	if (m.opcode == RDMAP_OP_READ_REQ) {
		g->sink_stag = m.u.read_req.sink_stag;
		g->sink_to = m.u.read_req.sink_to;
		g->rd_size = m.u.read_req.size;
		g->src_stag = m.u.read_req.src_stag;
		g->src_to = m.u.read_req.src_to;
	}
	if (m.opcode == RDMAP_OP_TERMINATE && h->mo == 0) {
		g->term_layer = m.u.term.err.layer;
		g->term_etype = m.u.term.err.etype;
		g->term_ecode = m.u.term.err.ecode;
	}
}

int iwd_decode_conn(const struct wt_capture *cap, size_t idx, struct iwd_conn *c,
		    iwd_seg_cb cb, void *arg)
{
	const struct wt_conn *k = &cap->conns[idx];
	memset(c, 0, sizeof(*c));
	c->index = idx;
	wt_endpoint_str(&k->dir[WT_CLIENT].src, c->client, sizeof(c->client));
	wt_endpoint_str(&k->dir[WT_SERVER].src, c->server, sizeof(c->server));

	/* MPA Request at the start of the client stream, Reply at the start of the server's. */
	struct mpa_parse_opts oreq, orep;
	struct mpa_error perr;
	mpa_parse_opts_init(&oreq, MPA_EXPECT_REQUEST);
	mpa_parse_opts_init(&orep, MPA_EXPECT_REPLY);
	const struct wt_stream *cs = &k->dir[WT_CLIENT], *ss = &k->dir[WT_SERVER];
	if (cs->len < MPA_KEY_LEN || memcmp(cs->data, MPA_KEY_REQ, MPA_KEY_LEN))
		return 1;
	c->mpa = true;
	c->req_frame = frame_at(cs, 0, true);
	ssize_t nreq = mpa_frame_parse(cs->data, cs->len, &oreq, &c->req, &perr);
	if (nreq <= 0) {
		conn_error(c, c->req_frame, "MPA Request: %s",
			   nreq == 0 ? "incomplete" : perr.reason);
		return -1;
	}
	c->req_frame = frame_at(cs, (uint64_t)nreq - 1, true);
	if (ss->len == 0) {
		conn_error(c, c->req_frame, "no MPA Reply in the capture");
		return -1;
	}
	c->rep_frame = frame_at(ss, 0, true);
	ssize_t nrep = mpa_frame_parse(ss->data, ss->len, &orep, &c->rep, &perr);
	if (nrep <= 0) {
		conn_error(c, c->rep_frame, "MPA Reply: %s",
			   nrep == 0 ? "incomplete" : perr.reason);
		return -1;
	}
	c->rep_frame = frame_at(ss, (uint64_t)nrep - 1, true);
	if (c->rep.reject) {
		c->rejected = true;
		return 0;
	}
	c->crc = c->req.crc || c->rep.crc;
	c->markers[WT_CLIENT] = c->rep.markers; /* the server asked for markers it receives */
	c->markers[WT_SERVER] = c->req.markers;

	uint8_t *buf = malloc(ULPDU_BUF);
	if (!buf) {
		conn_error(c, 0, "out of memory");
		return -1;
	}
	bool omit = !c->crc && codec_omits_crc_field();
	for (int d = 0; d < 2; d++) {
		const struct wt_stream *s = &k->dir[d];
		uint64_t base = (uint64_t)(d == WT_CLIENT ? nreq : nrep);
		if (omit && c->markers[d]) {
			conn_error(c, frame_at(s, base, true),
				   "markers without CRC: not decodable with this mpa_rx");
			break;
		}
		struct mpa_rx_cfg cfg = { .crc = c->crc, .markers = c->markers[d], .pos = 0 };
		struct mpa_rx rx;
		mpa_rx_init(&rx, &cfg);
		uint64_t off = base, start = base;
		bool stop = false;
		while (!stop) {
			struct mpa_rx_piece p;
			off += mpa_rx_next(&rx, s->data + off, s->len - off, &p);
			switch (p.kind) {
			case MPA_RX_NEED_MORE:
				c->trailing[d] = (size_t)(s->len - start);
				stop = true;
				break;
			case MPA_RX_HEAD:
			case MPA_RX_DATA:
				if (p.len)
					memcpy(buf + p.off, p.data, p.len);
				break;
			case MPA_RX_ERROR:
				conn_error(c, frame_at(s, off < s->len ? off : s->len - 1, false),
					   "%s stream offset %llu: MPA error 0x%02x: %s",
					   d == WT_CLIENT ? "client" : "server",
					   (unsigned long long)off, p.err.ecode,
					   p.err.reason ? p.err.reason : "?");
				stop = true;
				break;
			case MPA_RX_END: {
				if (omit) {
					if (s->len - off < MPA_CRC_LEN) {
						c->trailing[d] = (size_t)(s->len - start);
						stop = true;
						break;
					}
					off += MPA_CRC_LEN;
					cfg.pos = (uint32_t)(off - base);
					mpa_rx_init(&rx, &cfg);
				}
				struct iwd_seg g;
				memset(&g, 0, sizeof(g));
				g.conn = idx;
				g.dir = d;
				g.index = c->fpdus[d];
				g.off = start;
				g.mpa_pos = (uint32_t)(start - base);
				g.wire_len = (size_t)(off - start);
				g.first_frame = frame_at(s, start, false);
				g.frame = frame_at(s, off - 1, true);
				g.seq = wt_stream_locate(s, start)->seq +
					(uint32_t)(start - wt_stream_locate(s, start)->off);
				g.ulpdu_len = p.ulpdu_len;
				g.crc = c->crc;
				g.crc_value = (c->crc || omit) ? crc_field(s, base, off, c->markers[d]) : 0;
				g.ulpdu = buf;
				decode_ulpdu(&g);
				if (g.error)
					conn_error(c, g.frame, "%s FPDU %zu: %s",
						   d == WT_CLIENT ? "client" : "server", g.index, g.error);
				else
					c->fpdus[d]++;
				if (cb)
					cb(arg, c, &g);
				start = off;
				break;
			}
			}
		}
	}
	free(buf);
	return c->errors ? -1 : 0;
}

void iwd_seg_format(const struct iwd_seg *s, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%5u %s %-21s %c L=%d ", s->frame,
			 s->dir == WT_CLIENT ? "c>s" : "s>c",
			 s->rdmap_ok || s->ddp_ok ? iwd_opcode_name(s->opcode) : "?",
			 s->tagged ? 'T' : 'U', s->last);
	if (n < 0 || (size_t)n >= len)
		return;
	size_t used = (size_t)n;
	if (s->tagged)
		n = snprintf(buf + used, len - used, "STag 0x%08x TO 0x%llx", s->stag,
			     (unsigned long long)s->to);
	else
		n = snprintf(buf + used, len - used, "QN %u MSN %u MO %u", s->qn, s->msn, s->mo);
	if (n < 0 || (size_t)(used += (size_t)n) >= len)
		return;
	if (s->rdmap_ok && (s->opcode == 0x4 || s->opcode == 0x6))
		n = snprintf(buf + used, len - used, " inval 0x%08x", s->inval_stag);
	else if (s->rdmap_ok && s->opcode == 0x1)
		n = snprintf(buf + used, len - used,
			     " sink 0x%08x/0x%llx size %u src 0x%08x/0x%llx", s->sink_stag,
			     (unsigned long long)s->sink_to, s->rd_size, s->src_stag,
			     (unsigned long long)s->src_to);
	else if (s->rdmap_ok && s->opcode == 0x7)
		n = snprintf(buf + used, len - used, " layer %u etype %u ecode 0x%02x",
			     s->term_layer, s->term_etype, s->term_ecode);
	else
		n = 0;
	if (n < 0 || (size_t)(used += (size_t)n) >= len)
		return;
	n = snprintf(buf + used, len - used, " len %zu payload %u crc %s", s->ulpdu_len,
		     s->payload_len, s->crc ? "ok" : "off");
	if (n < 0 || (size_t)(used += (size_t)n) >= len)
		return;
	if (s->error)
		snprintf(buf + used, len - used, " ERROR: %s", s->error);
}
