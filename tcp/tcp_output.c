/* Segment output: building one segment (header mbuf chained to clones of the send queue, so a
 * retransmission reuses the same data), the decision what to send now (windows, RFC 6675
 * recovery, sender SWS avoidance, Nagle when asked, FIN), ACKs, challenge ACKs (RFC 5961 7
 * throttling) and RSTs (RFC 9293 3.10.7.1). */
#include <errno.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

uint32_t tcp_rcv_space(const struct tcp_conn *c)
{
	uint32_t buf = c->rcv_buf;

	return c->rcv_held >= buf ? 0 : buf - c->rcv_held;
}

/* The window to announce (RFC 9293 3.8.6.2.2 receiver SWS avoidance: the right edge moves
 * only by at least min(RCV.BUFF/2, MSS); it never moves left). */
uint16_t tcp_rcv_wnd_field(struct tcp_conn *c, bool syn)
{
	uint32_t avail = tcp_rcv_space(c), cur = 0, wnd, thresh, field;

	if (seq_gt(c->rcv_adv, c->rcv_nxt))
		cur = c->rcv_adv - c->rcv_nxt;
	thresh = c->rcv_buf / 2 < c->rcv_mss ? c->rcv_buf / 2 : c->rcv_mss;
	wnd = avail > cur && avail - cur >= thresh ? avail : cur;
	if (syn || !c->ws_ok) {
		field = wnd > 65535 ? 65535 : wnd;
		if (syn && c->state == TCP_SYN_SENT)
			return (uint16_t)field;
	} else {
		/* rounded up, so that scaling never moves the right edge left */
		field = (wnd + (1u << c->rcv_wscale) - 1) >> c->rcv_wscale;
		if (field > 65535)
			field = 65535;
	}
	wnd = syn ? field : field << (c->ws_ok ? c->rcv_wscale : 0);
	if (seq_gt(c->rcv_nxt + wnd, c->rcv_adv))
		c->rcv_adv = c->rcv_nxt + wnd;
	c->st.rcv_wnd = wnd;
	return (uint16_t)field;
}

/* The octets of payload and options a segment may carry: the MSS before the timestamp
 * option was taken off (snd_mss leaves room for that option alone). */
static uint32_t seg_room(const struct tcp_conn *c)
{
	return (uint32_t)c->snd_mss + (c->ts_ok ? 12u : 0u);
}

/* len: the payload. A receiver with a hole puts SACK blocks on every segment, but a data
 * segment sized to snd_mss has no room for them: it would exceed the MTU and be refused
 * (EMSGSIZE), and when both ends hold a hole, each retransmission that would repair the
 * other's never leaves. Such a segment carries only the blocks that fit (the most recent
 * first, RFC 2018 4), possibly none; the pure ACKs carry them all. */
static void fill_opts(struct tcp_conn *c, uint8_t flags, uint32_t len, struct tcp_opt_out *o,
		      struct tcp_sack_block *blk)
{
	if (flags & TCP_F_SYN) {
		o->mss = true;
		o->mss_val = c->rcv_mss;
		o->wscale = c->ws_ok;
		o->wscale_val = c->rcv_wscale;
		o->sack_ok = c->sack_ok;
	}
	if (c->ts_ok) {
		o->ts = true;
		o->ts_val = tcp_now_ms32(c->s);
		o->ts_ecr = (flags & TCP_F_ACK) ? c->ts_recent : 0;
	}
	if (c->sack_ok && !(flags & TCP_F_SYN) && (c->sack_rcv.n || c->dsack_due)) {
		unsigned max = c->ts_ok ? 3 : 4, d = 0;

		if (c->dsack_due) { /* RFC 2883 4: the duplicate first, then the usual blocks */
			blk[0] = (struct tcp_sack_block){ c->dsack_start, c->dsack_end };
			d = 1;
		}
		o->nsack = (uint8_t)(d + tcp_sack_rcv_blocks(&c->sack_rcv, blk + d, max - d));
		o->sack = blk;
		while (o->nsack && len + tcp_opt_len(o) > seg_room(c))
			o->nsack--;
	}
}

static void after_send(struct tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags)
{
	struct tcp_stack *s = c->s;

	s->st.out_segs++;
	c->st.segs_out++;
	if ((len || (flags & (TCP_F_SYN | TCP_F_FIN))) && seq_lt(seq, c->snd_max)) {
		s->st.retrans_segs++;
		c->st.retrans++;
		/* Karn: a retransmission of the timed segment voids its sample */
		if (seq_lt(seq, c->rtt_seq))
			c->flags &= ~TCPF_RTT_TIMING;
	}
	c->st.bytes_sent += len;
	tcp_pace_sent(c, len);
	if (len && c->state >= TCP_ESTABLISHED) {
		tcp_rack_sent(&c->rack, seq, len, c->snd_max, tcp_now_us(s));
		if (c->flags & TCPF_IN_RECOVERY)
			tcp_prr_sent(&c->prr, len);
		if ((c->flags & TCPF_IN_RECOVERY) && seq_lt(seq, c->snd_max))
			tcp_undo_retransmitted(c, seq + len);
	}
	if (flags & TCP_F_ACK) {
		c->dsack_due = false;
		c->last_ack_sent = c->rcv_nxt;
		c->flags &= ~TCPF_ACK_NOW;
		c->unacked_bytes = 0;
		c->comp_fresh = 0;
		c->comp_held = 0;
		tcp_timer_cancel(&s->wheel, &c->t_delack);
	}
	c->last_send_us = tcp_now_us(s);
}

int tcp_send_segment(struct tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags)
{
	struct tcp_stack *s = c->s;
	struct tcp_sack_block blk[TCP_SACK_MAX_BLOCKS];
	struct tcp_opt_out o = {0};
	struct tcp_seg_out out = {0};
	struct rte_mbuf *h = rte_pktmbuf_alloc(s->pool), *d;

	if (!h)
		return -ENOBUFS;
	if (len && len <= TCP_COPY_MAX && len <= rte_pktmbuf_tailroom(h)) {
		/* A small payload is copied behind the headers: one linear mbuf costs less to
		 * build, checksum, transmit and free than a header chained to a clone. */
		uint8_t *dst = (uint8_t *)rte_pktmbuf_append(h, (uint16_t)len);
		if (!tcp_sq_copy_out(c, seq, dst, len)) {
			rte_pktmbuf_free(h);
			return -ENOBUFS;
		}
	} else if (len) {
		d = tcp_sq_clone(c, seq, len);
		if (!d || rte_pktmbuf_chain(h, d)) {
			rte_pktmbuf_free(d);
			rte_pktmbuf_free(h);
			return -ENOBUFS;
		}
	}
	fill_opts(c, flags, len, &o, blk);
	out.src = c->laddr;
	out.dst = c->raddr;
	out.sport = c->lport;
	out.dport = c->rport;
	out.seq = seq;
	out.ack = (flags & TCP_F_ACK) ? c->rcv_nxt : 0;
	out.flags = flags;
	out.wnd = tcp_rcv_wnd_field(c, flags & TCP_F_SYN);
	out.opts = &o;
	out.cksum_offload = net_if_tx_tcp_cksum(s->nif);
	if (tcp_seg_build(h, &out)) {
		rte_pktmbuf_free(h);
		return -ENOBUFS;
	}
	after_send(c, seq, len, flags);
	return net_ip_output(s->nif, h, c->raddr, IPPROTO_TCP);
}

void tcp_send_ack(struct tcp_conn *c)
{
	tcp_send_segment(c, c->snd_nxt, 0, TCP_F_ACK);
}

void tcp_send_challenge_ack(struct tcp_conn *c)
{
	struct tcp_stack *s = c->s;
	uint64_t sec = tcp_now_us(s) / 1000000;

	if (sec != s->challenge_sec) {
		s->challenge_sec = sec;
		s->challenge_cnt = 0;
	}
	if (s->challenge_cnt >= TCP_CHALLENGE_PER_SEC)
		return;
	s->challenge_cnt++;
	s->st.challenge_acks++;
	tcp_send_ack(c);
}

static void send_bare(struct tcp_stack *s, const struct tcp_seg_out *o)
{
	struct rte_mbuf *h = rte_pktmbuf_alloc(s->pool);

	if (!h)
		return;
	if (tcp_seg_build(h, o)) {
		rte_pktmbuf_free(h);
		return;
	}
	s->st.out_rsts++;
	s->st.out_segs++;
	net_ip_output(s->nif, h, o->dst, IPPROTO_TCP);
}

/* RFC 9293 3.10.7.1: RST for a segment that belongs to no connection. Never for a RST. */
void tcp_send_rst_for(struct tcp_stack *s, const struct tcp_seg *seg)
{
	struct tcp_seg_out o = {0};

	if (seg->flags & TCP_F_RST)
		return;
	o.src = seg->dst;
	o.dst = seg->src;
	o.sport = seg->dport;
	o.dport = seg->sport;
	if (seg->flags & TCP_F_ACK) {
		o.seq = seg->ack;
		o.flags = TCP_F_RST;
	} else {
		o.seq = 0;
		o.ack = seg->seq + seg->seg_len;
		o.flags = TCP_F_RST | TCP_F_ACK;
	}
	o.cksum_offload = net_if_tx_tcp_cksum(s->nif);
	send_bare(s, &o);
}

void tcp_send_rst_conn(struct tcp_conn *c)
{
	struct tcp_seg_out o = {0};

	if (c->state == TCP_SYN_SENT || c->state == TCP_CLOSED)
		return;
	o.src = c->laddr;
	o.dst = c->raddr;
	o.sport = c->lport;
	o.dport = c->rport;
	o.seq = c->snd_nxt;
	o.ack = c->rcv_nxt;
	o.flags = TCP_F_RST | TCP_F_ACK;
	o.cksum_offload = net_if_tx_tcp_cksum(c->s->nif);
	send_bare(c->s, &o);
}

/* BBR's cwnd is a bound on what is in the network, so SACKed octets never count against it;
 * the loss-based algorithms count them outside recovery (RFC 5681's FlightSize). */
uint32_t tcp_flight(const struct tcp_conn *c)
{
	bool pipe = (c->flags & TCPF_IN_RECOVERY) || c->cc.algo == TCP_CC_BBR;

	if (pipe && tcp_recovery_on(c))
		return tcp_rack_pipe(&c->rack, c->snd_una, c->snd_max);
	if ((c->flags & TCPF_IN_RECOVERY) && c->sack_ok)
		return tcp_sack_snd_pipe(&c->sack_snd, c->snd_una, c->snd_max, c->snd_mss);
	return c->snd_nxt - c->snd_una;
}

/* A retransmission lost again leaves RFC 6675 waiting for the RTO (NextSeg never goes below
 * HighRxt). When a round of hole retransmissions is older than about two RTTs while the
 * holes remain, they are presumed lost again: HighRxt goes back to SND.UNA so NextSeg
 * retransmits what IsLost still says is missing (a simplified form of RACK, RFC 8985).
 * Without it, steady loss of our own frames turns most lost retransmissions into RTOs. */
static void sack_rxt_round(struct tcp_conn *c)
{
	uint64_t now = tcp_now_us(c->s);
	uint64_t wait = 2ull * c->rto.srtt_us + 4ull * c->rto.rttvar_us;

	if (wait < 2000)
		wait = 2000;
	if (now - c->rxt_round_us < wait)
		return;
	c->sack_snd.high_rxt = c->snd_una;
	c->rxt_round_us = now;
}

/* RFC 6675 5 (C): retransmit what the scoreboard says is lost while the pipe has room. */
static void sack_recovery(struct tcp_conn *c)
{
	uint32_t pipe, seq, len, n = 0;

	sack_rxt_round(c);
	pipe = tcp_flight(c);

	while (c->cc.cwnd > pipe && c->cc.cwnd - pipe >= c->snd_mss && n++ < 64) {
		if (!tcp_sack_snd_next_seg(&c->sack_snd, c->snd_una, c->snd_max, c->snd_mss, &seq,
					   &len))
			return;
		len = tcp_seg_len_at(c, seq, len, c->snd_mss);
		if (!len || tcp_send_segment(c, seq, len, TCP_F_ACK))
			return;
		c->sack_snd.high_rxt = seq + len;
		pipe += len;
	}
}

/* Whether a segment of len octets (less than queued) should wait (RFC 9293 3.8.6.2.1 sender
 * SWS avoidance; Nagle 3.7.4 when enabled). */
static bool hold_back(const struct tcp_conn *c, uint32_t len, uint32_t usable)
{
	bool all = c->snd_nxt + len == c->snd_end;

	if (len >= c->snd_mss || (c->flags & TCPF_PROBE_WINDOW))
		return false;
	if ((c->flags & TCPF_NAGLE) && c->snd_una != c->snd_nxt)
		return true;
	if (all)
		return false;
	return usable < c->snd_mss && len < c->max_snd_wnd / 2;
}

static bool send_data(struct tcp_conn *c)
{
	bool sent = false;
	unsigned budget = 4096;

	while (seq_lt(c->snd_nxt, c->snd_end) && budget--) {
		uint32_t cwnd = c->cc.cwnd + c->lt_extra;
		uint32_t wnd = c->snd_wnd < cwnd ? c->snd_wnd : cwnd;
		uint32_t flight = tcp_flight(c);
		uint32_t usable = wnd > flight ? wnd - flight : 0;
		uint32_t len = tcp_seg_len_at(c, c->snd_nxt, usable, c->snd_mss);
		uint8_t fl = TCP_F_ACK | TCP_F_PSH;

		if (!len || hold_back(c, len, usable) || tcp_pace_wait(c))
			break;
		if ((c->flags & TCPF_FIN_QUEUED) && c->snd_nxt + len == c->snd_end)
			fl |= TCP_F_FIN;
		if (seq_geq(c->snd_nxt, c->snd_max) && !(c->flags & TCPF_RTT_TIMING)) {
			c->flags |= TCPF_RTT_TIMING;
			c->rtt_seq = c->snd_nxt + len;
			c->rtt_start_us = tcp_now_us(c->s);
		}
		if (tcp_send_segment(c, c->snd_nxt, len, fl))
			break;
		c->snd_nxt += len;
		if (fl & TCP_F_FIN) {
			c->snd_nxt++;
			c->flags |= TCPF_FIN_SENT;
		}
		c->snd_max = seq_max(c->snd_max, c->snd_nxt);
		sent = true;
	}
	return sent;
}

static bool send_fin(struct tcp_conn *c)
{
	if (!(c->flags & TCPF_FIN_QUEUED) || c->snd_nxt != c->snd_end)
		return false;
	if (tcp_send_segment(c, c->snd_nxt, 0, TCP_F_FIN | TCP_F_ACK))
		return false;
	c->snd_nxt++;
	c->flags |= TCPF_FIN_SENT;
	c->snd_max = seq_max(c->snd_max, c->snd_nxt);
	return true;
}

/* The first SYN (or SYN-ACK). One refused on the way out (no mbuf, or the ARP hold queue of
 * an unresolved neighbour is full: net_ip_output's -ENOBUFS) counts as sent and lost: the
 * retransmission timer sends it again. Nothing else would: a connection left in SYN-SENT
 * without the timer waited for ever (rdma_cm's connect timer reported it: issue 26). */
static void send_syn(struct tcp_conn *c)
{
	uint8_t fl = c->state == TCP_SYN_SENT ? TCP_F_SYN : TCP_F_SYN | TCP_F_ACK;

	if (c->snd_nxt != c->iss)
		return;
	c->flags |= TCPF_RTT_TIMING;
	c->rtt_seq = c->iss + 1;
	c->rtt_start_us = tcp_now_us(c->s);
	(void)tcp_send_segment(c, c->iss, 0, fl); /* ARP refusals: arp_unresolved_drops */
	c->snd_nxt = c->snd_max = c->iss + 1;
	tcp_rtx_arm(c);
}

void tcp_output(struct tcp_conn *c)
{
	bool sent = false;

	switch (c->state) {
	case TCP_CLOSED:
	case TCP_LISTEN:
		return;
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		send_syn(c);
		return;
	case TCP_TIME_WAIT:
		if (c->flags & TCPF_ACK_NOW)
			tcp_send_ack(c);
		return;
	default:
		break;
	}
	if ((c->flags & TCPF_IN_RECOVERY) && tcp_recovery_on(c))
		tcp_recovery_send(c);
	else if ((c->flags & TCPF_IN_RECOVERY) && c->sack_ok)
		sack_recovery(c);
	sent = send_data(c);
	if (send_fin(c))
		sent = true;
	if (!sent && (c->flags & TCPF_ACK_NOW))
		tcp_send_ack(c);
	if (c->snd_una != c->snd_max) {
		if (!tcp_timer_armed(&c->t_rtx))
			tcp_rtx_arm(c);
		if (sent && !tcp_timer_armed(&c->t_tlp))
			tcp_tlp_arm(c);
	} else if (seq_lt(c->snd_nxt, c->snd_end) && !tcp_timer_armed(&c->t_persist) &&
		   !tcp_timer_armed(&c->t_pace)) {
		tcp_persist_arm(c); /* data waits, nothing in flight: the window is too small */
	}
}
