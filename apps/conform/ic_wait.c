/* Completions, async events and QP states, each checked exactly: what was expected and what
 * was seen go into the verdict's reason. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "ic.h"

long long ic_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The next completion on cq within ms: 1 with *wc, 0 when none came, -1 when polling failed. */
static int next_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long long end = ic_now_ms() + ms;
	struct timespec nap = { 0, 200000 };
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n < 0 ? -1 : 1;
		if (ic_now_ms() >= end)
			return 0;
		nanosleep(&nap, NULL);
	}
}

/* The next completion on cq, whatever it is, naming qp. */
int ic_next_wc_qp(struct ic *ic, struct ibv_cq *cq, const struct ibv_qp *qp, struct ibv_wc *wc)
{
	int n = next_wc(cq, wc, IC_WAIT_MS);
	EXPECT(ic, n >= 0, "ibv_poll_cq failed");
	EXPECT(ic, n == 1, "expected a completion, saw none in %d ms", IC_WAIT_MS);
	EXPECT(ic, wc->qp_num == qp->qp_num,
	       "completion of WR %llu names QP %u, expected %u", (unsigned long long)wc->wr_id,
	       wc->qp_num, qp->qp_num);
	return 0;
}

/* The same, naming the check's QP. */
int ic_next_wc(struct ic *ic, struct ibv_cq *cq, struct ibv_wc *wc)
{
	return ic_next_wc_qp(ic, cq, ic->conn.qp, wc);
}

/* The next completion on cq must be (wr_id, st) and name qp; *out gets it when given. */
int ic_expect_wc_qp(struct ic *ic, struct ibv_cq *cq, const struct ibv_qp *qp, uint64_t wr_id,
		    enum ibv_wc_status st, struct ibv_wc *out)
{
	struct ibv_wc wc;
	int n = next_wc(cq, &wc, IC_WAIT_MS);
	EXPECT(ic, n >= 0, "ibv_poll_cq failed");
	EXPECT(ic, n == 1, "expected a completion of WR %llu (%s), saw none in %d ms",
	       (unsigned long long)wr_id, ibv_wc_status_str(st), IC_WAIT_MS);
	EXPECT(ic, wc.wr_id == wr_id && wc.status == st,
	       "expected completion of WR %llu with %s, saw WR %llu with %s (vendor_err 0x%x)",
	       (unsigned long long)wr_id, ibv_wc_status_str(st), (unsigned long long)wc.wr_id,
	       ibv_wc_status_str(wc.status), wc.vendor_err);
	EXPECT(ic, wc.qp_num == qp->qp_num,
	       "completion of WR %llu names QP %u, expected %u", (unsigned long long)wr_id,
	       wc.qp_num, qp->qp_num);
	if (out)
		*out = wc;
	return 0;
}

/* The same on the check's QP. */
int ic_expect_wc(struct ic *ic, struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st,
		 struct ibv_wc *out)
{
	return ic_expect_wc_qp(ic, cq, ic->conn.qp, wr_id, st, out);
}

int ic_expect_no_wc(struct ic *ic, struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;
	int n = next_wc(cq, &wc, ms);
	EXPECT(ic, n == 0, "expected no completion, saw WR %llu with %s",
	       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	return 0;
}

struct ibv_sge ic_sge(const struct ic_buf *b, size_t off, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)(b->p + off), len, b->mr ? b->mr->lkey : 0 };
	return sg;
}

/* Post one WR on the check's QP: 0, or the error number (the verdict says FAIL). */
int ic_post_wr(struct ic *ic, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	wr->next = NULL;
	int rc = ibv_post_send(ic->conn.qp, wr, &bad);
	if (rc)
		ic_fail(ic, "ibv_post_send of WR %llu (opcode %d) failed: %s",
			(unsigned long long)wr->wr_id, wr->opcode, strerror(rc));
	return rc;
}

int ic_post_send(struct ic *ic, enum ibv_wr_opcode op, uint64_t wr_id, unsigned flags,
		 struct ibv_sge *sg, int nsge, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = op, .send_flags = flags,
				  .sg_list = sg, .num_sge = nsge };
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ic_post_wr(ic, &wr) ? -1 : 0;
}

int ic_post_recv(struct ic *ic, uint64_t wr_id, struct ic_buf *b, size_t off, uint32_t len)
{
	struct ibv_sge sg = ic_sge(b, off, len);
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;
	int rc = ibv_post_recv(ic->conn.qp, &wr, &bad);
	EXPECT(ic, rc == 0, "ibv_post_recv of WR %llu failed: %s", (unsigned long long)wr_id,
	       strerror(rc));
	return 0;
}

/* Events left over from an earlier check (e.g. its QP's LLP close) are not this check's. */
void ic_drain_async(struct ic *ic)
{
	struct ibv_async_event ev;
	int fd = ic->ctx->async_fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (ibv_get_async_event(ic->ctx, &ev) == 0)
		ibv_ack_async_event(&ev);
}

/* The next async event must be `type` on res (this check's QP, or its S-RQ). */
int ic_expect_async_on(struct ic *ic, enum ibv_event_type type, const void *res)
{
	long long end = ic_now_ms() + IC_WAIT_MS;
	struct pollfd pfd = { ic->ctx->async_fd, POLLIN, 0 };
	struct ibv_async_event ev;
	while (ic_now_ms() < end) {
		if (poll(&pfd, 1, 50) <= 0 || ibv_get_async_event(ic->ctx, &ev) != 0)
			continue;
		enum ibv_event_type got = ev.event_type;
		bool mine = ev.element.qp == res;
		ibv_ack_async_event(&ev);
		EXPECT(ic, got == type && mine, "expected async event %s, saw %s%s",
		       ibv_event_type_str(type), ibv_event_type_str(got),
		       mine ? "" : " on another resource");
		return 0;
	}
	return ic_fail(ic, "expected async event %s, saw none in %d ms",
		       ibv_event_type_str(type), IC_WAIT_MS);
}

int ic_expect_async(struct ic *ic, enum ibv_event_type type)
{
	return ic_expect_async_on(ic, type, ic->conn.qp);
}

/* Whether an async event comes within ms (then acked, its type in *type). */
bool ic_async_within(struct ic *ic, int ms, enum ibv_event_type *type)
{
	struct pollfd pfd = { ic->ctx->async_fd, POLLIN, 0 };
	struct ibv_async_event ev;
	long long end = ic_now_ms() + ms;
	for (long long left = ms; left > 0; left = end - ic_now_ms()) {
		if (poll(&pfd, 1, (int)left) <= 0 || ibv_get_async_event(ic->ctx, &ev) != 0)
			continue;
		*type = ev.event_type;
		ibv_ack_async_event(&ev);
		return true;
	}
	return false;
}

int ic_expect_no_async(struct ic *ic, int ms)
{
	enum ibv_event_type got;
	if (!ic_async_within(ic, ms, &got))
		return 0;
	return ic_fail(ic, "expected no further async event, saw %s", ibv_event_type_str(got));
}

static const char *qps_str(enum ibv_qp_state s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "UNKNOWN";
}

static int query_state(struct ic *ic, struct ibv_qp *qp, enum ibv_qp_state *s)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int rc = ibv_query_qp(qp, &a, IBV_QP_STATE, &ia);
	EXPECT(ic, rc == 0, "ibv_query_qp failed: %s", strerror(rc));
	*s = a.qp_state;
	return 0;
}

int ic_expect_qp_state(struct ic *ic, struct ibv_qp *qp, enum ibv_qp_state want)
{
	enum ibv_qp_state s = IBV_QPS_UNKNOWN;
	if (query_state(ic, qp, &s) != 0)
		return -1;
	EXPECT(ic, s == want, "expected QP state %s, saw %s", qps_str(want), qps_str(s));
	return 0;
}

/* A QP after an error: in ERR, which it may reach through Terminate (SQE) once its stream
 * has closed (verbs §6.2.4): polled for IC_WAIT_MS. */
int ic_expect_qp_error(struct ic *ic, struct ibv_qp *qp)
{
	long long end = ic_now_ms() + IC_WAIT_MS;
	struct timespec nap = { 0, 5000000 };
	enum ibv_qp_state s = IBV_QPS_UNKNOWN;
	for (;;) {
		if (query_state(ic, qp, &s) != 0)
			return -1;
		if (s == IBV_QPS_ERR)
			return 0;
		EXPECT(ic, s == IBV_QPS_SQE, "expected QP state ERR (or Terminate, SQE, on the way), "
		       "saw %s", qps_str(s));
		EXPECT(ic, ic_now_ms() < end, "expected QP state ERR, still SQE (Terminate) after "
		       "%d ms", IC_WAIT_MS);
		nanosleep(&nap, NULL);
	}
}

/* The verbs' Idle: libibverbs has no such state; Linux iWARP providers report it as RESET,
 * INIT or RTR (siw and cxgb4: INIT). */
int ic_expect_qp_idle(struct ic *ic, struct ibv_qp *qp)
{
	enum ibv_qp_state s = IBV_QPS_UNKNOWN;
	if (query_state(ic, qp, &s) != 0)
		return -1;
	EXPECT(ic, s == IBV_QPS_RESET || s == IBV_QPS_INIT || s == IBV_QPS_RTR,
	       "expected QP state Idle (RESET, INIT or RTR), saw %s", qps_str(s));
	return 0;
}

/* A QP whose stream has ended: Closing (SQD), Error or Idle, not RTS. */
int ic_expect_qp_not_rts(struct ic *ic, struct ibv_qp *qp)
{
	enum ibv_qp_state s = IBV_QPS_UNKNOWN;
	if (query_state(ic, qp, &s) != 0)
		return -1;
	EXPECT(ic, s != IBV_QPS_RTS && s != IBV_QPS_UNKNOWN,
	       "expected the QP out of RTS (Closing, Error or Idle), saw %s", qps_str(s));
	return 0;
}
