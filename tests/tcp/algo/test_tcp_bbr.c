/* BBR v1's state machine driven by synthetic ACKs: STARTUP ends after three rounds without
 * 25 % more bandwidth (and not while it grows), DRAIN paces below the estimate until the
 * flight is down to the BDP, PROBE_BW cycles 1.25, 0.75 and six rounds of 1 (the probe
 * lasting until the flight reached its target), PROBE_RTT comes when the RTT minimum is 10 s
 * old, holds 4 segments for 200 ms and a round, and gives the window back; the bandwidth
 * filter forgets after 10 rounds; cwnd keeps room for ACKs that come in bursts (at most 100 ms
 * at the bandwidth); recovery conserves packets for a round and restores cwnd. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp_bbr.h"

#define MSS 1000u
#define RTT 10000u              /* us */
#define BW 10000000ull          /* octets per second: a BDP of 100 segments */
#define BDP (BW * RTT / 1000000u)

struct sim {
	struct tcp_bbr b;
	uint32_t cwnd;
	uint64_t now, delivered;
	uint32_t inflight;
	int64_t rtt;                /* the next ACK's RTT sample */
	bool app_limited;           /* the next samples are */
	uint32_t lost;
	bool in_recovery;
};

static void sim_init(struct sim *s, uint32_t rand)
{
	*s = (struct sim){ .now = 1000000, .rtt = RTT };
	s->cwnd = tcp_bbr_init(&s->b, MSS, rand);
}

/* One ACK that delivers bw x dt octets measured over dt; new_round: it ends a round trip. */
static void ack_dt(struct sim *s, uint64_t bw, uint64_t dt, bool new_round)
{
	uint64_t d = bw * dt / 1000000u;
	struct tcp_rate_sample rs = {
		.valid = true,
		.delivered = d,
		.interval_us = dt,
		.prior_delivered = new_round ? s->delivered : s->b.next_round_delivered - 1,
		.acked = (uint32_t)d,
		.rtt_us = s->rtt,
		.app_limited = s->app_limited,
	};
	struct tcp_bbr_ack a;

	s->now += dt;
	s->delivered += d;
	a = (struct tcp_bbr_ack){
		.now_us = s->now,
		.delivered = s->delivered,
		.rs = &rs,
		.lost = s->lost,
		.inflight = s->inflight,
		.prior_inflight = s->inflight,
		.in_recovery = s->in_recovery,
		.srtt_us = RTT,
	};
	tcp_bbr_on_ack(&s->b, &a, &s->cwnd);
	s->lost = 0;
}

static void round_at(struct sim *s, uint64_t bw)
{
	ack_dt(s, bw, RTT, true);
}

static void test_startup_ends_after_three_flat_rounds(void **state)
{
	struct sim s;

	(void)state;
	sim_init(&s, 0);
	s.inflight = 500 * MSS; /* a queue: DRAIN has work to do */
	assert_int_equal(s.b.mode, TCP_BBR_STARTUP);
	for (uint64_t bw = BW / 8; bw <= BW; bw *= 2)
		round_at(&s, bw);
	round_at(&s, BW);
	round_at(&s, BW);
	assert_int_equal(s.b.mode, TCP_BBR_STARTUP);
	assert_false(s.b.full_bw_reached);
	round_at(&s, BW);
	assert_true(s.b.full_bw_reached);
	assert_int_equal(s.b.mode, TCP_BBR_DRAIN);
	/* DRAIN paces at bw / 2.885, less the margin */
	assert_true(s.b.pacing_rate < BW * 36 / 100 && s.b.pacing_rate > BW * 33 / 100);
}

static void test_startup_goes_on_while_growing(void **state)
{
	struct sim s;
	uint64_t bw = BW / 100;

	(void)state;
	sim_init(&s, 0);
	s.inflight = 500 * MSS;
	/* 30 % a round: STARTUP goes on; STARTUP paces at 2.885 x bw */
	for (int i = 0; i < 12; i++, bw = bw * 13 / 10)
		round_at(&s, bw);
	assert_int_equal(s.b.mode, TCP_BBR_STARTUP);
	assert_true(s.b.pacing_rate > tcp_bbr_bw(&s.b) * 28 / 10);
	/* 24 % above the last full bandwidth is too little: three such rounds end it */
	bw = tcp_bbr_bw(&s.b) * 124 / 100;
	round_at(&s, bw);
	round_at(&s, bw);
	assert_int_equal(s.b.mode, TCP_BBR_STARTUP);
	round_at(&s, bw);
	assert_int_equal(s.b.mode, TCP_BBR_DRAIN);
}

static void test_app_limited_rounds_do_not_end_startup(void **state)
{
	struct sim s;

	(void)state;
	sim_init(&s, 0);
	round_at(&s, BW);
	for (int i = 0; i < 5; i++) {
		struct tcp_rate_sample rs = {
			.valid = true, .delivered = BDP / 2, .interval_us = RTT,
			.prior_delivered = s.delivered, .acked = (uint32_t)(BDP / 2),
			.rtt_us = RTT, .app_limited = true,
		};
		struct tcp_bbr_ack a = { .rs = &rs, .srtt_us = RTT };

		s.now += RTT;
		s.delivered += BDP / 2;
		a.now_us = s.now;
		a.delivered = s.delivered;
		tcp_bbr_on_ack(&s.b, &a, &s.cwnd);
	}
	assert_int_equal(s.b.mode, TCP_BBR_STARTUP);
	assert_int_equal(tcp_bbr_bw(&s.b), BW); /* the lower samples did not count */
}

/* To PROBE_BW at phase 0 (rand 0) with the model at BW and RTT. */
static void to_probe_bw(struct sim *s)
{
	sim_init(s, 0);
	s->inflight = 500 * MSS;
	for (int i = 0; i < 4; i++)
		round_at(s, BW);
	assert_int_equal(s->b.mode, TCP_BBR_DRAIN);
	round_at(s, BW);
	assert_int_equal(s->b.mode, TCP_BBR_DRAIN); /* flight still above the BDP */
	s->inflight = (uint32_t)BDP;
	round_at(s, BW);
	assert_int_equal(s->b.mode, TCP_BBR_PROBE_BW);
	assert_int_equal(s->b.cycle_idx, 0);
}

static void test_drain_then_gain_cycle(void **state)
{
	struct sim s;
	uint32_t idx[8];

	(void)state;
	to_probe_bw(&s);
	/* ACKs spread over the round (ten a round): cwnd is 2 x BDP plus the segments held back
	 * and one ACK's worth of aggregation room, never more */
	for (int i = 0; i < 1000; i++)
		ack_dt(&s, BW, RTT / 10, i % 10 == 0);
	assert_true(s.cwnd >= 2 * BDP);
	assert_true(s.cwnd <= 2 * BDP + 5 * MSS + BDP / 10);
	to_probe_bw(&s);
	/* 1.25 does not end after one RTT while the flight is below its target ... */
	s.inflight = (uint32_t)BDP;
	ack_dt(&s, BW, RTT + 1, false);
	assert_int_equal(s.b.cycle_idx, 0);
	assert_int_equal(s.b.pacing_gain, TCP_BBR_UNIT * 5 / 4);
	assert_true(s.b.pacing_rate == BW * 5 / 4 * 99 / 100);
	/* ... but once it reached 1.25 x BDP */
	s.inflight = (uint32_t)(BDP * 5 / 4 + 5 * MSS);
	ack_dt(&s, BW, 100, false);
	assert_int_equal(s.b.cycle_idx, 1);
	assert_int_equal(s.b.pacing_gain, TCP_BBR_UNIT * 3 / 4);
	/* 0.75 ends as soon as the flight is back at the BDP */
	s.inflight = (uint32_t)BDP;
	ack_dt(&s, BW, 100, false);
	assert_int_equal(s.b.cycle_idx, 2);
	/* then one min RTT for each phase of gain 1, and around again */
	for (int i = 0; i < 8; i++) {
		ack_dt(&s, BW, RTT + 1, false);
		idx[i] = s.b.cycle_idx;
	}
	assert_int_equal(idx[0], 3);
	assert_int_equal(idx[4], 7);
	assert_int_equal(idx[5], 0);
	assert_int_equal(s.b.mode, TCP_BBR_PROBE_BW);
}

/* One ACK a round trip for the whole round's data (a receiver that acknowledges in bursts):
 * cwnd keeps a round's worth of room beyond 2 x BDP, so the sender is not stalled waiting
 * for the burst; the room is bounded by 100 ms at the bandwidth. */
static void test_aggregation_room(void **state)
{
	struct sim s;

	(void)state;
	to_probe_bw(&s);
	for (int i = 0; i < 100; i++)
		round_at(&s, BW);
	assert_true(s.cwnd >= 3 * BDP && s.cwnd <= 3 * BDP + 5 * MSS);
	/* a 1 s round trip: the burst would be a second's worth; 100 ms at most */
	sim_init(&s, 0);
	s.rtt = 1000000;
	s.inflight = 500 * MSS;
	for (int i = 0; i < 4; i++)
		ack_dt(&s, BW, 1000000, true);
	s.inflight = 0;
	for (int i = 0; i < 100; i++)
		ack_dt(&s, BW, 1000000, true);
	assert_int_equal(s.b.mode, TCP_BBR_PROBE_BW);
	assert_true(s.cwnd <= 2 * BW + BW / 10 + 5 * MSS);
	assert_true(s.cwnd >= 2 * BW + BW / 10);
}

static void test_random_phase_never_drains_first(void **state)
{
	struct sim s;

	(void)state;
	for (uint32_t r = 0; r < 14; r++) {
		sim_init(&s, r);
		s.inflight = (uint32_t)BDP;
		for (int i = 0; i < 4; i++)
			round_at(&s, BW);
		round_at(&s, BW);
		assert_int_equal(s.b.mode, TCP_BBR_PROBE_BW);
		assert_int_not_equal(s.b.cycle_idx, 1);
	}
}

static void test_probe_rtt_after_ten_seconds(void **state)
{
	struct sim s;
	uint64_t entered;

	(void)state;
	to_probe_bw(&s);
	s.rtt = RTT + 2000; /* every sample above the minimum from now on */
	while (s.now < s.b.min_rtt_stamp_us + 10000000u - RTT)
		round_at(&s, BW);
	assert_int_equal(s.b.mode, TCP_BBR_PROBE_BW);
	round_at(&s, BW);
	round_at(&s, BW);
	assert_int_equal(s.b.mode, TCP_BBR_PROBE_RTT);
	assert_int_equal(s.cwnd, 4 * MSS);
	assert_true(s.b.prior_cwnd >= 2 * BDP);
	assert_true(s.b.want_app_limited);
	s.app_limited = true; /* as the sampler marks them */
	/* the flight comes down to 4 segments: from then 200 ms and a round trip */
	s.inflight = 4 * MSS;
	ack_dt(&s, BW / 100, 1000, false);
	entered = s.now;
	while (s.now < entered + 190000)
		round_at(&s, BW / 100);
	assert_int_equal(s.b.mode, TCP_BBR_PROBE_RTT);
	while (s.now < entered + 210000)
		round_at(&s, BW / 100);
	assert_int_equal(s.b.mode, TCP_BBR_PROBE_BW);
	assert_int_equal(tcp_bbr_bw(&s.b), BW); /* the limited samples did not lower it */
	assert_true(s.cwnd >= 2 * BDP);        /* the window is back */
	assert_int_equal(s.b.min_rtt_us, RTT + 2000); /* the sample of the expired window */
}

static void test_new_minimum_postpones_probe_rtt(void **state)
{
	struct sim s;
	uint64_t start;

	(void)state;
	to_probe_bw(&s);
	start = s.now;
	while (s.now < start + 9000000u)
		round_at(&s, BW);
	s.rtt = RTT - 1000;
	round_at(&s, BW);
	s.rtt = RTT;
	while (s.now < start + 15000000u)
		round_at(&s, BW);
	assert_int_equal(s.b.mode, TCP_BBR_PROBE_BW);
	assert_int_equal(s.b.min_rtt_us, RTT - 1000);
}

static void test_bandwidth_filter_forgets_after_ten_rounds(void **state)
{
	struct sim s;

	(void)state;
	to_probe_bw(&s);
	for (int i = 0; i < 9; i++)
		round_at(&s, BW / 2);
	assert_int_equal(tcp_bbr_bw(&s.b), BW);
	round_at(&s, BW / 2);
	assert_int_equal(tcp_bbr_bw(&s.b), BW / 2);
}

static void test_recovery_conserves_then_restores(void **state)
{
	struct sim s;
	uint32_t cwnd;

	(void)state;
	to_probe_bw(&s);
	for (int i = 0; i < 20; i++)
		round_at(&s, BW);
	cwnd = s.cwnd;
	tcp_bbr_on_loss_event(&s.b, s.cwnd, false);
	s.in_recovery = true;
	s.inflight = 50 * MSS;
	s.lost = 10 * MSS;
	ack_dt(&s, BW, 100, false); /* delivers 1 segment */
	assert_int_equal(s.cwnd, 51 * MSS);
	ack_dt(&s, BW, 100, false);
	assert_int_equal(s.cwnd, 51 * MSS); /* conservation: no more than delivered */
	/* the model stays: loss is not congestion to BBR */
	assert_int_equal(tcp_bbr_bw(&s.b), BW);
	/* after a round the window grows towards the target again */
	round_at(&s, BW);
	assert_true(s.cwnd > 51 * MSS);
	s.in_recovery = false;
	ack_dt(&s, BW, 100, false);
	/* back to the saved window (within the phase's two segments of probing room) */
	assert_true(s.cwnd <= cwnd && s.cwnd >= cwnd - 2 * MSS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_startup_ends_after_three_flat_rounds),
		cmocka_unit_test(test_startup_goes_on_while_growing),
		cmocka_unit_test(test_app_limited_rounds_do_not_end_startup),
		cmocka_unit_test(test_drain_then_gain_cycle),
		cmocka_unit_test(test_aggregation_room),
		cmocka_unit_test(test_random_phase_never_drains_first),
		cmocka_unit_test(test_probe_rtt_after_ten_seconds),
		cmocka_unit_test(test_new_minimum_postpones_probe_rtt),
		cmocka_unit_test(test_bandwidth_filter_forgets_after_ten_rounds),
		cmocka_unit_test(test_recovery_conserves_then_restores),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
