/* RDMAP Terminate message (RFC 5040 §4.8 header, §7 error rules).
 *
 * Header copies by error (what Linux siw sends, siw_send_terminate(); RFC 5040 §7.1 asks for
 * the offending segment's headers on errors of incoming segments):
 *
 *   layer  etype                     ecode                      Hdrct  copies
 *   RDMAP  local catastrophic        any                        000    none
 *   RDMAP  remote protection         any                        MDR    DDP hdr + RDMAP hdr
 *   RDMAP  remote operation          invalid version, opcode    000    none (layout unknown)
 *   RDMAP  remote operation          others                     MD     DDP hdr
 *   DDP    tagged/untagged           invalid DDP version        000    none (layout unknown)
 *   DDP    any other                 any                        MD     DDP hdr
 *   LLP    any                       any                        000    none
 *
 * "RDMAP hdr" is the RDMAP header carried in the payload (Read Request 28 octets, Atomic
 * Request 52, Atomic Response 12); for Send/Write/Read Response the RDMAP control field is
 * already inside the DDP header copy, so R is set with nothing after it, as siw does.
 *
 * Deliberate differences from siw (RFC wins):
 *   - DDP Segment Length is the length of the offending DDP segment (ULPDU: DDP header + RDMAP
 *     header + payload). siw writes only the payload length (ULPDU minus headers).
 *   - The DDP header copy is 14 octets for a tagged segment. siw copies 18 octets for a
 *     tagged segment on RDMAP protection errors (sizeof its untagged Send header).
 */
#include <string.h>

#include "ddp_wire.h"
#include "rdmap.h"

enum copies { COPY_NONE, COPY_MD, COPY_MDR };

static bool is_ddp_version_err(struct iwarp_err e)
{
	return (e.etype == DDP_ETYPE_TAGGED && e.ecode == DDP_ECODE_T_VERSION) ||
	       (e.etype == DDP_ETYPE_UNTAGGED && e.ecode == DDP_ECODE_U_VERSION);
}

static enum copies copy_rule(struct iwarp_err e)
{
	switch (e.layer) {
	case IWARP_LAYER_RDMAP:
		if (e.etype == RDMAP_ETYPE_CATASTROPHIC)
			return COPY_NONE;
		if (e.etype == RDMAP_ETYPE_PROTECTION)
			return COPY_MDR;
		if (e.ecode == RDMAP_ECODE_VERSION || e.ecode == RDMAP_ECODE_OPCODE)
			return COPY_NONE;
		return COPY_MD;
	case IWARP_LAYER_DDP:
		return is_ddp_version_err(e) ? COPY_NONE : COPY_MD;
	default:
		return COPY_NONE;
	}
}

/* Octets of RDMAP header that follow a segment's DDP header: only a message's first segment
 * (untagged, MO 0) of an opcode with its own header carries one. A Terminate is never the
 * subject of another Terminate (verbs §6.4 Fig. 12: an incoming Terminate gets none). */
static size_t rdma_hdr_need(const struct ddp_hdr *h)
{
	unsigned op = h->rsvdulp & RDMAP_CTRL_OPCODE_MASK;
	const struct rdmap_opinfo *oi = rdmap_opinfo(op);

	if (h->tagged || h->mo != 0 || !oi->defined || op == RDMAP_OP_TERMINATE)
		return 0;
	return oi->hdr_len;
}

void rdmap_term_build(struct iwarp_err e, const uint8_t *ulpdu, size_t ulpdu_len,
		      struct rdmap_term *t)
{
	enum copies rule = copy_rule(e);
	struct ddp_hdr h;
	size_t n, need;

	memset(t, 0, sizeof(*t));
	t->err = e;
	if (rule == COPY_NONE || ulpdu == NULL)
		return;
	n = ddp_hdr_decode(ulpdu, ulpdu_len, &h);
	if (n == 0)
		return; /* cannot copy what did not arrive */
	t->m = t->d = true;
	t->ddp_seg_len = ulpdu_len > UINT16_MAX ? UINT16_MAX : (uint16_t)ulpdu_len;
	memcpy(t->ddp_hdr, ulpdu, n);
	t->ddp_hdr_len = (uint8_t)n;
	if (rule != COPY_MDR)
		return;
	need = rdma_hdr_need(&h);
	if (need > ulpdu_len - n)
		return; /* the RDMAP header was cut short: leave R clear rather than lie */
	t->r = true;
	memcpy(t->rdma_hdr, ulpdu + n, need);
	t->rdma_hdr_len = (uint8_t)need;
}

size_t rdmap_term_len(const struct rdmap_term *t)
{
	size_t n = RDMAP_TERM_CTRL_LEN;

	if (t->m || t->d)
		n += 2;
	if (t->d)
		n += t->ddp_hdr_len;
	if (t->r)
		n += t->rdma_hdr_len;
	return n;
}

static uint16_t hdrct_word(const struct rdmap_term *t)
{
	return (uint16_t)((t->m ? RDMAP_TERM_HDRCT_M : 0) | (t->d ? RDMAP_TERM_HDRCT_D : 0) |
			  (t->r ? RDMAP_TERM_HDRCT_R : 0) | (t->rsvd & RDMAP_TERM_RSVD_MASK));
}

size_t rdmap_term_encode(const struct rdmap_term *t, uint8_t *buf, size_t cap)
{
	size_t n = rdmap_term_len(t), off = RDMAP_TERM_CTRL_LEN;

	if (cap < n)
		return 0;
	buf[0] = (uint8_t)(((t->err.layer & 0xfu) << 4) | (t->err.etype & 0xfu));
	buf[1] = t->err.ecode;
	iw_put16(buf + 2, hdrct_word(t));
	if (t->m || t->d) {
		iw_put16(buf + off, t->ddp_seg_len);
		off += 2;
	}
	if (t->d) {
		memcpy(buf + off, t->ddp_hdr, t->ddp_hdr_len);
		off += t->ddp_hdr_len;
	}
	if (t->r)
		memcpy(buf + off, t->rdma_hdr, t->rdma_hdr_len);
	return n;
}

/* The copied DDP header: its T bit says 14 or 18 octets. */
static size_t decode_ddp_copy(const uint8_t *p, size_t avail, struct rdmap_term *t,
			      struct ddp_hdr *h)
{
	size_t n = ddp_hdr_decode(p, avail, h);

	if (n == 0)
		return 0;
	memcpy(t->ddp_hdr, p, n);
	t->ddp_hdr_len = (uint8_t)n;
	return n;
}

/* The RDMAP header copy: its length follows from the copied DDP header; without one (R but no
 * D, which we never send) take what is left, up to the largest RDMAP header. */
static bool decode_rdma_copy(const uint8_t *p, size_t avail, const struct ddp_hdr *h,
			     struct rdmap_term *t)
{
	size_t need = t->d ? rdma_hdr_need(h) : avail;

	if (need > RDMAP_TERM_RDMA_HDR_MAX)
		need = RDMAP_TERM_RDMA_HDR_MAX;
	if (need > avail)
		return false;
	memcpy(t->rdma_hdr, p, need);
	t->rdma_hdr_len = (uint8_t)need;
	return true;
}

size_t rdmap_term_decode(const uint8_t *buf, size_t len, struct rdmap_term *t)
{
	struct ddp_hdr h = { 0 };
	size_t off = RDMAP_TERM_CTRL_LEN, n;
	uint16_t w;

	memset(t, 0, sizeof(*t));
	if (len < RDMAP_TERM_CTRL_LEN)
		return 0;
	t->err = (struct iwarp_err){ (uint8_t)(buf[0] >> 4), buf[0] & 0xfu, buf[1] };
	w = iw_get16(buf + 2);
	t->m = w & RDMAP_TERM_HDRCT_M;
	t->d = w & RDMAP_TERM_HDRCT_D;
	t->r = w & RDMAP_TERM_HDRCT_R;
	t->rsvd = w & RDMAP_TERM_RSVD_MASK;
	if (t->m || t->d) {
		if (len - off < 2)
			return 0;
		t->ddp_seg_len = iw_get16(buf + off);
		off += 2;
	}
	if (t->d) {
		n = decode_ddp_copy(buf + off, len - off, t, &h);
		if (n == 0)
			return 0;
		off += n;
	}
	if (t->r) {
		if (!decode_rdma_copy(buf + off, len - off, &h, t))
			return 0;
		off += t->rdma_hdr_len;
	}
	return off;
}

size_t rdmap_term_ulpdu_encode(const struct rdmap_term *t, uint32_t msn, uint8_t *buf, size_t cap)
{
	struct ddp_hdr h = ddp_hdr_untagged(RDMAP_CTRL(RDMAP_OP_TERMINATE), 0, RDMAP_QN_TERMINATE,
					    msn, 0);
	size_t n, m;

	h.last = true;
	if (cap < DDP_UNTAGGED_HDR_LEN + rdmap_term_len(t))
		return 0;
	n = ddp_hdr_encode(&h, buf, cap);
	m = rdmap_term_encode(t, buf + n, cap - n);
	return n + m;
}
