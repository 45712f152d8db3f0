/* MPA Request/Reply/Reject frame codec: golden Linux siw bytes, partial streams, validation. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mpa.h"
#include "mpa_test_util.h"

/* MPA Request/Reply TCP payloads of Linux siw captures (tshark -T fields -e tcp.payload),
 * frames 4 (client→server Request) and 6 (server→client Reply). */
static const char *const rping_stock_req = KEYREQ "1002000400010001";
static const char *const rping_stock_rep = KEYREP "1002000400010001";
static const char *const rping_crc_req = KEYREQ "5002000400010001";
static const char *const rping_crc_rep = KEYREP "5002000400010001";
static const char *const rping_p2p_req = KEYREQ "100200048001c001";
static const char *const rping_p2p_rep = KEYREP "1002000480018001";
static const char *const wbw_p2p_req = KEYREQ "100200048000c001"; /* ib_write_bw-p2p */
static const char *const wbw_p2p_rep = KEYREP "1002000480018000";

struct golden {
	const char *hex;
	enum mpa_frame_type type;
	bool crc, p2p;
	unsigned rtr;
	uint16_t ird, ord;
};

static const struct golden goldens[] = {
	{ rping_stock_req, MPA_FRAME_REQUEST, false, false, 0, 1, 1 },
	{ rping_stock_rep, MPA_FRAME_REPLY, false, false, 0, 1, 1 },
	{ rping_crc_req, MPA_FRAME_REQUEST, true, false, 0, 1, 1 },
	{ rping_crc_rep, MPA_FRAME_REPLY, true, false, 0, 1, 1 },
	{ rping_p2p_req, MPA_FRAME_REQUEST, false, true, MPA_RTR_WRITE | MPA_RTR_READ, 1, 1 },
	{ rping_p2p_rep, MPA_FRAME_REPLY, false, true, MPA_RTR_WRITE, 1, 1 },
	{ wbw_p2p_req, MPA_FRAME_REQUEST, false, true, MPA_RTR_WRITE | MPA_RTR_READ, 0, 1 },
	{ wbw_p2p_rep, MPA_FRAME_REPLY, false, true, MPA_RTR_WRITE, 1, 0 },
};

static void test_golden_parse_and_reencode(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
		const struct golden *g = &goldens[i];
		uint8_t wire[64], again[64];
		size_t n = unhex(g->hex, wire, sizeof(wire));
		struct mpa_frame f;
		struct mpa_error err = { 0 };

		assert_int_equal(n, 24);
		assert_int_equal(mpa_frame_parse(wire, n, NULL, &f, &err), 24);
		assert_int_equal(f.type, g->type);
		assert_int_equal(f.rev, 2);
		assert_true(f.enhanced);
		assert_false(f.markers);
		assert_false(f.reject);
		assert_int_equal(f.crc, g->crc);
		assert_int_equal(f.reserved, 0);
		assert_int_equal(f.v2.p2p, g->p2p);
		assert_int_equal(f.v2.rtr, g->rtr);
		assert_int_equal(f.v2.ird, g->ird);
		assert_int_equal(f.v2.ord, g->ord);
		assert_int_equal(f.pd_len, 0); /* rping/perftest send no ULP private data */
		assert_null(f.pd);

		assert_int_equal(mpa_frame_encode(&f, again, sizeof(again)), 24);
		assert_memory_equal(again, wire, 24);
	}
}

static void test_build_from_fields_matches_siw(void **state)
{
	(void)state;
	struct mpa_frame f = {
		.type = MPA_FRAME_REQUEST,
		.rev = MPA_REV_2,
		.enhanced = true,
		.v2 = { .p2p = true, .rtr = MPA_RTR_WRITE | MPA_RTR_READ, .ird = 1, .ord = 1 },
	};
	uint8_t want[24], got[24];
	unhex(rping_p2p_req, want, sizeof(want));
	assert_int_equal(mpa_frame_wire_len(&f), 24);
	assert_int_equal(mpa_frame_encode(&f, got, sizeof(got)), 24);
	assert_memory_equal(got, want, 24);
}

static void test_expect_side(void **state)
{
	(void)state;
	uint8_t req[24], rep[24];
	struct mpa_parse_opts o;
	struct mpa_frame f;
	struct mpa_error err = { 0 };
	unhex(rping_stock_req, req, sizeof(req));
	unhex(rping_stock_rep, rep, sizeof(rep));

	mpa_parse_opts_init(&o, MPA_EXPECT_REQUEST);
	assert_int_equal(mpa_frame_parse(req, 24, &o, &f, &err), 24);
	assert_int_equal(mpa_frame_parse(rep, 24, &o, &f, &err), -1);
	assert_int_equal(err.ecode, MPA_ECODE_INVALID_REQ_REP);
	assert_non_null(strstr(err.reason, "MPA ID Req Frame"));

	mpa_parse_opts_init(&o, MPA_EXPECT_REPLY);
	assert_int_equal(mpa_frame_parse(rep, 24, &o, &f, &err), 24);
	assert_int_equal(f.type, MPA_FRAME_REPLY);
	assert_int_equal(mpa_frame_parse(req, 24, &o, &f, &err), -1);
}

/* Feed one octet at a time: "need more" until the last PD octet, then the frame length,
 * even with FPDU bytes already queued behind the frame. */
static void test_partial_stream(void **state)
{
	(void)state;
	static const uint8_t ulp[] = "hello, rdma";
	struct mpa_frame f = {
		.type = MPA_FRAME_REPLY, .rev = 2, .enhanced = true,
		.v2 = { .ird = 7, .ord = 9 }, .pd = ulp, .pd_len = sizeof(ulp),
	};
	uint8_t buf[128];
	ssize_t n = mpa_frame_encode(&f, buf, sizeof(buf));
	assert_int_equal(n, 20 + 4 + sizeof(ulp));
	memset(buf + n, 0xAB, 16); /* the first FPDU's bytes follow in the stream */

	struct mpa_frame g;
	struct mpa_error err = { 0 };
	for (ssize_t len = 0; len < n; len++)
		assert_int_equal(mpa_frame_parse(buf, (size_t)len, NULL, &g, &err), 0);
	assert_int_equal(mpa_frame_parse(buf, (size_t)n, NULL, &g, &err), n);
	assert_int_equal(mpa_frame_parse(buf, (size_t)n + 16, NULL, &g, &err), n);
	assert_int_equal(g.pd_len, sizeof(ulp));
	assert_ptr_equal(g.pd, buf + 24);
	assert_memory_equal(g.pd, ulp, sizeof(ulp));
	assert_int_equal(g.v2.ird, 7);
	assert_int_equal(g.v2.ord, 9);
}

static void expect_invalid(const uint8_t *buf, size_t len, const struct mpa_parse_opts *o,
			   const char *reason_part)
{
	struct mpa_frame f;
	struct mpa_error err = { MPA_ECODE_NONE, NULL };
	assert_int_equal(mpa_frame_parse(buf, len, o, &f, &err), -1);
	assert_int_equal(err.ecode, MPA_ECODE_INVALID_REQ_REP);
	assert_non_null(err.reason);
	assert_non_null(strstr(err.reason, reason_part));
}

/* A wrong key is reported after its first wrong octet, not after 20 octets. */
static void test_wrong_key_early(void **state)
{
	(void)state;
	uint8_t buf[24];
	unhex(rping_stock_req, buf, sizeof(buf));
	buf[0] = 'm';
	expect_invalid(buf, 1, NULL, "key");
	unhex(rping_stock_req, buf, sizeof(buf));
	buf[15] = 'E'; /* "MPA ID Req FramE" */
	assert_int_equal(mpa_frame_parse(buf, 15, NULL, NULL, NULL), 0);
	expect_invalid(buf, 16, NULL, "key");
	/* shared prefix "MPA ID R": with ANY, 8 octets are not yet decisive */
	unhex(rping_stock_rep, buf, sizeof(buf));
	assert_int_equal(mpa_frame_parse(buf, 8, NULL, NULL, NULL), 0);
	buf[8] = 'x';
	expect_invalid(buf, 9, NULL, "neither");
}

static void test_revision_checks(void **state)
{
	(void)state;
	uint8_t buf[24];
	unhex(rping_stock_req, buf, sizeof(buf));
	buf[17] = 3;
	expect_invalid(buf, 20, NULL, "revision above 2"); /* before the PD arrives */
	buf[17] = 0xFF;
	expect_invalid(buf, 24, NULL, "revision above 2");
	buf[17] = 0;
	expect_invalid(buf, 24, NULL, "revision 0");
}

static void test_pd_length_limit(void **state)
{
	(void)state;
	uint8_t buf[20];
	struct mpa_parse_opts o;
	unhex(KEYREQ "10020200", buf, sizeof(buf)); /* PD_Length 512: allowed by RFC */
	mpa_parse_opts_init(&o, MPA_EXPECT_REQUEST);
	assert_int_equal(mpa_frame_parse(buf, 20, &o, NULL, NULL), 0); /* waits for 512 octets */
	unhex(KEYREQ "10020201", buf, sizeof(buf));                      /* 513 */
	expect_invalid(buf, 20, &o, "PD_Length");
	unhex(KEYREQ "10020101", buf, sizeof(buf)); /* 257 > Linux limit */
	o.pd_max = MPA_PD_MAX_LINUX;
	expect_invalid(buf, 20, &o, "PD_Length");
	unhex(KEYREQ "1002ffff", buf, sizeof(buf));
	o.pd_max = 0; /* 0 = RFC limit */
	expect_invalid(buf, 20, &o, "PD_Length");
}

static void test_enhanced_short_pd(void **state)
{
	(void)state;
	uint8_t buf[24];
	for (unsigned pd = 0; pd < 4; pd++) {
		char hex[64];
		snprintf(hex, sizeof(hex), KEYREQ "100200%02x000000", pd);
		unhex(hex, buf, sizeof(buf));
		expect_invalid(buf, 20, NULL, "PD_Length below 4");
	}
}

/* RFC 5044: reserved bits MUST NOT be checked on reception (default); strict mode rejects. */
static void test_reserved_bits(void **state)
{
	(void)state;
	uint8_t buf[24];
	struct mpa_parse_opts o;
	struct mpa_frame f;
	unhex(KEYREQ "1802000400010001", buf, sizeof(buf)); /* siw GSO_EXP 0x08 */
	mpa_parse_opts_init(&o, MPA_EXPECT_ANY);
	assert_int_equal(mpa_frame_parse(buf, 24, &o, &f, NULL), 24);
	assert_int_equal(f.reserved, MPA_FLAG_SIW_GSO);
	assert_true(f.enhanced);
	uint8_t out[24];
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL); /* never sent */
	f.reserved = 0;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), 24);
	assert_int_equal(out[16], 0x10);

	o.reserved = MPA_RESERVED_REJECT;
	expect_invalid(buf, 24, &o, "reserved");
	unhex(KEYREQ "1102000400010001", buf, sizeof(buf));
	expect_invalid(buf, 20, &o, "reserved");
}

/* In rev 1 the 0x10 bit is reserved: the whole PD is ULP data, not an IRD/ORD block. */
static void test_rev1_s_bit_is_reserved(void **state)
{
	(void)state;
	uint8_t buf[24];
	struct mpa_parse_opts o;
	struct mpa_frame f;
	unhex(KEYREQ "1001000400010001", buf, sizeof(buf));
	assert_int_equal(mpa_frame_parse(buf, 24, NULL, &f, NULL), 24);
	assert_int_equal(f.rev, 1);
	assert_false(f.enhanced);
	assert_int_equal(f.reserved, 0x10);
	assert_int_equal(f.pd_len, 4);
	assert_ptr_equal(f.pd, buf + 20);
	mpa_parse_opts_init(&o, MPA_EXPECT_REQUEST);
	o.reserved = MPA_RESERVED_REJECT;
	expect_invalid(buf, 24, &o, "reserved");
	/* rev 1, S set, PD 0: no "PD below 4" error since there is no S in rev 1 */
	unhex(KEYREQ "10010000", buf, 20);
	assert_int_equal(mpa_frame_parse(buf, 20, NULL, &f, NULL), 20);
	assert_null(f.pd);
}

static void test_plain_rev2_and_rev1(void **state)
{
	(void)state;
	uint8_t buf[32];
	struct mpa_frame f;
	unhex(KEYREP "40020003616263", buf, sizeof(buf)); /* rev 2, C, no S, PD "abc" */
	assert_int_equal(mpa_frame_parse(buf, 23, NULL, &f, NULL), 23);
	assert_int_equal(f.rev, 2);
	assert_true(f.crc);
	assert_false(f.enhanced);
	assert_int_equal(f.pd_len, 3);
	assert_memory_equal(f.pd, "abc", 3);
	uint8_t out[32];
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), 23);
	assert_memory_equal(out, buf, 23);

	struct mpa_frame v1 = { .type = MPA_FRAME_REQUEST, .rev = 1, .markers = true };
	assert_int_equal(mpa_frame_encode(&v1, out, sizeof(out)), 20);
	assert_int_equal(out[16], 0x80);
	assert_int_equal(out[17], 1);
	assert_int_equal(out[18] | out[19], 0);
	assert_int_equal(mpa_frame_parse(out, 20, NULL, &f, NULL), 20);
	assert_true(f.markers);
	assert_int_equal(f.rev, 1);
}

static void test_reject_frame_with_pd(void **state)
{
	(void)state;
	static const uint8_t why[] = { 'b', 'u', 's', 'y' };
	struct mpa_frame rj = {
		.type = MPA_FRAME_REPLY, .rev = 2, .reject = true, .enhanced = true,
		.v2 = { .ird = MPA_V2_NO_VALUE, .ord = MPA_V2_NO_VALUE }, .pd = why, .pd_len = 4,
	};
	uint8_t out[32], want[28];
	unhex(KEYREP "300200083fff3fff62757379", want, sizeof(want));
	assert_int_equal(mpa_frame_encode(&rj, out, sizeof(out)), 28);
	assert_memory_equal(out, want, 28);

	struct mpa_frame f;
	assert_int_equal(mpa_frame_parse(out, 28, NULL, &f, NULL), 28);
	assert_true(f.reject);
	assert_int_equal(f.v2.ird, MPA_V2_NO_VALUE);
	assert_int_equal(f.v2.ord, MPA_V2_NO_VALUE);
	assert_false(f.v2.p2p);
	assert_int_equal(f.pd_len, 4);
	assert_memory_equal(f.pd, why, 4);

	/* rev 1 reject with PD */
	rj.rev = 1;
	rj.enhanced = false;
	assert_int_equal(mpa_frame_encode(&rj, out, sizeof(out)), 24);
	assert_int_equal(out[16], 0x20);
	assert_int_equal(mpa_frame_parse(out, 24, NULL, &f, NULL), 24);
	assert_true(f.reject);
	assert_int_equal(f.pd_len, 4);
}

static void test_reject_flag_in_request(void **state)
{
	(void)state;
	uint8_t buf[24];
	unhex(KEYREQ "3002000400010001", buf, sizeof(buf));
	expect_invalid(buf, 20, NULL, "R (reject)");
}

static void test_send_rtr_and_no_value_bits(void **state)
{
	(void)state;
	uint8_t buf[24];
	struct mpa_frame f;
	unhex(KEYREQ "10020004ffff3fff", buf, sizeof(buf));
	assert_int_equal(mpa_frame_parse(buf, 24, NULL, &f, NULL), 24);
	assert_true(f.v2.p2p);
	assert_int_equal(f.v2.rtr, MPA_RTR_SEND);
	assert_int_equal(f.v2.ird, MPA_V2_NO_VALUE);
	assert_int_equal(f.v2.ord, MPA_V2_NO_VALUE);
	uint8_t out[24];
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), 24);
	assert_memory_equal(out, buf, 24);
}

static void test_encode_errors(void **state)
{
	(void)state;
	uint8_t out[600];
	static uint8_t big[520];
	struct mpa_frame ok = { .type = MPA_FRAME_REQUEST, .rev = 2, .enhanced = true };
	struct mpa_frame f;

	assert_int_equal(mpa_frame_encode(&ok, out, 23), -ENOSPC);
	assert_int_equal(mpa_frame_encode(&ok, NULL, 0), -ENOSPC);
	assert_int_equal(mpa_frame_encode(NULL, out, sizeof(out)), -EINVAL);
	f = ok; f.rev = 3;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f = ok; f.rev = 0;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f = ok; f.rev = 1;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f = ok; f.reject = true;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f = ok; f.v2.ird = 0x4000;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f = ok; f.v2.rtr = 8;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f = ok; f.pd_len = 1;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f = ok; f.type = 0;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	/* PD_Length (block + ULP) is bounded by 512 */
	f = ok; f.pd = big; f.pd_len = 509;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f.pd_len = 508;
	assert_int_equal(mpa_frame_encode(&f, out, sizeof(out)), 532);
	assert_int_equal(out[18], 0x02);
	assert_int_equal(out[19], 0x00);
	assert_int_equal(mpa_frame_parse(out, 532, NULL, &f, NULL), 532);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_parse_and_reencode),
		cmocka_unit_test(test_build_from_fields_matches_siw),
		cmocka_unit_test(test_expect_side),
		cmocka_unit_test(test_partial_stream),
		cmocka_unit_test(test_wrong_key_early),
		cmocka_unit_test(test_revision_checks),
		cmocka_unit_test(test_pd_length_limit),
		cmocka_unit_test(test_enhanced_short_pd),
		cmocka_unit_test(test_reserved_bits),
		cmocka_unit_test(test_rev1_s_bit_is_reserved),
		cmocka_unit_test(test_plain_rev2_and_rev1),
		cmocka_unit_test(test_reject_frame_with_pd),
		cmocka_unit_test(test_reject_flag_in_request),
		cmocka_unit_test(test_send_rtr_and_no_value_bits),
		cmocka_unit_test(test_encode_errors),
	};
	return cmocka_run_group_tests_name("mpa_frame", tests, NULL, NULL);
}
