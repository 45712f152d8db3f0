/* RFC 6298 RTO arithmetic: first and later samples, backoff and its cap, clamps, the 3 s
 * fallback after a SYN timeout, and Karn's rule as callers apply it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp_rto.h"

#define MS 1000u
#define S 1000000u

static void test_initial(void **state)
{
	(void)state;
	struct tcp_rto r;
	tcp_rto_init(&r, 1 * S, 200 * MS, 120 * S);
	assert_false(r.have_sample);
	assert_int_equal(tcp_rto_get(&r), 1 * S); /* 2.1 */
}

static void test_first_and_later_samples(void **state)
{
	(void)state;
	struct tcp_rto r;
	tcp_rto_init(&r, 1 * S, 200 * MS, 120 * S);
	tcp_rto_sample(&r, 100 * MS);
	/* 2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR */
	assert_int_equal(r.srtt_us, 100 * MS);
	assert_int_equal(r.rttvar_us, 50 * MS);
	assert_int_equal(tcp_rto_get(&r), 300 * MS);
	tcp_rto_sample(&r, 200 * MS);
	/* 2.3: RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 */
	assert_int_equal(r.rttvar_us, 62500);
	assert_int_equal(r.srtt_us, 112500);
	assert_int_equal(tcp_rto_get(&r), 112500 + 4 * 62500);
	/* A steady RTT makes RTTVAR decay and the RTO converge towards SRTT (then the min). */
	for (int i = 0; i < 200; i++)
		tcp_rto_sample(&r, 50 * MS);
	assert_true(r.srtt_us >= 50 * MS - 10 && r.srtt_us <= 50 * MS + 10);
	assert_int_equal(tcp_rto_get(&r), 200 * MS); /* min clamp */
}

static void test_min_max_clamps(void **state)
{
	(void)state;
	struct tcp_rto r;
	tcp_rto_init(&r, 1 * S, 1 * S, 60 * S);
	tcp_rto_sample(&r, 1 * MS);
	assert_int_equal(tcp_rto_get(&r), 1 * S); /* 2.4: at least the minimum */
	tcp_rto_sample(&r, 100 * S);
	assert_int_equal(tcp_rto_get(&r), 60 * S); /* 2.5: at most the maximum */
	/* The granularity term: a zero-variance sample still adds G. */
	tcp_rto_init(&r, 1 * S, 0, 60 * S);
	tcp_rto_sample(&r, 1);
	assert_int_equal(r.rttvar_us, 0);
	assert_int_equal(tcp_rto_get(&r), 2);
}

static void test_backoff_cap(void **state)
{
	(void)state;
	struct tcp_rto r;
	tcp_rto_init(&r, 1 * S, 200 * MS, 60 * S);
	tcp_rto_backoff(&r);
	assert_int_equal(tcp_rto_get(&r), 2 * S); /* 5.5 */
	tcp_rto_backoff(&r);
	assert_int_equal(tcp_rto_get(&r), 4 * S);
	for (int i = 0; i < 100; i++)
		tcp_rto_backoff(&r);
	assert_int_equal(tcp_rto_get(&r), 60 * S);
	assert_true(r.backoff < 32);
	/* A new (Karn-valid) sample recomputes the RTO and drops the backoff. */
	tcp_rto_sample(&r, 100 * MS);
	assert_int_equal(r.backoff, 0);
	assert_int_equal(tcp_rto_get(&r), 300 * MS);
}

/* Karn's rule is the caller's: a sender that retransmitted takes no sample, so the backed-off
 * RTO stays until a segment sent once is acknowledged. */
static void test_karn_via_caller(void **state)
{
	(void)state;
	struct tcp_rto r;
	tcp_rto_init(&r, 1 * S, 200 * MS, 60 * S);
	tcp_rto_sample(&r, 100 * MS);
	bool retransmitted = false;
	/* timeout: back off, retransmit */
	tcp_rto_backoff(&r);
	retransmitted = true;
	uint32_t ambiguous_rtt = 900 * MS;
	if (!retransmitted)
		tcp_rto_sample(&r, ambiguous_rtt);
	assert_int_equal(tcp_rto_get(&r), 600 * MS);
	assert_int_equal(r.srtt_us, 100 * MS);
}

static void test_syn_timeout_reset(void **state)
{
	(void)state;
	struct tcp_rto r;
	tcp_rto_init(&r, 1 * S, 200 * MS, 60 * S);
	tcp_rto_backoff(&r); /* the SYN timed out */
	tcp_rto_syn_timeout_reset(&r);
	assert_int_equal(tcp_rto_get(&r), 3 * S); /* 5.7 */
	/* With a sample (e.g. from the handshake's timestamps) the measured RTO stays. */
	tcp_rto_init(&r, 1 * S, 200 * MS, 60 * S);
	tcp_rto_sample(&r, 10 * MS);
	tcp_rto_syn_timeout_reset(&r);
	assert_int_equal(tcp_rto_get(&r), 200 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_initial),
		cmocka_unit_test(test_first_and_later_samples),
		cmocka_unit_test(test_min_max_clamps),
		cmocka_unit_test(test_backoff_cap),
		cmocka_unit_test(test_karn_via_caller),
		cmocka_unit_test(test_syn_timeout_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
