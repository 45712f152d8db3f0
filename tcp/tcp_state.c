/* The RFC 9293 3.10.7 "SEGMENT ARRIVES" state machine for SYN-SENT and the synchronized
 * states, with RFC 5961 (RST and SYN challenge ACKs) and RFC 7323 (PAWS) checks. Each step
 * is one function in the order of the RFC; a step returning false means "drop". */
#include <errno.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

static bool conn_gone(const struct tcp_conn *c)
{
	return (c->flags & (TCPF_DEAD | TCPF_ABORTED)) || c->state == TCP_CLOSED;
}

static void connected(struct tcp_conn *c, int err)
{
	if (tcp_conn_user_alive(c) && c->ops->on_connected)
		c->ops->on_connected(c->arg, c, err);
}

/* ---- SYN-SENT (3.10.7.3) ---------------------------------------------------------------- */
static void syn_sent_fail(struct tcp_conn *c, int err)
{
	c->s->st.attempt_fails++;
	connected(c, err);
	if (!conn_gone(c))
		tcp_conn_finish(c, err);
}

void tcp_state_syn_sent(struct tcp_conn *c, struct rte_mbuf *m, const struct tcp_seg *seg)
{
	bool ack = seg->flags & TCP_F_ACK;

	rte_pktmbuf_free(m); /* data on a SYN-ACK is not kept: the peer retransmits it */
	if (ack && (seq_leq(seg->ack, c->iss) || seq_gt(seg->ack, c->snd_nxt))) {
		if (!(seg->flags & TCP_F_RST))
			tcp_send_rst_for(c->s, seg);
		return;
	}
	if (seg->flags & TCP_F_RST) {
		if (ack) /* RFC 5961 3.2 holds in SYN-SENT through the ACK check above */
			syn_sent_fail(c, -ECONNREFUSED);
		return;
	}
	if (!(seg->flags & TCP_F_SYN))
		return;
	c->irs = seg->seq;
	c->rcv_nxt = seg->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	tcp_conn_apply_syn_opts(c, seg);
	if (c->ts_ok) {
		c->ts_recent = seg->opts.ts_val;
		c->ts_recent_ms = tcp_now_us(c->s) / 1000;
	}
	c->snd_wnd = seg->wnd;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = seg->ack;
	if (ack) {
		tcp_ack_process(c, seg);
		tcp_conn_established(c);
		c->flags |= TCPF_ACK_NOW;
		tcp_output(c);
		connected(c, 0);
		return;
	}
	/* Simultaneous open: SYN-RECEIVED, answer SYN-ACK with our original ISS. */
	tcp_conn_set_state(c, TCP_SYN_RECEIVED);
	tcp_send_segment(c, c->iss, 0, TCP_F_SYN | TCP_F_ACK);
}

/* ---- synchronized states (3.10.7.4) ------------------------------------------------------- */
static uint32_t rcv_wnd(const struct tcp_conn *c)
{
	return seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
}

/* First: the sequence-number acceptability table. */
static bool seq_acceptable(const struct tcp_conn *c, const struct tcp_seg *seg)
{
	uint32_t wnd = rcv_wnd(c), len = seg->seg_len;

	if (len == 0 && wnd == 0)
		return seg->seq == c->rcv_nxt;
	if (len == 0)
		return seq_in(seg->seq, c->rcv_nxt, c->rcv_nxt + wnd);
	if (wnd == 0)
		return false;
	return seq_in(seg->seq, c->rcv_nxt, c->rcv_nxt + wnd) ||
	       seq_in(seg->seq + len - 1, c->rcv_nxt, c->rcv_nxt + wnd);
}

/* Second: RST (RFC 5961 3.2: exact match resets, in window gets a challenge ACK). */
static void rst_arrived(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (seg->seq != c->rcv_nxt) {
		tcp_send_challenge_ack(c);
		return;
	}
	switch (c->state) {
	case TCP_SYN_RECEIVED:
		if (c->listener) { /* passive: back to LISTEN, i.e. the child goes */
			tcp_conn_release(c);
			return;
		}
		syn_sent_fail(c, -ECONNREFUSED);
		return;
	case TCP_TIME_WAIT:
		tcp_conn_release(c);
		return;
	default:
		tcp_conn_finish(c, -ECONNRESET);
	}
}

/* Fourth: SYN in a synchronized state (RFC 5961 4.2: challenge ACK). A retransmitted SYN in
 * SYN-RECEIVED means our SYN-ACK was lost: send it again. */
static void syn_arrived(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (c->state == TCP_SYN_RECEIVED && seg->seq == c->irs && !(seg->flags & TCP_F_ACK)) {
		tcp_send_segment(c, c->iss, 0, TCP_F_SYN | TCP_F_ACK);
		return;
	}
	tcp_send_challenge_ack(c);
}

/* Fifth, in SYN-RECEIVED: the ACK of our SYN makes the connection ESTABLISHED. */
static bool syn_rcvd_ack(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (!seq_gt(seg->ack, c->snd_una) || seq_gt(seg->ack, c->snd_nxt)) {
		tcp_send_rst_for(c->s, seg);
		return false;
	}
	c->snd_wnd = (uint32_t)seg->wnd << c->snd_wscale;
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = seg->ack;
	tcp_conn_established(c);
	if (c->listener)
		tcp_listen_conn_established(c);
	else
		connected(c, 0);
	return !conn_gone(c);
}

void tcp_state_fin_acked(struct tcp_conn *c)
{
	switch (c->state) {
	case TCP_FIN_WAIT_1:
		tcp_conn_set_state(c, TCP_FIN_WAIT_2);
		if (c->flags & TCPF_CLOSED_BY_USER)
			tcp_timer_arm_ms(c, &c->t_ka, c->s->cfg.fin_timeout_ms);
		break;
	case TCP_CLOSING:
		tcp_enter_time_wait(c);
		break;
	case TCP_LAST_ACK:
		tcp_conn_finish(c, 0);
		break;
	default:
		break;
	}
}

static bool our_fin_acked(const struct tcp_conn *c)
{
	return (c->flags & TCPF_FIN_SENT) && c->snd_una == c->snd_end + 1;
}

/* Eighth: the peer's FIN, once every octet before it was received. */
static void fin_arrived(struct tcp_conn *c)
{
	c->flags |= TCPF_ACK_NOW | TCPF_EOF_PENDING;
	switch (c->state) {
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
		tcp_conn_set_state(c, TCP_CLOSE_WAIT);
		break;
	case TCP_FIN_WAIT_1:
		if (our_fin_acked(c))
			tcp_enter_time_wait(c);
		else
			tcp_conn_set_state(c, TCP_CLOSING);
		break;
	case TCP_FIN_WAIT_2:
		tcp_enter_time_wait(c);
		break;
	case TCP_TIME_WAIT:
		tcp_enter_time_wait(c); /* restart the 2 MSL timeout */
		break;
	default:
		break;
	}
	if (c->state != TCP_TIME_WAIT && !conn_gone(c))
		tcp_conn_defer(c); /* on_eof after the data, from the deferred list */
}

/* The ACK for a dropped segment whose data we hold already names it (RFC 2883). A refused
 * pure ACK (an old one that a path reordered behind newer ones fails PAWS) is answered once
 * per TCP_OOW_ACK_US at most, as Linux does: the answer tells the peer nothing it needs, and
 * two ends that each refuse the other's ACKs would otherwise answer one another for ever. */
static void dup_ack(struct tcp_conn *c, const struct tcp_seg *seg)
{
	uint32_t end = seg->seq + seg->payload_len;
	uint64_t now = tcp_now_us(c->s);

	if (!seg->payload_len && !(seg->flags & (TCP_F_SYN | TCP_F_FIN))) {
		if (c->oow_ack_us && now - c->oow_ack_us < TCP_OOW_ACK_US)
			return;
		c->oow_ack_us = now;
	}
	if (seg->payload_len && seq_leq(end, c->rcv_nxt))
		tcp_reass_dsack(c, seg->seq, end);
	tcp_send_ack(c);
}

static bool pre_checks(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (tcp_paws_reject(c, seg)) {
		c->s->st.paws_drops++;
		if (!(seg->flags & TCP_F_RST))
			dup_ack(c, seg);
		return false;
	}
	if (!seq_acceptable(c, seg)) {
		if (!(seg->flags & TCP_F_RST)) {
			c->s->st.dup_segs++;
			dup_ack(c, seg);
		}
		return false;
	}
	if (seg->flags & TCP_F_RST) {
		rst_arrived(c, seg);
		return false;
	}
	if (seg->flags & TCP_F_SYN) {
		syn_arrived(c, seg);
		return false;
	}
	return (seg->flags & TCP_F_ACK) != 0;
}

static bool ack_step(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (c->state == TCP_SYN_RECEIVED && !syn_rcvd_ack(c, seg))
		return false;
	if (c->state == TCP_TIME_WAIT)
		return true;
	if (!tcp_ack_process(c, seg))
		return false;
	if (conn_gone(c))
		return false;
	if (our_fin_acked(c))
		tcp_state_fin_acked(c);
	return !conn_gone(c);
}

void tcp_state_sync(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg *seg)
{
	bool fin = seg->flags & TCP_F_FIN;

	if (!pre_checks(c, seg) || !ack_step(c, seg)) {
		rte_pktmbuf_free(m);
		goto out;
	}
	tcp_paws_update(c, seg);
	c->last_rcv_us = tcp_now_us(c->s);
	c->ka_sent = 0;
	if (c->state == TCP_TIME_WAIT) {
		rte_pktmbuf_free(m);
		if (fin) /* a retransmitted FIN: ACK it again, restart 2 MSL */
			fin_arrived(c);
		goto out; /* anything else gets no answer (an ACK for an ACK would never end) */
	}
	/* Seventh and eighth: text and FIN go through reassembly, which calls back for FIN. */
	if (c->flags & TCPF_FIN_RCVD) {
		if (seg->payload_len || fin)
			c->flags |= TCPF_ACK_NOW; /* retransmission past the FIN: ACK it */
		rte_pktmbuf_free(m);
		goto out;
	}
	tcp_reass_data(c, m, seg);
	if (conn_gone(c))
		return;
	if (c->flags & TCPF_FIN_RCVD) /* reassembly reached the FIN just now */
		fin_arrived(c);
out:
	if (!conn_gone(c))
		tcp_output(c);
}

void tcp_enter_time_wait(struct tcp_conn *c)
{
	tcp_conn_set_state(c, TCP_TIME_WAIT);
	tcp_timers_cancel_all(c);
	tcp_timer_arm_ms(c, &c->t_ka, 2ull * c->s->cfg.msl_ms);
	tcp_sq_purge(c);
	/* tcp.h: the user hears on_closed(0) now; TIME_WAIT stays with the engine. */
	if (tcp_conn_user_alive(c) && !(c->flags & TCPF_FINISH)) {
		c->close_err = 0;
		c->flags |= TCPF_FINISH;
		tcp_conn_defer(c);
	}
}
