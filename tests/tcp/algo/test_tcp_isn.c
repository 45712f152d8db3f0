/* RFC 6528 ISNs: the clock component advances every 4 us, the hash differs per 4-tuple and
 * per key, a fixed key is reproducible; RFC 6056 port offsets likewise. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tcp_isn.h"

static const uint8_t KEY[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static uint32_t A, B;

static void test_time_component(void **state)
{
	(void)state;
	struct tcp_isn g;
	tcp_isn_init(&g, KEY);
	uint16_t p1 = htons(40000), p2 = htons(5000);
	uint32_t i0 = tcp_isn_next(&g, A, p1, B, p2, 1000000000ull);
	/* Same tuple: M advances by one every 4 us. */
	assert_int_equal(tcp_isn_next(&g, A, p1, B, p2, 1000000000ull + 4000), i0 + 1);
	assert_int_equal(tcp_isn_next(&g, A, p1, B, p2, 1000000000ull + 3999), i0);
	assert_int_equal(tcp_isn_next(&g, A, p1, B, p2, 1000000000ull + 4000000), i0 + 1000);
	/* Wraps after 2^32 * 4 us (about 4.77 hours) without trouble. */
	uint64_t wrap = 4000ull << 32;
	assert_int_equal(tcp_isn_next(&g, A, p1, B, p2, 1000000000ull + wrap), i0);
}

static void test_per_tuple_and_key(void **state)
{
	(void)state;
	struct tcp_isn g, h;
	tcp_isn_init(&g, KEY);
	uint64_t t = 77777;
	uint32_t base = tcp_isn_next(&g, A, htons(1), B, htons(2), t);
	assert_int_not_equal(tcp_isn_next(&g, B, htons(1), B, htons(2), t), base);
	assert_int_not_equal(tcp_isn_next(&g, A, htons(3), B, htons(2), t), base);
	assert_int_not_equal(tcp_isn_next(&g, A, htons(1), A, htons(2), t), base);
	assert_int_not_equal(tcp_isn_next(&g, A, htons(1), B, htons(4), t), base);
	/* Swapping the ends gives a different number (the order of the tuple matters). */
	assert_int_not_equal(tcp_isn_next(&g, B, htons(2), A, htons(1), t), base);
	/* A fixed key is reproducible across instances; another key differs. */
	tcp_isn_init(&h, KEY);
	assert_int_equal(tcp_isn_next(&h, A, htons(1), B, htons(2), t), base);
	uint8_t k2[16];
	memcpy(k2, KEY, 16);
	k2[15] ^= 1;
	tcp_isn_init(&h, k2);
	assert_int_not_equal(tcp_isn_next(&h, A, htons(1), B, htons(2), t), base);
}

static void test_random_key(void **state)
{
	(void)state;
	struct tcp_isn g, h;
	uint8_t zero[16] = {0};
	tcp_isn_init(&g, NULL);
	tcp_isn_init(&h, zero);
	assert_memory_not_equal(g.key, zero, 16);
	assert_memory_not_equal(h.key, zero, 16);
	assert_memory_not_equal(g.key, h.key, 16);
}

static void test_distribution(void **state)
{
	(void)state;
	/* Consecutive source ports must not give nearby ISNs (the point of a keyed hash). */
	struct tcp_isn g;
	tcp_isn_init(&g, KEY);
	unsigned high_bits_set = 0, close = 0;
	uint32_t prev = tcp_isn_next(&g, A, htons(1024), B, htons(80), 0);
	for (uint16_t p = 1025; p < 1025 + 1000; p++) {
		uint32_t v = tcp_isn_next(&g, A, htons(p), B, htons(80), 0);
		high_bits_set += v >> 31;
		uint32_t d = v - prev;
		if (d < 65536 || d > 0u - 65536)
			close++;
		prev = v;
	}
	assert_true(high_bits_set > 400 && high_bits_set < 600);
	assert_true(close < 5);
}

static void test_port_offset(void **state)
{
	(void)state;
	struct tcp_isn g, h;
	tcp_isn_init(&g, KEY);
	tcp_isn_init(&h, KEY);
	uint32_t o = tcp_isn_port_offset(&g, A, B, htons(80));
	assert_int_equal(tcp_isn_port_offset(&h, A, B, htons(80)), o);
	assert_int_not_equal(tcp_isn_port_offset(&g, A, B, htons(81)), o);
	assert_int_not_equal(tcp_isn_port_offset(&g, A, A, htons(80)), o);
	/* Not the ISN function's value for the same inputs (separate domains). */
	assert_int_not_equal(tcp_isn_next(&g, A, 0, B, htons(80), 0), o);
}

int main(void)
{
	A = inet_addr("198.51.100.1");
	B = inet_addr("198.51.100.2");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_component),
		cmocka_unit_test(test_per_tuple_and_key),
		cmocka_unit_test(test_random_key),
		cmocka_unit_test(test_distribution),
		cmocka_unit_test(test_port_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
