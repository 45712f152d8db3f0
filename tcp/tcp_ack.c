/* The ACK field (RFC 9293 3.10.7.4 fifth step): acceptability (RFC 5961 5.2), the send queue
 * release, RTT samples (RFC 6298 with Karn; RFC 7323 timestamps), congestion control
 * (RFC 5681 / 6582, SACK loss detection of RFC 6675), the send window update, and the
 * callbacks an ACK can make due (zero-copy completion, writable). */
#include <errno.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

static void rtt_sample(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t ack)
{
	uint64_t now = tcp_now_us(c->s);
	int64_t rtt = -1;

	/* The timed segment gives microseconds; it is never a retransmission (Karn). */
	if ((c->flags & TCPF_RTT_TIMING) && seq_geq(ack, c->rtt_seq)) {
		rtt = (int64_t)(now - c->rtt_start_us);
		c->flags &= ~TCPF_RTT_TIMING;
	} else if (c->ts_ok && seg->opts.has_ts && seg->opts.ts_ecr) {
		/* RFC 7323 4.1: the echo names the transmission acknowledged, retransmitted or
		 * not, so the sample is valid even after a retransmission. */
		uint32_t d = (uint32_t)(now / 1000) - seg->opts.ts_ecr;

		if (d < 600000u)
			rtt = (int64_t)d * 1000 + 500; /* ms clock: the middle of the tick */
	}
	if (rtt >= 0)
		tcp_rto_sample(&c->rto, rtt > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt);
}

static void enter_recovery(struct tcp_conn *c)
{
	uint32_t flight = c->snd_max - c->snd_una;

	tcp_cc_enter_recovery(&c->cc, flight, c->snd_max, tcp_now_us(c->s));
	c->flags |= TCPF_IN_RECOVERY;
	c->s->st.fast_retrans++;
	c->st.fast_retrans++;
	c->flags &= ~TCPF_RTT_TIMING;
	/* Fast retransmit (RFC 5681 3.2 step 2): the first unacknowledged segment. */
	tcp_send_segment(c, c->snd_una, tcp_seg_len_at(c, c->snd_una, c->snd_mss, c->snd_mss),
			 TCP_F_ACK);
	if (c->sack_ok)
		c->sack_snd.high_rxt = c->snd_una + c->snd_mss;
	c->rxt_round_us = tcp_now_us(c->s);
	tcp_rtx_restart(c);
}

static bool is_dupack(const struct tcp_conn *c, const struct tcp_seg *seg, uint32_t wnd,
		      uint32_t newly_sacked)
{
	if (seg->ack != c->snd_una || c->snd_una == c->snd_max)
		return false;
	if (newly_sacked)
		return true; /* RFC 6675 2: an ACK carrying new SACK information */
	return seg->payload_len == 0 && !(seg->flags & (TCP_F_SYN | TCP_F_FIN)) && wnd == c->snd_wnd;
}

static bool sack_says_lost(const struct tcp_conn *c)
{
	return c->sack_ok && c->snd_una != c->snd_max &&
	       tcp_sack_snd_sacked_bytes(&c->sack_snd) > 2u * c->snd_mss;
}

/* RFC 6582 3.2 step 1: no new recovery for losses of the window already recovered. With
 * SACK (RFC 6675 5) only the RecoveryPoint matters: a hole right at it is a new loss. */
static bool may_recover(const struct tcp_conn *c)
{
	if (c->sack_ok)
		return seq_geq(c->snd_una, c->cc.recover);
	return seq_gt(c->snd_una, c->cc.recover);
}

static void dupack(struct tcp_conn *c)
{
	bool lost;

	c->dupacks++;
	c->st.dup_acks++;
	if (c->flags & TCPF_IN_RECOVERY) {
		if (!c->sack_ok)
			tcp_cc_dupack_in_recovery(&c->cc);
		return;
	}
	/* with RACK, loss is a matter of time (tcp_recovery.c), not of duplicate counts */
	lost = !tcp_recovery_on(c) && (c->dupacks >= 3 || sack_says_lost(c));
	if (lost && may_recover(c)) {
		c->lt_extra = 0;
		enter_recovery(c);
	} else if (c->dupacks <= 2) {
		/* RFC 3042 limited transmit: a new segment for each of the first two duplicate
		 * ACKs keeps the ACK clock going, so a loss near the end of a flight still gets
		 * its three duplicates instead of waiting for the RTO. */
		c->lt_extra = c->dupacks * c->snd_mss;
	}
}

/* The ACK answers our tail loss probe (it echoes the probe's TSval), data is still
 * outstanding and the receiver holds nothing above: the rest of the tail is lost too. */
static bool probe_confirmed_tail_loss(const struct tcp_conn *c, const struct tcp_seg *seg)
{
	return (c->flags & TCPF_TLP_DONE) && !(c->flags & TCPF_IN_RECOVERY) && c->ts_ok &&
	       seg->opts.has_ts && seg->opts.ts_ecr == c->tlp_ts && c->sack_snd.n == 0 &&
	       seq_lt(c->snd_una, c->snd_max) && c->state >= TCP_ESTABLISHED;
}

static void new_ack(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t ack)
{
	uint32_t flight = c->snd_max - c->snd_una;
	uint32_t acked = ack - c->snd_una;
	uint32_t data_end = seq_lt(ack, c->snd_end) ? ack : c->snd_end;

	rtt_sample(c, seg, ack);
	/* Our SYN takes the first sequence number. Only the first ACK past iss covers it
	 * (nothing is counted as acked before it); after 2^32 octets snd_una is back at iss. */
	if (c->snd_una == c->iss && c->st.bytes_acked == 0)
		acked--;
	/* Not compared with iss: after 2 GiB sent, serial arithmetic reads iss as ahead and the
	 * send queue would never be freed again (the transfer would stall at 2^31 octets). The
	 * queue starts at iss + 1, so the ACK of our SYN alone frees nothing. */
	if (seq_gt(data_end, c->snd_una))
		tcp_sq_ack(c, data_end);
	c->snd_una = ack;
	if (seq_lt(c->snd_nxt, ack))
		c->snd_nxt = ack;
	tcp_sack_snd_advance(&c->sack_snd, ack);
	c->st.bytes_acked += acked;
	c->dupacks = 0;
	c->lt_extra = 0;
	c->rtx_count = 0;
	if ((c->flags & TCPF_IN_RECOVERY) && tcp_recovery_on(c)) {
		if (seq_geq(ack, c->cc.recover))
			tcp_recovery_end(c);
	} else if (c->flags & TCPF_IN_RECOVERY) {
		if (tcp_cc_recovery_ack(&c->cc, ack, acked, flight)) {
			c->flags &= ~TCPF_IN_RECOVERY;
		} else if (!c->sack_ok) {
			/* NewReno partial ACK (RFC 6582 3.2 step 3): retransmit the next hole. */
			tcp_send_segment(c, ack, tcp_seg_len_at(c, ack, c->snd_mss, c->snd_mss),
					 TCP_F_ACK);
		}
	} else if (c->state >= TCP_ESTABLISHED) {
		tcp_cc_on_ack(&c->cc, acked, tcp_now_us(c->s), c->rto.srtt_us, flight);
	}
	/* Once passed, recover only has to stay below snd_una (may_recover): keep it one below,
	 * so that 2 GiB without a loss do not make serial arithmetic read it as ahead again,
	 * which would refuse fast recovery and leave every loss to the RTO. */
	if (!(c->flags & TCPF_IN_RECOVERY) && seq_gt(c->snd_una, c->cc.recover + 1))
		c->cc.recover = c->snd_una - 1;
	if (probe_confirmed_tail_loss(c, seg)) {
		/* keep repairing the tail: one segment per probe-answering ACK */
		c->tlp_ts = tcp_now_ms32(c->s);
		tcp_send_segment(c, ack, tcp_seg_len_at(c, ack, c->snd_mss, c->snd_mss),
				 TCP_F_ACK);
	} else {
		c->flags &= ~TCPF_TLP_DONE;
	}
	if (c->snd_una == c->snd_max) {
		tcp_timer_cancel(&c->s->wheel, &c->t_rtx);
		tcp_timer_cancel(&c->s->wheel, &c->t_tlp);
		tcp_timer_cancel(&c->s->wheel, &c->t_reo);
	} else {
		tcp_rtx_restart(c);
		tcp_tlp_arm(c);
	}
}

static void window_update(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t wnd)
{
	bool was_zero = c->snd_wnd == 0;

	if (!(seq_lt(c->snd_wl1, seg->seq) ||
	      (c->snd_wl1 == seg->seq && seq_leq(c->snd_wl2, seg->ack))))
		return;
	c->snd_wnd = wnd;
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = seg->ack;
	if (wnd > c->max_snd_wnd)
		c->max_snd_wnd = wnd;
	if (was_zero && wnd) {
		tcp_timer_cancel(&c->s->wheel, &c->t_persist);
		c->persist_backoff = 0;
	}
}

/* Callbacks an ACK makes due, run here (input is a callback context). */
static void after_ack(struct tcp_conn *c)
{
	tcp_zc_complete(c, false, 0);
	if ((c->flags & TCPF_WANT_WRITABLE) && tcp_conn_user_alive(c) &&
	    !(c->flags & TCPF_FIN_QUEUED) && tcp_sq_space(c) > 0) {
		c->flags &= ~TCPF_WANT_WRITABLE;
		if (c->ops->on_writable)
			c->ops->on_writable(c->arg, c);
	}
}

bool tcp_ack_process(struct tcp_conn *c, const struct tcp_seg *seg)
{
	uint32_t ack = seg->ack, newly = 0, old_una = c->snd_una;
	uint32_t old_sacked = c->rack.sacked_bytes;
	uint32_t prior_pipe = tcp_rack_pipe(&c->rack, c->snd_una, c->snd_max);
	/* RFC 7323 2.2: the window of a SYN is never scaled. */
	uint32_t wnd = seg->flags & TCP_F_SYN ? seg->wnd : (uint32_t)seg->wnd << c->snd_wscale;

	if (seq_gt(ack, c->snd_max)) {
		/* Acknowledges something never sent: RFC 5961 5.2 makes the answer a
		 * (throttled) challenge ACK, which also ends ACK wars with a confused peer. */
		tcp_send_challenge_ack(c);
		return false;
	}
	if (seq_lt(ack, c->snd_una - c->max_snd_wnd)) {
		tcp_send_challenge_ack(c); /* RFC 5961 5.2 */
		return false;
	}
	if (c->sack_ok && seg->opts.nsack)
		newly = tcp_sack_snd_update(&c->sack_snd, c->snd_una, c->snd_max, seg->opts.sack,
					    seg->opts.nsack);
	if (seq_gt(ack, c->snd_una)) {
		new_ack(c, seg, ack);
		/* The scoreboard may already show the next loss (RFC 6675 5: a cumulative ACK
		 * can start recovery too), e.g. right after the previous recovery ended. */
		if (!tcp_recovery_on(c) && !(c->flags & TCPF_IN_RECOVERY) && sack_says_lost(c) &&
		    may_recover(c))
			enter_recovery(c);
	} else if (is_dupack(c, seg, wnd, newly)) {
		dupack(c);
	}
	if (tcp_recovery_on(c) && c->state >= TCP_ESTABLISHED) {
		tcp_recovery_on_ack(c, seg, old_una, old_sacked, prior_pipe);
		if (c->snd_una != c->snd_max)
			tcp_tlp_arm(c); /* the probe timer runs from the last ACK */
	}
	window_update(c, seg, wnd);
	after_ack(c);
	return true;
}
