/* soak_client: connects the QPs and keeps SOAK_SLOTS operations in flight on each: a credited
 * Send, or a Write to a random place of the server's region Read back and compared. Every
 * operation is timed; one outstanding longer than the stall limit fails the run. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soak.h"

#define ROLE "client"

struct cli_slot {
	enum soak_kind kind;   /* SOAK_SEND, SOAK_WRITE, SOAK_READ in flight; SOAK_KINDS idle */
	uint32_t len, loff, seq;
	uint64_t key, raddr, t0;
};

struct cli_qp {
	struct cli_slot slot[SOAK_SLOTS];
	uint32_t sends;        /* Sends posted, END included */
	uint32_t writes;
	uint32_t granted;      /* the last consistent credit word */
	bool end_posted, end_done;
	uint64_t end_t0;
};

struct cli {
	struct soak_run r;
	struct ibv_mr *src, *dst, *credit, *end;
	struct soak_welcome w[SOAK_MAX_QPS];
	struct cli_qp q[SOAK_MAX_QPS];
	uint64_t rng, stop_ns;
	int ends_posted, ends_done;
	uint64_t last_wc_ns;   /* the end phase waits for credits: it must see progress */
	bool stall_noted;
};

static uint64_t wr_id(enum soak_kind k, int qp, int slot)
{
	return (uint64_t)k << 32 | (uint64_t)qp << 16 | (uint64_t)slot;
}

static uint8_t *slot_buf(struct ibv_mr *mr, int qp, int slot)
{
	return (uint8_t *)mr->addr + ((size_t)qp * SOAK_SLOTS + (size_t)slot) * SOAK_SPAN;
}

static int make_memory(struct cli *c)
{
	struct soak_run *r = &c->r;
	size_t nq = (size_t)r->o->qps;
	c->src = soak_reg(r, nq * SOAK_SLOTS * SOAK_SPAN, IBV_ACCESS_LOCAL_WRITE);
	c->dst = soak_reg(r, nq * SOAK_SLOTS * SOAK_SPAN, IBV_ACCESS_LOCAL_WRITE);
	c->credit = soak_reg(r, nq * sizeof(struct soak_credit),
	                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	c->end = soak_reg(r, nq * SOAK_HDR_LEN, IBV_ACCESS_LOCAL_WRITE);
	return c->src && c->dst && c->credit && c->end ? 0 : -1;
}

static int resolve(struct cli *c, struct rdma_cm_id *id)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	int rc = getaddrinfo(c->r.o->addr, c->r.o->port, &hints, &ai);
	if (rc)
		return fprintf(stderr, "soak: %s: %s\n", c->r.o->addr, gai_strerror(rc)), -1;
	rc = rdma_resolve_addr(id, NULL, ai->ai_addr, 2000);
	freeaddrinfo(ai);
	if (rc)
		return perror("rdma_resolve_addr"), -1;
	if (soak_cm_wait(&c->r, RDMA_CM_EVENT_ADDR_RESOLVED, 5000, NULL, NULL, 0))
		return -1;
	if (rdma_resolve_route(id, 2000))
		return perror("rdma_resolve_route"), -1;
	return soak_cm_wait(&c->r, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000, NULL, NULL, 0);
}

static int connect_one(struct cli *c, int qp)
{
	struct soak_run *r = &c->r;
	if (rdma_create_id(r->ec, &r->id[qp], NULL, RDMA_PS_TCP))
		return perror("rdma_create_id"), -1;
	if (resolve(c, r->id[qp]))
		return -1;
	if (!r->pd && (soak_common_setup(r, r->id[qp]->verbs) || make_memory(c)))
		return -1;
	if (soak_create_qp(r, r->id[qp], 2 * SOAK_SLOTS + 2, 1))
		return -1;
	struct soak_hello h = { SOAK_HELLO_MAGIC, (uint32_t)qp, (uint32_t)r->o->qps,
	                        c->credit->rkey, r->o->seed,
	                        (uintptr_t)((struct soak_credit *)c->credit->addr + qp) };
	struct rdma_conn_param p = { .private_data = &h, .private_data_len = sizeof h,
	                             .initiator_depth = SOAK_SLOTS, .responder_resources = 1 };
	if (rdma_connect(r->id[qp], &p))
		return perror("rdma_connect"), -1;
	if (soak_cm_wait(r, RDMA_CM_EVENT_ESTABLISHED, 10000, NULL, &c->w[qp], sizeof c->w[qp]))
		return -1;
	if (c->w[qp].magic != SOAK_HELLO_MAGIC || c->w[qp].span != SOAK_SPAN)
		return fprintf(stderr, "soak: the server's reply is not a soak server's\n"), -1;
	return 0;
}

static int post(struct cli *c, int qp, enum ibv_wr_opcode op, uint64_t id, struct ibv_mr *mr,
                uint8_t *addr, uint32_t len, uint64_t raddr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
	                          .wr.rdma = { .remote_addr = raddr, .rkey = c->w[qp].rkey } },
	                   *bad;
	int rc = ibv_post_send(c->r.id[qp]->qp, &wr, &bad);
	if (rc && c->r.o->expect_kill) {
		/* the QP left RTS between the completion that freed the slot and this post */
		if ((enum soak_kind)(id >> 32) != SOAK_END)
			c->q[qp].slot[id & 0xffff].kind = SOAK_KINDS;
		soak_mark_dead(&c->r, qp, "post refused");
		return 0;
	}
	if (rc)
		return fprintf(stderr, "soak: ibv_post_send: %s\n", strerror(rc)), -1;
	c->r.st.posted++;
	return 0;
}

/* Sends the QP may post now: the first SOAK_RECVS, then one per receive granted. */
static uint32_t credits(struct cli *c, int qp)
{
	struct cli_qp *q = &c->q[qp];
	const struct soak_credit *w = (const struct soak_credit *)c->credit->addr + qp;
	uint32_t g = w->granted, check = w->check;
	if (check == ~g && g > q->granted)
		q->granted = g;
	return SOAK_RECVS + q->granted - q->sends;
}

static int start_send(struct cli *c, int qp, int i)
{
	struct cli_slot *s = &c->q[qp].slot[i];
	s->seq = c->q[qp].sends;
	s->key = soak_key(c->r.o->seed, SOAK_SEND, (unsigned)qp, s->seq);
	s->len = soak_len(s->key);
	s->loff = (uint32_t)(soak_rand(&c->rng) % (SOAK_SPAN - s->len + 1));
	uint8_t *p = slot_buf(c->src, qp, i) + s->loff;
	soak_send_fill(p, s->len, s->key, (unsigned)qp, s->seq);
	s->kind = SOAK_SEND;
	s->t0 = vx_now_ns();
	c->q[qp].sends++;
	return post(c, qp, IBV_WR_SEND, wr_id(SOAK_SEND, qp, i), c->src, p, s->len, 0);
}

static int start_write(struct cli *c, int qp, int i)
{
	struct cli_slot *s = &c->q[qp].slot[i];
	s->seq = c->q[qp].writes++;
	s->key = soak_key(c->r.o->seed, SOAK_WRITE, (unsigned)qp, s->seq);
	s->len = soak_len(s->key);
	s->loff = (uint32_t)(soak_rand(&c->rng) % (SOAK_SPAN - s->len + 1));
	uint64_t roff = soak_rand(&c->rng) % (SOAK_SPAN - s->len + 1);
	s->raddr = c->w[qp].addr + ((uint64_t)qp * SOAK_SLOTS + (uint64_t)i) * SOAK_SPAN + roff;
	uint8_t *p = slot_buf(c->src, qp, i) + s->loff;
	soak_fill(p, s->len, s->key);
	s->kind = SOAK_WRITE;
	s->t0 = vx_now_ns();
	return post(c, qp, IBV_WR_RDMA_WRITE, wr_id(SOAK_WRITE, qp, i), c->src, p, s->len,
	            s->raddr);
}

static int start_read(struct cli *c, int qp, int i)
{
	struct cli_slot *s = &c->q[qp].slot[i];
	s->kind = SOAK_READ;
	s->t0 = vx_now_ns();
	return post(c, qp, IBV_WR_RDMA_READ, wr_id(SOAK_READ, qp, i), c->dst,
	            slot_buf(c->dst, qp, i) + s->loff, s->len, s->raddr);
}

/* Idle slots get new work: a Send half the time (when a credit is there), else a Write. */
static int fill_slots(struct cli *c)
{
	for (int qp = 0; qp < c->r.o->qps; qp++)
		for (int i = 0; i < SOAK_SLOTS; i++) {
			if (c->q[qp].slot[i].kind != SOAK_KINDS)
				continue;
			bool send = soak_rand(&c->rng) & 1;
			int rc = send && credits(c, qp) > 0 ? start_send(c, qp, i)
			                                    : start_write(c, qp, i);
			if (rc)
				return -1;
		}
	return 0;
}

static int read_done(struct cli *c, int qp, int i)
{
	struct cli_slot *s = &c->q[qp].slot[i];
	long bad = soak_check(slot_buf(c->dst, qp, i) + s->loff, s->len, s->key);
	if (bad < 0)
		return 0;
	fprintf(stderr, "soak: FAIL: qp %d write %u (%u bytes at remote 0x%llx): byte %ld read "
	        "back wrong\n", qp, s->seq, s->len, (unsigned long long)s->raddr, bad);
	return -1;
}

static int on_error(struct cli *c, int qp, const struct ibv_wc *wc)
{
	bool ending = c->q[qp].end_posted;
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		c->r.st.flushed++;
	if (c->r.o->expect_kill || (ending && c->r.disconnected)) {
		soak_mark_dead(&c->r, qp, wc->status == IBV_WC_WR_FLUSH_ERR ? "flushed work request"
		                                                          : "failed work request");
		return 0;
	}
	fprintf(stderr, "soak: FAIL: qp %d: completion (wr_id 0x%llx) with %s (vendor_err 0x%x)\n",
	        qp, (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status), wc->vendor_err);
	return -1;
}

static int on_wc(void *arg, const struct ibv_wc *wc)
{
	struct cli *c = arg;
	enum soak_kind k = (enum soak_kind)(wc->wr_id >> 32);
	int qp = (int)(wc->wr_id >> 16 & 0xffff), i = (int)(wc->wr_id & 0xffff);
	c->r.st.completed++;
	c->last_wc_ns = vx_now_ns();
	if (k == SOAK_END) {
		c->q[qp].end_done = true;
		c->ends_done++;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		if (k != SOAK_END)
			c->q[qp].slot[i].kind = SOAK_KINDS;
		return on_error(c, qp, wc);
	}
	if (k == SOAK_END)
		return 0;
	struct cli_slot *s = &c->q[qp].slot[i];
	soak_note_completion(&c->r, k, s->len, s->t0);
	s->kind = SOAK_KINDS;
	if (k == SOAK_WRITE)
		return c->r.dead_why ? 0 : start_read(c, qp, i);
	return k == SOAK_READ ? read_done(c, qp, i) : 0;
}

static int post_end(struct cli *c, int qp)
{
	struct cli_qp *q = &c->q[qp];
	uint8_t *p = (uint8_t *)c->end->addr + (size_t)qp * SOAK_HDR_LEN;
	struct soak_hdr h = { SOAK_END_MAGIC, (uint32_t)qp, q->sends, SOAK_HDR_LEN };
	memcpy(p, &h, sizeof h);
	q->end_posted = true;
	c->ends_posted++;
	q->end_t0 = vx_now_ns();
	q->sends++;
	return post(c, qp, IBV_WR_SEND, wr_id(SOAK_END, qp, 0), c->end, p, SOAK_HDR_LEN, 0);
}

static bool qp_idle(const struct cli *c, int qp)
{
	for (int i = 0; i < SOAK_SLOTS; i++)
		if (c->q[qp].slot[i].kind != SOAK_KINDS)
			return false;
	return true;
}

/* After the run time: once a QP is idle, its END (which needs a credit too). */
static int post_ends(struct cli *c)
{
	for (int qp = 0; qp < c->r.o->qps; qp++)
		if (!c->q[qp].end_posted && qp_idle(c, qp) && credits(c, qp) > 0 && post_end(c, qp))
			return -1;
	return 0;
}

static const char *const kind_str[] = { "send", "write", "read", "recv", "credit", "end" };

/* The oldest operation in flight; 0 when none. */
static uint64_t oldest(const struct cli *c, int *qp_out, const char **what, uint32_t *len)
{
	uint64_t t = 0;
	for (int qp = 0; qp < c->r.o->qps; qp++) {
		const struct cli_qp *q = &c->q[qp];
		for (int i = 0; i < SOAK_SLOTS; i++)
			if (q->slot[i].kind != SOAK_KINDS && (!t || q->slot[i].t0 < t)) {
				t = q->slot[i].t0;
				*qp_out = qp;
				*what = kind_str[q->slot[i].kind];
				*len = q->slot[i].len;
			}
		if (q->end_posted && !q->end_done && (!t || q->end_t0 < t)) {
			t = q->end_t0;
			*qp_out = qp;
			*what = "end (waiting for a credit first)";
			*len = SOAK_HDR_LEN;
		}
	}
	return t;
}

static void outstanding(const struct cli *c)
{
	for (int qp = 0; qp < c->r.o->qps; qp++) {
		const struct cli_qp *q = &c->q[qp];
		fprintf(stderr, "soak:   qp %d: sends %u, credits granted %u, writes %u;", qp,
		        q->sends, q->granted, q->writes);
		for (int i = 0; i < SOAK_SLOTS; i++)
			if (q->slot[i].kind != SOAK_KINDS)
				fprintf(stderr, " [%s seq %u, %u bytes, %.1f s]", kind_str[q->slot[i].kind],
				        q->slot[i].seq, q->slot[i].len,
				        (double)(vx_now_ns() - q->slot[i].t0) / 1e9);
		fprintf(stderr, "\n");
	}
}

/* An operation over the stall limit fails the run; when the peer is to be killed it may be
 * the kill (a dead DPDK peer says nothing): then only the kill wait bounds it. */
static int stall_check(struct cli *c, uint64_t now)
{
	int qp = 0;
	const char *what = "";
	uint32_t len = 0;
	uint64_t t = oldest(c, &qp, &what, &len);
	uint64_t limit = (uint64_t)c->r.o->stall_ms * 1000000u;
	if (c->r.o->expect_kill)
		limit = (uint64_t)c->r.o->kill_wait_s * 1000000000u;
	if (c->r.dead_why)
		return 0;
	if (!t && now > c->stop_ns && c->ends_posted < c->r.o->qps &&
	    now - (c->last_wc_ns > c->stop_ns ? c->last_wc_ns : c->stop_ns) > limit) {
		fprintf(stderr, "soak: FAIL: stall: no credit for the END for %.1f s\n",
		        (double)limit / 1e9);
		outstanding(c);
		return -1;
	}
	if (!t || now - t <= limit)
		return 0;
	fprintf(stderr, "soak: FAIL: stall: qp %d %s of %u bytes outstanding %.1f s; in flight:\n",
	        qp, what, len, (double)(now - t) / 1e9);
	outstanding(c);
	return -1;
}

static bool in_flight(const struct cli *c)
{
	return c->r.st.posted != c->r.st.completed;
}

static bool finished(struct cli *c)
{
	if (in_flight(c))
		return false;
	if (c->r.dead_why && c->r.o->expect_kill)
		return soak_all_qps_error(&c->r);   /* where a killed peer leaves them */
	if (c->r.dead_why)
		return c->r.disconnected >= c->r.o->qps || soak_all_qps_error(&c->r);
	return false;
}

static int give_up(struct cli *c, uint64_t now)
{
	uint64_t limit = (uint64_t)c->r.o->kill_wait_s * 1000000000u;
	if (!c->r.dead_why || now - c->r.dead_ns <= limit)
		return 0;
	fprintf(stderr, "soak: FAIL: %d s after the peer went (%s): %d QPs disconnected, all in "
	        "Error: %s, WRs posted %llu completed %llu; in flight:\n", c->r.o->kill_wait_s,
	        c->r.dead_why, c->r.disconnected, soak_all_qps_error(&c->r) ? "yes" : "no",
	        (unsigned long long)c->r.st.posted, (unsigned long long)c->r.st.completed);
	outstanding(c);
	return -1;
}

static int step(struct cli *c, uint64_t now)
{
	if (c->r.dead_why)
		return 0;
	if (now < c->stop_ns)
		return fill_slots(c);
	return post_ends(c);
}

static int run(struct cli *c)
{
	for (;;) {
		uint64_t now = vx_now_ns();
		if (step(c, now) || soak_take(&c->r, on_wc, c))
			return -1;
		if (c->r.dead_why && !c->r.o->expect_kill && c->ends_posted < c->r.o->qps) {
			fprintf(stderr, "soak: FAIL: the server went away (%s) before the END\n",
			        c->r.dead_why);
			outstanding(c);
			return -1;
		}
		now = vx_now_ns();
		if (stall_check(c, now) || give_up(c, now))
			return -1;
		soak_tick(&c->r, ROLE);
		if (finished(c))
			return 0;
	}
}

static void report_flush(struct cli *c)
{
	if (!c->r.dead_why)
		return;
	printf("soak client: peer gone (first sign: %s); WRs %llu posted, %llu completed (%llu "
	       "flushed)\n", c->r.dead_why,
	       (unsigned long long)c->r.st.posted, (unsigned long long)c->r.st.completed,
	       (unsigned long long)c->r.st.flushed);
}

int soak_client(const struct soak_opts *o)
{
	struct cli *c = calloc(1, sizeof *c);
	if (!c)
		return 1;
	c->r.o = o;
	c->r.rss_start = -1;
	c->rng = o->seed ^ 0xc11e47;
	for (int qp = 0; qp < SOAK_MAX_QPS; qp++)
		for (int i = 0; i < SOAK_SLOTS; i++)
			c->q[qp].slot[i].kind = SOAK_KINDS;
	int rc = soak_channel(&c->r);
	for (int qp = 0; !rc && qp < o->qps; qp++)
		rc = connect_one(c, qp);
	if (!rc) {
		printf("soak client: %d QPs connected, seed %llu, %.0f s\n", o->qps,
		       (unsigned long long)o->seed, o->seconds);
		fflush(stdout);
		c->r.start_ns = vx_now_ns();
		c->stop_ns = c->r.start_ns + (uint64_t)(o->seconds * 1e9);
		rc = run(c);
	}
	report_flush(c);
	if (!rc && o->expect_kill && !c->r.dead_why)
		rc = -1;
	rc = soak_finish(&c->r, ROLE, rc);
	free(c);
	return rc;
}
