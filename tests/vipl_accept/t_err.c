/* T25-T26: disconnect with descriptors posted, detection by the peer, reconnection of the same
 * VIs without old data; the async error callback and restoring the default handler
 * (docs/acceptance-vipl.md). */
#include <string.h>

#include "va.h"

#define RD VIP_SERVICE_RELIABLE_DELIVERY
#define T25_N 4
#define T25_M 4
#define T25_LEN 65536

/* ---- T25 -------------------------------------------------------------------------------- */
void t25_a(struct va_ctx *c)
{
	struct va_env e;
	char b[128];
	va_env_open(c, &e, (T25_N + T25_M) * T25_LEN + 65536);
	VIP_VI_HANDLE vi = va_vi(&e, RD, NULL, NULL);
	va_barrier(c, "open");
	va_client_connect(&e, vi, "t25");
	va_barrier(c, "b-posted");
	VIP_DESCRIPTOR *r[T25_N], *s[T25_M], *got;
	for (int i = 0; i < T25_N; i++) {
		r[i] = va_desc1(&e, 0, va_alloc(&e, T25_LEN), T25_LEN);
		va_post_recv(&e, vi, r[i]);
	}
	for (int i = 0; i < T25_M; i++) {
		uint8_t *buf = va_alloc(&e, T25_LEN);
		va_fill(buf, T25_LEN, 250);
		s[i] = va_desc1(&e, 0, buf, T25_LEN);
		va_post_send(&e, vi, s[i]);
	}
	VA_OK(c, VipDisconnect(vi));
	VIP_VI_STATE st = va_state(&e, vi);
	VA_TRUE(c, st == VIP_STATE_IDLE, "after VipDisconnect the VI is %s", va_state_name(st));
	for (int i = 0; i < T25_N; i++) {
		VA_OK(c, VipRecvWait(vi, VA_WAIT_MS, &got));
		VA_TRUE(c, got == r[i] && (got->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR),
			"receive %d: %p status %s, expected %p FLUSHED", i, (void *)got,
			va_status_str(got->CS.Status, b, sizeof b), (void *)r[i]);
	}
	int flushed = 0;
	for (int i = 0; i < T25_M; i++) {
		VA_OK(c, VipSendWait(vi, VA_WAIT_MS, &got));
		uint32_t x = got->CS.Status;
		/* a send already complete before the disconnect keeps its success status */
		VA_TRUE(c, got == s[i] && (x & VIP_STATUS_DONE) &&
				   (!(x & VIP_STATUS_ERROR_MASK) || (x & VIP_STATUS_DESC_FLUSHED_ERROR)),
			"send %d: status %s, expected FLUSHED (or success before the disconnect)",
			i, va_status_str(x, b, sizeof b));
		flushed += (x & VIP_STATUS_DESC_FLUSHED_ERROR) != 0;
	}
	va_note(c, "%d receives flushed, %d of %d sends flushed", T25_N, flushed, T25_M);
	va_barrier(c, "a-disconnected");
	va_barrier(c, "b-idle");
	/* reconnect the same VI */
	va_client_connect(&e, vi, "t25");
	va_barrier(c, "b-reposted");
	uint8_t *buf = va_alloc(&e, 32);
	va_fill(buf, 32, 251);
	VIP_DESCRIPTOR *n = va_desc1(&e, 0, buf, 32);
	va_post_send(&e, vi, n);
	va_expect_desc(&e, va_send_wait(&e, vi), n, VIP_STATUS_OP_SEND, "send after reconnect");
	va_close_vi(&e, vi, "done");
}

static int t25_async;
static VIP_ERROR_CODE t25_code;
static void t25_handler(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *ed)
{
	(void)ctx;
	t25_code = ed->ErrorCode;
	__atomic_add_fetch(&t25_async, 1, __ATOMIC_SEQ_CST);
}

void t25_b(struct va_ctx *c)
{
	struct va_env e;
	char b[128];
	VIP_DESCRIPTOR *got;
	va_env_open(c, &e, T25_M * T25_LEN + 65536);
	VA_OK(c, VipErrorCallback(e.nic, NULL, t25_handler));
	VIP_VI_HANDLE vi = va_vi(&e, RD, NULL, NULL);
	va_barrier(c, "open");
	va_server_accept(&e, vi, "t25");
	VIP_DESCRIPTOR *r[T25_M];
	for (int i = 0; i < T25_M; i++) {
		r[i] = va_desc1(&e, 0, va_alloc(&e, T25_LEN), T25_LEN);
		va_post_recv(&e, vi, r[i]);
	}
	va_barrier(c, "b-posted");
	va_barrier(c, "a-disconnected");
	/* detected at the latest on our next transfer */
	uint8_t *sb = va_alloc(&e, 16);
	VIP_DESCRIPTOR *s = va_desc1(&e, 0, sb, 16);
	va_post_send(&e, vi, s);
	got = va_send_wait(&e, vi);
	/* the send may have reached TCP before the reset arrived: the VI must still end in
	 * Error, with the send in error or an async error (CONN_LOST) raised */
	va_wait_state(&e, vi, VIP_STATE_ERROR, VA_WAIT_MS);
	long long end = va_now_ms() + 1000;
	while (!__atomic_load_n(&t25_async, __ATOMIC_SEQ_CST) &&
	       !(s->CS.Status & VIP_STATUS_ERROR_MASK) && va_now_ms() < end)
		va_sleep_ms(5);
	bool async = __atomic_load_n(&t25_async, __ATOMIC_SEQ_CST) != 0;
	VA_TRUE(c, got == s && ((s->CS.Status & VIP_STATUS_ERROR_MASK) || async),
		"send after the peer's disconnect: status %s and no async error",
		va_status_str(s->CS.Status, b, sizeof b));
	va_note(c, "peer disconnect seen: send %s, %d async error(s) (first code %d)",
		va_status_str(s->CS.Status, b, sizeof b), t25_async, (int)t25_code);
	VA_OK(c, VipDisconnect(vi));
	VIP_VI_STATE st = va_state(&e, vi);
	VA_TRUE(c, st == VIP_STATE_IDLE, "Error -> Disconnect left the VI %s", va_state_name(st));
	int okrecv = 0;
	for (int i = 0; i < T25_M; i++) {
		VA_OK(c, VipRecvWait(vi, VA_WAIT_MS, &got));
		okrecv += !(got->CS.Status & VIP_STATUS_ERROR_MASK);
	}
	va_note(c, "%d old-incarnation receives completed before the disconnect", okrecv);
	va_barrier(c, "b-idle");
	va_server_accept(&e, vi, "t25");
	memset(r[0]->DS[0].Local.Data.Address, 0, 64);
	r[0]->DS[0].Local.Length = 64;
	r[0]->CS.Length = 64;
	va_post_recv(&e, vi, r[0]);
	va_barrier(c, "b-reposted");
	va_expect_desc(&e, va_recv_wait(&e, vi), r[0], VIP_STATUS_OP_RECEIVE, "first new receive");
	size_t bad;
	VA_TRUE(c, r[0]->CS.Length == 32 &&
			   va_check_fill(r[0]->DS[0].Local.Data.Address, 32, 251, &bad),
		"first receive after reconnect: Length %u / data not the new message (old data?)",
		r[0]->CS.Length);
	va_close_vi(&e, vi, "done");
}

/* ---- T26 -------------------------------------------------------------------------------- */
/* The peer has gone: one send to make sure we notice, then the VI must reach Error. */
static void provoke(struct va_env *e, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *s)
{
	va_post_send(e, vi, s);
	(void)va_send_wait(e, vi);
	va_wait_state(e, vi, VIP_STATE_ERROR, VA_WAIT_MS);
}

void t26_a(struct va_ctx *c)
{
	struct va_env e;
	static int tag;
	va_env_open(c, &e, 65536);
	VA_OK(c, VipErrorCallback(e.nic, &tag, va_async_handler));
	VIP_VI_HANDLE vi = va_vi(&e, RD, NULL, NULL);
	va_barrier(c, "open");
	va_client_connect(&e, vi, "t26");
	va_barrier(c, "b-gone");
	VIP_DESCRIPTOR *s = va_desc1(&e, 0, va_alloc(&e, 16), 16);
	provoke(&e, vi, s);
	long long end = va_now_ms() + VA_WAIT_MS;
	while (!__atomic_load_n(&va_async.n, __ATOMIC_SEQ_CST) && va_now_ms() < end)
		va_sleep_ms(5);
	VA_TRUE(c, va_async.n > 0,
		"no async error reached the handler after the connection was lost");
	VA_TRUE(c, va_async.ctx == &tag && va_async.ed.NicHandle == e.nic &&
			   va_async.ed.ResourceCode == VIP_RESOURCE_VI &&
			   va_async.ed.ViHandle == vi &&
			   (unsigned)va_async.ed.ErrorCode <= VIP_ERROR_CATASTROPHIC,
		"error descriptor: ctx %p nic %p resource %d error %d vi %p; expected %p %p "
		"VI(1) a VIP_ERROR_CODE %p", va_async.ctx, va_async.ed.NicHandle,
		(int)va_async.ed.ResourceCode, (int)va_async.ed.ErrorCode, va_async.ed.ViHandle,
		(void *)&tag, e.nic, vi);
	/* which error depends on the race between the peer's close and our send: CONN_LOST,
	 * or the peer's Terminate (e.g. RECVQ_EMPTY) if our send got there first */
	va_note(c, "async error code %d", (int)va_async.ed.ErrorCode);
	/* NULL restores the default handler: ours is no longer called */
	VA_OK(c, VipErrorCallback(e.nic, &tag, NULL));
	int before = __atomic_load_n(&va_async.n, __ATOMIC_SEQ_CST);
	VA_OK(c, VipDisconnect(vi));
	VIP_DESCRIPTOR *got;
	while (VipSendDone(vi, &got) == VIP_SUCCESS)
		;
	va_barrier(c, "again");
	va_client_connect(&e, vi, "t26-2");
	va_barrier(c, "b-gone-2");
	provoke(&e, vi, s);
	va_sleep_ms(500);
	int after = __atomic_load_n(&va_async.n, __ATOMIC_SEQ_CST);
	VA_TRUE(c, after == before, "the handler ran %d more time(s) after it was unregistered",
		after - before);
	va_close_vi(&e, vi, "done");
}

void t26_b(struct va_ctx *c)
{
	struct va_env e;
	VIP_DESCRIPTOR *got;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_server_accept(&e, vi, "t26");
	VA_OK(c, VipDisconnect(vi));
	while (VipRecvDone(vi, &got) == VIP_SUCCESS)
		;
	va_barrier(c, "b-gone");
	va_barrier(c, "again");
	va_server_accept(&e, vi, "t26-2");
	VA_OK(c, VipDisconnect(vi));
	va_barrier(c, "b-gone-2");
	va_barrier(c, "done");
	VA_OK(c, VipDestroyVi(vi));
	va_env_close(&e);
}
