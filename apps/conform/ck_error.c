/* Error checks on a fresh connection: a remote protection error and a disconnect, with the
 * completions, async events and QP states both sides must show (docs/conform.md). */
#include <errno.h>
#include <string.h>

#include "ck.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define RW IBV_ACCESS_REMOTE_WRITE
#define REGION 256
#define WLEN 16
#define FILL 0x11

/* T15, RFC 5041 §7.2 (tagged: base or bounds violation), RFC 5040 §7: a Write ending one
 * octet past the offered region places nothing. The responder (server) terminates: async
 * QP_ACCESS_ERR, QP in ERR, its Receive flushed. The requester's Write completes Success
 * (an RDMA Write completes when handed to the transport, RFC 5040 §5.5); the Terminate gives
 * it async QP_FATAL, ERR, its Receives and a later Write flushed. */
int ck_write_oob_srv(struct ic *ic)
{
	struct ic_buf *b = ic_buf_new(ic, REGION, LW | RW, FILL);
	struct ic_buf *r = ic_buf_new(ic, 64, LW, 0);
	EXPECT(ic, b && r, "ibv_reg_mr failed: %s", strerror(errno));
	struct ic_adv a = { (uintptr_t)b->p, b->mr->rkey, REGION };
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_step_send(ic, 1, &a))
		return -1;
	if (ic_expect_async(ic, IBV_EVENT_QP_ACCESS_ERR) ||
	    ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_WR_FLUSH_ERR, NULL) ||
	    ic_expect_qp_state(ic, ic->conn.qp, IBV_QPS_ERR))
		return -1;
	size_t d = ic_buf_fill_diff(b, 0, REGION, FILL);
	EXPECT(ic, d == 0, "the Write out of bounds changed octet %zu of the region", d - 1);
	return ic_step_recv(ic, 2, NULL);
}

int ck_write_oob_cli(struct ic *ic)
{
	struct ic_adv a;
	struct ic_buf *s = ic_buf_new(ic, WLEN, LW, 0x99);
	struct ic_buf *r = ic_buf_new(ic, 128, LW, 0);
	EXPECT(ic, s && r, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_post_recv(ic, 2, r, 64, 64) ||
	    ic_step_recv(ic, 1, &a))
		return -1;
	struct ibv_sge sg = ic_sge(s, 0, WLEN);
	uint64_t to = a.addr + a.len - WLEN + 1;
	if (ic_post_send(ic, IBV_WR_RDMA_WRITE, 1, IBV_SEND_SIGNALED, &sg, 1, to, a.rkey) ||
	    ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, NULL) ||
	    ic_expect_async(ic, IBV_EVENT_QP_FATAL) ||
	    ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_WR_FLUSH_ERR, NULL) ||
	    ic_expect_wc(ic, ic->conn.rcq, 2, IBV_WC_WR_FLUSH_ERR, NULL) ||
	    ic_expect_qp_state(ic, ic->conn.qp, IBV_QPS_ERR))
		return -1;
	/* in ERR a WR is accepted and flushed (libibverbs' rule) */
	if (ic_post_send(ic, IBV_WR_RDMA_WRITE, 2, IBV_SEND_SIGNALED, &sg, 1, to, a.rkey) ||
	    ic_expect_wc(ic, ic->conn.scq, 2, IBV_WC_WR_FLUSH_ERR, NULL))
		return -1;
	return ic_step_send(ic, 2, NULL);
}

/* T34 (verbs §6.2.2.2, §6.2.5): the client disconnects; both sides see DISCONNECTED, their
 * posted Receives complete IBV_WC_WR_FLUSH_ERR with their own WR ids, their QPs have left
 * RTS. Which state they are in then differs: the verbs say Idle once the close completes,
 * Linux's siw reports ERR, and a side still closing reports SQD (Closing). */
static int flushed_after_disconnect(struct ic *ic, uint64_t first)
{
	if (ic_cm_wait_disconnect(ic, IC_WAIT_MS) != 0)
		return -1;
	for (uint64_t i = 0; i < 3; i++)
		if (ic_expect_wc(ic, ic->conn.rcq, first + i, IBV_WC_WR_FLUSH_ERR, NULL) != 0)
			return -1;
	return ic_expect_qp_not_rts(ic, ic->conn.qp);
}

static int post_three(struct ic *ic, uint64_t first)
{
	struct ic_buf *b = ic_buf_new(ic, 3 * 64, LW, 0);
	EXPECT(ic, b, "ibv_reg_mr failed: %s", strerror(errno));
	for (uint64_t i = 0; i < 3; i++)
		if (ic_post_recv(ic, first + i, b, 64 * i, 64) != 0)
			return -1;
	return 0;
}

int ck_disconnect_srv(struct ic *ic)
{
	if (post_three(ic, 30) || ic_step_send(ic, 1, NULL))
		return -1;
	return flushed_after_disconnect(ic, 30);
}

int ck_disconnect_cli(struct ic *ic)
{
	if (post_three(ic, 40) || ic_step_recv(ic, 1, NULL))
		return -1;
	EXPECT(ic, rdma_disconnect(ic->conn.id) == 0, "rdma_disconnect failed: %s",
	       strerror(errno));
	return flushed_after_disconnect(ic, 40);
}
