/* NewReno (RFC 5681, 6582, byte counting per RFC 3465): initial window, slow start, avoidance,
 * fast recovery with partial and full ACKs, RTO, idle restart, MSS change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp_cc.h"

#define SMSS 1000u

static struct tcp_cc cc;

static int setup(void **state)
{
	(void)state;
	tcp_cc_init(&cc, TCP_CC_NEWRENO, SMSS);
	return 0;
}

static void test_initial_window(void **state)
{
	(void)state;
	assert_int_equal(cc.cwnd, 4000);          /* min(4 SMSS, max(2 SMSS, 4380)) */
	assert_true(cc.ssthresh >= 0x7fffffffu);  /* arbitrarily high */
	struct tcp_cc c2;
	tcp_cc_init(&c2, TCP_CC_NEWRENO, 1460);
	assert_int_equal(c2.cwnd, 4380);
	tcp_cc_init(&c2, TCP_CC_NEWRENO, 2500);
	assert_int_equal(c2.cwnd, 5000);
}

static void test_slow_start(void **state)
{
	(void)state;
	tcp_cc_on_ack(&cc, SMSS, 0, 1000, cc.cwnd);
	assert_int_equal(cc.cwnd, 5000);
	/* A stretch ACK grows cwnd by at most L = 2 SMSS (RFC 3465 2.2). */
	tcp_cc_on_ack(&cc, 4 * SMSS, 0, 1000, cc.cwnd);
	assert_int_equal(cc.cwnd, 7000);
	/* Not using the window (less than half in flight): no growth. */
	tcp_cc_on_ack(&cc, SMSS, 0, 1000, 3000);
	assert_int_equal(cc.cwnd, 7000);
	/* Crossing ssthresh stops at ssthresh; the rest counts towards avoidance. */
	cc.ssthresh = 8000;
	tcp_cc_on_ack(&cc, 2 * SMSS, 0, 1000, cc.cwnd);
	assert_int_equal(cc.cwnd, 8000);
	assert_int_equal(cc.bytes_acked, 1000);
}

static void test_avoidance_abc(void **state)
{
	(void)state;
	cc.cwnd = cc.ssthresh = 10000;
	/* One SMSS per cwnd worth of acked octets, however the ACKs are sized. */
	for (int i = 0; i < 19; i++)
		tcp_cc_on_ack(&cc, SMSS / 2, 0, 1000, cc.cwnd);
	assert_int_equal(cc.cwnd, 10000);
	tcp_cc_on_ack(&cc, SMSS / 2, 0, 1000, cc.cwnd);
	assert_int_equal(cc.cwnd, 11000);
	assert_int_equal(cc.bytes_acked, 0);
	tcp_cc_on_ack(&cc, 11000, 0, 1000, cc.cwnd);
	assert_int_equal(cc.cwnd, 12000);
}

static void test_fast_recovery(void **state)
{
	(void)state;
	cc.cwnd = 20000;
	cc.ssthresh = 15000;
	/* Third duplicate ACK: ssthresh = max(flight/2, 2 SMSS), cwnd = ssthresh + 3 SMSS. */
	tcp_cc_enter_recovery(&cc, 20000, 50000, 0);
	assert_true(cc.in_recovery);
	assert_int_equal(cc.ssthresh, 10000);
	assert_int_equal(cc.cwnd, 13000);
	assert_int_equal(cc.recover, 50000);
	tcp_cc_dupack_in_recovery(&cc);
	tcp_cc_dupack_in_recovery(&cc);
	assert_int_equal(cc.cwnd, 15000);
	/* Partial ACK of 5 SMSS: deflate by 5000, add back one SMSS; still recovering. */
	assert_false(tcp_cc_recovery_ack(&cc, 35000, 5000, 15000));
	assert_int_equal(cc.cwnd, 11000);
	assert_true(cc.in_recovery);
	/* Partial ACK below one SMSS: no add-back. */
	assert_false(tcp_cc_recovery_ack(&cc, 35500, 500, 14500));
	assert_int_equal(cc.cwnd, 10500);
	/* Full ACK (covers recover): cwnd = min(ssthresh, max(flight, SMSS) + SMSS). */
	assert_true(tcp_cc_recovery_ack(&cc, 50000, 14500, 0));
	assert_false(cc.in_recovery);
	assert_int_equal(cc.cwnd, 2000);
}

static void test_full_ack_with_flight(void **state)
{
	(void)state;
	cc.cwnd = 20000;
	tcp_cc_enter_recovery(&cc, 20000, 0xfffffff0u, 0);
	/* recover across the wrap: an ACK at 0x10 is beyond it. */
	assert_true(tcp_cc_recovery_ack(&cc, 0x10u, 1000, 30000));
	assert_int_equal(cc.cwnd, 10000); /* = ssthresh */
}

static void test_ssthresh_floor(void **state)
{
	(void)state;
	tcp_cc_enter_recovery(&cc, 1000, 1000, 0);
	assert_int_equal(cc.ssthresh, 2 * SMSS);
	assert_int_equal(cc.cwnd, 5 * SMSS);
}

static void test_rto(void **state)
{
	(void)state;
	cc.cwnd = 30000;
	tcp_cc_on_rto(&cc, 24000, 99000, 0);
	assert_int_equal(cc.ssthresh, 12000);
	assert_int_equal(cc.cwnd, SMSS); /* loss window */
	assert_int_equal(cc.recover, 99000);
	/* The retransmission times out again: ssthresh is not cut by the tiny flight. */
	tcp_cc_on_rto(&cc, SMSS, 99000, 0);
	assert_int_equal(cc.ssthresh, 12000);
	/* An RTO during fast recovery ends it. */
	cc.cwnd = 30000;
	tcp_cc_enter_recovery(&cc, 30000, 120000, 0);
	tcp_cc_on_rto(&cc, 30000, 120000, 0);
	assert_false(cc.in_recovery);
	assert_int_equal(cc.cwnd, SMSS);
	/* Slow start again up to ssthresh. */
	tcp_cc_on_ack(&cc, SMSS, 0, 1000, cc.cwnd);
	assert_int_equal(cc.cwnd, 2 * SMSS);
}

static void test_idle_and_smss(void **state)
{
	(void)state;
	cc.cwnd = 50000;
	tcp_cc_after_idle(&cc);
	assert_int_equal(cc.cwnd, 4000);
	tcp_cc_init(&cc, TCP_CC_NEWRENO, 536);
	assert_int_equal(cc.cwnd, 2144);
	tcp_cc_set_smss(&cc, 1460);
	assert_int_equal(cc.cwnd, 4380);
	cc.cwnd = 30000;
	tcp_cc_set_smss(&cc, 1000);
	assert_int_equal(cc.cwnd, 30000);
	assert_int_equal(cc.smss, 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_initial_window, setup),
		cmocka_unit_test_setup(test_slow_start, setup),
		cmocka_unit_test_setup(test_avoidance_abc, setup),
		cmocka_unit_test_setup(test_fast_recovery, setup),
		cmocka_unit_test_setup(test_full_ack_with_flight, setup),
		cmocka_unit_test_setup(test_ssthresh_floor, setup),
		cmocka_unit_test_setup(test_rto, setup),
		cmocka_unit_test_setup(test_idle_and_smss, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
