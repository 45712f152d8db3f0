/* Loss recovery of a SACK connection: RACK (RFC 8985) decides what is lost, from the time each
 * segment was last sent and what the peer has delivered since, instead of counting duplicate
 * ACKs; recovery starts when RACK marks a loss, sends the lost segments first (each again if
 * RACK finds its retransmission lost too), and PRR (RFC 6937) sets how much goes out per
 * ACK. A DSACK (RFC 2883) widens RACK's reordering window, so a path that reorders more
 * than a quarter of the minimum RTT stops costing spurious recoveries (and tcp_undo.c gives
 * back the window a spurious one took). */
#include <rte_mbuf.h>

#include "tcp_int.h"

bool tcp_recovery_on(const struct tcp_conn *c)
{
	return c->sack_ok && !c->rack.broken;
}

static struct tcp_rack_ack rack_ack_of(const struct tcp_conn *c, const struct tcp_seg *seg)
{
	return (struct tcp_rack_ack){
		.now_us = tcp_now_us(c->s),
		.has_ts = c->ts_ok && seg->opts.has_ts,
		.ts_ecr = seg->opts.ts_ecr,
	};
}

/* RFC 2883 4: the first block is a DSACK when it lies below the cumulative ACK or inside the
 * second block. */
static bool has_dsack(const struct tcp_seg *seg)
{
	const struct tcp_sack_block *b = seg->opts.sack;

	if (!seg->opts.nsack || !seq_lt(b[0].start, b[0].end))
		return false;
	if (seq_leq(b[0].end, seg->ack))
		return true;
	return seg->opts.nsack >= 2 && seq_geq(b[0].start, b[1].start) &&
	       seq_leq(b[0].end, b[1].end);
}

static void rack_update(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_rack_ack a = rack_ack_of(c, seg);

	tcp_rack_acked(&c->rack, c->snd_una, &a);
	for (unsigned i = 0; i < seg->opts.nsack; i++) {
		uint32_t start = seg->opts.sack[i].start, end = seg->opts.sack[i].end;

		if (seq_lt(start, end) && seq_leq(end, c->snd_max) && seq_gt(end, c->snd_una))
			tcp_rack_sacked(&c->rack, seq_lt(start, c->snd_una) ? c->snd_una : start,
					end, &a);
	}
	if (has_dsack(seg)) {
		tcp_rack_dsack(&c->rack, c->snd_una, c->snd_max);
		c->st.dsacks++;
		tcp_undo_dsack(c, seg);
	}
}

/* RFC 8985 6.2 step 5, and the reordering timer for what is not yet overdue. */
uint32_t tcp_recovery_detect(struct tcp_conn *c)
{
	bool rec = c->flags & TCPF_IN_RECOVERY;
	uint32_t reo = tcp_rack_reo_wnd(&c->rack, rec, c->snd_mss, c->rto.srtt_us);
	uint64_t tmo;
	uint32_t newly = tcp_rack_detect(&c->rack, tcp_now_us(c->s), reo, &tmo);

	if (tmo)
		tcp_reo_arm(c, tmo);
	else
		tcp_timer_cancel(&c->s->wheel, &c->t_reo);
	return newly;
}

/* RFC 6675 5 (and RFC 6582 3.2 step 1): a loss RACK marked starts recovery unless it belongs
 * to the window a recovery (or an RTO) already dealt with. */
static void maybe_enter(struct tcp_conn *c)
{
	uint32_t flight = c->snd_max - c->snd_una;

	if ((c->flags & TCPF_IN_RECOVERY) || !c->rack.lost_bytes ||
	    !seq_geq(c->snd_una, c->cc.recover) || c->state < TCP_ESTABLISHED)
		return;
	tcp_undo_mark(c);
	c->rec_rto = false;
	tcp_cc_enter_recovery(&c->cc, flight, c->snd_max, tcp_now_us(c->s));
	tcp_prr_init(&c->prr, flight);
	c->flags |= TCPF_IN_RECOVERY;
	c->flags &= ~TCPF_RTT_TIMING;
	c->s->st.fast_retrans++;
	c->st.fast_retrans++;
	tcp_timer_cancel(&c->s->wheel, &c->t_tlp);
}

/* PRR: cwnd becomes what is in flight plus what this ACK allows to send. */
static void prr_ack(struct tcp_conn *c, uint32_t delivered)
{
	uint32_t pipe = tcp_rack_pipe(&c->rack, c->snd_una, c->snd_max);
	uint32_t cnt = tcp_prr_sndcnt(&c->prr, delivered, pipe, c->cc.ssthresh, c->snd_mss);

	c->cc.cwnd = pipe + cnt;
}

/* What the ACK reports delivered (RFC 6937's DeliveredData): SND.UNA's advance plus the
 * change in SACKed octets. */
static uint32_t delivered_by(const struct tcp_conn *c, uint32_t old_una, uint32_t old_sacked)
{
	int64_t d = (int64_t)(uint32_t)(c->snd_una - old_una) + (int64_t)c->rack.sacked_bytes -
		    (int64_t)old_sacked;

	return d > 0 ? (uint32_t)d : 0;
}

/* BBR instead of PRR: the ACK's delivery-rate sample updates the model, which sets cwnd and
 * the pacing rate in recovery too. */
static void bbr_ack(struct tcp_conn *c, uint32_t prior_pipe, uint32_t lost)
{
	uint64_t now = tcp_now_us(c->s);
	struct tcp_rate_sample rs;
	struct tcp_bbr_ack a;

	tcp_rate_sample(&c->rate, c->rack.min_rtt_us, now, &rs);
	a = (struct tcp_bbr_ack){
		.now_us = now,
		.delivered = c->rate.delivered,
		.rs = &rs,
		.lost = lost,
		.inflight = tcp_rack_pipe(&c->rack, c->snd_una, c->snd_max),
		.prior_inflight = prior_pipe,
		.in_recovery = c->flags & TCPF_IN_RECOVERY,
		.srtt_us = c->rto.have_sample ? c->rto.srtt_us : 0,
	};
	tcp_cc_bbr_ack(&c->cc, &a);
	if (c->cc.bbr.want_app_limited)
		tcp_rate_app_limited(&c->rate, a.inflight);
}

void tcp_recovery_on_ack(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t old_una,
			 uint32_t old_sacked, uint32_t prior_pipe)
{
	uint32_t lost;

	rack_update(c, seg);
	lost = tcp_recovery_detect(c);
	tcp_undo_check(c, seg, old_una);
	if (!(c->flags & TCPF_IN_RECOVERY))
		maybe_enter(c);
	if (c->cc.algo == TCP_CC_BBR)
		bbr_ack(c, prior_pipe, lost);
	else if (c->flags & TCPF_IN_RECOVERY)
		prr_ack(c, delivered_by(c, old_una, old_sacked));
}

/* The ACK reached the recovery point: cwnd is ssthresh (RFC 6937 3, at the end of recovery);
 * after an RTO it keeps what slow start has grown, as below ssthresh a jump would be a burst. */
void tcp_recovery_end(struct tcp_conn *c)
{
	c->flags &= ~TCPF_IN_RECOVERY;
	c->cc.in_recovery = false;
	c->cc.bytes_acked = 0;
	/* BBR gives its window back on this ACK's sample instead (tcp_bbr.c) */
	if (c->cc.algo != TCP_CC_BBR && (!c->rec_rto || c->cc.cwnd > c->cc.ssthresh))
		c->cc.cwnd = c->cc.ssthresh;
	tcp_rack_recovery_done(&c->rack);
}

/* Retransmit what RACK marked lost while the congestion window has room; an entry longer
 * than one segment may take several (record boundaries). */
void tcp_recovery_send(struct tcp_conn *c)
{
	uint32_t seq, len, n = 0;

	while (n++ < 64 && tcp_rack_next_lost(&c->rack, &seq, &len)) {
		uint32_t end = seq + len;

		while (seq_lt(seq, end)) {
			uint32_t pipe = tcp_flight(c);
			uint32_t l;

			if (tcp_pace_wait(c))
				return;
			if (c->cc.cwnd <= pipe || c->cc.cwnd - pipe < (end - seq < c->snd_mss
								    ? end - seq : c->snd_mss))
				return;
			l = tcp_seg_len_at(c, seq, end - seq, c->snd_mss);
			if (!l || tcp_send_segment(c, seq, l, TCP_F_ACK))
				return;
			seq += l;
		}
	}
}

static void reo_fire(struct tcp_timer *t, void *arg)
{
	struct tcp_conn *c = arg;

	(void)t;
	if (c->snd_una == c->snd_max || c->state < TCP_ESTABLISHED ||
	    c->state == TCP_TIME_WAIT || !tcp_recovery_on(c))
		return;
	tcp_recovery_detect(c);
	maybe_enter(c);
	if ((c->flags & TCPF_IN_RECOVERY) && c->cc.algo != TCP_CC_BBR)
		prr_ack(c, 0);
	tcp_output(c);
}

void tcp_recovery_timer_init(struct tcp_conn *c)
{
	tcp_timer_init(&c->t_reo, reo_fire, c);
}

/* A retransmission timeout (RFC 6298 5.4-5.6, RFC 5681 eq. 4) that keeps what the peer SACKed:
 * everything else is marked lost and resent from one segment of cwnd up, by the recovery's
 * rules, so data the peer holds does not go again and a loss among the resent segments is
 * found by RACK rather than by another timeout. False when that does not apply (no SACK, or
 * only the FIN is outstanding): the caller goes back to SND.UNA. */
bool tcp_recovery_rto(struct tcp_conn *c)
{
	uint32_t flight = c->snd_max - c->snd_una;

	if (!tcp_recovery_on(c))
		return false;
	tcp_rack_mark_all_lost(&c->rack);
	if (!c->rack.lost_bytes)
		return false;
	tcp_undo_mark(c);
	c->rec_rto = true;
	tcp_cc_on_rto(&c->cc, flight, c->snd_max, tcp_now_us(c->s));
	tcp_rto_backoff(&c->rto);
	tcp_timer_cancel(&c->s->wheel, &c->t_reo);
	c->cc.in_recovery = true;
	c->flags |= TCPF_IN_RECOVERY;
	c->flags &= ~TCPF_RTT_TIMING;
	c->dupacks = 0;
	c->lt_extra = 0;
	tcp_prr_init(&c->prr, flight);
	c->cc.cwnd = tcp_rack_pipe(&c->rack, c->snd_una, c->snd_max) + c->snd_mss;
	tcp_output(c);
	return true;
}
