/* verbs: RFC 7306 immediate data (IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM), tolerant
 * QPs (SOFTRNIC_QP_TOLERANT) and softrnic_query_qp_term, between two contexts connected over
 * 127.0.0.1 as in test_verbs_loop.c. */
#include "tv_loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "rnic.h"
#include "rn_transport.h"
#include "softrnic/verbs_ext.h"
#include "verbs_int.h"

#define WAIT_MS 5000
#define BUFSZ 65536

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_srq *srq;
	char *buf;
};

struct pair {
	struct ibv_device **list;
	struct side a, b;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How the next side_open builds its QP. */
static bool g_srq;            /* receive through an SRQ */
static unsigned g_ext;        /* softrnic_create_qp flags */

static void side_open(struct ibv_device *dev, struct side *s)
{
	struct ibv_qp_init_attr ia = { .cap = { .max_send_wr = 32, .max_recv_wr = 32,
						.max_send_sge = 2, .max_recv_sge = 2,
						.max_inline_data = 64 },
				       .qp_type = IBV_QPT_RC };

	s->ctx = ibv_open_device(dev);
	assert_non_null(s->ctx);
	s->pd = ibv_alloc_pd(s->ctx);
	s->ch = ibv_create_comp_channel(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 128, s, s->ch, 0);
	assert_non_null(s->cq);
	ia.send_cq = ia.recv_cq = s->cq;
	if (g_srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 2 } };
		s->srq = ibv_create_srq(s->pd, &sa);
		assert_non_null(s->srq);
		ia.srq = s->srq;
	}
	s->qp = softrnic_create_qp(s->pd, &ia, g_ext);
	assert_non_null(s->qp);
	s->buf = aligned_alloc(4096, BUFSZ);
	memset(s->buf, 0, BUFSZ);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	assert_non_null(s->mr);
}

static void side_close(struct side *s)
{
	assert_int_equal(ibv_destroy_qp(s->qp), 0);
	if (s->srq)
		assert_int_equal(ibv_destroy_srq(s->srq), 0);
	assert_int_equal(ibv_dereg_mr(s->mr), 0);
	assert_int_equal(ibv_destroy_cq(s->cq), 0);
	assert_int_equal(ibv_destroy_comp_channel(s->ch), 0);
	assert_int_equal(ibv_dealloc_pd(s->pd), 0);
	assert_int_equal(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

static void connect_pair(struct pair *p)
{
	tv_connect_qps(p->a.qp, p->b.qp);
}

static int setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));

	p->list = ibv_get_device_list(NULL);
	side_open(p->list[0], &p->a);
	side_open(p->list[0], &p->b);
	connect_pair(p);
	*state = p;
	return 0;
}

/* b receives through an SRQ. */
static int setup_srq(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));

	p->list = ibv_get_device_list(NULL);
	side_open(p->list[0], &p->a);
	g_srq = true;
	side_open(p->list[0], &p->b);
	g_srq = false;
	connect_pair(p);
	*state = p;
	return 0;
}

/* b is a tolerant QP (VIA Unreliable service). */
static int setup_tol(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));

	p->list = ibv_get_device_list(NULL);
	side_open(p->list[0], &p->a);
	g_ext = SOFTRNIC_QP_TOLERANT;
	side_open(p->list[0], &p->b);
	g_ext = 0;
	connect_pair(p);
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

/* Poll until one WC arrives (bounded). */
static struct ibv_wc wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	long long end = now_ms() + WAIT_MS;
	int n;

	memset(&wc, 0, sizeof(wc));
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && now_ms() < end)
		usleep(100);
	assert_int_equal(n, 1);
	return wc;
}

static void post_recv(struct side *s, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (s->srq)
		assert_int_equal(ibv_post_srq_recv(s->srq, &w, &bad), 0);
	else
		assert_int_equal(ibv_post_recv(s->qp, &w, &bad), 0);
}

static void post_send(struct side *s, struct ibv_send_wr *w, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr *bad;

	w->sg_list = &sge;
	w->num_sge = len ? 1 : 0;
	assert_int_equal(ibv_post_send(s->qp, w, &bad), 0);
}


static struct ibv_send_wr imm_wr(uint64_t id, enum ibv_wr_opcode op, unsigned flags, uint32_t imm)
{
	struct ibv_send_wr w;

	memset(&w, 0, sizeof(w));
	w.wr_id = id;
	w.opcode = op;
	w.send_flags = flags;
	w.imm_data = htonl(imm);
	return w;
}

static void send_imm_common(struct pair *p)
{
	struct ibv_send_wr w = imm_wr(1, IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED, 0x11223344);
	struct ibv_wc wc;

	post_recv(&p->b, 10, 0, 4096);
	memcpy(p->a.buf, "immediate!", 11);
	post_send(&p->a, &w, 0, 11);
	wc = wait_wc(p->a.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	wc = wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.wr_id, 10);
	assert_int_equal(wc.byte_len, 11);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 0x11223344);
	assert_string_equal(p->b.buf, "immediate!");
}

static void test_send_imm(void **state)
{
	send_imm_common(*state);
}

static void test_send_imm_srq(void **state)
{
	send_imm_common(*state);
}

/* Zero-length Send with immediate. */
static void test_send_imm_zero(void **state)
{
	struct pair *p = *state;
	struct ibv_send_wr w = imm_wr(2, IBV_WR_SEND_WITH_IMM, 0, 77);
	struct ibv_wc wc;

	post_recv(&p->b, 11, 0, 64);
	post_send(&p->a, &w, 0, 0);
	wc = wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.byte_len, 0);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 77);
}

/* Write with immediate: the data is there when the Receive's WC is seen; byte_len 0. */
static void test_write_imm(void **state)
{
	struct pair *p = *state;
	struct ibv_send_wr w = imm_wr(3, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SIGNALED, 0xabcdef);
	struct ibv_wc wc;

	for (int i = 0; i < 30000; i++)
		p->a.buf[8192 + i] = (char)(i * 11);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf + 20000;
	w.wr.rdma.rkey = p->b.mr->rkey;
	post_recv(&p->b, 12, 0, 64);
	post_send(&p->a, &w, 8192, 30000);
	wc = wait_wc(p->b.cq);
	assert_memory_equal(p->b.buf + 20000, p->a.buf + 8192, 30000);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc.wr_id, 12);
	assert_int_equal(wc.byte_len, 0);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 0xabcdef);
	wc = wait_wc(p->a.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
}

/* A CQ armed for solicited completions: an ordinary Write with immediate does not wake it,
 * the SOLICITED one does (RDMAP 0xD). */
static void test_write_imm_se(void **state)
{
	struct pair *p = *state;
	struct ibv_send_wr w = imm_wr(4, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 1);
	struct ibv_cq *cq = NULL;
	void *ctx = NULL;
	struct ibv_wc wc;

	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	w.wr.rdma.rkey = p->b.mr->rkey;
	post_recv(&p->b, 13, 4096, 64);
	post_recv(&p->b, 14, 4096, 64);
	assert_int_equal(ibv_req_notify_cq(p->b.cq, 1), 0);
	post_send(&p->a, &w, 0, 16);
	wc = wait_wc(p->b.cq);
	assert_int_equal(wc.wr_id, 13);
	assert_false(tv_readable(p->b.ch->fd, 200));
	w.send_flags = IBV_SEND_SOLICITED;
	w.imm_data = htonl(2);
	post_send(&p->a, &w, 0, 16);
	assert_true(tv_readable(p->b.ch->fd, WAIT_MS));
	assert_int_equal(ibv_get_cq_event(p->b.ch, &cq, &ctx), 0);
	ibv_ack_cq_events(cq, 1);
	wc = wait_wc(p->b.cq);
	assert_int_equal(wc.wr_id, 14);
	assert_int_equal(ntohl(wc.imm_data), 2);
}

/* Immediate data without a Receive: b terminates (DDP 0x1202, "no buffer"), a receives it;
 * softrnic_query_qp_term reports both ends. */
static void test_imm_no_recv_term(void **state)
{
	struct pair *p = *state;
	struct ibv_send_wr w = imm_wr(5, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 1);
	struct softrnic_qp_term t;
	struct ibv_async_event ev;
	long long end = now_ms() + WAIT_MS;

	assert_int_equal(softrnic_query_qp_term(p->b.qp, &t), ENOENT);   /* RTS: none */
	assert_int_equal(softrnic_query_qp_term(p->b.qp, NULL), EINVAL);
	assert_int_equal(softrnic_query_qp_term(NULL, &t), EINVAL);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	w.wr.rdma.rkey = p->b.mr->rkey;
	post_send(&p->a, &w, 0, 16);
	assert_true(tv_readable(p->b.ctx->async_fd, WAIT_MS));
	assert_int_equal(ibv_get_async_event(p->b.ctx, &ev), 0);
	ibv_ack_async_event(&ev);
	assert_int_equal(ev.event_type, IBV_EVENT_QP_REQ_ERR);
	while (softrnic_query_qp_term(p->a.qp, &t) != 0 && now_ms() < end)
		usleep(1000);
	assert_int_equal(softrnic_query_qp_term(p->a.qp, &t), 0);
	assert_int_equal(t.local, 0);
	assert_int_equal(t.layer, 1);
	assert_int_equal(t.etype, 2);
	assert_int_equal(t.ecode, 2);
	assert_int_equal(softrnic_query_qp_term(p->b.qp, &t), 0);
	assert_int_equal(t.local, 1);
	assert_int_equal(t.layer, 1);
	assert_int_equal(t.etype, 2);
	assert_int_equal(t.ecode, 2);
}

/* Acked before it is checked: a QP with an unacked event cannot be destroyed (libibverbs'
 * rule), so a wrong event would otherwise hang the teardown instead of failing here. */
static void expect_async(struct side *s, enum ibv_event_type type)
{
	struct ibv_async_event ev;

	assert_true(tv_readable(s->ctx->async_fd, WAIT_MS));
	assert_int_equal(ibv_get_async_event(s->ctx, &ev), 0);
	ibv_ack_async_event(&ev);
	if (ev.event_type != type || ev.element.qp != s->qp)
		fail_msg("async event %s (%d) for qp %p; expected %s (%d) for qp %p",
			 ibv_event_type_str(ev.event_type), ev.event_type, (void *)ev.element.qp,
			 ibv_event_type_str(type), type, (void *)s->qp);
}

static void expect_rts(struct side *s)
{
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr a;

	assert_int_equal(ibv_query_qp(s->qp, &a, IBV_QP_STATE, &qi), 0);
	assert_int_equal(a.qp_state, IBV_QPS_RTS);
}

/* Tolerant: a Send with no Receive is dropped (QP_REQ_ERR, still RTS), the next one lands. */
static void test_tol_no_recv(void **state)
{
	struct pair *p = *state;
	struct ibv_send_wr w = imm_wr(6, IBV_WR_SEND, 0, 0);
	struct ibv_wc wc;

	memcpy(p->a.buf, "first", 6);
	post_send(&p->a, &w, 0, 6);
	expect_async(&p->b, IBV_EVENT_QP_REQ_ERR);
	expect_rts(&p->b);
	expect_rts(&p->a);
	post_recv(&p->b, 15, 0, 64);
	memcpy(p->a.buf + 100, "second", 7);
	post_send(&p->a, &w, 100, 7);
	wc = wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 15);
	assert_int_equal(wc.byte_len, 7);
	assert_string_equal(p->b.buf, "second");
}

/* Tolerant: too long for its Receive -> IBV_WC_LOC_LEN_ERR, nothing placed; next one lands. */
static void test_tol_too_long(void **state)
{
	struct pair *p = *state;
	struct ibv_send_wr w = imm_wr(7, IBV_WR_SEND_WITH_IMM, 0, 5);
	struct ibv_wc wc;

	memset(p->a.buf, 0x5a, 1000);
	post_recv(&p->b, 16, 0, 100);
	post_send(&p->a, &w, 0, 1000);
	wc = wait_wc(p->b.cq);
	assert_int_equal(wc.wr_id, 16);
	assert_int_equal(wc.status, IBV_WC_LOC_LEN_ERR);
	assert_int_equal(p->b.buf[0], 0);
	expect_rts(&p->b);
	post_recv(&p->b, 17, 0, 4096);
	post_send(&p->a, &w, 0, 1000);
	wc = wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 17);
	assert_int_equal(wc.byte_len, 1000);
	assert_int_equal(ntohl(wc.imm_data), 5);
	assert_int_equal((unsigned char)p->b.buf[999], 0x5a);
}

/* Tolerant: a Write with a wrong rkey is dropped (QP_ACCESS_ERR), the bytes around the
 * region are untouched; a Write with immediate follows and lands. */
static void test_tol_bad_rkey(void **state)
{
	struct pair *p = *state;
	struct ibv_send_wr w = imm_wr(8, IBV_WR_RDMA_WRITE, 0, 0);
	struct ibv_wc wc;

	memset(p->a.buf, 0x77, 256);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf + BUFSZ - 128;
	w.wr.rdma.rkey = p->b.mr->rkey;
	post_send(&p->a, &w, 0, 256);   /* past the end of b's region */
	expect_async(&p->b, IBV_EVENT_QP_ACCESS_ERR);
	for (int i = 0; i < 128; i++)
		assert_int_equal(p->b.buf[BUFSZ - 128 + i], 0);
	w.wr.rdma.rkey = p->b.mr->rkey ^ 0x10;
	post_send(&p->a, &w, 0, 256);
	expect_async(&p->b, IBV_EVENT_QP_ACCESS_ERR);
	expect_rts(&p->b);
	w = imm_wr(9, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 9);
	w.wr.rdma.remote_addr = (uintptr_t)p->b.buf + 512;
	w.wr.rdma.rkey = p->b.mr->rkey;
	post_recv(&p->b, 18, 0, 64);
	post_send(&p->a, &w, 0, 256);
	wc = wait_wc(p->b.cq);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_memory_equal(p->b.buf + 512, p->a.buf, 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_imm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_imm_srq, setup_srq, teardown),
		cmocka_unit_test_setup_teardown(test_send_imm_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_imm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_imm_se, setup, teardown),
		cmocka_unit_test_setup_teardown(test_imm_no_recv_term, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tol_no_recv, setup_tol, teardown),
		cmocka_unit_test_setup_teardown(test_tol_too_long, setup_tol, teardown),
		cmocka_unit_test_setup_teardown(test_tol_bad_rkey, setup_tol, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
