/* The stack: creation from tcp_stack_cfg, the input and poll entry points (the only places
 * callbacks run from), the clock, stack counters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

static const char *const state_names[] = {
	[TCP_CLOSED] = "CLOSED",	   [TCP_LISTEN] = "LISTEN",
	[TCP_SYN_SENT] = "SYN-SENT",	   [TCP_SYN_RECEIVED] = "SYN-RECEIVED",
	[TCP_ESTABLISHED] = "ESTABLISHED", [TCP_FIN_WAIT_1] = "FIN-WAIT-1",
	[TCP_FIN_WAIT_2] = "FIN-WAIT-2",   [TCP_CLOSE_WAIT] = "CLOSE-WAIT",
	[TCP_CLOSING] = "CLOSING",	   [TCP_LAST_ACK] = "LAST-ACK",
	[TCP_TIME_WAIT] = "TIME-WAIT",
};

const char *tcp_state_name(enum tcp_state s)
{
	if ((unsigned)s >= sizeof(state_names) / sizeof(state_names[0]))
		return "?";
	return state_names[s];
}

void tcp_stack_cfg_default(struct tcp_stack_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

uint64_t tcp_stack_now_ns(const struct tcp_stack *s)
{
	return s->clk_depth ? s->clk_ns : s->cfg.clock_ns(s->cfg.clock_arg);
}

void tcp_stack_clock_hold(struct tcp_stack *s)
{
	if (s->clk_depth++ == 0)
		s->clk_ns = s->cfg.clock_ns(s->cfg.clock_arg);
}

void tcp_stack_clock_release(struct tcp_stack *s)
{
	s->clk_depth--;
}

/* The interface's clock: the stack's, so a hold covers ARP's reads too. */
static uint64_t nif_clock_ns(void *arg)
{
	return tcp_stack_now_ns(arg);
}

uint64_t tcp_now_us(const struct tcp_stack *s)
{
	return tcp_stack_now_ns(s) / 1000;
}

static void tcp_unreach(void *arg, uint32_t dst);

/* Zero means "default" in the configuration: resolve every default once here. */
static void cfg_resolve(struct tcp_stack_cfg *c)
{
	if (!c->max_conns)
		c->max_conns = 4096;
	if (!c->snd_buf_max)
		c->snd_buf_max = c->snd_buf ? c->snd_buf : TCP_BUF_MAX_DEFAULT;
	if (!c->rcv_buf_max)
		c->rcv_buf_max = c->rcv_buf ? c->rcv_buf : TCP_BUF_MAX_DEFAULT;
	if (!c->snd_buf)
		c->snd_buf = TCP_BUF_DEFAULT;
	if (!c->rcv_buf)
		c->rcv_buf = TCP_BUF_DEFAULT;
	if (c->snd_buf_max < c->snd_buf)
		c->snd_buf_max = c->snd_buf;
	if (c->rcv_buf_max < c->rcv_buf)
		c->rcv_buf_max = c->rcv_buf;
	if (!c->delack_us)
		c->delack_us = 1000;
	if (!c->msl_ms)
		c->msl_ms = 30000;
	if (!c->syn_retries)
		c->syn_retries = 6;
	if (!c->data_retries)
		c->data_retries = 15;
	if (!c->orphan_retries)
		c->orphan_retries = 8;
	if (!c->fin_timeout_ms)
		c->fin_timeout_ms = 60000;
	if (!c->rto_min_ms)
		c->rto_min_ms = 200;
	if (!c->rto_init_ms)
		c->rto_init_ms = 1000;
	if (!c->clock_ns) {
		c->clock_ns = net_clock_monotonic_ns;
		c->clock_arg = NULL;
	}
}

static int cfg_check(const struct tcp_stack_cfg *c)
{
	/* The window field with scale 14 covers 2^30; keep the buffers well inside it. */
	if (c->snd_buf_max > (1u << 29) || c->rcv_buf_max > (1u << 29) || c->rcv_buf < 2048)
		return -EINVAL;
	if (c->max_conns > (1u << 22))
		return -EINVAL;
	if (c->cc != TCP_CC_NEWRENO && c->cc != TCP_CC_CUBIC && c->cc != TCP_CC_BBR)
		return -EINVAL;
	return 0;
}

int tcp_stack_create(const struct tcp_stack_cfg *cfg, struct tcp_stack **out)
{
	struct tcp_stack *s;
	int rc;

	if (!cfg || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	cfg_resolve(&s->cfg);
	rc = cfg_check(&s->cfg);
	if (!rc)
		rc = tcp_reass_init();
	if (rc)
		goto fail;
	/* The interface shares the stack's clock so tests drive both with one virtual clock. */
	s->cfg.nif.clock_ns = nif_clock_ns;
	s->cfg.nif.clock_arg = s;
	rc = net_if_create(&s->cfg.nif, &s->nif);
	if (rc)
		goto fail;
	s->pool = net_if_pool(s->nif);
	s->sq_mbufs_max = tcp_sq_mbufs_max(s->pool->size);
	tcp_link_init(&s->conns);
	tcp_link_init(&s->listeners);
	tcp_link_init(&s->deferred);
	tcp_link_init(&s->reap);
	tcp_link_init(&s->zc_free);
	rc = tcp_hash_create(s);
	if (rc)
		goto fail_nif;
	tcp_wheel_init(&s->wheel, TCP_TICK_US, tcp_now_us(s));
	s->next_due_us = UINT64_MAX;
	tcp_isn_init(&s->isn, s->cfg.isn_key);
	tcp_syncookie_init(&s->cookie, s->isn.key);
	net_if_set_l4(s->nif, IPPROTO_TCP, tcp_l4_input, s);
	net_if_set_unreach(s->nif, tcp_unreach, s);
	*out = s;
	return 0;
fail_nif:
	net_if_destroy(s->nif);
fail:
	free(s);
	return rc;
}

/* ARP gave up on dst (from net_if_poll, a callback context): opens towards it fail. */
static void tcp_unreach(void *arg, uint32_t dst)
{
	struct tcp_stack *s = arg;
	struct tcp_link *l;
	bool again = true;

	while (again) {
		again = false;
		for (l = s->conns.next; l != &s->conns; l = l->next) {
			struct tcp_conn *c = TCP_CONTAINER(l, struct tcp_conn, link);

			if (c->raddr != dst || c->state != TCP_SYN_SENT)
				continue;
			s->st.attempt_fails++;
			if (tcp_conn_user_alive(c) && c->ops->on_connected)
				c->ops->on_connected(c->arg, c, -EHOSTUNREACH);
			if (!(c->flags & (TCPF_DEAD | TCPF_ABORTED)) && c->state != TCP_CLOSED)
				tcp_conn_finish(c, -EHOSTUNREACH);
			again = true; /* the list changed under us: start over */
			break;
		}
	}
}

void tcp_stack_destroy(struct tcp_stack *s)
{
	if (!s)
		return;
	s->cb_depth++; /* no callback from here on: frees go through the reap list */
	while (!tcp_link_empty(&s->listeners))
		tcp_listener_close(TCP_CONTAINER(s->listeners.next, struct tcp_listener, link));
	while (!tcp_link_empty(&s->conns)) {
		struct tcp_conn *c = TCP_CONTAINER(s->conns.next, struct tcp_conn, link);

		/* TIME_WAIT too: the ACK of the peer's FIN may have been lost, and once the
		 * stack is gone nothing answers its retransmitted FIN (a kernel's TIME_WAIT
		 * outlives the process; ours does not) */
		if (c->state != TCP_SYN_SENT && c->state != TCP_CLOSED)
			tcp_send_rst_conn(c);
		c->ops = NULL; /* "no callbacks" (tcp.h) */
		tcp_conn_release(c);
	}
	net_if_flush(s->nif);
	/* Zero-copy sends whose memory is released are over (silently: no callbacks). */
	for (struct tcp_link *l = s->reap.next; l != &s->reap; l = l->next) {
		struct tcp_conn *c = TCP_CONTAINER(l, struct tcp_conn, link);

		c->ops = NULL;
		tcp_link_del(&c->defer);
		c->flags &= ~TCPF_DEFER;
		tcp_zc_complete(c, true, -ECONNABORTED);
	}
	s->cb_depth--;
	tcp_reap(s);
	/* What is left still has zero-copy memory in the port: orphan it (the records stay
	 * allocated so that a late free callback touches valid memory). */
	while (!tcp_link_empty(&s->reap))
		tcp_conn_free(TCP_CONTAINER(s->reap.next, struct tcp_conn, link));
	tcp_zc_free_all(s);
	net_if_set_l4(s->nif, IPPROTO_TCP, NULL, NULL);
	tcp_hash_destroy(s);
	net_if_destroy(s->nif);
	free(s);
}

void tcp_stack_input(struct tcp_stack *s, struct rte_mbuf **pkts, uint16_t n)
{
	tcp_stack_clock_hold(s);
	s->cb_depth++;
	net_if_input(s->nif, pkts, n);
	s->cb_depth--;
	if (!s->cb_depth)
		tcp_reap(s);
	tcp_stack_clock_release(s);
}

/* The wheel only when a timer may be due: a busy poller pays O(1) per call. now is the held
 * clock of tcp_stack_poll, the same after the callbacks. */
static void run_timers(struct tcp_stack *s, uint64_t now)
{
	uint64_t next;

	if (now < s->next_due_us)
		return;
	tcp_wheel_run(&s->wheel, now);
	next = tcp_wheel_next_us(&s->wheel, now);
	/* timers armed by the callbacks above lowered next_due_us already */
	if (next == UINT64_MAX)
		s->next_due_us = s->wheel.armed ? now : UINT64_MAX;
	else if (now + next < s->next_due_us || s->next_due_us <= now)
		s->next_due_us = now + next;
}

uint64_t tcp_stack_poll(struct tcp_stack *s)
{
	uint64_t now, t = UINT64_MAX, a;

	tcp_stack_clock_hold(s);
	now = tcp_now_us(s);
	s->cb_depth++;
	run_timers(s, now);
	tcp_run_deferred(s);
	a = net_if_poll(s->nif);
	s->cb_depth--;
	if (!s->cb_depth)
		tcp_reap(s);
	net_if_flush(s->nif);
	if (s->next_due_us != UINT64_MAX)
		t = s->next_due_us > now ? (s->next_due_us - now) * 1000 : 0;
	if (!tcp_link_empty(&s->deferred))
		t = 0;
	tcp_stack_clock_release(s);
	return a < t ? a : t;
}

void tcp_stack_flush(struct tcp_stack *s)
{
	net_if_flush(s->nif);
}

struct net_if *tcp_stack_netif(struct tcp_stack *s)
{
	return s->nif;
}

void tcp_stack_get_stats(const struct tcp_stack *s, struct tcp_stack_stats *st)
{
	*st = s->st;
}
