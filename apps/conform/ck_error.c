/* Error checks on a fresh connection: remote protection errors, a Receive too small, a
 * disconnect, with the completions, async events and QP states both sides must show
 * (docs/conform.md). */
#include <errno.h>
#include <string.h>

#include "ck.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define RW IBV_ACCESS_REMOTE_WRITE
#define RR IBV_ACCESS_REMOTE_READ
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

/* The responder's half of a protection error: offers REGION octets with fault k for an
 * access that needs `right` (Remote Write for a Write, Remote Read for a Read), then expects
 * the terminated QP with nothing of the region changed. */
static int prot_srv(struct ic *ic, enum prot k, int right)
{
	struct ibv_pd *pd = ic->pd;
	if (k == P_PD) {
		pd = ic->pd2 = ibv_alloc_pd(ic->ctx);
		EXPECT(ic, pd, "ibv_alloc_pd (a second PD) failed: %s", strerror(errno));
	}
	struct ic_buf *b = ic_buf_new_pd(ic, pd, REGION, LW | (k == P_RIGHTS ? 0 : right), FILL);
	struct ic_buf *r = ic_buf_new(ic, 64, LW, 0);
	EXPECT(ic, b && r, "ibv_reg_mr failed: %s", strerror(errno));
	struct ic_adv a = { (uintptr_t)b->p, b->mr->rkey, REGION };
	if (k == P_BOUNDS)
		a.len = REGION + 1; /* the access ends one octet past the region */
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
	EXPECT(ic, d == 0, "the refused %s changed octet %zu of the region",
	       right == RW ? "Write" : "Read", d - 1);
	return ic_step_recv(ic, 2, NULL);
}

int ck_prot_bounds_srv(struct ic *ic)
{
	return prot_srv(ic, P_BOUNDS, RW);
}

int ck_prot_stag_srv(struct ic *ic)
{
	return prot_srv(ic, P_STAG, RW);
}

int ck_prot_key_srv(struct ic *ic)
{
	return prot_srv(ic, P_KEY, RW);
}

int ck_prot_pd_srv(struct ic *ic)
{
	return prot_srv(ic, P_PD, RW);
}

int ck_prot_rights_srv(struct ic *ic)
{
	return prot_srv(ic, P_RIGHTS, RW);
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

/* The requester's start of an error check: its buffer s (len octets), two Receives for the
 * flushes to come, and the server's step 1 (its offer in *a, when a is given). */
static int cli_start(struct ic *ic, uint32_t len, int access, int fill, struct ic_buf **s,
		     struct ic_adv *a)
{
	*s = ic_buf_new(ic, len, access, fill);
	struct ic_buf *r = ic_buf_new(ic, 128, LW, 0);
	EXPECT(ic, *s && r, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_post_recv(ic, 2, r, 64, 64))
		return -1;
	return ic_step_recv(ic, 1, a);
}

int ck_prot_cli(struct ic *ic)
{
	struct ic_adv a;
	struct ic_buf *s;
	if (cli_start(ic, WLEN, LW, 0x99, &s, &a))
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
	struct ic_buf *s;
	if (cli_start(ic, 100, LW, 0x77, &s, NULL))
		return -1;
	struct ibv_sge sg = ic_sge(s, 0, 100);
	if (ic_post_send(ic, IBV_WR_SEND, 1, IBV_SEND_SIGNALED, &sg, 1, 0, 0) ||
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

/* Read Request protection errors (RFC 5040 §4.8 remote protection, verbs §8.3.3 IRRQ
 * protection errors): the server offers REGION octets of a source with one fault, and the
 * client Reads the last RLEN octets of what it was offered. The responder (server) finds the
 * fault on the Read Request: async QP_ACCESS_ERR, QP in ERR, its Receive flushed, the source
 * unchanged. The requester's Read never gets its data: it completes in error (the remote
 * termination) or flushed, never Success, and the Terminate gives it async QP_FATAL and ERR. */
#define RLEN 16

int ck_read_bounds_srv(struct ic *ic)
{
	return prot_srv(ic, P_BOUNDS, RR);
}

int ck_read_rights_srv(struct ic *ic)
{
	return prot_srv(ic, P_RIGHTS, RR);
}

int ck_read_prot_cli(struct ic *ic)
{
	struct ic_adv a;
	struct ic_buf *s;
	/* iWARP places Read Responses through the sink's STag: some RNICs want Remote Write */
	if (cli_start(ic, RLEN, LW | RW, 0, &s, &a))
		return -1;
	struct ibv_sge sg = ic_sge(s, 0, RLEN);
	uint64_t from = a.addr + a.len - RLEN;
	struct ibv_wc wc;
	if (ic_post_send(ic, IBV_WR_RDMA_READ, 1, IBV_SEND_SIGNALED, &sg, 1, from, a.rkey) ||
	    ic_next_wc(ic, ic->conn.scq, &wc))
		return -1;
	EXPECT(ic, wc.wr_id == 1 && wc.status != IBV_WC_SUCCESS,
	       "expected the refused Read (WR 1) to complete in error, saw WR %llu with %s",
	       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	size_t d = ic_buf_fill_diff(s, 0, RLEN, 0);
	EXPECT(ic, d == 0, "the refused Read placed octet %zu of its sink", d - 1);
	if (terminated_by_peer(ic, &sg, from, a.rkey))
		return -1;
	return ic_step_send(ic, 2, NULL);
}

/* T13 (verbs §6.3.5, §8.1.2.1): a Send to a QP with no Receive posted. The verbs allow two
 * modes, and the device's is what is checked: the responder terminates (async QP_REQ_ERR, "RQ
 * protection error, MSN range not valid", QP in ERR; the requester then sees the Terminate),
 * or it holds the message until a Receive is posted and completes it there, with no error
 * anywhere. The server tells the client which mode its device chose. */
enum { MODE_TERMINATE = 1, MODE_HOLD };

int ck_send_no_recv_srv(struct ic *ic)
{
	struct ic_buf *r = ic_buf_new(ic, 64, LW, 0);
	EXPECT(ic, r, "ibv_reg_mr failed: %s", strerror(errno));
	if (ic_step_send(ic, 1, NULL) || ic_step_recv(ic, 2, NULL))
		return -1;
	struct ic_adv mode = { .len = MODE_HOLD };
	enum ibv_event_type ev;
	if (ic_async_within(ic, 1000, &ev)) {
		/* the terminating mode: the RQ's MSN error */
		EXPECT(ic, ev == IBV_EVENT_QP_REQ_ERR, "a Send with no Receive: expected async "
		       "event %s (or the message held for a Receive), saw %s",
		       ibv_event_type_str(IBV_EVENT_QP_REQ_ERR), ibv_event_type_str(ev));
		if (ic_expect_qp_error(ic, ic->conn.qp))
			return -1;
		mode.len = MODE_TERMINATE;
	} else {
		struct ibv_wc wc;
		if (ic_post_recv(ic, 1, r, 0, 64) ||
		    ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_SUCCESS, &wc))
			return -1;
		EXPECT(ic, wc.byte_len == WLEN, "the held Send: byte_len %u, expected %d",
		       wc.byte_len, WLEN);
		size_t d = ic_buf_fill_diff(r, 0, WLEN, 0x99);
		EXPECT(ic, d == 0, "the held Send: octet %zu differs", d - 1);
	}
	if (ic_step_send(ic, 3, &mode))
		return -1;
	return ic_step_recv(ic, 4, NULL);
}

int ck_send_no_recv_cli(struct ic *ic)
{
	struct ic_adv mode;
	struct ic_buf *s;
	if (cli_start(ic, WLEN, LW, 0x99, &s, NULL))
		return -1;
	struct ibv_sge sg = ic_sge(s, 0, WLEN);
	if (ic_post_send(ic, IBV_WR_SEND, 1, IBV_SEND_SIGNALED, &sg, 1, 0, 0) ||
	    ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, NULL) ||
	    ic_step_send(ic, 2, NULL) || ic_step_recv(ic, 3, &mode))
		return -1;
	if (mode.len == MODE_TERMINATE ? terminated_by_peer(ic, &sg, 0, 0) :
					 ic_expect_no_async(ic, 300))
		return -1;
	return ic_step_send(ic, 4, NULL);
}
