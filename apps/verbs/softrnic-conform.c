/* softrnic-conform: two-process conformance checks of the verbs API over rdma_cm.
 *
 *   softrnic-conform server ADDR PORT     (runs every check, then exits)
 *   softrnic-conform client ADDR PORT
 *
 * Every check runs on fresh connections (its index travels in the connect private data).
 * The server always starts by sending an advertisement {addr, rkey, len, off} with a Send;
 * each side then plays its half and prints "CHECK name: PASS|FAIL (side)". Every registered
 * buffer has guard bytes on both sides, verified when the check ends. Exit status: 0 when
 * every check passed on this side, 1 otherwise, 2 on bad usage.
 * Uses only <infiniband/verbs.h>, <rdma/rdma_cma.h> and <softrnic/verbs_ext.h>.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <softrnic/verbs_ext.h>

#define WAIT_MS 8000
#define GUARD 64
#define GUARD_BYTE 0xa5
#define MAXBUF 12

static bool is_server;

/* ---- guarded buffers -------------------------------------------------------------------- */

struct gbuf {
	uint8_t *raw, *p;
	size_t len;
	struct ibv_mr *mr;
};

struct conn {
	struct rdma_cm_id *id;
	struct ibv_cq *scq, *rcq;
	struct ibv_comp_channel *ch;
	struct ibv_qp *qp;
	bool own_qp;                 /* softrnic_create_qp: destroyed with ibv_destroy_qp */
	bool disc;                   /* DISCONNECTED seen */
	struct gbuf *ctl;            /* 4 x 64-octet control slots */
};

struct adv {
	uint64_t addr;
	uint32_t rkey, len, off, code;
};

struct cx {
	int idx;
	struct conn c[2];
	int nconn;
	struct ibv_pd *pd, *pd2;
	struct ibv_srq *srq;
	struct ibv_mw *mw;
	struct gbuf *bufs[MAXBUF];
	int nbufs;
	struct adv adv;
	struct rdma_event_channel *ech;
};

#define CK(cond)                                                                             \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "  %s: check failed at line %d: %s\n",                   \
				is_server ? "server" : "client", __LINE__, #cond);                   \
			return -1;                                                           \
		}                                                                            \
	} while (0)

static uint8_t pat(size_t i, unsigned seed)
{
	return (uint8_t)(i * 7 + seed * 13 + 1);
}

static struct gbuf *gb_new(struct cx *x, struct ibv_pd *pd, size_t len, int acc, int fill)
{
	struct gbuf *b = calloc(1, sizeof(*b));
	if (!b || x->nbufs == MAXBUF)
		return NULL;
	b->raw = malloc(len + 2 * GUARD);
	if (!b->raw)
		return NULL;
	memset(b->raw, GUARD_BYTE, len + 2 * GUARD);
	b->p = b->raw + GUARD;
	b->len = len;
	memset(b->p, fill, len);
	if (pd) {
		b->mr = ibv_reg_mr(pd, b->p, len, acc);
		if (!b->mr)
			return NULL;
	}
	x->bufs[x->nbufs++] = b;
	return b;
}

static bool gb_guards_ok(const struct gbuf *b)
{
	for (size_t i = 0; i < GUARD; i++)
		if (b->raw[i] != GUARD_BYTE || b->p[b->len + i] != GUARD_BYTE)
			return false;
	return true;
}

static void gb_fill(struct gbuf *b, unsigned seed)
{
	for (size_t i = 0; i < b->len; i++)
		b->p[i] = pat(i, seed);
}

static bool gb_is(const struct gbuf *b, size_t off, size_t n, unsigned seed, size_t pat_off)
{
	for (size_t i = 0; i < n; i++)
		if (b->p[off + i] != pat(pat_off + i, seed))
			return false;
	return true;
}

static bool gb_all(const struct gbuf *b, size_t off, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (b->p[off + i] != v)
			return false;
	return true;
}

/* ---- completions, posting, events --------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long long end = now_ms() + ms;
	struct timespec nap = { 0, 100000 };
	do {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return -1;
		if (n == 1)
			return 0;
		nanosleep(&nap, NULL);
	} while (now_ms() < end);
	fprintf(stderr, "  %s: no completion within %d ms\n", is_server ? "server" : "client", ms);
	return -1;
}

/* The next completion on cq must be (wr_id, status). */
static int expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc;
	CK(wait_wc(cq, &wc, WAIT_MS) == 0);
	if (wc.wr_id != wr_id || wc.status != st)
		fprintf(stderr, "  wc: wr_id %llu status %s (%s), want %llu %s\n",
			(unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
			softrnic_wc_vendor_str(wc.vendor_err), (unsigned long long)wr_id,
			ibv_wc_status_str(st));
	CK(wc.wr_id == wr_id && wc.status == st);
	return 0;
}

static int post_recv(struct conn *c, uint64_t id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sg, .num_sge = n }, *bad;
	return ibv_post_recv(c->qp, &wr, &bad);
}

static int recv_into(struct conn *c, uint64_t id, struct gbuf *b, size_t off, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)(b->p + off), len, b->mr->lkey };
	return post_recv(c, id, &sg, 1);
}

static int post_wr(struct conn *c, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(c->qp, wr, &bad);
	if (rc)
		fprintf(stderr, "  post_send: %s\n", strerror(rc));
	return rc;
}

static int post_op(struct conn *c, uint64_t id, enum ibv_wr_opcode op, unsigned flags,
		   struct ibv_sge *sg, int n, uint32_t rkey, uint64_t raddr)
{
	struct ibv_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.sg_list = sg;
	wr.num_sge = n;
	wr.wr.rdma.rkey = rkey;
	wr.wr.rdma.remote_addr = raddr;
	return post_wr(c, &wr);
}

/* A control message (inline Send of struct adv). */
static int send_ctl(struct conn *c, const struct adv *a)
{
	struct adv m = *a;
	struct ibv_sge sg = { (uintptr_t)&m, sizeof(m), 0 };
	CK(post_op(c, 900, IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE, &sg, 1, 0, 0) == 0);
	return expect_wc(c->scq, 900, IBV_WC_SUCCESS);
}

static int post_ctl_recv(struct conn *c, int slot)
{
	return recv_into(c, 800 + slot, c->ctl, 64 * slot, 64);
}

static int recv_ctl(struct conn *c, int slot, struct adv *a)
{
	CK(expect_wc(c->rcq, 800 + slot, IBV_WC_SUCCESS) == 0);
	memcpy(a, c->ctl->p + 64 * slot, sizeof(*a));
	return 0;
}

static int ctl_code(struct conn *c, uint32_t code)
{
	struct adv a = { .code = code };
	return send_ctl(c, &a);
}

/* The next async event on the device must be `type` for the QP / SRQ given. */
static int wait_async(struct ibv_context *ctx, enum ibv_event_type type, void *res)
{
	long long end = now_ms() + WAIT_MS;
	struct pollfd pfd = { ctx->async_fd, POLLIN, 0 };
	struct ibv_async_event ev;
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (now_ms() < end) {
		if (poll(&pfd, 1, 50) <= 0 || ibv_get_async_event(ctx, &ev) != 0)
			continue;
		void *el = ev.element.qp;
		enum ibv_event_type got = ev.event_type;
		ibv_ack_async_event(&ev);
		if (got == type && el == res)
			return 0;
		fprintf(stderr, "  %s: async event %s (%p), want %s (%p)\n",
			is_server ? "server" : "client", ibv_event_type_str(got), el,
			ibv_event_type_str(type), res);
		if (el == res)
			return -1;
	}
	fprintf(stderr, "  no async event %s\n", ibv_event_type_str(type));
	return -1;
}

/* No async event for res within ms. */
static int no_async(struct ibv_context *ctx, void *res, int ms)
{
	long long end = now_ms() + ms;
	struct pollfd pfd = { ctx->async_fd, POLLIN, 0 };
	struct ibv_async_event ev;
	while (now_ms() < end) {
		if (poll(&pfd, 1, 20) <= 0 || ibv_get_async_event(ctx, &ev) != 0)
			continue;
		void *el = ev.element.qp;
		ibv_ack_async_event(&ev);
		CK(el != res);
	}
	return 0;
}

static enum ibv_qp_state qp_state(struct conn *c)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	if (ibv_query_qp(c->qp, &a, IBV_QP_STATE, &ia))
		return IBV_QPS_UNKNOWN;
	return a.qp_state;
}

/* ---- connection manager ----------------------------------------------------------------- */

static struct rdma_cm_event *stash[4];
static int nstash;

static struct rdma_cm_event *cm_get(struct rdma_event_channel *ch, int ms)
{
	struct pollfd pfd = { ch->fd, POLLIN, 0 };
	struct rdma_cm_event *ev;
	if (poll(&pfd, 1, ms) <= 0 || rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

/* Wait for event t (on id when given); CONNECT_REQUESTs seen meanwhile are kept for later,
 * DISCONNECTED of other connections mark them. The caller acks *out. */
static int cm_wait(struct rdma_event_channel *ch, enum rdma_cm_event_type t,
		   struct rdma_cm_id *id, struct rdma_cm_event **out, int ms)
{
	long long end = now_ms() + ms;
	if (t == RDMA_CM_EVENT_CONNECT_REQUEST && nstash) {
		*out = stash[0];
		memmove(stash, stash + 1, --nstash * sizeof(stash[0]));
		return 0;
	}
	while (now_ms() < end) {
		struct rdma_cm_event *ev = cm_get(ch, 50);
		if (!ev)
			continue;
		if (ev->event == t && (!id || ev->id == id)) {
			*out = ev;
			return 0;
		}
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && nstash < 4) {
			stash[nstash++] = ev;
			continue;
		}
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED && ev->id->context)
			((struct conn *)ev->id->context)->disc = true;
		else
			fprintf(stderr, "  cm: %s (status %d) while waiting for %s\n",
				rdma_event_str(ev->event), ev->status, rdma_event_str(t));
		bool mine = ev->id == id;
		rdma_ack_cm_event(ev);
		if (mine && t != RDMA_CM_EVENT_DISCONNECTED)
			return -1;
		if (mine)
			return 1; /* DISCONNECTED already marked */
	}
	return -1;
}

static int cm_expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t,
		     struct rdma_cm_id *id)
{
	struct rdma_cm_event *ev;
	int rc = cm_wait(ch, t, id, &ev, WAIT_MS);
	if (rc == 0)
		rdma_ack_cm_event(ev);
	return rc < 0 ? -1 : 0;
}

/* Wait for DISCONNECTED on c (marks c->disc). */
static int cm_disc(struct rdma_event_channel *ch, struct conn *c, int ms)
{
	struct rdma_cm_event *ev;
	if (c->disc)
		return 0;
	int rc = cm_wait(ch, RDMA_CM_EVENT_DISCONNECTED, c->id, &ev, ms);
	if (rc == 0)
		rdma_ack_cm_event(ev);
	if (rc >= 0)
		c->disc = true;
	return rc < 0 ? -1 : 0;
}

/* ---- the checks ------------------------------------------------------------------------- */

enum { F_TWO = 1, F_PRIV = 2, F_SRQ = 4 };

struct check {
	const char *name;
	unsigned flags;
	int (*srv)(struct cx *x);
	int (*cli)(struct cx *x);
};

/* Server: advertise b (or nothing) on connection i. */
static int advertise(struct cx *x, int i, struct gbuf *b, uint32_t rkey, uint32_t off)
{
	struct adv a = { 0 };
	if (b) {
		a.addr = (uintptr_t)b->p;
		a.len = (uint32_t)b->len;
		a.rkey = rkey;
	}
	a.off = off;
	return send_ctl(&x->c[i], &a);
}

/* Send/Recv: a 3-SGE Send into a 2-SGE Receive, then an inline Send. */
static int s_sgl(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *r = gb_new(x, x->pd, 1024, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(r);
	struct ibv_sge sg[2] = { { (uintptr_t)r->p, 100, r->mr->lkey },
				 { (uintptr_t)r->p + 200, 400, r->mr->lkey } };
	CK(post_recv(c, 1, sg, 2) == 0);
	CK(recv_into(c, 2, r, 700, 64) == 0);
	CK(advertise(x, 0, NULL, 0, 0) == 0);
	struct ibv_wc wc;
	CK(wait_wc(c->rcq, &wc, WAIT_MS) == 0);
	CK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 400);
	CK(wc.opcode == IBV_WC_RECV);
	CK(gb_is(r, 0, 50, 1, 0) && gb_is(r, 50, 50, 1, 100) && gb_is(r, 200, 100, 1, 150));
	CK(gb_is(r, 300, 200, 1, 300) && gb_all(r, 100, 100, 0) && gb_all(r, 500, 100, 0));
	CK(wait_wc(c->rcq, &wc, WAIT_MS) == 0);
	CK(wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 40);
	CK(memcmp(r->p + 700, "inline-data: softrnic-conform 0123456789", 40) == 0);
	return 0;
}

static int c_sgl(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *s = gb_new(x, x->pd, 1000, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(s);
	gb_fill(s, 1);
	struct ibv_sge sg[3] = { { (uintptr_t)s->p, 50, s->mr->lkey },
				 { (uintptr_t)s->p + 100, 150, s->mr->lkey },
				 { (uintptr_t)s->p + 300, 200, s->mr->lkey } };
	CK(post_op(c, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, sg, 3, 0, 0) == 0);
	char text[41] = "inline-data: softrnic-conform 0123456789";
	struct ibv_sge in = { (uintptr_t)text, 40, 0 };
	CK(post_op(c, 2, IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE, &in, 1, 0, 0) == 0);
	memset(text, 0, sizeof(text)); /* inline: copied at post time */
	CK(expect_wc(c->scq, 1, IBV_WC_SUCCESS) == 0);
	return expect_wc(c->scq, 2, IBV_WC_SUCCESS);
}

/* Solicited event: a "solicited" arm is not woken by the plain Send, only by the SE one. */
static int s_se(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *r = gb_new(x, x->pd, 128, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(r && recv_into(c, 1, r, 0, 64) == 0 && recv_into(c, 2, r, 64, 64) == 0);
	CK(ibv_req_notify_cq(c->rcq, 1) == 0);
	CK(advertise(x, 0, NULL, 0, 0) == 0);
	struct pollfd pfd = { c->ch->fd, POLLIN, 0 };
	CK(poll(&pfd, 1, WAIT_MS) == 1);
	struct ibv_cq *cq;
	void *cqctx;
	CK(ibv_get_cq_event(c->ch, &cq, &cqctx) == 0 && cq == c->rcq);
	ibv_ack_cq_events(cq, 1);
	struct ibv_wc wc[3];
	int n = ibv_poll_cq(c->rcq, 3, wc);
	CK(n == 2); /* the plain Send (sent 200 ms earlier) did not wake us */
	CK(wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS);
	CK(wc[1].wr_id == 2 && wc[1].status == IBV_WC_SUCCESS && wc[1].byte_len == 8);
	return 0;
}

static int c_se(struct cx *x)
{
	struct conn *c = &x->c[0];
	uint64_t v = 42;
	struct ibv_sge sg = { (uintptr_t)&v, 8, 0 };
	CK(post_op(c, 1, IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE, &sg, 1, 0, 0) == 0);
	CK(expect_wc(c->scq, 1, IBV_WC_SUCCESS) == 0);
	struct timespec ts = { 0, 200 * 1000000 };
	nanosleep(&ts, NULL);
	CK(post_op(c, 2, IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE | IBV_SEND_SOLICITED, &sg,
		   1, 0, 0) == 0);
	return expect_wc(c->scq, 2, IBV_WC_SUCCESS);
}

/* Server: a type-2 window over [off, off + len) of b, bound on connection 0's QP. */
static int bind_mw2(struct cx *x, struct gbuf *b, size_t off, size_t len, uint32_t *rkey)
{
	struct conn *c = &x->c[0];
	x->mw = ibv_alloc_mw(x->pd, IBV_MW_TYPE_2);
	CK(x->mw);
	struct ibv_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 70;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = x->mw;
	wr.bind_mw.rkey = *rkey = ibv_inc_rkey(x->mw->rkey);
	wr.bind_mw.bind_info.mr = b->mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)b->p + off;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	CK(post_wr(c, &wr) == 0);
	return expect_wc(c->scq, 70, IBV_WC_SUCCESS);
}

/* Send with Invalidate of the server's type-2 window. */
static int s_sinv(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *b = gb_new(x, x->pd, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, 0);
	uint32_t rkey;
	CK(b && bind_mw2(x, b, 0, 4096, &rkey) == 0);
	CK(recv_into(c, 1, b, 0, 64) == 0);
	CK(advertise(x, 0, b, rkey, 0) == 0);
	struct ibv_wc wc;
	CK(wait_wc(c->rcq, &wc, WAIT_MS) == 0);
	CK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 16);
	CK((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == rkey);
	return 0;
}

static int c_sinv(struct cx *x)
{
	struct conn *c = &x->c[0];
	uint8_t d[16] = "send-with-inv!!";
	struct ibv_sge sg = { (uintptr_t)d, 16, 0 };
	struct ibv_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.invalidate_rkey = x->adv.rkey;
	CK(post_wr(c, &wr) == 0);
	return expect_wc(c->scq, 1, IBV_WC_SUCCESS);
}

/* RDMA Write of 64 KiB, then a Send "done". */
static int s_write(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *b = gb_new(x, x->pd, 65536,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	CK(b && post_ctl_recv(c, 1) == 0);
	CK(advertise(x, 0, b, b->mr->rkey, 0) == 0);
	struct adv a;
	CK(recv_ctl(c, 1, &a) == 0 && a.code == 1);
	CK(gb_is(b, 0, b->len, 2, 0));
	return 0;
}

static int c_write(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *s = gb_new(x, x->pd, 65536, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(s);
	gb_fill(s, 2);
	struct ibv_sge sg = { (uintptr_t)s->p, 65536, s->mr->lkey };
	CK(post_op(c, 1, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED, &sg, 1, x->adv.rkey,
		   x->adv.addr) == 0);
	CK(expect_wc(c->scq, 1, IBV_WC_SUCCESS) == 0);
	return ctl_code(c, 1);
}

/* RDMA Read: 1 MiB (many segments) and 100 octets, then a Send with Read Fence. */
static int s_read(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *b = gb_new(x, x->pd, (1u << 20) + 100,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 0);
	CK(b && post_ctl_recv(c, 1) == 0);
	gb_fill(b, 3);
	CK(advertise(x, 0, b, b->mr->rkey, 0) == 0);
	struct adv a;
	CK(recv_ctl(c, 1, &a) == 0 && a.code == 2);
	CK(gb_is(b, 0, b->len, 3, 0)); /* the source is not changed by being read */
	return 0;
}

static int c_read(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *s = gb_new(x, x->pd, (1u << 20) + 100, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(s);
	struct ibv_sge s1 = { (uintptr_t)s->p, 1u << 20, s->mr->lkey };
	struct ibv_sge s2 = { (uintptr_t)s->p + (1u << 20), 100, s->mr->lkey };
	CK(post_op(c, 1, IBV_WR_RDMA_READ, IBV_SEND_SIGNALED, &s1, 1, x->adv.rkey,
		   x->adv.addr) == 0);
	CK(post_op(c, 2, IBV_WR_RDMA_READ, IBV_SEND_SIGNALED, &s2, 1, x->adv.rkey,
		   x->adv.addr + (1u << 20)) == 0);
	struct adv m = { .code = 2 };
	struct ibv_sge sm = { (uintptr_t)&m, sizeof(m), 0 };
	CK(post_op(c, 3, IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE | IBV_SEND_FENCE, &sm, 1,
		   0, 0) == 0);
	CK(expect_wc(c->scq, 1, IBV_WC_SUCCESS) == 0);
	CK(expect_wc(c->scq, 2, IBV_WC_SUCCESS) == 0);
	CK(expect_wc(c->scq, 3, IBV_WC_SUCCESS) == 0);
	CK(gb_is(s, 0, s->len, 3, 0));
	return 0;
}

/* S-RQ shared by two QPs: 8 WQEs, limit 4; 3 Sends on each QP fire the limit event once. */
static int s_srq(struct cx *x)
{
	struct gbuf *b = gb_new(x, x->pd, 8 * 64, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(b);
	for (int i = 0; i < 8; i++) {
		struct ibv_sge sg = { (uintptr_t)b->p + 64 * i, 64, b->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 10 + i, .sg_list = &sg, .num_sge = 1 }, *bad;
		CK(ibv_post_srq_recv(x->srq, &wr, &bad) == 0);
	}
	struct ibv_srq_attr sa = { .srq_limit = 4 };
	CK(ibv_modify_srq(x->srq, &sa, IBV_SRQ_LIMIT) == 0);
	CK(advertise(x, 0, NULL, 0, 0) == 0 && advertise(x, 1, NULL, 0, 0) == 0);
	for (int q = 0; q < 2; q++) {
		for (int i = 0; i < 3; i++) {
			struct ibv_wc wc;
			CK(wait_wc(x->c[q].rcq, &wc, WAIT_MS) == 0);
			CK(wc.status == IBV_WC_SUCCESS && wc.qp_num == x->c[q].qp->qp_num);
			CK(wc.byte_len == 8 && wc.wr_id >= 10 && wc.wr_id < 16);
			CK(b->p[64 * (wc.wr_id - 10)] == (uint8_t)(q * 10 + i));
		}
	}
	CK(wait_async(x->c[0].id->verbs, IBV_EVENT_SRQ_LIMIT_REACHED, x->srq) == 0);
	return no_async(x->c[0].id->verbs, x->srq, 300);
}

static int c_srq(struct cx *x)
{
	for (int q = 0; q < 2; q++) {
		for (int i = 0; i < 3; i++) {
			uint64_t v = (uint64_t)(q * 10 + i);
			struct ibv_sge sg = { (uintptr_t)&v, 8, 0 };
			CK(post_op(&x->c[q], 1, IBV_WR_SEND,
				   IBV_SEND_SIGNALED | IBV_SEND_INLINE, &sg, 1, 0, 0) == 0);
			CK(expect_wc(x->c[q].scq, 1, IBV_WC_SUCCESS) == 0);
		}
	}
	return 0;
}

/* Window: bind, peer writes through it, local invalidate, the peer's next write fails. */
static int s_mw(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *b = gb_new(x, x->pd, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, 0);
	uint32_t rkey;
	CK(b && bind_mw2(x, b, 1024, 1024, &rkey) == 0);
	CK(post_ctl_recv(c, 1) == 0 && recv_into(c, 5, b, 0, 64) == 0);
	CK(advertise(x, 0, b, rkey, 1024) == 0);
	struct adv a;
	CK(recv_ctl(c, 1, &a) == 0 && a.code == 3);
	CK(gb_is(b, 1024, 1024, 4, 0) && gb_all(b, 0, 1024, 0) && gb_all(b, 2048, 2048, 0));
	struct ibv_send_wr wr = { .wr_id = 71, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey };
	CK(post_wr(c, &wr) == 0 && expect_wc(c->scq, 71, IBV_WC_SUCCESS) == 0);
	CK(ctl_code(c, 4) == 0);
	CK(wait_async(c->id->verbs, IBV_EVENT_QP_ACCESS_ERR, c->qp) == 0);
	CK(expect_wc(c->rcq, 5, IBV_WC_WR_FLUSH_ERR) == 0);
	CK(gb_is(b, 1024, 1024, 4, 0) && gb_all(b, 0, 1024, 0) && gb_all(b, 2048, 2048, 0));
	return 0;
}

static int c_mw(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *s = gb_new(x, x->pd, 1024, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(s);
	gb_fill(s, 4);
	struct ibv_sge sg = { (uintptr_t)s->p, 1024, s->mr->lkey };
	uint64_t ra = x->adv.addr + x->adv.off;
	CK(post_ctl_recv(c, 1) == 0);
	CK(post_op(c, 1, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED, &sg, 1, x->adv.rkey, ra) == 0);
	CK(expect_wc(c->scq, 1, IBV_WC_SUCCESS) == 0);
	CK(ctl_code(c, 3) == 0);
	struct adv a;
	CK(recv_ctl(c, 1, &a) == 0 && a.code == 4);
	CK(post_ctl_recv(c, 2) == 0);
	memset(s->p, 0xff, 1024);
	CK(post_op(c, 2, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED, &sg, 1, x->adv.rkey, ra) == 0);
	CK(expect_wc(c->scq, 2, IBV_WC_SUCCESS) == 0); /* complete when the transport took them */
	CK(wait_async(c->id->verbs, IBV_EVENT_QP_FATAL, c->qp) == 0);
	return expect_wc(c->rcq, 802, IBV_WC_WR_FLUSH_ERR);
}

/* Fast-Register on the server's privileged QP; the client's unprivileged QP is refused. */
static int s_frmr(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *pg = gb_new(x, NULL, 8192 + 4096, 0, GUARD_BYTE);
	CK(pg);
	uint8_t *page = (uint8_t *)(((uintptr_t)pg->p + 4095) & ~(uintptr_t)4095);
	struct ibv_mr *mr = softrnic_alloc_mr(x->pd, 2, 1);
	CK(mr);
	uint64_t pages[2] = { (uintptr_t)page, (uintptr_t)page + 4096 };
	memset(page + 64, 0, 6000);
	struct softrnic_fast_reg_wr f = { 60, IBV_SEND_SIGNALED, mr, 0x3c,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, (uintptr_t)page + 64, 6000, 64,
		12, 2, pages };
	CK(softrnic_post_fast_reg(c->qp, &f) == 0);
	struct ibv_wc wc;
	CK(wait_wc(c->scq, &wc, WAIT_MS) == 0);
	CK(wc.wr_id == 60 && wc.status == IBV_WC_SUCCESS && wc.opcode == SOFTRNIC_WC_FAST_REG);
	CK((mr->rkey & 0xff) == 0x3c && post_ctl_recv(c, 1) == 0);
	struct adv a = { (uintptr_t)page + 64, mr->rkey, 6000, 0, 0 };
	CK(send_ctl(c, &a) == 0 && recv_ctl(c, 1, &a) == 0 && a.code == 5);
	for (size_t i = 0; i < 6000; i++)
		CK(page[64 + i] == pat(i, 5));
	CK(gb_all(pg, 0, (size_t)(page - pg->p) + 64, GUARD_BYTE));
	CK(gb_all(pg, (size_t)(page - pg->p) + 6064, pg->len - (size_t)(page - pg->p) - 6064,
		  GUARD_BYTE));
	CK(wait_async(c->id->verbs, IBV_EVENT_QP_FATAL, c->qp) == 0);
	return ibv_dereg_mr(mr) == 0 ? 0 : -1;
}

static int c_frmr(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *s = gb_new(x, x->pd, 6000, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(s);
	gb_fill(s, 5);
	struct ibv_sge sg = { (uintptr_t)s->p, 6000, s->mr->lkey };
	CK(post_op(c, 1, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED, &sg, 1, x->adv.rkey,
		   x->adv.addr) == 0);
	CK(expect_wc(c->scq, 1, IBV_WC_SUCCESS) == 0 && ctl_code(c, 5) == 0);
	struct ibv_mr *mr = softrnic_alloc_mr(x->pd, 1, 0);
	uint64_t pg = (uintptr_t)s->p & ~(uint64_t)4095;
	struct softrnic_fast_reg_wr f = { 61, IBV_SEND_SIGNALED, mr, 1, IBV_ACCESS_LOCAL_WRITE,
					  pg, 4096, 0, 12, 1, &pg };
	CK(mr && softrnic_post_fast_reg(c->qp, &f) == 0);
	CK(expect_wc(c->scq, 61, IBV_WC_LOC_QP_OP_ERR) == 0); /* QP not privileged */
	return ibv_dereg_mr(mr) == 0 ? 0 : -1;
}

/* Zero-length Send (consumes a Receive, byte_len 0) with a garbage SGE STag, zero-length
 * Read and Write with garbage remote STags: all Success (no STag is checked). */
static int s_zero(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *b = gb_new(x, x->pd, 64, IBV_ACCESS_LOCAL_WRITE, 0x33);
	CK(b && recv_into(c, 1, b, 0, 64) == 0 && post_ctl_recv(c, 1) == 0);
	CK(advertise(x, 0, NULL, 0, 0) == 0);
	struct ibv_wc wc;
	CK(wait_wc(c->rcq, &wc, WAIT_MS) == 0);
	CK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 0);
	struct adv a;
	CK(recv_ctl(c, 1, &a) == 0 && a.code == 6 && gb_all(b, 0, 64, 0x33));
	return 0;
}

static int c_zero(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct ibv_sge bad = { 0x1000, 0, 0x7777701 };
	CK(post_op(c, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, &bad, 1, 0, 0) == 0);
	CK(post_op(c, 2, IBV_WR_RDMA_READ, IBV_SEND_SIGNALED, &bad, 1, 0xabcdef02, 0x10) == 0);
	CK(post_op(c, 3, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED, &bad, 1, 0xabcdef03, 0x20) == 0);
	CK(expect_wc(c->scq, 1, IBV_WC_SUCCESS) == 0 && expect_wc(c->scq, 2, IBV_WC_SUCCESS) == 0);
	CK(expect_wc(c->scq, 3, IBV_WC_SUCCESS) == 0);
	return ctl_code(c, 6);
}

/* Unsignaled WRs: 10 unsignaled + 1 signaled Send, one completion, 11 Receives. */
static int s_unsig(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *b = gb_new(x, x->pd, 11 * 16, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(b);
	for (int i = 0; i < 11; i++)
		CK(recv_into(c, 20 + i, b, 16 * i, 16) == 0);
	CK(advertise(x, 0, NULL, 0, 0) == 0);
	for (int i = 0; i < 11; i++) {
		struct ibv_wc wc;
		CK(wait_wc(c->rcq, &wc, WAIT_MS) == 0);
		CK(wc.wr_id == (uint64_t)(20 + i) && wc.status == IBV_WC_SUCCESS && wc.byte_len == 8);
		CK(b->p[16 * i] == i);
	}
	return 0;
}

static int c_unsig(struct cx *x)
{
	struct conn *c = &x->c[0];
	for (int i = 0; i < 11; i++) {
		uint64_t v = (uint64_t)i;
		struct ibv_sge sg = { (uintptr_t)&v, 8, 0 };
		unsigned fl = IBV_SEND_INLINE | (i == 10 ? IBV_SEND_SIGNALED : 0);
		CK(post_op(c, 100 + i, IBV_WR_SEND, fl, &sg, 1, 0, 0) == 0);
	}
	CK(expect_wc(c->scq, 110, IBV_WC_SUCCESS) == 0);
	struct ibv_wc wc;
	struct timespec ts = { 0, 200 * 1000000 };
	nanosleep(&ts, NULL);
	CK(ibv_poll_cq(c->scq, 1, &wc) == 0);
	return 0;
}

/* Remote protection errors: the server's MR (256 octets of 0x11) is offered with a fault;
 * the client's 16-octet Write must land nowhere: server QP_ACCESS_ERR (it sends the
 * Terminate), client QP_FATAL (Terminate received), both QPs in ERR, Receives flushed. */
enum prot { P_STAG, P_KEY, P_PD, P_OOB, P_RIGHTS };

static int s_prot(struct cx *x, enum prot k)
{
	struct conn *c = &x->c[0];
	int acc = IBV_ACCESS_LOCAL_WRITE | (k == P_RIGHTS ? 0 : IBV_ACCESS_REMOTE_WRITE);
	struct gbuf *b = gb_new(x, k == P_PD ? x->pd2 : x->pd, 256, acc, 0x11);
	CK(b && recv_into(c, 1, x->c[0].ctl, 128, 64) == 0);
	uint32_t rkey = b->mr->rkey;
	if (k == P_STAG)
		rkey = (rkey + (4000u << 8)) | 0xff;
	if (k == P_KEY)
		rkey ^= 0x5a;
	CK(advertise(x, 0, b, rkey, k == P_OOB ? 241 : 0) == 0);
	CK(wait_async(c->id->verbs, IBV_EVENT_QP_ACCESS_ERR, c->qp) == 0);
	CK(expect_wc(c->rcq, 1, IBV_WC_WR_FLUSH_ERR) == 0);
	CK(qp_state(c) == IBV_QPS_ERR);
	CK(gb_all(b, 0, 256, 0x11));
	return 0;
}

static int c_prot(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *s = gb_new(x, x->pd, 16, IBV_ACCESS_LOCAL_WRITE, 0x99);
	CK(s && post_ctl_recv(c, 1) == 0 && post_ctl_recv(c, 2) == 0);
	struct ibv_sge sg = { (uintptr_t)s->p, 16, s->mr->lkey };
	CK(post_op(c, 1, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED, &sg, 1, x->adv.rkey,
		   x->adv.addr + x->adv.off) == 0);
	CK(expect_wc(c->scq, 1, IBV_WC_SUCCESS) == 0); /* complete when the transport took them */
	CK(wait_async(c->id->verbs, IBV_EVENT_QP_FATAL, c->qp) == 0);
	CK(expect_wc(c->rcq, 801, IBV_WC_WR_FLUSH_ERR) == 0);
	CK(expect_wc(c->rcq, 802, IBV_WC_WR_FLUSH_ERR) == 0);
	CK(qp_state(c) == IBV_QPS_ERR);
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sg,
				  .num_sge = 1, .send_flags = IBV_SEND_SIGNALED }, *badwr;
	/* Error state: accepted and flushed (libibverbs' rule, docs/verbs.md) */
	CK(ibv_post_send(c->qp, &wr, &badwr) == 0);
	CK(expect_wc(c->scq, 2, IBV_WC_WR_FLUSH_ERR) == 0);
	return 0;
}

static int s_p_stag(struct cx *x) { return s_prot(x, P_STAG); }
static int s_p_key(struct cx *x) { return s_prot(x, P_KEY); }
static int s_p_pd(struct cx *x) { return s_prot(x, P_PD); }
static int s_p_oob(struct cx *x) { return s_prot(x, P_OOB); }
static int s_p_rights(struct cx *x) { return s_prot(x, P_RIGHTS); }

/* Graceful disconnect by the client: DISCONNECTED on both sides, posted Receives flushed. */
static int s_disc(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *b = gb_new(x, x->pd, 3 * 64, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(b && post_ctl_recv(c, 1) == 0);
	for (int i = 0; i < 3; i++)
		CK(recv_into(c, 30 + i, b, 64 * i, 64) == 0);
	CK(advertise(x, 0, NULL, 0, 0) == 0);
	struct adv a;
	CK(recv_ctl(c, 1, &a) == 0 && a.code == 7);
	CK(cm_disc(x->ech, c, WAIT_MS) == 0);
	for (int i = 0; i < 3; i++)
		CK(expect_wc(c->rcq, 30 + i, IBV_WC_WR_FLUSH_ERR) == 0);
	return 0;
}

static int c_disc(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *b = gb_new(x, x->pd, 3 * 64, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(b);
	for (int i = 0; i < 3; i++)
		CK(recv_into(c, 40 + i, b, 64 * i, 64) == 0);
	CK(ctl_code(c, 7) == 0);
	CK(rdma_disconnect(c->id) == 0);
	CK(cm_disc(x->ech, c, WAIT_MS) == 0);
	for (int i = 0; i < 3; i++)
		CK(expect_wc(c->rcq, 40 + i, IBV_WC_WR_FLUSH_ERR) == 0);
	return 0;
}

/* RFC 7306 Send with immediate: 200 octets with a value, then a zero-length one with SE. */
static int s_simm(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *r = gb_new(x, x->pd, 512, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(r && recv_into(c, 1, r, 0, 256) == 0 && recv_into(c, 2, r, 256, 256) == 0);
	CK(advertise(x, 0, NULL, 0, 0) == 0);
	struct ibv_wc wc;
	CK(wait_wc(c->rcq, &wc, WAIT_MS) == 0);
	CK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV);
	CK(wc.byte_len == 200 && (wc.wc_flags & IBV_WC_WITH_IMM));
	CK(wc.imm_data == htonl(0x5eed1234));
	CK(gb_is(r, 0, 200, 4, 0) && gb_all(r, 200, 56, 0));
	CK(wait_wc(c->rcq, &wc, WAIT_MS) == 0);
	CK(wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV);
	CK(wc.byte_len == 0 && (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(7));
	CK(gb_all(r, 256, 256, 0));
	return 0;
}

static int c_simm(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *s = gb_new(x, x->pd, 256, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(s);
	gb_fill(s, 4);
	struct ibv_sge sg = { (uintptr_t)s->p, 200, s->mr->lkey };
	struct ibv_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.imm_data = htonl(0x5eed1234);
	CK(post_wr(c, &wr) == 0);
	wr.wr_id = 2;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE | IBV_SEND_SOLICITED;
	wr.num_sge = 0;
	wr.imm_data = htonl(7);
	CK(post_wr(c, &wr) == 0);
	CK(expect_wc(c->scq, 1, IBV_WC_SUCCESS) == 0);
	return expect_wc(c->scq, 2, IBV_WC_SUCCESS);
}

/* RFC 7306 Write with immediate: 32 KiB; when the Receive completes (RECV_RDMA_WITH_IMM,
 * byte_len 0) every octet is in place and the Receive's buffer is untouched. */
static int s_wimm(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *b = gb_new(x, x->pd, 32768,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	struct gbuf *r = gb_new(x, x->pd, 64, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(b && r && recv_into(c, 1, r, 0, 64) == 0);
	CK(advertise(x, 0, b, b->mr->rkey, 0) == 0);
	struct ibv_wc wc;
	CK(wait_wc(c->rcq, &wc, WAIT_MS) == 0);
	CK(gb_is(b, 0, b->len, 5, 0));
	CK(wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	CK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.byte_len == 0);
	CK((wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(0xfeedf00d));
	CK(gb_all(r, 0, 64, 0));
	return 0;
}

static int c_wimm(struct cx *x)
{
	struct conn *c = &x->c[0];
	struct gbuf *s = gb_new(x, x->pd, 32768, IBV_ACCESS_LOCAL_WRITE, 0);
	CK(s);
	gb_fill(s, 5);
	struct ibv_sge sg = { (uintptr_t)s->p, 32768, s->mr->lkey };
	struct ibv_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.imm_data = htonl(0xfeedf00d);
	wr.wr.rdma.rkey = x->adv.rkey;
	wr.wr.rdma.remote_addr = x->adv.addr;
	CK(post_wr(c, &wr) == 0);
	return expect_wc(c->scq, 1, IBV_WC_SUCCESS);
}

static const struct check checks[] = {
	{ "send_recv_sgl_inline", 0, s_sgl, c_sgl },
	{ "send_solicited_channel", 0, s_se, c_se },
	{ "send_with_invalidate_mw2", 0, s_sinv, c_sinv },
	{ "rdma_write", 0, s_write, c_write },
	{ "rdma_read_multiseg_fence", 0, s_read, c_read },
	{ "srq_two_qps_limit", F_TWO | F_SRQ, s_srq, c_srq },
	{ "mw_bind_access_invalidate", 0, s_mw, c_mw },
	{ "fast_register_privileged", F_PRIV, s_frmr, c_frmr },
	{ "zero_length_ops", 0, s_zero, c_zero },
	{ "unsignaled_wrs", 0, s_unsig, c_unsig },
	{ "prot_wrong_stag", 0, s_p_stag, c_prot },
	{ "prot_wrong_key", 0, s_p_key, c_prot },
	{ "prot_other_pd", 0, s_p_pd, c_prot },
	{ "prot_one_byte_oob", 0, s_p_oob, c_prot },
	{ "prot_no_rights", 0, s_p_rights, c_prot },
	{ "disconnect_flush", 0, s_disc, c_disc },
	{ "send_with_imm", 0, s_simm, c_simm },
	{ "rdma_write_with_imm", 0, s_wimm, c_wimm },
};
#define NCHECKS ((int)(sizeof(checks) / sizeof(checks[0])))

/* ---- connection setup and teardown -------------------------------------------------------- */

static int conn_setup(struct cx *x, struct conn *c, struct rdma_cm_id *id)
{
	const struct check *k = &checks[x->idx];
	struct ibv_context *ctx = id->verbs;
	c->id = id;
	id->context = c;
	if (!x->pd && (!(x->pd = ibv_alloc_pd(ctx)) || !(x->pd2 = ibv_alloc_pd(ctx))))
		return -1;
	if (is_server && (k->flags & F_SRQ) && !x->srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
		if (!(x->srq = ibv_create_srq(x->pd, &sa)))
			return -1;
	}
	c->ch = ibv_create_comp_channel(ctx);
	c->scq = c->ch ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	c->rcq = c->scq ? ibv_create_cq(ctx, 64, NULL, c->ch, 0) : NULL;
	c->ctl = c->rcq ? gb_new(x, x->pd, 4 * 64, IBV_ACCESS_LOCAL_WRITE, 0) : NULL;
	if (!c->ctl)
		return -1;
	struct ibv_qp_init_attr qa = { .send_cq = c->scq, .recv_cq = c->rcq,
		.srq = is_server ? x->srq : NULL, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 } };
	if (is_server && (k->flags & F_PRIV)) {
		c->qp = id->qp = softrnic_create_qp(x->pd, &qa, SOFTRNIC_QP_PRIVILEGED);
		c->own_qp = true;
	} else if (rdma_create_qp(id, x->pd, &qa) == 0) {
		c->qp = id->qp;
	}
	return c->qp ? 0 : -1;
}

static void conn_free(struct cx *x, struct conn *c)
{
	if (!c->id)
		return;
	if (!c->disc) {
		rdma_disconnect(c->id);
		cm_disc(x->ech, c, 500);
	}
	if (c->own_qp) {
		ibv_destroy_qp(c->qp);
		c->id->qp = NULL;
	} else if (c->qp) {
		rdma_destroy_qp(c->id);
	}
	if (c->scq)
		ibv_destroy_cq(c->scq);
	if (c->rcq)
		ibv_destroy_cq(c->rcq);
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	rdma_destroy_id(c->id);
}

/* Free everything of a check; fails if a guard byte was touched. */
static int cx_free(struct cx *x)
{
	int rc = 0;
	if (x->mw)
		ibv_dealloc_mw(x->mw);
	for (int i = 0; i < x->nconn; i++)
		conn_free(x, &x->c[i]);
	if (x->srq)
		ibv_destroy_srq(x->srq);
	for (int i = 0; i < x->nbufs; i++) {
		struct gbuf *b = x->bufs[i];
		if (!gb_guards_ok(b)) {
			fprintf(stderr, "  %s: guard bytes of buffer %d overwritten\n",
				is_server ? "server" : "client", i);
			rc = -1;
		}
		if (b->mr)
			ibv_dereg_mr(b->mr);
		free(b->raw);
		free(b);
	}
	if (x->pd2)
		ibv_dealloc_pd(x->pd2);
	if (x->pd)
		ibv_dealloc_pd(x->pd);
	return rc;
}

static int srv_accept(struct cx *x, struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;
	if (cm_wait(ch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &ev, WAIT_MS) != 0)
		return -1;
	struct rdma_cm_id *id = ev->id;
	int idx = ev->param.conn.private_data_len ? *(const uint8_t *)ev->param.conn.private_data
						   : -1;
	rdma_ack_cm_event(ev);
	if (x->nconn == 0)
		x->idx = idx;
	if (idx != x->idx || idx < 0 || idx >= NCHECKS) {
		fprintf(stderr, "server: request for check %d, expected %d\n", idx, x->idx);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return -1;
	}
	struct conn *c = &x->c[x->nconn++];
	if (conn_setup(x, c, id) != 0)
		return -1;
	struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4 };
	if (rdma_accept(id, &cp) != 0)
		return -1;
	return cm_expect(ch, RDMA_CM_EVENT_ESTABLISHED, id);
}

static int cli_connect(struct cx *x, struct rdma_event_channel *ch, struct addrinfo *ai)
{
	struct conn *c = &x->c[x->nconn++];
	struct rdma_cm_id *id;
	uint8_t pd = (uint8_t)x->idx;
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0)
		return -1;
	c->id = id;
	id->context = c;
	if (rdma_resolve_addr(id, NULL, ai->ai_addr, 2000) != 0 ||
	    cm_expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, id) != 0 ||
	    rdma_resolve_route(id, 2000) != 0 ||
	    cm_expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, id) != 0 || conn_setup(x, c, id) != 0)
		return -1;
	if (post_ctl_recv(c, 0) != 0)
		return -1;
	struct rdma_conn_param cp = { .private_data = &pd, .private_data_len = 1,
				      .responder_resources = 4, .initiator_depth = 4 };
	if (rdma_connect(id, &cp) != 0)
		return -1;
	return cm_expect(ch, RDMA_CM_EVENT_ESTABLISHED, id);
}

static int run_one(struct cx *x, struct rdma_event_channel *ch, struct addrinfo *ai)
{
	const struct check *k = &checks[x->idx];
	int n = (k->flags & F_TWO) ? 2 : 1;
	for (int i = 0; i < n; i++)
		if ((is_server ? srv_accept(x, ch) : cli_connect(x, ch, ai)) != 0)
			return -1;
	if (is_server)
		return k->srv(x);
	for (int i = 0; i < n; i++)
		if (recv_ctl(&x->c[i], 0, &x->adv) != 0)
			return -1;
	return k->cli(x);
}

static int run_all(struct rdma_event_channel *ch, struct addrinfo *ai)
{
	int fails = 0;
	for (int i = 0; i < NCHECKS; i++) {
		struct cx x;
		memset(&x, 0, sizeof(x));
		x.idx = i;
		x.ech = ch;
		int rc = run_one(&x, ch, ai);
		if (cx_free(&x) != 0)
			rc = -1;
		printf("CHECK %s: %s (%s)\n", checks[i].name, rc ? "FAIL" : "PASS",
		       is_server ? "server" : "client");
		fflush(stdout);
		fails += rc != 0;
	}
	printf("%s: %d of %d checks passed\n", is_server ? "server" : "client", NCHECKS - fails,
	       NCHECKS);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: %s server|client ADDR PORT\n", argv[0]);
		return 2;
	}
	is_server = strcmp(argv[1], "server") == 0;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST }, *ai;
	if (getaddrinfo(argv[2], argv[3], &hints, &ai) != 0) {
		fprintf(stderr, "bad address %s %s\n", argv[2], argv[3]);
		return 2;
	}
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lis = NULL;
	if (!ch)
		return 1;
	if (is_server && (rdma_create_id(ch, &lis, NULL, RDMA_PS_TCP) != 0 ||
			  rdma_bind_addr(lis, ai->ai_addr) != 0 || rdma_listen(lis, 8) != 0)) {
		perror("listen");
		return 1;
	}
	int rc = run_all(ch, ai);
	if (lis)
		rdma_destroy_id(lis);
	rdma_destroy_event_channel(ch);
	freeaddrinfo(ai);
	return rc;
}
