/* Helpers for the QP tests: a device (rn_mem, event queue, CQs, PDs), two QPs connected over
 * real loopback TCP with rn_cm, driven by calling on_readable / on_writable in a loop (no
 * threads), and a raw peer for injecting bytes. Every wait is bounded. */
#ifndef TEST_QP_UTIL_H
#define TEST_QP_UTIL_H

#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rn_qp.h"
#include "test_cm_util.h"

#define Q_WAIT_MS 5000

static struct { void *h; enum rn_event_id id; } q_evlog[256];
static unsigned q_evn;

struct qdev {
	struct rn_mem *mem;
	struct rn_evq *evq;
	uint32_t pd, pd2;
};

struct qside {
	struct qdev *d;
	struct rn_cq *scq, *rcq;
	struct rn_qp *qp;
	struct rn_cm_handoff h;
};

static inline void qdev_init(struct qdev *d)
{
	struct rn_mem_limits lim = { .max_pd = 8, .max_mr = 64, .max_mw = 16, .max_pbl = 64 };
	assert_int_equal(rn_mem_create(&lim, &d->mem), RN_OK);
	assert_int_equal(rn_evq_create(256, &d->evq), RN_OK);
	assert_int_equal(rn_mem_pd_alloc(d->mem, &d->pd), RN_OK);
	assert_int_equal(rn_mem_pd_alloc(d->mem, &d->pd2), RN_OK);
}

static inline void qdev_fini(struct qdev *d)
{
	q_evn = 0;
	rn_evq_destroy(d->evq);
	rn_mem_destroy(d->mem);
}

static inline struct rn_cq *q_cq(struct qdev *d, uint32_t n)
{
	struct rn_cq_attr a = { .min_cqe = n, .max_cqe = 1u << 16, .evq = d->evq };
	struct rn_cq *cq;
	uint32_t got;
	assert_int_equal(rn_cq_create(&a, &cq, &got), RN_OK);
	return cq;
}

static inline struct rn_qp_init_attr q_attr(struct qdev *d, struct rn_cq *scq, struct rn_cq *rcq)
{
	struct rn_qp_init_attr a;
	memset(&a, 0, sizeof(a));
	a.mem = d->mem;
	a.pd = d->pd;
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.sq_depth = 64;
	a.rq_depth = 64;
	a.max_send_sge = 4;
	a.max_write_sge = 4;
	a.max_recv_sge = 4;
	a.max_inline = 64;
	a.ord = 4;
	a.ird = 4;
	a.inbound_read = a.inbound_write = a.bind_mw = a.privileged = true;
	a.evq = d->evq;
	return a;
}

/* Create a side's CQs and QP (attr tweaked by fn when given). */
static inline void qside_create(struct qside *s, struct qdev *d,
				void (*fn)(struct rn_qp_init_attr *))
{
	memset(s, 0, sizeof(*s));
	s->d = d;
	s->scq = q_cq(d, 256);
	s->rcq = q_cq(d, 256);
	struct rn_qp_init_attr a = q_attr(d, s->scq, s->rcq);
	if (fn)
		fn(&a);
	assert_int_equal(rn_qp_create(&a, &s->qp, NULL), RN_OK);
}

static inline void qside_destroy(struct qside *s)
{
	if (s->qp)
		assert_int_equal(rn_qp_destroy(s->qp), RN_OK);
	s->qp = NULL;
	free(s->h.rx);
	if (s->h.conn)
		rn_conn_abort(s->h.conn);
	assert_int_equal(rn_cq_destroy(s->scq), RN_OK);
	assert_int_equal(rn_cq_destroy(s->rcq), RN_OK);
}

/* MPA setup over loopback with rn_cm, both ends driven here; fills a->h and b->h. */
static inline void q_cm_pair(struct rn_cm_handoff *ha, struct rn_cm_handoff *hb, bool crc,
			     bool markers)
{
	const struct rn_transport *t = rn_sock_transport();
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);
	struct rn_conn *lis, *pc = NULL;
	struct rn_cm *ca, *cb = NULL;
	struct rn_cm_cfg cfg;

	rn_cm_cfg_default(&cfg);
	cfg.policy.crc_required = crc;
	cfg.policy.markers_wanted = markers;
	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 4, &lis), 0);
	la.sin_port = htons(t_port_of(lis));
	assert_int_equal(rn_cm_connect(t, (struct sockaddr *)&la, sizeof(la), &cfg, NULL, 0, &ca), 0);
	long long end = t_now_ms() + Q_WAIT_MS;
	while (t_now_ms() < end) {
		if (!cb && rn_conn_accept(lis, &pc) == 0)
			assert_int_equal(rn_cm_passive(pc, &cfg, &cb), 0);
		rn_cm_progress(ca);
		if (cb && rn_cm_progress(cb) == RN_CM_WAIT_ACCEPT)
			assert_int_equal(rn_cm_accept(cb, NULL, 0), 0);
		if (cb && rn_cm_state(ca) == RN_CM_ESTABLISHED && rn_cm_state(cb) == RN_CM_ESTABLISHED)
			break;
		poll(NULL, 0, 1);
	}
	assert_non_null(cb);
	assert_int_equal(rn_cm_state(ca), RN_CM_ESTABLISHED);
	assert_int_equal(rn_cm_state(cb), RN_CM_ESTABLISHED);
	assert_int_equal(rn_cm_handoff(ca, ha), 0);
	assert_int_equal(rn_cm_handoff(cb, hb), 0);
	rn_cm_destroy(ca);
	rn_cm_destroy(cb);
	rn_conn_close(lis);
}

static inline void q_rts(struct qside *s)
{
	struct rn_qp_mod m;
	memset(&m, 0, sizeof(m));
	m.next = RN_QPS_RTS;
	m.mask = RN_QPM_LLP_HANDLE;
	m.llp = &s->h;
	assert_int_equal(rn_qp_modify_qp(s->qp, &m, NULL), RN_OK);
	assert_null(s->h.conn);
}

/* Two connected QPs in RTS. */
static inline void q_connect(struct qside *a, struct qside *b, bool crc)
{
	q_cm_pair(&a->h, &b->h, crc, false);
	q_rts(a);
	q_rts(b);
}

/* The same, segmenting for an Ethernet MSS (MULPDU 1442, as siw): for tests about
 * segmentation, which the loopback MSS would otherwise turn into one or two FPDUs. */
static inline void q_connect_eth(struct qside *a, struct qside *b, bool crc)
{
	q_cm_pair(&a->h, &b->h, crc, false);
	a->h.emss = b->h.emss = RN_QP_DEFAULT_EMSS;
	q_rts(a);
	q_rts(b);
}

/* Drive both QPs for a while (until pred() or ms). */
static inline void q_run(struct qside *a, struct qside *b, int ms, bool (*pred)(void *), void *arg)
{
	long long end = t_now_ms() + ms;
	while (t_now_ms() < end) {
		int did = 0;
		struct qside *s[2] = { a, b };
		for (int i = 0; i < 2; i++) {
			if (!s[i] || !s[i]->qp)
				continue;
			did |= rn_qp_on_readable(s[i]->qp);
			did |= rn_qp_on_writable(s[i]->qp);
		}
		if (pred && pred(arg))
			return;
		if (!did)
			poll(NULL, 0, 1);
	}
}

/* Poll one CQE (driving both sides up to Q_WAIT_MS). */
static inline bool q_poll(struct qside *a, struct qside *b, struct rn_cq *cq, struct rn_cqe *e)
{
	long long end = t_now_ms() + Q_WAIT_MS;
	uint32_t got;
	while (t_now_ms() < end) {
		if (rn_cq_poll(cq, e, 1, &got) == RN_OK)
			return true;
		q_run(a, b, 2, NULL, NULL);
	}
	return false;
}

static inline void q_expect(struct qside *a, struct qside *b, struct rn_cq *cq, uint64_t wr_id,
			    enum rn_wc_status st)
{
	struct rn_cqe e;
	assert_true(q_poll(a, b, cq, &e));
	assert_int_equal(e.wr_id, wr_id);
	assert_int_equal(e.status, st);
}

static inline bool q_cq_empty(struct rn_cq *cq)
{
	return rn_cq_count(cq) == 0;
}

/* The next async event for qp, or RN_AE_NONE. Events of other resources are kept in a log
 * for later calls. */

static inline enum rn_event_id q_event(struct qdev *d, struct rn_qp *qp)
{
	struct rn_async_event ev;
	while (rn_evq_get(d->evq, &ev, 0) == 0) {
		rn_evq_ack(d->evq, &ev);
		if (q_evn < 256) {
			q_evlog[q_evn].h = ev.handle;
			q_evlog[q_evn++].id = ev.id;
		}
	}
	for (unsigned i = 0; i < q_evn; i++) {
		if (q_evlog[i].h != qp)
			continue;
		enum rn_event_id id = q_evlog[i].id;
		memmove(&q_evlog[i], &q_evlog[i + 1], (q_evn - i - 1) * sizeof(q_evlog[0]));
		q_evn--;
		return id;
	}
	return RN_AE_NONE;
}

static inline void q_drain_events(struct qdev *d)
{
	struct rn_async_event ev;
	while (rn_evq_get(d->evq, &ev, 0) == 0)
		rn_evq_ack(d->evq, &ev);
	q_evn = 0;
}

/* A guarded buffer: guard bytes around `len` octets of payload, registered as one MR over
 * the payload only. */
#define Q_GUARD 64
struct qbuf {
	uint8_t *raw;
	uint8_t *p;
	size_t len;
	rn_stag_t stag;
};

static inline void qbuf_new(struct qdev *d, struct qbuf *b, size_t len, uint32_t pd, uint32_t acc)
{
	b->raw = malloc(len + 2 * Q_GUARD);
	assert_non_null(b->raw);
	memset(b->raw, 0xee, len + 2 * Q_GUARD);
	b->p = b->raw + Q_GUARD;
	b->len = len;
	memset(b->p, 0, len);
	b->stag = 0;
	if (acc)
		assert_int_equal(rn_mem_reg_mr(d->mem, pd, b->p, len, (uintptr_t)b->p, acc, &b->stag),
				 RN_OK);
}

static inline bool qbuf_guards_ok(const struct qbuf *b)
{
	for (size_t i = 0; i < Q_GUARD; i++)
		if (b->raw[i] != 0xee || b->p[b->len + i] != 0xee)
			return false;
	return true;
}

static inline void qbuf_free(struct qdev *d, struct qbuf *b)
{
	assert_true(qbuf_guards_ok(b));
	if (b->stag)
		rn_mem_dereg(d->mem, b->stag);
	free(b->raw);
}

#define ACC_ALL (RN_ACC_LOCAL_WRITE | RN_ACC_REMOTE_WRITE | RN_ACC_REMOTE_READ | RN_ACC_MW_BIND)

static inline enum rn_status q_recv(struct qside *s, uint64_t id, struct qbuf *b, uint32_t off,
				    uint32_t len)
{
	struct rn_rq_sge sge = { (uintptr_t)(b->p + off), len, b->stag };
	struct rn_recv_wr wr = { id, NULL, &sge, 1 };
	return rn_qp_post_recv(s->qp, &wr, NULL, NULL);
}

/* Posts op on s's send queue: sge[n], immediate data imm, RDMA target rkey / raddr. */
static inline enum rn_status q_post(struct qside *s, uint64_t id, enum rn_wr_opcode op,
				    unsigned flags, struct rn_rq_sge *sge, int n, uint32_t imm,
				    uint32_t rkey, uint64_t raddr)
{
	struct rn_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.flags = flags;
	wr.sg_list = sge;
	wr.num_sge = n;
	wr.imm_data = imm;
	wr.wr.rdma.rkey = rkey;
	wr.wr.rdma.remote_addr = raddr;
	return rn_qp_post_send(s->qp, &wr, NULL, NULL);
}

static inline enum rn_status q_send(struct qside *s, uint64_t id, enum rn_wr_opcode op,
				    unsigned flags, struct rn_rq_sge *sge, int n)
{
	return q_post(s, id, op, flags, sge, n, 0, 0, 0);
}

static inline enum rn_status q_rdma(struct qside *s, uint64_t id, enum rn_wr_opcode op,
				    unsigned flags, struct rn_rq_sge *sge, int n, uint32_t rkey,
				    uint64_t raddr)
{
	return q_post(s, id, op, flags, sge, n, 0, rkey, raddr);
}

/* A new type-2 window bound with key `key` to [addr, addr + len) of mr (remote write) by a
 * signaled Bind on b's send queue (WR id 50), which must succeed; returns the bound STag and,
 * in *alloc when not NULL, the STag rn_mem_alloc_mw returned. */
static inline rn_stag_t q_bind_mw2(struct qside *a, struct qside *b, struct qbuf *mr,
				   uint64_t addr, uint64_t len, uint8_t key, rn_stag_t *alloc)
{
	rn_stag_t mw;
	assert_int_equal(rn_mem_alloc_mw(b->d->mem, b->d->pd, RN_MW_TYPE2, &mw), RN_OK);
	struct rn_send_wr w;
	memset(&w, 0, sizeof(w));
	w.wr_id = 50;
	w.opcode = RN_WR_BIND_MW;
	w.flags = RN_SEND_SIGNALED;
	w.wr.bind.mw_stag = RN_STAG(RN_STAG_IDX(mw), key);
	w.wr.bind.mr_stag = mr->stag;
	w.wr.bind.addr = addr;
	w.wr.bind.length = len;
	w.wr.bind.access = RN_ACC_REMOTE_WRITE;
	assert_int_equal(rn_qp_post_send(b->qp, &w, NULL, NULL), RN_OK);
	q_expect(a, b, b->scq, 50, RN_WC_SUCCESS);
	if (alloc)
		*alloc = mw;
	return w.wr.bind.mw_stag;
}

static inline enum rn_qp_state q_state(struct qside *s)
{
	return rn_qp_get_state(s->qp);
}

/* The fixture most QP tests share: two QPs a and b on one device, not yet connected. */
struct fx {
	struct qdev d;
	struct qside a, b;
};

static inline int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	qdev_init(&f->d);
	qside_create(&f->a, &f->d, NULL);
	qside_create(&f->b, &f->d, NULL);
	*state = f;
	return 0;
}

static inline int fx_teardown(void **state)
{
	struct fx *f = *state;
	qside_destroy(&f->a);
	qside_destroy(&f->b);
	qdev_fini(&f->d);
	free(f);
	return 0;
}

#endif
