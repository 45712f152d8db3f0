/* Fuzz target: a connected QP with registered memory, fed an untrusted peer's byte stream.
 *
 * Each input builds a whole device (rn_mem, event queue, CQs, optional S-RQ, QP in RTS over
 * an in-memory stream, mem_conn.h), drives the QP's receive and transmit by calling it
 * directly (no threads, no sockets), and tears everything down, so leaks show per input.
 *
 * Input: three configuration octets, then records (qp_rx_stream.h).
 *   c0: bit 0 CRC, 1 markers, 2 S-RQ, 3 the transport lends its buffers, 4 tolerant QP,
 *       5 a type-2 window bound over W, 6 an RDMA Read posted (sink K[32, 96)), 7 the
 *       stream's first octets arrive with the connection handoff (rn_cm read them past
 *       the MPA exchange)
 *   c1: bits 0-1 receives posted at start, 2-3 IRD (0, 1, 2, 8), 4 W grants Remote Write,
 *       5 W grants Remote Read, 6 QP inbound Write, 7 QP inbound Read
 *   c2: bit 0 zero-based (the window, else W), 1 W grants Remote Invalidate, 2 end of
 *       stream (FIN) after the records, 3 the transport takes a few octets per send (FPDUs
 *       wait in the QP), bits 4-7 the seed of the transport's read sizes
 * A barrier's op (qp_rx_stream.h): bit 2 posts the next receive, bit 3 a Read into
 * K[128, 6272), bit 4 polls the CQs; the memory is checked at every barrier.
 * Names for symbolic STags: 1 R (receives), 2 W (an MR), 3 the window, 4 X (Remote Read
 * only), 5 K (the Read's sink).
 *
 * Checked: guard bytes around every buffer and no change where no operation may write
 * (after every barrier and at the end); what the QP sent decodes cleanly as FPDUs, with at
 * most one Terminate, last, with a defined layer; a Terminate sent means the QP left RTS; a
 * QP that left RTS while the stream stayed open has a Terminate on record (sent or
 * received); a Receive never reports more than its buffer; once the QP settled (Error, or
 * Idle after a graceful close) every posted WR has completed exactly once; the loop ends (no
 * livelock); ASan / UBSan / LeakSanitizer for the rest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard_buf.h"
#include "mem_conn.h"
#include "qp_rx_stream.h"
#include "rn_qp.h"

#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "check failed: %s (line %d)\n", #c, __LINE__); \
			abort();                                                   \
		}                                                                  \
	} while (0)

enum { N_R = 1, N_W, N_MW, N_X, N_K };
enum { WR_BIND = 1000, WR_READ = 2000, MAX_RECV = 4, MAX_READ = 4 };
/* Receive i takes R[recv_off[i], + recv_len[i]); one is large enough for the receive path's
 * direct placement (payload remainders of RN_RX_DIRECT_MIN octets and more). */
static const uint32_t recv_len[MAX_RECV] = { 64, 8192, 64, 64 };
static const uint32_t recv_off[MAX_RECV] = { 0, 64, 8256, 8320 };
#define R_LEN 8448u
#define W_LEN 12288u     /* W: room for direct placement of Writes */
#define X_LEN 8192u      /* X: Read Requests of several FPDUs */
#define K_LEN 8192u
#define MW_LO 64u
#define MW_HI 192u
/* The Read posted at start lands in K[32, 96); one posted at a barrier in K[128, 6272), of a
 * size that takes a peer several Read Responses (or a direct placement). */
static const uint32_t read_off[2] = { 32, 128 };
static const uint32_t read_len[2] = { 64, 6144 };

struct cfg {
	bool crc, markers, srq, lend, tolerant, mw, read, pre;
	unsigned nrecv, ird;
	bool w_rwrite, w_rread, qp_write, qp_read, w_zero, w_inv, fin, tight;
	uint32_t seed;
};

struct run {
	struct cfg c;
	struct rn_mem *mem;
	struct rn_evq *evq;
	struct rn_cq *scq, *rcq;
	struct rn_srq *srq;
	struct rn_qp *qp;
	uint32_t pd;
	struct guard_buf r, w, x, k;
	rn_stag_t stag_r, stag_w, stag_x, stag_k, stag_mw;
	struct qp_rx_names names;
	struct mem_wire wire;
	struct qp_rx_barrier_op bops;
	uint8_t *stream;
	size_t stream_len;
	unsigned recvs, reads;         /* posted */
	uint8_t recv_seen[MAX_RECV], read_seen[MAX_READ];
	bool bind_seen;
};

static struct cfg parse_cfg(const uint8_t *d)
{
	static const unsigned irds[4] = { 0, 1, 2, 8 };
	struct cfg c = {
		.crc = d[0] & 1, .markers = d[0] >> 1 & 1, .srq = d[0] >> 2 & 1,
		.lend = d[0] >> 3 & 1, .tolerant = d[0] >> 4 & 1, .mw = d[0] >> 5 & 1,
		.read = d[0] >> 6 & 1, .pre = d[0] >> 7 & 1,
		.nrecv = d[1] & 3, .ird = irds[d[1] >> 2 & 3],
		.w_rwrite = d[1] >> 4 & 1, .w_rread = d[1] >> 5 & 1,
		.qp_write = d[1] >> 6 & 1, .qp_read = d[1] >> 7 & 1,
		.w_zero = d[2] & 1, .w_inv = d[2] >> 1 & 1, .fin = d[2] >> 2 & 1,
		.tight = d[2] >> 3 & 1, .seed = d[2] >> 4,
	};
	return c;
}

/* c.w_zero makes the window zero-based when there is one (a window cannot sit on a
 * zero-based MR, RDMA Verbs §7.6), else W. */
static bool w_zero(const struct cfg *c)
{
	return c->w_zero && !c->mw;
}

/* ---- device ------------------------------------------------------------------------------ */

static rn_stag_t reg(struct run *r, struct guard_buf *b, uint32_t acc)
{
	rn_stag_t s = 0;
	CHECK(rn_mem_reg_mr(r->mem, r->pd, b->p, b->len, (uintptr_t)b->p, acc, &s) == RN_OK);
	return s;
}

static void make_buffers(struct run *r)
{
	uint32_t w_acc = RN_ACC_LOCAL_WRITE | RN_ACC_MW_BIND |
		(r->c.w_rwrite ? RN_ACC_REMOTE_WRITE : 0) | (r->c.w_rread ? RN_ACC_REMOTE_READ : 0) |
		(r->c.w_inv ? RN_ACC_REMOTE_INV : 0) | (w_zero(&r->c) ? RN_ACC_ZERO_BASED : 0);

	guard_buf_new(&r->r, R_LEN, 0x11);
	guard_buf_new(&r->w, W_LEN, 0x22);
	guard_buf_new(&r->x, X_LEN, 0x33);
	guard_buf_new(&r->k, K_LEN, 0x44);
	r->stag_r = reg(r, &r->r, RN_ACC_LOCAL_WRITE);
	r->stag_w = reg(r, &r->w, w_acc);
	r->stag_x = reg(r, &r->x, RN_ACC_REMOTE_READ);
	r->stag_k = reg(r, &r->k, RN_ACC_LOCAL_WRITE);
	if (r->c.w_rwrite)
		guard_buf_allow(&r->w, 0, r->w.len);
	r->names.stag[N_R] = r->stag_r;
	r->names.base[N_R] = (uintptr_t)r->r.p;
	r->names.stag[N_W] = r->stag_w;
	r->names.base[N_W] = w_zero(&r->c) ? 0 : (uintptr_t)r->w.p;
	r->names.stag[N_X] = r->stag_x;
	r->names.base[N_X] = (uintptr_t)r->x.p;
	r->names.stag[N_K] = r->stag_k;
	r->names.base[N_K] = (uintptr_t)r->k.p;
	if (r->c.mw) {
		rn_stag_t mw;
		CHECK(rn_mem_alloc_mw(r->mem, r->pd, RN_MW_TYPE2, &mw) == RN_OK);
		r->stag_mw = RN_STAG(RN_STAG_IDX(mw), 0x5a);
		r->names.stag[N_MW] = r->stag_mw;
		r->names.base[N_MW] = r->c.w_zero ? 0 : (uintptr_t)r->w.p + MW_LO;
	}
}

static void make_qp(struct run *r)
{
	struct rn_mem_limits lim = { .max_pd = 2, .max_mr = 8, .max_mw = 4, .max_pbl = 8 };
	struct rn_cq_attr ca = { .min_cqe = 64, .max_cqe = 1024 };
	uint32_t got;

	CHECK(rn_mem_create(&lim, &r->mem) == RN_OK);
	CHECK(rn_evq_create(64, &r->evq) == RN_OK);
	CHECK(rn_mem_pd_alloc(r->mem, &r->pd) == RN_OK);
	ca.evq = r->evq;
	CHECK(rn_cq_create(&ca, &r->scq, &got) == RN_OK);
	CHECK(rn_cq_create(&ca, &r->rcq, &got) == RN_OK);
	if (r->c.srq) {
		struct rn_srq_attr sa = { .max_wr = 16, .max_sge = 2, .pd = r->pd, .dev_max_wr = 64,
					  .dev_max_sge = 4, .evq = r->evq };
		CHECK(rn_srq_create(&sa, &r->srq, NULL, NULL) == RN_OK);
	}
	struct rn_qp_init_attr a = {
		.mem = r->mem, .pd = r->pd, .send_cq = r->scq, .recv_cq = r->rcq, .srq = r->srq,
		.sq_depth = 16, .rq_depth = 16, .max_send_sge = 2, .max_write_sge = 2,
		.max_recv_sge = 2, .max_inline = 64, .ord = MAX_READ, .ird = r->c.ird,
		.inbound_read = r->c.qp_read, .inbound_write = r->c.qp_write, .bind_mw = true,
		.tolerant = r->c.tolerant, .evq = r->evq,
	};
	CHECK(rn_qp_create(&a, &r->qp, NULL) == RN_OK);
}

/* The stream is handed over as rn_cm would after an MPA exchange that settled CRC and
 * markers; with c.pre its first octets come with the handoff. */
static void connect_qp(struct run *r)
{
	struct rn_cm_handoff h = { 0 };
	struct rn_qp_mod m = { .next = RN_QPS_RTS, .mask = RN_QPM_LLP_HANDLE, .llp = &h };

	h.conn = mem_conn_new(&r->wire, r->c.lend);
	h.params.rev = 2;
	h.params.crc = r->c.crc;
	h.params.markers_tx = h.params.markers_rx = r->c.markers;
	h.params.local_ird = h.params.local_ord = MAX_READ;
	h.params.peer_ird = h.params.peer_ord = MAX_READ;
	if (r->c.pre && r->stream_len) {
		size_t n = 1 + r->c.seed % (r->stream_len < 97 ? r->stream_len : 97);
		if (r->wire.nbarrier && r->wire.barrier[0] < n)
			n = r->wire.barrier[0];
		if (n) {
			h.rx = malloc(n);
			CHECK(h.rx != NULL);
			memcpy(h.rx, r->stream, n);
			h.rx_len = n;
			r->wire.rx_off = n;
		}
	}
	CHECK(rn_qp_modify_qp(r->qp, &m, NULL) == RN_OK);
	CHECK(h.conn == NULL);
}

/* ---- work requests ------------------------------------------------------------------------ */

static void post_recv(struct run *r)
{
	if (r->recvs >= MAX_RECV)
		return;
	uint32_t off = recv_off[r->recvs], len = recv_len[r->recvs];
	struct rn_rq_sge sge = { (uintptr_t)(r->r.p + off), len, r->stag_r };
	struct rn_recv_wr wr = { r->recvs, NULL, &sge, 1 };
	enum rn_status st = r->srq ? rn_srq_post(r->srq, &wr, NULL, NULL)
				   : rn_qp_post_recv(r->qp, &wr, NULL, NULL);
	if (st != RN_OK)
		return;   /* the QP may have left RTS already */
	guard_buf_allow(&r->r, off, off + len);
	r->recvs++;
}

/* big: the barrier's Read (see read_off) */
static void post_read(struct run *r, bool big)
{
	if (r->reads >= MAX_READ)
		return;
	uint32_t off = read_off[big], len = read_len[big];
	struct rn_rq_sge sge = { (uintptr_t)(r->k.p + off), len, r->stag_k };
	struct rn_send_wr wr = { .wr_id = WR_READ + r->reads, .sg_list = &sge, .num_sge = 1,
				 .opcode = RN_WR_RDMA_READ, .flags = RN_SEND_SIGNALED };
	wr.wr.rdma.rkey = 0x1234;
	wr.wr.rdma.remote_addr = 0x10000;
	if (rn_qp_post_send(r->qp, &wr, NULL, NULL) != RN_OK)
		return;
	guard_buf_allow(&r->k, off, off + len);
	r->reads++;
}

/* The type-2 window (allocated with the buffers) bound by the QP over W[MW_LO, MW_HI) with
 * both remote rights. */
static void bind_window(struct run *r)
{
	struct rn_send_wr wr = { .wr_id = WR_BIND, .opcode = RN_WR_BIND_MW,
				 .flags = RN_SEND_SIGNALED };
	wr.wr.bind.mw_stag = r->stag_mw;
	wr.wr.bind.mr_stag = r->stag_w;
	wr.wr.bind.addr = (uintptr_t)r->w.p + MW_LO;
	wr.wr.bind.length = MW_HI - MW_LO;
	wr.wr.bind.access = RN_ACC_REMOTE_WRITE | RN_ACC_REMOTE_READ |
			    (r->c.w_zero ? RN_ACC_ZERO_BASED : 0);
	CHECK(rn_qp_post_send(r->qp, &wr, NULL, NULL) == RN_OK);
	guard_buf_allow(&r->w, MW_LO, MW_HI);
	/* it ran at once (RTS, nothing before it), before the peer's first octet */
	struct rn_cqe e;
	uint32_t got = 0;
	CHECK(rn_cq_poll(r->scq, &e, 1, &got) == RN_OK && got == 1);
	CHECK(e.wr_id == WR_BIND && e.status == RN_WC_SUCCESS);
	r->bind_seen = true;
}

/* ---- checks ------------------------------------------------------------------------------- */

static void check_memory(const struct run *r)
{
	CHECK(guard_buf_intact(&r->r));
	CHECK(guard_buf_intact(&r->w));
	CHECK(guard_buf_intact(&r->x));
	CHECK(guard_buf_intact(&r->k));
}

static void note_cqe(struct run *r, const struct rn_cqe *e, bool recv)
{
	if (recv) {
		CHECK(e->wr_id < r->recvs && !r->recv_seen[e->wr_id]);
		CHECK(e->status != RN_WC_SUCCESS || e->byte_len <= recv_len[e->wr_id]);
		r->recv_seen[e->wr_id] = 1;
	} else if (e->wr_id == WR_BIND) {
		CHECK(!r->bind_seen);
		r->bind_seen = true;
	} else {
		CHECK(e->wr_id >= WR_READ && e->wr_id < WR_READ + r->reads);
		CHECK(!r->read_seen[e->wr_id - WR_READ]);
		r->read_seen[e->wr_id - WR_READ] = 1;
	}
}

static void poll_cqs(struct run *r)
{
	struct rn_cqe e;
	uint32_t got;

	while (rn_cq_poll(r->rcq, &e, 1, &got) == RN_OK && got)
		note_cqe(r, &e, true);
	while (rn_cq_poll(r->scq, &e, 1, &got) == RN_OK && got)
		note_cqe(r, &e, false);
}

static void drain_events(struct run *r)
{
	struct rn_async_event ev;

	while (rn_evq_get(r->evq, &ev, 0) == 0)
		rn_evq_ack(r->evq, &ev);
}

struct tx_seen {
	unsigned fpdus, terms;
	bool after_term;
};

static int on_tx_ulpdu(void *arg, const uint8_t *u, size_t len)
{
	struct tx_seen *t = arg;
	struct rdmap_msg m;
	struct iwarp_err e;

	CHECK(rdmap_msg_decode(u, len, &m, &e) == 0);
	t->after_term |= t->terms > 0;
	t->fpdus++;
	if (m.opcode == RDMAP_OP_TERMINATE) {
		t->terms++;
		CHECK(m.u.term.err.layer <= IWARP_LAYER_LLP);
	}
	return 0;
}

/* What the QP sent is a clean FPDU stream; a Terminate, if any, is the last message. */
static struct tx_seen check_tx(const struct run *r)
{
	struct mpa_rx_cfg rc = { .crc = r->c.crc, .markers = r->c.markers };
	struct tx_seen t = { 0 };
	struct mpa_rx rx;
	static uint8_t buf[65536];

	mpa_rx_init(&rx, &rc);
	if (r->wire.tx.len)
		CHECK(mpa_rx_feed(&rx, r->wire.tx.p, r->wire.tx.len, buf, sizeof(buf), on_tx_ulpdu,
				  &t) >= 0);
	CHECK(t.terms <= 1 && !t.after_term);
	return t;
}

/* Before the stream ended, leaving RTS needs a Terminate on record, ours exactly when we
 * sent one. */
static void check_outcome(struct run *r)
{
	struct tx_seen t = check_tx(r);
	struct rn_qp_info info;

	CHECK(rn_qp_query(r->qp, &info) == RN_OK);
	if (t.terms)
		CHECK(info.state != RN_QPS_RTS && info.term_valid && info.term_local);
	if (!r->c.fin && info.state != RN_QPS_RTS && !r->wire.aborted)
		CHECK(info.term_valid);
}

/* In Error every posted WR has completed (flushed if nothing else); S-RQ WQEs never taken
 * stay in the S-RQ. */
static void check_all_completed(struct run *r)
{
	for (unsigned i = 0; i < r->recvs && !r->srq; i++)
		CHECK(r->recv_seen[i]);
	for (unsigned i = 0; i < r->reads; i++)
		CHECK(r->read_seen[i]);
	CHECK(!r->c.mw || r->bind_seen);
}

/* ---- driving ------------------------------------------------------------------------------ */

static void barrier_action(struct run *r, uint8_t op)
{
	if (op & 0x04)
		post_recv(r);
	if (op & 0x08)
		post_read(r, true);
	if (op & 0x10)
		poll_cqs(r);
	check_memory(r);
}

/* Calls the QP until it has nothing more to do; a QP that never settles is a hang. */
static void drive(struct run *r)
{
	size_t limit = 1000 + 4 * r->stream_len;

	for (size_t it = 0;; it++) {
		CHECK(it < limit);
		int did = rn_qp_on_readable(r->qp);
		if (r->wire.barrier_hit) {
			r->wire.barrier_hit = false;
			barrier_action(r, r->bops.op[r->wire.next_barrier - 1]);
			did = 1;
		}
		did |= rn_qp_on_writable(r->qp);
		if (!did)
			return;
	}
}

/* Error, or Idle after a graceful close: the stream is gone and every WR completed. */
static bool settled(struct rn_qp *qp)
{
	enum rn_qp_state s = rn_qp_get_state(qp);

	return s == RN_QPS_ERROR || s == RN_QPS_IDLE;
}

/* Settle the QP: Modify to Error from RTS; from Closing or Terminate the QP waits for the
 * peer's FIN, which the peer then sends (after what is left of its stream, then at once). */
static void settle(struct run *r)
{
	struct rn_qp_mod m = { .next = RN_QPS_ERROR };

	if (rn_qp_get_state(r->qp) == RN_QPS_RTS)
		CHECK(rn_qp_modify_qp(r->qp, &m, NULL) == RN_OK);
	if (!settled(r->qp)) {
		r->wire.fin = true;
		drive(r);
	}
	if (!settled(r->qp)) {
		r->wire.rx_len = r->wire.rx_off;
		r->wire.nbarrier = r->wire.next_barrier;
		drive(r);
	}
	poll_cqs(r);
	CHECK(settled(r->qp));
}

static void teardown(struct run *r)
{
	drain_events(r);
	if (r->stag_mw)
		CHECK(rn_mem_dereg(r->mem, r->stag_mw) == RN_OK);
	CHECK(rn_qp_destroy(r->qp) == RN_OK);
	if (r->srq)
		CHECK(rn_srq_destroy(r->srq) == RN_OK);
	CHECK(rn_cq_destroy(r->scq) == RN_OK);
	CHECK(rn_cq_destroy(r->rcq) == RN_OK);
	rn_mem_dereg(r->mem, r->stag_r);
	rn_mem_dereg(r->mem, r->stag_w);
	rn_mem_dereg(r->mem, r->stag_x);
	rn_mem_dereg(r->mem, r->stag_k);
	drain_events(r);
	rn_evq_destroy(r->evq);
	rn_mem_destroy(r->mem);
	check_memory(r);
	guard_buf_free(&r->r);
	guard_buf_free(&r->w);
	guard_buf_free(&r->x);
	guard_buf_free(&r->k);
	mem_wire_fini(&r->wire);
	free(r->stream);
}

static void setup(struct run *r, const uint8_t *data, size_t size)
{
	r->c = parse_cfg(data);
	make_qp(r);
	make_buffers(r);
	qp_rx_stream_build(data + 3, size - 3, r->c.crc, r->c.markers, &r->names, &r->wire,
			   &r->bops, &r->stream, &r->stream_len);
	r->wire.rx = r->stream;
	r->wire.rx_len = r->stream_len;
	r->wire.fin = r->c.fin;
	r->wire.tx_tight = r->c.tight;
	r->wire.rng = r->c.seed * 2654435761u + 1;
	connect_qp(r);
	if (r->c.mw)
		bind_window(r);
	for (unsigned i = 0; i < r->c.nrecv; i++)
		post_recv(r);
	if (r->c.read)
		post_read(r, false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	struct run *r = calloc(1, sizeof(*r));
	CHECK(r != NULL);
	setup(r, data, size);
	drive(r);
	check_memory(r);
	check_outcome(r);
	settle(r);
	check_all_completed(r);
	teardown(r);
	free(r);
	return 0;
}
