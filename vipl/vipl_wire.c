/* The private data of the MPA Request / Reply / Reject (docs/vipl.md), network order:
 *   0 magic "VIPL"  4 version 2  5 kind  6 reliability  7 flags (RDMA W / R enables)
 *   8 MTU (4)  12 ack VA (8)  20 ack STag (4)  24 host address (6)
 *   30 calling discriminator length  31 called length  32 requester's timeout in ms (4)
 *   36 calling  36+n called.
 * At most 164 octets: below the 252 a Linux peer accepts. */
#include "vipl_int.h"

#include <string.h>

#define PD_MAGIC 0x5649504Cu
#define PD_VERSION 2
#define PD_HDR 36

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

size_t vipl_pdata_encode(const struct vipl_pdata *p, uint8_t *out, size_t cap)
{
	size_t n = PD_HDR + (size_t)p->calling_len + p->called_len;
	if (p->calling_len > VIPL_MAX_DISC || p->called_len > VIPL_MAX_DISC || n > cap)
		return 0;
	put32(out, PD_MAGIC);
	out[4] = PD_VERSION;
	out[5] = p->kind;
	out[6] = p->rel;
	out[7] = p->flags;
	put32(out + 8, p->mtu);
	put32(out + 12, (uint32_t)(p->ack_va >> 32));
	put32(out + 16, (uint32_t)p->ack_va);
	put32(out + 20, p->ack_stag);
	memcpy(out + 24, p->host, VIPL_ADDR_LEN);
	out[30] = p->calling_len;
	out[31] = p->called_len;
	put32(out + 32, p->timeout_ms);
	memcpy(out + PD_HDR, p->calling, p->calling_len);
	memcpy(out + PD_HDR + p->calling_len, p->called, p->called_len);
	return n;
}

/* 0, or -1 for anything that is not a well-formed block of ours. */
int vipl_pdata_decode(const void *buf, size_t len, struct vipl_pdata *p)
{
	const uint8_t *b = buf;
	memset(p, 0, sizeof(*p));
	if (b == NULL || len < PD_HDR || get32(b) != PD_MAGIC || b[4] != PD_VERSION)
		return -1;
	p->kind = b[5];
	p->rel = b[6];
	p->flags = b[7];
	p->mtu = get32(b + 8);
	p->ack_va = (uint64_t)get32(b + 12) << 32 | get32(b + 16);
	p->ack_stag = get32(b + 20);
	memcpy(p->host, b + 24, VIPL_ADDR_LEN);
	p->calling_len = b[30];
	p->called_len = b[31];
	p->timeout_ms = get32(b + 32);
	if (p->kind < PD_REQUEST || p->kind > PD_REDIRECT || p->calling_len > VIPL_MAX_DISC ||
	    p->called_len > VIPL_MAX_DISC || PD_HDR + (size_t)p->calling_len + p->called_len > len)
		return -1;
	memcpy(p->calling, b + PD_HDR, p->calling_len);
	memcpy(p->called, b + PD_HDR + p->calling_len, p->called_len);
	return 0;
}
