/* VI/TCP message formats (vipl/vitcp_msg.c) against draft-dicecco-vitcp-01 §3 octet by octet:
 * the segment header, the RDMA header and the CE header at the offsets the draft's pictures
 * give, big-endian; CE options (unknown ones skipped, malformed ones refused); and the CRC
 * against the draft's own description of it (§3.6 a-e: polynomial division of the segment
 * with a zero CRC field), computed here the long way. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vitcp.h"

static void segment_header(void **state)
{
	(void)state;
	struct vt_hdr h = { .version = 1, .flags = VT_F_EOM | VT_F_IDV | VT_RDMA_WRITE,
			    .seg_len = 0x1234, .offset = 0x01020304, .imm = 0xA1B2C3D4,
			    .msgno = 5, .ack = 0x00060007, .rx_posted = 0x0809, .rerr = 0x0A02 };
	static const uint8_t want[VT_HDR_LEN] = {
		0x01, 0xC1, 0x12, 0x34,  0x01, 0x02, 0x03, 0x04,  0xA1, 0xB2, 0xC3, 0xD4,
		0x00, 0x00, 0x00, 0x05,  0x00, 0x06, 0x00, 0x07,  0x08, 0x09, 0x0A, 0x02 };
	uint8_t got[VT_HDR_LEN];
	vt_hdr_put(got, &h);
	assert_memory_equal(got, want, sizeof(want));
	struct vt_hdr back;
	vt_hdr_get(want, &back);
	assert_int_equal(vt_type(&back), VT_RDMA_WRITE);
	assert_int_equal(back.seg_len, 0x1234);
	assert_int_equal(back.ack, 0x00060007);
	assert_int_equal(back.rerr & VT_E_VDE, VT_E_VDE);
}

static void rdma_header(void **state)
{
	(void)state;
	struct vt_rdma r = { 0x1122334455667788ull, 0x99AABBCC, 0x10 }, back;
	static const uint8_t want[VT_RDMA_LEN] = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0x99, 0xAA, 0xBB, 0xCC,  0x00, 0x00, 0x00, 0x10 };
	uint8_t got[VT_RDMA_LEN];
	vt_rdma_put(got, &r);
	assert_memory_equal(got, want, sizeof(want));
	vt_rdma_get(want, &back);
	assert_memory_equal(&back, &r, sizeof(r));
}

static void ce_header(void **state)
{
	(void)state;
	struct vt_ce c = { .attrs = VT_A_RR | VT_A_RDMAW | VT_A_DFC, .mtu = 65536,
			   .read_window = 16, .calling_len = 3, .called_len = 2,
			   .has_addr = true, .addr = { 127, 0, 0, 1, 0x1d, 0x17 } };
	memcpy(c.calling, "abc", 3);
	memcpy(c.called, "xy", 2);
	uint8_t p[VT_CE_LEN + VT_CE_OPTS_MAX];
	size_t n = vt_ce_put(p, &c);
	assert_int_equal(n, VT_CE_LEN + 10);
	static const uint8_t head[8] = { 0x00, 0x2C, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00 };
	assert_memory_equal(p, head, sizeof(head));
	assert_memory_equal(p + 8, "abc", 3);
	static const uint8_t mid[4] = { 0x00, 0x10, 0x00, 0x02 };
	assert_memory_equal(p + 72, mid, sizeof(mid));
	assert_memory_equal(p + 76, "xy", 2);
	static const uint8_t opt[10] = { 0x80, 0x01, 0x00, 0x0A, 127, 0, 0, 1, 0x1d, 0x17 };
	assert_memory_equal(p + VT_CE_LEN, opt, sizeof(opt));
	struct vt_ce back;
	assert_int_equal(vt_ce_get(p, n, &back), 0);
	assert_int_equal(back.attrs, c.attrs);
	assert_int_equal(back.mtu, 65536);
	assert_true(back.has_addr);
	assert_memory_equal(back.addr, c.addr, 6);
	assert_memory_equal(back.called, "xy", 2);
}

static void ce_options(void **state)
{
	(void)state;
	uint8_t p[VT_CE_LEN + 32] = { 0 };
	struct vt_ce c;
	assert_int_equal(vt_ce_get(p, VT_CE_LEN - 1, &c), -1);       /* short */
	p[2] = 0, p[3] = 65;                                          /* calling length 65 */
	assert_int_equal(vt_ce_get(p, VT_CE_LEN, &c), -1);
	p[3] = 0;
	uint8_t *o = p + VT_CE_LEN;
	o[0] = 0x77, o[1] = 0x77, o[3] = 6;                           /* unknown, 2 octets of data */
	o[6] = 0, o[7] = 2, o[9] = 4;                                 /* Urgent Marker */
	assert_int_equal(vt_ce_get(p, VT_CE_LEN + 10, &c), 0);
	assert_true(c.urgent);
	assert_false(c.crc);
	o[3] = 2;                                                     /* Length under 4 */
	assert_int_equal(vt_ce_get(p, VT_CE_LEN + 10, &c), -1);
	o[3] = 40;                                                    /* past the segment */
	assert_int_equal(vt_ce_get(p, VT_CE_LEN + 10, &c), -1);
	o[1] = 0, o[0] = 0;                                           /* End of Option List */
	assert_int_equal(vt_ce_get(p, VT_CE_LEN + 10, &c), 0);
	assert_false(c.urgent);
}

/* §3.6 a-e literally: the segment with a zero CRC field, its first 32 bits complemented, as
 * a polynomial (first octet's most significant bit the highest power) divided by
 * G = 0x1DB710641; the remainder complemented. */
static uint32_t crc_by_division(const uint8_t *seg, size_t n)
{
	uint8_t *m = calloc(n + 4, 1);
	memcpy(m, seg, n); /* + the CRC field, zero */
	for (int i = 0; i < 4; i++)
		m[i] ^= 0xFF;
	uint64_t rem = 0; /* 33 bits at most */
	for (size_t bit = 0; bit < (n + 4) * 8; bit++) {
		rem = rem << 1 | ((m[bit / 8] >> (7 - bit % 8)) & 1);
		if (rem & (1ull << 32))
			rem ^= 0x1DB710641ull;
	}
	free(m);
	return ~(uint32_t)rem;
}

static void crc_as_the_draft_says(void **state)
{
	(void)state;
	uint8_t seg[300];
	srand(7);
	for (size_t n = 4; n < sizeof(seg); n += 37) {
		for (size_t i = 0; i < n; i++)
			seg[i] = (uint8_t)rand();
		assert_int_equal(vt_crc(seg, n), crc_by_division(seg, n));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(segment_header),
		cmocka_unit_test(rdma_header),
		cmocka_unit_test(ce_header),
		cmocka_unit_test(ce_options),
		cmocka_unit_test(crc_as_the_draft_says),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
