/* Undo of a spurious recovery: when the segments a recovery (or an RTO) resent had not been
 * lost but only delayed or reordered, the window it took is given back, as Linux does. The
 * evidence: every retransmission came back as a DSACK (RFC 2883), or the ACK for the first one
 * echoes the original's timestamp (RFC 3522, Eifel). */
#include <rte_mbuf.h>

#include "tcp_int.h"

/* Where undo starts: the window a recovery (or RTO) is about to reduce. */
void tcp_undo_mark(struct tcp_conn *c)
{
	c->undo_cwnd = c->cc.cwnd;
	c->undo_ssthresh = c->cc.ssthresh;
	c->undo_retrans = 0;
	c->undo_dsacks = 0;
	c->undo_ts = 0;
	c->undo_una = c->snd_una;
	c->undo_max = c->snd_max;
	c->undo_ok = true;
}

void tcp_undo_retransmitted(struct tcp_conn *c, uint32_t end)
{
	c->undo_retrans++;
	if (!c->undo_ts) {
		c->undo_ts = tcp_now_ms32(c->s) | 1u; /* 0 means none */
		c->undo_end = end;
	}
}

/* The recovery was spurious when every retransmission it made came back as a DSACK (RFC
 * 2883), or when the ACK that covers the first retransmitted segment echoes a TSval older than
 * that retransmission (RFC 3522, Eifel): the original arrived, late. Then the window comes
 * back as it was. An ACK below that segment says nothing: it echoes older segments anyway. */
static bool spurious(const struct tcp_conn *c, const struct tcp_seg *seg, uint32_t old_una)
{
	if (!c->undo_ok || !c->undo_retrans)
		return false;
	if (c->undo_dsacks >= c->undo_retrans)
		return true;
	return c->ts_ok && seg->opts.has_ts && seg->opts.ts_ecr && c->undo_ts &&
	       seq_lt(old_una, c->undo_end) && seq_geq(c->snd_una, c->undo_end) &&
	       seq_lt(seg->opts.ts_ecr, c->undo_ts);
}

static void undo(struct tcp_conn *c)
{
	c->undo_ok = false;
	if (c->cc.cwnd < c->undo_cwnd)
		c->cc.cwnd = c->undo_cwnd;
	if (c->cc.ssthresh < c->undo_ssthresh)
		c->cc.ssthresh = c->undo_ssthresh;
	c->st.undos++;
	if (!c->rack.lost_bytes) {
		c->flags &= ~TCPF_IN_RECOVERY;
		c->cc.in_recovery = false;
		c->cc.recover = c->snd_una;
	}
}

/* A DSACK for what the last recovery resent (it may come after that recovery's end). */
void tcp_undo_dsack(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (c->undo_ok && seq_geq(seg->opts.sack[0].start, c->undo_una) &&
	    seq_leq(seg->opts.sack[0].end, c->undo_max))
		c->undo_dsacks++;
}

void tcp_undo_check(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t old_una)
{
	if (spurious(c, seg, old_una))
		undo(c);
}
