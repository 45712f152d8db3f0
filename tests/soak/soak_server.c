/* soak_server: takes the client's QPs, checks every Send it gets (length, header, content,
 * order), reposts the receive (to the QP or the S-RQ) and grants it back as a credit, and
 * lends its region to the client's Writes and Reads. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soak.h"

#define ROLE "server"
/* wr_id of a credit Write (the QP's index below it); a receive's is its buffer's index. The
 * opcode of a failed completion is undefined, so the wr_id tells the two apart. */
#define CREDIT_TAG (1ull << 62)

struct srv_qp {
	uint32_t next_seq;      /* the Send expected next */
	uint32_t granted;       /* receives reposted (credits beyond the first SOAK_RECVS) */
	bool credit_busy, credit_dirty, ended;
	uint64_t credit_t0, credit_raddr;
	uint32_t credit_rkey;
	uint64_t posted, completed;   /* WRs of this QP's own queues */
};

struct srv {
	struct soak_run r;
	uint64_t seed;
	struct ibv_mr *region, *recv, *credit;
	struct srv_qp q[SOAK_MAX_QPS];
	int ended;
	bool closing;
};

static int bind_listen(struct srv *s)
{
	const struct soak_opts *o = s->r.o;
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
	                          .ai_flags = AI_PASSIVE }, *ai;
	int rc = getaddrinfo(o->addr, o->port, &hints, &ai);
	if (rc)
		return fprintf(stderr, "soak: %s: %s\n", o->port, gai_strerror(rc)), -1;
	rc = rdma_bind_addr(s->r.listen_id, ai->ai_addr);
	freeaddrinfo(ai);
	if (rc)
		return perror("rdma_bind_addr"), -1;
	if (rdma_listen(s->r.listen_id, o->qps))
		return perror("rdma_listen"), -1;
	printf("soak server: listening on port %s for %d QPs%s\n", o->port, o->qps,
	       o->srq ? " (receives from an S-RQ)" : "");
	fflush(stdout);
	return 0;
}

static uint8_t *recv_buf(struct srv *s, uint64_t i)
{
	return (uint8_t *)s->recv->addr + i * SOAK_MAX_LEN;
}

/* Buffer i of the pool: to the S-RQ, or to the RQ of the QP that owns it. A receive reposted
 * in the race with the peer's close completes too: a closed QP is in Error, which flushes. */
static int post_recv(struct srv *s, int qp, uint64_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)recv_buf(s, i), .length = SOAK_MAX_LEN,
	                       .lkey = s->recv->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = s->r.srq ? ibv_post_srq_recv(s->r.srq, &wr, &bad)
	                  : ibv_post_recv(s->r.id[qp]->qp, &wr, &bad);
	if (rc)
		return fprintf(stderr, "soak: post recv: %s\n", strerror(rc)), -1;
	if (s->r.srq)
		return 0;
	s->r.st.posted++;
	s->q[qp].posted++;
	return 0;
}

static int make_memory(struct srv *s)
{
	struct soak_run *r = &s->r;
	size_t nq = (size_t)r->o->qps;
	int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	s->region = soak_reg(r, nq * SOAK_SLOTS * SOAK_SPAN, remote);
	s->recv = soak_reg(r, nq * SOAK_RECVS * SOAK_MAX_LEN, IBV_ACCESS_LOCAL_WRITE);
	s->credit = soak_reg(r, nq * sizeof(struct soak_credit), IBV_ACCESS_LOCAL_WRITE);
	if (!s->region || !s->recv || !s->credit)
		return -1;
	if (!r->o->srq)
		return 0;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = (uint32_t)(nq * SOAK_RECVS),
	                                          .max_sge = 1 } };
	if (!(r->srq = ibv_create_srq(r->pd, &sa)))
		return perror("ibv_create_srq"), -1;
	for (uint64_t i = 0; i < nq * SOAK_RECVS; i++)
		if (post_recv(s, -1, i))
			return -1;
	return 0;
}

static int check_hello(struct srv *s, const struct soak_hello *h)
{
	if (h->magic != SOAK_HELLO_MAGIC || h->qps != (uint32_t)s->r.o->qps ||
	    h->qp >= (uint32_t)s->r.o->qps || s->r.id[h->qp]) {
		fprintf(stderr, "soak: bad hello (magic 0x%x, qp %u of %u; want %d QPs)\n", h->magic,
		        h->qp, h->qps, s->r.o->qps);
		return -1;
	}
	if (h->qp == 0)
		s->seed = h->seed;
	else if (h->seed != s->seed)
		return fprintf(stderr, "soak: QP %u brings another seed\n", h->qp), -1;
	return 0;
}

/* One connection: request, QP, receives, accept, ESTABLISHED. */
static int accept_one(struct srv *s, int ms)
{
	struct soak_run *r = &s->r;
	struct rdma_cm_id *id = NULL;
	struct soak_hello h;
	if (soak_cm_wait(r, RDMA_CM_EVENT_CONNECT_REQUEST, ms, &id, &h, sizeof h))
		return -1;
	if (check_hello(s, &h)) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return -1;
	}
	r->id[h.qp] = id;
	if (!r->pd && (soak_common_setup(r, id->verbs) || make_memory(s)))
		return -1;
	if (soak_create_qp(r, id, SOAK_SLOTS, SOAK_RECVS))
		return -1;
	for (uint64_t i = 0; !r->srq && i < SOAK_RECVS; i++)
		if (post_recv(s, (int)h.qp, h.qp * SOAK_RECVS + i))
			return -1;
	s->q[h.qp].credit_raddr = h.credit_addr;
	s->q[h.qp].credit_rkey = h.credit_rkey;
	struct soak_welcome w = { SOAK_HELLO_MAGIC, s->region->rkey, (uintptr_t)s->region->addr,
	                          SOAK_SPAN };
	struct rdma_conn_param p = { .private_data = &w, .private_data_len = sizeof w,
	                             .initiator_depth = 1, .responder_resources = SOAK_SLOTS };
	if (rdma_accept(id, &p))
		return perror("rdma_accept"), -1;
	return soak_cm_wait(r, RDMA_CM_EVENT_ESTABLISHED, 10000, NULL, NULL, 0);
}

static int post_credit(struct srv *s, int qp)
{
	struct srv_qp *q = &s->q[qp];
	struct soak_credit *c = (struct soak_credit *)s->credit->addr + qp;
	c->granted = q->granted;
	c->check = ~q->granted;
	struct ibv_sge sge = { .addr = (uintptr_t)c, .length = sizeof *c, .lkey = s->credit->lkey };
	struct ibv_send_wr wr = { .wr_id = CREDIT_TAG | (uint64_t)qp, .sg_list = &sge, .num_sge = 1,
	                          .opcode = IBV_WR_RDMA_WRITE,
	                          .wr.rdma = { .remote_addr = q->credit_raddr,
	                                       .rkey = q->credit_rkey } }, *bad;
	int rc = ibv_post_send(s->r.id[qp]->qp, &wr, &bad);
	if (rc)
		return fprintf(stderr, "soak: post credit: %s\n", strerror(rc)), -1;
	s->r.st.posted++;
	q->posted++;
	q->credit_busy = true;
	q->credit_dirty = false;
	q->credit_t0 = vx_now_ns();
	return 0;
}

static int take_message(struct srv *s, int qp, const struct ibv_wc *wc)
{
	struct srv_qp *q = &s->q[qp];
	const uint8_t *p = recv_buf(s, wc->wr_id);
	struct soak_hdr h;
	memcpy(&h, p, sizeof h);
	if (wc->byte_len == SOAK_HDR_LEN && h.magic == SOAK_END_MAGIC) {
		if (h.seq != q->next_seq)
			return fprintf(stderr, "soak: FAIL: qp %d: client sent %u Sends, %u arrived\n",
			               qp, h.seq, q->next_seq), -1;
		q->ended = true;
		s->ended++;
		return 0;
	}
	uint64_t key = soak_key(s->seed, SOAK_SEND, (unsigned)qp, q->next_seq);
	if (soak_send_check(p, wc->byte_len, soak_len(key), key, (unsigned)qp, q->next_seq))
		return -1;
	q->next_seq++;
	soak_note_completion(&s->r, SOAK_RECV, wc->byte_len, vx_now_ns());
	return 0;
}

static int on_recv(struct srv *s, int qp, const struct ibv_wc *wc)
{
	if (take_message(s, qp, wc))
		return -1;
	if (s->q[qp].ended)
		return 0;
	if (post_recv(s, qp, wc->wr_id))
		return -1;
	s->q[qp].granted++;
	s->q[qp].credit_dirty = true;
	return 0;
}

static int on_error(struct srv *s, int qp, const struct ibv_wc *wc)
{
	bool credit = wc->wr_id & CREDIT_TAG;
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		s->r.st.flushed++;
	if (credit)
		s->q[qp].credit_busy = false;
	if (s->closing || s->r.o->expect_kill) {
		soak_mark_dead(&s->r, qp, wc->status == IBV_WC_WR_FLUSH_ERR ? "flushed work request"
		                                                          : "failed work request");
		return 0;
	}
	fprintf(stderr, "soak: FAIL: qp %d: %s completion with %s (vendor_err 0x%x)\n", qp,
	        credit ? "credit write" : "receive", ibv_wc_status_str(wc->status), wc->vendor_err);
	return -1;
}

static int on_wc(void *arg, const struct ibv_wc *wc)
{
	struct srv *s = arg;
	int qp = soak_qp_index(&s->r, wc->qp_num);
	bool own = (wc->wr_id & CREDIT_TAG) || !s->r.srq;
	if (qp < 0)
		return fprintf(stderr, "soak: completion of an unknown QP %u\n", wc->qp_num), -1;
	if (own) {
		s->r.st.completed++;
		s->q[qp].completed++;
	}
	if (wc->status != IBV_WC_SUCCESS)
		return on_error(s, qp, wc);
	if (wc->opcode & IBV_WC_RECV)
		return on_recv(s, qp, wc);
	s->q[qp].credit_busy = false;
	soak_note_completion(&s->r, SOAK_CREDIT, sizeof(struct soak_credit), s->q[qp].credit_t0);
	return 0;
}

/* Credits out, stalls found; -1 on a stall or a failed post. */
static int service(struct srv *s)
{
	uint64_t now = vx_now_ns(), stall = (uint64_t)s->r.o->stall_ms * 1000000u;
	for (int i = 0; i < s->r.o->qps; i++) {
		struct srv_qp *q = &s->q[i];
		if (q->credit_busy && now - q->credit_t0 > stall && !s->r.dead_why) {
			fprintf(stderr, "soak: FAIL: stall: qp %d credit write (grant %u) outstanding "
			        "%.1f s\n", i, q->granted, (double)(now - q->credit_t0) / 1e9);
			return -1;
		}
		if (!q->credit_busy && q->credit_dirty && !s->r.dead_why && post_credit(s, i)) {
			if (!s->r.o->expect_kill)
				return -1;
			soak_mark_dead(&s->r, i, "post refused");
		}
	}
	return 0;
}

static int close_all(struct srv *s)
{
	s->closing = true;
	for (int i = 0; i < s->r.o->qps; i++)
		if (rdma_disconnect(s->r.id[i]) && errno != EINVAL)
			return perror("rdma_disconnect"), -1;
	return 0;
}

/* Done when every QP is disconnected and every WR of theirs came back; after a kill, when
 * every QP is in Error (where a killed peer leaves them). */
static bool finished(struct srv *s)
{
	bool gone = s->r.o->expect_kill ? soak_all_qps_error(&s->r)
	                                : s->r.disconnected >= s->r.o->qps ||
	                                  soak_all_qps_error(&s->r);
	return (s->closing || s->r.dead_why) && gone && s->r.st.posted == s->r.st.completed;
}

static int give_up(struct srv *s, uint64_t now)
{
	uint64_t limit = (uint64_t)s->r.o->kill_wait_s * 1000000000u;
	if (!s->r.dead_why || now - s->r.dead_ns <= limit)
		return 0;
	fprintf(stderr, "soak: FAIL: %d s after the peer went (%s): %d QPs disconnected, all in "
	        "Error: %s, WRs posted %llu completed %llu\n", s->r.o->kill_wait_s, s->r.dead_why,
	        s->r.disconnected, soak_all_qps_error(&s->r) ? "yes" : "no",
	        (unsigned long long)s->r.st.posted, (unsigned long long)s->r.st.completed);
	for (int i = 0; i < s->r.o->qps; i++)
		fprintf(stderr, "soak:   qp %d: %llu WRs posted, %llu completed, credit write %s\n",
		        i, (unsigned long long)s->q[i].posted, (unsigned long long)s->q[i].completed,
		        s->q[i].credit_busy ? "outstanding" : "idle");
	return -1;
}

static int run(struct srv *s)
{
	for (;;) {
		if (soak_take(&s->r, on_wc, s))
			return -1;
		if (s->r.dead_why && !s->closing && !s->r.o->expect_kill) {
			fprintf(stderr, "soak: FAIL: the client went away (%s) before its END\n",
			        s->r.dead_why);
			return -1;
		}
		if (service(s) || give_up(s, vx_now_ns()))
			return -1;
		soak_tick(&s->r, ROLE);
		if (s->ended == s->r.o->qps && !s->closing && close_all(s))
			return -1;
		if (finished(s))
			return 0;
	}
}

static void report_flush(struct srv *s)
{
	if (!s->r.dead_why)
		return;
	const char *how = s->closing ? "disconnected after END" : s->r.dead_why;
	printf("soak server: peer gone (%s); WRs of the QPs' queues %llu posted, %llu completed "
	       "(%llu flushed)%s\n", how,
	       (unsigned long long)s->r.st.posted, (unsigned long long)s->r.st.completed,
	       (unsigned long long)s->r.st.flushed,
	       s->r.srq ? "; the S-RQ's receives are freed with it" : "");
}

int soak_server(const struct soak_opts *o)
{
	struct srv *s = calloc(1, sizeof *s);
	if (!s)
		return 1;
	s->r.o = o;
	s->r.rss_start = -1;
	int rc = soak_channel(&s->r) ||
	         rdma_create_id(s->r.ec, &s->r.listen_id, NULL, RDMA_PS_TCP) || bind_listen(s);
	for (int i = 0; !rc && i < o->qps; i++)
		rc = accept_one(s, i ? 10000 : 60000);
	if (!rc) {
		printf("soak server: %d QPs connected, seed %llu\n", o->qps,
		       (unsigned long long)s->seed);
		s->r.start_ns = vx_now_ns();
		rc = run(s);
	}
	report_flush(s);
	if (!rc && !s->closing && !o->expect_kill)
		rc = -1;
	rc = soak_finish(&s->r, ROLE, rc);
	free(s);
	return rc;
}
