/* TCP engine, orphans: a connection its application has closed (tcp_close) while its FIN is
 * unacknowledged (FIN-WAIT-1, CLOSING, LAST-ACK) gives up after orphan_retries
 * retransmissions or zero-window probes with a RST; in FIN-WAIT-2 after fin_timeout_ms. A
 * connection only shut down (tcp_shutdown) still belongs to its application and keeps
 * data_retries, and keepalive's silence bound when it has keepalive. Two stacks in one process, virtual clock (tcp_pair.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <cmocka.h>

#include "tcp_fixture.h"
#include "tcp_segment.h"

#define MS 1000000ull
#define SEC 1000000000ull

static void reinit(const struct tcp_stack_cfg *ca, const struct tcp_stack_cfg *cb)
{
	pair_fini(&P);
	pair_init(&P, ca, cb, 5 * SEC);
}

static enum pair_action drop_when(void *arg, const struct pair_seg *s, unsigned n)
{
	(void)s;
	(void)n;
	return *(bool *)arg ? PAIR_DROP : PAIR_PASS;
}

/* A connected pair whose frames are all lost while *lost; A has orphan_retries. */
static void established_lossy(struct pair_ep *a, struct pair_ep *b, uint32_t orphan_retries,
			      bool *lost)
{
	struct tcp_stack_cfg ca;

	pair_cfg_default(&ca);
	ca.orphan_retries = orphan_retries;
	reinit(&ca, NULL);
	pair_established(a, b);
	P.filter = drop_when;
	P.filter_arg = lost;
}

/* Advance in 100 ms steps until e is closed or max_ns passed. */
static void advance_until_closed(struct pair_ep *e, uint64_t max_ns)
{
	uint64_t t0 = P.now_ns;

	while (!e->closed && P.now_ns - t0 < max_ns)
		pair_advance(&P, 100 * MS, 100 * MS);
}

/* e gave up: on_closed(-ETIMEDOUT), and its last segment on the wire is a RST. */
static void assert_gave_up(const struct pair_ep *e, int dir)
{
	if (!e->closed)
		pair_dump(&P, 12);
	assert_true(e->closed);
	assert_int_equal(e->close_err, -ETIMEDOUT);
	assert_true(pair_last(&P, dir)->flags & TCP_F_RST);
}

/* B's application closes after A's FIN; A has gone (every frame from now on is lost, as
 * when the client process exited and its port with it): B's FIN in LAST-ACK goes 1 + N
 * times, then a RST, and B is freed. */
static void last_ack_case(uint32_t orphan_retries, unsigned expect_fins, uint64_t max_ns)
{
	struct tcp_stack_cfg cb;
	struct pair_ep a, b;
	bool lost = false;
	unsigned fins0;

	pair_cfg_default(&cb);
	cb.orphan_retries = orphan_retries;
	reinit(NULL, &cb);
	pair_established(&a, &b);
	P.filter = drop_when;
	P.filter_arg = &lost;
	tcp_close(a.c);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_true(b.eof);
	assert_int_equal(tcp_conn_state(b.c), TCP_CLOSE_WAIT);
	lost = true;
	fins0 = pair_count(&P, PAIR_B, TCP_F_FIN, false);
	tcp_close(b.c);
	tcp_stack_flush(P.st[1]);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(b.c), TCP_LAST_ACK);
	advance_until_closed(&b, max_ns);
	assert_gave_up(&b, PAIR_B);
	assert_int_equal(pair_count(&P, PAIR_B, TCP_F_FIN, false) - fins0, expect_fins);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* The default (8, as Linux's tcp_orphan_retries 0): from a 200 ms RTO the FIN goes at 0,
 * 0.2, 0.6 ... 51 s, and the RST follows at 102 s; with data_retries (15) alone the
 * connection would sit in LAST-ACK for most of 15 minutes. */
static void test_orphan_last_ack_default(void **state)
{
	(void)state;
	last_ack_case(0, 1 + 8, 110 * SEC);
}

static void test_orphan_last_ack_configured(void **state)
{
	(void)state;
	last_ack_case(2, 1 + 2, 2 * SEC);
}

/* A closes with data still unacknowledged and B gone: FIN-WAIT-1 gives up the same way. */
static void test_orphan_fin_wait_1(void **state)
{
	struct pair_ep a, b;
	static uint8_t buf[3000];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	bool lost = true;

	(void)state;
	established_lossy(&a, &b, 3, &lost);
	assert_int_equal(tcp_send(a.c, &iov, 1), (ssize_t)sizeof(buf));
	tcp_close(a.c);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(a.c), TCP_FIN_WAIT_1);
	advance_until_closed(&a, 10 * SEC);
	assert_gave_up(&a, PAIR_A);
	tcp_abort(b.c);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* Pass each side's first FIN (the closes cross), lose everything after: both sit in
 * CLOSING, each waiting for the ACK of its FIN. */
static enum pair_action pass_first_fins(void *arg, const struct pair_seg *s, unsigned n)
{
	bool *fin_passed = arg;

	(void)n;
	if (!(s->flags & TCP_F_FIN) || fin_passed[s->dir])
		return PAIR_DROP;
	fin_passed[s->dir] = true;
	return PAIR_PASS;
}

static void test_orphan_closing(void **state)
{
	struct tcp_stack_cfg cfg;
	struct pair_ep a, b;
	bool fin_passed[2] = {false, false};

	(void)state;
	pair_cfg_default(&cfg);
	cfg.orphan_retries = 3;
	reinit(&cfg, &cfg);
	pair_established(&a, &b);
	P.filter = pass_first_fins;
	P.filter_arg = fin_passed;
	tcp_close(a.c);
	tcp_close(b.c);
	tcp_stack_flush(P.st[0]);
	tcp_stack_flush(P.st[1]);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(a.c), TCP_CLOSING);
	assert_int_equal(tcp_conn_state(b.c), TCP_CLOSING);
	advance_until_closed(&a, 10 * SEC);
	advance_until_closed(&b, 10 * SEC);
	assert_gave_up(&a, PAIR_A);
	assert_gave_up(&b, PAIR_B);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* Only shut down, not closed: the application still holds the connection, so it keeps
 * data_retries (15) and is still retransmitting when an orphan would have given up. */
static void test_shutdown_is_not_orphan(void **state)
{
	struct pair_ep a, b;
	bool lost = true;

	(void)state;
	established_lossy(&a, &b, 2, &lost);
	assert_int_equal(tcp_shutdown(a.c), 0);
	tcp_stack_flush(P.st[0]);
	advance_until_closed(&a, 10 * SEC);
	assert_false(a.closed);
	assert_int_equal(tcp_conn_state(a.c), TCP_FIN_WAIT_1);
	tcp_abort(a.c);
	tcp_abort(b.c);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* Shut down, with keepalive on: the peer's silence ends it as in the open states, after IDLE
 * + PROBES x INTVL (10 + 3 x 2 = 16 s from the last segment received), long before
 * data_retries would; the FIN's retransmissions are the probes. */
static void test_shutdown_keepalive_bound(void **state)
{
	struct pair_ep a, b;
	bool lost = false;
	uint64_t t0;

	(void)state;
	established_lossy(&a, &b, 8, &lost);
	assert_int_equal(tcp_conn_set_keepalive(a.c, 10, 2, 3), 0);
	lost = true;
	t0 = P.now_ns;
	assert_int_equal(tcp_shutdown(a.c), 0);
	tcp_stack_flush(P.st[0]);
	advance_until_closed(&a, 30 * SEC);
	assert_gave_up(&a, PAIR_A);
	assert_true(P.now_ns - t0 >= 16 * SEC);
	assert_true(P.now_ns - t0 <= 17 * SEC);
	assert_int_equal(pair_count(&P, PAIR_A, TCP_F_ACK, false) -
			 pair_count(&P, PAIR_A, TCP_F_FIN, false) -
			 pair_count(&P, PAIR_A, TCP_F_RST, false), 1); /* no keepalive probes */
	tcp_abort(b.c);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* A hostile (or stuck) receiver keeps its window shut and answers every probe: an orphan
 * with data queued stops probing after orphan_retries probes, resets and is freed. */
static void test_orphan_zero_window(void **state)
{
	struct tcp_stack_cfg ca, cb;
	struct pair_ep a, b;
	static uint8_t buf[131072];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};

	(void)state;
	pair_cfg_default(&ca);
	ca.orphan_retries = 3;
	pair_cfg_default(&cb);
	cb.rcv_buf = 65536;
	reinit(&ca, &cb);
	pair_established(&a, &b);
	b.auto_recved = false;
	assert_int_equal(tcp_send(a.c, &iov, 1), (ssize_t)sizeof(buf));
	tcp_stack_flush(P.st[0]);
	pair_advance(&P, 1 * SEC, 10 * MS); /* what fits a window below an MSS goes too */
	assert_int_equal(pair_last(&P, PAIR_B)->wnd, 0);
	tcp_close(a.c);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(a.c), TCP_FIN_WAIT_1);
	advance_until_closed(&a, 30 * SEC);
	assert_gave_up(&a, PAIR_A);
	assert_true(b.closed); /* the RST reached it */
	assert_int_equal(b.close_err, -ECONNRESET);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* FIN-WAIT-2 of an orphan ends after fin_timeout_ms (default 60 s, test_fin_wait_2_timeout
 * in test_tcp_conn.c). */
static void test_orphan_fin_wait_2_configured(void **state)
{
	struct tcp_stack_cfg ca;
	struct pair_ep a, b;

	(void)state;
	pair_cfg_default(&ca);
	ca.fin_timeout_ms = 5000;
	reinit(&ca, NULL);
	pair_established(&a, &b);
	tcp_close(a.c);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(a.c), TCP_FIN_WAIT_2);
	pair_advance(&P, 4900 * MS, 100 * MS);
	assert_false(a.closed);
	pair_advance(&P, 200 * MS, 100 * MS);
	assert_gave_up(&a, PAIR_A);
	assert_true(b.closed);
	assert_int_equal(b.close_err, -ECONNRESET);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_orphan_last_ack_default, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_orphan_last_ack_configured, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_orphan_fin_wait_1, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_orphan_closing, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_is_not_orphan, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_keepalive_bound, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_orphan_zero_window, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_orphan_fin_wait_2_configured,
						pair_fixture_setup, pair_fixture_teardown),
	};

	return pair_run_tests("tcp_core_orphan", tests, sizeof(tests) / sizeof(tests[0]));
}
