/* TCP engine with BBR (tcp_bbr.c, tcp_rate.c, tcp_pace.c): a BBR sender paces, so at one
 * instant only the pacing allowance leaves and the rest follows at the rate, on the pacing
 * timer. A transfer with random loss completes, and
 * the sender's cwnd stays where the model puts it instead of halving on each loss. Two stacks,
 * virtual clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tcp_fixture.h"
#include "tcp_int.h"

#define US 1000ull
#define MS 1000000ull
#define SEC 1000000000ull
#define SEG 1448u

static void reinit_cc(enum tcp_cc_algo algo)
{
	struct tcp_stack_cfg c;

	pair_cfg_default(&c);
	c.cc = algo;
	pair_fini(&P);
	pair_init(&P, &c, &c, 5 * SEC);
}

static void send_pattern(struct pair_ep *a, size_t len)
{
	uint8_t *buf = malloc(len);
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	for (size_t i = 0; i < len; i++)
		buf[i] = pair_pattern(i);
	assert_int_equal(tcp_send(a->c, &iov, 1), (ssize_t)len);
	free(buf);
}

static unsigned data_segs_from(unsigned from)
{
	unsigned n = 0;

	for (unsigned i = from; i < P.nlog && i < PAIR_LOG; i++)
		n += P.log[i].dir == PAIR_A && P.log[i].len;
	return n;
}

static enum pair_action drop_from_b(void *arg, const struct pair_seg *s, unsigned n)
{
	(void)arg;
	(void)n;
	return s->dir == PAIR_B ? PAIR_DROP : PAIR_PASS;
}

/* A rate of one segment a millisecond, a window that does not limit, and no ACK to change
 * either: at one instant the sender may send what the pacing allowance holds (two segment
 * times at this rate: three segments, the third due at the instant), then one a
 * millisecond, each on the pacing timer. */
static void test_bbr_paces(void **state)
{
	struct pair_ep a, b;
	unsigned from, n;

	(void)state;
	reinit_cc(TCP_CC_BBR);
	pair_established(&a, &b);
	assert_int_equal(a.c->cc.algo, TCP_CC_BBR);
	P.filter = drop_from_b;
	a.c->cc.cwnd = 200 * SEG;
	a.c->cc.bbr.pacing_rate = 1000ull * SEG;
	from = P.nlog;
	send_pattern(&a, 100 * SEG);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	n = data_segs_from(from);
	assert_int_equal(n, 3);
	assert_true(tcp_timer_armed(&a.c->t_pace));
	/* 9 ms later (before the tail loss probe's 10 ms): 9 more, give or take the tick */
	pair_advance(&P, 9 * MS, 100 * US);
	n = data_segs_from(from);
	assert_true(n >= 11 && n <= 13);
	P.filter = NULL;
	pair_advance(&P, 2 * SEC, 1 * MS);
	assert_true(pair_check_pattern(&b, 100 * SEG));
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* Every 50th data segment of A is lost, once. */
static enum pair_action every_50th(void *arg, const struct pair_seg *s, unsigned n)
{
	unsigned *seen = arg;

	(void)n;
	if (s->dir != PAIR_A || !s->len)
		return PAIR_PASS;
	return ++*seen % 50 == 0 ? PAIR_DROP : PAIR_PASS;
}

static void test_bbr_keeps_window_through_loss(void **state)
{
	struct pair_ep a, b;
	struct tcp_conn_stats st;
	unsigned seen = 0;
	const size_t len = 4u << 20;

	(void)state;
	reinit_cc(TCP_CC_BBR);
	pair_established(&a, &b);
	P.filter = every_50th;
	P.filter_arg = &seen;
	assert_int_equal(pair_bulk(&P, &a, &b, len, 60 * SEC), len);
	assert_true(pair_check_pattern(&b, len));
	pair_advance(&P, 5 * MS, 1 * MS); /* the last (delayed) ACK */
	tcp_conn_get_stats(a.c, &st);
	assert_true(st.fast_retrans >= 10);
	assert_int_equal(st.rto_expiries, 0);
	assert_true(a.c->rate.delivered >= len);
	/* no multiplicative decrease: never below BBR's floor of 4 segments, and ssthresh
	 * untouched */
	assert_true(a.c->cc.cwnd >= 4u * a.c->snd_mss);
	assert_int_equal(a.c->cc.ssthresh, 0x7fffffffu);
	P.filter = NULL;
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bbr_paces, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_bbr_keeps_window_through_loss,
						pair_fixture_setup, pair_fixture_teardown),
	};

	return pair_run_tests("test_tcp_bbr", tests, sizeof(tests) / sizeof(tests[0]));
}
