/* Error checks on a fresh connection: remote protection errors, a Receive too small, a
 * disconnect, with the completions, async events and QP states both sides must show
 * (docs/conform.md). */
#include <errno.h>
#include <string.h>

#include "ck.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define RW IBV_ACCESS_REMOTE_WRITE
#define REGION 256
#define WLEN 16
#define FILL 0x11

/* Remote protection errors (T14-T16, T25; RFC 5041 §7.2 tagged buffer errors, RFC 5040 §7):
 * the server offers REGION octets with one fault, and the client Writes the last WLEN octets
 * of what it was offered. Nothing may be placed. The responder (server) terminates: async
 * QP_ACCESS_ERR, QP in ERR, its Receive flushed. The requester's Write completes Success (an
 * RDMA Write completes when handed to the transport, RFC 5040 §5.5); the Terminate gives it
 * async QP_FATAL, ERR, its Receives and a later Write flushed. */
enum prot { P_BOUNDS, P_STAG, P_KEY, P_PD, P_RIGHTS };

static int prot_srv(struct ic *ic, enum prot k)
{
	struct ibv_pd *pd = ic->pd;
	if (k == P_PD) {
		pd = ic->pd2 = ibv_alloc_pd(ic->ctx);
		EXPECT(ic, pd, "ibv_alloc_pd (a second PD) failed: %s", strerror(errno));
	}
	struct ic_buf *b = ic_buf_new_pd(ic, pd, REGION, LW | (k == P_RIGHTS ? 0 : RW), FILL);
	struct ic_buf *r = ic_buf_new(ic, 64, LW, 0);
	EXPECT(ic, b && r, "ibv_reg_mr failed: %s", strerror(errno));
	struct ic_adv a = { (uintptr_t)b->p, b->mr->rkey, REGION };
	if (k == P_BOUNDS)
		a.len = REGION + 1; /* the Write ends one octet past the region */
	if (k == P_STAG)
		a.rkey ^= 0x7fff0000; /* an index no region of this check has */
	if (k == P_KEY)
		a.rkey ^= 0x5a; /* the index of the region, another key */
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_step_send(ic, 1, &a))
		return -1;
	if (ic_expect_async(ic, IBV_EVENT_QP_ACCESS_ERR) ||
	    ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_WR_FLUSH_ERR, NULL) ||
	    ic_expect_qp_error(ic, ic->conn.qp))
		return -1;
	size_t d = ic_buf_fill_diff(b, 0, REGION, FILL);
	EXPECT(ic, d == 0, "the refused Write changed octet %zu of the region", d - 1);
	return ic_step_recv(ic, 2, NULL);
}

int ck_prot_bounds_srv(struct ic *ic)
{
	return prot_srv(ic, P_BOUNDS);
}

int ck_prot_stag_srv(struct ic *ic)
{
	return prot_srv(ic, P_STAG);
}

int ck_prot_key_srv(struct ic *ic)
{
	return prot_srv(ic, P_KEY);
}

int ck_prot_pd_srv(struct ic *ic)
{
	return prot_srv(ic, P_PD);
}

int ck_prot_rights_srv(struct ic *ic)
{
	return prot_srv(ic, P_RIGHTS);
}

/* After the peer's Terminate: async QP_FATAL, Receives 1 and 2 flushed, ERR, and a Write
 * posted now is accepted and flushed (libibverbs' rule for ERR). */
static int terminated_by_peer(struct ic *ic, struct ibv_sge *sg, uint64_t to, uint32_t rkey)
{
	if (ic_expect_async(ic, IBV_EVENT_QP_FATAL) ||
	    ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_WR_FLUSH_ERR, NULL) ||
	    ic_expect_wc(ic, ic->conn.rcq, 2, IBV_WC_WR_FLUSH_ERR, NULL) ||
	    ic_expect_qp_error(ic, ic->conn.qp))
		return -1;
	if (ic_post_send(ic, IBV_WR_RDMA_WRITE, 9, IBV_SEND_SIGNALED, sg, 1, to, rkey) ||
	    ic_expect_wc(ic, ic->conn.scq, 9, IBV_WC_WR_FLUSH_ERR, NULL))
		return -1;
	return 0;
}

int ck_prot_cli(struct ic *ic)
{
	struct ic_adv a;
	struct ic_buf *s = ic_buf_new(ic, WLEN, LW, 0x99);
	struct ic_buf *r = ic_buf_new(ic, 128, LW, 0);
	EXPECT(ic, s && r, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_post_recv(ic, 2, r, 64, 64) ||
	    ic_step_recv(ic, 1, &a))
		return -1;
	struct ibv_sge sg = ic_sge(s, 0, WLEN);
	uint64_t to = a.addr + a.len - WLEN;
	if (ic_post_send(ic, IBV_WR_RDMA_WRITE, 1, IBV_SEND_SIGNALED, &sg, 1, to, a.rkey) ||
	    ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, NULL) ||
	    terminated_by_peer(ic, &sg, to, a.rkey))
		return -1;
	return ic_step_send(ic, 2, NULL);
}

/* T12 (verbs §8.1.2.1; RFC 5041 §7.2 untagged "DDP Message too long"): a 100-octet Send into
 * a 64-octet Receive. The server's Receive completes IBV_WC_LOC_LEN_ERR, its QP goes to ERR,
 * and not one octet lands beyond the 64 (the guards); the client gets the Terminate. */
int ck_recv_small_srv(struct ic *ic)
{
	struct ic_buf *r = ic_buf_new(ic, 64, LW, 0);
	EXPECT(ic, r, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_step_send(ic, 1, NULL) ||
	    ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_LOC_LEN_ERR, NULL) ||
	    ic_expect_qp_error(ic, ic->conn.qp))
		return -1;
	return ic_step_recv(ic, 2, NULL);
}

int ck_recv_small_cli(struct ic *ic)
{
	struct ic_buf *s = ic_buf_new(ic, 100, LW, 0x77);
	struct ic_buf *r = ic_buf_new(ic, 128, LW, 0);
	EXPECT(ic, s && r, "ibv_reg_mr failed: %s", strerror(errno));
	struct ibv_sge sg = ic_sge(s, 0, 100);
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_post_recv(ic, 2, r, 64, 64) ||
	    ic_step_recv(ic, 1, NULL) ||
	    ic_post_send(ic, IBV_WR_SEND, 1, IBV_SEND_SIGNALED, &sg, 1, 0, 0) ||
	    ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, NULL) ||
	    terminated_by_peer(ic, &sg, 0, 0))
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
