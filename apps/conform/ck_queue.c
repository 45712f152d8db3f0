/* Queue and notification checks: a shared receive queue and its limit event, and a CQ armed
 * for solicited completions only. */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "ck.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define SRQ_WRS 8
#define SRQ_LIMIT 4
#define SRQ_SENDS 5

/* The server's S-RQ, before its QP is created; NOT APPLICABLE without S-RQs. */
int ck_srq_prep(struct ic *ic)
{
	if (ic->dev.max_srq == 0 || ic->dev.max_srq_wr < SRQ_WRS)
		return ic_na(ic, "the server's device reports max_srq %d, max_srq_wr %d: no S-RQ "
				 "of %d WRs", ic->dev.max_srq, ic->dev.max_srq_wr, SRQ_WRS);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = SRQ_WRS, .max_sge = 1 } };
	ic->srq = ibv_create_srq(ic->pd, &sa);
	EXPECT(ic, ic->srq, "ibv_create_srq(%d WRs) failed: %s", SRQ_WRS, strerror(errno));
	return 0;
}

/* T39 (verbs §6.3): 8 Receives on the S-RQ with the limit armed at 4; 5 Sends take 5 of
 * them, each Receive's data in its own slot; the limit fires exactly once, on the S-RQ. */
int ck_srq_srv(struct ic *ic)
{
	struct ic_buf *b = ic_buf_new(ic, SRQ_WRS * 16, LW, 0);
	EXPECT(ic, b, "ibv_reg_mr failed: %s", strerror(errno));
	for (int i = 0; i < SRQ_WRS; i++) {
		struct ibv_sge sg = ic_sge(b, 16 * (size_t)i, 16);
		struct ibv_recv_wr wr = { .wr_id = 10 + i, .sg_list = &sg, .num_sge = 1 }, *bad;
		int rc = ibv_post_srq_recv(ic->srq, &wr, &bad);
		EXPECT(ic, rc == 0, "ibv_post_srq_recv failed: %s", strerror(rc));
	}
	struct ibv_srq_attr sa = { .srq_limit = SRQ_LIMIT };
	int rc = ibv_modify_srq(ic->srq, &sa, IBV_SRQ_LIMIT);
	EXPECT(ic, rc == 0, "ibv_modify_srq(limit %d) failed: %s", SRQ_LIMIT, strerror(rc));
	if (ic_step_send(ic, 1, NULL) || ic_step_recv(ic, 2, NULL))
		return -1;
	unsigned seen = 0;
	for (int i = 0; i < SRQ_SENDS; i++) {
		/* which Receive a message takes is the S-RQ's order: any posted one, once */
		struct ibv_wc wc;
		if (ic_next_wc(ic, ic->conn.rcq, &wc) != 0)
			return -1;
		EXPECT(ic, wc.status == IBV_WC_SUCCESS && wc.wr_id >= 10 &&
			   wc.wr_id < 10 + SRQ_WRS && wc.byte_len == 8,
		       "S-RQ Receive %d: WR %llu, %s, byte_len %u", i,
		       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.byte_len);
		unsigned bit = 1u << (wc.wr_id - 10);
		EXPECT(ic, !(seen & bit), "S-RQ Receive WR %llu completed twice",
		       (unsigned long long)wc.wr_id);
		seen |= bit;
		size_t slot = 16 * (size_t)(wc.wr_id - 10);
		EXPECT(ic, b->p[slot] == 0x40 + i, "S-RQ Receive %d holds Send %d's data", i,
		       b->p[slot] - 0x40);
	}
	if (ic_expect_async_on(ic, IBV_EVENT_SRQ_LIMIT_REACHED, ic->srq) != 0)
		return -1;
	return ic_expect_no_async(ic, 300);
}

int ck_srq_cli(struct ic *ic)
{
	struct ic_buf *s = ic_buf_new(ic, SRQ_SENDS * 8, LW, 0);
	EXPECT(ic, s, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_step_recv(ic, 1, NULL))
		return -1;
	for (int i = 0; i < SRQ_SENDS; i++) {
		s->p[8 * i] = (uint8_t)(0x40 + i);
		struct ibv_sge sg = ic_sge(s, 8 * (size_t)i, 8);
		if (ic_post_send(ic, IBV_WR_SEND, 1 + i, IBV_SEND_SIGNALED, &sg, 1, 0, 0) ||
		    ic_expect_wc(ic, ic->conn.scq, 1 + i, IBV_WC_SUCCESS, NULL))
			return -1;
	}
	return ic_step_send(ic, 2, NULL);
}

/* A completion event on the Receive CQ's channel within ms: 1, none: 0, an error: -1. */
static int cq_event(struct ic *ic, int ms)
{
	struct pollfd pfd = { ic->conn.ch->fd, POLLIN, 0 };
	if (poll(&pfd, 1, ms) != 1)
		return 0;
	struct ibv_cq *cq;
	void *ctx;
	if (ibv_get_cq_event(ic->conn.ch, &cq, &ctx) != 0)
		return -1;
	ibv_ack_cq_events(cq, 1);
	return cq == ic->conn.rcq ? 1 : -1;
}

/* T38 (verbs §8.2.5): a CQ armed for solicited completions is not woken by a plain Send,
 * and is by a Send with the Solicited Event flag. */
int ck_solicited_srv(struct ic *ic)
{
	struct ic_buf *r = ic_buf_new(ic, 128, LW, 0);
	EXPECT(ic, r, "ibv_reg_mr failed: %s", strerror(errno));
	int rc = ibv_req_notify_cq(ic->conn.rcq, 1);
	EXPECT(ic, rc == 0, "ibv_req_notify_cq(solicited only) failed: %s", strerror(rc));
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_post_recv(ic, 2, r, 64, 64) ||
	    ic_step_send(ic, 1, NULL) || ic_step_recv(ic, 2, NULL) ||
	    ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_SUCCESS, NULL))
		return -1;
	EXPECT(ic, cq_event(ic, 200) == 0,
	       "a plain Send woke a CQ armed for solicited completions only");
	if (ic_step_send(ic, 3, NULL) || ic_step_recv(ic, 4, NULL))
		return -1;
	EXPECT(ic, cq_event(ic, IC_WAIT_MS) == 1,
	       "expected a completion event for the solicited Send, saw none in %d ms",
	       IC_WAIT_MS);
	return ic_expect_wc(ic, ic->conn.rcq, 2, IBV_WC_SUCCESS, NULL);
}

int ck_solicited_cli(struct ic *ic)
{
	struct ic_buf *s = ic_buf_new(ic, 16, LW, 0x21);
	EXPECT(ic, s, "ibv_reg_mr failed: %s", strerror(errno));
	struct ibv_sge sg = ic_sge(s, 0, 16);
	if (ic_step_recv(ic, 1, NULL) ||
	    ic_post_send(ic, IBV_WR_SEND, 1, IBV_SEND_SIGNALED, &sg, 1, 0, 0) ||
	    ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, NULL) || ic_step_send(ic, 2, NULL) ||
	    ic_step_recv(ic, 3, NULL) ||
	    ic_post_send(ic, IBV_WR_SEND, 2, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, &sg, 1, 0,
			 0) ||
	    ic_expect_wc(ic, ic->conn.scq, 2, IBV_WC_SUCCESS, NULL))
		return -1;
	return ic_step_send(ic, 4, NULL);
}
