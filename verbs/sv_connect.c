/* softrnic_qp_connect: the step our librdmacm layer takes once rn_cm reports ESTABLISHED
 * (verbs_int.h), and the LLP close notification (softrnic_qp_set_close_cb): the stream the QP
 * takes over is wrapped in an rn_conn that forwards every operation to it and reports the
 * end of the stream (EOF, error, our FIN, close / abort) to the QP's registered callback. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_int.h"

/* ORD and IRD follow what MPA negotiated (only ever lowered from what the QP has): ORD to
 * our side's negotiated ORD and to the peer's IRD, IRD to our side's negotiated IRD (on the
 * responder the Reply's values, mpa_negotiate.c D7, e.g. rdma_accept's initiator_depth /
 * responder_resources). MPA revision 1 peers and plain frames say nothing: unchanged. */
static void sv_connect_ird_ord(struct sv_qp *q, const struct mpa_conn_params *p)
{
	struct rn_qp_info info;
	struct rn_qp_mod m = { .next = RN_QPS_IDLE };
	uint32_t ord, ird;

	if (rn_qp_query(q->rn, &info))
		return;
	ord = info.alloc.ord;
	ird = info.alloc.ird;
	if (p->peer_ird != MPA_V2_NO_VALUE && p->peer_ird < ord)
		ord = p->peer_ird;
	if (p->enhanced && p->local_ord < ord)
		ord = p->local_ord;
	if (p->enhanced && p->local_ird < ird)
		ird = p->local_ird;
	if (ord != info.alloc.ord) {
		m.mask |= RN_QPM_ORD;
		m.attr.ord = ord;
	}
	if (ird != info.alloc.ird) {
		m.mask |= RN_QPM_IRD;
		m.attr.ird = ird;
	}
	if (m.mask)
		rn_qp_modify_qp(q->rn, &m, NULL);
}

/* ---- LLP close notification ------------------------------------------------------------ */
int softrnic_qp_set_close_cb(struct ibv_qp *qp, void (*fn)(void *arg), void *arg)
{
	struct sv_qp *q = sv_qp(qp);

	if (!q)
		return EINVAL;
	pthread_mutex_lock(&q->close_mtx);   /* waits for a running call */
	q->close_fn = fn;
	q->close_arg = fn ? arg : NULL;
	pthread_mutex_unlock(&q->close_mtx);
	return 0;
}

void sv_qp_llp_closed(struct sv_qp *q)
{
	pthread_mutex_lock(&q->close_mtx);
	if (q->close_fn)
		q->close_fn(q->close_arg);
	pthread_mutex_unlock(&q->close_mtx);
}

/* The wrapped stream. Used by one thread at a time (the QP's lock), like any rn_conn; the
 * QP outlives it (the QP releases its stream before it is freed). */
struct sv_llp {
	struct rn_conn base;     /* first: the QP's handle */
	struct rn_conn *inner;   /* the transport's stream */
	struct sv_qp *q;
	bool ended;              /* reported already */
};

static struct sv_llp *sv_llp_of(const struct rn_conn *c)
{
	return (struct sv_llp *)(uintptr_t)c;
}

static void sv_llp_end(struct sv_llp *w)
{
	if (!w->ended) {
		w->ended = true;
		sv_qp_llp_closed(w->q);
	}
}

static int sv_llp_no_listen(const struct rn_transport *t, const struct sockaddr *a, socklen_t l,
			    int backlog, struct rn_conn **out)
{
	(void)t, (void)a, (void)l, (void)backlog, (void)out;
	return -EOPNOTSUPP;
}

static int sv_llp_no_accept(struct rn_conn *l, struct rn_conn **out)
{
	(void)l, (void)out;
	return -EOPNOTSUPP;
}

static int sv_llp_no_connect(const struct rn_transport *t, const struct sockaddr *a,
			     socklen_t l, struct rn_conn **out)
{
	(void)t, (void)a, (void)l, (void)out;
	return -EOPNOTSUPP;
}

static int sv_llp_connect_status(struct rn_conn *c)
{
	return rn_conn_connect_status(sv_llp_of(c)->inner);
}

static ssize_t sv_llp_sendv(struct rn_conn *c, const struct iovec *iov, unsigned n)
{
	struct sv_llp *w = sv_llp_of(c);
	ssize_t r = rn_conn_sendv(w->inner, iov, n);

	if (r < 0 && r != -EAGAIN)
		sv_llp_end(w);
	return r;
}

static ssize_t sv_llp_sendv_ref(struct rn_conn *c, const struct iovec *iov, unsigned n,
				const bool *ref, uint64_t batch, bool *held)
{
	struct sv_llp *w = sv_llp_of(c);
	ssize_t r = rn_conn_sendv_ref(w->inner, iov, n, ref, batch, held);

	if (r < 0 && r != -EAGAIN)
		sv_llp_end(w);
	return r;
}

static ssize_t sv_llp_send_space(struct rn_conn *c, size_t need)
{
	return rn_conn_send_space(sv_llp_of(c)->inner, need);
}

static uint64_t sv_llp_ref_released(struct rn_conn *c)
{
	return rn_conn_ref_released(sv_llp_of(c)->inner);
}

/* A receive's result r: the end of stream or an error ends the stream. */
static ssize_t sv_llp_received(struct sv_llp *w, ssize_t r)
{
	if (r == 0 || (r < 0 && r != -EAGAIN))
		sv_llp_end(w);
	return r;
}

static ssize_t sv_llp_recv(struct rn_conn *c, void *buf, size_t len)
{
	struct sv_llp *w = sv_llp_of(c);

	return sv_llp_received(w, rn_conn_recv(w->inner, buf, len));
}

static ssize_t sv_llp_recv_lend(struct rn_conn *c, struct rn_rx_view *v, size_t len)
{
	struct sv_llp *w = sv_llp_of(c);

	return sv_llp_received(w, rn_conn_recv_lend(w->inner, v, len));
}

static int sv_llp_shutdown_write(struct rn_conn *c)
{
	struct sv_llp *w = sv_llp_of(c);
	int r = rn_conn_shutdown_write(w->inner);

	sv_llp_end(w);
	return r;
}

static void sv_llp_close(struct rn_conn *c)
{
	struct sv_llp *w = sv_llp_of(c);

	rn_conn_close(w->inner);
	sv_llp_end(w);
	free(w);
}

static void sv_llp_abort(struct rn_conn *c)
{
	struct sv_llp *w = sv_llp_of(c);

	rn_conn_abort(w->inner);
	sv_llp_end(w);
	free(w);
}

static int sv_llp_fd(const struct rn_conn *c)
{
	return rn_conn_fd(sv_llp_of(c)->inner);
}

static int sv_llp_local_addr(const struct rn_conn *c, struct sockaddr *a, socklen_t *l)
{
	return rn_conn_local_addr(sv_llp_of(c)->inner, a, l);
}

static int sv_llp_peer_addr(const struct rn_conn *c, struct sockaddr *a, socklen_t *l)
{
	return rn_conn_peer_addr(sv_llp_of(c)->inner, a, l);
}

static int sv_llp_mss(const struct rn_conn *c)
{
	unsigned v = rn_conn_mss(sv_llp_of(c)->inner);

	return v ? (int)v : -EOPNOTSUPP;
}

static int sv_llp_set_records(struct rn_conn *c, size_t (*rec_len)(const uint8_t hdr[2]))
{
	return rn_conn_set_records(sv_llp_of(c)->inner, rec_len);
}

/* Eight tables that differ only in ready_as_readable, recv_lend and sendv_ref, properties of
 * the wrapped transport. */
#define SV_LLP_OPS(ready, lend, ref)                       \
	{                                                  \
		.name = "softrnic-verbs-llp",              \
		.listen = sv_llp_no_listen,                \
		.accept = sv_llp_no_accept,                \
		.connect = sv_llp_no_connect,              \
		.connect_status = sv_llp_connect_status,   \
		.sendv = sv_llp_sendv,                     \
		.recv = sv_llp_recv,                       \
		.recv_lend = (lend) ? sv_llp_recv_lend : NULL, \
		.send_space = (ref) ? sv_llp_send_space : NULL, \
		.shutdown_write = sv_llp_shutdown_write,   \
		.close = sv_llp_close,                     \
		.abort = sv_llp_abort,                     \
		.fd = sv_llp_fd,                           \
		.local_addr = sv_llp_local_addr,           \
		.peer_addr = sv_llp_peer_addr,             \
		.mss = sv_llp_mss,                         \
		.set_records = sv_llp_set_records,         \
		.sendv_ref = (ref) ? sv_llp_sendv_ref : NULL, \
		.ref_released = (ref) ? sv_llp_ref_released : NULL, \
		.ready_as_readable = (ready),              \
	}
#define SV_LLP_OPS2(ready, lend) { SV_LLP_OPS(ready, lend, false), SV_LLP_OPS(ready, lend, true) }
static const struct rn_transport_ops sv_llp_ops[2][2][2] = {   /* [ready][lend][ref] */
	{ SV_LLP_OPS2(false, false), SV_LLP_OPS2(false, true) },
	{ SV_LLP_OPS2(true, false), SV_LLP_OPS2(true, true) },
};

/* ---- connect ----------------------------------------------------------------------------- */
int softrnic_qp_connect(struct ibv_qp *qp, struct rn_cm_handoff *h)
{
	struct sv_qp *q = sv_qp(qp);
	struct rn_qp_mod m = { .next = RN_QPS_RTS, .mask = RN_QPM_LLP_HANDLE };
	struct sv_llp *w;
	enum rn_status st;

	if (!q || !h || !h->conn)
		return EINVAL;
	if (rn_qp_get_state(q->rn) != RN_QPS_IDLE)
		return EINVAL;
	w = malloc(sizeof(*w));
	if (!w)
		return ENOMEM;
	*w = (struct sv_llp){ .base = { .ops = &sv_llp_ops[rn_conn_ready_as_readable(h->conn)]
						       [rn_conn_can_lend(h->conn)]
						       [rn_conn_can_ref(h->conn)] },
			      .inner = h->conn, .q = q };
	sv_connect_ird_ord(q, &h->params);
	h->conn = &w->base;
	m.llp = h;
	st = rn_qp_modify_qp(q->rn, &m, NULL);
	if (st) {   /* *h untouched by the QP: give the caller its own stream back */
		h->conn = w->inner;
		free(w);
		return sv_errno(st);
	}
	q->idle_state = IBV_QPS_RESET;   /* a later Idle (closed) reads as RESET */
	qp->state = IBV_QPS_RTS;
	return 0;
}
