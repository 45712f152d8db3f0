/* The in-memory stream of mem_conn.h. */
#include "mem_conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct mem_conn {
	struct rn_conn base; /* first */
	struct mem_wire *w;
};

static struct mem_wire *wire_of(const struct rn_conn *c)
{
	return ((const struct mem_conn *)c)->w;
}

/* Octets the next read may take: a seeded size (mostly small, sometimes large, so both the
 * buffered and the direct receive paths run), never past the next barrier. 0 at a barrier
 * or the end; -EAGAIN / 0 tell which. */
static ssize_t next_chunk(struct mem_wire *w, size_t want)
{
	size_t end = w->rx_len;

	if (w->next_barrier < w->nbarrier) {
		if (w->barrier[w->next_barrier] <= w->rx_off) {
			w->next_barrier++;
			w->barrier_hit = true;
			return -EAGAIN;
		}
		end = w->barrier[w->next_barrier];
	}
	if (w->rx_off >= end)
		return w->fin ? 0 : -EAGAIN;
	w->rng = w->rng * 1103515245u + 12345u;
	static const size_t span[4] = { 7, 61, 1500, 70000 };
	size_t k = 1 + (w->rng >> 8) % span[(w->rng >> 4) & 3];
	if (k > end - w->rx_off)
		k = end - w->rx_off;
	return (ssize_t)(k < want ? k : want);
}

static ssize_t mem_recv(struct rn_conn *c, void *buf, size_t len)
{
	struct mem_wire *w = wire_of(c);
	ssize_t k = len ? next_chunk(w, len) : -EINVAL;

	if (k <= 0)
		return k;
	memcpy(buf, w->rx + w->rx_off, (size_t)k);
	w->rx_off += (size_t)k;
	return k;
}

static void lend_release(struct rn_rx_view *v)
{
	for (unsigned i = 0; i < v->owners; i++)
		free(v->owner[i]);
	v->n = v->owners = 0;
}

/* Lends up to RN_RX_VIEW_RUNS runs, each a fresh exact-size copy: ASan sees a read past a run
 * or after the release. */
static ssize_t mem_recv_lend(struct rn_conn *c, struct rn_rx_view *v, size_t len)
{
	struct mem_wire *w = wire_of(c);
	size_t total = 0;

	v->n = v->owners = 0;
	v->release = lend_release;
	while (total < len && v->n < RN_RX_VIEW_RUNS) {
		ssize_t k = next_chunk(w, len - total);
		if (k <= 0) {
			if (total)
				break;
			return k;
		}
		uint8_t *p = malloc((size_t)k);
		if (!p)
			abort();
		memcpy(p, w->rx + w->rx_off, (size_t)k);
		w->rx_off += (size_t)k;
		v->run[v->n++] = (struct iovec){ p, (size_t)k };
		v->owner[v->owners++] = p;
		total += (size_t)k;
	}
	return (ssize_t)total;
}

static ssize_t mem_sendv(struct rn_conn *c, const struct iovec *iov, unsigned n)
{
	struct mem_wire *w = wire_of(c);
	size_t total = 0;

	if (w->tx_shut)
		return -EPIPE;
	for (unsigned i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (w->tx_tight && total > 1) {
		w->rng = w->rng * 1103515245u + 12345u;
		size_t k = 1 + (w->rng >> 8) % 64;
		total = k < total ? k : total;
	}
	uint8_t *dst = growbuf_room(&w->tx, total);
	size_t left = total;
	for (unsigned i = 0; i < n && left; i++) {
		size_t k = iov[i].iov_len < left ? iov[i].iov_len : left;
		if (k)
			memcpy(dst, iov[i].iov_base, k);
		dst += k;
		left -= k;
	}
	w->tx.len += total;
	return total ? (ssize_t)total : -EAGAIN;
}

static int mem_connect_status(struct rn_conn *c)
{
	(void)c;
	return 0;
}

static int mem_shutdown_write(struct rn_conn *c)
{
	wire_of(c)->tx_shut = true;
	return 0;
}

static void mem_close(struct rn_conn *c)
{
	wire_of(c)->closed = true;
	free(c);
}

static void mem_abort(struct rn_conn *c)
{
	wire_of(c)->aborted = true;
	free(c);
}

static int mem_fd(const struct rn_conn *c)
{
	(void)c;
	return -1;   /* nothing to wait on: the harness calls the QP itself */
}

static int mem_addr(const struct rn_conn *c, struct sockaddr *a, socklen_t *l)
{
	(void)c;
	(void)a;
	(void)l;
	return -EOPNOTSUPP;
}

static int mem_mss(const struct rn_conn *c)
{
	(void)c;
	return 1448;
}

#define MEM_OPS_COMMON \
	.connect_status = mem_connect_status, \
	.sendv = mem_sendv, \
	.recv = mem_recv, \
	.shutdown_write = mem_shutdown_write, \
	.close = mem_close, \
	.abort = mem_abort, \
	.fd = mem_fd, \
	.local_addr = mem_addr, \
	.peer_addr = mem_addr, \
	.mss = mem_mss

static const struct rn_transport_ops copy_ops = { .name = "fuzz-mem", MEM_OPS_COMMON };
static const struct rn_transport_ops lend_ops = {
	.name = "fuzz-mem-lend", .recv_lend = mem_recv_lend, MEM_OPS_COMMON
};

struct rn_conn *mem_conn_new(struct mem_wire *w, bool lend)
{
	struct mem_conn *c = calloc(1, sizeof(*c));

	if (!c)
		abort();
	c->base.ops = lend ? &lend_ops : &copy_ops;
	c->w = w;
	return &c->base;
}

void mem_wire_fini(struct mem_wire *w)
{
	free(w->tx.p);
	w->tx = (struct growbuf){ 0 };
}
