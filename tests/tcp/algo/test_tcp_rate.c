/* Delivery rate estimation: a sample is the octets delivered since the newest delivered
 * segment's snapshot over the longer of its send and ACK intervals; an interval below the
 * minimum RTT is no sample; an idle start opens a fresh interval; application-limited marking
 * lasts until the flight of the moment is delivered; and on RACK's log a segment SACKed and
 * then acknowledged cumulatively counts once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp_rack.h"
#include "tcp_rate.h"

#define MSS 1000u

/* A fresh sampler, one segment sent at 0 after idle and delivered at 1000 us; its sample
 * taken with min_rtt_us. */
static void first_segment(struct tcp_rate *rt, uint32_t min_rtt_us, struct tcp_rate_sample *rs)
{
	struct tcp_rate_snap p;

	tcp_rate_init(rt);
	tcp_rate_sent(rt, true, 0, &p);
	tcp_rate_delivered(rt, &p, MSS, 0, false, 1000);
	tcp_rate_sample(rt, min_rtt_us, 1000, rs);
}

/* A fresh sampler, two segments sent at 0 (after idle) and 100 us. */
static void two_sent(struct tcp_rate *rt, struct tcp_rate_snap *p1, struct tcp_rate_snap *p2)
{
	tcp_rate_init(rt);
	tcp_rate_sent(rt, true, 0, p1);
	tcp_rate_sent(rt, false, 100, p2);
}

static void test_ack_interval(void **state)
{
	struct tcp_rate rt;
	struct tcp_rate_snap p1, p2;
	struct tcp_rate_sample rs;

	(void)state;
	two_sent(&rt, &p1, &p2);
	tcp_rate_delivered(&rt, &p1, MSS, 0, false, 1000);
	tcp_rate_sample(&rt, 0, 1000, &rs);
	assert_true(rs.valid);
	assert_int_equal(rs.delivered, MSS);
	assert_int_equal(rs.interval_us, 1000);
	assert_int_equal(rs.acked, MSS);
	assert_int_equal(rs.rtt_us, 1000);
	/* P2 left before anything was delivered: its sample spans both segments, from the
	 * start, over the ACK interval (1100 us), longer than the send interval (100 us) */
	tcp_rate_delivered(&rt, &p2, MSS, 100, false, 1100);
	tcp_rate_sample(&rt, 0, 1100, &rs);
	assert_true(rs.valid);
	assert_int_equal(rs.delivered, 2 * MSS);
	assert_int_equal(rs.interval_us, 1100);
	assert_int_equal(rs.prior_delivered, 0);
}

/* ACKs bunched after a long send interval: the send interval bounds the rate. */
static void test_send_interval_bounds_compressed_acks(void **state)
{
	struct tcp_rate rt;
	struct tcp_rate_snap p1, p2, p3, p4;
	struct tcp_rate_sample rs;

	(void)state;
	two_sent(&rt, &p1, &p2);
	tcp_rate_delivered(&rt, &p1, MSS, 0, false, 1000);
	tcp_rate_delivered(&rt, &p2, MSS, 100, false, 1100);
	tcp_rate_sample(&rt, 0, 1100, &rs);
	tcp_rate_sent(&rt, false, 2000, &p3);
	tcp_rate_sent(&rt, false, 9000, &p4);
	assert_int_equal(p4.delivered, 2 * MSS);
	assert_int_equal(p4.delivered_us, 1100);
	assert_int_equal(p4.first_sent_us, 100); /* P2's send time opened this interval */
	tcp_rate_delivered(&rt, &p3, MSS, 2000, false, 9500);
	tcp_rate_delivered(&rt, &p4, MSS, 9000, false, 9500);
	tcp_rate_sample(&rt, 0, 9500, &rs);
	assert_true(rs.valid);
	assert_int_equal(rs.delivered, 2 * MSS);
	assert_int_equal(rs.interval_us, 8900); /* 9000 - 100, not the ACK's 9500 - 1100 */
	assert_int_equal(rs.acked, 2 * MSS);
	assert_int_equal(rs.rtt_us, 500);   /* the newest original */
}

static void test_short_interval_is_no_sample(void **state)
{
	struct tcp_rate rt;
	struct tcp_rate_sample rs;

	(void)state;
	first_segment(&rt, 2000, &rs);
	assert_false(rs.valid);
	assert_int_equal(rs.acked, MSS); /* still counted as delivered */
	assert_int_equal(rt.delivered, MSS);
	/* an ACK that delivers nothing gives no sample either */
	tcp_rate_sample(&rt, 0, 1200, &rs);
	assert_false(rs.valid);
	assert_int_equal(rs.rtt_us, -1);
}

static void test_idle_restarts_interval(void **state)
{
	struct tcp_rate rt;
	struct tcp_rate_snap p;
	struct tcp_rate_sample rs;

	(void)state;
	first_segment(&rt, 0, &rs);
	assert_true(rs.valid);
	/* a second of silence, then one segment: its rate is over its own round trip */
	tcp_rate_sent(&rt, true, 1000000, &p);
	tcp_rate_delivered(&rt, &p, MSS, 1000000, false, 1001000);
	tcp_rate_sample(&rt, 0, 1001000, &rs);
	assert_true(rs.valid);
	assert_int_equal(rs.interval_us, 1000);
	assert_int_equal(rs.delivered, MSS);
}

static void test_app_limited_until_flight_delivered(void **state)
{
	struct tcp_rate rt;
	struct tcp_rate_snap p[4];
	struct tcp_rate_sample rs;

	(void)state;
	tcp_rate_init(&rt);
	tcp_rate_sent(&rt, true, 0, &p[0]);
	tcp_rate_sent(&rt, false, 10, &p[1]);
	tcp_rate_app_limited(&rt, 2 * MSS); /* two in flight and nothing more to send */
	tcp_rate_sent(&rt, false, 20, &p[2]);
	assert_false(p[1].app_limited);
	assert_true(p[2].app_limited);
	tcp_rate_delivered(&rt, &p[0], MSS, 0, false, 1000);
	tcp_rate_sample(&rt, 0, 1000, &rs);
	assert_false(rs.app_limited);
	tcp_rate_delivered(&rt, &p[1], MSS, 10, false, 1010);
	tcp_rate_sample(&rt, 0, 1010, &rs);
	/* the mark (2 segments) is reached, not passed: what leaves now is still limited */
	tcp_rate_sent(&rt, false, 1010, &p[3]);
	assert_true(p[3].app_limited);
	tcp_rate_delivered(&rt, &p[2], MSS, 20, false, 1020);
	tcp_rate_sample(&rt, 0, 1020, &rs);
	assert_true(rs.app_limited);
	assert_int_equal(rt.app_limited, 0); /* passed: the next segments are not limited */
	tcp_rate_sent(&rt, false, 1030, &p[3]);
	assert_false(p[3].app_limited);
}

/* On RACK's log: a SACKed segment counts when SACKed, not again when the cumulative ACK
 * passes it; a retransmission gives no RTT. */
static void test_on_rack_log_counts_once(void **state)
{
	struct tcp_rack r;
	struct tcp_rate rt;
	struct tcp_rate_sample rs;
	struct tcp_rack_ack a = { .now_us = 1000 };

	(void)state;
	assert_int_equal(tcp_rack_init(&r), 0);
	tcp_rate_init(&rt);
	r.rate = &rt;
	for (uint32_t k = 0; k < 4; k++)
		tcp_rack_sent(&r, k * MSS, MSS, k * MSS, k);
	tcp_rack_sacked(&r, 2 * MSS, 4 * MSS, &a);
	tcp_rate_sample(&rt, 0, 1000, &rs);
	assert_int_equal(rs.acked, 2 * MSS);
	assert_int_equal(rs.delivered, 2 * MSS);
	assert_int_equal(rs.rtt_us, 1000 - 3);
	tcp_rack_sent(&r, 0, MSS, 4 * MSS, 1500); /* segment 0 again */
	a.now_us = 2000;
	tcp_rack_acked(&r, 4 * MSS, &a);
	tcp_rate_sample(&rt, 0, 2000, &rs);
	assert_int_equal(rs.acked, 2 * MSS);
	assert_int_equal(rt.delivered, 4 * MSS);
	assert_int_equal(rs.rtt_us, 2000 - 1); /* segment 1's; the retransmission gives none */
	/* the newest delivered is the retransmission, sent after 2 segments were delivered */
	assert_int_equal(rs.delivered, 2 * MSS);
	assert_int_equal(rs.prior_delivered, 2 * MSS);
	tcp_rack_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ack_interval),
		cmocka_unit_test(test_send_interval_bounds_compressed_acks),
		cmocka_unit_test(test_short_interval_is_no_sample),
		cmocka_unit_test(test_idle_restarts_interval),
		cmocka_unit_test(test_app_limited_until_flight_delivered),
		cmocka_unit_test(test_on_rack_log_counts_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
