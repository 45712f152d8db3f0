/* DDP segmentation: the siw traces' numbers and the edge cases. */
#include "test_util.h"

#define MULPDU 1442u   /* MSS 1448 - MPA length (2) - CRC (4), as in every golden trace */

/* Walk a message; check offsets are contiguous, every non-last segment is full, L only last,
 * TO/MO advance with the offset. Returns the segment count. */
static uint64_t walk(struct ddp_seg_iter *it, const struct ddp_hdr *tmpl)
{
	struct ddp_seg s;
	uint64_t count = 0, off = 0;

	while (ddp_seg_next(it, &s)) {
		assert_true(s.payload_off == off);
		if (tmpl->tagged)
			assert_true(s.hdr.to == tmpl->to + off);
		else
			assert_true(s.hdr.mo == (uint32_t)(tmpl->mo + off));
		assert_int_equal(s.hdr.stag, tmpl->stag);
		assert_int_equal(s.hdr.qn, tmpl->qn);
		assert_int_equal(s.hdr.msn, tmpl->msn);
		assert_int_equal(s.hdr.rsvdulp, tmpl->rsvdulp);
		assert_int_equal(s.hdr.rsvdulp32, tmpl->rsvdulp32);
		off += s.payload_len;
		count++;
		if (!s.hdr.last)
			assert_int_equal(s.payload_len, it->max_payload);
		else
			assert_true(off == it->msg_len);
	}
	assert_true(off == it->msg_len);
	assert_false(ddp_seg_next(it, &s));
	assert_true(count == ddp_seg_count(it));
	return count;
}

/* ib_write_bw-stock.pcap: 16 KiB Write = 12 tagged FPDUs, ULPDU 1442 (11x) + 690, TO += 1428. */
static void test_write_16k_like_siw(void **state)
{
	struct ddp_hdr t = ddp_hdr_tagged(0x40, 0x36f79a00, UINT64_C(0x0000564056dec000));
	struct ddp_seg_iter it;
	struct iwarp_err e;
	struct ddp_seg s;
	uint64_t expect_to[] = { 0x564056dec000, 0x564056dec594, 0x564056decb28 };

	(void)state;
	assert_int_equal(ddp_seg_init(&it, &t, 16384, MULPDU, 0, &e), 0);
	assert_int_equal(it.max_payload, 1428);
	assert_true(ddp_seg_count(&it) == 12);
	for (int i = 0; i < 12; i++) {
		assert_true(ddp_seg_next(&it, &s));
		if (i < 3)
			assert_true(s.hdr.to == expect_to[i]);
		assert_int_equal(s.hdr.last, i == 11);
		assert_int_equal(14 + s.payload_len, i == 11 ? 690 : 1442);
	}
	assert_true(s.hdr.to == UINT64_C(0x0000564056defd5c));   /* frame 50 */
	assert_false(ddp_seg_next(&it, &s));
	assert_int_equal(ddp_seg_init(&it, &t, 16384, MULPDU, 0, &e), 0);
	assert_true(walk(&it, &t) == 12);
}

/* ib_send_bw-stock.pcap: 8 KiB Send = 6 untagged FPDUs, MO 0,1424,...,7120, last ULPDU 1090. */
static void test_send_8k_like_siw(void **state)
{
	struct ddp_hdr t = ddp_hdr_untagged(0x43, 0, 0, 1, 0);
	struct ddp_seg_iter it;
	struct iwarp_err e;
	struct ddp_seg s;

	(void)state;
	assert_int_equal(ddp_seg_init(&it, &t, 8192, MULPDU, 0, &e), 0);
	for (uint32_t i = 0; i < 6; i++) {
		assert_true(ddp_seg_next(&it, &s));
		assert_int_equal(s.hdr.mo, i * 1424);
		assert_int_equal(s.hdr.msn, 1);
		assert_int_equal(s.hdr.last, i == 5);
	}
	assert_int_equal(18 + s.payload_len, 1090);
	assert_false(ddp_seg_next(&it, &s));
}

/* A sender whose LLP takes only so much now cuts a segment shorter (ddp_seg_next_max): the
 * offsets stay contiguous, the cap never raises a segment above the MULPDU's payload, and
 * 0 means no cap. */
static void test_next_max(void **state)
{
	struct ddp_hdr t = ddp_hdr_untagged(0x43, 0, 0, 1, 0);
	struct ddp_seg_iter it;
	struct iwarp_err e;
	struct ddp_seg s;
	const uint32_t caps[] = { 100, 0, 1, 5000, 700 };
	uint64_t off = 0;
	unsigned i = 0;

	(void)state;
	assert_int_equal(ddp_seg_init(&it, &t, 5000, MULPDU, 0, &e), 0);
	while (ddp_seg_next_max(&it, &s, caps[i % 5])) {
		uint32_t want = caps[i % 5] && caps[i % 5] < 1424 ? caps[i % 5] : 1424;

		assert_int_equal(s.hdr.mo, off);
		assert_int_equal(s.payload_len, 5000 - off < want ? 5000 - off : want);
		off += s.payload_len;
		assert_int_equal(s.hdr.last, off == 5000);
		i++;
	}
	assert_int_equal(off, 5000);
	assert_true(i > 5);
}

static void test_zero_length(void **state)
{
	struct ddp_hdr t = ddp_hdr_tagged(0x40, 1, 0);   /* the p2p RTR Write */
	struct ddp_seg_iter it;
	struct iwarp_err e;
	struct ddp_seg s;
	uint8_t b[14], w[14];

	(void)state;
	assert_int_equal(ddp_seg_init(&it, &t, 0, MULPDU, 0, &e), 0);
	assert_true(ddp_seg_next(&it, &s));
	assert_true(s.hdr.last);
	assert_int_equal(s.payload_len, 0);
	assert_false(ddp_seg_next(&it, &s));
	assert_int_equal(ddp_hdr_encode(&s.hdr, b, sizeof(b)), 14);
	assert_memory_equal(b, w, hex2bin("c140 00000001 0000000000000000", w, sizeof(w)));
	/* zero length fits even a MULPDU with no room for payload, and at TO 2^64-1 */
	t.to = UINT64_MAX;
	assert_int_equal(ddp_seg_init(&it, &t, 0, 14, 0, &e), 0);
	assert_true(walk(&it, &t) == 1);
}

static void test_exact_and_plus_one(void **state)
{
	struct ddp_hdr t = ddp_hdr_untagged(0x43, 0, 0, 7, 0);
	struct ddp_seg_iter it;
	struct iwarp_err e;

	(void)state;
	assert_int_equal(ddp_seg_init(&it, &t, 1424, MULPDU, 0, &e), 0);   /* exactly fits */
	assert_true(walk(&it, &t) == 1);
	assert_int_equal(ddp_seg_init(&it, &t, 1425, MULPDU, 0, &e), 0);   /* one over */
	assert_true(walk(&it, &t) == 2);
	assert_int_equal(ddp_seg_init(&it, &t, 1, MULPDU, 0, &e), 0);
	assert_true(walk(&it, &t) == 1);
	/* a ULP header per segment shrinks the payload */
	assert_int_equal(ddp_seg_init(&it, &t, 1424, MULPDU, 4, &e), 0);
	assert_int_equal(it.max_payload, 1420);
	assert_true(walk(&it, &t) == 2);
	/* one payload octet per segment */
	assert_int_equal(ddp_seg_init(&it, &t, 5, 19, 0, &e), 0);
	assert_true(walk(&it, &t) == 5);
}

static void test_huge(void **state)
{
	struct ddp_hdr t = ddp_hdr_tagged(0x40, 9, 0);
	struct ddp_seg_iter it;
	struct iwarp_err e;
	struct ddp_seg s;
	uint64_t len = UINT64_C(1) << 40, n;

	(void)state;
	assert_int_equal(ddp_seg_init(&it, &t, len, MULPDU, 0, &e), 0);
	n = ddp_seg_count(&it);
	assert_true(n == (len + 1427) / 1428);
	/* untagged: 4 GiB exactly is the largest message (MO is 32 bits) */
	t = ddp_hdr_untagged(0x43, 0, 0, 1, 0);
	assert_int_equal(ddp_seg_init(&it, &t, UINT64_C(1) << 32, 65535, 0, &e), 0);
	while (ddp_seg_next(&it, &s))
		if (s.hdr.last)
			break;
	assert_true(s.hdr.last);
	assert_true((uint64_t)s.hdr.mo + s.payload_len == UINT64_C(1) << 32);
}

static void test_errors(void **state)
{
	struct ddp_hdr t = ddp_hdr_tagged(0x40, 9, UINT64_MAX - 99);
	struct ddp_seg_iter it;
	struct iwarp_err e;

	(void)state;
	/* TO + len reaching exactly 2^64 is fine, one more octet wraps */
	assert_int_equal(ddp_seg_init(&it, &t, 100, MULPDU, 0, &e), 0);
	assert_true(walk(&it, &t) == 1);
	assert_int_equal(ddp_seg_init(&it, &t, 101, MULPDU, 0, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_TO_WRAP);
	t.to = 2;   /* last octet at 2^64: wraps (TO 1 would end exactly at 2^64 - 1) */
	assert_int_equal(ddp_seg_init(&it, &t, UINT64_MAX, MULPDU, 0, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_TAGGED, DDP_ECODE_T_TO_WRAP);
	t.to = 1;
	assert_int_equal(ddp_seg_init(&it, &t, UINT64_MAX, MULPDU, 0, &e), 0);
	t.to = 0;
	assert_int_equal(ddp_seg_init(&it, &t, UINT64_MAX, MULPDU, 0, &e), 0);
	/* untagged beyond 2^32 */
	t = ddp_hdr_untagged(0x43, 0, 0, 1, 0);
	assert_int_equal(ddp_seg_init(&it, &t, (UINT64_C(1) << 32) + 1, MULPDU, 0, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, DDP_ECODE_U_INVALID_MO);
	/* MULPDU with no room for payload */
	assert_int_equal(ddp_seg_init(&it, &t, 1, 18, 0, &e), -1);
	assert_err(e, IWARP_LAYER_DDP, DDP_ETYPE_CATASTROPHIC, 0);
	assert_int_equal(ddp_seg_init(&it, &t, 1, 19, 1, &e), -1);
	assert_int_equal(ddp_seg_init(&it, &t, 1, 0, UINT32_MAX, &e), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_16k_like_siw),
		cmocka_unit_test(test_send_8k_like_siw),
		cmocka_unit_test(test_next_max),
		cmocka_unit_test(test_zero_length),
		cmocka_unit_test(test_exact_and_plus_one),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
