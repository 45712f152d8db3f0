/* RFC 7323 5: Protection Against Wrapped Sequences and TS.Recent upkeep. */
#include <rte_mbuf.h>

#include "tcp_int.h"

/* R1 (5.3): a segment with a timestamp older than TS.Recent (by more than one tick) is a
 * duplicate from an earlier wrap - unless TS.Recent is more than 24 days old (5.5), when
 * the peer's clock may have wrapped: then TS.Recent is invalid and the segment is judged by
 * sequence alone. RST segments are not subject to PAWS (Linux does the same; RFC 7323
 * leaves it open). */
bool tcp_paws_reject(struct tcp_conn *c, const struct tcp_seg *seg)
{
	uint64_t now_ms;

	if (!c->ts_ok || !seg->opts.has_ts || (seg->flags & TCP_F_RST))
		return false;
	/* One tick of the peer's clock older is taken, as Linux does (TCP_PAWS_WINDOW): with a
	 * millisecond clock, new data sent just before a retransmission that overtook it (the
	 * retransmission filled the hole at RCV.NXT and so moved TS.Recent) carries the tick
	 * before; a wrapped-sequence duplicate is older by far more. */
	if (!seq_lt(seg->opts.ts_val, c->ts_recent - TCP_PAWS_WINDOW))
		return false;
	/* A reordered duplicate ACK (no data, nothing new acknowledged) is harmless and counts
	 * for fast retransmit: let it through like Linux's tcp_disordered_ack. */
	if (seg->payload_len == 0 && !(seg->flags & (TCP_F_SYN | TCP_F_FIN)) &&
	    seg->seq == c->rcv_nxt && seg->ack == c->snd_una)
		return false;
	now_ms = tcp_now_us(c->s) / 1000;
	if (now_ms - c->ts_recent_ms > TCP_PAWS_IDLE_MS) {
		c->ts_recent = seg->opts.ts_val;
		c->ts_recent_ms = now_ms;
		return false;
	}
	return true;
}

/* R3 (4.3): TS.Recent takes SEG.TSval when the segment covers Last.ACK.sent. */
void tcp_paws_update(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (!c->ts_ok || !seg->opts.has_ts)
		return;
	if (seq_leq(seg->seq, c->last_ack_sent) && seq_geq(seg->opts.ts_val, c->ts_recent)) {
		c->ts_recent = seg->opts.ts_val;
		c->ts_recent_ms = tcp_now_us(c->s) / 1000;
	}
}
