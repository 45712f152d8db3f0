/* RACK (RFC 8985 6.2): the segment log, RACK's notion of the most recently sent segment that
 * was delivered, reordering detection, the adaptive reordering window and loss marking.
 * The log holds one entry per transmitted segment in sequence order; a retransmission
 * updates the entries it covers, so each entry's time is that of its latest transmission,
 * which is what lets RACK see a retransmission lost again. */
#include "tcp_rack.h"

#include <stdlib.h>
#include <string.h>

#include "tcp_seq.h"

#define RACK_INIT_CAP 64u
#define RACK_MAX_CAP 65536u     /* entries: a window of 64k segments */
#define RACK_PERSIST 16u        /* RFC 8985 6.2 step 4 */

static struct tcp_rack_seg *at(const struct tcp_rack *r, uint32_t i)
{
	return &r->seg[(r->head + i) & (r->cap - 1)];
}

static uint32_t seg_end(const struct tcp_rack_seg *e) { return e->seq + e->len; }

int tcp_rack_init(struct tcp_rack *r)
{
	memset(r, 0, sizeof(*r));
	r->seg = calloc(RACK_INIT_CAP, sizeof(*r->seg));
	if (!r->seg)
		return -1;
	r->cap = RACK_INIT_CAP;
	r->reo_wnd_mult = 1;
	return 0;
}

void tcp_rack_free(struct tcp_rack *r)
{
	free(r->seg);
	r->seg = NULL;
	r->cap = r->cnt = 0;
}

static bool grow(struct tcp_rack *r)
{
	uint32_t cap = r->cap * 2;
	struct tcp_rack_seg *n;

	if (cap > RACK_MAX_CAP || !(n = calloc(cap, sizeof(*n))))
		return false;
	for (uint32_t i = 0; i < r->cnt; i++)
		n[i] = *at(r, i);
	free(r->seg);
	r->seg = n;
	r->cap = cap;
	r->head = 0;
	return true;
}

/* The index of the first entry that ends above seq (cnt when none does). */
static uint32_t find(const struct tcp_rack *r, uint32_t seq)
{
	uint32_t lo = 0, hi = r->cnt;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (seq_gt(seg_end(at(r, mid)), seq))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void unmark_lost(struct tcp_rack *r, struct tcp_rack_seg *e)
{
	if (e->flags & TCP_RSEG_LOST) {
		r->lost_bytes -= e->len;
		e->flags &= (uint8_t)~TCP_RSEG_LOST;
	}
}

static void mark_lost(struct tcp_rack *r, struct tcp_rack_seg *e)
{
	if (!r->lost_bytes || seq_lt(e->seq, r->lost_seq))
		r->lost_seq = e->seq;
	e->flags |= TCP_RSEG_LOST;
	r->lost_bytes += e->len;
}

static void rate_sent(struct tcp_rack *r, struct tcp_rack_seg *e, bool idle, uint64_t now_us)
{
	if (r->rate)
		tcp_rate_sent(r->rate, idle, now_us, &e->rate);
}

static void resent(struct tcp_rack *r, uint32_t seq, uint32_t end, uint64_t now_us)
{
	if (r->scan_set && seq_lt(seq, r->scan_seq))
		r->scan_seq = seq; /* a candidate again */
	for (uint32_t i = find(r, seq); i < r->cnt && seq_lt(at(r, i)->seq, end); i++) {
		struct tcp_rack_seg *e = at(r, i);
		e->xmit_us = now_us;
		e->order = r->next_order++;
		e->flags |= TCP_RSEG_RETRANS;
		unmark_lost(r, e);
		rate_sent(r, e, false, now_us);
	}
}

static void append(struct tcp_rack *r, uint32_t seq, uint32_t len, uint64_t now_us)
{
	bool idle = r->cnt == 0; /* nothing outstanding: everything sent was acknowledged */

	if (r->cnt == r->cap && !grow(r)) {
		r->broken = true;
		return;
	}
	*at(r, r->cnt++) = (struct tcp_rack_seg){
		.seq = seq, .len = len, .xmit_us = now_us, .order = r->next_order++ };
	rate_sent(r, at(r, r->cnt - 1), idle, now_us);
}

void tcp_rack_sent(struct tcp_rack *r, uint32_t seq, uint32_t len, uint32_t snd_max,
		   uint64_t now_us)
{
	uint32_t end = seq + len;

	if (r->broken || !len)
		return;
	if (seq_lt(seq, snd_max))
		resent(r, seq, seq_lt(end, snd_max) ? end : snd_max, now_us);
	if (seq_gt(end, snd_max))
		append(r, seq_gt(seq, snd_max) ? seq : snd_max, end - (seq_gt(seq, snd_max) ? seq
									      : snd_max), now_us);
}

static bool sent_after(uint32_t order1, uint32_t order2)
{
	return (int32_t)(order1 - order2) > 0;
}

/* RFC 8985 6.2 steps 2 and 3 for one entry newly delivered. */
static void delivered(struct tcp_rack *r, const struct tcp_rack_seg *e,
		      const struct tcp_rack_ack *a)
{
	uint64_t rtt = a->now_us > e->xmit_us ? a->now_us - e->xmit_us : 0;
	uint32_t end = seg_end(e);

	if (r->rate)
		tcp_rate_delivered(r->rate, &e->rate, e->len, e->xmit_us,
				   e->flags & TCP_RSEG_RETRANS, a->now_us);

	if (!r->fack_set || seq_gt(end, r->fack)) {
		r->fack = end;
		r->fack_set = true;
	}
	else if (seq_lt(end, r->fack) && !(e->flags & TCP_RSEG_RETRANS))
		r->reordering_seen = true;
	if (e->flags & TCP_RSEG_RETRANS) {
		/* the ACK may be for the original: then this is no sample of the retransmission */
		if (a->has_ts && seq_lt(a->ts_ecr, (uint32_t)(e->xmit_us / 1000)))
			return;
		if (rtt < r->min_rtt_us)
			return;
	} else if (!r->min_rtt_us || rtt < r->min_rtt_us) {
		r->min_rtt_us = rtt ? (uint32_t)(rtt > UINT32_MAX ? UINT32_MAX : rtt) : 1;
	}
	if (!r->have || sent_after(e->order, r->order)) {
		r->have = true;
		r->xmit_us = e->xmit_us;
		r->order = e->order;
		r->end_seq = end;
		r->rtt_us = rtt > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt;
	}
}

static void drop_head(struct tcp_rack *r)
{
	struct tcp_rack_seg *e = at(r, 0);

	if (e->flags & TCP_RSEG_SACKED)
		r->sacked_bytes -= e->len;
	unmark_lost(r, e);
	r->head = (r->head + 1) & (r->cap - 1);
	r->cnt--;
}

void tcp_rack_acked(struct tcp_rack *r, uint32_t una, const struct tcp_rack_ack *a)
{
	while (r->cnt && seq_leq(seg_end(at(r, 0)), una)) {
		if (!(at(r, 0)->flags & TCP_RSEG_SACKED))
			delivered(r, at(r, 0), a);
		drop_head(r);
	}
	if (r->cnt && seq_lt(at(r, 0)->seq, una)) { /* a part of the first entry */
		struct tcp_rack_seg *e = at(r, 0);
		uint32_t cut = una - e->seq;

		if (e->flags & TCP_RSEG_SACKED)
			r->sacked_bytes -= cut;
		else if (r->rate)
			tcp_rate_count(r->rate, cut, a->now_us);
		if (e->flags & TCP_RSEG_LOST)
			r->lost_bytes -= cut;
		e->seq = una;
		e->len -= cut;
	}
	/* the walks' starting points never fall behind the log (sequence numbers: one left far
	 * behind would compare the wrong way once the sequence space wraps) */
	if (r->scan_set && (!r->cnt || seq_lt(r->scan_seq, at(r, 0)->seq)))
		r->scan_set = false;
	if (r->cnt && seq_lt(r->lost_seq, at(r, 0)->seq))
		r->lost_seq = at(r, 0)->seq;
	/* after the entries: those below una are no reordering by their own fack */
	if (!r->fack_set || seq_lt(r->fack, una)) {
		r->fack = una;
		r->fack_set = true;
	}
}

void tcp_rack_sacked(struct tcp_rack *r, uint32_t start, uint32_t end,
		     const struct tcp_rack_ack *a)
{
	for (uint32_t i = find(r, start); i < r->cnt; i++) {
		struct tcp_rack_seg *e = at(r, i);

		if (seq_gt(seg_end(e), end))
			break;
		if (seq_lt(e->seq, start) || (e->flags & TCP_RSEG_SACKED))
			continue;
		unmark_lost(r, e);
		e->flags |= TCP_RSEG_SACKED;
		r->sacked_bytes += e->len;
		delivered(r, e, a);
	}
}

void tcp_rack_dsack(struct tcp_rack *r, uint32_t snd_una, uint32_t snd_max)
{
	r->spurious++;
	/* the original had arrived after all, or the path duplicates: either way a loss
	 * inferred from order alone would be wrong, so the window must not be zero */
	r->reordering_seen = true;
	if (r->dsack_round_set && seq_geq(snd_una, r->dsack_round))
		r->dsack_round_set = false;
	if (r->dsack_round_set)
		return;
	r->dsack_round_set = true;
	r->dsack_round = snd_max;
	if (r->reo_wnd_mult < UINT8_MAX)
		r->reo_wnd_mult++;
	r->reo_wnd_persist = RACK_PERSIST;
}

void tcp_rack_recovery_done(struct tcp_rack *r)
{
	if (r->reo_wnd_persist)
		r->reo_wnd_persist--;
	if (!r->reo_wnd_persist)
		r->reo_wnd_mult = 1;
}

uint32_t tcp_rack_reo_wnd(const struct tcp_rack *r, bool in_recovery, uint32_t smss,
			  uint32_t srtt_us)
{
	uint64_t w;

	if (!r->reordering_seen && (in_recovery || r->sacked_bytes > 2u * smss))
		return 0;
	w = (uint64_t)r->reo_wnd_mult * ((r->min_rtt_us ? r->min_rtt_us : srtt_us) / 4);
	return w < srtt_us ? (uint32_t)w : srtt_us;
}

/* The index where a walk for candidates starts: past the entries all SACKed or lost. */
static uint32_t scan_start(struct tcp_rack *r)
{
	uint32_t i = r->scan_set ? find(r, r->scan_seq) : 0;

	for (; i < r->cnt && (at(r, i)->flags & (TCP_RSEG_SACKED | TCP_RSEG_LOST)); i++)
		r->walked++;
	/* all of them: the next walk starts at what is sent after them */
	r->scan_set = r->cnt > 0;
	if (r->scan_set)
		r->scan_seq = i < r->cnt ? at(r, i)->seq : seg_end(at(r, r->cnt - 1));
	return i;
}

uint32_t tcp_rack_detect(struct tcp_rack *r, uint64_t now_us, uint32_t reo_wnd_us,
			 uint64_t *timeout_us)
{
	uint32_t newly = 0;

	*timeout_us = 0;
	if (r->broken || !r->have)
		return 0;
	for (uint32_t i = scan_start(r); i < r->cnt; i++) {
		struct tcp_rack_seg *e = at(r, i);
		uint64_t due;

		r->walked++;
		if (e->flags & (TCP_RSEG_SACKED | TCP_RSEG_LOST))
			continue;
		if (!sent_after(r->order, e->order)) {
			if (!(e->flags & TCP_RSEG_RETRANS))
				break; /* first transmissions above it went out later still */
			continue;
		}
		due = e->xmit_us + r->rtt_us + reo_wnd_us;
		if (due <= now_us) {
			mark_lost(r, e);
			newly += e->len;
			continue;
		}
		if (!*timeout_us || due - now_us < *timeout_us)
			*timeout_us = due - now_us;
		if (!(e->flags & TCP_RSEG_RETRANS))
			break; /* the rest went out later: not overdue either */
	}
	return newly;
}

bool tcp_rack_next_lost(struct tcp_rack *r, uint32_t *seq, uint32_t *len)
{
	if (!r->lost_bytes)
		return false;
	for (uint32_t i = find(r, r->lost_seq); i < r->cnt; i++) {
		const struct tcp_rack_seg *e = at(r, i);
		r->walked++;
		if (e->flags & TCP_RSEG_LOST) {
			r->lost_seq = e->seq;
			*seq = e->seq;
			*len = e->len;
			return true;
		}
	}
	return false;
}

uint32_t tcp_rack_pipe(const struct tcp_rack *r, uint32_t snd_una, uint32_t snd_max)
{
	uint32_t out = snd_max - snd_una, gone = r->sacked_bytes + r->lost_bytes;

	return out > gone ? out - gone : 0;
}

void tcp_rack_rto(struct tcp_rack *r)
{
	for (uint32_t i = 0; i < r->cnt; i++)
		at(r, i)->flags &= (uint8_t)~(TCP_RSEG_SACKED | TCP_RSEG_LOST);
	r->sacked_bytes = 0;
	r->lost_bytes = 0;
	r->scan_set = false;
}

uint32_t tcp_rack_mark_all_lost(struct tcp_rack *r)
{
	uint32_t newly = 0;

	for (uint32_t i = 0; i < r->cnt; i++) {
		struct tcp_rack_seg *e = at(r, i);

		if (!(e->flags & (TCP_RSEG_SACKED | TCP_RSEG_LOST))) {
			mark_lost(r, e);
			newly += e->len;
		}
	}
	return newly;
}
