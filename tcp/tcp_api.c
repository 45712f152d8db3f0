/* Active open and the per-connection queries and options of tcp.h. */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "tcp_int.h"

static int connect_check(struct tcp_stack *s, const struct sockaddr_in *dst,
			 const struct tcp_conn_ops *ops, struct tcp_conn **out)
{
	if (!s || !dst || !ops || !out || dst->sin_family != AF_INET || !dst->sin_port ||
	    !dst->sin_addr.s_addr || dst->sin_addr.s_addr == INADDR_BROADCAST)
		return -EINVAL;
	if (!net_if_reachable(s->nif, dst->sin_addr.s_addr))
		return -ENETUNREACH;
	return 0;
}

int tcp_connect(struct tcp_stack *s, const struct sockaddr_in *dst, uint16_t local_port,
		const struct tcp_conn_ops *ops, void *arg, struct tcp_conn **out)
{
	uint32_t raddr, laddr;
	uint16_t rport;
	struct tcp_conn *c;
	int rc = connect_check(s, dst, ops, out);

	if (rc)
		return rc;
	raddr = dst->sin_addr.s_addr;
	rport = rte_be_to_cpu_16(dst->sin_port);
	laddr = net_if_ip(s->nif);
	if (!local_port) {
		rc = tcp_port_pick(s, raddr, rport, &local_port);
		if (rc)
			return rc;
	} else if (tcp_hash_lookup(s, laddr, local_port, raddr, rport)) {
		return -EADDRINUSE;
	}
	c = tcp_conn_alloc(s);
	if (!c)
		return -ENOMEM;
	c->laddr = laddr;
	c->raddr = raddr;
	c->lport = local_port;
	c->rport = rport;
	rc = tcp_hash_add(c);
	if (rc) {
		tcp_conn_release(c);
		if (!s->cb_depth)
			tcp_reap(s);
		return rc;
	}
	c->ops = ops;
	c->arg = arg;
	tcp_conn_init_send(c, tcp_isn_next(&s->isn, laddr, rte_cpu_to_be_16(local_port), raddr,
					   dst->sin_port, tcp_stack_now_ns(s)));
	tcp_conn_set_state(c, TCP_SYN_SENT);
	s->st.active_opens++;
	tcp_output(c);
	*out = c;
	return 0;
}

enum tcp_state tcp_conn_state(const struct tcp_conn *c)
{
	return c->state;
}

uint32_t tcp_conn_mss(const struct tcp_conn *c)
{
	return c->snd_mss;
}

uint32_t tcp_conn_send_space(const struct tcp_conn *c)
{
	return tcp_send_check(c) ? 0 : tcp_sq_space(c);
}

void tcp_conn_want_writable(struct tcp_conn *c)
{
	if (c && !tcp_send_check(c))
		c->flags |= TCPF_WANT_WRITABLE;
}

void tcp_conn_addrs(const struct tcp_conn *c, struct sockaddr_in *local, struct sockaddr_in *peer)
{
	if (local) {
		memset(local, 0, sizeof(*local));
		local->sin_family = AF_INET;
		local->sin_addr.s_addr = c->laddr;
		local->sin_port = rte_cpu_to_be_16(c->lport);
	}
	if (peer) {
		memset(peer, 0, sizeof(*peer));
		peer->sin_family = AF_INET;
		peer->sin_addr.s_addr = c->raddr;
		peer->sin_port = rte_cpu_to_be_16(c->rport);
	}
}

int tcp_conn_set_keepalive(struct tcp_conn *c, uint32_t idle_s, uint32_t intvl_s, uint32_t probes)
{
	if (!c || (idle_s && (!intvl_s || !probes)))
		return -EINVAL;
	c->ka_idle_s = idle_s;
	c->ka_intvl_s = intvl_s;
	c->ka_probes = probes;
	c->ka_sent = 0;
	if (!idle_s)
		tcp_timer_cancel(&c->s->wheel, &c->t_ka);
	else
		tcp_ka_reset(c);
	return 0;
}

void tcp_conn_set_nagle(struct tcp_conn *c, bool on)
{
	if (on)
		c->flags |= TCPF_NAGLE;
	else
		c->flags &= ~TCPF_NAGLE;
}

void tcp_conn_get_stats(const struct tcp_conn *c, struct tcp_conn_stats *st)
{
	*st = c->st;
	st->state = c->state;
	st->snd_mss = c->snd_mss;
	st->rcv_mss = c->rcv_mss;
	st->snd_wnd = c->snd_wnd;
	st->rcv_wnd = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	st->cwnd = c->cc.cwnd;
	st->ssthresh = c->cc.ssthresh;
	st->snd_buf = tcp_snd_buf_now(c);
	st->rcv_buf = c->rcv_buf;
	st->snd_wscale = c->snd_wscale;
	st->rcv_wscale = c->rcv_wscale;
	st->sack_ok = c->sack_ok;
	st->ts_ok = c->ts_ok;
	st->srtt_us = c->rto.srtt_us;
	st->rttvar_us = c->rto.rttvar_us;
	st->rto_us = tcp_rto_get(&c->rto);
	st->reo_wnd_us = tcp_rack_reo_wnd(&c->rack, c->flags & TCPF_IN_RECOVERY, c->snd_mss,
					  c->rto.srtt_us);
}
