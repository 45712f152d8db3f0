/* The send queue and tcp_send: data kept as mbufs from the first unacknowledged octet to
 * snd_end (copied into our mbufs, or the caller's memory for zero-copy: tcp_zc.c), cloned
 * per transmission so that retransmissions reuse the same data. Record mode (MPA alignment):
 * segment boundaries follow record boundaries (tcp_seg_len_at). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "tcp_int.h"

/* sq_cap is a power of two (TCP_SQ_INIT, doubled by sq_grow). */
_Static_assert((TCP_SQ_INIT & (TCP_SQ_INIT - 1)) == 0, "TCP_SQ_INIT: a power of two");

static struct tcp_sq_ent *ent(const struct tcp_conn *c, uint32_t i)
{
	return &c->sq[(c->sq_head + i) & (c->sq_cap - 1)];
}

/* The send buffer: cfg.snd_buf, or twice the window (the congestion window, or the peer's if
 * smaller) up to cfg.snd_buf_max, so that a window's worth can be queued while one is in
 * flight (with what SACK holds behind a hole): a sender whose window outgrows a fixed buffer
 * stalls on the buffer, not on the network. A peer that does not read keeps it small. */
uint32_t tcp_snd_buf_now(const struct tcp_conn *c)
{
	uint32_t wnd = c->cc.cwnd < c->snd_wnd ? c->cc.cwnd : c->snd_wnd;
	uint64_t want = 2ull * wnd;
	uint32_t base = c->s->cfg.snd_buf, max = c->s->cfg.snd_buf_max;

	if (want <= base)
		return base;
	return want >= max ? max : (uint32_t)want;
}

uint32_t tcp_sq_space(const struct tcp_conn *c)
{
	uint32_t buf = tcp_snd_buf_now(c);

	return c->sq_bytes >= buf ? 0 : buf - c->sq_bytes;
}

/* Double the ring (amortised: not per packet). */
static int sq_grow(struct tcp_conn *c)
{
	uint32_t cap = c->sq_cap * 2, i;
	struct tcp_sq_ent *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < c->sq_cnt; i++)
		n[i] = *ent(c, i);
	free(c->sq);
	c->sq = n;
	c->sq_cap = cap;
	c->sq_head = 0;
	return 0;
}

int tcp_sq_reserve(struct tcp_conn *c, uint32_t n)
{
	while (c->sq_cap - c->sq_cnt < n)
		if (sq_grow(c))
			return -ENOMEM;
	return 0;
}

/* Queued payload may take the transmit pool's mbufs only up to this bound: output needs
 * mbufs of the same pool for every segment (a header, clones of the queue's data), for ACKs
 * and retransmissions. Queues that took every mbuf would leave none to send what would be
 * acknowledged, and nothing would free them again: every connection of the stack would stall.
 * A quarter is kept: more than a NIC's transmit ring (1024) holds from a pool of the port's
 * default size (dpdk/), and plenty where the PMD copies each frame out and frees it at once. */
uint32_t tcp_sq_mbufs_max(uint32_t pool_size)
{
	return pool_size - pool_size / 4;
}

bool tcp_sq_budget(struct tcp_conn *c, uint32_t n)
{
	if (c->s->sq_mbufs + n <= c->s->sq_mbufs_max)
		return true;
	c->s->st.sq_full++;
	return false;
}

int tcp_sq_push(struct tcp_conn *c, struct rte_mbuf *m, uint32_t len, bool copy)
{
	struct tcp_sq_ent *e;

	if (c->sq_cnt == c->sq_cap && sq_grow(c))
		return -ENOMEM;
	e = ent(c, c->sq_cnt++);
	e->m = m;
	e->seq = c->snd_end;
	e->len = len;
	e->copy = copy;
	c->snd_end += len;
	c->sq_bytes += len;
	c->s->sq_mbufs++;
	return 0;
}

/* Gather len octets from iov starting at byte offset off. */
static void iov_copy(const struct iovec *iov, unsigned iovcnt, size_t off, uint8_t *dst, size_t len)
{
	unsigned i;

	for (i = 0; i < iovcnt && len; i++) {
		size_t l = iov[i].iov_len, n;

		if (off >= l) {
			off -= l;
			continue;
		}
		n = l - off < len ? l - off : len;
		memcpy(dst, (const uint8_t *)iov[i].iov_base + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
}

static uint32_t tail_room(const struct tcp_conn *c)
{
	struct tcp_sq_ent *e;

	if (!c->sq_cnt)
		return 0;
	e = ent(c, c->sq_cnt - 1);
	return e->copy ? rte_pktmbuf_tailroom(e->m) : 0;
}

static void tail_append(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt, size_t off,
			uint32_t n)
{
	struct tcp_sq_ent *e = ent(c, c->sq_cnt - 1);
	uint8_t *dst = rte_pktmbuf_mtod_offset(e->m, uint8_t *, e->m->data_len);

	/* Writing past data_len is safe while clones of this buffer are in flight: they
	 * reference only the octets before. */
	iov_copy(iov, iovcnt, off, dst, n);
	e->m->data_len = (uint16_t)(e->m->data_len + n);
	e->m->pkt_len += n;
	e->len += n;
	c->snd_end += n;
	c->sq_bytes += n;
}

/* Undo a partial append (mbufs ran out): the queue ends at old_end again. */
static void sq_rollback(struct tcp_conn *c, uint32_t old_end)
{
	while (c->sq_cnt && seq_gt(c->snd_end, old_end)) {
		struct tcp_sq_ent *e = ent(c, c->sq_cnt - 1);
		uint32_t extra = c->snd_end - old_end;

		if (extra < e->len) {
			e->m->data_len = (uint16_t)(e->m->data_len - extra);
			e->m->pkt_len -= extra;
			e->len -= extra;
			c->sq_bytes -= extra;
			c->snd_end = old_end;
			break;
		}
		c->snd_end -= e->len;
		c->sq_bytes -= e->len;
		rte_pktmbuf_free(e->m);
		c->sq_cnt--;
		c->s->sq_mbufs--;
	}
}

/* The next empty buffer for copied octets: from the caller's stash when it gave one (taken
 * all at once, so that a mixed send cannot fail half-way), else from the pool. */
static struct rte_mbuf *copy_buf(struct tcp_conn *c, struct tcp_mbuf_stash *st)
{
	if (!st)
		return tcp_sq_budget(c, 1) ? rte_pktmbuf_alloc(c->s->pool) : NULL;
	return st->used < st->n ? st->m[st->used++] : NULL;
}

int tcp_sq_append_copy(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt, size_t off,
		       size_t len, struct tcp_mbuf_stash *st)
{
	uint32_t old_end = c->snd_end;
	size_t end = off + len;

	while (off < end) {
		uint32_t room = tail_room(c), n;
		struct rte_mbuf *m;

		if (room == 0) {
			m = copy_buf(c, st);
			if (!m || tcp_sq_push(c, m, 0, true)) {
				rte_pktmbuf_free(m);
				sq_rollback(c, old_end);
				return -ENOBUFS;
			}
			m->data_off = 0; /* no headers go here: the whole buffer is payload */
			continue;
		}
		n = end - off < room ? (uint32_t)(end - off) : room;
		tail_append(c, iov, iovcnt, off, n);
		off += n;
	}
	return 0;
}

/* Index of the entry holding seq, or of the first entry when seq is below the queue, or of
 * the last when it is past it. Transmission walks forward, so the last lookup's entry and the
 * next one are tried first; otherwise a binary search: the entries are contiguous and in
 * sequence order. Record mode reads each record's header (tcp_seg_len_at, tcp_sq_ack), often
 * behind or far ahead of the transmission point: a walk from the head there (about 500
 * entries of 2 KiB at MTU 1500) took 27 % of an RDMA Write initiator's core. */
static uint32_t sq_start(const struct tcp_conn *c, uint32_t seq)
{
	uint32_t h = c->sq_hint, lo = 0, hi, base;

	if (c->sq_cnt == 0)
		return 0;
	for (uint32_t i = h; i < c->sq_cnt && i <= h + 1; i++) {
		const struct tcp_sq_ent *e = ent(c, i);

		if (seq_leq(e->seq, seq) && seq_lt(seq, e->seq + e->len))
			return i;
	}
	base = ent(c, 0)->seq;
	if (seq_lt(seq, base))
		return 0;
	hi = c->sq_cnt - 1;
	while (lo < hi) { /* the last entry starting at or below seq */
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (ent(c, mid)->seq - base <= seq - base)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* A clone chain of [seq, seq+len) of the queue. */
struct rte_mbuf *tcp_sq_clone(struct tcp_conn *c, uint32_t seq, uint32_t len)
{
	struct rte_mbuf *head = NULL;
	uint32_t end = seq + len, i;

	for (i = sq_start(c, seq); i < c->sq_cnt && seq_lt(seq, end); i++) {
		struct tcp_sq_ent *e = ent(c, i);
		uint32_t e_end = e->seq + e->len, off, n;
		struct rte_mbuf *cl;

		if (seq_leq(e_end, seq))
			continue;
		off = seq - e->seq;
		n = (seq_lt(end, e_end) ? end : e_end) - seq;
		cl = rte_pktmbuf_clone(e->m, c->s->pool);
		if (!cl)
			goto fail;
		rte_pktmbuf_adj(cl, (uint16_t)off);
		rte_pktmbuf_trim(cl, (uint16_t)(cl->data_len - n));
		if (!head)
			head = cl;
		else if (rte_pktmbuf_chain(head, cl)) {
			rte_pktmbuf_free(cl);
			goto fail;
		}
		seq += n;
		c->sq_hint = i;
	}
	if (seq != end)
		goto fail;
	return head;
fail:
	rte_pktmbuf_free(head);
	return NULL;
}

/* Copies [seq, seq + n) of the queue to out; false when part of it is no longer queued.
 * *last: the entry the copy ended in. */
static bool sq_copy(const struct tcp_conn *c, uint32_t seq, uint8_t *out, uint32_t n,
		    uint32_t *last)
{
	uint32_t i;

	for (i = sq_start(c, seq); i < c->sq_cnt && n; i++) {
		struct tcp_sq_ent *e = ent(c, i);
		uint32_t off, k;

		if (seq_leq(e->seq + e->len, seq))
			continue;
		if (seq_lt(seq, e->seq))
			return false; /* already freed */
		off = seq - e->seq;
		k = e->len - off < n ? e->len - off : n;
		memcpy(out, rte_pktmbuf_mtod_offset(e->m, const uint8_t *, off), k);
		out += k;
		seq += k;
		n -= k;
		*last = i;
	}
	return n == 0;
}

bool tcp_sq_read(const struct tcp_conn *c, uint32_t seq, uint8_t *out, uint32_t n)
{
	uint32_t last;

	return sq_copy(c, seq, out, n, &last);
}

bool tcp_sq_copy_out(struct tcp_conn *c, uint32_t seq, uint8_t *out, uint32_t n)
{
	uint32_t last = c->sq_hint;

	if (!sq_copy(c, seq, out, n, &last))
		return false;
	c->sq_hint = last; /* as tcp_sq_clone: the next segment's lookup starts here */
	return true;
}

/* ---- record mode ------------------------------------------------------------------------ */
/* A record's 2-octet header: from the entry last sent from when it holds both octets (the
 * common case, much cheaper than the general lookup), else looked up. */
static bool sq_peek2(const struct tcp_conn *c, uint32_t seq, uint8_t h[2])
{
	if (c->sq_hint < c->sq_cnt) {
		const struct tcp_sq_ent *e = ent(c, c->sq_hint);
		uint32_t off = seq - e->seq;

		if (seq_leq(e->seq, seq) && off + 2 <= e->len) {
			memcpy(h, rte_pktmbuf_mtod_offset(e->m, const uint8_t *, off), 2);
			return true;
		}
	}
	return tcp_sq_read(c, seq, h, 2);
}

static uint32_t rec_next(const struct tcp_conn *c, uint32_t b)
{
	uint8_t h[2];
	size_t r;

	if (b == c->rec_base && c->rec_base_next_ok)
		return c->rec_base_next;
	if (!seq_lt(b, c->snd_end)) /* nothing queued there yet */
		return c->snd_end;
	if (!sq_peek2(c, b, h))
		return c->snd_end;
	r = c->rec_len(h);
	/* tcp_send validated every record; a zero length would only loop */
	return r ? b + (uint32_t)r : c->snd_end;
}

/* The record containing seq: [*b, *e). */
static void rec_find(struct tcp_conn *c, uint32_t seq, uint32_t *b, uint32_t *e)
{
	uint32_t x = seq_geq(seq, c->rec_walk) ? c->rec_walk : c->rec_base, nx;

	for (;;) {
		nx = rec_next(c, x);
		if (seq_lt(seq, nx) || !seq_lt(nx, c->snd_end))
			break;
		x = nx;
	}
	c->rec_walk = x;
	*b = x;
	*e = nx;
}

/* Called before the acknowledged mbufs are freed: the header of the new base record is
 * read (and its end cached) while it is still queued. */
static void rec_advance_base(struct tcp_conn *c, uint32_t una)
{
	while (seq_lt(c->rec_base, una)) {
		uint32_t nx = rec_next(c, c->rec_base);

		if (seq_gt(nx, una))
			break;
		c->rec_base = nx;
		c->rec_base_next_ok = false;
	}
	if (!c->rec_base_next_ok && seq_lt(c->rec_base, c->snd_end)) {
		c->rec_base_next = rec_next(c, c->rec_base);
		c->rec_base_next_ok = true;
	}
	if (seq_lt(c->rec_walk, c->rec_base))
		c->rec_walk = c->rec_base;
	/* Every octet below rec_base is acknowledged and never sent again, so rec_start may
	 * follow it; it must, to stay within 2^31 of the sequence numbers compared with it: a
	 * fixed rec_start read as "ahead" after 2 GiB in record mode (serial arithmetic), and
	 * segmentation fell back to plain octets. */
	c->rec_start = c->rec_base;
}

/* Octets of the next segment at seq given the usable window avail: in record mode whole
 * records that fit min(avail, mss), a record longer than the MSS split at the MSS (the only
 * case where a segment starts inside a record), or 0 to wait for window. */
uint32_t tcp_seg_len_at(struct tcp_conn *c, uint32_t seq, uint32_t avail, uint32_t mss)
{
	uint32_t left = c->snd_end - seq, cap = avail < mss ? avail : mss, b, e, len = 0;

	if (!seq_lt(seq, c->snd_end))
		return 0;
	if (!c->rec_len || seq_lt(seq, c->rec_start)) {
		if (c->rec_len && c->rec_start - seq < left)
			left = c->rec_start - seq;
		return cap < left ? cap : left;
	}
	rec_find(c, seq, &b, &e);
	if (seq != b) /* inside a record longer than the MSS */
		return e - seq < cap ? e - seq : cap;
	while (seq_lt(b, c->snd_end) && e - seq <= cap) {
		len = e - seq;
		b = e;
		e = rec_next(c, b);
	}
	if (len)
		return len;
	if (e - seq > mss) /* too long for one segment: split at the MSS */
		return avail >= mss || avail >= c->max_snd_wnd / 2 ? cap : 0;
	return 0;
}

void tcp_conn_set_records(struct tcp_conn *c, tcp_rec_len_fn rec_len)
{
	if (!c)
		return;
	c->rec_len = rec_len;
	c->rec_start = c->rec_base = c->rec_walk = c->snd_end;
	c->rec_base_next_ok = false;
}

/* ---- acknowledgement and teardown --------------------------------------------------------- */
void tcp_sq_ack(struct tcp_conn *c, uint32_t una)
{
	if (c->rec_len && seq_geq(una, c->rec_start))
		rec_advance_base(c, una);
	while (c->sq_cnt) {
		struct tcp_sq_ent *e = ent(c, 0);

		if (seq_gt(e->seq + e->len, una))
			break;
		c->sq_bytes -= e->len;
		rte_pktmbuf_free(e->m); /* zero-copy: may run the completion callback */
		c->sq_head = (c->sq_head + 1) & (c->sq_cap - 1);
		c->sq_cnt--;
		c->s->sq_mbufs--;
		c->sq_hint = c->sq_hint ? c->sq_hint - 1 : 0;
	}
}

void tcp_sq_purge(struct tcp_conn *c)
{
	while (c->sq_cnt) {
		struct tcp_sq_ent *e = ent(c, 0);

		rte_pktmbuf_free(e->m);
		c->sq_head = (c->sq_head + 1) & (c->sq_cap - 1);
		c->sq_cnt--;
		c->s->sq_mbufs--;
	}
	c->sq_bytes = 0;
	c->sq_hint = 0;
}

/* ---- tcp_send ------------------------------------------------------------------------------ */
int tcp_send_check(const struct tcp_conn *c)
{
	if (!c || (c->flags & (TCPF_DEAD | TCPF_ABORTED | TCPF_USER_GONE)))
		return -EPIPE;
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED)
		return -ENOTCONN;
	if (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT)
		return -EPIPE;
	if (c->flags & (TCPF_FIN_QUEUED | TCPF_CLOSED_BY_USER))
		return -EPIPE;
	return 0;
}

size_t tcp_iov_total(const struct iovec *iov, unsigned iovcnt)
{
	size_t t = 0;
	unsigned i;

	for (i = 0; i < iovcnt; i++)
		t += iov[i].iov_len;
	return t;
}

/* Whole records of iov within limit: their total octets, or a negative errno when not
 * even one record fits (-EAGAIN: space; -EINVAL: incomplete or zero-length record). */
ssize_t tcp_rec_whole(const struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt,
		      size_t total, size_t limit)
{
	size_t off = 0;

	while (off + 2 <= total) {
		uint8_t h[2];
		size_t r;

		iov_copy(iov, iovcnt, off, h, 2);
		r = c->rec_len(h);
		if (r < 2 || off + r > total)
			return off ? (ssize_t)off : -EINVAL;
		if (r > c->s->cfg.snd_buf)
			return off ? (ssize_t)off : -EMSGSIZE;
		if (off + r > limit)
			return off ? (ssize_t)off : -EAGAIN;
		off += r;
	}
	if (off < total && off == 0)
		return -EINVAL;
	return (ssize_t)off;
}

/* How many of total offered octets the queue takes now: > 0, or -EAGAIN (on_writable will
 * follow), -EINVAL / -EMSGSIZE (no whole record). */
ssize_t tcp_send_take(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt, size_t total)
{
	size_t space = tcp_sq_space(c), n = total < space ? total : space;

	/* a full queue limits the sender, not the application */
	if (space)
		tcp_pace_app_limited(c);
	if (c->rec_len) {
		ssize_t w = tcp_rec_whole(c, iov, iovcnt, total, space);

		if (w < 0) {
			if (w == -EAGAIN)
				c->flags |= TCPF_WANT_WRITABLE;
			return w;
		}
		n = (size_t)w;
	}
	if (n < total)
		c->flags |= TCPF_WANT_WRITABLE;
	return n ? (ssize_t)n : -EAGAIN;
}

ssize_t tcp_send(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt)
{
	size_t total;
	ssize_t n;
	int rc = tcp_send_check(c);

	if (rc)
		return rc;
	if (!iov && iovcnt)
		return -EINVAL;
	total = tcp_iov_total(iov, iovcnt);
	if (total == 0)
		return 0;
	n = tcp_send_take(c, iov, iovcnt, total);
	if (n < 0)
		return n;
	rc = tcp_sq_append_copy(c, iov, iovcnt, 0, (size_t)n, NULL);
	if (rc)
		return rc;
	tcp_stack_clock_hold(c->s);
	tcp_output(c);
	tcp_stack_clock_release(c->s);
	return n;
}
