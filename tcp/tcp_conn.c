/* Connection objects: allocation, negotiated parameters, state changes, and the lifetime
 * rules of tcp.h (callbacks owed are deferred to tcp_stack_poll when they arise outside
 * input/poll; a connection is freed only at a reap point, never under a running callback). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

uint16_t tcp_stack_rcv_mss(const struct tcp_stack *s)
{
	return (uint16_t)(net_if_mtu(s->nif) - 40);
}

/* Scale so that the largest receive window fits the 16-bit field (RFC 7323 2.2). */
uint8_t tcp_stack_rcv_wscale(const struct tcp_stack *s)
{
	uint8_t ws = 0;

	while (ws < TCP_MAX_WSCALE && (s->cfg.rcv_buf_max >> ws) > 65535)
		ws++;
	return ws;
}

struct tcp_conn *tcp_conn_alloc(struct tcp_stack *s)
{
	struct tcp_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->sq = calloc(TCP_SQ_INIT, sizeof(*c->sq));
	if (!c->sq) {
		free(c);
		return NULL;
	}
	if (tcp_rack_init(&c->rack)) {
		free(c->sq);
		free(c);
		return NULL;
	}
	c->sq_cap = TCP_SQ_INIT;
	c->s = s;
	c->state = TCP_CLOSED;
	tcp_link_init(&c->zc_list);
	tcp_link_add_tail(&s->conns, &c->link);
	c->ws_ok = !s->cfg.no_wscale;
	c->ts_ok = !s->cfg.no_timestamps;
	c->sack_ok = !s->cfg.no_sack;
	c->rcv_mss = tcp_stack_rcv_mss(s);
	c->rcv_buf = s->cfg.rcv_buf;
	c->peer_mss = TCP_DEFAULT_MSS;
	c->snd_mss = TCP_DEFAULT_MSS;
	c->rcv_wscale = tcp_stack_rcv_wscale(s);
	tcp_rto_init(&c->rto, s->cfg.rto_init_ms * 1000, s->cfg.rto_min_ms * 1000, TCP_RTO_MAX_US);
	tcp_cc_init(&c->cc, s->cfg.cc, c->snd_mss);
	tcp_sack_rcv_init(&c->sack_rcv);
	tcp_sack_snd_init(&c->sack_snd);
	tcp_timers_init(c);
	c->last_rcv_us = tcp_now_us(s);
	s->st.cur_conns++;
	return c;
}

void tcp_conn_set_state(struct tcp_conn *c, enum tcp_state st)
{
	if (c->state == TCP_TIME_WAIT)
		c->s->st.time_wait--;
	if (st == TCP_TIME_WAIT)
		c->s->st.time_wait++;
	c->state = st;
}

void tcp_conn_init_send(struct tcp_conn *c, uint32_t iss)
{
	c->iss = iss;
	c->snd_una = c->snd_nxt = c->snd_max = iss;
	c->snd_end = iss + 1; /* the SYN; data starts at iss + 1 */
	c->rec_start = c->rec_base = c->rec_walk = iss + 1;
	c->rtt_seq = iss;
}

/* BBR's rate samples come from RACK's log, which only a SACK connection keeps: without SACK
 * the connection uses CUBIC. */
static enum tcp_cc_algo cc_for(const struct tcp_conn *c)
{
	if (c->s->cfg.cc == TCP_CC_BBR && !c->sack_ok)
		return TCP_CC_CUBIC;
	return c->s->cfg.cc;
}

/* Options of the peer's SYN (RFC 9293 3.7.1, RFC 7323 2.2/3.2, RFC 2018 2): an option holds
 * only when both sides offered it. */
void tcp_conn_apply_syn_opts(struct tcp_conn *c, const struct tcp_seg *seg)
{
	const struct tcp_opts *o = &seg->opts;
	uint32_t mss;

	c->peer_mss = o->has_mss && o->mss ? o->mss : TCP_DEFAULT_MSS;
	c->ws_ok = c->ws_ok && o->has_wscale;
	if (c->ws_ok)
		c->snd_wscale = o->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : o->wscale;
	else
		c->snd_wscale = c->rcv_wscale = 0;
	c->ts_ok = c->ts_ok && o->has_ts;
	c->sack_ok = c->sack_ok && o->sack_ok;
	mss = c->peer_mss < c->rcv_mss ? c->peer_mss : c->rcv_mss;
	if (c->ts_ok)
		mss -= 12; /* the timestamp option rides on every segment */
	if (mss < 64)
		mss = 64;
	c->snd_mss = (uint16_t)mss;
	tcp_cc_init(&c->cc, cc_for(c), mss);
	tcp_cc_seed(&c->cc, c->iss);
	/* only BBR reads the delivery rate: the others do not pay for its snapshots */
	tcp_rate_init(&c->rate);
	c->rack.rate = c->cc.algo == TCP_CC_BBR ? &c->rate : NULL;
	c->st.snd_mss = mss;
	c->st.rcv_mss = c->rcv_mss;
}

void tcp_conn_established(struct tcp_conn *c)
{
	tcp_conn_set_state(c, TCP_ESTABLISHED);
	/* RFC 6298 5.7: a SYN that timed out leaves RTO at 3 s unless a sample was taken. */
	if (c->flags & TCPF_SYN_RETX)
		tcp_rto_syn_timeout_reset(&c->rto);
	c->last_send_us = tcp_now_us(c->s);
	c->cc.recover = c->snd_una; /* RFC 6582 3.2: recover starts at the initial sequence */
	tcp_ka_reset(c);
}

bool tcp_conn_user_alive(const struct tcp_conn *c)
{
	return c->ops && !(c->flags & (TCPF_USER_GONE | TCPF_DEAD | TCPF_ABORTED));
}

void tcp_conn_defer(struct tcp_conn *c)
{
	if (c->flags & TCPF_DEFER)
		return;
	c->flags |= TCPF_DEFER;
	tcp_link_add_tail(&c->s->deferred, &c->defer);
}

/* Drop every queue and timer, unhash: the connection no longer exists on the wire. Memory
 * goes at the next reap (once zero-copy memory is released). */
void tcp_conn_release(struct tcp_conn *c)
{
	tcp_timers_cancel_all(c);
	tcp_hash_del(c);
	if (c->listener)
		tcp_listen_conn_gone(c);
	tcp_sq_purge(c);
	tcp_reass_purge(c);
	if (c->state == TCP_TIME_WAIT)
		tcp_conn_set_state(c, TCP_CLOSED);
	c->state = TCP_CLOSED;
	c->flags |= TCPF_DEAD;
	tcp_link_del(&c->link);
	tcp_link_add_tail(&c->s->reap, &c->link);
}

/* The connection is over: on_closed(err) is owed to the user (after the zero-copy
 * completions), then the object goes. */
void tcp_conn_finish(struct tcp_conn *c, int err)
{
	bool user = tcp_conn_user_alive(c);

	if (c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT) {
		if (err == -ECONNRESET)
			c->s->st.estab_resets++;
	}
	tcp_timers_cancel_all(c);
	tcp_hash_del(c);
	tcp_sq_purge(c);
	c->state = TCP_CLOSED;
	if (!user) {
		tcp_zc_complete(c, true, err ? err : -ECONNABORTED);
		tcp_conn_release(c);
		return;
	}
	c->close_err = err;
	c->flags |= TCPF_FINISH;
	tcp_conn_defer(c);
	if (c->s->cb_depth)
		tcp_run_deferred(c->s);
}

/* Callbacks owed to one connection, in the order tcp.h promises: data, EOF, zero-copy
 * completions, writable, and on_closed last. Stops as soon as a callback ended the handle. */
static void run_one(struct tcp_conn *c)
{
	c->flags &= ~TCPF_DEFER;
	if (tcp_conn_user_alive(c) && !(c->flags & TCPF_CLOSED_BY_USER) && c->listener == NULL)
		tcp_reass_deliver_pending(c);
	if (c->flags & (TCPF_DEAD | TCPF_ABORTED))
		goto zc;
	if ((c->flags & TCPF_EOF_PENDING) && !c->rxq_head && tcp_conn_user_alive(c) &&
	    !c->listener) {
		c->flags &= ~TCPF_EOF_PENDING;
		if (!(c->flags & TCPF_CLOSED_BY_USER) && c->ops->on_eof)
			c->ops->on_eof(c->arg, c);
	}
zc:
	tcp_zc_complete(c, false, 0);
	if ((c->flags & TCPF_WRITABLE_DUE) && tcp_conn_user_alive(c)) {
		c->flags &= ~TCPF_WRITABLE_DUE;
		if (c->ops->on_writable)
			c->ops->on_writable(c->arg, c);
	}
	if ((c->flags & TCPF_FINISH) && c->zc_outstanding == 0) {
		c->flags &= ~TCPF_FINISH;
		/* Owed even when the engine released the TCB meanwhile (a RST or a re-opening SYN
		 * in TIME_WAIT, in the same burst as the FIN that entered it): only tcp_abort
		 * and a delivered on_closed end the user's claim to it. */
		if (c->ops && !(c->flags & (TCPF_USER_GONE | TCPF_ABORTED)) && c->ops->on_closed)
			c->ops->on_closed(c->arg, c, c->close_err);
		c->flags |= TCPF_USER_GONE;
		if (c->state == TCP_CLOSED && !(c->flags & TCPF_DEAD))
			tcp_conn_release(c);
	}
}

void tcp_run_deferred(struct tcp_stack *s)
{
	unsigned budget = 1u << 20;

	while (!tcp_link_empty(&s->deferred) && budget--) {
		struct tcp_link *l = s->deferred.next;
		struct tcp_conn *c = TCP_CONTAINER(l, struct tcp_conn, defer);

		tcp_link_del(l);
		run_one(c);
	}
}

void tcp_conn_free(struct tcp_conn *c)
{
	struct tcp_link *l;

	/* Orphan zero-copy records the port still references (stack teardown only). */
	for (l = c->zc_list.next; l != &c->zc_list; l = l->next)
		TCP_CONTAINER(l, struct tcp_zc, link)->conn = NULL;
	tcp_link_del(&c->defer);
	tcp_link_del(&c->link);
	c->s->st.cur_conns--;
	free(c->sq);
	free(c->ooo);
	tcp_rack_free(&c->rack);
	free(c);
}

void tcp_reap(struct tcp_stack *s)
{
	struct tcp_link *l = s->reap.next;

	while (l != &s->reap) {
		struct tcp_conn *c = TCP_CONTAINER(l, struct tcp_conn, link);

		l = l->next;
		if (c->zc_outstanding == 0 && !(c->flags & TCPF_DEFER))
			tcp_conn_free(c);
	}
}
