/* SYN cookies in the engine (docs/tcp.md): with its SYN queue full of spoofed half-open
 * children, a listener answers further SYNs with cookies and keeps nothing for them; a real
 * client's ACK opens a connection with the options its SYN offered (window scale, SACK and
 * MSS through the cookie and the echoed timestamp; without timestamps only the MSS); a
 * forged ACK gets a RST; the half-open bound holds whatever the number of SYNs. Two stacks
 * in one process, virtual clock (tcp_pair.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "tcp_fixture.h"
#include "tcp_segment.h"
#include "tcp_syncookie.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define PORT 7000
#define BACKLOG 4
#define SPOOFED 1000

/* B's answers to A's spoofed SYNs go nowhere (A would reset them: it never sent those). */
static enum pair_action drop_b(void *arg, const struct pair_seg *s, unsigned n)
{
	(void)n;
	return (s->dir == PAIR_B && *(bool *)arg) ? PAIR_DROP : PAIR_PASS;
}

static bool block;

/* n SYNs from A's address, source ports from sport0, with the options Linux offers. */
static void spoof_syns(unsigned n, uint16_t sport0)
{
	struct tcp_opt_out o = {.mss = true, .mss_val = 1460, .wscale = true, .wscale_val = 7,
				.sack_ok = true, .ts = true, .ts_val = 1};
	struct pair_inj in = {.dport = PORT, .flags = TCP_F_SYN, .wnd = 64240, .opts = &o};

	for (unsigned i = 0; i < n; i++) {
		in.sport = (uint16_t)(sport0 + i);
		in.seq = 1000u * i;
		assert_int_equal(pair_inject(&P, PAIR_B, &in), 0);
		if (i % 64 == 63) /* the pair's queue holds PAIR_QMAX frames */
			pair_run(&P);
	}
	pair_run(&P);
}

/* A listener on B whose SYN queue is full of spoofed children; ops NULL: nobody accepts. */
static struct tcp_listener *flooded_listener(struct pair_ep *eb,
					     const struct tcp_listener_ops *ops)
{
	struct tcp_listener *l;
	struct tcp_stack_stats st;

	pair_ep_init(eb);
	assert_int_equal(tcp_listen(P.st[1], PORT, BACKLOG, ops, eb, &l), 0);
	block = true;
	P.filter = drop_b;
	P.filter_arg = &block;
	spoof_syns(SPOOFED, 10000);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.cur_conns, BACKLOG);     /* the half-open bound */
	assert_int_equal(st.syncookies_sent, SPOOFED - BACKLOG);
	assert_int_equal(st.syn_backlog_drops, 0);
	block = false;
	return l;
}

static void connect_a(struct pair_ep *a)
{
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = RTE_BE16(PORT)};

	dst.sin_addr.s_addr = P.ip[1];
	pair_ep_init(a);
	assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, a, &a->c), 0);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
}

static void close_pair(struct pair_ep *a, struct pair_ep *b, struct tcp_listener *l)
{
	tcp_abort(a->c);
	tcp_abort(b->c);
	tcp_listener_close(l);
	pair_run(&P);
	pair_ep_fini(a);
	pair_ep_fini(b);
}

static void test_cookie_connection(void **state)
{
	struct pair_ep a, b;
	struct tcp_listener *l;
	struct tcp_stack_stats st;
	struct tcp_conn_stats sa, sb;
	const struct pair_seg *synack;

	(void)state;
	l = flooded_listener(&b, &pair_lops);
	connect_a(&a);
	assert_true(a.connected);
	assert_non_null(b.c);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.syncookies_ok, 1);
	assert_int_equal(st.syncookies_failed, 0);
	assert_int_equal(st.cur_conns, BACKLOG + 1);
	/* the SYN-ACK was a cookie: the last SYN-ACK B sent, with every option A offered */
	synack = &P.log[P.nlog - 2];
	assert_int_equal(synack->flags, TCP_F_SYN | TCP_F_ACK);
	assert_true(synack->opts.has_ts && synack->opts.has_wscale && synack->opts.sack_ok);
	tcp_conn_get_stats(a.c, &sa);
	tcp_conn_get_stats(b.c, &sb);
	assert_true(sb.ts_ok && sb.sack_ok);
	assert_int_equal(sb.snd_wscale, sa.rcv_wscale);
	assert_int_equal(sa.snd_wscale, sb.rcv_wscale);
	assert_int_equal(sb.snd_mss, 1448); /* 1460 from the table, less the timestamps */
	/* data both ways through the scaled windows */
	assert_int_equal(pair_bulk(&P, &a, &b, 3u << 20, 20 * SEC), 3u << 20);
	assert_true(pair_check_pattern(&b, 3u << 20));
	assert_int_equal(pair_bulk(&P, &b, &a, 1u << 20, 20 * SEC), 1u << 20);
	assert_true(pair_check_pattern(&a, 1u << 20));
	close_pair(&a, &b, l);
}

static void test_cookie_without_timestamps(void **state)
{
	struct tcp_stack_cfg ca;
	struct pair_ep a, b;
	struct tcp_listener *l;
	struct tcp_conn_stats sb;

	(void)state;
	pair_fini(&P);
	pair_cfg_default(&ca);
	ca.no_timestamps = true;
	ca.nif.mtu = 1400;
	pair_init(&P, &ca, NULL, 5 * SEC);
	l = flooded_listener(&b, &pair_lops);
	connect_a(&a);
	assert_true(a.connected);
	assert_non_null(b.c);
	tcp_conn_get_stats(b.c, &sb);
	/* window scale and SACK have nowhere to ride: lost; MSS 1360 is the table's 1300 */
	assert_false(sb.ts_ok || sb.sack_ok);
	assert_int_equal(sb.snd_wscale, 0);
	assert_int_equal(sb.snd_mss, 1300);
	assert_int_equal(pair_bulk(&P, &a, &b, 1u << 20, 30 * SEC), 1u << 20);
	assert_true(pair_check_pattern(&b, 1u << 20));
	close_pair(&a, &b, l);
}

static void test_forged_and_late_acks(void **state)
{
	struct pair_ep b;
	struct tcp_listener *l;
	struct tcp_stack_stats st;
	const struct pair_seg *last;
	struct pair_inj in = {.sport = 10000 + SPOOFED - 1, .dport = PORT, .flags = TCP_F_ACK,
			      .wnd = 1000};
	uint32_t cookie;

	(void)state;
	l = flooded_listener(&b, &pair_lops);
	/* the cookie answered to the last spoofed SYN (seq 1000 * (SPOOFED - 1)) */
	last = pair_last(&P, PAIR_B);
	assert_int_equal(last->flags, TCP_F_SYN | TCP_F_ACK);
	cookie = last->seq;
	in.seq = 1000u * (SPOOFED - 1) + 1;
	/* a guessed cookie: RST, nothing kept */
	in.ack = cookie + 2;
	assert_int_equal(pair_inject(&P, PAIR_B, &in), 0);
	pair_run(&P);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.syncookies_failed, 1);
	assert_int_equal(st.syncookies_ok, 0);
	assert_int_equal(st.cur_conns, BACKLOG);
	assert_true(pair_last(&P, PAIR_B)->flags & TCP_F_RST);
	/* the right cookie from the wrong sequence number: the same */
	in.ack = cookie + 1;
	in.seq += 5;
	assert_int_equal(pair_inject(&P, PAIR_B, &in), 0);
	pair_run(&P);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.syncookies_failed, 2);
	/* the right one, too late (past two slots): refused */
	in.seq -= 5;
	pair_advance(&P, (TCP_COOKIE_LIFE_S + 1) * SEC - 1, 1 * SEC);
	block = true; /* B's retransmitted SYN-ACKs to its half-open children */
	spoof_syns(BACKLOG + 1, 30000); /* a fresh cookie, so B still checks ACKs */
	block = false;
	assert_int_equal(pair_inject(&P, PAIR_B, &in), 0);
	pair_run(&P);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.syncookies_failed, 3);
	assert_int_equal(st.syncookies_ok, 0);
	tcp_listener_close(l);
	pair_run(&P);
	pair_ep_fini(&b);
}

/* Nobody accepts: of five clients whose SYNs all got cookies, the fifth ACK finds the accept
 * queue full and is dropped (its client believes it is connected, as with any SYN cookie);
 * once the application accepts one, that client's retransmitted data gets it in. */
static void test_cookie_accept_queue_full(void **state)
{
	struct pair_ep b, got[BACKLOG + 1];
	struct tcp_listener *l;
	struct tcp_stack_stats st;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = RTE_BE16(PORT)};
	struct pair_ep e[BACKLOG + 1];
	struct tcp_conn *c;
	struct iovec iov = {.iov_base = "late", .iov_len = 4};

	(void)state;
	l = flooded_listener(&b, NULL);
	dst.sin_addr.s_addr = P.ip[1];
	for (unsigned i = 0; i <= BACKLOG; i++) {
		pair_ep_init(&e[i]);
		assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, &e[i], &e[i].c), 0);
	}
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.syncookies_ok, BACKLOG + 1);
	assert_int_equal(st.syn_backlog_drops, 1);
	assert_int_equal(st.cur_conns, 2 * BACKLOG); /* half-open + accept queue, no more */
	assert_true(e[BACKLOG].connected);
	/* while the queue is full, its data is dropped too */
	assert_int_equal(tcp_send(e[BACKLOG].c, &iov, 1), 4);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.syn_backlog_drops, 2);
	pair_ep_init(&got[0]);
	assert_int_equal(tcp_accept(l, &pair_ops, &got[0], &got[0].c), 0);
	pair_advance(&P, 3 * SEC, 10 * MS); /* the RTO retransmits the data */
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.syncookies_ok, BACKLOG + 3); /* the ACK, the data, its retransmission */
	assert_true(st.cur_conns <= 2 * BACKLOG);
	/* three queued before, the late one last: its data is there */
	for (unsigned i = 1; i <= BACKLOG; i++) {
		pair_ep_init(&got[i]);
		assert_int_equal(tcp_accept(l, &pair_ops, &got[i], &got[i].c), 0);
	}
	assert_int_equal(tcp_accept(l, &pair_ops, &got[0], &c), -EAGAIN);
	pair_run(&P);
	assert_int_equal(got[BACKLOG].rx_len, 4);
	assert_memory_equal(got[BACKLOG].rx, "late", 4);
	for (unsigned i = 0; i <= BACKLOG; i++) {
		tcp_abort(got[i].c);
		pair_ep_fini(&got[i]);
	}
	for (unsigned i = 0; i <= BACKLOG; i++) {
		tcp_abort(e[i].c);
		pair_ep_fini(&e[i]);
	}
	tcp_listener_close(l);
	pair_run(&P);
	pair_ep_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cookie_connection, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_cookie_without_timestamps, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_forged_and_late_acks, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_cookie_accept_queue_full, pair_fixture_setup,
						pair_fixture_teardown),
	};
	return pair_run_tests("test_tcp_cookie", tests, sizeof(tests) / sizeof(tests[0]));
}
