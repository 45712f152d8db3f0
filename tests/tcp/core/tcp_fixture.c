#include "tcp_fixture.h"

#include <stdio.h>

struct tcp_pair P;
static unsigned free_at_start;

int pair_fixture_setup(void **state)
{
	(void)state;
	free_at_start = pair_pool_free();
	pair_init(&P, NULL, NULL, 5000000000ull);
	return 0;
}

int pair_fixture_teardown(void **state)
{
	(void)state;
	assert_int_equal(P.runaway, 0); /* no endless exchange at a fixed time */
	P.filter = NULL; /* its argument lived in the test function */
	pair_fini(&P);
	assert_int_equal(pair_pool_free(), free_at_start); /* no mbuf leaked */
	return 0;
}

void pair_established(struct pair_ep *a, struct pair_ep *b)
{
	pair_ep_init(a);
	pair_ep_init(b);
	pair_connect(&P, 4791, a, b);
	assert_true(a->connected);
	assert_non_null(b->c);
	assert_int_equal(tcp_conn_state(a->c), TCP_ESTABLISHED);
	assert_int_equal(tcp_conn_state(b->c), TCP_ESTABLISHED);
}

int pair_run_tests(const char *name, const struct CMUnitTest *tests, size_t n)
{
	if (pair_eal_init(name)) {
		fprintf(stderr, "%s: EAL init failed\n", name);
		return 1;
	}
	return _cmocka_run_group_tests(name, tests, n, NULL, NULL);
}
