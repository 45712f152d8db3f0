/* Code written for Intel's, M-VIA's and Giganet cLAN's vipl.h (tests/vipl/compat/, compiled with
 * -Wpedantic -Werror against ours) runs on softrnic: each style's exchange, data and status
 * words checked (docs/vipl.md "One header for three stacks"). */
#include "tv.h"
#include "compat/compat.h"

static void intel_style(void **state)
{
	(void)state;
	assert_int_equal(compat_intel_run(), 0);
}

static void mvia_style(void **state)
{
	(void)state;
	assert_int_equal(compat_mvia_run(), 0);
}

static void clan_style(void **state)
{
	(void)state;
	assert_int_equal(compat_clan_run(), 0);
}

int main(void)
{
	tv_env();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intel_style),
		cmocka_unit_test(mvia_style),
		cmocka_unit_test(clan_style),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
