/* Receive side of the segment text (RFC 9293 3.10.7.4 seventh step): trimming to the window,
 * in-order delivery by on_recv with the mbuf itself, the out-of-order queue (ranges of
 * segments, bounded by the window, their number by ooo_limit), SACK receiver blocks and the
 * delayed-ACK decision (RFC 9293 3.8.6.3, RFC 5681 4.2).
 *
 * Segments are never adjusted or trimmed in place (rte_pktmbuf_adj/trim only work on the
 * first/last mbuf of a chain): the payload range (off, len) travels with the mbuf, and
 * on_recv gets it as its off/len arguments. */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "tcp_int.h"

/* Mbufs waiting for a consumer are linked through a dynamic field (no allocation). */
struct rxq_meta {
	struct rte_mbuf *next;
	uint32_t off, len;
};
static int meta_off = -1;

int tcp_reass_init(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "softrnic_tcp_rxq",
		.size = sizeof(struct rxq_meta),
		.align = __alignof__(struct rxq_meta),
	};

	if (meta_off < 0)
		meta_off = rte_mbuf_dynfield_register(&desc);
	return meta_off < 0 ? -ENOMEM : 0;
}

static struct rxq_meta *meta(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, meta_off, struct rxq_meta *);
}

static void rxq_push(struct tcp_conn *c, struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	meta(m)->next = NULL;
	meta(m)->off = off;
	meta(m)->len = len;
	if (c->rxq_tail)
		meta(c->rxq_tail)->next = m;
	else
		c->rxq_head = m;
	c->rxq_tail = m;
}

static struct rte_mbuf *rxq_pop(struct tcp_conn *c)
{
	struct rte_mbuf *m = c->rxq_head;

	if (!m)
		return NULL;
	c->rxq_head = meta(m)->next;
	if (!c->rxq_head)
		c->rxq_tail = NULL;
	return m;
}

static bool can_deliver(const struct tcp_conn *c)
{
	return tcp_conn_user_alive(c) && !c->listener && !c->rxq_head && c->s->cb_depth;
}

/* len in-order octets of m from byte offset off. */
static void deliver(struct tcp_conn *c, struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	c->rcv_nxt += len;
	c->st.bytes_received += len;
	if (c->flags & TCPF_CLOSED_BY_USER) { /* tcp.h: discarded after tcp_close */
		rte_pktmbuf_free(m);
		return;
	}
	c->rcv_held += len;
	if (can_deliver(c) && c->ops->on_recv) {
		c->ops->on_recv(c->arg, c, m, off, len);
		return;
	}
	rxq_push(c, m, off, len);
	tcp_conn_defer(c);
}

void tcp_reass_deliver_pending(struct tcp_conn *c)
{
	struct rte_mbuf *m;

	while (tcp_conn_user_alive(c) && !c->listener && (m = rxq_pop(c)) != NULL) {
		if (c->ops->on_recv)
			c->ops->on_recv(c->arg, c, m, meta(m)->off, meta(m)->len);
		else
			rte_pktmbuf_free(m);
	}
}

static void ooo_remove(struct tcp_conn *c, uint32_t i)
{
	memmove(&c->ooo[i], &c->ooo[i + 1], (c->ooo_cnt - i - 1) * sizeof(c->ooo[0]));
	c->ooo_cnt--;
}

static void list_free(struct rte_mbuf *m)
{
	while (m) {
		struct rte_mbuf *n = meta(m)->next;

		rte_pktmbuf_free(m);
		m = n;
	}
}

/* Join range i+1 onto range i (they touch). */
static void ooo_join(struct tcp_conn *c, uint32_t i)
{
	struct tcp_ooo_ent *a = &c->ooo[i], *b = &c->ooo[i + 1];

	meta(a->tail)->next = b->head;
	a->tail = b->tail;
	a->len += b->len;
	ooo_remove(c, i + 1);
}

/* RFC 2883: the next ACK names octets that arrived twice, so that the sender learns its
 * retransmission was spurious (or the path duplicates) and widens its reordering window. */
void tcp_reass_dsack(struct tcp_conn *c, uint32_t start, uint32_t end)
{
	if (!c->sack_ok || !seq_lt(start, end))
		return;
	c->dsack_start = start;
	c->dsack_end = end;
	c->dsack_due = true;
}

/* The ranges a connection may hold: a window of full segments with every other one missing,
 * which a path that reorders by more than a few segments at a high rate comes near. Fewer,
 * and the segments beyond them are dropped and sent again as if lost. A peer that sends tiny
 * segments to make holes is bounded by the same count (and the window by the octets). */
static uint32_t ooo_limit(const struct tcp_conn *c)
{
	uint32_t mss = c->rcv_mss ? c->rcv_mss : TCP_DEFAULT_MSS;
	uint32_t n = c->rcv_buf / mss / 2 + 1;

	return n > TCP_OOO_MIN ? n : TCP_OOO_MIN;
}

/* Room for one more range; false (the segment is dropped) at the limit or without memory. */
static bool ooo_room(struct tcp_conn *c)
{
	uint32_t cap, lim;
	struct tcp_ooo_ent *n;

	if (c->ooo_cnt < c->ooo_cap)
		return true;
	lim = ooo_limit(c);
	if (c->ooo_cap >= lim)
		return false;
	cap = c->ooo_cap ? 2 * c->ooo_cap : TCP_OOO_INIT;
	cap = cap < lim ? cap : lim;
	n = realloc(c->ooo, cap * sizeof(*n));
	if (n == NULL)
		return false;
	c->ooo = n;
	c->ooo_cap = cap;
	return true;
}

/* The first range that ends after seq (ooo_cnt if none). */
static uint32_t ooo_find(const struct tcp_conn *c, uint32_t seq)
{
	uint32_t lo = 0, hi = c->ooo_cnt;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (seq_leq(c->ooo[mid].seq + c->ooo[mid].len, seq))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Keep [seq, seq+len) of m (payload at off). The part already held is dropped, as is the
 * part from the next held range on (it holds those octets already; what lies beyond comes
 * again). Returns the octets kept from seq (0: nothing kept, m freed); *kept_seq is where
 * they start. Only kept octets may be SACKed: a receiver must never SACK what it dropped. */
static uint32_t ooo_insert(struct tcp_conn *c, struct rte_mbuf *m, uint32_t off, uint32_t seq,
			   uint32_t len, uint32_t *kept_seq)
{
	uint32_t i = ooo_find(c, seq), end = seq + len;

	/* ooo[i]: the first range ending after seq */
	if (i < c->ooo_cnt && seq_leq(c->ooo[i].seq, seq)) {
		uint32_t r_end = c->ooo[i].seq + c->ooo[i].len;

		if (seq_geq(r_end, end)) {
			tcp_reass_dsack(c, seq, end); /* all of it was held already */
			goto drop;
		}
		off += r_end - seq;
		seq = r_end;
		i++;
	}
	if (i < c->ooo_cnt && seq_lt(c->ooo[i].seq, end))
		end = c->ooo[i].seq;
	meta(m)->next = NULL;
	meta(m)->off = off;
	meta(m)->len = end - seq;
	*kept_seq = seq;
	if (i > 0 && c->ooo[i - 1].seq + c->ooo[i - 1].len == seq) {
		struct tcp_ooo_ent *p = &c->ooo[i - 1];

		meta(p->tail)->next = m;
		p->tail = m;
		p->len += end - seq;
		if (i < c->ooo_cnt && p->seq + p->len == c->ooo[i].seq)
			ooo_join(c, i - 1);
		return end - seq;
	}
	if (i < c->ooo_cnt && end == c->ooo[i].seq) {
		struct tcp_ooo_ent *n = &c->ooo[i];

		meta(m)->next = n->head;
		n->head = m;
		n->seq = seq;
		n->len += end - seq;
		return end - seq;
	}
	if (!ooo_room(c)) {
		c->s->st.ooo_drops++;
		goto drop;
	}
	memmove(&c->ooo[i + 1], &c->ooo[i], (c->ooo_cnt - i) * sizeof(c->ooo[0]));
	c->ooo[i].head = c->ooo[i].tail = m;
	c->ooo[i].seq = seq;
	c->ooo[i].len = end - seq;
	c->ooo_cnt++;
	return end - seq;
drop:
	rte_pktmbuf_free(m);
	return 0;
}

/* rcv_nxt moved: hand over held ranges that became in order, segment by segment. */
static void ooo_pull(struct tcp_conn *c)
{
	while (c->ooo_cnt && seq_leq(c->ooo[0].seq, c->rcv_nxt) && !(c->flags & TCPF_DEAD)) {
		struct rte_mbuf *m = c->ooo[0].head;
		uint32_t seq = c->ooo[0].seq;

		ooo_remove(c, 0);
		while (m) {
			struct rte_mbuf *n = meta(m)->next;
			uint32_t off = meta(m)->off, len = meta(m)->len, skip;

			if (seq_leq(seq + len, c->rcv_nxt) || (c->flags & TCPF_DEAD)) {
				rte_pktmbuf_free(m);
			} else {
				skip = c->rcv_nxt - seq;
				deliver(c, m, off + skip, len - skip);
			}
			seq += len;
			m = n;
		}
	}
}

static void fin_check(struct tcp_conn *c)
{
	if ((c->flags & TCPF_FIN_OOO) && c->fin_seq == c->rcv_nxt) {
		c->flags &= ~TCPF_FIN_OOO;
		c->flags |= TCPF_FIN_RCVD;
		c->rcv_nxt++;
	}
}

static void ack_policy(struct tcp_conn *c, uint32_t len, bool filled)
{
	/* Immediate ACK on a hole filled (RFC 5681 4.2) and every second full segment (full:
	 * our MSS less the timestamp option every segment carries). */
	uint32_t full = c->rcv_mss - (c->ts_ok ? 12u : 0u);

	c->unacked_bytes += len;
	if (filled || c->unacked_bytes >= 2u * full)
		c->flags |= TCPF_ACK_NOW;
	else if (len)
		tcp_delack_arm(c);
}

/* The ACK of an out-of-order segment that was kept (D184). RFC 5681 4.2 asks for an
 * immediate duplicate ACK; as Linux does, the first three for each RCV.NXT leave at once (a
 * sender that counts duplicate ACKs needs them), later ones are held until TCP_COMP_MAX
 * segments wait or for a twentieth of the round trip (at most the delayed-ACK time). While
 * a hole lasts every segment above it is out of order, and an ACK for each doubles the
 * frames a path forwards. A held ACK never hides SACK information: the blocks changed since
 * the last ACK are the front of sack_rcv, and when as many changed as an ACK carries, it
 * leaves at once. Nothing is held without a measured round trip, nor when segments come
 * further apart than a timer tick: an ACK each then costs the path little, and holding
 * them slowed senders on a long path (docs/tcp.md). */
static void ooo_ack_policy(struct tcp_conn *c, bool joins_front)
{
	unsigned room = (c->ts_ok ? 3u : 4u) - (c->dsack_due ? 1u : 0u);
	uint64_t us = c->s->cfg.delack_us, now = tcp_now_us(c->s);
	bool sparse = now - c->comp_last_us > TCP_TICK_US;

	c->comp_last_us = now;
	if (c->comp_nxt != c->rcv_nxt) {
		c->comp_nxt = c->rcv_nxt;
		c->comp_dups = 0;
	}
	if ((!joins_front || !c->comp_fresh) && c->comp_fresh < UINT8_MAX)
		c->comp_fresh++;
	if (c->comp_dups < 3) {
		c->comp_dups++;
		c->flags |= TCPF_ACK_NOW;
		return;
	}
	if (c->comp_fresh >= room || ++c->comp_held >= TCP_COMP_MAX || !c->rto.srtt_us ||
	    sparse) {
		c->flags |= TCPF_ACK_NOW;
		return;
	}
	c->s->st.acks_compressed++;
	if (c->rto.srtt_us / 20 < us)
		us = c->rto.srtt_us / 20;
	tcp_ack_within(c, us);
}

static void in_order(struct tcp_conn *c, struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	bool had_ooo = c->ooo_cnt != 0;

	deliver(c, m, off, len);
	if (c->flags & TCPF_DEAD)
		return;
	ooo_pull(c);
	tcp_sack_rcv_advance(&c->sack_rcv, c->rcv_nxt);
	fin_check(c);
	ack_policy(c, len, had_ooo);
}

/* Receive-window autotuning: the window doubles, up to cfg.rcv_buf_max, when the last ACK
 * announced nearly the whole window (the consumer keeps up: a consumer that falls behind is
 * what a window is for) and a segment ends within a quarter window of that right edge (the
 * sender is held back by it). A loss holds the window's left edge for a round trip or two
 * while the sender goes on, so a long path with loss needs several windows of its rate. The
 * next growth needs the larger window announced and filled, a round trip at least; the small
 * window of the handshake (unscaled) never counts. */
static void rcv_buf_grow(struct tcp_conn *c, uint32_t end)
{
	uint32_t max = c->s->cfg.rcv_buf_max, q = c->rcv_buf / 4;

	if (c->rcv_buf >= max || !seq_gt(c->rcv_adv, c->last_ack_sent) ||
	    c->rcv_adv - c->last_ack_sent < 3 * q || seq_lt(end + q, c->rcv_adv))
		return;
	c->rcv_buf = c->rcv_buf > max / 2 ? max : 2 * c->rcv_buf;
}

void tcp_reass_data(struct tcp_conn *c, struct rte_mbuf *m, const struct tcp_seg *seg)
{
	uint32_t seq = seg->seq, len = seg->payload_len, off = seg->hdr_len;
	uint32_t wnd_end = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv : c->rcv_nxt;
	bool fin = seg->flags & TCP_F_FIN;

	if (seq_lt(seq, c->rcv_nxt)) { /* old octets in front: skip them */
		uint32_t d = c->rcv_nxt - seq;

		c->flags |= TCPF_ACK_NOW;
		tcp_reass_dsack(c, seq, d >= len ? seq + len : c->rcv_nxt);
		if (d >= len) {
			c->s->st.dup_segs++;
			fin = fin && seq + len == c->rcv_nxt;
			len = 0;
		} else {
			off += d;
			len -= d;
		}
		seq = c->rcv_nxt;
	}
	if (seq_gt(seq + len, wnd_end)) { /* beyond the window: cut, the FIN with it */
		uint32_t cut = seq + len - wnd_end;

		len -= cut > len ? len : cut;
		fin = false;
		c->flags |= TCPF_ACK_NOW;
	}
	if (len)
		rcv_buf_grow(c, seq + len);
	if (len == 0) {
		rte_pktmbuf_free(m);
	} else if (seq == c->rcv_nxt) {
		in_order(c, m, off, len);
		if (c->flags & TCPF_DEAD)
			return;
	} else {
		uint32_t kseq, kept;

		c->s->st.ooo_segs++;
		c->st.ooo_segs++;
		kept = ooo_insert(c, m, off, seq, len, &kseq);
		if (kept) {
			bool front = tcp_sack_rcv_joins_front(&c->sack_rcv, kseq, kseq + kept);

			tcp_sack_rcv_add(&c->sack_rcv, kseq, kseq + kept);
			ooo_ack_policy(c, front);
		} else {
			c->flags |= TCPF_ACK_NOW; /* a duplicate (D-SACK) or a drop */
		}
	}
	if (fin) {
		c->fin_seq = seq + len;
		c->flags |= TCPF_FIN_OOO;
		fin_check(c);
		c->flags |= TCPF_ACK_NOW;
	}
}

void tcp_reass_purge(struct tcp_conn *c)
{
	struct rte_mbuf *m;

	while (c->ooo_cnt) {
		list_free(c->ooo[c->ooo_cnt - 1].head);
		c->ooo_cnt--;
	}
	while ((m = rxq_pop(c)) != NULL)
		rte_pktmbuf_free(m);
}
