/* BBR v1: the model (bandwidth and RTT filters, round trips), the state machine, and the
 * pacing rate and cwnd it sets (tcp_bbr.h). */
#include "tcp_bbr.h"

#include <string.h>

#define HIGH_GAIN (TCP_BBR_UNIT * 2885u / 1000u + 1u) /* 2/ln 2: doubles the rate a round */
#define DRAIN_GAIN (TCP_BBR_UNIT * 1000u / 2885u)     /* its inverse: empties that queue */
#define PROBE_BW_CWND_GAIN (2u * TCP_BBR_UNIT)
#define FULL_BW_GROWTH (TCP_BBR_UNIT * 5u / 4u)      /* STARTUP goes on while bw grows 25 % */
#define FULL_BW_ROUNDS 3u
#define MIN_CWND_SEGS 4u      /* enough for delayed ACKs to keep the ACK clock going */
#define INIT_CWND_SEGS 10u
#define PACING_MARGIN_PCT 1u  /* pace a little below the estimate, so queues drain */
#define AGG_MAX_US 100000u    /* aggregation room: at most 100 ms at the bandwidth */
#define AGG_EPOCH_MAX (1u << 20) /* octets: an epoch this long is no burst any more */

static const uint32_t cycle_gain[TCP_BBR_CYCLE_LEN] = {
	TCP_BBR_UNIT * 5 / 4, TCP_BBR_UNIT * 3 / 4, TCP_BBR_UNIT, TCP_BBR_UNIT,
	TCP_BBR_UNIT, TCP_BBR_UNIT, TCP_BBR_UNIT, TCP_BBR_UNIT,
};

static uint32_t min_cwnd(const struct tcp_bbr *b) { return MIN_CWND_SEGS * b->smss; }
static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }
static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

static uint64_t rate_of(uint64_t bw, uint32_t gain)
{
	return bw * gain / TCP_BBR_UNIT * (100u - PACING_MARGIN_PCT) / 100u;
}

/* The initial rate: the initial window over 1 ms (no RTT known yet) at STARTUP's gain. */
uint32_t tcp_bbr_init(struct tcp_bbr *b, uint32_t smss, uint32_t rand)
{
	memset(b, 0, sizeof(*b));
	b->smss = smss;
	b->mode = TCP_BBR_STARTUP;
	b->pacing_gain = HIGH_GAIN;
	b->cwnd_gain = HIGH_GAIN;
	b->min_rtt_us = UINT32_MAX;
	b->rand = rand;
	b->pacing_rate = rate_of((uint64_t)INIT_CWND_SEGS * smss * 1000u, HIGH_GAIN);
	return INIT_CWND_SEGS * smss;
}

uint64_t tcp_bbr_bw(const struct tcp_bbr *b)
{
	uint64_t bw = 0;

	for (unsigned i = 0; i < TCP_BBR_BW_ROUNDS; i++)
		if (b->bw_last_round - b->bw_round_no[i] < TCP_BBR_BW_ROUNDS &&
		    b->bw_round_max[i] > bw)
			bw = b->bw_round_max[i];
	return bw;
}

uint32_t tcp_bbr_bdp(const struct tcp_bbr *b, uint64_t bw, uint32_t gain)
{
	uint64_t bdp, v;

	if (b->min_rtt_us == UINT32_MAX)
		return INIT_CWND_SEGS * b->smss;
	bdp = (bw * b->min_rtt_us + 999999u) / 1000000u;
	v = (bdp * gain + TCP_BBR_UNIT - 1) / TCP_BBR_UNIT;
	return v > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)v;
}

/* Room for the ACKs a receiver or the path holds back and releases at once: without it the
 * sender stalls, its window full, until the burst arrives. Only once STARTUP is over, whose
 * gain leaves room enough. */
static uint32_t agg_room(const struct tcp_bbr *b, uint64_t bw)
{
	uint64_t room = b->agg_max[0] > b->agg_max[1] ? b->agg_max[0] : b->agg_max[1];
	uint64_t cap = bw * AGG_MAX_US / 1000000u;

	if (!b->full_bw_reached)
		return 0;
	return (uint32_t)(room < cap ? room : cap);
}

/* The BDP plus room for segments the sender and receiver hold back (whole segments, delayed
 * ACKs), and two more while PROBE_BW probes. */
static uint32_t target_inflight(const struct tcp_bbr *b, uint64_t bw, uint32_t gain)
{
	uint32_t t = tcp_bbr_bdp(b, bw, gain) + 3u * b->smss;

	if (b->mode == TCP_BBR_PROBE_BW && b->cycle_idx == 0)
		t += 2u * b->smss;
	return t;
}

static void bw_filter_add(struct tcp_bbr *b, uint64_t bw)
{
	unsigned i = (unsigned)(b->round_count % TCP_BBR_BW_ROUNDS);

	b->bw_last_round = b->round_count;
	if (b->bw_round_no[i] != b->round_count) {
		b->bw_round_no[i] = b->round_count;
		b->bw_round_max[i] = 0;
	}
	if (bw > b->bw_round_max[i])
		b->bw_round_max[i] = bw;
}

static void update_bw(struct tcp_bbr *b, const struct tcp_bbr_ack *a)
{
	const struct tcp_rate_sample *rs = a->rs;
	uint64_t bw;

	b->round_start = false;
	if (!rs->valid)
		return;
	if (rs->prior_delivered >= b->next_round_delivered) {
		b->next_round_delivered = a->delivered;
		b->round_count++;
		b->round_start = true;
		b->packet_conservation = false;
	}
	bw = rs->delivered * 1000000u / rs->interval_us;
	/* an application-limited sample only shows a lower bound of the path's rate */
	if (!rs->app_limited || bw >= tcp_bbr_bw(b))
		bw_filter_add(b, bw);
}

/* The aggregation estimate: an epoch starts whenever the ACKs are no more than the bandwidth
 * explains; what they deliver beyond it within the epoch is the burst. */
static void update_aggregation(struct tcp_bbr *b, const struct tcp_bbr_ack *a, uint32_t cwnd)
{
	uint32_t acked = a->rs->acked;
	uint64_t expected, extra;

	if (!a->rs->valid || !acked)
		return;
	if (b->round_start && ++b->agg_rounds >= TCP_BBR_AGG_ROUNDS) {
		b->agg_rounds = 0;
		b->agg_idx ^= 1;
		b->agg_max[b->agg_idx] = 0;
	}
	expected = tcp_bbr_bw(b) * (a->now_us - b->agg_epoch_us) / 1000000u;
	if (b->agg_epoch_acked <= expected || b->agg_epoch_acked + acked >= AGG_EPOCH_MAX) {
		b->agg_epoch_acked = 0;
		b->agg_epoch_us = a->now_us;
		expected = 0;
	}
	b->agg_epoch_acked += acked;
	extra = b->agg_epoch_acked > expected ? b->agg_epoch_acked - expected : 0;
	if (extra > cwnd)
		extra = cwnd;
	if (extra > b->agg_max[b->agg_idx])
		b->agg_max[b->agg_idx] = (uint32_t)extra;
}

static void enter_probe_bw(struct tcp_bbr *b, uint64_t now_us)
{
	b->mode = TCP_BBR_PROBE_BW;
	/* a random phase, never the draining one: flows sharing a link probe at different
	 * times */
	b->cycle_idx = (TCP_BBR_CYCLE_LEN - b->rand % (TCP_BBR_CYCLE_LEN - 1)) % TCP_BBR_CYCLE_LEN;
	b->cycle_stamp_us = now_us;
}

static bool cycle_phase_over(const struct tcp_bbr *b, const struct tcp_bbr_ack *a)
{
	bool full_length = a->now_us - b->cycle_stamp_us > b->min_rtt_us;
	uint64_t bw = tcp_bbr_bw(b);

	if (b->pacing_gain == TCP_BBR_UNIT)
		return full_length;
	/* probing: until the flight reached the higher target, or loss says the queue is full */
	if (b->pacing_gain > TCP_BBR_UNIT)
		return full_length &&
		       (a->lost || a->prior_inflight >= target_inflight(b, bw, b->pacing_gain));
	/* draining: until the queue the probe built is gone */
	return full_length || a->prior_inflight <= target_inflight(b, bw, TCP_BBR_UNIT);
}

static void update_cycle_phase(struct tcp_bbr *b, const struct tcp_bbr_ack *a)
{
	if (b->mode == TCP_BBR_PROBE_BW && cycle_phase_over(b, a)) {
		b->cycle_idx = (b->cycle_idx + 1) % TCP_BBR_CYCLE_LEN;
		b->cycle_stamp_us = a->now_us;
	}
}

static void check_full_bw(struct tcp_bbr *b, const struct tcp_bbr_ack *a)
{
	uint64_t bw = tcp_bbr_bw(b);

	if (b->full_bw_reached || !b->round_start || a->rs->app_limited)
		return;
	if (bw * TCP_BBR_UNIT >= b->full_bw * FULL_BW_GROWTH) {
		b->full_bw = bw;
		b->full_bw_cnt = 0;
		return;
	}
	if (++b->full_bw_cnt >= FULL_BW_ROUNDS)
		b->full_bw_reached = true;
}

static void check_drain(struct tcp_bbr *b, const struct tcp_bbr_ack *a)
{
	if (b->mode == TCP_BBR_STARTUP && b->full_bw_reached)
		b->mode = TCP_BBR_DRAIN;
	if (b->mode == TCP_BBR_DRAIN &&
	    a->inflight <= target_inflight(b, tcp_bbr_bw(b), TCP_BBR_UNIT))
		enter_probe_bw(b, a->now_us);
}

static void save_cwnd(struct tcp_bbr *b, uint32_t cwnd)
{
	if (!b->prev_in_recovery && b->mode != TCP_BBR_PROBE_RTT)
		b->prior_cwnd = cwnd;
	else
		b->prior_cwnd = max_u32(b->prior_cwnd, cwnd);
}

static void probe_rtt_done(struct tcp_bbr *b, uint64_t now_us, uint32_t *cwnd)
{
	b->min_rtt_stamp_us = now_us;
	*cwnd = max_u32(*cwnd, b->prior_cwnd);
	if (b->full_bw_reached)
		enter_probe_bw(b, now_us);
	else
		b->mode = TCP_BBR_STARTUP;
}

/* PROBE_RTT: once the flight is down to the minimum window, hold it for 200 ms and at least
 * one round trip, so the queue is empty when the RTT is sampled. */
static void probe_rtt(struct tcp_bbr *b, const struct tcp_bbr_ack *a, uint32_t *cwnd)
{
	b->want_app_limited = true;
	if (!b->probe_rtt_done_us && a->inflight <= min_cwnd(b)) {
		b->probe_rtt_done_us = a->now_us + TCP_BBR_PROBE_RTT_US;
		b->probe_rtt_round_done = false;
		b->next_round_delivered = a->delivered;
	} else if (b->probe_rtt_done_us) {
		if (b->round_start)
			b->probe_rtt_round_done = true;
		if (b->probe_rtt_round_done && a->now_us >= b->probe_rtt_done_us)
			probe_rtt_done(b, a->now_us, cwnd);
	}
}

static void update_min_rtt(struct tcp_bbr *b, const struct tcp_bbr_ack *a, uint32_t *cwnd)
{
	int64_t rtt = a->rs->rtt_us;
	bool expired = b->min_rtt_us != UINT32_MAX &&
		       a->now_us > b->min_rtt_stamp_us + TCP_BBR_MIN_RTT_US;

	if (rtt >= 0 && ((uint64_t)rtt < b->min_rtt_us || expired)) {
		b->min_rtt_us = rtt > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)rtt;
		b->min_rtt_stamp_us = a->now_us;
	}
	if (expired && b->mode != TCP_BBR_PROBE_RTT) {
		save_cwnd(b, *cwnd);
		b->mode = TCP_BBR_PROBE_RTT;
		b->probe_rtt_done_us = 0;
	}
	b->want_app_limited = false;
	if (b->mode == TCP_BBR_PROBE_RTT)
		probe_rtt(b, a, cwnd);
}

static void update_gains(struct tcp_bbr *b)
{
	switch (b->mode) {
	case TCP_BBR_STARTUP:
		b->pacing_gain = HIGH_GAIN;
		b->cwnd_gain = HIGH_GAIN;
		break;
	case TCP_BBR_DRAIN:
		b->pacing_gain = DRAIN_GAIN;
		b->cwnd_gain = HIGH_GAIN;
		break;
	case TCP_BBR_PROBE_BW:
		b->pacing_gain = cycle_gain[b->cycle_idx];
		b->cwnd_gain = PROBE_BW_CWND_GAIN;
		break;
	case TCP_BBR_PROBE_RTT:
		b->pacing_gain = TCP_BBR_UNIT;
		b->cwnd_gain = TCP_BBR_UNIT;
		break;
	}
}


/* Before the first estimate: the initial window over the RTT (1 ms until one is known), at
 * STARTUP's gain. In STARTUP the rate never falls (a sample may be low by chance). */
static void set_pacing_rate(struct tcp_bbr *b, const struct tcp_bbr_ack *a, uint32_t cwnd)
{
	uint64_t bw = tcp_bbr_bw(b), rate;

	if (!bw) {
		uint64_t rtt = a->srtt_us ? a->srtt_us : 1000u;

		bw = (uint64_t)cwnd * 1000000u / rtt;
		rate = rate_of(bw, HIGH_GAIN);
		if (rate > b->pacing_rate)
			b->pacing_rate = rate;
		return;
	}
	rate = rate_of(bw, b->pacing_gain);
	if (b->full_bw_reached || rate > b->pacing_rate)
		b->pacing_rate = rate;
}

/* Losses take their octets off cwnd; the first round of a recovery sends only what is
 * delivered (packet conservation); at its end cwnd is given back. True while conserving. */
static bool recover_or_restore(struct tcp_bbr *b, const struct tcp_bbr_ack *a, uint32_t *cwnd)
{
	uint32_t acked = a->rs->acked;

	if (a->lost)
		*cwnd = *cwnd > a->lost + b->smss ? *cwnd - a->lost : b->smss;
	if (a->in_recovery && !b->prev_in_recovery) {
		b->packet_conservation = true;
		b->next_round_delivered = a->delivered;
		*cwnd = a->inflight + acked;
	} else if (!a->in_recovery && b->prev_in_recovery) {
		*cwnd = max_u32(*cwnd, b->prior_cwnd);
		b->packet_conservation = false;
	}
	b->prev_in_recovery = a->in_recovery;
	if (b->packet_conservation) {
		*cwnd = max_u32(*cwnd, a->inflight + acked);
		return true;
	}
	return false;
}

static void set_cwnd(struct tcp_bbr *b, const struct tcp_bbr_ack *a, uint32_t *cwnd)
{
	uint32_t acked = a->rs->acked, target;

	if (acked && !recover_or_restore(b, a, cwnd)) {
		target = target_inflight(b, tcp_bbr_bw(b), b->cwnd_gain) + agg_room(b, tcp_bbr_bw(b));
		if (b->full_bw_reached)
			*cwnd = min_u32(*cwnd + acked, target);
		else if (*cwnd < target || a->delivered < INIT_CWND_SEGS * b->smss)
			*cwnd += acked;
		*cwnd = max_u32(*cwnd, min_cwnd(b));
	}
	if (b->mode == TCP_BBR_PROBE_RTT)
		*cwnd = min_u32(*cwnd, min_cwnd(b));
}

void tcp_bbr_on_ack(struct tcp_bbr *b, const struct tcp_bbr_ack *a, uint32_t *cwnd)
{
	update_bw(b, a);
	update_aggregation(b, a, *cwnd);
	update_cycle_phase(b, a);
	check_full_bw(b, a);
	check_drain(b, a);
	update_min_rtt(b, a, cwnd);
	update_gains(b);
	set_pacing_rate(b, a, *cwnd);
	set_cwnd(b, a, cwnd);
}

void tcp_bbr_on_loss_event(struct tcp_bbr *b, uint32_t cwnd, bool rto)
{
	save_cwnd(b, cwnd);
	if (rto) {
		/* a timeout ends the round; the window grows back from one segment, without a
		 * round of conservation, and STARTUP's growth is measured afresh */
		b->prev_in_recovery = true;
		b->full_bw = 0;
		b->round_start = true;
	}
}
