/* Zero-copy transmit: the caller's memory enters the send queue as external-buffer mbufs
 * sharing one rte_mbuf_ext_shared_info per tcp_send_zc. Its reference count is the number of
 * mbufs attached (queue entries plus clones in flight or held by the port), so the free
 * callback runs exactly when nothing references the memory any more; on_zc_done follows,
 * in send order, from input or poll. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "tcp_int.h"

#define ZC_CHUNK 32768u /* an mbuf's data_len is 16 bits */
#define ZC_MBUFS 1024u  /* mbufs one send may attach (tcp.h) */

static void zc_released(void *addr, void *opaque)
{
	struct tcp_zc *z = opaque;

	(void)addr;
	z->released = true;
	if (z->conn)
		tcp_conn_defer(z->conn);
}

static struct tcp_zc *zc_get(struct tcp_stack *s)
{
	struct tcp_zc *z;

	if (!tcp_link_empty(&s->zc_free)) {
		z = TCP_CONTAINER(s->zc_free.next, struct tcp_zc, link);
		tcp_link_del(&z->link);
	} else {
		z = malloc(sizeof(*z)); /* recycled: allocation only while the pool grows */
		if (!z)
			return NULL;
	}
	memset(z, 0, sizeof(*z));
	z->s = s;
	return z;
}

static void zc_put(struct tcp_zc *z)
{
	tcp_link_add_tail(&z->s->zc_free, &z->link);
}

void tcp_zc_free_all(struct tcp_stack *s)
{
	while (!tcp_link_empty(&s->zc_free)) {
		struct tcp_zc *z = TCP_CONTAINER(s->zc_free.next, struct tcp_zc, link);

		tcp_link_del(&z->link);
		free(z);
	}
}

/* A referenced run is queued in pieces of at most this many octets: an mbuf's data_len is 16
 * bits, and tcp_stack_zc_unref must be able to replace each piece by one of the pool's
 * buffers. */
static size_t zc_chunk(const struct tcp_stack *s)
{
	size_t room = rte_pktmbuf_data_room_size(s->pool);

	return room < ZC_CHUNK ? room : ZC_CHUNK;
}

static unsigned chunks(size_t len, size_t chunk)
{
	return (unsigned)((len + chunk - 1) / chunk);
}

static rte_iova_t iova_of(void *p)
{
	return rte_eal_iova_mode() == RTE_IOVA_VA ? (rte_iova_t)(uintptr_t)p : RTE_BAD_IOVA;
}

/* Attach len octets at p to the mbufs ms[*k...] and queue them (room reserved before). */
static void zc_queue_run(struct tcp_conn *c, struct tcp_zc *z, uint8_t *p, size_t len,
			 struct rte_mbuf **ms, unsigned *k)
{
	size_t chunk = zc_chunk(c->s);

	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		struct rte_mbuf *m = ms[(*k)++];

		rte_pktmbuf_attach_extbuf(m, p + off, iova_of(p + off), (uint16_t)n, &z->shinfo);
		m->data_len = (uint16_t)n;
		m->pkt_len = (uint32_t)n;
		tcp_sq_push(c, m, (uint32_t)n, false); /* cannot fail: reserved */
	}
	z->end_seq = c->snd_end; /* acknowledged through its last referenced octet: err 0 */
}

/* Take a free record for memory that n mbufs will reference, in send order. */
static struct tcp_zc *zc_start(struct tcp_conn *c, void *cookie, unsigned n)
{
	struct tcp_zc *z = zc_get(c->s);

	if (!z)
		return NULL;
	z->conn = c;
	z->cookie = cookie;
	z->shinfo.free_cb = zc_released;
	z->shinfo.fcb_opaque = z;
	rte_mbuf_ext_refcnt_set(&z->shinfo, (uint16_t)n);
	tcp_link_add_tail(&c->zc_list, &z->link);
	c->zc_outstanding++;
	return z;
}

static void send_output(struct tcp_conn *c)
{
	tcp_stack_clock_hold(c->s);
	tcp_output(c);
	tcp_stack_clock_release(c->s);
}

int tcp_send_zc(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt, void *cookie)
{
	struct rte_mbuf *ms[ZC_MBUFS];
	size_t total, chunk;
	unsigned i, n = 0, k = 0;
	struct tcp_zc *z;
	int rc = tcp_send_check(c);

	if (rc)
		return rc;
	if (!iov || !iovcnt)
		return -EINVAL;
	total = tcp_iov_total(iov, iovcnt);
	if (total == 0)
		return -EINVAL;
	if (c->rec_len && tcp_rec_whole(c, iov, iovcnt, total, total) != (ssize_t)total)
		return -EINVAL; /* all or nothing: whole records only */
	if (total > tcp_sq_space(c)) {
		c->flags |= TCPF_WANT_WRITABLE;
		return -EAGAIN;
	}
	chunk = zc_chunk(c->s);
	for (i = 0; i < iovcnt && n <= ZC_MBUFS; i++)
		n += chunks(iov[i].iov_len, chunk);
	if (n > ZC_MBUFS)
		return -EINVAL;
	if (tcp_sq_reserve(c, n))
		return -ENOMEM;
	if (!tcp_sq_budget(c, n) || rte_pktmbuf_alloc_bulk(c->s->pool, ms, n))
		return -ENOBUFS;
	z = zc_start(c, cookie, n);
	if (!z) {
		rte_pktmbuf_free_bulk(ms, n);
		return -ENOMEM;
	}
	for (i = 0; i < iovcnt; i++)
		zc_queue_run(c, z, iov[i].iov_base, iov[i].iov_len, ms, &k);
	send_output(c);
	return 0;
}

/* ---- mixed sends ------------------------------------------------------------------------- */

/* The mbufs the first len octets of a mixed send need: referenced pieces (*nref) and, at
 * most, buffers for the copied runs (*ncopy: each run may start a new buffer). */
static void mix_count(const struct tcp_stack *s, const struct iovec *iov, unsigned iovcnt,
		      const bool *ref, size_t len, unsigned *nref, unsigned *ncopy)
{
	size_t chunk = zc_chunk(s), room = rte_pktmbuf_data_room_size(s->pool);

	*nref = *ncopy = 0;
	for (unsigned i = 0; i < iovcnt && len; i++) {
		size_t l = iov[i].iov_len < len ? iov[i].iov_len : len;

		if (!l)
			continue;
		if (ref[i])
			*nref += chunks(l, chunk);
		else
			*ncopy += chunks(l, room); /* a run starts a buffer or fills the tail's */
		len -= l;
	}
}

/* Queue the first len octets: referenced entries attached, the others copied. */
static void mix_queue(struct tcp_conn *c, struct tcp_zc *z, const struct iovec *iov,
		      unsigned iovcnt, const bool *ref, size_t len, struct rte_mbuf **ms,
		      struct tcp_mbuf_stash *st)
{
	size_t off = 0;
	unsigned k = 0;

	for (unsigned i = 0; i < iovcnt && len; i++) {
		size_t l = iov[i].iov_len < len ? iov[i].iov_len : len;

		if (ref[i])
			zc_queue_run(c, z, iov[i].iov_base, l, ms, &k);
		else
			(void)tcp_sq_append_copy(c, iov, iovcnt, off, l, st); /* stash suffices */
		off += l;
		len -= l;
	}
}

ssize_t tcp_send_ref(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt,
		     const bool *ref, void *cookie, bool *held)
{
	struct rte_mbuf *ms[ZC_MBUFS];
	struct tcp_mbuf_stash st;
	unsigned nref, ncopy;
	struct tcp_zc *z;
	size_t total;
	ssize_t n;
	int rc = tcp_send_check(c);

	if (held)
		*held = false;
	if (rc)
		return rc;
	if ((!iov || !ref) && iovcnt)
		return -EINVAL;
	total = tcp_iov_total(iov, iovcnt);
	if (total == 0)
		return 0;
	n = tcp_send_take(c, iov, iovcnt, total);
	if (n < 0)
		return n;
	mix_count(c->s, iov, iovcnt, ref, (size_t)n, &nref, &ncopy);
	if (nref == 0)
		return tcp_send(c, iov, iovcnt);
	if (nref + ncopy > ZC_MBUFS)
		return -EINVAL;
	if (tcp_sq_reserve(c, nref + ncopy))
		return -ENOMEM;
	if (!tcp_sq_budget(c, nref + ncopy) || rte_pktmbuf_alloc_bulk(c->s->pool, ms, nref + ncopy))
		return -ENOBUFS;
	z = zc_start(c, cookie, nref);
	if (!z) {
		rte_pktmbuf_free_bulk(ms, nref + ncopy);
		return -ENOMEM;
	}
	st = (struct tcp_mbuf_stash){ ms + nref, ncopy, 0 };
	mix_queue(c, z, iov, iovcnt, ref, (size_t)n, ms, &st);
	if (st.used < st.n)
		rte_pktmbuf_free_bulk(st.m + st.used, st.n - st.used);
	if (held)
		*held = true;
	send_output(c);
	return n;
}

/* ---- copying out what is referenced ------------------------------------------------------ */

/* Replace the queue's referenced entries by copies. false: the pool ran dry. */
static bool conn_unref(struct tcp_conn *c)
{
	for (uint32_t i = 0; i < c->sq_cnt; i++) {
		struct tcp_sq_ent *e = &c->sq[(c->sq_head + i) & (c->sq_cap - 1)];
		struct rte_mbuf *m;

		if (!RTE_MBUF_HAS_EXTBUF(e->m))
			continue;
		m = rte_pktmbuf_alloc(c->s->pool);
		if (!m)
			return false;
		m->data_off = 0;
		memcpy(rte_pktmbuf_mtod(m, void *), rte_pktmbuf_mtod(e->m, void *), e->len);
		m->data_len = (uint16_t)e->len;
		m->pkt_len = e->len;
		((struct tcp_zc *)e->m->shinfo->fcb_opaque)->copied = true;
		rte_pktmbuf_free(e->m); /* the last reference runs zc_released */
		e->m = m;
	}
	return true;
}

unsigned tcp_stack_zc_unref(struct tcp_stack *s)
{
	unsigned failed = 0;

	for (struct tcp_link *l = s->conns.next; l != &s->conns;) {
		struct tcp_conn *c = TCP_CONTAINER(l, struct tcp_conn, link);

		l = l->next;
		if (c->zc_outstanding == 0 || conn_unref(c))
			continue;
		failed++;
		tcp_send_rst_conn(c);
		tcp_conn_finish(c, -ENOBUFS);
	}
	tcp_run_deferred(s);
	return failed;
}

static bool zc_may_call(const struct tcp_conn *c)
{
	return c->ops && c->ops->on_zc_done && !(c->flags & TCPF_USER_GONE);
}

/* Deliver completions of released sends, in send order; all: past unreleased ones too. */
void tcp_zc_complete(struct tcp_conn *c, bool all, int err)
{
	struct tcp_link *l = c->zc_list.next;

	while (l != &c->zc_list) {
		struct tcp_zc *z = TCP_CONTAINER(l, struct tcp_zc, link);
		int e;

		l = l->next;
		if (!z->released) {
			if (all)
				continue;
			break;
		}
		e = seq_geq(c->snd_una, z->end_seq) || z->copied
			    ? 0
			    : (err ? err : c->close_err ? c->close_err : -ECONNABORTED);
		tcp_link_del(&z->link);
		c->zc_outstanding--;
		z->conn = NULL;
		if (zc_may_call(c))
			c->ops->on_zc_done(c->arg, c, z->cookie, e);
		zc_put(z);
		l = c->zc_list.next; /* the callback may have changed the list */
	}
}
