/* Sequence-number comparisons (tcp/tcp_seq.h) across the 2^32 wrap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp_seq.h"

static void test_plain(void **state)
{
	(void)state;
	assert_true(seq_lt(1, 2));
	assert_false(seq_lt(2, 2));
	assert_true(seq_leq(2, 2));
	assert_true(seq_gt(3, 2));
	assert_true(seq_geq(3, 3));
	assert_false(seq_gt(2, 3));
}

static void test_wrap(void **state)
{
	(void)state;
	/* 0xfffffff0 comes before 0x10 once the space wrapped. */
	assert_true(seq_lt(0xfffffff0u, 0x10u));
	assert_true(seq_gt(0x10u, 0xfffffff0u));
	assert_true(seq_leq(0xffffffffu, 0u));
	assert_true(seq_geq(0u, 0xffffffffu));
	assert_int_equal(seq_max(0xfffffff0u, 0x10u), 0x10u);
	assert_int_equal(seq_min(0xfffffff0u, 0x10u), 0xfffffff0u);
	/* Just below half the space apart still orders correctly, in both directions. */
	uint32_t a = 0x7ffffff0u;
	assert_true(seq_lt(a, a + 0x7fffffffu));
	assert_true(seq_gt(a + 0x7fffffffu, a));
	/* Exactly 2^31 apart is ambiguous: both read "less than" from the sign bit; the engine
	 * never lets windows reach that distance. */
	assert_true(seq_lt(0u, 0x80000000u) == seq_lt(0x80000000u, 0u));
}

static void test_in(void **state)
{
	(void)state;
	assert_true(seq_in(0xfffffffeu, 0xfffffff0u, 0x10u));
	assert_true(seq_in(5u, 0xfffffff0u, 0x10u));
	assert_true(seq_in(0xfffffff0u, 0xfffffff0u, 0x10u));  /* lo included */
	assert_false(seq_in(0x10u, 0xfffffff0u, 0x10u));       /* hi excluded */
	assert_false(seq_in(0xffffffefu, 0xfffffff0u, 0x10u));
	assert_false(seq_in(7u, 7u, 7u));                       /* empty range */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_in),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
