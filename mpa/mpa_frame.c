/* MPA Request / Reply / Reject frame codec (RFC 5044 §7.1, RFC 6581 §8).
 *
 * The parser works on a partial byte stream: it validates each field as soon as its octets
 * are present, so a bad key is reported after the first wrong octet and a bad header before
 * the private data has arrived, and it returns "need more" (0) until the whole frame is there.
 */
#include "mpa_frame.h"

#include <errno.h>
#include <string.h>

#define OFF_FLAGS 16
#define OFF_REV 17
#define OFF_PDLEN 18

static const char *const key_of[] = {
	[MPA_FRAME_REQUEST] = MPA_KEY_REQ,
	[MPA_FRAME_REPLY] = MPA_KEY_REP,
};

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ---- encoder -------------------------------------------------------------------------- */

size_t mpa_frame_wire_len(const struct mpa_frame *f)
{
	return MPA_FRAME_HDR_LEN + (f->enhanced ? MPA_V2_BLOCK_LEN : 0) + (size_t)f->pd_len;
}

static bool v2_block_valid(const struct mpa_v2_block *b)
{
	return b->ird <= MPA_V2_VALUE_MASK && b->ord <= MPA_V2_VALUE_MASK &&
	       (b->rtr & ~(unsigned)MPA_RTR_ALL) == 0;
}

/* Every rule the parser enforces on received frames also binds what we send. */
static bool frame_encodable(const struct mpa_frame *f)
{
	if (f->type != MPA_FRAME_REQUEST && f->type != MPA_FRAME_REPLY)
		return false;
	if (f->rev != MPA_REV_1 && f->rev != MPA_REV_2)
		return false;
	if (f->reserved != 0 || (f->reject && f->type == MPA_FRAME_REQUEST))
		return false;
	if (f->enhanced && (f->rev != MPA_REV_2 || !v2_block_valid(&f->v2)))
		return false;
	if (f->pd_len > 0 && f->pd == NULL)
		return false;
	return mpa_frame_wire_len(f) - MPA_FRAME_HDR_LEN <= MPA_PD_MAX_RFC;
}

static uint8_t flags_byte(const struct mpa_frame *f)
{
	return (uint8_t)((f->markers ? MPA_FLAG_M : 0) | (f->crc ? MPA_FLAG_C : 0) |
			 (f->reject ? MPA_FLAG_R : 0) | (f->enhanced ? MPA_FLAG_S : 0));
}

static void put_v2_block(uint8_t *p, const struct mpa_v2_block *b)
{
	uint16_t ird = b->ird, ord = b->ord;

	if (b->p2p)
		ird |= MPA_V2_IRD_P2P;
	if (b->rtr & MPA_RTR_SEND)
		ird |= MPA_V2_IRD_SEND_RTR;
	if (b->rtr & MPA_RTR_WRITE)
		ord |= MPA_V2_ORD_WRITE_RTR;
	if (b->rtr & MPA_RTR_READ)
		ord |= MPA_V2_ORD_READ_RTR;
	put_be16(p, ird);
	put_be16(p + 2, ord);
}

ssize_t mpa_frame_encode(const struct mpa_frame *f, uint8_t *out, size_t cap)
{
	if (f == NULL || !frame_encodable(f))
		return -EINVAL;
	size_t len = mpa_frame_wire_len(f);
	if (out == NULL || cap < len)
		return -ENOSPC;

	memcpy(out, key_of[f->type], MPA_KEY_LEN);
	out[OFF_FLAGS] = flags_byte(f);
	out[OFF_REV] = f->rev;
	put_be16(out + OFF_PDLEN, (uint16_t)(len - MPA_FRAME_HDR_LEN));
	uint8_t *pd = out + MPA_FRAME_HDR_LEN;
	if (f->enhanced) {
		put_v2_block(pd, &f->v2);
		pd += MPA_V2_BLOCK_LEN;
	}
	if (f->pd_len > 0)
		memcpy(pd, f->pd, f->pd_len);
	return (ssize_t)len;
}

/* ---- parser --------------------------------------------------------------------------- */

void mpa_parse_opts_init(struct mpa_parse_opts *o, enum mpa_frame_expect expect)
{
	o->expect = expect;
	o->pd_max = MPA_PD_MAX_RFC;
	o->reserved = MPA_RESERVED_IGNORE;
}

static ssize_t fail(struct mpa_error *err, const char *reason)
{
	if (err != NULL) {
		err->ecode = MPA_ECODE_INVALID_REQ_REP;
		err->reason = reason;
	}
	return -1;
}

/* Does the (possibly partial) key in buf[0..n) still match the key of type t? */
static bool key_prefix_is(const uint8_t *buf, size_t n, enum mpa_frame_type t)
{
	return memcmp(buf, key_of[t], n < MPA_KEY_LEN ? n : MPA_KEY_LEN) == 0;
}

/* Identify the frame type from the key prefix. Returns 0 if no allowed key matches. */
static enum mpa_frame_type match_key(const uint8_t *buf, size_t n, enum mpa_frame_expect ex)
{
	/* The two keys share their first 7 octets ("MPA ID "), so with a short prefix both may
	 * match; the caller only needs a definite type once all 16 octets are in. */
	if ((ex & MPA_EXPECT_REQUEST) && key_prefix_is(buf, n, MPA_FRAME_REQUEST))
		return MPA_FRAME_REQUEST;
	if ((ex & MPA_EXPECT_REPLY) && key_prefix_is(buf, n, MPA_FRAME_REPLY))
		return MPA_FRAME_REPLY;
	return (enum mpa_frame_type)0;
}

static const char *key_error(enum mpa_frame_expect ex)
{
	switch (ex) {
	case MPA_EXPECT_REQUEST:
		return "key is not \"" MPA_KEY_REQ "\"";
	case MPA_EXPECT_REPLY:
		return "key is not \"" MPA_KEY_REP "\"";
	default:
		return "key is neither MPA Request nor MPA Reply";
	}
}

/* Checks on the 20-octet header. Returns NULL if fine, else the reason. */
static const char *header_error(const uint8_t *h, enum mpa_frame_type t,
				const struct mpa_parse_opts *o)
{
	uint8_t flags = h[OFF_FLAGS], rev = h[OFF_REV];
	uint16_t pd_len = get_be16(h + OFF_PDLEN);
	uint16_t pd_max = o->pd_max != 0 ? o->pd_max : MPA_PD_MAX_RFC;

	if (rev == 0)
		return "revision 0 (pre-RFC 5044 MPA) is not supported";
	if (rev > MPA_REV_2)
		return "revision above 2 is not supported";
	if (pd_len > pd_max)
		return "PD_Length exceeds the private data limit";
	if (t == MPA_FRAME_REQUEST && (flags & MPA_FLAG_R))
		return "R (reject) flag set in an MPA Request";
	uint8_t res_mask = rev == MPA_REV_2 ? MPA_FLAG_RES_V2 : MPA_FLAG_RES_V1;
	if (o->reserved == MPA_RESERVED_REJECT && (flags & res_mask))
		return "reserved flag bits set";
	if (rev == MPA_REV_2 && (flags & MPA_FLAG_S) && pd_len < MPA_V2_BLOCK_LEN)
		return "enhanced (S) frame with PD_Length below 4";
	return NULL;
}

static void get_v2_block(const uint8_t *p, struct mpa_v2_block *b)
{
	uint16_t ird = get_be16(p), ord = get_be16(p + 2);

	b->p2p = (ird & MPA_V2_IRD_P2P) != 0;
	b->rtr = ((ird & MPA_V2_IRD_SEND_RTR) ? MPA_RTR_SEND : 0) |
		 ((ord & MPA_V2_ORD_WRITE_RTR) ? MPA_RTR_WRITE : 0) |
		 ((ord & MPA_V2_ORD_READ_RTR) ? MPA_RTR_READ : 0);
	b->ird = ird & MPA_V2_VALUE_MASK;
	b->ord = ord & MPA_V2_VALUE_MASK;
}

/* Fill *f from a complete, validated frame. */
static void decode(const uint8_t *buf, enum mpa_frame_type t, struct mpa_frame *f)
{
	uint8_t flags = buf[OFF_FLAGS], rev = buf[OFF_REV];
	uint16_t pd_len = get_be16(buf + OFF_PDLEN);

	memset(f, 0, sizeof(*f));
	f->type = t;
	f->rev = rev;
	f->markers = (flags & MPA_FLAG_M) != 0;
	f->crc = (flags & MPA_FLAG_C) != 0;
	f->reject = (flags & MPA_FLAG_R) != 0;
	/* In rev 1 the 0x10 bit is reserved, not S: a rev 1 frame never has the v2 block. */
	f->enhanced = rev == MPA_REV_2 && (flags & MPA_FLAG_S);
	f->reserved = flags & (rev == MPA_REV_2 ? MPA_FLAG_RES_V2 : MPA_FLAG_RES_V1);
	f->pd = buf + MPA_FRAME_HDR_LEN;
	f->pd_len = pd_len;
	if (f->enhanced) {
		get_v2_block(f->pd, &f->v2);
		f->pd += MPA_V2_BLOCK_LEN;
		f->pd_len -= MPA_V2_BLOCK_LEN;
	}
	if (f->pd_len == 0)
		f->pd = NULL;
}

ssize_t mpa_frame_parse(const uint8_t *buf, size_t len, const struct mpa_parse_opts *opts,
			struct mpa_frame *out, struct mpa_error *err)
{
	struct mpa_parse_opts dflt;

	if (opts == NULL) {
		mpa_parse_opts_init(&dflt, MPA_EXPECT_ANY);
		opts = &dflt;
	}
	if (len == 0)
		return 0;
	if (buf == NULL)
		return fail(err, "no input buffer");
	enum mpa_frame_type t = match_key(buf, len, opts->expect);
	if (t == 0)
		return fail(err, key_error(opts->expect));
	if (len < MPA_FRAME_HDR_LEN)
		return 0;
	const char *why = header_error(buf, t, opts);
	if (why != NULL)
		return fail(err, why);
	size_t total = MPA_FRAME_HDR_LEN + (size_t)get_be16(buf + OFF_PDLEN);
	if (len < total)
		return 0;
	if (out != NULL)
		decode(buf, t, out);
	return (ssize_t)total;
}
