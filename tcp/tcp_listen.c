/* Passive open: listeners, SYN in LISTEN (RFC 9293 3.10.7.2), the backlog (half-open plus
 * not-yet-accepted children) and the accept queue. */
#include <errno.h>
#include <stdlib.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

int tcp_listen(struct tcp_stack *s, uint16_t port, int backlog,
	       const struct tcp_listener_ops *ops, void *arg, struct tcp_listener **out)
{
	struct tcp_listener *l;

	if (!s || !port || !out || backlog < 0)
		return -EINVAL;
	if (tcp_listener_find(s, port))
		return -EADDRINUSE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->s = s;
	l->port = port;
	l->backlog = backlog ? backlog : 1;
	l->ops = ops;
	l->arg = arg;
	tcp_link_init(&l->acceptq);
	tcp_link_add_tail(&s->listeners, &l->link);
	*out = l;
	return 0;
}

uint16_t tcp_listener_port(const struct tcp_listener *l)
{
	return l->port;
}

struct tcp_conn *tcp_listen_child(struct tcp_listener *l, const struct tcp_seg *seg)
{
	struct tcp_conn *c = tcp_conn_alloc(l->s);

	if (!c)
		return NULL;
	c->laddr = seg->dst;
	c->raddr = seg->src;
	c->lport = seg->dport;
	c->rport = seg->sport;
	if (tcp_hash_add(c)) {
		tcp_conn_release(c);
		return NULL;
	}
	c->listener = l;
	l->pending++;
	tcp_link_add_tail(&l->acceptq, &c->lq);
	return c;
}

/* A SYN (no ACK, no RST) for a listening port: a new child in SYN-RECEIVED answering with
 * SYN-ACK while the backlog has room; past it a SYN cookie, which holds nothing; dropped and
 * counted when the accept queue alone fills the backlog (the application is not accepting:
 * the peer retries) or cookies are off. */
void tcp_listen_syn(struct tcp_listener *l, struct rte_mbuf *m, const struct tcp_seg *seg)
{
	struct tcp_stack *s = l->s;
	struct tcp_conn *c;

	(void)m;
	if (l->pending >= l->backlog) {
		if (l->pending - l->half_open >= l->backlog || s->cfg.no_syncookies)
			s->st.syn_backlog_drops++;
		else
			tcp_listen_cookie_reply(l, seg);
		return;
	}
	c = tcp_listen_child(l, seg);
	if (!c)
		return;
	c->irs = seg->seq;
	c->rcv_nxt = seg->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	tcp_conn_apply_syn_opts(c, seg);
	tcp_conn_init_send(c, tcp_isn_next(&s->isn, c->laddr, rte_cpu_to_be_16(c->lport), c->raddr,
					   rte_cpu_to_be_16(c->rport), tcp_stack_now_ns(s)));
	c->snd_wnd = seg->wnd; /* never scaled in a SYN (RFC 7323 2.2) */
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = c->iss;
	if (c->ts_ok) {
		c->ts_recent = seg->opts.ts_val;
		c->ts_recent_ms = tcp_now_us(s) / 1000;
	}
	l->half_open++;
	c->flags |= TCPF_HALF_OPEN;
	tcp_conn_set_state(c, TCP_SYN_RECEIVED);
	s->st.passive_opens++;
	tcp_output(c);
}

/* on_acceptable runs from input directly (a callback context). */
static void half_open_over(struct tcp_conn *c)
{
	if (!(c->flags & TCPF_HALF_OPEN))
		return;
	c->flags &= ~TCPF_HALF_OPEN;
	c->listener->half_open--;
}

void tcp_listen_conn_established(struct tcp_conn *c)
{
	struct tcp_listener *l = c->listener;

	if (l)
		half_open_over(c);
	if (l && l->ops && l->ops->on_acceptable)
		l->ops->on_acceptable(l->arg, l);
}

void tcp_listen_conn_gone(struct tcp_conn *c)
{
	if (!c->listener)
		return;
	half_open_over(c);
	c->listener->pending--;
	tcp_link_del(&c->lq);
	c->listener = NULL;
}

static bool acceptable(const struct tcp_conn *c)
{
	return c->state != TCP_SYN_RECEIVED && c->state != TCP_CLOSED;
}

int tcp_accept(struct tcp_listener *l, const struct tcp_conn_ops *ops, void *arg,
	       struct tcp_conn **out)
{
	struct tcp_link *x;

	if (!l || !ops || !out)
		return -EINVAL;
	for (x = l->acceptq.next; x != &l->acceptq; x = x->next) {
		struct tcp_conn *c = TCP_CONTAINER(x, struct tcp_conn, lq);

		if (!acceptable(c))
			continue;
		tcp_listen_conn_gone(c);
		c->ops = ops;
		c->arg = arg;
		c->flags |= TCPF_ACCEPTED;
		/* Data or a FIN that arrived before: delivered at the next poll (tcp.h). */
		if (c->rxq_head || (c->flags & TCPF_EOF_PENDING))
			tcp_conn_defer(c);
		*out = c;
		return 0;
	}
	return -EAGAIN;
}

void tcp_listener_close(struct tcp_listener *l)
{
	struct tcp_stack *s;

	if (!l)
		return;
	s = l->s;
	while (!tcp_link_empty(&l->acceptq)) {
		struct tcp_conn *c = TCP_CONTAINER(l->acceptq.next, struct tcp_conn, lq);

		tcp_listen_conn_gone(c);
		tcp_send_rst_conn(c);
		tcp_conn_release(c);
	}
	tcp_link_del(&l->link);
	free(l);
	if (!s->cb_depth)
		tcp_reap(s);
}
