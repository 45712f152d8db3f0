/* RDMAP control field, per-opcode table, ULPDU decode and validation (RFC 5040 §4, §5, §7;
 * RFC 7306 §3-§5 for the extension opcodes). */
#include <string.h>

#include "ddp_wire.h"
#include "rdmap.h"

#define T true
#define U false

/* One row per opcode (RFC 5040 §4.3 table "RDMA Usage of DDP Fields", RFC 7306 additions).
 * hdr_len is the RDMAP header at the start of the DDP payload; exact_len marks messages that
 * consist of exactly that header in one segment. */
static const struct rdmap_opinfo optab[RDMAP_NUM_OPCODES] = {
	[RDMAP_OP_WRITE] = { "RDMA Write", true, false, T, 0, false, false, 0, false },
	[RDMAP_OP_READ_REQ] = { "RDMA Read Request", true, false, U, RDMAP_QN_READ_REQ, false,
				false, RDMAP_READ_REQ_LEN, true },
	[RDMAP_OP_READ_RESP] = { "RDMA Read Response", true, false, T, 0, false, false, 0, false },
	[RDMAP_OP_SEND] = { "Send", true, false, U, RDMAP_QN_SEND, false, false, 0, false },
	[RDMAP_OP_SEND_INV] = { "Send with Invalidate", true, false, U, RDMAP_QN_SEND, true,
				false, 0, false },
	[RDMAP_OP_SEND_SE] = { "Send with SE", true, false, U, RDMAP_QN_SEND, false, true, 0,
			       false },
	[RDMAP_OP_SEND_SE_INV] = { "Send with SE and Invalidate", true, false, U, RDMAP_QN_SEND,
				   true, true, 0, false },
	[RDMAP_OP_TERMINATE] = { "Terminate", true, false, U, RDMAP_QN_TERMINATE, false, false,
				 RDMAP_TERM_CTRL_LEN, false },
	[0x8] = { "reserved", false, false, U, 0, false, false, 0, false },
	[0x9] = { "reserved", false, false, U, 0, false, false, 0, false },
	[RDMAP_OP_ATOMIC_REQ] = { "Atomic Request", true, true, U, RDMAP_QN_READ_REQ, false, false,
				  RDMAP_ATOMIC_REQ_LEN, true },
	[RDMAP_OP_ATOMIC_RESP] = { "Atomic Response", true, true, U, RDMAP_QN_ATOMIC_RESP, false,
				   false, RDMAP_ATOMIC_RESP_LEN, true },
	[RDMAP_OP_IMM_DATA] = { "Immediate Data", true, true, U, RDMAP_QN_SEND, false, false,
				RDMAP_IMM_DATA_LEN, true },
	[RDMAP_OP_IMM_DATA_SE] = { "Immediate Data with SE", true, true, U, RDMAP_QN_SEND, false,
				   true, RDMAP_IMM_DATA_LEN, true },
	[0xe] = { "reserved", false, false, U, 0, false, false, 0, false },
	[0xf] = { "reserved", false, false, U, 0, false, false, 0, false },
};

#undef T
#undef U

const struct rdmap_opinfo *rdmap_opinfo(unsigned opcode)
{
	return &optab[opcode & RDMAP_CTRL_OPCODE_MASK];
}

/* ---- fixed bodies ---- */

void rdmap_read_req_encode(const struct rdmap_read_req *rr, uint8_t out[RDMAP_READ_REQ_LEN])
{
	iw_put32(out, rr->sink_stag);
	iw_put64(out + 4, rr->sink_to);
	iw_put32(out + 12, rr->size);
	iw_put32(out + 16, rr->src_stag);
	iw_put64(out + 20, rr->src_to);
}

void rdmap_read_req_decode(const uint8_t in[RDMAP_READ_REQ_LEN], struct rdmap_read_req *rr)
{
	rr->sink_stag = iw_get32(in);
	rr->sink_to = iw_get64(in + 4);
	rr->size = iw_get32(in + 12);
	rr->src_stag = iw_get32(in + 16);
	rr->src_to = iw_get64(in + 20);
}

void rdmap_atomic_req_encode(const struct rdmap_atomic_req *a, uint8_t out[RDMAP_ATOMIC_REQ_LEN])
{
	iw_put32(out, (a->rsvd << 4) | (a->atomic_op & 0x0fu));
	iw_put32(out + 4, a->req_id);
	iw_put32(out + 8, a->stag);
	iw_put64(out + 12, a->to);
	iw_put64(out + 20, a->add_swap);
	iw_put64(out + 28, a->add_swap_mask);
	iw_put64(out + 36, a->compare);
	iw_put64(out + 44, a->compare_mask);
}

void rdmap_atomic_req_decode(const uint8_t in[RDMAP_ATOMIC_REQ_LEN], struct rdmap_atomic_req *a)
{
	uint32_t w0 = iw_get32(in);

	a->rsvd = w0 >> 4;
	a->atomic_op = w0 & 0x0fu;
	a->req_id = iw_get32(in + 4);
	a->stag = iw_get32(in + 8);
	a->to = iw_get64(in + 12);
	a->add_swap = iw_get64(in + 20);
	a->add_swap_mask = iw_get64(in + 28);
	a->compare = iw_get64(in + 36);
	a->compare_mask = iw_get64(in + 44);
}

void rdmap_atomic_resp_encode(const struct rdmap_atomic_resp *a, uint8_t out[RDMAP_ATOMIC_RESP_LEN])
{
	iw_put32(out, a->req_id);
	iw_put64(out + 4, a->orig_value);
}

void rdmap_atomic_resp_decode(const uint8_t in[RDMAP_ATOMIC_RESP_LEN], struct rdmap_atomic_resp *a)
{
	a->req_id = iw_get32(in);
	a->orig_value = iw_get64(in + 4);
}

/* ---- ULPDU decode ---- */

/* Parse the opcode's RDMAP header from the start of the message body, if this segment starts
 * the message (untagged, MO 0) and holds all of it. Returns its length, 0 if absent. */
static size_t decode_body(struct rdmap_msg *m, const uint8_t *p, size_t n)
{
	const struct rdmap_opinfo *oi = rdmap_opinfo(m->opcode);

	if (!oi->defined || oi->hdr_len == 0 || m->ddp.tagged || m->ddp.mo != 0 || n < oi->hdr_len)
		return 0;
	switch (m->opcode) {
	case RDMAP_OP_READ_REQ:
		rdmap_read_req_decode(p, &m->u.read_req);
		return RDMAP_READ_REQ_LEN;
	case RDMAP_OP_TERMINATE:
		return rdmap_term_decode(p, n, &m->u.term);
	case RDMAP_OP_ATOMIC_REQ:
		rdmap_atomic_req_decode(p, &m->u.atomic_req);
		return RDMAP_ATOMIC_REQ_LEN;
	case RDMAP_OP_ATOMIC_RESP:
		rdmap_atomic_resp_decode(p, &m->u.atomic_resp);
		return RDMAP_ATOMIC_RESP_LEN;
	default:
		return 0; /* Immediate Data: its 8 octets are the payload */
	}
}

int rdmap_msg_decode(const uint8_t *buf, size_t len, struct rdmap_msg *m, struct iwarp_err *err)
{
	size_t n;

	memset(m, 0, sizeof(*m));
	n = ddp_hdr_decode(buf, len, &m->ddp);
	if (n == 0) {
		/* Not even a DDP header: nothing in it can be trusted or copied. */
		*err = ddp_err_catastrophic();
		return -1;
	}
	m->rv = (uint8_t)((m->ddp.rsvdulp & RDMAP_CTRL_RV_MASK) >> RDMAP_CTRL_RV_SHIFT);
	m->ctrl_rsvd = (uint8_t)((m->ddp.rsvdulp & RDMAP_CTRL_RSVD_MASK) >> 4);
	m->opcode = m->ddp.rsvdulp & RDMAP_CTRL_OPCODE_MASK;
	if (!m->ddp.tagged && rdmap_opinfo(m->opcode)->inv_stag)
		m->inv_stag = m->ddp.rsvdulp32;
	m->body_len = decode_body(m, buf + n, len - n);
	m->hdr_len = n + m->body_len;
	m->payload = buf + m->hdr_len;
	m->payload_len = len - m->hdr_len;
	return 0;
}

/* ---- validation ---- */

static int fail(struct iwarp_err *err, struct iwarp_err e)
{
	*err = e;
	return -1;
}

/* Messages with an RDMAP header must carry all of it in their first segment (MO 0). Those
 * that are nothing but that header (Read Request, atomics, Immediate Data) must be exactly one
 * full segment. RFC 5040 names no code for a malformed Read Request; we use Remote Operation
 * Error / Unspecified (0/2/0xff), as the message is well-formed for DDP. */
static int check_body(const struct rdmap_msg *m, const struct rdmap_opinfo *oi,
		      struct iwarp_err *err)
{
	struct iwarp_err bad = rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_UNSPECIFIED);

	if (oi->hdr_len == 0)
		return 0;
	if (oi->exact_len) {
		size_t have = m->body_len + m->payload_len;

		if (!m->ddp.last || m->ddp.mo != 0 || have != oi->hdr_len)
			return fail(err, bad);
		return 0;
	}
	/* Terminate: its header must be whole in the segment at MO 0 */
	if (m->ddp.mo == 0 && m->body_len == 0)
		return fail(err, bad);
	return 0;
}

int rdmap_msg_validate(const struct rdmap_msg *m, uint32_t nqueues, bool ext, struct iwarp_err *err)
{
	const struct rdmap_opinfo *oi = rdmap_opinfo(m->opcode);
	struct iwarp_err unexpected = rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_OPCODE);

	if (ddp_hdr_validate(&m->ddp, nqueues, err))
		return -1;
	if (m->rv != RDMAP_VERSION)
		return fail(err, rdmap_err(RDMAP_ETYPE_OPERATION, RDMAP_ECODE_VERSION));
	if (!oi->defined || (oi->ext && !ext))
		return fail(err, unexpected);
	if (m->ddp.tagged != oi->tagged)
		return fail(err, unexpected);
	/* Right model, wrong queue: DDP's "Invalid QN", as Linux siw reports a Send off QN 0. */
	if (!m->ddp.tagged && m->ddp.qn != oi->qn)
		return fail(err, ddp_err_untagged(DDP_ECODE_U_INVALID_QN));
	return check_body(m, oi, err);
}

/* ---- encoding helpers ---- */

struct ddp_hdr rdmap_ddp_tmpl(enum rdmap_opcode op, uint32_t stag, uint64_t to, uint32_t msn,
			      uint32_t inv_stag)
{
	const struct rdmap_opinfo *oi = rdmap_opinfo(op);

	if (oi->tagged)
		return ddp_hdr_tagged(RDMAP_CTRL(op), stag, to);
	return ddp_hdr_untagged(RDMAP_CTRL(op), oi->inv_stag ? inv_stag : 0, oi->qn, msn, 0);
}

/* ---- error names ---- */

static const char *const rdmap_names[] = {
	[RDMAP_ECODE_INVALID_STAG] = "Invalid STag",
	[RDMAP_ECODE_BASE_BOUNDS] = "Base or bounds violation",
	[RDMAP_ECODE_ACCESS] = "Access rights violation",
	[RDMAP_ECODE_STAG_NOT_ASSOC] = "STag not associated with RDMAP Stream",
	[RDMAP_ECODE_TO_WRAP] = "TO wrap",
	[RDMAP_ECODE_VERSION] = "Invalid RDMAP version",
	[RDMAP_ECODE_OPCODE] = "Unexpected OpCode",
	[RDMAP_ECODE_CATA_STREAM] = "Catastrophic error, localized to RDMAP Stream",
	[RDMAP_ECODE_CATA_GLOBAL] = "Catastrophic error, global",
	[RDMAP_ECODE_CANNOT_INVALIDATE] = "STag cannot be Invalidated",
};

static const char *const llp_names[] = {
	[RDMAP_LLP_ECODE_TCP_LOST] = "TCP connection closed, terminated or lost",
	[RDMAP_LLP_ECODE_CRC] = "MPA CRC Error",
	[RDMAP_LLP_ECODE_MARKER] = "MPA Marker and ULPDU Length field mismatch",
	[RDMAP_LLP_ECODE_INVALID_REQ_REP] = "Invalid MPA Request Frame or MPA Response Frame",
	[RDMAP_LLP_ECODE_LOCAL_CATASTROPHIC] = "Local Catastrophic Error",
	[RDMAP_LLP_ECODE_INSUFFICIENT_IRD] = "Insufficient IRD Resources",
	[RDMAP_LLP_ECODE_NO_MATCHING_RTR] = "No Matching RTR Option",
};

#define LOOKUP(tab, i) ((i) < sizeof(tab) / sizeof((tab)[0]) && (tab)[i] ? (tab)[i] : "unknown")

static const char *rdmap_layer_str(struct iwarp_err e)
{
	if (e.etype == RDMAP_ETYPE_CATASTROPHIC)
		return "Local Catastrophic Error";
	if (e.ecode == RDMAP_ECODE_UNSPECIFIED)
		return "Unspecified Error";
	return LOOKUP(rdmap_names, e.ecode);
}

const char *rdmap_err_str(struct iwarp_err e)
{
	switch (e.layer) {
	case IWARP_LAYER_RDMAP:
		return rdmap_layer_str(e);
	case IWARP_LAYER_DDP:
		return ddp_err_str(e);
	case IWARP_LAYER_LLP:
		return e.etype == RDMAP_LLP_ETYPE_MPA ? LOOKUP(llp_names, e.ecode) : "unknown";
	default:
		return "unknown";
	}
}
