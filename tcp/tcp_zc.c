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

static unsigned chunks(const struct iovec *iov, unsigned iovcnt)
{
	unsigned i, n = 0;

	for (i = 0; i < iovcnt; i++)
		n += (unsigned)((iov[i].iov_len + ZC_CHUNK - 1) / ZC_CHUNK);
	return n;
}

static rte_iova_t iova_of(void *p)
{
	return rte_eal_iova_mode() == RTE_IOVA_VA ? (rte_iova_t)(uintptr_t)p : RTE_BAD_IOVA;
}

/* Attach every chunk of iov to the mbufs ms[] and queue them (room reserved before). */
static void zc_queue(struct tcp_conn *c, struct tcp_zc *z, const struct iovec *iov,
		     unsigned iovcnt, struct rte_mbuf **ms)
{
	unsigned i, k = 0;

	for (i = 0; i < iovcnt; i++) {
		size_t off;

		for (off = 0; off < iov[i].iov_len; off += ZC_CHUNK) {
			size_t n = iov[i].iov_len - off < ZC_CHUNK ? iov[i].iov_len - off : ZC_CHUNK;
			uint8_t *p = (uint8_t *)iov[i].iov_base + off;
			struct rte_mbuf *m = ms[k++];

			rte_pktmbuf_attach_extbuf(m, p, iova_of(p), (uint16_t)n, &z->shinfo);
			m->data_len = (uint16_t)n;
			m->pkt_len = (uint32_t)n;
			tcp_sq_push(c, m, (uint32_t)n, false); /* cannot fail: reserved */
		}
	}
}

int tcp_send_zc(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt, void *cookie)
{
	struct rte_mbuf *ms[256];
	size_t total;
	unsigned n;
	struct tcp_zc *z;
	int rc = tcp_send_check(c);

	if (rc)
		return rc;
	if (!iov || !iovcnt)
		return -EINVAL;
	total = tcp_iov_total(iov, iovcnt);
	n = chunks(iov, iovcnt);
	if (total == 0 || n > 256)
		return -EINVAL;
	if (c->rec_len && tcp_rec_whole(c, iov, iovcnt, total, total) != (ssize_t)total)
		return -EINVAL; /* all or nothing: whole records only */
	if (total > tcp_sq_space(c)) {
		c->flags |= TCPF_WANT_WRITABLE;
		return -EAGAIN;
	}
	if (tcp_sq_reserve(c, n))
		return -ENOMEM;
	z = zc_get(c->s);
	if (!z)
		return -ENOMEM;
	if (rte_pktmbuf_alloc_bulk(c->s->pool, ms, n)) {
		zc_put(z);
		return -ENOBUFS;
	}
	z->conn = c;
	z->cookie = cookie;
	z->shinfo.free_cb = zc_released;
	z->shinfo.fcb_opaque = z;
	rte_mbuf_ext_refcnt_set(&z->shinfo, (uint16_t)n);
	tcp_link_add_tail(&c->zc_list, &z->link);
	c->zc_outstanding++;
	zc_queue(c, z, iov, iovcnt, ms);
	z->end_seq = c->snd_end;
	tcp_stack_clock_hold(c->s);
	tcp_output(c);
	tcp_stack_clock_release(c->s);
	return 0;
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
		e = seq_geq(c->snd_una, z->end_seq) ? 0 : (err ? err : c->close_err ? c->close_err
									     : -ECONNABORTED);
		tcp_link_del(&z->link);
		c->zc_outstanding--;
		z->conn = NULL;
		if (zc_may_call(c))
			c->ops->on_zc_done(c->arg, c, z->cookie, e);
		zc_put(z);
		l = c->zc_list.next; /* the callback may have changed the list */
	}
}
