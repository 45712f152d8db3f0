/* Segment arrival (RFC 9293 3.10.7): parse, find the connection or listener, and answer
 * segments for nobody with RST (3.10.7.1). The per-state work is in tcp_state.c. */
#include <errno.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

/* RFC 6191 / 9293 3.10.7.4 TIME-WAIT reopen: a new SYN may take over the 4-tuple when its
 * timestamp is newer than TS.Recent, or (no timestamps) its sequence number is above the
 * old connection's. */
static bool time_wait_reopen(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (c->ts_ok && seg->opts.has_ts)
		return seq_gt(seg->opts.ts_val, c->ts_recent);
	return seq_gt(seg->seq, c->rcv_nxt);
}

static void no_conn(struct tcp_stack *s, struct rte_mbuf *m, struct tcp_seg *seg)
{
	struct tcp_listener *l = tcp_listener_find(s, seg->dport);

	if (seg->flags & TCP_F_RST)
		goto drop;
	if (l) {
		/* LISTEN (3.10.7.2): ACK -> RST unless it returns a SYN cookie; SYN -> new child
		 * (or a cookie); anything else dropped. */
		if ((seg->flags & TCP_F_ACK) && tcp_listen_cookie_ack(l, m, seg))
			return;
		if (seg->flags & TCP_F_ACK)
			tcp_send_rst_for(s, seg);
		else if (seg->flags & TCP_F_SYN)
			tcp_listen_syn(l, m, seg);
		goto drop;
	}
	s->st.no_port_rsts++;
	tcp_send_rst_for(s, seg);
drop:
	rte_pktmbuf_free(m);
}

void tcp_l4_input(void *arg, struct rte_mbuf *m, const struct net_ip_info *info)
{
	struct tcp_stack *s = arg;
	struct tcp_seg seg;
	struct tcp_conn *c;
	int rc;

	s->st.in_segs++;
	rc = tcp_seg_parse(m, info, &seg);
	if (rc || seg.opts_bad) {
		s->st.in_errs++;
		if (rc == -EBADMSG)
			s->st.in_csum_errs++;
		if (rc == -EBADMSG && seg.csum_partial)
			s->st.in_csum_partial++;
		rte_pktmbuf_free(m);
		return;
	}
	if (seg.flags & TCP_F_RST)
		s->st.in_rsts++;
	c = tcp_hash_lookup(s, seg.dst, seg.dport, seg.src, seg.sport);
	if (c && c->state == TCP_TIME_WAIT && (seg.flags & (TCP_F_SYN | TCP_F_ACK | TCP_F_RST)) ==
	    TCP_F_SYN && tcp_listener_find(s, seg.dport) && time_wait_reopen(c, &seg)) {
		tcp_conn_release(c);
		c = NULL;
	}
	if (!c) {
		no_conn(s, m, &seg);
		return;
	}
	c->st.segs_in++;
	if (c->state == TCP_SYN_SENT)
		tcp_state_syn_sent(c, m, &seg);
	else
		tcp_state_sync(c, m, &seg);
}
