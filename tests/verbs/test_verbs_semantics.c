/* libibverbs calls as rdma-core 44 (Debian 12) with Linux siw answers them, for the programs
 * that depend on it: posts to a QP in Error (fio after a Terminate), inline sends up to the
 * device maximum (rdma_xclient), the state and GID rdma-core's test harness reads, and the
 * immediate errors for what iWARP lacks. The connected pair is made as test_verbs_loop's. */
#include "tv_loop.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 5000
#define BUFSZ 4096

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

struct pair {
	struct ibv_device **list;
	struct side a, b;
};

static void side_open(struct ibv_device *dev, struct side *s)
{
	struct ibv_qp_init_attr ia = { .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 2, .max_recv_sge = 2 },
				       .qp_type = IBV_QPT_RC };

	s->ctx = ibv_open_device(dev);
	assert_non_null(s->ctx);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	assert_non_null(s->cq);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &ia);
	assert_non_null(s->qp);
	s->buf = calloc(1, BUFSZ);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_non_null(s->mr);
}

static void side_close(struct side *s)
{
	assert_int_equal(ibv_destroy_qp(s->qp), 0);
	assert_int_equal(ibv_dereg_mr(s->mr), 0);
	assert_int_equal(ibv_destroy_cq(s->cq), 0);
	assert_int_equal(ibv_dealloc_pd(s->pd), 0);
	assert_int_equal(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

static int setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));

	p->list = ibv_get_device_list(NULL);
	side_open(p->list[0], &p->a);
	side_open(p->list[0], &p->b);
	tv_connect_qps(p->a.qp, p->b.qp);
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct pair *p = *state;

	side_close(&p->a);
	side_close(&p->b);
	ibv_free_device_list(p->list);
	free(p);
	return 0;
}

/* Poll everything the CQ has now (bounded wait for the first). */
static int drain(struct ibv_cq *cq, struct ibv_wc *wc, int max)
{
	long long end = t_now_ms() + WAIT_MS;
	int n = 0, r;

	while (n < max && t_now_ms() < end) {
		r = ibv_poll_cq(cq, max - n, wc + n);
		assert_true(r >= 0);
		n += r;
		if (r == 0) {
			if (n > 0)
				break;
			usleep(1000);
		}
	}
	return n;
}

/* ---- 3. a terminated QP is in Error; posts there are validated, then flushed ----------- */

static void test_error_post_flush(void **state)
{
	struct pair *p = *state;
	struct side *a = &p->a;
	struct ibv_wc wc[16];
	struct ibv_sge sge[3] = { { (uintptr_t)a->buf, 8, a->mr->lkey },
				  { (uintptr_t)a->buf, 8, a->mr->lkey },
				  { (uintptr_t)a->buf, 8, a->mr->lkey } };

	/* the peer terminates (IBV_QPS_SQE sends a Terminate): both end in Error */
	assert_int_equal(tv_modify_state(p->b.qp, IBV_QPS_SQE), 0);
	assert_true(tv_wait_state(a->qp, IBV_QPS_ERR, WAIT_MS));
	assert_true(tv_wait_state(p->b.qp, IBV_QPS_ERR, WAIT_MS));
	drain(a->cq, wc, 16); /* whatever the entry into Error flushed */

	/* valid WRs: accepted, completed as flushed, in post order */
	struct ibv_recv_wr r1 = { .wr_id = 71, .sg_list = sge, .num_sge = 1 };
	struct ibv_recv_wr r2 = { .wr_id = 72, .sg_list = sge, .num_sge = 2 };
	struct ibv_recv_wr *rbad = NULL;
	r1.next = &r2;
	assert_int_equal(ibv_post_recv(a->qp, &r1, &rbad), 0);
	struct ibv_send_wr s1 = { .wr_id = 81, .sg_list = sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *sbad = NULL;
	assert_int_equal(ibv_post_send(a->qp, &s1, &sbad), 0);
	assert_int_equal(drain(a->cq, wc, 16), 3);
	assert_int_equal(wc[0].wr_id, 71);
	assert_int_equal(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[1].wr_id, 72);
	assert_int_equal(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[2].wr_id, 81);
	assert_int_equal(wc[2].status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[2].opcode, IBV_WC_RDMA_WRITE);

	/* invalid WRs fail as in RTS: EINVAL, *bad names them, those before are flushed */
	struct ibv_recv_wr r3 = { .wr_id = 73, .sg_list = sge, .num_sge = 1 };
	struct ibv_recv_wr r4 = { .wr_id = 74, .sg_list = sge, .num_sge = 3 }; /* > 2 SGEs */
	r3.next = &r4;
	assert_int_equal(ibv_post_recv(a->qp, &r3, &rbad), EINVAL);
	assert_ptr_equal(rbad, &r4);
	struct ibv_send_wr s2 = { .wr_id = 82, .sg_list = sge, .num_sge = 3,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	assert_int_equal(ibv_post_send(a->qp, &s2, &sbad), EINVAL);
	assert_ptr_equal(sbad, &s2);
	struct ibv_send_wr s3 = { .wr_id = 83, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .sg_list = sge, .num_sge = 1 };
	assert_int_equal(ibv_post_send(a->qp, &s3, &sbad), EINVAL);
	assert_ptr_equal(sbad, &s3);
	assert_int_equal(drain(a->cq, wc, 16), 1);
	assert_int_equal(wc[0].wr_id, 73);
	assert_int_equal(wc[0].status, IBV_WC_WR_FLUSH_ERR);
}

/* ---- 3b. posts while the QP is in Terminate (SQE) are held, then flushed ------------ */

/* fio's rdma engine (verb=send) re-posts a Receive after its peer's Send found none: the QP
 * is then in Terminate, waiting for the LLP close. Such a post must not fail (EINVAL with no
 * completion left fio waiting forever): it is queued and completes as flushed, after the
 * WRs already posted, once the QP reaches Error. */
static void test_terminate_post_flush(void **state)
{
	struct pair *p = *state;
	struct side *b = &p->b;
	struct ibv_wc wc[16];
	struct ibv_sge sge = { (uintptr_t)b->buf, 8, b->mr->lkey };
	struct ibv_recv_wr r0 = { .wr_id = 90, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr r1 = { .wr_id = 91, .sg_list = &sge, .num_sge = 1 };
	struct ibv_send_wr s1 = { .wr_id = 92, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr *rbad = NULL;
	struct ibv_send_wr *sbad = NULL;

	assert_int_equal(ibv_post_recv(b->qp, &r0, &rbad), 0);
	assert_int_equal(tv_modify_state(b->qp, IBV_QPS_SQE), 0);
	/* Terminate (SQE) until the LLP close finishes, which under load can come first: then
	 * the posts below take the Error path (sv_post_err.c); test_qp_state's posting rules
	 * hold Terminate's table without a race */
	int st = tv_qp_state(b->qp);
	assert_true(st == IBV_QPS_SQE || st == IBV_QPS_ERR);
	assert_int_equal(ibv_post_recv(b->qp, &r1, &rbad), 0);
	assert_int_equal(ibv_post_send(b->qp, &s1, &sbad), 0);
	assert_true(tv_wait_state(b->qp, IBV_QPS_ERR, WAIT_MS));
	/* all three, however the flushes are spread in time; the Receives in post order */
	int n = 0, seen = 0, last_recv = -1;
	long long end = t_now_ms() + WAIT_MS;
	while (n < 3 && t_now_ms() < end) {
		int r = ibv_poll_cq(b->cq, 16 - n, wc + n);
		assert_true(r >= 0);
		n += r;
		if (r == 0)
			usleep(1000);
	}
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++) {
		assert_int_equal(wc[i].status, IBV_WC_WR_FLUSH_ERR);
		seen |= 1 << (wc[i].wr_id - 90);
		if (wc[i].wr_id != 92) {
			assert_true((int)wc[i].wr_id > last_recv);
			last_recv = (int)wc[i].wr_id;
		}
	}
	assert_int_equal(seen, 7);
	assert_int_equal(ibv_poll_cq(b->cq, 16, wc), 0);
}

/* ---- 4. inline sends up to the device maximum, whatever the QP asked ------------------ */

static void test_inline_device_max(void **state)
{
	struct pair *p = *state;
	struct side *a = &p->a, *b = &p->b;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_wc wc[4];

	/* the pair's QPs asked for max_inline_data 0: they report the device maximum */
	assert_int_equal(ibv_query_qp(a->qp, &qa, IBV_QP_CAP, &qia), 0);
	uint32_t max = qa.cap.max_inline_data;
	assert_true(max >= 64);
	assert_int_equal(qia.cap.max_inline_data, max);
	assert_true(max < BUFSZ);
	/* so does create, for a QP asking 0 or less than the maximum; above it: EINVAL */
	struct ibv_qp_init_attr ia = { .send_cq = a->cq, .recv_cq = a->cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1,
						.max_inline_data = 16 } };
	struct ibv_qp *q = ibv_create_qp(a->pd, &ia);
	assert_non_null(q);
	assert_int_equal(ia.cap.max_inline_data, max);
	assert_int_equal(ibv_destroy_qp(q), 0);
	ia.cap.max_inline_data = max + 1;
	errno = 0;
	assert_null(ibv_create_qp(a->pd, &ia));
	assert_int_equal(errno, EINVAL);

	/* rdma_xclient: an inline Send on a QP that asked none, up to the maximum */
	struct ibv_sge rs = { (uintptr_t)b->buf, BUFSZ, b->mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 }, *rbad;
	assert_int_equal(ibv_post_recv(b->qp, &rw, &rbad), 0);
	char *msg = malloc(max + 1); /* not registered: inline data needs no lkey */
	memset(msg, 0x5a, max + 1);
	struct ibv_sge ss = { (uintptr_t)msg, max, 0 };
	struct ibv_send_wr sw = { .wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED }, *sbad;
	assert_int_equal(ibv_post_send(a->qp, &sw, &sbad), 0);
	memset(msg, 0, max + 1); /* copied at post */
	assert_int_equal(drain(a->cq, wc, 1), 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(drain(b->cq, wc, 1), 1);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].byte_len, max);
	for (uint32_t i = 0; i < max; i++)
		assert_int_equal((unsigned char)b->buf[i], 0x5a);
	/* one octet more: EINVAL, as siw's provider refuses it */
	ss.length = max + 1;
	assert_int_equal(ibv_post_send(a->qp, &sw, &sbad), EINVAL);
	assert_ptr_equal(sbad, &sw);
	free(msg);
}

/* ---- 6a. a fresh QP: ibv_qp.state RESET, queried INIT (iWARP Idle) ------------------- */

static void test_fresh_qp_state(void **state)
{
	struct tv *t = *state;
	struct ibv_qp *qp = tv_qp(t, NULL, 4);
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_device_attr da;

	assert_non_null(qp);
	assert_int_equal(ibv_query_device(t->ctx, &da), 0);
	assert_int_equal(t->ctx->device->node_type, IBV_NODE_RNIC);
	assert_int_equal(qp->state, IBV_QPS_RESET);          /* libibverbs' create */
	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_CAP, &ia), 0);
	assert_int_equal(a.qp_state, IBV_QPS_INIT);          /* tests/test_qp.py, RNIC */
	assert_int_equal(qp->state, IBV_QPS_INIT);           /* libibverbs' query updates it */
	/* INIT with RESET as the current state (IB style) is Idle to Idle */
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .cur_qp_state = IBV_QPS_RESET };
	assert_int_equal(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	/* a RESET asked for is what it then reads as */
	assert_int_equal(tv_modify_state(qp, IBV_QPS_RESET), 0);
	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	assert_int_equal(a.qp_state, IBV_QPS_RESET);
	assert_int_equal(ibv_destroy_qp(qp), 0);
}

/* ---- 6b. the GID: siw's form (the MAC, then zeros), one entry, type IB ---------------- */

static void test_gid_as_siw(void **state)
{
	struct tv *t = *state;
	struct ibv_port_attr pa;
	union ibv_gid g;
	struct ibv_gid_entry e, tab[4];
	static const uint8_t zero[10];

	assert_int_equal(ibv_query_port(t->ctx, 1, &pa), 0);
	assert_int_equal(pa.gid_tbl_len, 1);                  /* siw_query_port */
	assert_int_equal(ibv_query_gid(t->ctx, 1, 0, &g), 0);
	assert_memory_equal(g.raw + 6, zero, sizeof(zero));   /* siw_query_gid: MAC, zeros */
	assert_memory_not_equal(g.raw, zero, 6);
	/* rdma-core's tests/base.py skips a GID whose last 8 octets are zero, so on siw (and
	 * here) its traffic tests need --gid 0; nothing to change for that, by design */
	assert_int_equal(ibv_query_gid(t->ctx, 1, 1, &g), -1);
	assert_int_equal(ibv_query_gid_ex(t->ctx, 1, 0, &e, 0), 0);
	assert_memory_equal(e.gid.raw, g.raw, 6);
	assert_int_equal(e.gid_type, IBV_GID_TYPE_IB);       /* the kernel's iWARP GID entry */
	assert_int_equal(e.port_num, 1);
	assert_int_equal(e.gid_index, 0);
	assert_int_equal(ibv_query_gid_table(t->ctx, tab, 4, 0), 1);
	assert_memory_equal(tab[0].gid.raw, g.raw, 16);
}

/* ---- 7. what iWARP lacks fails at once, with rdma-core + siw's errno -------------------- */

static void test_iwarp_lacks(void **state)
{
	struct tv *t = *state;
	struct ibv_qp_init_attr ia = { .send_cq = t->cq, .recv_cq = t->cq,
				       .cap = { .max_send_wr = 2, .max_recv_wr = 2,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_device_attr da;

	/* UD / UC QPs: siw_create_qp "only RC QP's supported", -EOPNOTSUPP */
	ia.qp_type = IBV_QPT_UD;
	errno = 0;
	assert_null(ibv_create_qp(t->pd, &ia));
	assert_int_equal(errno, EOPNOTSUPP);
	ia.qp_type = IBV_QPT_UC;
	errno = 0;
	assert_null(ibv_create_qp(t->pd, &ia));
	assert_int_equal(errno, EOPNOTSUPP);

	/* XRC: no open_xrcd / create_srq_ex in siw's provider (libibverbs' dummy ops:
	 * EOPNOTSUPP); an XRC QP through the legacy create reaches siw_create_qp: EOPNOTSUPP */
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						      IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	errno = 0;
	assert_null(ibv_open_xrcd(t->ctx, &xa));
	assert_int_equal(errno, EOPNOTSUPP);
	struct ibv_qp_init_attr_ex xq = { .send_cq = t->cq, .recv_cq = t->cq,
					  .cap = ia.cap, .qp_type = IBV_QPT_XRC_SEND,
					  .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = t->pd };
	errno = 0;
	assert_null(ibv_create_qp_ex(t->ctx, &xq));
	assert_int_equal(errno, EOPNOTSUPP);
	struct ibv_srq_init_attr_ex xs = { .attr = { .max_wr = 2, .max_sge = 1 },
					   .comp_mask = IBV_SRQ_INIT_ATTR_TYPE |
							IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ,
					   .srq_type = IBV_SRQT_XRC, .pd = t->pd, .cq = t->cq };
	errno = 0;
	assert_null(ibv_create_srq_ex(t->ctx, &xs));
	assert_int_equal(errno, EOPNOTSUPP);

	/* address handles (UD) and multicast: libibverbs' dummy ops, EOPNOTSUPP */
	struct ibv_ah_attr aa = { .port_num = 1 };
	errno = 0;
	assert_null(ibv_create_ah(t->pd, &aa));
	assert_int_equal(errno, EOPNOTSUPP);
	ia.qp_type = IBV_QPT_RC;
	struct ibv_qp *qp = ibv_create_qp(t->pd, &ia);
	assert_non_null(qp);
	union ibv_gid mg = { .raw = { 0xff, 0x0e } };
	assert_int_equal(ibv_attach_mcast(qp, &mg, 0), EOPNOTSUPP);
	assert_int_equal(ibv_detach_mcast(qp, &mg, 0), EOPNOTSUPP);

	/* atomics: atomic_cap NONE (siw_query_device); an atomic WR is refused at post:
	 * siw's provider maps no opcode for it (EINVAL; siw returns it negated) */
	assert_int_equal(ibv_query_device(t->ctx, &da), 0);
	assert_int_equal(da.atomic_cap, IBV_ATOMIC_NONE);
	uint64_t v = 0;
	struct ibv_mr *mr = ibv_reg_mr(t->pd, &v, sizeof(v), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)&v, sizeof(v), mr->lkey };
	struct ibv_send_wr aw = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_CMP_AND_SWP }, *bad = NULL;
	assert_int_equal(ibv_post_send(qp, &aw, &bad), EINVAL);
	assert_ptr_equal(bad, &aw);
	aw.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	assert_int_equal(ibv_post_send(qp, &aw, &bad), EINVAL);

	/* RTR is Idle (accepted); RTS needs the connection rdma_cm hands over: siw's
	 * nextstate_from_idle "no socket", EINVAL */
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	assert_int_equal(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS), 0);
	m.qp_state = IBV_QPS_RTR;
	assert_int_equal(ibv_modify_qp(qp, &m, IBV_QP_STATE), 0);
	m.qp_state = IBV_QPS_RTS;
	assert_int_equal(ibv_modify_qp(qp, &m, IBV_QP_STATE), EINVAL);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_dereg_mr(mr), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_error_post_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_terminate_post_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_device_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fresh_qp_state, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_gid_as_siw, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_iwarp_lacks, tv_setup, tv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
