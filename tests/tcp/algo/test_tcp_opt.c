/* TCP option parsing (bad lengths, EOL, unknown kinds, SYN-only options) and building in
 * Linux's layouts, with build -> parse round trips. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_opt.h"

static int parse(const uint8_t *p, size_t len, bool syn, struct tcp_opts *o)
{
	return tcp_opt_parse(p, len, syn, o);
}

static void test_empty_and_padding(void **state)
{
	(void)state;
	struct tcp_opts o;
	assert_int_equal(parse(NULL, 0, true, &o), 0);
	assert_false(o.has_mss || o.has_ts || o.sack_ok || o.has_wscale);
	const uint8_t nops[] = {1, 1, 1, 1};
	assert_int_equal(parse(nops, sizeof(nops), false, &o), 0);
	/* Everything after EOL is ignored, even garbage. */
	const uint8_t eol[] = {0, 0xff, 0x00, 0x77};
	assert_int_equal(parse(eol, sizeof(eol), false, &o), 0);
}

static void test_syn_options(void **state)
{
	(void)state;
	const uint8_t p[] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7};
	struct tcp_opts o;
	assert_int_equal(parse(p, sizeof(p), true, &o), 0);
	assert_true(o.has_mss);
	assert_int_equal(o.mss, 1460);
	assert_true(o.sack_ok);
	assert_true(o.has_ts);
	assert_int_equal(o.ts_val, 1);
	assert_int_equal(o.ts_ecr, 0);
	assert_true(o.has_wscale);
	assert_int_equal(o.wscale, 7);
	/* Not a SYN: MSS, WS and SACK-permitted do not count, timestamps do. */
	assert_int_equal(parse(p, sizeof(p), false, &o), 0);
	assert_false(o.has_mss || o.sack_ok || o.has_wscale);
	assert_true(o.has_ts);
}

static void test_bad_lengths(void **state)
{
	(void)state;
	struct tcp_opts o;
	const uint8_t len0[] = {2, 0, 0, 0};
	const uint8_t len1[] = {1, 1, 30, 1};
	const uint8_t past_end[] = {2, 4, 0x05};
	const uint8_t unknown_past[] = {1, 99, 6, 0, 0};
	const uint8_t kind_only[] = {1, 1, 1, 2};
	const uint8_t mss3[] = {2, 3, 5, 1};
	const uint8_t mss5[] = {2, 5, 5, 1, 0, 1, 1, 1};
	const uint8_t ws2[] = {3, 2, 1, 1};
	const uint8_t ws4[] = {3, 4, 7, 0};
	const uint8_t sackp3[] = {4, 3, 0, 1};
	const uint8_t ts8[] = {8, 8, 0, 0, 0, 1, 0, 0};
	const uint8_t ts12[] = {8, 12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
	const uint8_t sack9[] = {5, 9, 0, 0, 0, 1, 0, 0, 0, 2};
	const uint8_t sack2[] = {5, 2, 1, 1};
	const uint8_t sack11[] = {5, 11, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0};
	struct { const uint8_t *p; size_t n; bool syn; } bad[] = {
		{len0, sizeof(len0), true}, {len1, sizeof(len1), false},
		{past_end, sizeof(past_end), true}, {unknown_past, sizeof(unknown_past), false},
		{kind_only, sizeof(kind_only), false},
		{mss3, sizeof(mss3), true}, {mss5, sizeof(mss5), true}, {mss3, sizeof(mss3), false},
		{ws2, sizeof(ws2), true}, {ws4, sizeof(ws4), true}, {sackp3, sizeof(sackp3), true},
		{ts8, sizeof(ts8), false}, {ts12, sizeof(ts12), false},
		{sack9, sizeof(sack9), false}, {sack2, sizeof(sack2), false},
		{sack11, sizeof(sack11), false},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(parse(bad[i].p, bad[i].n, bad[i].syn, &o), -EINVAL);
	}
	/* More than 40 octets cannot come from a TCP header. */
	uint8_t big[41];
	memset(big, 1, sizeof(big));
	assert_int_equal(parse(big, sizeof(big), false, &o), -EINVAL);
}

static void test_partial_result_kept(void **state)
{
	(void)state;
	/* MSS parses, then a bad option: the MSS stays visible for the caller's decision. */
	const uint8_t p[] = {2, 4, 0x02, 0x18, 3, 9, 0, 0};
	struct tcp_opts o;
	assert_int_equal(parse(p, sizeof(p), true, &o), -EINVAL);
	assert_true(o.has_mss);
	assert_int_equal(o.mss, 536);
}

static void test_unknown_skipped(void **state)
{
	(void)state;
	/* Kind 30 (MPTCP) of length 6 and kind 254 (experimental) of length 2, then a TS. */
	const uint8_t p[] = {30, 6, 1, 2, 3, 4, 254, 2, 1, 1, 8, 10,
			     0, 0, 0, 5, 0, 0, 0, 6};
	struct tcp_opts o;
	assert_int_equal(parse(p, sizeof(p), false, &o), 0);
	assert_true(o.has_ts);
	assert_int_equal(o.ts_val, 5);
	assert_int_equal(o.ts_ecr, 6);
}

static void test_sack_blocks(void **state)
{
	(void)state;
	uint8_t p[40] = {1, 1, 5, 34};
	for (unsigned i = 0; i < 8; i++) {
		uint32_t v = 1000u * (i + 1);
		p[4 + 4 * i] = (uint8_t)(v >> 24);
		p[5 + 4 * i] = (uint8_t)(v >> 16);
		p[6 + 4 * i] = (uint8_t)(v >> 8);
		p[7 + 4 * i] = (uint8_t)v;
	}
	struct tcp_opts o;
	assert_int_equal(parse(p, 36, false, &o), 0);
	assert_int_equal(o.nsack, 4);
	assert_int_equal(o.sack[0].start, 1000);
	assert_int_equal(o.sack[0].end, 2000);
	assert_int_equal(o.sack[3].end, 8000);
	/* On a SYN the blocks mean nothing and are ignored (length still checked). */
	assert_int_equal(parse(p, 36, true, &o), 0);
	assert_int_equal(o.nsack, 0);
	/* Five blocks (42 octets) cannot fit; length 42 would also run past a 40 area. */
	p[3] = 42;
	assert_int_equal(parse(p, 40, false, &o), -EINVAL);
}

static void test_build_syn_linux_layout(void **state)
{
	(void)state;
	struct tcp_opt_out in = {
		.mss = true, .mss_val = 1460, .sack_ok = true, .ts = true, .ts_val = 0x01020304,
		.ts_ecr = 0, .wscale = true, .wscale_val = 7,
	};
	uint8_t out[TCP_OPT_MAX_LEN];
	size_t n = tcp_opt_build(&in, out);
	const uint8_t want[] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0,
				1, 3, 3, 7};
	assert_int_equal(n, sizeof(want));
	assert_int_equal(tcp_opt_len(&in), n);
	assert_memory_equal(out, want, sizeof(want));

	/* Without timestamps: NOP NOP SACK-permitted. */
	in.ts = false;
	n = tcp_opt_build(&in, out);
	const uint8_t want2[] = {2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7};
	assert_int_equal(n, sizeof(want2));
	assert_memory_equal(out, want2, sizeof(want2));
	/* Timestamps without SACK: NOP NOP TS. */
	in.ts = true;
	in.sack_ok = false;
	in.wscale = false;
	in.mss = false;
	n = tcp_opt_build(&in, out);
	assert_int_equal(n, 12);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 1);
	assert_int_equal(out[2], 8);
}

static void roundtrip(const struct tcp_opt_out *in, bool syn, struct tcp_opts *o)
{
	uint8_t out[TCP_OPT_MAX_LEN];
	size_t n = tcp_opt_build(in, out);
	assert_int_equal(n % 4, 0);
	assert_true(n <= TCP_OPT_MAX_LEN);
	assert_int_equal(n, tcp_opt_len(in));
	assert_int_equal(tcp_opt_parse(out, n, syn, o), 0);
}

static void test_roundtrip_sack(void **state)
{
	(void)state;
	struct tcp_sack_block blk[5] = {
		{100, 200}, {300, 400}, {500, 600}, {700, 800}, {900, 1000},
	};
	struct tcp_opt_out in = {.ts = true, .ts_val = 77, .ts_ecr = 88, .nsack = 5, .sack = blk};
	struct tcp_opts o;
	roundtrip(&in, false, &o);
	/* With timestamps only three blocks fit in 40 octets. */
	assert_int_equal(o.nsack, 3);
	assert_int_equal(o.ts_val, 77);
	assert_int_equal(o.ts_ecr, 88);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(o.sack[i].start, blk[i].start);
		assert_int_equal(o.sack[i].end, blk[i].end);
	}
	in.ts = false;
	roundtrip(&in, false, &o);
	assert_int_equal(o.nsack, 4);
	assert_false(o.has_ts);
	in.nsack = 1;
	roundtrip(&in, false, &o);
	assert_int_equal(o.nsack, 1);
	assert_int_equal(o.sack[0].end, 200);
}

static void test_roundtrip_syn(void **state)
{
	(void)state;
	for (unsigned mask = 0; mask < 16; mask++) {
		struct tcp_opt_out in = {
			.mss = mask & 1, .mss_val = 8960, .sack_ok = mask & 2, .ts = mask & 4,
			.ts_val = 0xdeadbeef, .ts_ecr = 0x12345678, .wscale = mask & 8,
			.wscale_val = 14,
		};
		struct tcp_opts o;
		roundtrip(&in, true, &o);
		assert_int_equal(o.has_mss, in.mss);
		assert_int_equal(o.sack_ok, in.sack_ok);
		assert_int_equal(o.has_ts, in.ts);
		assert_int_equal(o.has_wscale, in.wscale);
		if (in.mss)
			assert_int_equal(o.mss, 8960);
		if (in.ts)
			assert_int_equal(o.ts_val, 0xdeadbeef);
		if (in.wscale)
			assert_int_equal(o.wscale, 14);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_and_padding),
		cmocka_unit_test(test_syn_options),
		cmocka_unit_test(test_bad_lengths),
		cmocka_unit_test(test_partial_result_kept),
		cmocka_unit_test(test_unknown_skipped),
		cmocka_unit_test(test_sack_blocks),
		cmocka_unit_test(test_build_syn_linux_layout),
		cmocka_unit_test(test_roundtrip_sack),
		cmocka_unit_test(test_roundtrip_syn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
