/* VI/TCP message formats (draft-dicecco-vitcp-01 §3): the segment header, RDMA header, CE
 * header with its options, and the trailer's CRC. Every multi-octet field is big-endian
 * (§3). Pure functions: no state, no I/O. */
#include "vitcp.h"

#include <string.h>

#include "ddp_wire.h" /* big-endian loads and stores */

#define put16 iw_put16
#define put32 iw_put32
#define get16 iw_get16
#define get32 iw_get32

void vt_hdr_put(uint8_t *p, const struct vt_hdr *h)
{
	p[0] = h->version;
	p[1] = h->flags;
	put16(p + 2, h->seg_len);
	put32(p + 4, h->offset);
	put32(p + 8, h->imm);
	put32(p + 12, h->msgno);
	put32(p + 16, h->ack);
	put16(p + 20, h->rx_posted);
	put16(p + 22, h->rerr);
}

void vt_hdr_get(const uint8_t *p, struct vt_hdr *h)
{
	h->version = p[0];
	h->flags = p[1];
	h->seg_len = get16(p + 2);
	h->offset = get32(p + 4);
	h->imm = get32(p + 8);
	h->msgno = get32(p + 12);
	h->ack = get32(p + 16);
	h->rx_posted = get16(p + 20);
	h->rerr = get16(p + 22);
}

void vt_rdma_put(uint8_t *p, const struct vt_rdma *r)
{
	iw_put64(p, r->addr);
	put32(p + 8, r->handle);
	put32(p + 12, r->length);
}

void vt_rdma_get(const uint8_t *p, struct vt_rdma *r)
{
	r->addr = iw_get64(p);
	r->handle = get32(p + 8);
	r->length = get32(p + 12);
}

/* Calling Attributes(2) Calling Disc Len(2) MTU(4) Calling Disc(64) Read Window(2)
 * Called Disc Len(2) Called Disc(64), then options: Type(2) Length(2) [data]. */
size_t vt_ce_put(uint8_t *p, const struct vt_ce *c)
{
	memset(p, 0, VT_CE_LEN);
	put16(p, c->attrs);
	put16(p + 2, c->calling_len);
	put32(p + 4, c->mtu);
	memcpy(p + 8, c->calling, c->calling_len);
	put16(p + 72, c->read_window);
	put16(p + 74, c->called_len);
	memcpy(p + 76, c->called, c->called_len);
	size_t n = VT_CE_LEN;
	if (c->has_addr) {
		put16(p + n, VT_OPT_NIC_ADDR);
		put16(p + n + 2, 4 + VIPL_ADDR_LEN);
		memcpy(p + n + 4, c->addr, VIPL_ADDR_LEN);
		n += 4 + VIPL_ADDR_LEN;
	}
	if (c->has_redirect) {
		put16(p + n, VT_OPT_REDIRECT);
		put16(p + n + 2, 4 + VIPL_ADDR_LEN);
		memcpy(p + n + 4, c->redirect, VIPL_ADDR_LEN);
		n += 4 + VIPL_ADDR_LEN;
	}
	if (c->has_timeout) {
		put16(p + n, VT_OPT_TIMEOUT);
		put16(p + n + 2, 8);
		put32(p + n + 4, c->timeout_ms);
		n += 8;
	}
	if (c->urgent) {
		put16(p + n, VT_OPT_URGENT);
		put16(p + n + 2, 4);
		n += 4;
	}
	if (c->crc) { /* §3.3: the End of Option List keeps the CRC from reading as an option */
		put16(p + n, VT_OPT_CRC);
		put16(p + n + 2, 4);
		put16(p + n + 4, VT_OPT_END);
		n += 6;
	}
	return n;
}

/* Options (§3.3): unknown ones are skipped by their Length, which counts Type and Length
 * (D264); a Length under 4 or past the segment ends the list as malformed. */
static int ce_options(const uint8_t *p, size_t len, struct vt_ce *c)
{
	size_t i = 0;
	while (i + 2 <= len) {
		uint16_t type = get16(p + i);
		if (type == VT_OPT_END)
			return 0;
		if (i + 4 > len)
			return -1;
		uint16_t olen = get16(p + i + 2);
		if (olen < 4 || olen > len - i)
			return -1;
		if (type == VT_OPT_CRC) {
			c->crc = true;
		} else if (type == VT_OPT_URGENT) {
			c->urgent = true;
		} else if (type == VT_OPT_NIC_ADDR && olen == 4 + VIPL_ADDR_LEN) {
			c->has_addr = true;
			memcpy(c->addr, p + i + 4, VIPL_ADDR_LEN);
		} else if (type == VT_OPT_REDIRECT && olen == 4 + VIPL_ADDR_LEN) {
			c->has_redirect = true;
			memcpy(c->redirect, p + i + 4, VIPL_ADDR_LEN);
		} else if (type == VT_OPT_TIMEOUT && olen == 8) {
			c->has_timeout = true;
			c->timeout_ms = get32(p + i + 4);
		}
		i += olen;
	}
	return i == len ? 0 : -1;
}

int vt_ce_get(const uint8_t *p, size_t len, struct vt_ce *c)
{
	memset(c, 0, sizeof(*c));
	if (len < VT_CE_LEN)
		return -1;
	uint16_t cl = get16(p + 2), dl = get16(p + 74);
	if (cl > VIPL_MAX_DISC || dl > VIPL_MAX_DISC)
		return -1;
	c->attrs = get16(p);
	c->calling_len = (uint8_t)cl;
	c->mtu = get32(p + 4);
	memcpy(c->calling, p + 8, cl);
	c->read_window = get16(p + 72);
	c->called_len = (uint8_t)dl;
	memcpy(c->called, p + 76, dl);
	return ce_options(p + VT_CE_LEN, len - VT_CE_LEN, c);
}

/* §3.6: generator 0x1DB710641 (Ethernet's, bit-reversed), the first 32 bits complemented
 * (initial value all ones), the remainder complemented; bits taken most significant first
 * within each octet, the order of the draft's pictures (D265). The CRC field itself, zero in
 * the computation, is the x^32 augmentation, so it is left out here. */
uint32_t vt_crc(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		crc ^= (uint32_t)p[i] << 24;
		for (int b = 0; b < 8; b++)
			crc = crc & 0x80000000u ? crc << 1 ^ 0xDB710641u : crc << 1;
	}
	return ~crc;
}

void vt_crc_seal(uint8_t *seg, size_t len)
{
	put32(seg + len - 4, vt_crc(seg, len - 4));
}

bool vt_crc_sealed(const uint8_t *seg, size_t len)
{
	return len >= VT_HDR_LEN + 4 && get32(seg + len - 4) == vt_crc(seg, len - 4);
}
