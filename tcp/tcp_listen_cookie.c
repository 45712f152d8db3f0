/* A listener whose SYN queue is full answers with a SYN cookie (tcp_syncookie.h) and keeps
 * nothing; the ACK that returns the cookie opens the connection straight into ESTABLISHED.
 * Half-open memory is then bounded by the backlog whatever the SYN rate. */
#include <rte_mbuf.h>

#include "tcp_int.h"
#include "tcp_syncookie.h"

static uint64_t now_s(const struct tcp_stack *s)
{
	return tcp_now_us(s) / 1000000u;
}

static struct tcp_cookie_tuple cookie_tuple(const struct tcp_seg *seg, uint32_t peer_isn)
{
	struct tcp_cookie_tuple t = {
		.laddr = seg->dst,
		.raddr = seg->src,
		.lport = rte_cpu_to_be_16(seg->dport),
		.rport = rte_cpu_to_be_16(seg->sport),
		.peer_isn = peer_isn,
	};
	return t;
}

/* The window field of a SYN-ACK is never scaled (RFC 7323 2.2). */
static uint16_t syn_ack_window(const struct tcp_stack *s)
{
	return s->cfg.rcv_buf > 65535 ? 65535 : (uint16_t)s->cfg.rcv_buf;
}

/* The options of our SYN-ACK: only what both sides offer, as on a child's. */
static void cookie_opts(struct tcp_stack *s, const struct tcp_seg *seg, struct tcp_opt_out *o)
{
	const struct tcp_opts *in = &seg->opts;
	struct tcp_cookie_opts keep = {
		.ws_ok = in->has_wscale && !s->cfg.no_wscale,
		.wscale = in->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : in->wscale,
		.sack_ok = in->sack_ok && !s->cfg.no_sack,
	};

	o->mss = true;
	o->mss_val = tcp_stack_rcv_mss(s);
	o->wscale = keep.ws_ok;
	o->wscale_val = tcp_stack_rcv_wscale(s);
	o->sack_ok = keep.sack_ok;
	o->ts = in->has_ts && !s->cfg.no_timestamps;
	if (o->ts) {
		o->ts_val = tcp_syncookie_ts_encode(tcp_now_ms32(s), &keep);
		o->ts_ecr = in->ts_val;
	}
}

void tcp_listen_cookie_reply(struct tcp_listener *l, const struct tcp_seg *seg)
{
	struct tcp_stack *s = l->s;
	struct tcp_cookie_tuple t = cookie_tuple(seg, seg->seq);
	uint16_t peer_mss = seg->opts.has_mss && seg->opts.mss ? seg->opts.mss : TCP_DEFAULT_MSS;
	struct tcp_opt_out o = {0};
	struct tcp_seg_out out = {0};
	struct rte_mbuf *h = rte_pktmbuf_alloc(s->pool);

	if (!h)
		return;
	cookie_opts(s, seg, &o);
	out.src = seg->dst;
	out.dst = seg->src;
	out.sport = seg->dport;
	out.dport = seg->sport;
	out.seq = tcp_syncookie_make(&s->cookie, &t, peer_mss, now_s(s));
	out.ack = seg->seq + 1;
	out.flags = TCP_F_SYN | TCP_F_ACK;
	out.wnd = syn_ack_window(s);
	out.opts = &o;
	out.cksum_offload = net_if_tx_tcp_cksum(s->nif);
	if (tcp_seg_build(h, &out)) {
		rte_pktmbuf_free(h);
		return;
	}
	l->cookie_sent_us = tcp_now_us(s);
	l->cookies_used = true;
	s->st.syncookies_sent++;
	s->st.out_segs++;
	net_ip_output(s->nif, h, seg->src, IPPROTO_TCP);
}

/* The SYN the cookie stands for, rebuilt: its options as the cookie and the echoed TSval
 * kept them. */
static void rebuild_syn(struct tcp_stack *s, const struct tcp_seg *ack, uint16_t peer_mss,
			struct tcp_seg *syn)
{
	struct tcp_cookie_opts keep = {0};

	*syn = *ack;
	syn->seq = ack->seq - 1;
	syn->opts.has_mss = true;
	syn->opts.mss = peer_mss;
	syn->opts.has_ts = ack->opts.has_ts && !s->cfg.no_timestamps;
	if (syn->opts.has_ts)
		tcp_syncookie_ts_decode(ack->opts.ts_ecr, &keep);
	syn->opts.has_wscale = keep.ws_ok;
	syn->opts.wscale = keep.wscale;
	syn->opts.sack_ok = keep.sack_ok;
}

/* The child of a good cookie, ESTABLISHED with the SYN and its ACK behind it. */
static struct tcp_conn *cookie_child(struct tcp_listener *l, const struct tcp_seg *ack,
				     const struct tcp_seg *syn)
{
	struct tcp_stack *s = l->s;
	struct tcp_conn *c = tcp_listen_child(l, ack);

	if (!c)
		return NULL;
	c->irs = syn->seq;
	c->rcv_nxt = ack->seq;
	c->rcv_adv = c->rcv_nxt + syn_ack_window(s); /* what our SYN-ACK announced */
	tcp_conn_apply_syn_opts(c, syn);
	tcp_conn_init_send(c, ack->ack - 1);
	c->snd_una = c->snd_nxt = c->snd_max = ack->ack;
	c->rtt_seq = ack->ack;
	c->snd_wnd = (uint32_t)ack->wnd << c->snd_wscale;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = ack->seq;
	c->snd_wl2 = ack->ack;
	if (c->ts_ok) {
		c->ts_recent = ack->opts.ts_val;
		c->ts_recent_ms = tcp_now_us(s) / 1000;
	}
	tcp_conn_established(c);
	s->st.passive_opens++;
	return c;
}

/* Not the ACK of a cookie we could have sent lately: the caller answers as LISTEN does. */
static bool cookie_recent(const struct tcp_listener *l)
{
	return l->cookies_used &&
	       tcp_now_us(l->s) - l->cookie_sent_us < TCP_COOKIE_LIFE_S * 1000000ull;
}

bool tcp_listen_cookie_ack(struct tcp_listener *l, struct rte_mbuf *m, struct tcp_seg *seg)
{
	struct tcp_stack *s = l->s;
	struct tcp_cookie_tuple t = cookie_tuple(seg, seg->seq - 1);
	struct tcp_seg syn;
	struct tcp_conn *c;
	uint16_t peer_mss;

	if ((seg->flags & (TCP_F_SYN | TCP_F_RST | TCP_F_ACK)) != TCP_F_ACK || !cookie_recent(l))
		return false;
	if (!tcp_syncookie_check(&s->cookie, &t, seg->ack - 1, now_s(s), &peer_mss)) {
		s->st.syncookies_failed++;
		return false;
	}
	s->st.syncookies_ok++;
	rebuild_syn(s, seg, peer_mss, &syn);
	if (l->pending - l->half_open >= l->backlog) {
		/* the application is not accepting: the peer's retransmission may find room */
		s->st.syn_backlog_drops++;
		rte_pktmbuf_free(m);
		return true;
	}
	c = cookie_child(l, seg, &syn);
	if (!c) {
		rte_pktmbuf_free(m);
		return true;
	}
	tcp_state_sync(c, m, seg); /* the ACK may carry data or a FIN */
	if (!(c->flags & TCPF_DEAD) && c->state != TCP_CLOSED)
		tcp_listen_conn_established(c);
	return true;
}
