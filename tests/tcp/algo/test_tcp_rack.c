/* RACK (RFC 8985 6.2) over the segment log: reordering inside the window is no loss, time
 * makes it one, the zero window of DupThresh, a lost retransmission found again, DSACK
 * widening the window once per round trip (and its 16-recovery persistence), the RTT of a
 * retransmission that the original's ACK answered, pipe, and the RTO marking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp_rack.h"

#define MSS 1000u
#define US 1ull
#define MS 1000ull

static struct tcp_rack r;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(tcp_rack_init(&r), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tcp_rack_free(&r);
	return 0;
}

static struct tcp_rack_ack at(uint64_t now)
{
	return (struct tcp_rack_ack){ .now_us = now };
}

/* Segments k .. k+n-1 (k from 0, sequence k * MSS), first sent at t, 1 us apart. */
static void send_segs(uint32_t k, uint32_t n, uint64_t t)
{
	for (uint32_t i = 0; i < n; i++)
		tcp_rack_sent(&r, (k + i) * MSS, MSS, (k + i) * MSS, t + i);
}

static void sack_seg(uint32_t k, uint64_t now)
{
	struct tcp_rack_ack a = at(now);
	tcp_rack_sacked(&r, k * MSS, (k + 1) * MSS, &a);
}

static void ack_to(uint32_t k, uint64_t now)
{
	struct tcp_rack_ack a = at(now);
	tcp_rack_acked(&r, k * MSS, &a);
}

static uint32_t detect(uint64_t now, bool in_rec, uint32_t srtt, uint64_t *tmo)
{
	return tcp_rack_detect(&r, now, tcp_rack_reo_wnd(&r, in_rec, MSS, srtt), tmo);
}

/* 10 ms round trips: a first flight acknowledged gives min_rtt 10 ms. */
static void warm(void)
{
	send_segs(0, 2, 0);
	ack_to(2, 10 * MS);
	assert_int_equal(r.min_rtt_us, 10 * MS - 1);
}

/* After warm(): segments 2 .. 2+n-1 sent at 20 ms, and 3 .. 3+sacked-1 SACKed at 30 ms
 * (segment 2 is missing). */
static void hole_at_2(uint32_t n, uint32_t sacked)
{
	warm();
	send_segs(2, n, 20 * MS);
	for (uint32_t k = 0; k < sacked; k++)
		sack_seg(3 + k, 30 * MS);
}

static void test_reordering_inside_window_is_no_loss(void **state)
{
	uint64_t tmo;

	(void)state;
	/* segment 3 arrives before 2: one SACKed segment, below DupThresh */
	hole_at_2(4, 1);
	assert_int_equal(detect(30 * MS, false, 10 * MS, &tmo), 0);
	assert_int_equal(r.lost_bytes, 0);
	/* the timer covers the rest of min_rtt / 4 */
	assert_true(tmo > 0 && tmo <= 10 * MS / 4);
	/* segment 2 arrives 1 ms later, within the window: reordering seen, no loss */
	ack_to(4, 31 * MS);
	assert_int_equal(detect(31 * MS, false, 10 * MS, &tmo), 0);
	assert_true(r.reordering_seen);
	assert_int_equal(tmo, 0);
}

static void test_time_makes_it_lost(void **state)
{
	uint64_t tmo;
	uint32_t seq, len;

	(void)state;
	hole_at_2(4, 1);
	assert_int_equal(detect(30 * MS, false, 10 * MS, &tmo), 0);
	/* the reordering timer fires: segment 2 is overdue now */
	assert_int_equal(detect(30 * MS + tmo, false, 10 * MS, &tmo), MSS);
	assert_true(tcp_rack_next_lost(&r, &seq, &len));
	assert_int_equal(seq, 2 * MSS);
	assert_int_equal(len, MSS);
	/* pipe: 4 out, 1 SACKed, 1 lost */
	assert_int_equal(tcp_rack_pipe(&r, 2 * MSS, 6 * MSS), 2 * MSS);
}

/* The reordering timer is for the first entry to become overdue, and marks each as it does. */
static void test_timer_for_the_earliest(void **state)
{
	uint64_t tmo;

	(void)state;
	hole_at_2(10, 0);
	sack_seg(11, 30 * MS);   /* the newest: 2 .. 10 are candidates, sent 20 ms + 0 .. 8 us */
	r.reordering_seen = true; /* keep the window open (min_rtt / 4) */
	assert_int_equal(detect(30 * MS, false, 10 * MS, &tmo), 0);
	uint64_t due2 = 20 * MS + r.rtt_us + tcp_rack_reo_wnd(&r, false, MSS, 10 * MS);
	assert_int_equal(tmo, due2 - 30 * MS);
	/* at that time segment 2 alone is overdue; the next timer is for segment 3, 1 us on */
	assert_int_equal(detect(due2, false, 10 * MS, &tmo), MSS);
	assert_int_equal(tmo, 1);
}

/* A peer that SACKs only the newest segment of a large flight, ACK after ACK: each ACK's walks
 * look at a few entries, not the whole flight. */
static void test_sack_newest_walks_little(void **state)
{
	uint64_t tmo;
	uint32_t seq, len;
	const uint32_t n = 20000;

	(void)state;
	warm();
	for (uint32_t k = 2; k < 2 + n; k++)   /* one burst: all at 20 ms */
		tcp_rack_sent(&r, k * MSS, MSS, k * MSS, 20 * MS);
	for (uint32_t k = 0; k < 1000; k++) {
		sack_seg(2 + n - 1 - k, 30 * MS + k);
		r.reordering_seen = true;
		detect(30 * MS + k, false, 10 * MS, &tmo);
		assert_false(tcp_rack_next_lost(&r, &seq, &len));
	}
	assert_true(tmo > 0);
	assert_true(r.walked < 10u * 1000u);
	/* time passes: the whole unSACKed flight is overdue now, found in one walk */
	uint64_t before = r.walked;
	assert_int_equal(detect(40 * MS, false, 10 * MS, &tmo), (n - 1000) * MSS);
	assert_true(r.walked - before <= n + 1);
	/* taking the lost entries one by one walks each once */
	before = r.walked;
	for (uint32_t k = 0; k < 100; k++) {
		assert_true(tcp_rack_next_lost(&r, &seq, &len));
		assert_int_equal(seq, (2 + k) * MSS);
		tcp_rack_sent(&r, seq, len, (2 + n) * MSS, 41 * MS + k);
	}
	assert_true(r.walked - before <= 200);
}

/* Everything outstanding marked lost (an RTO with SACK): further ACKs walk nothing of it, and
 * what is sent after it is still judged. */
static void test_all_lost_walks_little(void **state)
{
	uint64_t tmo;
	const uint32_t n = 20000;

	(void)state;
	warm();
	for (uint32_t k = 2; k < 2 + n; k++)
		tcp_rack_sent(&r, k * MSS, MSS, k * MSS, 20 * MS);
	assert_int_equal(tcp_rack_mark_all_lost(&r), n * MSS);
	detect(30 * MS, false, 10 * MS, &tmo);   /* finds its place past them once */
	uint64_t before = r.walked;
	for (uint32_t k = 0; k < 1000; k++)
		detect(30 * MS + k, false, 10 * MS, &tmo);
	assert_true(r.walked - before <= 1000);
	/* new data after them, then the newest SACKed: the new one before it is judged */
	tcp_rack_sent(&r, (2 + n) * MSS, MSS, (2 + n) * MSS, 31 * MS);
	tcp_rack_sent(&r, (3 + n) * MSS, MSS, (3 + n) * MSS, 31 * MS + 1);
	sack_seg(3 + n, 41 * MS);
	assert_int_equal(detect(60 * MS, false, 10 * MS, &tmo), MSS);
}

static void test_dupthresh_zero_window(void **state)
{
	uint64_t tmo;

	(void)state;
	hole_at_2(6, 3);
	/* three SACKed segments and no reordering seen: the window is 0, segment 2 is lost */
	assert_int_equal(tcp_rack_reo_wnd(&r, false, MSS, 10 * MS), 0);
	assert_int_equal(detect(30 * MS, false, 10 * MS, &tmo), MSS);
	/* segments sent after the newest delivered one are not judged */
	assert_int_equal(r.lost_bytes, MSS);
}

static void test_lost_retransmission(void **state)
{
	uint64_t tmo;
	uint32_t seq, len;

	(void)state;
	hole_at_2(4, 3);
	assert_int_equal(detect(30 * MS, true, 10 * MS, &tmo), MSS);
	/* segment 2 is resent at 30 ms, then new data at 31 ms */
	tcp_rack_sent(&r, 2 * MSS, MSS, 6 * MSS, 30 * MS);
	assert_int_equal(r.lost_bytes, 0);
	send_segs(6, 2, 31 * MS);
	/* the new data is SACKed at 41 ms, the retransmission is not: lost again */
	sack_seg(6, 41 * MS);
	assert_int_equal(detect(41 * MS, true, 10 * MS, &tmo), MSS);
	assert_true(tcp_rack_next_lost(&r, &seq, &len));
	assert_int_equal(seq, 2 * MSS);
}

static void test_retransmission_rtt_of_original_ignored(void **state)
{
	struct tcp_rack_ack a = { .now_us = 32 * MS, .has_ts = true, .ts_ecr = 20 };

	(void)state;
	warm();
	send_segs(2, 1, 20 * MS);           /* TSval 20 (ms clock) */
	tcp_rack_sent(&r, 2 * MSS, MSS, 3 * MSS, 30 * MS); /* resent, TSval 30 */
	/* the ACK echoes 20: it answers the original, no sample of the retransmission's */
	tcp_rack_acked(&r, 3 * MSS, &a);
	assert_int_equal(r.rtt_us, 10 * MS - 1); /* still warm()'s */
	assert_int_equal(r.min_rtt_us, 10 * MS - 1);
}

static void test_dsack_widens_window(void **state)
{
	(void)state;
	warm();
	send_segs(2, 4, 20 * MS);
	assert_int_equal(tcp_rack_reo_wnd(&r, false, MSS, 20 * MS), (10 * MS - 1) / 4);
	tcp_rack_dsack(&r, 2 * MSS, 6 * MSS);
	assert_true(r.reordering_seen);
	assert_int_equal(r.reo_wnd_mult, 2);
	/* a second DSACK in the same round trip changes nothing */
	tcp_rack_dsack(&r, 3 * MSS, 6 * MSS);
	assert_int_equal(r.reo_wnd_mult, 2);
	assert_int_equal(tcp_rack_reo_wnd(&r, true, MSS, 20 * MS), 2 * ((10 * MS - 1) / 4));
	/* once SND.UNA passed that round, the next DSACK widens again; never above SRTT */
	tcp_rack_dsack(&r, 6 * MSS, 8 * MSS);
	assert_int_equal(r.reo_wnd_mult, 3);
	assert_int_equal(tcp_rack_reo_wnd(&r, true, MSS, 5 * MS), 5 * MS);
	/* it persists for 16 recoveries, then the multiplier is 1 again */
	for (int i = 0; i < 15; i++)
		tcp_rack_recovery_done(&r);
	assert_int_equal(r.reo_wnd_mult, 3);
	tcp_rack_recovery_done(&r);
	assert_int_equal(r.reo_wnd_mult, 1);
}

static void test_rto_marks_all_but_sacked(void **state)
{
	(void)state;
	warm();
	send_segs(2, 5, 20 * MS);
	sack_seg(4, 30 * MS);
	assert_int_equal(tcp_rack_mark_all_lost(&r), 4 * MSS);
	assert_int_equal(tcp_rack_pipe(&r, 2 * MSS, 7 * MSS), 0);
	/* partial ACK into a lost segment keeps the counts right */
	ack_to(3, 40 * MS);
	assert_int_equal(r.lost_bytes, 3 * MSS);
	assert_int_equal(r.sacked_bytes, MSS);
	tcp_rack_rto(&r);
	assert_int_equal(r.lost_bytes + r.sacked_bytes, 0);
}

static void test_log_grows(void **state)
{
	(void)state;
	send_segs(0, 1000, 0);
	assert_false(r.broken);
	assert_int_equal(r.cnt, 1000);
	ack_to(999, 5 * MS);
	assert_int_equal(r.cnt, 1);
	assert_int_equal(r.min_rtt_us, 5 * MS - 998);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reordering_inside_window_is_no_loss, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_time_makes_it_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dupthresh_zero_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timer_for_the_earliest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sack_newest_walks_little, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_lost_walks_little, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_retransmission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retransmission_rtt_of_original_ignored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dsack_widens_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rto_marks_all_but_sacked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_grows, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
