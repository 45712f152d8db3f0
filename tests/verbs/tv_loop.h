/* Two QPs of this process connected to each other over loopback: the MPA exchange of rn_cm,
 * both ends driven from the calling thread, then each ESTABLISHED stream handed to its QP
 * (softrnic_qp_connect), as our librdmacm does. Shared by the verbs tests that need a
 * connected pair; tv_pair_setup / tv_pair_teardown are the fixture of the tests whose two
 * contexts (two devices, as two processes would have) have one RC QP each. */
#ifndef TV_LOOP_H
#define TV_LOOP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "tv_util.h"
#include "rnic.h"
#include "rn_transport.h"
#include "verbs_int.h"

#include "../lib/t_util.h"
#include "softrnic/verbs_ext.h"

#define TV_LOOP_WAIT_MS 5000
#define TV_LOOP_BUFSZ 65536

static inline void tv_connect_qps(struct ibv_qp *qa, struct ibv_qp *qb)
{
	const struct rn_transport *t = rn_sock_transport();
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct rn_conn *lis, *c = NULL;
	struct rn_cm *acm, *pcm = NULL;
	struct rn_cm_handoff ha, hb;
	struct rn_cm_cfg cfg;
	long long end = t_now_ms() + TV_LOOP_WAIT_MS;

	rn_cm_cfg_default(&cfg);
	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 4, &lis), 0);
	assert_int_equal(rn_conn_local_addr(lis, (struct sockaddr *)&ss, &len), 0);
	la.sin_port = ((struct sockaddr_in *)&ss)->sin_port;
	assert_int_equal(rn_cm_connect(t, (struct sockaddr *)&la, sizeof(la), &cfg, "hi", 2, &acm),
			 0);
	while (t_now_ms() < end) {
		if (!pcm && rn_conn_accept(lis, &c) == 0)
			assert_int_equal(rn_cm_passive(c, &cfg, &pcm), 0);
		rn_cm_progress(acm);
		if (pcm && rn_cm_progress(pcm) == RN_CM_WAIT_ACCEPT)
			assert_int_equal(rn_cm_accept(pcm, NULL, 0), 0);
		if (pcm && rn_cm_state(acm) == RN_CM_ESTABLISHED &&
		    rn_cm_state(pcm) == RN_CM_ESTABLISHED)
			break;
		usleep(500);
	}
	assert_int_equal(rn_cm_state(acm), RN_CM_ESTABLISHED);
	assert_int_equal(rn_cm_state(pcm), RN_CM_ESTABLISHED);
	assert_int_equal(rn_cm_handoff(acm, &ha), 0);
	assert_int_equal(rn_cm_handoff(pcm, &hb), 0);
	assert_int_equal(softrnic_qp_connect(qa, &ha), 0);
	assert_int_equal(softrnic_qp_connect(qb, &hb), 0);
	assert_null(ha.conn);
	assert_int_equal(softrnic_qp_connect(qa, &hb), EINVAL);   /* no conn, not Idle */
	rn_cm_destroy(acm);
	rn_cm_destroy(pcm);
	rn_conn_close(lis);
}

/* One end of a tv_pair: its own context, a 128-entry CQ on a completion channel for both
 * queues, one RC QP and a registered TV_LOOP_BUFSZ buffer. */
struct tv_side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_srq *srq;          /* receives go here when not NULL */
	char *buf;
};

struct tv_pair {
	struct ibv_device **list;
	struct tv_side a, b;
};

/* How tv_side_open builds its QP (NULL: all defaults). */
struct tv_side_opt {
	uint32_t send_wr;             /* SQ depth; 0: 32 */
	bool srq;                     /* receive through an SRQ */
	unsigned ext;                 /* softrnic_create_qp flags; 0: ibv_create_qp */
};

static inline void tv_side_open(struct ibv_device *dev, struct tv_side *s,
				const struct tv_side_opt *o)
{
	static const struct tv_side_opt dflt;
	struct ibv_qp_init_attr ia = { .cap = { .max_send_wr = 32, .max_recv_wr = 32,
						.max_send_sge = 2, .max_recv_sge = 2,
						.max_inline_data = 64 },
				       .qp_type = IBV_QPT_RC };

	if (!o)
		o = &dflt;
	if (o->send_wr)
		ia.cap.max_send_wr = o->send_wr;
	s->ctx = ibv_open_device(dev);
	assert_non_null(s->ctx);
	s->pd = ibv_alloc_pd(s->ctx);
	s->ch = ibv_create_comp_channel(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 128, s, s->ch, 0);
	assert_non_null(s->cq);
	ia.send_cq = ia.recv_cq = s->cq;
	if (o->srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 2 } };
		s->srq = ibv_create_srq(s->pd, &sa);
		assert_non_null(s->srq);
		ia.srq = s->srq;
	}
	s->qp = o->ext ? softrnic_create_qp(s->pd, &ia, o->ext) : ibv_create_qp(s->pd, &ia);
	assert_non_null(s->qp);
	s->buf = aligned_alloc(4096, TV_LOOP_BUFSZ);
	memset(s->buf, 0, TV_LOOP_BUFSZ);
	s->mr = ibv_reg_mr(s->pd, s->buf, TV_LOOP_BUFSZ, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	assert_non_null(s->mr);
}

static inline void tv_side_close(struct tv_side *s)
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

/* cmocka setup: both sides opened as a and b say, their QPs connected; *state is the pair. */
static inline int tv_pair_setup(void **state, const struct tv_side_opt *a,
				const struct tv_side_opt *b)
{
	struct tv_pair *p = calloc(1, sizeof(*p));

	p->list = ibv_get_device_list(NULL);
	tv_side_open(p->list[0], &p->a, a);
	tv_side_open(p->list[0], &p->b, b);
	tv_connect_qps(p->a.qp, p->b.qp);
	*state = p;
	return 0;
}

static inline int tv_pair_teardown(void **state)
{
	struct tv_pair *p = *state;

	tv_side_close(&p->a);
	tv_side_close(&p->b);
	ibv_free_device_list(p->list);
	free(p);
	return 0;
}

/* Poll until one WC arrives (bounded). */
static inline struct ibv_wc tv_wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	long long end = t_now_ms() + TV_LOOP_WAIT_MS;
	int n;

	memset(&wc, 0, sizeof(wc));
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && t_now_ms() < end)
		usleep(100);
	assert_int_equal(n, 1);
	return wc;
}

/* One Receive of len bytes at s->buf + off (on the SRQ when s has one). */
static inline void tv_post_recv(struct tv_side *s, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (s->srq)
		assert_int_equal(ibv_post_srq_recv(s->srq, &w, &bad), 0);
	else
		assert_int_equal(ibv_post_recv(s->qp, &w, &bad), 0);
}

/* w with len bytes at s->buf + off (no SGE when len is 0). */
static inline void tv_post_send(struct tv_side *s, struct ibv_send_wr *w, size_t off,
				uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr *bad;

	w->sg_list = &sge;
	w->num_sge = len ? 1 : 0;
	assert_int_equal(ibv_post_send(s->qp, w, &bad), 0);
}

/* The next async event of s is type for s's QP. Acked before it is checked: a QP with an
 * unacked event cannot be destroyed (libibverbs' rule), so a wrong event would otherwise hang
 * the teardown instead of failing here. */
static inline void tv_expect_async(struct tv_side *s, enum ibv_event_type type)
{
	struct ibv_async_event ev;

	assert_true(tv_readable(s->ctx->async_fd, TV_LOOP_WAIT_MS));
	assert_int_equal(ibv_get_async_event(s->ctx, &ev), 0);
	ibv_ack_async_event(&ev);
	if (ev.event_type != type || ev.element.qp != s->qp)
		fail_msg("async event %s (%d) for qp %p; expected %s (%d) for qp %p",
			 ibv_event_type_str(ev.event_type), ev.event_type, (void *)ev.element.qp,
			 ibv_event_type_str(type), type, (void *)s->qp);
}

/* ibv_query_qp reports s's QP in RTS. */
static inline void tv_expect_rts(struct tv_side *s)
{
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr a;

	assert_int_equal(ibv_query_qp(s->qp, &a, IBV_QP_STATE, &qi), 0);
	assert_int_equal(a.qp_state, IBV_QPS_RTS);
}

#endif
