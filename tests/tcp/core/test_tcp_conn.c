/* TCP engine, connection life cycle (RFC 9293 3.5, 3.6, 3.10.7; RFC 5961; RFC 7323 PAWS):
 * handshake and options, refused connect, simultaneous open and close, FIN each way,
 * TIME_WAIT expiry, RST and SYN acceptance rules with challenge ACKs, PAWS, backlog,
 * keepalive, SYN retransmission (also of SYNs the ARP hold queue refused). Two stacks in one
 * process, virtual clock (tcp_pair.h). */
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
#include "tcp_int.h"
#include "net_int.h"
#include "tcp_segment.h"

#define MS 1000000ull
#define SEC 1000000000ull

static void test_handshake_options(void **state)
{
	struct pair_ep a, b;
	struct tcp_conn_stats sa, sb;
	const struct pair_seg *syn = &P.log[0], *synack = &P.log[1];

	(void)state;
	pair_established(&a, &b);
	/* SYN, SYN-ACK, ACK and nothing else */
	assert_int_equal(P.nlog, 3);
	assert_int_equal(syn->flags, TCP_F_SYN);
	assert_true(syn->opts.has_mss && syn->opts.mss == 1460);
	assert_true(syn->opts.has_wscale && syn->opts.sack_ok && syn->opts.has_ts);
	assert_int_equal(synack->flags, TCP_F_SYN | TCP_F_ACK);
	assert_int_equal(synack->ack, syn->seq + 1);
	assert_true(synack->opts.has_ts && synack->opts.ts_ecr == syn->opts.ts_val);
	assert_int_equal(P.log[2].flags, TCP_F_ACK);
	assert_int_equal(P.log[2].ack, synack->seq + 1);
	tcp_conn_get_stats(a.c, &sa);
	tcp_conn_get_stats(b.c, &sb);
	assert_true(sa.ts_ok && sa.sack_ok && sb.ts_ok && sb.sack_ok);
	assert_int_equal(sa.snd_mss, 1448); /* 1460 minus the timestamp option */
	assert_int_equal(tcp_conn_mss(b.c), 1448);
	assert_int_equal(sa.snd_wscale, sb.rcv_wscale);
	assert_int_equal(sa.rcv_wscale, 7); /* the 4 MiB the window may grow to, in 16 bits */
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static void test_handshake_no_options(void **state)
{
	struct tcp_stack_cfg cb;
	struct pair_ep a, b;
	struct tcp_conn_stats sa;

	(void)state;
	pair_fini(&P);
	pair_cfg_default(&cb);
	cb.no_sack = cb.no_timestamps = cb.no_wscale = true;
	cb.nif.mtu = 1000;
	pair_init(&P, NULL, &cb, 5 * SEC);
	pair_established(&a, &b);
	tcp_conn_get_stats(a.c, &sa);
	assert_false(sa.ts_ok || sa.sack_ok);
	assert_int_equal(sa.snd_wscale, 0);
	assert_int_equal(sa.rcv_wscale, 0);
	assert_int_equal(sa.snd_mss, 960); /* B's MSS option */
	assert_false(P.log[1].opts.has_ts || P.log[1].opts.has_wscale || P.log[1].opts.sack_ok);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static void test_refused(void **state)
{
	struct pair_ep a;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = RTE_BE16(9)};
	struct tcp_stack_stats st;

	(void)state;
	pair_ep_init(&a);
	dst.sin_addr.s_addr = P.ip[1];
	assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, &a, &a.c), 0);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(a.conn_err, -ECONNREFUSED);
	assert_true(a.closed);
	assert_int_equal(a.close_err, -ECONNREFUSED);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.no_port_rsts, 1);
	tcp_stack_get_stats(P.st[0], &st);
	assert_int_equal(st.attempt_fails, 1);
	assert_int_equal(st.cur_conns, 0);
	/* bad arguments */
	dst.sin_port = 0;
	assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, &a, &a.c), -EINVAL);
	dst.sin_port = RTE_BE16(9);
	dst.sin_addr.s_addr = rte_cpu_to_be_32(0x0a000001); /* off-link, no gateway */
	assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, &a, &a.c), -ENETUNREACH);
	pair_ep_fini(&a);
}

static void test_simultaneous_open(void **state)
{
	struct pair_ep a, b;
	struct sockaddr_in da = {.sin_family = AF_INET, .sin_port = RTE_BE16(6000)};
	struct sockaddr_in db = {.sin_family = AF_INET, .sin_port = RTE_BE16(5000)};

	(void)state;
	pair_ep_init(&a);
	pair_ep_init(&b);
	da.sin_addr.s_addr = P.ip[1];
	db.sin_addr.s_addr = P.ip[0];
	assert_int_equal(tcp_connect(P.st[0], &da, 5000, &pair_ops, &a, &a.c), 0);
	assert_int_equal(tcp_connect(P.st[1], &db, 6000, &pair_ops, &b, &b.c), 0);
	tcp_stack_flush(P.st[0]);
	tcp_stack_flush(P.st[1]);
	pair_run(&P);
	assert_true(a.connected);
	assert_true(b.connected);
	assert_int_equal(tcp_conn_state(a.c), TCP_ESTABLISHED);
	assert_int_equal(tcp_conn_state(b.c), TCP_ESTABLISHED);
	/* both sent SYN then SYN-ACK (RFC 9293 figure 7) */
	assert_int_equal(pair_count(&P, PAIR_A, TCP_F_SYN | TCP_F_ACK, false), 1);
	assert_int_equal(pair_count(&P, PAIR_B, TCP_F_SYN | TCP_F_ACK, false), 1);
	/* data flows */
	assert_int_equal(pair_bulk(&P, &a, &b, 5000, 1 * SEC), 5000);
	assert_true(pair_check_pattern(&b, 5000));
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static bool both_closed(void *arg)
{
	struct pair_ep **e = arg;

	return e[0]->closed && e[1]->closed;
}

static void test_simultaneous_close(void **state)
{
	struct pair_ep a, b, *both[2] = {&a, &b};
	struct tcp_stack_stats st;

	(void)state;
	pair_established(&a, &b);
	tcp_close(a.c);
	tcp_close(b.c);
	tcp_stack_flush(P.st[0]);
	tcp_stack_flush(P.st[1]);
	assert_true(pair_run_until(&P, both_closed, both, 1 * SEC));
	assert_int_equal(a.close_err, 0);
	assert_int_equal(b.close_err, 0);
	/* FIN-WAIT-1 -> CLOSING -> TIME-WAIT on both sides */
	tcp_stack_get_stats(P.st[0], &st);
	assert_int_equal(st.time_wait, 1);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.time_wait, 1);
	pair_advance(&P, 61 * SEC, 1 * SEC); /* 2 MSL = 60 s by default */
	tcp_stack_get_stats(P.st[0], &st);
	assert_int_equal(st.time_wait, 0);
	assert_int_equal(st.cur_conns, 0);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.cur_conns, 0);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* The FIN that enters TIME_WAIT and a RST right behind it in the same burst: the RST ends
 * TIME_WAIT at once (RFC 9293 3.10.7.4), and the on_closed(0) the FIN made due still comes. */
static void test_time_wait_rst_same_burst(void **state)
{
	struct pair_ep a, b;
	struct sockaddr_in la, lb;
	const struct pair_seg *fin;
	struct pair_inj rst = { .flags = TCP_F_RST };

	(void)state;
	pair_established(&a, &b);
	assert_int_equal(tcp_shutdown(a.c), 0);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(a.c), TCP_FIN_WAIT_2);
	tcp_conn_addrs(a.c, &la, NULL);
	tcp_conn_addrs(b.c, &lb, NULL);
	tcp_close(b.c);
	tcp_stack_flush(P.st[1]);   /* B's FIN waits in A's queue */
	fin = pair_last(&P, PAIR_B);
	assert_non_null(fin);
	assert_true(fin->flags & TCP_F_FIN);
	rst.sport = ntohs(lb.sin_port);
	rst.dport = ntohs(la.sin_port);
	rst.seq = fin->seq + fin->len + 1;   /* RCV.NXT once the FIN is in */
	assert_int_equal(pair_inject(&P, PAIR_A, &rst), 0);
	pair_run(&P);
	assert_true(a.closed);
	assert_int_equal(a.close_err, 0);
}

static enum pair_action drop_from_a(void *arg, const struct pair_seg *s, unsigned n)
{
	(void)arg;
	(void)n;
	return s->dir == PAIR_A ? PAIR_DROP : PAIR_PASS;
}

/* A stack that goes (its process exits) while a connection is in TIME_WAIT resets it: the
 * ACK of the peer's FIN may have been lost, and nothing is left to answer the peer's
 * retransmitted FIN, so its LAST-ACK would wait out every retransmission. */
static void test_destroy_resets_time_wait(void **state)
{
	struct pair_ep a, b;
	const struct pair_seg *last;

	(void)state;
	pair_established(&a, &b);
	assert_int_equal(tcp_shutdown(a.c), 0);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(a.c), TCP_FIN_WAIT_2);
	P.filter = drop_from_a;     /* A's ACK of B's FIN is lost */
	tcp_close(b.c);
	tcp_stack_flush(P.st[1]);
	pair_run(&P);
	assert_true(a.closed);      /* TIME_WAIT: the user heard on_closed(0) */
	last = pair_last(&P, PAIR_A);
	assert_non_null(last);
	assert_true(last->dropped && !(last->flags & TCP_F_RST));
	P.filter = NULL;
	unsigned rsts = pair_count(&P, PAIR_A, TCP_F_RST, false);
	tcp_stack_destroy(P.st[0]);
	P.st[0] = NULL;             /* pair_fini must not destroy it again */
	assert_int_equal(pair_count(&P, PAIR_A, TCP_F_RST, false), rsts + 1);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static void test_fin_each_way_time_wait(void **state)
{
	struct tcp_stack_cfg ca;
	struct pair_ep a, b;
	struct tcp_stack_stats st;
	struct iovec iov = {.iov_base = "hello", .iov_len = 5};

	(void)state;
	pair_fini(&P);
	pair_cfg_default(&ca);
	ca.msl_ms = 1000;
	pair_init(&P, &ca, NULL, 5 * SEC);
	pair_established(&a, &b);
	/* A half-closes; B still sends */
	assert_int_equal(tcp_shutdown(a.c), 0);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_true(b.eof);
	assert_int_equal(tcp_conn_state(a.c), TCP_FIN_WAIT_2);
	assert_int_equal(tcp_conn_state(b.c), TCP_CLOSE_WAIT);
	assert_int_equal(tcp_send(a.c, &iov, 1), -EPIPE);
	assert_int_equal(tcp_send(b.c, &iov, 1), 5);
	tcp_stack_flush(P.st[1]);
	pair_run(&P);
	assert_int_equal(a.rx_len, 5);
	assert_memory_equal(a.rx, "hello", 5);
	/* B closes: LAST-ACK -> CLOSED; A: TIME-WAIT, on_closed(0) at once */
	tcp_close(b.c);
	tcp_stack_flush(P.st[1]);
	pair_run(&P);
	assert_true(a.eof);
	assert_true(a.closed && a.close_err == 0);
	assert_true(b.closed && b.close_err == 0);
	tcp_stack_get_stats(P.st[0], &st);
	assert_int_equal(st.time_wait, 1);
	/* 2 MSL = 2 s here */
	pair_advance(&P, 1900 * MS, 100 * MS);
	tcp_stack_get_stats(P.st[0], &st);
	assert_int_equal(st.time_wait, 1);
	pair_advance(&P, 200 * MS, 100 * MS);
	tcp_stack_get_stats(P.st[0], &st);
	assert_int_equal(st.time_wait, 0);
	assert_int_equal(st.cur_conns, 0);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* The ports and B's rcv_nxt (A's next sequence) of an established pair. */
static void conn_view(struct pair_ep *a, struct pair_inj *in)
{
	struct sockaddr_in l, r;
	const struct pair_seg *s = pair_last(&P, PAIR_A);
	const struct pair_seg *sb = pair_last(&P, PAIR_B);

	tcp_conn_addrs(a->c, &l, &r);
	memset(in, 0, sizeof(*in));
	in->sport = rte_be_to_cpu_16(l.sin_port);
	in->dport = rte_be_to_cpu_16(r.sin_port);
	in->seq = s->seq + s->len + ((s->flags & (TCP_F_SYN | TCP_F_FIN)) ? 1 : 0);
	in->ack = sb->seq + sb->len + ((sb->flags & TCP_F_SYN) ? 1 : 0);
	in->wnd = 1000;
}

/* A peer that makes holes with one-octet segments: the receiver holds at most its limit of
 * ranges (32 for a 64 KiB buffer), drops and counts the rest, and what it kept still joins
 * the data that comes in order afterwards. */
#define HOLE_SEGS 40u

static void test_ooo_range_limit(void **state)
{
	struct tcp_stack_cfg c;
	struct pair_ep a, b;
	struct pair_inj in;
	struct tcp_stack_stats st;
	uint32_t base;
	uint8_t one;

	(void)state;
	pair_fini(&P);
	pair_cfg_default(&c);
	c.no_timestamps = true; /* the injected segments carry none */
	c.rcv_buf = 64u << 10;
	pair_init(&P, &c, &c, 5 * SEC);
	pair_established(&a, &b);
	conn_view(&a, &in);
	base = in.seq;
	in.flags = TCP_F_ACK;
	in.data = &one;
	in.len = 1;
	for (uint32_t k = 0; k < HOLE_SEGS; k++) {
		in.seq = base + 2 * k + 1;
		one = pair_pattern(2 * k + 1);
		assert_int_equal(pair_inject(&P, PAIR_B, &in), 0);
		pair_run(&P);
	}
	tcp_stack_get_stats(P.st[PAIR_B], &st);
	assert_int_equal(st.ooo_drops, HOLE_SEGS - 32);
	assert_int_equal(b.c->ooo_cnt, 32);
	assert_int_equal(tcp_conn_state(b.c), TCP_ESTABLISHED);
	/* A's own stream from base: in order, across the ranges held */
	assert_int_equal(pair_bulk(&P, &a, &b, 4096, 5 * SEC), 4096);
	assert_true(pair_check_pattern(&b, 4096));
	assert_int_equal(b.c->ooo_cnt, 0);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static void test_rst_rules(void **state)
{
	struct pair_ep a, b;
	struct pair_inj in;
	struct tcp_stack_stats st;
	unsigned nb;

	(void)state;
	pair_established(&a, &b);
	conn_view(&a, &in);
	/* out of window: ignored silently */
	in.flags = TCP_F_RST;
	in.seq += 10u * 1000 * 1000;
	nb = pair_count(&P, PAIR_B, 0, false);
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(b.c), TCP_ESTABLISHED);
	assert_int_equal(pair_count(&P, PAIR_B, 0, false), nb);
	/* in window, not exact: challenge ACK (RFC 5961 3.2) */
	conn_view(&a, &in);
	in.flags = TCP_F_RST;
	in.seq += 100;
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(b.c), TCP_ESTABLISHED);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.challenge_acks, 1);
	assert_int_equal(pair_last(&P, PAIR_B)->flags, TCP_F_ACK);
	assert_int_equal(pair_last(&P, PAIR_B)->ack, in.seq - 100);
	/* exact: the connection is reset */
	conn_view(&a, &in);
	in.flags = TCP_F_RST;
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_true(b.closed);
	assert_int_equal(b.close_err, -ECONNRESET);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.estab_resets, 1);
	assert_int_equal(st.cur_conns, 0);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static void test_syn_in_established(void **state)
{
	struct pair_ep a, b;
	struct pair_inj in;
	struct tcp_stack_stats st;

	(void)state;
	pair_established(&a, &b);
	conn_view(&a, &in);
	in.flags = TCP_F_SYN;
	in.seq += 5000;
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(b.c), TCP_ESTABLISHED);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.challenge_acks, 1);
	/* The challenge ACK reached A, which found it acceptable: still established. */
	assert_int_equal(tcp_conn_state(a.c), TCP_ESTABLISHED);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static void test_paws(void **state)
{
	struct pair_ep a, b;
	struct pair_inj in;
	struct tcp_opt_out o = {0};
	struct tcp_stack_stats st;
	const struct pair_seg *la;

	(void)state;
	pair_established(&a, &b);
	la = pair_last(&P, PAIR_A);
	conn_view(&a, &in);
	in.flags = TCP_F_ACK | TCP_F_PSH;
	in.data = "old!";
	in.len = 4;
	o.ts = true;
	o.ts_val = la->opts.ts_val - 1000; /* older than TS.Recent */
	o.ts_ecr = 0;
	in.opts = &o;
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	tcp_stack_get_stats(P.st[1], &st);
	if (st.paws_drops != 1)
		pair_dump(&P, 10);
	assert_int_equal(st.paws_drops, 1);
	assert_int_equal(b.rx_len, 0);
	/* a reordered pure duplicate ACK with an old timestamp passes (tcp_disordered_ack) */
	{
		struct pair_inj ack = in;

		ack.flags = TCP_F_ACK;
		ack.data = NULL;
		ack.len = 0;
		pair_inject(&P, PAIR_B, &ack);
		pair_run(&P);
		tcp_stack_get_stats(P.st[1], &st);
		assert_int_equal(st.paws_drops, 1);
	}
	/* the same segment with a fresh timestamp is taken */
	o.ts_val = la->opts.ts_val + 1;
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_int_equal(b.rx_len, 4);
	/* one tick older than TS.Recent is taken (Linux's TCP_PAWS_WINDOW): new data sent just
	 * before a retransmission that overtook it and moved TS.Recent */
	in.seq += 4;
	in.data = "tick";
	o.ts_val = la->opts.ts_val;
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_int_equal(b.rx_len, 8);
	/* two ticks older is not */
	in.seq += 4;
	in.data = "two!";
	o.ts_val = la->opts.ts_val - 1;
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_int_equal(b.rx_len, 8);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.paws_drops, 2);
	/* 24 days idle: TS.Recent no longer valid, an old timestamp is accepted (RFC 7323 5.5) */
	P.now_ns += 245ull * 24 * 360 * SEC; /* 24.5 days: TSval moves < 2^31 */
	in.data = "new!";
	o.ts_val = la->opts.ts_val - 5000;
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_int_equal(b.rx_len, 12);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.paws_drops, 2);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* Refused pure ACKs (an old ACK a path reordered behind newer ones fails PAWS) are
 * answered once per TCP_OOW_ACK_US, as Linux does; refused data is answered every time (its
 * ACK names what arrived twice). */
static unsigned sent_by_b(unsigned from)
{
	unsigned k = 0;

	for (unsigned i = from; i < P.nlog && i < PAIR_LOG; i++)
		k += P.log[i].dir == PAIR_B;
	return k;
}

static void test_paws_ack_replies(void **state)
{
	struct pair_ep a, b;
	struct pair_inj in;
	struct tcp_opt_out o = {0};
	struct tcp_stack_stats st;
	unsigned from;

	(void)state;
	pair_established(&a, &b);
	assert_int_equal(pair_bulk(&P, &b, &a, 4000, 1 * SEC), 4000);
	pair_advance(&P, 10 * MS, 1 * MS); /* A's last ACK */
	conn_view(&a, &in);
	in.flags = TCP_F_ACK;
	in.ack -= 2000; /* older than B's SND.UNA: not a duplicate ACK */
	o.ts = true;
	o.ts_val = pair_last(&P, PAIR_A)->opts.ts_val - 1000;
	in.opts = &o;
	from = P.nlog;
	for (int i = 0; i < 5; i++) {
		pair_inject(&P, PAIR_B, &in);
		pair_run(&P);
	}
	tcp_stack_get_stats(P.st[PAIR_B], &st);
	assert_int_equal(st.paws_drops, 5);
	assert_int_equal(sent_by_b(from), 1);
	P.now_ns += TCP_OOW_ACK_US * 1000ull;
	pair_inject(&P, PAIR_B, &in);
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_int_equal(sent_by_b(from), 2);
	/* refused data: an answer each */
	in.data = "old!";
	in.len = 4;
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	pair_inject(&P, PAIR_B, &in);
	pair_run(&P);
	assert_int_equal(sent_by_b(from), 4);
	tcp_stack_get_stats(P.st[PAIR_B], &st);
	assert_int_equal(st.paws_drops, 9);
	assert_int_equal(tcp_conn_state(b.c), TCP_ESTABLISHED);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static void test_backlog(void **state)
{
	struct tcp_stack_cfg cb;
	struct pair_ep a[3];
	struct tcp_listener *l;
	struct tcp_stack_stats st;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = RTE_BE16(7000)};
	int i;

	(void)state;
	pair_fini(&P);
	pair_cfg_default(&cb);
	cb.no_syncookies = true; /* the queue alone (test_tcp_cookie.c has the cookies) */
	pair_init(&P, NULL, &cb, 5 * SEC);
	dst.sin_addr.s_addr = P.ip[1];
	/* nobody accepts: two fit, the third SYN is dropped */
	assert_int_equal(tcp_listen(P.st[1], 7000, 2, NULL, NULL, &l), 0);
	assert_int_equal(tcp_listen(P.st[1], 7000, 2, NULL, NULL, &l), -EADDRINUSE);
	for (i = 0; i < 3; i++) {
		pair_ep_init(&a[i]);
		assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, &a[i], &a[i].c), 0);
	}
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_true(a[0].connected && a[1].connected);
	assert_false(a[2].connected);
	assert_int_equal(tcp_conn_state(a[2].c), TCP_SYN_SENT);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.syn_backlog_drops, 1);
	/* accept one: room for the retransmitted SYN */
	{
		struct pair_ep e;
		struct tcp_conn *c;

		pair_ep_init(&e);
		assert_int_equal(tcp_accept(l, &pair_ops, &e, &c), 0);
		pair_advance(&P, 1100 * MS, 10 * MS);
		assert_true(a[2].connected);
		tcp_abort(c);
		pair_ep_fini(&e);
	}
	tcp_listener_close(l); /* queued children are reset */
	pair_run(&P);
	assert_true(a[0].closed || a[1].closed);
	for (i = 0; i < 3; i++)
		pair_ep_fini(&a[i]);
}

static enum pair_action drop_b(void *arg, const struct pair_seg *s, unsigned n)
{
	(void)n;
	return (s->dir == PAIR_B && *(bool *)arg) ? PAIR_DROP : PAIR_PASS;
}

static void test_keepalive(void **state)
{
	struct pair_ep a, b;
	bool block = false;
	uint64_t t0;
	unsigned probes;

	(void)state;
	pair_established(&a, &b);
	P.filter = drop_b;
	P.filter_arg = &block;
	assert_int_equal(tcp_conn_set_keepalive(a.c, 10, 2, 3), 0);
	assert_int_equal(tcp_conn_set_keepalive(a.c, 10, 0, 3), -EINVAL);
	/* the peer answers: probes every 10 s, the connection stays */
	pair_advance(&P, 35 * SEC, 500 * MS);
	assert_int_equal(tcp_conn_state(a.c), TCP_ESTABLISHED);
	probes = pair_count(&P, PAIR_A, TCP_F_ACK, false);
	assert_true(probes >= 3 + 1);
	/* the peer goes silent: idle 10 s, then 3 probes 2 s apart, then -ETIMEDOUT */
	block = true;
	t0 = P.now_ns;
	while (!a.closed && P.now_ns - t0 < 40 * SEC)
		pair_advance(&P, 100 * MS, 100 * MS);
	assert_true(a.closed);
	assert_int_equal(a.close_err, -ETIMEDOUT);
	assert_true(P.now_ns - t0 >= 10 * SEC);
	assert_true(P.now_ns - t0 <= 20 * SEC);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static enum pair_action drop_all(void *arg, const struct pair_seg *s, unsigned n)
{
	(void)arg;
	(void)s;
	(void)n;
	return PAIR_DROP;
}

static void test_syn_retries(void **state)
{
	struct pair_ep a;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = RTE_BE16(80)};
	uint64_t t[8];
	unsigned i, n = 0;

	(void)state;
	pair_ep_init(&a);
	P.filter = drop_all;
	dst.sin_addr.s_addr = P.ip[1];
	assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, &a, &a.c), 0);
	tcp_stack_flush(P.st[0]);
	while (!a.closed && P.now_ns < 300 * SEC)
		pair_advance(&P, 50 * MS, 50 * MS);
	assert_int_equal(a.conn_err, -ETIMEDOUT);
	assert_int_equal(a.close_err, -ETIMEDOUT);
	for (i = 0; i < P.nlog && n < 8; i++)
		t[n++] = P.log[i].t_ns;
	assert_int_equal(n, 7); /* the SYN and 6 retries */
	for (i = 2; i < n; i++) /* exponential backoff: each gap doubles */
		assert_true(t[i] - t[i - 1] >= 2 * (t[i - 1] - t[i - 2]) - 100 * MS);
	pair_ep_fini(&a);
}

static void test_host_unreachable(void **state)
{
	struct pair_ep a;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = RTE_BE16(80)};
	struct tcp_stack_stats st;

	(void)state;
	pair_ep_init(&a);
	dst.sin_addr.s_addr = rte_cpu_to_be_32(0xc6336409); /* 198.51.100.9: nobody answers ARP */
	assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, &a, &a.c), 0);
	tcp_stack_flush(P.st[0]);
	while (!a.closed && P.now_ns < 30 * SEC)
		pair_advance(&P, 100 * MS, 100 * MS);
	assert_int_equal(a.conn_err, -EHOSTUNREACH);
	assert_int_equal(a.close_err, -EHOSTUNREACH);
	tcp_stack_get_stats(P.st[0], &st);
	assert_int_equal(st.cur_conns, 0);
	pair_ep_fini(&a);
}

/* A stack forgets a neighbour (its static entry from pair_init): the next packet to it asks
 * ARP first. */
static void forget_neighbour(struct tcp_stack *s, uint32_t ip)
{
	struct net_if *nif = tcp_stack_netif(s);

	for (unsigned i = 0; i < NET_ARP_SIZE; i++)
		if (nif->arp[i].state != NET_ARP_FREE && nif->arp[i].ip == ip)
			memset(&nif->arp[i], 0, sizeof(nif->arp[i]));
	assert_false(net_arp_lookup(nif, ip, NULL));
}

/* Issue 26 (ucmatose -c 50 over DPDK): a burst of connects to a neighbour not yet resolved.
 * The ARP hold queue takes the first NET_ARP_HOLD SYNs and refuses the rest (-ENOBUFS); a
 * refused SYN is a lost one, which the retransmission timer sends again. It used to leave
 * its connection in SYN-SENT without a timer, until rdma_cm's connect timer failed it
 * (UNREACHABLE, -ETIMEDOUT) with the server never seeing it. */
static void test_syn_burst_arp_unresolved(void **state)
{
	enum { N = NET_ARP_HOLD + 3 };
	struct pair_ep a[N], b[N];
	struct tcp_listener *l;
	struct tcp_conn *c;
	struct net_if_stats ns;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = RTE_BE16(7002)};
	unsigned i, up;

	(void)state;
	dst.sin_addr.s_addr = P.ip[1];
	forget_neighbour(P.st[0], P.ip[1]);
	assert_int_equal(tcp_listen(P.st[1], 7002, N, NULL, NULL, &l), 0);
	for (i = 0; i < N; i++) {
		pair_ep_init(&a[i]);
		pair_ep_init(&b[i]);
		assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, &a[i], &a[i].c), 0);
	}
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	net_if_get_stats(tcp_stack_netif(P.st[0]), &ns);
	assert_int_equal(ns.arp_requests_out, 1);
	assert_int_equal(ns.arp_unresolved_drops, N - NET_ARP_HOLD);
	for (i = 0, up = 0; i < N; i++)
		up += a[i].connected;
	assert_int_equal(up, NET_ARP_HOLD); /* the held ones went when the reply came */
	pair_advance(&P, 1100 * MS, 10 * MS); /* the initial RTO, 1 s */
	for (i = 0; i < N; i++) {
		assert_true(a[i].connected);
		assert_int_equal(tcp_conn_state(a[i].c), TCP_ESTABLISHED);
	}
	/* one SYN each on the wire: the refused ones never got there the first time */
	assert_int_equal(pair_count(&P, PAIR_A, TCP_F_SYN, false), N);
	for (i = 0; i < N; i++) {
		assert_int_equal(tcp_accept(l, &pair_ops, &b[i], &c), 0);
		b[i].c = c;
	}
	assert_int_equal(tcp_accept(l, &pair_ops, &b[0], &c), -EAGAIN);
	for (i = 0; i < N; i++) {
		tcp_abort(a[i].c);
		tcp_abort(b[i].c);
	}
	tcp_listener_close(l);
	pair_run(&P);
	for (i = 0; i < N; i++) {
		pair_ep_fini(&a[i]);
		pair_ep_fini(&b[i]);
	}
}

static enum pair_action drop_first_synack(void *arg, const struct pair_seg *s, unsigned n)
{
	(void)arg;
	return (s->dir == PAIR_B && n == 1 && s->flags == (TCP_F_SYN | TCP_F_ACK)) ? PAIR_DROP
										 : PAIR_PASS;
}

/* SYN-ACK lost: the client's SYN retransmission gets it again; data sent right after the
 * handshake waits in the child until tcp_accept and comes at the next poll. */
static void test_synack_loss_and_early_data(void **state)
{
	struct pair_ep a, b;
	struct tcp_listener *l;
	struct tcp_conn *c;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = RTE_BE16(7001)};
	struct iovec iov = {.iov_base = "early", .iov_len = 5};

	(void)state;
	pair_ep_init(&a);
	pair_ep_init(&b);
	P.filter = drop_first_synack;
	dst.sin_addr.s_addr = P.ip[1];
	assert_int_equal(tcp_listen(P.st[1], 7001, 4, NULL, NULL, &l), 0);
	assert_int_equal(tcp_connect(P.st[0], &dst, 0, &pair_ops, &a, &a.c), 0);
	assert_int_equal(tcp_send(a.c, &iov, 1), -ENOTCONN);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_false(a.connected);
	pair_advance(&P, 1100 * MS, 10 * MS);
	assert_true(a.connected);
	assert_int_equal(pair_count(&P, PAIR_A, TCP_F_SYN, false), 2);
	assert_int_equal(tcp_send(a.c, &iov, 1), 5);
	assert_int_equal(tcp_shutdown(a.c), 0);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(tcp_accept(l, &pair_ops, &b, &c), 0);
	assert_int_equal(tcp_accept(l, &pair_ops, &b, &c), -EAGAIN);
	b.c = c;
	assert_int_equal(b.rx_len, 0); /* not from inside tcp_accept */
	tcp_stack_poll(P.st[1]);
	assert_int_equal(b.rx_len, 5);
	assert_memory_equal(b.rx, "early", 5);
	assert_true(b.eof);
	tcp_listener_close(l);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* tcp_close with data unread: discarded; the peer's later data is discarded too; the
 * close completes with on_closed(0) and send after close is -EPIPE. */
static void test_close_discards(void **state)
{
	struct pair_ep a, b;
	struct iovec iov = {.iov_base = "0123456789", .iov_len = 10};
	struct tcp_conn *bc;

	(void)state;
	pair_established(&a, &b);
	bc = b.c;
	assert_int_equal(tcp_send(a.c, &iov, 1), 10);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(b.rx_len, 10);
	tcp_close(bc);
	assert_int_equal(tcp_send(bc, &iov, 1), -EPIPE);
	tcp_stack_flush(P.st[1]);
	pair_run(&P);
	assert_true(a.eof);
	assert_int_equal(tcp_send(a.c, &iov, 1), 10); /* half-closed peer still takes data */
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(b.rx_len, 10); /* discarded */
	tcp_close(a.c);
	tcp_stack_flush(P.st[0]);
	pair_advance(&P, 10 * MS, 1 * MS);
	assert_true(a.closed && a.close_err == 0);
	assert_true(b.closed && b.close_err == 0);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* Send space: -EAGAIN when the buffer is full, on_writable once ACKs free it. */
static void test_writable(void **state)
{
	struct tcp_stack_cfg ca;
	struct pair_ep a, b;
	static uint8_t buf[100000];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	ssize_t n;

	(void)state;
	pair_fini(&P);
	pair_cfg_default(&ca);
	ca.snd_buf = 16384;
	pair_init(&P, &ca, NULL, 5 * SEC);
	pair_established(&a, &b);
	n = tcp_send(a.c, &iov, 1);
	assert_int_equal(n, 16384);
	assert_int_equal(tcp_conn_send_space(a.c), 0);
	assert_int_equal(tcp_send(a.c, &iov, 1), -EAGAIN);
	tcp_stack_flush(P.st[0]);
	pair_advance(&P, 5 * MS, 1 * MS);
	assert_true(a.writable >= 1);
	assert_int_equal(tcp_conn_send_space(a.c), 16384);
	assert_int_equal(b.rx_len, 16384);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

static enum pair_action hold_first_data(void *arg, const struct pair_seg *s, unsigned n)
{
	unsigned *seen = arg;

	(void)n;
	if (s->dir != PAIR_A || !s->len)
		return PAIR_PASS;
	return ++*seen == 1 ? PAIR_HOLD : PAIR_PASS;
}

/* tcp_abort from inside on_recv while out-of-order data is queued behind it. */
static void test_abort_in_recv(void **state)
{
	struct pair_ep a, b;
	unsigned seen = 0;
	static uint8_t buf[10 * 1448];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};

	(void)state;
	pair_established(&a, &b);
	P.filter = hold_first_data;
	P.filter_arg = &seen;
	b.abort_in_recv = true;
	assert_int_equal(tcp_send(a.c, &iov, 1), (ssize_t)sizeof(buf));
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_true(b.closed);
	assert_int_equal(b.recv_calls, 1);
	assert_true(a.closed);
	assert_int_equal(a.close_err, -ECONNRESET);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

/* B closes first and keeps TIME_WAIT; A connects again from the same port: the SYN's newer
 * timestamp reopens the 4-tuple (RFC 6191) instead of waiting 2 MSL. */
static void test_time_wait_reopen(void **state)
{
	struct pair_ep a, b, a2, b2;
	struct tcp_listener *l;
	struct tcp_stack_stats st;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = RTE_BE16(7100)};

	(void)state;
	pair_ep_init(&a);
	pair_ep_init(&b);
	pair_ep_init(&a2);
	pair_ep_init(&b2);
	dst.sin_addr.s_addr = P.ip[1];
	assert_int_equal(tcp_listen(P.st[1], 7100, 4, &pair_lops, &b, &l), 0);
	assert_int_equal(tcp_connect(P.st[0], &dst, 41000, &pair_ops, &a, &a.c), 0);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_true(a.connected && b.c);
	tcp_close(b.c);
	tcp_stack_flush(P.st[1]);
	pair_run(&P);
	tcp_close(a.c);
	tcp_stack_flush(P.st[0]);
	pair_advance(&P, 5 * MS, 1 * MS);
	assert_true(a.closed && b.closed);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.time_wait, 1);
	tcp_stack_get_stats(P.st[0], &st);
	assert_int_equal(st.cur_conns, 0);
	/* same 4-tuple again, 1 s later: the TIME_WAIT entry gives way */
	pair_advance(&P, 1 * SEC, 100 * MS);
	tcp_listener_close(l);
	assert_int_equal(tcp_listen(P.st[1], 7100, 4, &pair_lops, &b2, &l), 0);
	assert_int_equal(tcp_connect(P.st[0], &dst, 41000, &pair_ops, &a2, &a2.c), 0);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_true(a2.connected);
	assert_non_null(b2.c);
	tcp_stack_get_stats(P.st[1], &st);
	assert_int_equal(st.time_wait, 0);
	tcp_listener_close(l);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
	pair_ep_fini(&a2);
	pair_ep_fini(&b2);
}

/* tcp_close while the peer never closes: FIN_WAIT_2 gives up after 60 s (as Linux). */
static void test_fin_wait_2_timeout(void **state)
{
	struct pair_ep a, b;

	(void)state;
	pair_established(&a, &b);
	tcp_close(a.c);
	tcp_stack_flush(P.st[0]);
	pair_run(&P);
	assert_int_equal(tcp_conn_state(a.c), TCP_FIN_WAIT_2);
	assert_true(b.eof);
	pair_advance(&P, 59 * SEC, 1 * SEC);
	assert_false(a.closed);
	pair_advance(&P, 2 * SEC, 100 * MS);
	assert_true(a.closed);
	assert_int_equal(a.close_err, -ETIMEDOUT);
	assert_true(b.closed); /* the RST that goes with it */
	assert_int_equal(b.close_err, -ECONNRESET);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_handshake_options, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_handshake_no_options, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_refused, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_simultaneous_open, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_simultaneous_close, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_fin_each_way_time_wait, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_destroy_resets_time_wait, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_time_wait_rst_same_burst, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_rst_rules, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_syn_in_established, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_paws, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_paws_ack_replies, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_backlog, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_keepalive, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_syn_retries, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_host_unreachable, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_synack_loss_and_early_data, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_syn_burst_arp_unresolved, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_close_discards, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_writable, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_abort_in_recv, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_time_wait_reopen, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_fin_wait_2_timeout, pair_fixture_setup, pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_ooo_range_limit, pair_fixture_setup, pair_fixture_teardown),
	};

	return pair_run_tests("test_tcp_conn", tests, sizeof(tests) / sizeof(tests[0]));
}
