/* TCP options: a parser that checks every length against the area it sits in, and a builder
 * that writes Linux's layouts (tcp_options_write order: MSS, SACK-permitted/timestamps, window
 * scale, SACK blocks), so captures read like a Linux peer's. */
#include "tcp_opt.h"

#include <errno.h>
#include <string.h>

enum {
	OPT_EOL = 0,
	OPT_NOP = 1,
	OPT_MSS = 2,
	OPT_WS = 3,
	OPT_SACK_PERM = 4,
	OPT_SACK = 5,
	OPT_TS = 8,
};

enum {
	OPT_MSS_LEN = 4,
	OPT_WS_LEN = 3,
	OPT_SACK_PERM_LEN = 2,
	OPT_TS_LEN = 10,
	OPT_SACK_BASE_LEN = 2,
	OPT_SACK_BLOCK_LEN = 8,
};

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static bool sack_len_ok(uint8_t len)
{
	if (len < OPT_SACK_BASE_LEN + OPT_SACK_BLOCK_LEN)
		return false;
	unsigned body = len - OPT_SACK_BASE_LEN;
	return body % OPT_SACK_BLOCK_LEN == 0 &&
	       body / OPT_SACK_BLOCK_LEN <= TCP_SACK_MAX_BLOCKS;
}

/* Apply one option of a known kind whose length already matched the area. Returns -EINVAL
 * when the length is not the one the kind defines. */
static int apply_option(uint8_t kind, uint8_t len, const uint8_t *v, bool syn,
			struct tcp_opts *o)
{
	switch (kind) {
	case OPT_MSS:
		if (len != OPT_MSS_LEN)
			return -EINVAL;
		if (syn) {
			o->has_mss = true;
			o->mss = get16(v);
		}
		return 0;
	case OPT_WS:
		if (len != OPT_WS_LEN)
			return -EINVAL;
		if (syn) {
			o->has_wscale = true;
			o->wscale = v[0];
		}
		return 0;
	case OPT_SACK_PERM:
		if (len != OPT_SACK_PERM_LEN)
			return -EINVAL;
		if (syn)
			o->sack_ok = true;
		return 0;
	case OPT_TS:
		if (len != OPT_TS_LEN)
			return -EINVAL;
		o->has_ts = true;
		o->ts_val = get32(v);
		o->ts_ecr = get32(v + 4);
		return 0;
	case OPT_SACK:
		if (!sack_len_ok(len))
			return -EINVAL;
		/* Blocks on a SYN mean nothing (no data was sent yet): ignored, like Linux. */
		if (syn)
			return 0;
		o->nsack = 0;
		for (unsigned i = 0; i < (unsigned)(len - 2) / OPT_SACK_BLOCK_LEN; i++) {
			const uint8_t *b = v + i * OPT_SACK_BLOCK_LEN;
			o->sack[i].start = get32(b);
			o->sack[i].end = get32(b + 4);
			o->nsack++;
		}
		return 0;
	default:
		return 0; /* unknown: skipped by its length (RFC 9293 3.2) */
	}
}

int tcp_opt_parse(const uint8_t *p, size_t len, bool syn, struct tcp_opts *o)
{
	memset(o, 0, sizeof(*o));
	if (len > TCP_OPT_MAX_LEN)
		return -EINVAL;
	size_t i = 0;
	while (i < len) {
		uint8_t kind = p[i];
		if (kind == OPT_EOL)
			return 0;
		if (kind == OPT_NOP) {
			i++;
			continue;
		}
		if (len - i < 2)
			return -EINVAL; /* no room for the length octet */
		uint8_t olen = p[i + 1];
		if (olen < 2 || olen > len - i)
			return -EINVAL;
		int rc = apply_option(kind, olen, p + i + 2, syn, o);
		if (rc != 0)
			return rc;
		i += olen;
	}
	return 0;
}

/* ---- building ---- */

static unsigned sack_blocks_fitting(const struct tcp_opt_out *in, size_t used)
{
	if (in->nsack == 0 || in->sack == NULL)
		return 0;
	size_t room = TCP_OPT_MAX_LEN - used;
	if (room < 4 + OPT_SACK_BLOCK_LEN)
		return 0;
	unsigned fit = (unsigned)((room - 4) / OPT_SACK_BLOCK_LEN);
	unsigned n = in->nsack < fit ? in->nsack : fit;
	return n < TCP_SACK_MAX_BLOCKS ? n : TCP_SACK_MAX_BLOCKS;
}

/* Length without the SACK blocks. */
static size_t base_len(const struct tcp_opt_out *in)
{
	size_t n = 0;
	if (in->mss)
		n += 4;
	if (in->ts)
		n += 12; /* NOP NOP TS, or SACK-permitted TS */
	else if (in->sack_ok)
		n += 4;  /* NOP NOP SACK-permitted */
	if (in->wscale)
		n += 4;  /* NOP WS */
	return n;
}

size_t tcp_opt_len(const struct tcp_opt_out *in)
{
	size_t n = base_len(in);
	unsigned blocks = sack_blocks_fitting(in, n);
	if (blocks)
		n += 4 + (size_t)blocks * OPT_SACK_BLOCK_LEN;
	return n;
}

static uint8_t *build_sack(const struct tcp_opt_out *in, unsigned blocks, uint8_t *p)
{
	*p++ = OPT_NOP;
	*p++ = OPT_NOP;
	*p++ = OPT_SACK;
	*p++ = (uint8_t)(OPT_SACK_BASE_LEN + blocks * OPT_SACK_BLOCK_LEN);
	for (unsigned i = 0; i < blocks; i++) {
		p = put32(p, in->sack[i].start);
		p = put32(p, in->sack[i].end);
	}
	return p;
}

size_t tcp_opt_build(const struct tcp_opt_out *in, uint8_t out[TCP_OPT_MAX_LEN])
{
	uint8_t *p = out;
	if (in->mss) {
		*p++ = OPT_MSS;
		*p++ = OPT_MSS_LEN;
		p = put16(p, in->mss_val);
	}
	if (in->ts) {
		if (in->sack_ok) {
			*p++ = OPT_SACK_PERM;
			*p++ = OPT_SACK_PERM_LEN;
		} else {
			*p++ = OPT_NOP;
			*p++ = OPT_NOP;
		}
		*p++ = OPT_TS;
		*p++ = OPT_TS_LEN;
		p = put32(p, in->ts_val);
		p = put32(p, in->ts_ecr);
	} else if (in->sack_ok) {
		*p++ = OPT_NOP;
		*p++ = OPT_NOP;
		*p++ = OPT_SACK_PERM;
		*p++ = OPT_SACK_PERM_LEN;
	}
	if (in->wscale) {
		*p++ = OPT_NOP;
		*p++ = OPT_WS;
		*p++ = OPT_WS_LEN;
		*p++ = in->wscale_val;
	}
	unsigned blocks = sack_blocks_fitting(in, (size_t)(p - out));
	if (blocks)
		p = build_sack(in, blocks, p);
	return (size_t)(p - out);
}
