/* TCP engine, loss recovery with SACK (tcp_recovery.c): RACK finds a lost retransmission at
 * once instead of after a timer, an RTO resends only what the peer has not SACKed, the
 * receiver reports a duplicate as a DSACK and the sender widens its reordering window for
 * it, and a recovery whose retransmissions all come back as DSACKs is undone. Two stacks,
 * virtual clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tcp_fixture.h"
#include "tcp_int.h"
#include "tcp_seq.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define WARM 200000u

static void send_pattern(struct pair_ep *a, size_t off, size_t len)
{
	uint8_t *buf = malloc(len);
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	for (size_t i = 0; i < len; i++)
		buf[i] = pair_pattern(off + i);
	assert_int_equal(tcp_send(a->c, &iov, 1), (ssize_t)len);
	free(buf);
	tcp_stack_flush(P.st[0]);
	tcp_stack_flush(P.st[1]);
}

/* Drops A's transmissions of the segments starting at seq[0..n-1], up to `times` each (0:
 * every one while the clock is below until_ns). */
struct seq_drop {
	unsigned n, times;
	uint32_t seq[4];
	unsigned dropped[4];
	uint64_t until_ns;
};

static enum pair_action drop_seqs(void *arg, const struct pair_seg *s, unsigned n)
{
	struct seq_drop *d = arg;

	(void)n;
	if (s->dir != PAIR_A || !s->len)
		return PAIR_PASS;
	for (unsigned i = 0; i < d->n; i++) {
		if (s->seq != d->seq[i])
			continue;
		if (d->times ? d->dropped[i] < d->times : P.now_ns < d->until_ns) {
			d->dropped[i]++;
			return PAIR_DROP;
		}
	}
	return PAIR_PASS;
}

/* A's sequence number of stream offset off (WARM octets went before, nothing after). */
static uint32_t seq_of(const struct pair_ep *a, size_t off)
{
	return a->c->snd_max + (uint32_t)(off - WARM);
}

/* The times of A's data transmissions of seq, in order; returns how many. */
static unsigned sends_of(uint32_t seq, uint64_t *t, unsigned max)
{
	unsigned k = 0;

	for (unsigned i = 0; i < P.nlog && i < PAIR_LOG && k < max; i++)
		if (P.log[i].dir == PAIR_A && P.log[i].len && P.log[i].seq == seq)
			t[k++] = P.log[i].t_ns;
	return k;
}

/* The retransmission of a hole is lost too: RACK sees data sent after it delivered and
 * resends it right away; no RTO, and no wait for a timer (a probe, or two round trips). */
static void test_lost_retransmission(void **state)
{
	struct pair_ep a, b;
	struct seq_drop d = {.n = 1, .times = 2};
	struct tcp_conn_stats st;
	uint64_t t[4];

	(void)state;
	pair_established(&a, &b);
	assert_int_equal(pair_bulk(&P, &a, &b, WARM, 10 * SEC), WARM);
	d.seq[0] = seq_of(&a, WARM + 3 * 1448);
	P.filter = drop_seqs;
	P.filter_arg = &d;
	send_pattern(&a, WARM, 40 * 1448);
	pair_advance(&P, 100000, 100000);
	/* data sent after the retransmission: its SACKs are what show the retransmission lost */
	send_pattern(&a, WARM + 40 * 1448, 10 * 1448);
	pair_advance(&P, 50 * MS, 100000);
	assert_true(pair_check_pattern(&b, WARM + 50 * 1448));
	tcp_conn_get_stats(a.c, &st);
	assert_int_equal(st.rto_expiries, 0);
	assert_int_equal(sends_of(d.seq[0], t, 4), 3);
	assert_true(t[2] - t[1] < 1 * MS);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* Two holes that stay lost until an RTO: afterwards only the holes go again, not what the
 * peer SACKed between and after them (no go-back-N). */
static void test_rto_keeps_sacked(void **state)
{
	struct pair_ep a, b;
	struct seq_drop d = {.n = 2, .until_ns = 0};
	struct tcp_conn_stats st;
	uint32_t max_end = 0, resent = 0;

	(void)state;
	pair_established(&a, &b);
	assert_int_equal(pair_bulk(&P, &a, &b, WARM, 10 * SEC), WARM);
	d.seq[0] = seq_of(&a, WARM + 3 * 1448);
	d.seq[1] = seq_of(&a, WARM + 10 * 1448);
	d.until_ns = P.now_ns + 300 * MS;
	P.filter = drop_seqs;
	P.filter_arg = &d;
	unsigned from = P.nlog;
	send_pattern(&a, WARM, 20 * 1448);
	pair_advance(&P, 3 * SEC, 1 * MS);
	assert_true(pair_check_pattern(&b, WARM + 20 * 1448));
	tcp_conn_get_stats(a.c, &st);
	assert_true(st.rto_expiries >= 1);
	for (unsigned i = from; i < P.nlog && i < PAIR_LOG; i++) {
		const struct pair_seg *x = &P.log[i];

		if (x->dir != PAIR_A || !x->len)
			continue;
		if (seq_lt(x->seq, max_end) && x->seq != d.seq[0] && x->seq != d.seq[1])
			resent++;
		if (seq_gt(x->seq + x->len, max_end))
			max_end = x->seq + x->len;
	}
	assert_int_equal(resent, 0);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* Does `act` to the n-th data segment A sends after the warm-up (PAIR_DUP: it arrives twice;
 * PAIR_HOLD: after the next one, on a link without delay later than any reordering window). */
struct nth_data {
	unsigned seen, which;
	enum pair_action act;
};

static enum pair_action nth_data(void *arg, const struct pair_seg *s, unsigned n)
{
	struct nth_data *d = arg;

	(void)n;
	if (s->dir != PAIR_A || !s->len)
		return PAIR_PASS;
	return ++d->seen == d->which ? d->act : PAIR_PASS;
}

/* A segment that arrives twice is reported below the cumulative ACK (RFC 2883), and the
 * sender counts the DSACK and sees reordering from then on: its window is no longer zero. */
static void test_dsack_both_ends(void **state)
{
	struct pair_ep a, b;
	struct nth_data d = {.which = 3, .act = PAIR_DUP};
	struct tcp_conn_stats st;
	bool dsack = false;

	(void)state;
	pair_established(&a, &b);
	assert_int_equal(pair_bulk(&P, &a, &b, WARM, 10 * SEC), WARM);
	assert_false(a.c->rack.reordering_seen);
	P.filter = nth_data;
	P.filter_arg = &d;
	unsigned from = P.nlog;
	send_pattern(&a, WARM, 10 * 1448);
	pair_advance(&P, 50 * MS, 1 * MS);
	assert_true(pair_check_pattern(&b, WARM + 10 * 1448));
	for (unsigned i = from; i < P.nlog && i < PAIR_LOG; i++) {
		const struct pair_seg *x = &P.log[i];

		if (x->dir == PAIR_B && x->opts.nsack && seq_leq(x->opts.sack[0].end, x->ack))
			dsack = true;
	}
	assert_true(dsack);
	tcp_conn_get_stats(a.c, &st);
	assert_int_equal(st.dsacks, 1);
	assert_true(a.c->rack.reordering_seen);
	assert_int_equal(a.c->rack.reo_wnd_mult, 2);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* A segment delivered only after its successors counts as lost (the window is still zero,
 * no reordering seen), but its retransmission comes back as a DSACK: the recovery was
 * spurious and cwnd is what it was before. */
static void test_spurious_recovery_undone(void **state)
{
	struct pair_ep a, b;
	struct nth_data d = {.which = 5, .act = PAIR_HOLD};
	struct tcp_conn_stats st0, st;

	(void)state;
	pair_established(&a, &b);
	assert_int_equal(pair_bulk(&P, &a, &b, WARM, 10 * SEC), WARM);
	tcp_conn_get_stats(a.c, &st0);
	P.filter = nth_data;
	P.filter_arg = &d;
	send_pattern(&a, WARM, 30 * 1448);
	pair_advance(&P, 50 * MS, 1 * MS);
	assert_true(pair_check_pattern(&b, WARM + 30 * 1448));
	tcp_conn_get_stats(a.c, &st);
	assert_int_equal(st.fast_retrans, st0.fast_retrans + 1);
	assert_true(st.dsacks >= 1);
	assert_int_equal(st.undos, 1);
	assert_true(st.cwnd >= st0.cwnd);
	assert_int_equal(st.rto_expiries, 0);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lost_retransmission, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_rto_keeps_sacked, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_dsack_both_ends, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_spurious_recovery_undone, pair_fixture_setup,
						pair_fixture_teardown),
	};

	return pair_run_tests("test_tcp_recovery", tests, sizeof(tests) / sizeof(tests[0]));
}
