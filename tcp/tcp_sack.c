/* SACK bookkeeping over sequence numbers only. Receiver: RFC 2018 section 4 (the first block
 * reports the most recently received segment, then the others most recent first).
 * Sender: RFC 6675 section 4 scoreboard. Holes between SACKed ranges behave alike for
 * IsLost (the blocks above every octet of a hole are the same), so pipe and NextSeg work per
 * hole rather than per octet. */
#include "tcp_sack.h"

#include <string.h>

#include "tcp_seq.h"

/* ---- receiver ---------------------------------------------------------------------------- */

void tcp_sack_rcv_init(struct tcp_sack_rcv *r)
{
	memset(r, 0, sizeof(*r));
}

static void rcv_remove(struct tcp_sack_rcv *r, unsigned i)
{
	memmove(&r->blk[i], &r->blk[i + 1], (r->n - i - 1) * sizeof(r->blk[0]));
	r->n--;
}

/* Touching or overlapping ranges merge (a block must describe contiguous data). */
static bool touches(const struct tcp_sack_block *b, uint32_t start, uint32_t end)
{
	return seq_leq(start, b->end) && seq_leq(b->start, end);
}

void tcp_sack_rcv_add(struct tcp_sack_rcv *r, uint32_t start, uint32_t end)
{
	if (!seq_lt(start, end))
		return;
	for (unsigned i = 0; i < r->n;) {
		if (touches(&r->blk[i], start, end)) {
			start = seq_min(start, r->blk[i].start);
			end = seq_max(end, r->blk[i].end);
			rcv_remove(r, i);
		} else {
			i++;
		}
	}
	/* Full: the oldest (last) report is dropped; it was sent in earlier ACKs already. */
	if (r->n == TCP_SACK_RCV_MAX)
		r->n--;
	memmove(&r->blk[1], &r->blk[0], r->n * sizeof(r->blk[0]));
	r->blk[0].start = start;
	r->blk[0].end = end;
	r->n++;
}

bool tcp_sack_rcv_joins_front(const struct tcp_sack_rcv *r, uint32_t start, uint32_t end)
{
	return r->n && touches(&r->blk[0], start, end);
}

void tcp_sack_rcv_advance(struct tcp_sack_rcv *r, uint32_t rcv_nxt)
{
	for (unsigned i = 0; i < r->n;) {
		struct tcp_sack_block *b = &r->blk[i];
		if (seq_leq(b->end, rcv_nxt)) {
			rcv_remove(r, i);
			continue;
		}
		if (seq_lt(b->start, rcv_nxt))
			b->start = rcv_nxt;
		i++;
	}
}

unsigned tcp_sack_rcv_blocks(const struct tcp_sack_rcv *r, struct tcp_sack_block *out,
			     unsigned max)
{
	unsigned n = r->n < max ? r->n : max;
	memcpy(out, r->blk, n * sizeof(out[0]));
	return n;
}

/* ---- sender scoreboard --------------------------------------------------------------------- */

void tcp_sack_snd_init(struct tcp_sack_snd *s)
{
	memset(s, 0, sizeof(*s));
	s->dupthresh = 3;
}

void tcp_sack_snd_clear(struct tcp_sack_snd *s)
{
	uint32_t dupthresh = s->dupthresh;
	tcp_sack_snd_init(s);
	if (dupthresh)
		s->dupthresh = dupthresh;
}

static void snd_remove(struct tcp_sack_snd *s, unsigned i)
{
	memmove(&s->blk[i], &s->blk[i + 1], (s->n - i - 1) * sizeof(s->blk[0]));
	s->n--;
}

/* Octets of [start, end) already covered by the scoreboard. */
static uint32_t covered(const struct tcp_sack_snd *s, uint32_t start, uint32_t end)
{
	uint32_t c = 0;
	for (unsigned i = 0; i < s->n; i++) {
		uint32_t lo = seq_max(start, s->blk[i].start), hi = seq_min(end, s->blk[i].end);
		if (seq_lt(lo, hi))
			c += hi - lo;
	}
	return c;
}

/* Insert keeping the blocks sorted and disjoint. When full, the highest block goes: losing
 * SACK information only makes the sender retransmit more, never less. */
static void snd_insert(struct tcp_sack_snd *s, uint32_t start, uint32_t end)
{
	unsigned i = 0;
	while (i < s->n && seq_lt(s->blk[i].end, start))
		i++;
	/* blk[i] is the first that touches or lies above [start, end). */
	while (i < s->n && seq_leq(s->blk[i].start, end)) {
		start = seq_min(start, s->blk[i].start);
		end = seq_max(end, s->blk[i].end);
		snd_remove(s, i);
	}
	if (s->n == TCP_SACK_SND_MAX) {
		if (i == s->n)
			return; /* the new block would be the highest: it is the one dropped */
		s->n--;
	}
	memmove(&s->blk[i + 1], &s->blk[i], (s->n - i) * sizeof(s->blk[0]));
	s->blk[i].start = start;
	s->blk[i].end = end;
	s->n++;
}

uint32_t tcp_sack_snd_update(struct tcp_sack_snd *s, uint32_t snd_una, uint32_t snd_max,
			     const struct tcp_sack_block *blk, unsigned n)
{
	uint32_t newly = 0;
	/* A fresh episode: HighRxt from before (or never set) means nothing now (RFC 6675
	 * starts it at HighACK). With no SACKed ranges no hole can be retransmitted twice. */
	if (s->n == 0)
		s->high_rxt = snd_una;
	for (unsigned k = 0; k < n; k++) {
		uint32_t start = blk[k].start, end = blk[k].end;
		/* Valid: non-empty and within what was sent. A block at or below snd_una is a
		 * D-SACK (RFC 2883) or stale: no information for the scoreboard. */
		if (!seq_lt(start, end) || seq_gt(end, snd_max) || seq_leq(end, snd_una))
			continue;
		if (seq_lt(start, snd_una))
			start = snd_una;
		newly += (end - start) - covered(s, start, end);
		snd_insert(s, start, end);
	}
	return newly;
}

void tcp_sack_snd_advance(struct tcp_sack_snd *s, uint32_t snd_una)
{
	while (s->n > 0 && seq_leq(s->blk[0].end, snd_una))
		snd_remove(s, 0);
	if (s->n > 0 && seq_lt(s->blk[0].start, snd_una))
		s->blk[0].start = snd_una;
	if (seq_lt(s->high_rxt, snd_una))
		s->high_rxt = snd_una;
}

bool tcp_sack_snd_is_sacked(const struct tcp_sack_snd *s, uint32_t seq)
{
	for (unsigned i = 0; i < s->n; i++)
		if (seq_in(seq, s->blk[i].start, s->blk[i].end))
			return true;
	return false;
}

/* IsLost for anything not SACKed that lies below blk[first]: the blocks first..n-1 are
 * above it. */
static bool lost_below(const struct tcp_sack_snd *s, unsigned first, uint32_t smss)
{
	unsigned dup = s->dupthresh ? s->dupthresh : 3;
	if (s->n - first >= dup)
		return true;
	uint64_t bytes = 0;
	for (unsigned i = first; i < s->n; i++)
		bytes += s->blk[i].end - s->blk[i].start;
	return bytes > (uint64_t)(dup - 1) * smss;
}

bool tcp_sack_snd_is_lost(const struct tcp_sack_snd *s, uint32_t seq, uint32_t smss)
{
	unsigned dup = s->dupthresh ? s->dupthresh : 3;
	unsigned count = 0;
	uint64_t bytes = 0;
	for (unsigned i = 0; i < s->n; i++) {
		const struct tcp_sack_block *b = &s->blk[i];
		if (!seq_gt(b->end, seq + 1))
			continue; /* nothing of this block lies above seq */
		uint32_t lo = seq_gt(b->start, seq) ? b->start : seq + 1;
		bytes += b->end - lo;
		count++;
	}
	return count >= dup || bytes > (uint64_t)(dup - 1) * smss;
}

/* HighRxt counts only when it lies in the window; before any retransmission it is stale. */
static uint32_t rxt_floor(const struct tcp_sack_snd *s, uint32_t snd_una, uint32_t snd_max)
{
	if (seq_gt(s->high_rxt, snd_una) && seq_leq(s->high_rxt, snd_max))
		return s->high_rxt;
	return snd_una;
}

/* Octets of [lo, hi) below the retransmission mark. */
static uint32_t below(uint32_t lo, uint32_t hi, uint32_t mark)
{
	if (!seq_gt(mark, lo))
		return 0;
	return seq_lt(mark, hi) ? mark - lo : hi - lo;
}

uint32_t tcp_sack_snd_pipe(const struct tcp_sack_snd *s, uint32_t snd_una, uint32_t snd_max,
			   uint32_t smss)
{
	if (!seq_lt(snd_una, snd_max))
		return 0;
	uint32_t mark = rxt_floor(s, snd_una, snd_max);
	uint64_t pipe = 0;
	uint32_t lo = snd_una;
	for (unsigned i = 0; i <= s->n; i++) {
		uint32_t hi = i < s->n ? s->blk[i].start : snd_max;
		if (seq_lt(lo, hi)) {
			/* SetPipe: an unSACKed octet counts once if not lost, and once more if it
			 * was retransmitted. */
			if (i == s->n || !lost_below(s, i, smss))
				pipe += hi - lo;
			pipe += below(lo, hi, mark);
		}
		if (i < s->n)
			lo = seq_max(lo, s->blk[i].end);
	}
	return pipe > UINT32_MAX ? UINT32_MAX : (uint32_t)pipe;
}

static void seg_in_hole(uint32_t from, uint32_t hi, uint32_t smss, uint32_t *seq, uint32_t *len)
{
	uint32_t room = hi - from;
	*seq = from;
	*len = room < smss ? room : smss;
}

bool tcp_sack_snd_next_seg(const struct tcp_sack_snd *s, uint32_t snd_una, uint32_t snd_max,
			   uint32_t smss, uint32_t *seq, uint32_t *len)
{
	if (!seq_lt(snd_una, snd_max) || s->n == 0 || smss == 0)
		return false;
	uint32_t floor = rxt_floor(s, snd_una, snd_max);
	/* Rule 1: the first unSACKed octet above HighRxt that IsLost. Rule 3 (when rule 1
	 * finds nothing): the first such octet with SACKed data above it (1.a and 1.b only). */
	bool found3 = false;
	uint32_t seq3 = 0, len3 = 0;
	uint32_t lo = snd_una;
	for (unsigned i = 0; i < s->n; i++) {
		uint32_t hi = s->blk[i].start;
		uint32_t from = seq_max(lo, floor);
		if (seq_lt(from, hi)) {
			if (lost_below(s, i, smss)) {
				seg_in_hole(from, hi, smss, seq, len);
				return true;
			}
			if (!found3) {
				seg_in_hole(from, hi, smss, &seq3, &len3);
				found3 = true;
			}
		}
		lo = seq_max(lo, s->blk[i].end);
	}
	if (found3) {
		*seq = seq3;
		*len = len3;
	}
	return found3;
}

uint32_t tcp_sack_snd_sacked_bytes(const struct tcp_sack_snd *s)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < s->n; i++)
		sum += s->blk[i].end - s->blk[i].start;
	return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}
