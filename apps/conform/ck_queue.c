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

/* An S-RQ shared by two QPs: the client opens a second connection to the server, whose QPs
 * both take their Receives from the S-RQ of ck_srq_prep. Each QP carries SHARED_SENDS Sends
 * of lengths of their own (shared_len), interleaved QP by QP. */
#define SHARED_SENDS 3
#define SHARED_SLOT 64

static uint32_t shared_len(int q, int i)
{
	return (uint32_t)(8 + 16 * i + 8 * q); /* 8, 24, 40 on the first QP; 16, 32, 48 */
}

static uint8_t shared_octet(int q, int i, uint32_t k)
{
	return (uint8_t)(0x80 + 0x20 * q + 0x08 * i + k * 5);
}

/* The i-th Receive completion on connection q: a Receive of the S-RQ not taken before, on
 * q's own CQ and naming q's QP, byte_len exactly Send i's, its data in that Receive's slot
 * and nothing after it. */
static int shared_recv(struct ic *ic, struct ic_conn *c, int q, int i, struct ic_buf *b,
		       unsigned *seen)
{
	struct ibv_wc wc;
	if (ic_next_wc_qp(ic, c->rcq, c->qp, &wc) != 0)
		return -1;
	const char *qn = q ? "second" : "first";
	EXPECT(ic, wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV,
	       "Receive %d on the %s QP: expected RECV with success, saw WR %llu opcode %d "
	       "with %s", i, qn, (unsigned long long)wc.wr_id, wc.opcode,
	       ibv_wc_status_str(wc.status));
	EXPECT(ic, wc.wr_id >= 10 && wc.wr_id < 10 + SRQ_WRS,
	       "Receive %d on the %s QP: WR %llu was never posted", i, qn,
	       (unsigned long long)wc.wr_id);
	unsigned bit = 1u << (wc.wr_id - 10);
	EXPECT(ic, !(*seen & bit), "S-RQ Receive WR %llu completed twice (%s QP, Receive %d)",
	       (unsigned long long)wc.wr_id, qn, i);
	*seen |= bit;
	uint32_t len = shared_len(q, i);
	EXPECT(ic, wc.byte_len == len,
	       "Receive %d on the %s QP: byte_len %u, expected %u (its Send %d)", i, qn,
	       wc.byte_len, len, i);
	const uint8_t *p = b->p + SHARED_SLOT * (wc.wr_id - 10);
	for (uint32_t k = 0; k < len; k++)
		EXPECT(ic, p[k] == shared_octet(q, i, k),
		       "Receive %d on the %s QP (WR %llu): octet %u is not Send %d's", i, qn,
		       (unsigned long long)wc.wr_id, k, i);
	for (uint32_t k = len; k < SHARED_SLOT; k++)
		EXPECT(ic, p[k] == 0, "Receive %d on the %s QP (WR %llu): octet %u beyond the "
		       "message written", i, qn, (unsigned long long)wc.wr_id, k);
	return 0;
}

/* T39, verbs §6.3.5 (S-RQ processing): Sends on two QPs of one S-RQ each consume one of its
 * Receives, any one, never one twice; each completion comes on the CQ of the QP the message
 * arrived on and names that QP, in that QP's message order; the Receives left over stay. */
int ck_srq_shared_srv(struct ic *ic)
{
	/* the client connects again only when told: a connection request that came while the
	 * first connection was still being set up would be taken for a stray one */
	if (ic_step_send(ic, 1, NULL) || ic_cm_accept2(ic) != 0)
		return -1;
	struct ic_buf *b = ic_buf_new(ic, SRQ_WRS * SHARED_SLOT, LW, 0);
	EXPECT(ic, b, "ibv_reg_mr failed: %s", strerror(errno));
	for (int i = 0; i < SRQ_WRS; i++) {
		struct ibv_sge sg = ic_sge(b, SHARED_SLOT * (size_t)i, SHARED_SLOT);
		struct ibv_recv_wr wr = { .wr_id = 10 + i, .sg_list = &sg, .num_sge = 1 }, *bad;
		int rc = ibv_post_srq_recv(ic->srq, &wr, &bad);
		EXPECT(ic, rc == 0, "ibv_post_srq_recv failed: %s", strerror(rc));
	}
	if (ic_step_send(ic, 2, NULL) || ic_step_recv(ic, 3, NULL))
		return -1;
	struct ic_conn *c[2] = { &ic->conn, &ic->conn2 };
	unsigned seen = 0;
	for (int q = 0; q < 2; q++)
		for (int i = 0; i < SHARED_SENDS; i++)
			if (shared_recv(ic, c[q], q, i, b, &seen) != 0)
				return -1;
	if (ic_expect_no_wc(ic, ic->conn.rcq, 100) || ic_expect_no_wc(ic, ic->conn2.rcq, 100))
		return -1;
	return ic_expect_no_async(ic, 100);
}

int ck_srq_shared_cli(struct ic *ic)
{
	if (ic_step_recv(ic, 1, NULL) || ic_cm_connect2(ic) != 0)
		return -1;
	struct ic_buf *s = ic_buf_new(ic, 2 * SHARED_SENDS * SHARED_SLOT, LW, 0);
	EXPECT(ic, s, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_step_recv(ic, 2, NULL))
		return -1;
	struct ic_conn *c[2] = { &ic->conn, &ic->conn2 };
	for (int i = 0; i < SHARED_SENDS; i++) {
		for (int q = 0; q < 2; q++) {
			size_t off = SHARED_SLOT * (size_t)(q * SHARED_SENDS + i);
			for (uint32_t k = 0; k < shared_len(q, i); k++)
				s->p[off + k] = shared_octet(q, i, k);
			struct ibv_sge sg = ic_sge(s, off, shared_len(q, i));
			struct ibv_send_wr wr = { .wr_id = 1 + i, .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED, .sg_list = &sg,
						  .num_sge = 1 }, *bad = NULL;
			int rc = ibv_post_send(c[q]->qp, &wr, &bad);
			EXPECT(ic, rc == 0, "ibv_post_send of Send %d on the %s QP failed: %s", i,
			       q ? "second" : "first", strerror(rc));
		}
	}
	for (int q = 0; q < 2; q++)
		for (int i = 0; i < SHARED_SENDS; i++)
			if (ic_expect_wc_qp(ic, c[q]->scq, c[q]->qp, 1 + i, IBV_WC_SUCCESS, NULL))
				return -1;
	return ic_step_send(ic, 3, NULL);
}
