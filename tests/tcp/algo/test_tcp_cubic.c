/* CUBIC (RFC 9438) behind the tcp_cc functions: beta 0.7, K, concave then convex growth,
 * fast convergence, the Reno-friendly region, slow start unchanged. ACK clocking is
 * simulated: one RTT delivers a window of SMSS-sized ACKs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp_cc.h"

#define SMSS 1000u
#define MS 1000u

static struct tcp_cc cc;

/* Put cc in avoidance after a loss at a window of w_segs segments. */
static void loss_at(uint32_t w_segs)
{
	cc.cwnd = w_segs * SMSS;
	tcp_cc_enter_recovery(&cc, cc.cwnd, 1000000, 0);
	/* full ACK with a large flight: cwnd = ssthresh */
	assert_true(tcp_cc_recovery_ack(&cc, 1000000, SMSS, 10 * w_segs * SMSS));
}

/* Deliver ACKs for `rounds` round trips of rtt_us starting at *now; returns cwnd. */
static uint32_t clock_acks(uint64_t *now, unsigned rounds, uint32_t rtt_us)
{
	for (unsigned r = 0; r < rounds; r++) {
		uint32_t acks = cc.cwnd / SMSS;
		for (uint32_t a = 0; a < acks; a++)
			tcp_cc_on_ack(&cc, SMSS, *now + (uint64_t)rtt_us * a / acks, rtt_us,
				      cc.cwnd);
		*now += rtt_us;
	}
	return cc.cwnd;
}

static int setup(void **state)
{
	(void)state;
	tcp_cc_init(&cc, TCP_CC_CUBIC, SMSS);
	return 0;
}

static void test_beta_and_k(void **state)
{
	(void)state;
	cc.cwnd = 100 * SMSS;
	tcp_cc_enter_recovery(&cc, 100 * SMSS, 5000, 0);
	assert_int_equal(cc.ssthresh, 70 * SMSS);           /* beta 0.7 */
	assert_int_equal(cc.cwnd, 73 * SMSS);               /* + 3 SMSS (RFC 5681) */
	assert_int_equal(cc.w_max, 100 * 1024);             /* segments x 1024 */
	assert_true(tcp_cc_recovery_ack(&cc, 5000, SMSS, 1000 * SMSS));
	assert_int_equal(cc.cwnd, 70 * SMSS);
	/* The first avoidance ACK starts the epoch: K = cbrt((100 - 70) / 0.4) = 4.217 s. */
	tcp_cc_on_ack(&cc, SMSS, 10 * MS, 100 * MS, cc.cwnd);
	assert_true(cc.k_ms >= 4210 && cc.k_ms <= 4220);
	assert_int_equal(cc.epoch_start_us, 10 * MS);
}

static void test_concave_then_convex(void **state)
{
	(void)state;
	loss_at(100);
	uint64_t now = 1000;
	const uint32_t rtt = 100 * MS;
	/* Growth per second shrinks on the way up to W_max (concave) ... */
	uint32_t w1 = clock_acks(&now, 10, rtt);
	uint32_t w2 = clock_acks(&now, 10, rtt);
	uint32_t w3 = clock_acks(&now, 10, rtt);
	assert_true(w1 > 70 * SMSS);
	assert_true(w2 - w1 < w1 - 70 * SMSS);
	assert_true(w3 - w2 < w2 - w1);
	/* ... plateaus near W_max around t = K = 4.2 s ... */
	uint32_t wk = clock_acks(&now, 12, rtt);
	assert_true(wk > 97 * SMSS && wk < 103 * SMSS);
	/* ... and accelerates beyond it (convex). */
	uint32_t c1 = clock_acks(&now, 10, rtt);
	uint32_t c2 = clock_acks(&now, 10, rtt);
	uint32_t c3 = clock_acks(&now, 10, rtt);
	assert_true(c1 > wk);
	assert_true(c3 - c2 > c2 - c1);
	/* W_cubic(7.2 s) = 0.4 (7.2 - 4.2)^3 + 100 = 110.8 segments; allow the RTT lookahead. */
	assert_true(c3 > 105 * SMSS && c3 < 125 * SMSS);
}

static void test_growth_cap(void **state)
{
	(void)state;
	/* Far in the convex region the target is capped at 1.5 cwnd per RTT. */
	loss_at(20);
	uint64_t now = 1000;
	uint32_t before = clock_acks(&now, 1, 100 * MS);
	now += 60ull * 1000 * MS; /* a minute later (no idle restart by the caller) */
	uint32_t after = clock_acks(&now, 1, 100 * MS);
	assert_true(after <= before + before / 2 + SMSS);
	assert_true(after > before);
}

static void test_fast_convergence(void **state)
{
	(void)state;
	loss_at(100);
	/* A second loss below the previous W_max: W_max = cwnd (1 + 0.7) / 2. */
	cc.cwnd = 80 * SMSS;
	tcp_cc_enter_recovery(&cc, 80 * SMSS, 2000000, 0);
	assert_int_equal(cc.w_max, 68 * 1024);
	assert_int_equal(cc.ssthresh, 56 * SMSS);
	/* A loss above W_max: W_max = cwnd. */
	cc.cwnd = 90 * SMSS;
	tcp_cc_enter_recovery(&cc, 90 * SMSS, 3000000, 0);
	assert_int_equal(cc.w_max, 90 * 1024);
}

static void test_reno_friendly(void **state)
{
	(void)state;
	/* A 1 ms RTT: standard TCP's estimate grows far faster than the cubic curve near its
	 * plateau, so cwnd follows W_est (RFC 9438 4.3) instead of staying near W_max. */
	loss_at(100);
	uint64_t now = 1000;
	uint32_t w = clock_acks(&now, 1000, 1 * MS); /* one second */
	/* cubic alone: W(1 s) = 0.4 (1 - 4.217)^3 + 100 = 86.7 segments */
	assert_true(w > 150 * SMSS);
	/* Past cwnd_prior alpha is 1: about one SMSS per RTT. */
	uint32_t a = clock_acks(&now, 100, 1 * MS);
	uint32_t b = clock_acks(&now, 100, 1 * MS);
	assert_true(b - a >= 95 * SMSS && b - a <= 105 * SMSS);
}

static void test_slow_start_and_rto(void **state)
{
	(void)state;
	tcp_cc_on_ack(&cc, SMSS, 0, 1000, cc.cwnd);
	assert_int_equal(cc.cwnd, 5 * SMSS);
	cc.cwnd = 50 * SMSS;
	tcp_cc_on_rto(&cc, 50 * SMSS, 777, 0);
	assert_int_equal(cc.cwnd, SMSS);
	assert_int_equal(cc.ssthresh, 35 * SMSS);
	assert_int_equal(cc.w_max, 50 * 1024);
	/* after idle the epoch restarts */
	cc.epoch_start_us = 5;
	tcp_cc_after_idle(&cc);
	assert_int_equal(cc.epoch_start_us, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_beta_and_k, setup),
		cmocka_unit_test_setup(test_concave_then_convex, setup),
		cmocka_unit_test_setup(test_growth_cap, setup),
		cmocka_unit_test_setup(test_fast_convergence, setup),
		cmocka_unit_test_setup(test_reno_friendly, setup),
		cmocka_unit_test_setup(test_slow_start_and_rto, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
