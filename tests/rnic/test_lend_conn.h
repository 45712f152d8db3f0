/* A lending stream for QP tests: wraps a kernel-socket stream and implements recv_lend the
 * way a user-space engine does, with every received octet in the transport's own buffers.
 * Each lent run is a separate heap block of exactly its size, with run sizes from 1 octet
 * to 1 KiB, so FPDUs straddle runs, and ASan sees any read past a run or after the view was
 * released. Every other operation goes to the wrapped stream. */
#ifndef TEST_LEND_CONN_H
#define TEST_LEND_CONN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rn_transport.h"

struct lend_conn {
	struct rn_conn base; /* first */
	struct rn_conn *inner;
	uint32_t rng;
	unsigned lends;      /* views handed out */
};

static inline struct lend_conn *lend_of(const struct rn_conn *c)
{
	return (struct lend_conn *)c;
}

static inline void lend_release(struct rn_rx_view *v)
{
	for (unsigned i = 0; i < v->owners; i++)
		free(v->owner[i]);
	v->n = v->owners = 0;
}

static inline ssize_t lend_recv_lend(struct rn_conn *c, struct rn_rx_view *v, size_t len)
{
	struct lend_conn *l = lend_of(c);
	uint8_t tmp[8192];
	size_t off = 0;
	ssize_t n;

	v->n = v->owners = 0;
	v->release = lend_release;
	if (len == 0)
		return -EINVAL;
	n = rn_conn_recv(l->inner, tmp, len < sizeof(tmp) ? len : sizeof(tmp));
	if (n <= 0)
		return n;
	while (off < (size_t)n && v->n < RN_RX_VIEW_RUNS) {
		size_t k;

		l->rng = l->rng * 1103515245u + 12345u;
		k = 1 + (l->rng >> 8) % ((l->rng >> 4) % 4 == 0 ? 1024u : 37u);
		if (k > (size_t)n - off || v->n == RN_RX_VIEW_RUNS - 1)
			k = (size_t)n - off;
		uint8_t *p = malloc(k);
		if (p == NULL)
			abort();
		memcpy(p, tmp + off, k);
		v->run[v->n++] = (struct iovec){ p, k };
		v->owner[v->owners++] = p;
		off += k;
	}
	l->lends++;
	return n;
}

static inline ssize_t lend_sendv(struct rn_conn *c, const struct iovec *iov, unsigned n)
{
	return rn_conn_sendv(lend_of(c)->inner, iov, n);
}

static inline ssize_t lend_recv(struct rn_conn *c, void *buf, size_t len)
{
	return rn_conn_recv(lend_of(c)->inner, buf, len);
}

static inline int lend_connect_status(struct rn_conn *c)
{
	return rn_conn_connect_status(lend_of(c)->inner);
}

static inline int lend_shutdown_write(struct rn_conn *c)
{
	return rn_conn_shutdown_write(lend_of(c)->inner);
}

static inline void lend_close(struct rn_conn *c)
{
	rn_conn_close(lend_of(c)->inner);
	free(c);
}

static inline void lend_abort(struct rn_conn *c)
{
	rn_conn_abort(lend_of(c)->inner);
	free(c);
}

static inline int lend_fd(const struct rn_conn *c)
{
	return rn_conn_fd(lend_of(c)->inner);
}

static inline int lend_local_addr(const struct rn_conn *c, struct sockaddr *a, socklen_t *l)
{
	return rn_conn_local_addr(lend_of(c)->inner, a, l);
}

static inline int lend_peer_addr(const struct rn_conn *c, struct sockaddr *a, socklen_t *l)
{
	return rn_conn_peer_addr(lend_of(c)->inner, a, l);
}

static inline int lend_mss(const struct rn_conn *c)
{
	unsigned v = rn_conn_mss(lend_of(c)->inner);

	return v ? (int)v : -EOPNOTSUPP;
}

static const struct rn_transport_ops lend_ops = {
	.name = "test-lend",
	.connect_status = lend_connect_status,
	.sendv = lend_sendv,
	.recv = lend_recv,
	.recv_lend = lend_recv_lend,
	.shutdown_write = lend_shutdown_write,
	.close = lend_close,
	.abort = lend_abort,
	.fd = lend_fd,
	.local_addr = lend_local_addr,
	.peer_addr = lend_peer_addr,
	.mss = lend_mss,
};

/* Wrap a connected stream; the wrapper owns it from now on. */
static inline struct rn_conn *lend_wrap(struct rn_conn *inner, uint32_t seed)
{
	struct lend_conn *l = calloc(1, sizeof(*l));

	if (l == NULL)
		abort();
	l->base.ops = &lend_ops;
	l->inner = inner;
	l->rng = seed;
	return &l->base;
}

#endif
