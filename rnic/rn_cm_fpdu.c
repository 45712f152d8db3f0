/* FPDUs of connection setup: RTR, its Read Response, MPA Terminate; one-FPDU reader. */
#include "rn_cm_fpdu.h"

#include <errno.h>
#include <string.h>

#include "ddp.h"

/* Frame the ULPDU u[0..len) into out. */
static ssize_t frame(struct mpa_tx *tx, const uint8_t *u, size_t len, uint8_t *out, size_t cap)
{
	struct iovec iov = { .iov_base = (void *)u, .iov_len = len };

	return mpa_tx_encode(tx, &iov, 1, out, cap);
}

/* DDP header h (with L set) followed by body[0..body_len), framed. */
static ssize_t frame_hdr(struct mpa_tx *tx, struct ddp_hdr h, const uint8_t *body,
			 size_t body_len, uint8_t *out, size_t cap)
{
	uint8_t u[DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN];

	h.last = true;
	size_t n = ddp_hdr_encode(&h, u, sizeof(u));
	if (n == 0 || n + body_len > sizeof(u))
		return -EINVAL;
	if (body_len > 0)
		memcpy(u + n, body, body_len);
	return frame(tx, u, n + body_len, out, cap);
}

ssize_t rn_rtr_encode(enum mpa_rtr rtr, struct mpa_tx *tx, uint8_t *out, size_t cap)
{
	uint8_t body[RDMAP_READ_REQ_LEN];
	struct rdmap_read_req rr = {
		.sink_stag = RN_RTR_STAG, .sink_to = RN_RTR_TO, .size = 0,
		.src_stag = RN_RTR_STAG, .src_to = RN_RTR_TO,
	};

	switch (rtr) {
	case MPA_RTR_WRITE:
		return frame_hdr(tx, rdmap_ddp_tmpl(RDMAP_OP_WRITE, RN_RTR_STAG, RN_RTR_TO, 0, 0),
				 NULL, 0, out, cap);
	case MPA_RTR_SEND:
		return frame_hdr(tx, rdmap_ddp_tmpl(RDMAP_OP_SEND, 0, 0, DDP_MSN_INITIAL, 0),
				 NULL, 0, out, cap);
	case MPA_RTR_READ:
		rdmap_read_req_encode(&rr, body);
		return frame_hdr(tx, rdmap_ddp_tmpl(RDMAP_OP_READ_REQ, 0, 0, DDP_MSN_INITIAL, 0),
				 body, sizeof(body), out, cap);
	case MPA_RTR_NONE:
		break;
	}
	return -EINVAL;
}

ssize_t rn_rtr_resp_encode(const struct rdmap_read_req *rr, struct mpa_tx *tx, uint8_t *out,
			   size_t cap)
{
	struct ddp_hdr h = rdmap_ddp_tmpl(RDMAP_OP_READ_RESP, rr->sink_stag, rr->sink_to, 0, 0);

	return frame_hdr(tx, h, NULL, 0, out, cap);
}

ssize_t rn_term_encode(enum mpa_ecode ecode, struct mpa_tx *tx, uint8_t *out, size_t cap)
{
	struct rdmap_term t;
	uint8_t u[RDMAP_TERM_MAX_LEN + DDP_UNTAGGED_HDR_LEN];

	rdmap_term_build(rdmap_err_llp((enum rdmap_llp_ecode)ecode), NULL, 0, &t);
	size_t n = rdmap_term_ulpdu_encode(&t, DDP_MSN_INITIAL, u, sizeof(u));
	if (n == 0)
		return -EINVAL;
	return frame(tx, u, n, out, cap);
}

void rn_fpdu_reader_init(struct rn_fpdu_reader *r, bool crc, bool markers)
{
	struct mpa_rx_cfg cfg = {
		.crc = crc, .markers = markers, .pos = 0, .max_ulpdu = 0,
		.head_len = MPA_RX_HEAD_MAX,
	};

	memset(r, 0, sizeof(*r));
	mpa_rx_init(&r->rx, &cfg);
}

enum rn_fpdu_rd rn_fpdu_read(struct rn_fpdu_reader *r, const uint8_t *in, size_t len,
			     size_t *used)
{
	struct mpa_rx_piece p;

	*used = 0;
	for (;;) {
		*used += mpa_rx_next(&r->rx, in + *used, len - *used, &p);
		switch (p.kind) {
		case MPA_RX_NEED_MORE:
			return RN_FPDU_MORE;
		case MPA_RX_HEAD:
			memcpy(r->ulpdu, p.data, p.len);
			r->have = p.len;
			r->ulpdu_len = p.ulpdu_len;
			break;
		case MPA_RX_DATA:
			break; /* beyond the head: too long for an RTR, judged at the end */
		case MPA_RX_END:
			r->ulpdu_len = p.ulpdu_len;
			return RN_FPDU_DONE;
		case MPA_RX_ERROR:
			return RN_FPDU_ERROR;
		}
	}
}

/* Decode and validate the FPDU; a Terminate is reported as such. */
static enum rn_rtr_verdict decode(const struct rn_fpdu_reader *r, struct rdmap_msg *m,
				  struct iwarp_err *term)
{
	struct iwarp_err e;

	if (r->have != r->ulpdu_len || rdmap_msg_decode(r->ulpdu, r->have, m, &e) != 0)
		return RN_RTR_BAD;
	if (rdmap_msg_validate(m, RDMAP_NQUEUES, false, &e) != 0)
		return RN_RTR_BAD;
	if (m->opcode == RDMAP_OP_TERMINATE) {
		*term = m->u.term.err;
		return RN_RTR_TERMINATE;
	}
	if (!m->ddp.last || m->payload_len != 0)
		return RN_RTR_BAD;
	return RN_RTR_OK;
}

static bool first_untagged(const struct rdmap_msg *m)
{
	return m->ddp.msn == DDP_MSN_INITIAL && m->ddp.mo == 0;
}

enum rn_rtr_verdict rn_rtr_check(enum mpa_rtr expect, const struct rn_fpdu_reader *r,
				 struct rdmap_read_req *rr, struct iwarp_err *term)
{
	struct rdmap_msg m;
	enum rn_rtr_verdict v = decode(r, &m, term);

	if (v != RN_RTR_OK)
		return v;
	switch (expect) {
	case MPA_RTR_WRITE:
		return m.opcode == RDMAP_OP_WRITE ? RN_RTR_OK : RN_RTR_BAD;
	case MPA_RTR_SEND:
		return (m.opcode == RDMAP_OP_SEND || m.opcode == RDMAP_OP_SEND_SE) &&
		       first_untagged(&m) ? RN_RTR_OK : RN_RTR_BAD;
	case MPA_RTR_READ:
		if (m.opcode != RDMAP_OP_READ_REQ || !first_untagged(&m) ||
		    m.body_len != RDMAP_READ_REQ_LEN || m.u.read_req.size != 0)
			return RN_RTR_BAD;
		*rr = m.u.read_req;
		return RN_RTR_OK;
	case MPA_RTR_NONE:
		break;
	}
	return RN_RTR_BAD;
}

enum rn_rtr_verdict rn_rtr_resp_check(uint32_t sink_stag, const struct rn_fpdu_reader *r,
				      struct iwarp_err *term)
{
	struct rdmap_msg m;
	enum rn_rtr_verdict v = decode(r, &m, term);

	if (v != RN_RTR_OK)
		return v;
	if (m.opcode != RDMAP_OP_READ_RESP || m.ddp.stag != sink_stag)
		return RN_RTR_BAD;
	return RN_RTR_OK;
}
