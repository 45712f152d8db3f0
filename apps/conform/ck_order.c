/* Read ordering at the requester: more Reads than its ORD, queued rather than sent past the
 * responder's IRD (T18), and the Read Fence, which holds a Send until the Reads before it
 * have completed (T19). The client is the requester. */
#include <errno.h>
#include <string.h>

#include "ck.h"

#define LW IBV_ACCESS_LOCAL_WRITE
#define RW IBV_ACCESS_REMOTE_WRITE
#define RR IBV_ACCESS_REMOTE_READ

/* T18 (verbs §6.5, §8.2.2 rule 18): with ORD and IRD of 2 (ck_table.c's rd), the
 * client posts ORD_READS Reads and a Send in one list. The requester must not have more
 * Read Requests outstanding than its ORD, so it holds the rest back until earlier Reads
 * complete; one that sent them all at once would overflow the responder's IRD, which a
 * responder answers with a Terminate. Every WR completes Success in post order, each Read
 * with its own slice of the source. */
#define ORD_READS 24
#define ORD_LEN 8192u

/* Read i's slice, of the source and of the sink alike: the Reads go over the region out of
 * address order, and a Response placed in another Read's sink shows in the pattern. */
static size_t ord_src(int i)
{
	return (size_t)((i * 7) % ORD_READS) * ORD_LEN;
}

int ck_ord_srv(struct ic *ic)
{
	struct ic_buf *src = ic_buf_new(ic, ORD_READS * ORD_LEN, LW | RR, 0);
	struct ic_buf *r = ic_buf_new(ic, 64, LW, 0);
	EXPECT(ic, src && r, "ibv_reg_mr failed: %s", strerror(errno));
	ic_buf_pattern(src, 6);
	struct ic_adv a = { (uintptr_t)src->p, src->mr->rkey, (uint32_t)src->len };
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_step_send(ic, 1, &a) || ic_step_recv(ic, 2, NULL))
		return -1;
	struct ibv_wc wc;
	if (ic_expect_wc(ic, ic->conn.rcq, 1, IBV_WC_SUCCESS, &wc))
		return -1;
	EXPECT(ic, wc.byte_len == 8, "the Send behind the Reads: byte_len %u, expected 8",
	       wc.byte_len);
	/* a requester past the IRD: the responder terminates and says so here; the client waits
	 * for step 3 before it disconnects */
	if (ic_expect_no_async(ic, 100) || ic_expect_qp_state(ic, ic->conn.qp, IBV_QPS_RTS))
		return -1;
	size_t d = ic_buf_pattern_diff(src, 0, src->len, 6);
	EXPECT(ic, d == 0, "the Read source changed at octet %zu", d - 1);
	return ic_step_send(ic, 3, NULL); /* the client keeps the connection up until here */
}

int ck_ord_cli(struct ic *ic)
{
	struct ic_adv a;
	if (ic_step_recv(ic, 1, &a))
		return -1;
	EXPECT(ic, a.len == ORD_READS * ORD_LEN, "the server offered %u octets, expected %u",
	       a.len, ORD_READS * ORD_LEN);
	struct ic_buf *s = ic_buf_new(ic, ORD_READS * ORD_LEN, LW | RW, 0);
	struct ic_buf *m = ic_buf_new(ic, 8, LW, 0x42);
	EXPECT(ic, s && m, "ibv_reg_mr failed: %s", strerror(errno));
	struct ibv_sge sg[ORD_READS + 1];
	struct ibv_send_wr wr[ORD_READS + 1], *bad = NULL;
	memset(wr, 0, sizeof(wr));
	for (int i = 0; i <= ORD_READS; i++) {
		bool send = i == ORD_READS;
		sg[i] = send ? ic_sge(m, 0, 8) : ic_sge(s, ord_src(i), ORD_LEN);
		wr[i].wr_id = 1 + i;
		wr[i].opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_READ;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].wr.rdma.remote_addr = a.addr + ord_src(i);
		wr[i].wr.rdma.rkey = a.rkey;
		wr[i].next = send ? NULL : &wr[i + 1];
	}
	int rc = ibv_post_send(ic->conn.qp, wr, &bad);
	EXPECT(ic, rc == 0, "ibv_post_send of %d Reads and a Send in one list failed at WR %llu: "
	       "%s", ORD_READS, bad ? (unsigned long long)bad->wr_id : 0ULL, strerror(rc));
	/* every completion first, then their order: a device that keeps to its ORD but
	 * completes out of order is told apart from one whose Reads fail */
	uint64_t order[ORD_READS + 1];
	for (int i = 0; i <= ORD_READS; i++) {
		struct ibv_wc wc;
		if (ic_next_wc(ic, ic->conn.scq, &wc))
			return -1;
		EXPECT(ic, wc.status == IBV_WC_SUCCESS && wc.wr_id >= 1 && wc.wr_id <= ORD_READS + 1,
		       "completion %d: expected success, saw WR %llu with %s (vendor_err 0x%x)",
		       i + 1, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		       wc.vendor_err);
		enum ibv_wc_opcode op = wc.wr_id == ORD_READS + 1 ? IBV_WC_SEND : IBV_WC_RDMA_READ;
		EXPECT(ic, wc.opcode == op, "completion of WR %llu: opcode %d, expected %d",
		       (unsigned long long)wc.wr_id, wc.opcode, op);
		order[i] = wc.wr_id;
	}
	size_t d = ic_buf_pattern_diff(s, 0, s->len, 6);
	EXPECT(ic, d == 0, "Read data: octet %zu differs", d - 1);
	for (int i = 0; i <= ORD_READS; i++)
		EXPECT(ic, order[i] == (uint64_t)i + 1, "every WR completed Success, data exact, but "
		       "not in post order (verbs §8.2.2 r2): completion %d is WR %llu, expected %d",
		       i + 1, (unsigned long long)order[i], i + 1);
	return ic_step_send(ic, 2, NULL) || ic_step_recv(ic, 3, NULL) ? -1 : 0;
}

/* T19 (verbs §8.2.2 rules 2 and 15, §8.2.2.2): a Read of FENCE_MAX octets, then a Send with
 * IBV_SEND_FENCE (the Read Fence). The fence holds the Send until the Read has completed, so
 * by the time the Send arrives the responder has sent every octet of the Read Response; the
 * server then overwrites the Read's source, from its end, and the client's Read must still
 * hold the original. A device that ignores the fence sends the Send right behind the Read
 * Request; the server then overwrites the source while it is still answering the Read, and
 * the Read returns octets the server wrote after the Send: FAIL. That race is not certain
 * (a responder may have sent the whole Response by then), so a PASS does not prove the
 * fence. Completions: the Read's, then the Send's. */
#define FENCE_MAX (2u << 20) /* racing a late Send, and done within IC_WAIT_MS on a slow device */
#define FENCE_CHUNK 65536u

static uint32_t fence_len(const struct ic *ic)
{
	return ic->max_msg < FENCE_MAX ? (uint32_t)ic->max_msg : FENCE_MAX;
}

/* The fenced Send's Receive, polled without a pause: the overwrite must follow at once. */
static int fence_recv(struct ic *ic, struct ibv_wc *wc)
{
	long long end = ic_now_ms() + IC_WAIT_MS;
	for (;;) {
		int n = ibv_poll_cq(ic->conn.rcq, 1, wc);
		EXPECT(ic, n >= 0, "ibv_poll_cq failed");
		if (n == 1)
			return 0;
		EXPECT(ic, ic_now_ms() < end, "expected the fenced Send's Receive, saw none in %d ms",
		       IC_WAIT_MS);
	}
}

int ck_fence_srv(struct ic *ic)
{
	uint32_t len = fence_len(ic);
	struct ic_buf *src = ic_buf_new(ic, len, LW | RR, 0);
	struct ic_buf *r = ic_buf_new(ic, 64, LW, 0);
	EXPECT(ic, src && r, "ibv_reg_mr(%u) failed: %s", len, strerror(errno));
	ic_buf_pattern(src, 7);
	struct ic_adv a = { (uintptr_t)src->p, src->mr->rkey, len };
	if (ic_post_recv(ic, 1, r, 0, 64) || ic_step_send(ic, 1, &a))
		return -1;
	struct ibv_wc wc;
	if (fence_recv(ic, &wc))
		return -1;
	/* the Response goes out front to back: its end is what a late Send still races */
	for (uint32_t end = len; end > 0;) {
		uint32_t n = end < FENCE_CHUNK ? end : FENCE_CHUNK;
		memset(src->p + end - n, 0xc3, n);
		end -= n;
	}
	EXPECT(ic, wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 8 &&
		   wc.qp_num == ic->conn.qp->qp_num,
	       "the fenced Send's Receive: expected WR 1 with success, byte_len 8, saw WR %llu "
	       "with %s, byte_len %u", (unsigned long long)wc.wr_id,
	       ibv_wc_status_str(wc.status), wc.byte_len);
	return ic_step_recv(ic, 2, NULL);
}

int ck_fence_cli(struct ic *ic)
{
	struct ic_adv a;
	if (ic_step_recv(ic, 1, &a))
		return -1;
	EXPECT(ic, a.len == fence_len(ic), "the server offered %u octets, expected %u", a.len,
	       fence_len(ic));
	struct ic_buf *s = ic_buf_new(ic, a.len, LW | RW, 0);
	struct ic_buf *m = ic_buf_new(ic, 8, LW, 0x42);
	EXPECT(ic, s && m, "ibv_reg_mr(%u) failed: %s", a.len, strerror(errno));
	struct ibv_sge rs = ic_sge(s, 0, a.len), ms = ic_sge(m, 0, 8);
	struct ibv_send_wr send = { .wr_id = 2, .opcode = IBV_WR_SEND, .sg_list = &ms,
				    .num_sge = 1,
				    .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE };
	struct ibv_send_wr read = { .wr_id = 1, .next = &send, .opcode = IBV_WR_RDMA_READ,
				    .sg_list = &rs, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED };
	read.wr.rdma.remote_addr = a.addr;
	read.wr.rdma.rkey = a.rkey;
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(ic->conn.qp, &read, &bad);
	EXPECT(ic, rc == 0, "ibv_post_send of a Read and a fenced Send failed: %s", strerror(rc));
	struct ibv_wc wc;
	if (ic_expect_wc(ic, ic->conn.scq, 1, IBV_WC_SUCCESS, &wc))
		return -1;
	EXPECT(ic, wc.opcode == IBV_WC_RDMA_READ, "Read completion: opcode %d, expected RDMA_READ",
	       wc.opcode);
	if (ic_expect_wc(ic, ic->conn.scq, 2, IBV_WC_SUCCESS, NULL))
		return -1;
	size_t d = ic_buf_pattern_diff(s, 0, s->len, 7);
	EXPECT(ic, d == 0 || s->p[d - 1] != 0xc3, "Read of %u octets: octet %zu holds what the "
	       "server wrote when the fenced Send arrived: the Send overtook the Read", a.len,
	       d - 1);
	EXPECT(ic, d == 0, "Read of %u octets: octet %zu differs from the source", a.len, d - 1);
	return ic_step_send(ic, 2, NULL);
}
