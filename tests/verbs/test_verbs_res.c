/* verbs: PD, MR, MW, completion channel, CQ and SRQ lifecycles; error returns for NULL,
 * foreign or wrong handles and sizes over the limits; in-use errors. */
#include "tv_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

static char buf[3 * 4096] __attribute__((aligned(4096)));

static void test_pd(void **state)
{
	struct tv *t = *state;
	struct ibv_pd *a = ibv_alloc_pd(t->ctx), *b = ibv_alloc_pd(t->ctx);
	struct ibv_pd fake = { .context = t->ctx };

	assert_non_null(a);
	assert_non_null(b);
	assert_int_not_equal(a->handle, b->handle);
	assert_ptr_equal(a->context, t->ctx);
	errno = 0;
	assert_null(ibv_alloc_pd(NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_dealloc_pd(NULL), EINVAL);
	assert_int_equal(ibv_dealloc_pd(&fake), EINVAL);
	assert_int_equal(ibv_dealloc_pd(a), 0);
	assert_int_equal(ibv_dealloc_pd(b), 0);
}

static void test_mr(void **state)
{
	struct tv *t = *state;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr = ibv_reg_mr(t->pd, buf, sizeof(buf), acc);

	assert_non_null(mr);
	assert_ptr_equal(mr->addr, buf);
	assert_int_equal(mr->length, sizeof(buf));
	assert_int_equal(mr->lkey, mr->rkey);      /* iWARP: one STag */
	assert_ptr_equal(mr->pd, t->pd);
	assert_int_equal(ibv_dealloc_pd(t->pd), EBUSY);   /* PD in use */
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dereg_mr(NULL), EINVAL);
}

static void test_mr_errors(void **state)
{
	struct tv *t = *state;
	int vacc = IBV_ACCESS_LOCAL_WRITE;

	errno = 0;
	assert_null(ibv_reg_mr(NULL, buf, 64, vacc));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_reg_mr(t->pd, NULL, 64, vacc));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_reg_mr(t->pd, buf, 0, vacc));
	assert_int_equal(errno, EINVAL);
	errno = 0;      /* remote write needs local write */
	assert_null(ibv_reg_mr(t->pd, buf, 64, IBV_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);
	errno = 0;      /* no on-demand paging */
	assert_null(ibv_reg_mr(t->pd, buf, 64, IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EINVAL);
	errno = 0;      /* unknown bit */
	vacc = 1 << 15;
	assert_null(ibv_reg_mr(t->pd, buf, 64, vacc));
	assert_int_equal(errno, EINVAL);
}

/* ibv_reg_mr with a non-constant access and the optional range goes to ibv_reg_mr_iova2. */
/* Issue 27 item 2: registration of a range that is not wholly mapped fails with EFAULT (as
 * a kernel RNIC's pinning does): 1 GiB over a 1 MiB mapping, a hole in the middle. */
static void test_mr_unmapped(void **state)
{
	struct tv *t = *state;
	size_t mib = 1u << 20;
	uint8_t *p = mmap(NULL, 2 * mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	assert_true(p != MAP_FAILED);
	assert_int_equal(munmap(p + mib, mib), 0);   /* nothing mapped right after p + mib */
	errno = 0;
	assert_null(ibv_reg_mr(t->pd, p, (size_t)1 << 30, IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EFAULT);
	errno = 0;
	assert_null(ibv_reg_mr(t->pd, p + 1, mib, IBV_ACCESS_LOCAL_WRITE));   /* one octet over */
	assert_int_equal(errno, EFAULT);
	mr = ibv_reg_mr(t->pd, p + 1, mib - 1, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(munmap(p + 4096 * 8, 4096), 0);
	errno = 0;
	assert_null(ibv_reg_mr(t->pd, p, mib, IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EFAULT);
	assert_int_equal(munmap(p, mib), 0);
}

static void test_mr_iova(void **state)
{
	struct tv *t = *state;
	volatile unsigned acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING;
	struct ibv_mr *a = ibv_reg_mr(t->pd, buf, 4096, acc);
	struct ibv_mr *b = ibv_reg_mr_iova(t->pd, buf, 4096, 0x10000, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *c = ibv_reg_mr_iova2(t->pd, buf, 4096, 0, IBV_ACCESS_ZERO_BASED |
					    IBV_ACCESS_LOCAL_WRITE);

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_not_equal(a->lkey, b->lkey);
	assert_int_equal(ibv_dereg_mr(a), 0);
	assert_int_equal(ibv_dereg_mr(b), 0);
	assert_int_equal(ibv_dereg_mr(c), 0);
}

static void test_rereg(void **state)
{
	struct tv *t = *state;
	struct ibv_pd *pd2 = ibv_alloc_pd(t->ctx);
	struct ibv_mr *mr = ibv_reg_mr(t->pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	uint32_t key = mr->lkey;

	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf + 4096,
				      8192, 0), 0);
	assert_ptr_equal(mr->addr, buf + 4096);
	assert_int_equal(mr->length, 8192);
	assert_int_not_equal(mr->lkey, key);        /* new key every time */
	assert_int_equal(mr->lkey >> 8, key >> 8);  /* same index */
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	assert_ptr_equal(mr->pd, pd2);
	assert_int_equal(ibv_dealloc_pd(pd2), EBUSY);
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ), 0);
	/* input errors leave the MR as it was */
	key = mr->lkey;
	errno = 0;
	assert_int_equal(ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_rereg_mr(mr, 1 << 5, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 0, 0),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				      IBV_ACCESS_REMOTE_WRITE), IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(ibv_rereg_mr(NULL, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0),
			 IBV_REREG_MR_ERR_INPUT);
	assert_int_equal(mr->lkey, key);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dealloc_pd(pd2), 0);
}

static void test_mw(void **state)
{
	struct tv *t = *state;
	struct ibv_mw *w1 = ibv_alloc_mw(t->pd, IBV_MW_TYPE_1);
	struct ibv_mw *w2 = ibv_alloc_mw(t->pd, IBV_MW_TYPE_2);

	assert_non_null(w1);
	assert_non_null(w2);
	assert_int_equal(w1->type, IBV_MW_TYPE_1);
	assert_int_equal(w2->type, IBV_MW_TYPE_2);
	assert_ptr_equal(w1->pd, t->pd);
	assert_int_not_equal(w1->rkey, w2->rkey);
	errno = 0;
	assert_null(ibv_alloc_mw(t->pd, (enum ibv_mw_type)3));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_dealloc_pd(t->pd), EBUSY);
	assert_int_equal(ibv_dealloc_mw(w1), 0);
	assert_int_equal(ibv_dealloc_mw(w2), 0);
}

/* Issue 27 item 5: a second destroy of any object is EINVAL, and reads no freed memory (run
 * under the ASan build: a use after free there aborts). A handle destroyed earlier stays
 * dead while new objects of its kind come and go. */
static void test_double_destroy(void **state)
{
	struct tv *t = *state;
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_pd *pd = ibv_alloc_pd(t->ctx);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(t->ctx);
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	assert_non_null(pd);
	assert_non_null(ch);
	assert_non_null(cq);
	mr = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	srq = ibv_create_srq(pd, &sia);
	assert_non_null(mr);
	assert_non_null(mw);
	assert_non_null(srq);
	qp = tv_qp(t, NULL, 4);
	assert_int_equal(ibv_destroy_qp(qp), 0);
	assert_int_equal(ibv_destroy_qp(qp), EINVAL);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	assert_int_equal(ibv_dealloc_mw(mw), EINVAL);
	assert_int_equal(ibv_dereg_mr(mr), 0);
	assert_int_equal(ibv_dereg_mr(mr), EINVAL);
	assert_int_equal(ibv_destroy_srq(srq), 0);
	assert_int_equal(ibv_destroy_srq(srq), EINVAL);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_dealloc_pd(pd), EINVAL);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ibv_destroy_cq(cq), EINVAL);
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
	assert_int_equal(ibv_destroy_comp_channel(ch), EINVAL);
	/* other verbs on a destroyed handle fail the same way */
	assert_int_equal(ibv_req_notify_cq(cq, 0), EINVAL);
	errno = 0;
	assert_null(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EINVAL);
	/* objects created after the destroy are new ones: the dead handles stay dead */
	for (int i = 0; i < 16; i++) {
		struct ibv_pd *p2 = ibv_alloc_pd(t->ctx);
		struct ibv_cq *c2 = ibv_create_cq(t->ctx, 8, NULL, NULL, 0);
		struct ibv_qp *q2 = tv_qp(t, NULL, 4);

		assert_non_null(p2);
		assert_non_null(c2);
		assert_ptr_not_equal(p2, pd);
		assert_ptr_not_equal(c2, cq);
		assert_ptr_not_equal(q2, qp);
		assert_int_equal(ibv_dealloc_pd(pd), EINVAL);
		assert_int_equal(ibv_destroy_cq(cq), EINVAL);
		assert_int_equal(ibv_destroy_qp(qp), EINVAL);
		assert_int_equal(ibv_destroy_qp(q2), 0);
		assert_int_equal(ibv_destroy_cq(c2), 0);
		assert_int_equal(ibv_dealloc_pd(p2), 0);
	}
}

static void test_channel(void **state)
{
	struct tv *t = *state;
	struct ibv_comp_channel *ch = ibv_create_comp_channel(t->ctx);
	struct ibv_cq *cq, *got;
	int marker;
	void *ctx;

	assert_non_null(ch);
	assert_true(ch->fd >= 0);
	assert_ptr_equal(ch->context, t->ctx);
	cq = ibv_create_cq(t->ctx, 8, &marker, ch, 0);
	assert_non_null(cq);
	assert_ptr_equal(cq->channel, ch);
	assert_ptr_equal(cq->cq_context, &marker);
	assert_int_equal(ch->refcnt, 1);
	assert_int_equal(ibv_destroy_comp_channel(ch), EBUSY);   /* a CQ uses it */
	assert_false(tv_readable(ch->fd, 0));
	/* non-blocking channel fd: EAGAIN as libibverbs' read() */
	assert_int_equal(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	errno = 0;
	assert_int_equal(ibv_get_cq_event(ch, &got, &ctx), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(ibv_req_notify_cq(cq, 0), 0);
	assert_int_equal(ibv_req_notify_cq(cq, 1), 0);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	assert_int_equal(ch->refcnt, 0);
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
	errno = 0;
	assert_null(ibv_create_comp_channel(NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_destroy_comp_channel(NULL), EINVAL);
	assert_int_equal(ibv_get_cq_event(NULL, &got, &ctx), -1);
}

static void test_cq(void **state)
{
	struct tv *t = *state;
	struct ibv_device_attr a;
	struct ibv_comp_channel fakech = { .context = t->ctx };
	struct ibv_cq fakecq = { .context = t->ctx };
	struct ibv_wc wc[4];
	struct ibv_cq *cq;

	assert_int_equal(ibv_query_device(t->ctx, &a), 0);
	cq = ibv_create_cq(t->ctx, 5, NULL, NULL, 0);
	assert_non_null(cq);
	assert_true(cq->cqe >= 5);
	assert_int_equal(ibv_poll_cq(cq, 4, wc), 0);       /* empty */
	assert_int_equal(ibv_poll_cq(cq, 0, wc), 0);
	assert_true(ibv_poll_cq(cq, -1, wc) < 0);
	assert_true(ibv_poll_cq(&fakecq, 1, wc) < 0);
	assert_int_equal(ibv_resize_cq(cq, 100), 0);
	assert_true(cq->cqe >= 100);
	assert_int_equal(ibv_resize_cq(cq, 0), EINVAL);
	assert_int_equal(ibv_resize_cq(cq, a.max_cqe + 1), EINVAL);
	assert_int_equal(ibv_resize_cq(NULL, 4), EINVAL);
	assert_int_equal(ibv_req_notify_cq(&fakecq, 0), EINVAL);
	assert_int_equal(ibv_destroy_cq(cq), 0);
	errno = 0;
	assert_null(ibv_create_cq(t->ctx, 0, NULL, NULL, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_create_cq(t->ctx, a.max_cqe + 1, NULL, NULL, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(ibv_create_cq(t->ctx, 4, NULL, NULL, 1));    /* comp_vector */
	assert_null(ibv_create_cq(t->ctx, 4, NULL, NULL, -1));
	assert_null(ibv_create_cq(t->ctx, 4, NULL, &fakech, 0)); /* not a channel of ours */
	assert_null(ibv_create_cq(NULL, 4, NULL, NULL, 0));
	assert_int_equal(ibv_destroy_cq(NULL), EINVAL);
	assert_int_equal(ibv_destroy_cq(&fakecq), EINVAL);
	ibv_ack_cq_events(NULL, 1);   /* no crash */
}

/* libfabric's rxm opens one CQ of (rx depth + tx depth) x its universe size entries (384 +
 * 384 by default, times 256): a device limit of 65536 made every rdm endpoint fail. */
static void test_cq_rxm_size(void **state)
{
	struct tv *t = *state;
	struct ibv_device_attr a;
	struct ibv_cq *cq;

	assert_int_equal(ibv_query_device(t->ctx, &a), 0);
	assert_true(a.max_cqe >= (384 + 384) * 256);
	cq = ibv_create_cq(t->ctx, (384 + 384) * 256, NULL, NULL, 0);
	assert_non_null(cq);
	assert_true(cq->cqe >= (384 + 384) * 256);
	assert_int_equal(ibv_destroy_cq(cq), 0);
}

/* A channel of one context cannot serve a CQ of another. */
static void test_cross_context(void **state)
{
	struct tv *t = *state;
	struct ibv_context *o = ibv_open_device(t->ctx->device);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(o);
	struct ibv_pd *opd = ibv_alloc_pd(o);
	struct ibv_qp_init_attr qa = { .send_cq = t->cq, .recv_cq = t->cq,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1 },
				       .qp_type = IBV_QPT_RC };

	assert_non_null(ch);
	errno = 0;
	assert_null(ibv_create_cq(t->ctx, 4, NULL, ch, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(ibv_create_qp(opd, &qa));      /* CQs of another context */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
	assert_int_equal(ibv_dealloc_pd(opd), 0);
	assert_int_equal(ibv_close_device(o), 0);
}

static void test_srq(void **state)
{
	struct tv *t = *state;
	struct ibv_device_attr da;
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 10, .max_sge = 2 } };
	struct ibv_srq_attr sa;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = 0 };
	struct ibv_recv_wr w[3], *bad = NULL;
	struct ibv_srq *srq;

	assert_int_equal(ibv_query_device(t->ctx, &da), 0);
	srq = ibv_create_srq(t->pd, &ia);
	assert_non_null(srq);
	assert_true(ia.attr.max_wr >= 10 && ia.attr.max_sge >= 2);
	assert_ptr_equal(srq->pd, t->pd);
	assert_int_equal(ibv_query_srq(srq, &sa), 0);
	assert_int_equal(sa.max_wr, ia.attr.max_wr);
	assert_int_equal(sa.srq_limit, 0);
	sa.srq_limit = 4;
	assert_int_equal(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	assert_int_equal(ibv_query_srq(srq, &sa), 0);
	assert_int_equal(sa.srq_limit, 4);
	sa.srq_limit = ia.attr.max_wr + 100;
	assert_int_equal(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL);
	sa.max_wr = 32;
	assert_int_equal(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), 0);
	assert_int_equal(ibv_query_srq(srq, &sa), 0);
	assert_true(sa.max_wr >= 32);
	assert_int_equal(ibv_modify_srq(srq, &sa, 1 << 7), EINVAL);
	assert_int_equal(ibv_modify_srq(srq, NULL, IBV_SRQ_LIMIT), EINVAL);
	/* post: 2 good then one with too many SGEs -> it is *bad, the first two stay posted */
	for (int i = 0; i < 3; i++)
		w[i] = (struct ibv_recv_wr){ .wr_id = (uint64_t)i, .next = i < 2 ? &w[i + 1] : NULL,
					     .sg_list = &sge, .num_sge = 1 };
	w[2].num_sge = 17;
	assert_int_equal(ibv_post_srq_recv(srq, w, &bad), EINVAL);
	assert_ptr_equal(bad, &w[2]);
	w[1].next = NULL;
	w[0].sg_list = NULL;      /* NULL list with num_sge 1 */
	assert_int_equal(ibv_post_srq_recv(srq, w, &bad), EINVAL);
	assert_ptr_equal(bad, &w[0]);
	assert_int_equal(ibv_dealloc_pd(t->pd), EBUSY);
	assert_int_equal(ibv_destroy_srq(srq), 0);
	/* create errors */
	ia.attr = (struct ibv_srq_attr){ .max_wr = 0, .max_sge = 1 };
	assert_null(ibv_create_srq(t->pd, &ia));
	ia.attr = (struct ibv_srq_attr){ .max_wr = (uint32_t)da.max_srq_wr + 1, .max_sge = 1 };
	errno = 0;
	assert_null(ibv_create_srq(t->pd, &ia));
	assert_int_equal(errno, EINVAL);
	ia.attr = (struct ibv_srq_attr){ .max_wr = 4, .max_sge = (uint32_t)da.max_srq_sge + 1 };
	assert_null(ibv_create_srq(t->pd, &ia));
	ia.attr = (struct ibv_srq_attr){ .max_wr = 4, .max_sge = 1, .srq_limit = 5 };
	assert_null(ibv_create_srq(t->pd, &ia));
	assert_null(ibv_create_srq(NULL, &ia));
	assert_null(ibv_create_srq(t->pd, NULL));
	assert_int_equal(ibv_destroy_srq(NULL), EINVAL);
	assert_int_equal(ibv_query_srq(NULL, &sa), EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pd, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_mr, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_mr_errors, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_mr_unmapped, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_mr_iova, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_rereg, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_mw, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_channel, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_cq, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_cq_rxm_size, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_cross_context, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_srq, tv_setup, tv_teardown),
		cmocka_unit_test_setup_teardown(test_double_destroy, tv_setup, tv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
