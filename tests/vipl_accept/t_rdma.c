/* T18-T21: RDMA Write without and with immediate, RDMA Write protection on RD VIs, RDMA Read,
 * send-queue ordering and the queue fence (docs/acceptance-vipl.md). */
#include <stdio.h>
#include <string.h>

#include "va.h"

#define RD VIP_SERVICE_RELIABLE_DELIVERY
#define UR VIP_SERVICE_UNRELIABLE

/* ---- T18 -------------------------------------------------------------------------------- */
void t18_a(struct va_ctx *c)
{
	struct va_env e;
	struct va_msg m;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_client_connect(&e, vi, "t18");
	va_get(c, "target", &m, 20000);
	uint8_t *src = va_alloc(&e, 1024);
	va_fill(src, 1024, 18);
	VIP_DESCRIPTOR *w = va_rdma_desc(&e, VIP_CONTROL_OP_RDMAWRITE, m.v[0],
					 (VIP_MEM_HANDLE)m.v[1], src, 256);
	va_post_send(&e, vi, w);
	va_expect_desc(&e, va_send_wait(&e, vi), w, VIP_STATUS_OP_RDMA_WRITE, "RDMA Write");
	va_barrier(c, "written");
	va_barrier(c, "checked");   /* B has seen the data and its untouched receive */
	VIP_DESCRIPTOR *wi = va_rdma_desc(&e, VIP_CONTROL_OP_RDMAWRITE | VIP_CONTROL_IMMEDIATE,
					  m.v[0] + 1024, (VIP_MEM_HANDLE)m.v[1], src + 256, 512);
	wi->CS.ImmediateData = 0xCAFEF00D;
	va_post_send(&e, vi, wi);
	va_expect_desc(&e, va_send_wait(&e, vi), wi, VIP_STATUS_OP_RDMA_WRITE,
		       "RDMA Write with immediate");
	va_close_vi(&e, vi, "done");
}

void t18_b(struct va_ctx *c)
{
	struct va_env e;
	char b[128];
	VIP_DESCRIPTOR *got = NULL;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_server_accept(&e, vi, "t18");
	uint8_t *t = va_alloc(&e, 4096), *rb = va_alloc(&e, 64);
	VIP_DESCRIPTOR *r = va_desc1(&e, 0, rb, 64);
	va_post_recv(&e, vi, r);
	va_put(c, "target", (uint64_t)(uintptr_t)t, e.mh, 0, 0);
	va_barrier(c, "written");
	/* RD: the writer's Done means transmitted, not placed; the data must arrive soon */
	size_t bad = 0;
	long long end = va_now_ms() + VA_WAIT_MS;
	while (!va_check_fill(t, 256, 18, &bad) && va_now_ms() < end)
		va_sleep_ms(1);
	VA_TRUE(c, va_check_fill(t, 256, 18, &bad), "RDMA Write target differs at byte %zu "
		"%u ms after the write completed", bad, (unsigned)VA_WAIT_MS);
	VA_RC(c, VipRecvDone(vi, &got), VIP_NOT_DONE);
	va_barrier(c, "checked");
	got = va_recv_wait(&e, vi);
	/* visible as soon as the receive completes: checked before anything else */
	VA_TRUE(c, got == r, "dequeued %p, expected %p", (void *)got, (void *)r);
	uint8_t want[1024];
	va_fill(want, 1024, 18);
	VA_TRUE(c, memcmp(t + 1024, want + 256, 512) == 0,
		"data of the RDMA Write with immediate not visible when its receive completed");
	uint32_t st = r->CS.Status;
	VA_TRUE(c, (st & VIP_STATUS_DONE) && !(st & VIP_STATUS_ERROR_MASK) &&
			   (st & VIP_STATUS_OP_MASK) == VIP_STATUS_OP_REMOTE_RDMA_WRITE &&
			   (st & VIP_STATUS_IMMEDIATE) && r->CS.ImmediateData == 0xCAFEF00D,
		"receive consumed by the write: status %s imm 0x%08x; expected REMOTE_RDMA_WRITE, "
		"IMMEDIATE, 0xCAFEF00D", va_status_str(st, b, sizeof b), r->CS.ImmediateData);
	va_note(c, "receive of the RDMA Write with immediate: Length %u", r->CS.Length);
	va_close_vi(&e, vi, "done");
}

/* ---- T19 -------------------------------------------------------------------------------- */
static const char *const t19_case[3] = { "region without EnableRdmaWrite",
					 "target VI without EnableRdmaWrite",
					 "region Ptag != target VI Ptag" };

/* Both sides: the VIs end in Error; an async RDMAW_PROT or CONN_LOST naming our VI counts. */
static void t19_expect_error(struct va_env *e, VIP_VI_HANDLE vi, int k)
{
	va_wait_state(e, vi, VIP_STATE_ERROR, VA_WAIT_MS);
	long long end = va_now_ms() + 2000;
	while (!__atomic_load_n(&va_async.n, __ATOMIC_SEQ_CST) && va_now_ms() < end)
		va_sleep_ms(5);
	int got = __atomic_load_n(&va_async.n, __ATOMIC_SEQ_CST);
	bool ok = got && (va_async.ed.ErrorCode == VIP_ERROR_RDMAW_PROT ||
			  va_async.ed.ErrorCode == VIP_ERROR_CONN_LOST) &&
		  va_async.ed.ViHandle == vi && va_async.ed.NicHandle == e->nic;
	va_note(e->ctx, "case %d (%s): %d async error(s), first code %d VI %s", k, t19_case[k],
		got, got ? (int)va_async.ed.ErrorCode : -1,
		got ? (va_async.ed.ViHandle == vi ? "ours" : "other") : "-");
	va_put(e->ctx, "async", ok, 0, 0, 0);
	struct va_msg m;
	va_get(e->ctx, "async", &m, 20000);
	VA_TRUE(e->ctx, ok || m.v[0], "case %d (%s): neither side got an async RDMAW_PROT / "
		"CONN_LOST error naming its VI", k, t19_case[k]);
	memset(&va_async, 0, sizeof va_async);
}

void t19_a(struct va_ctx *c)
{
	struct va_env e;
	struct va_msg m;
	char disc[16];
	va_env_open(c, &e, 65536);
	VA_OK(c, VipErrorCallback(e.nic, &va_async, va_async_handler));
	uint8_t *src = va_alloc(&e, 256);
	memset(src, 0x11, 256);
	for (int k = 0; k < 3; k++) {
		VIP_VI_HANDLE vi = va_vi(&e, RD, NULL, NULL);
		snprintf(disc, sizeof disc, "t19-%d", k);
		va_barrier(c, "open");
		va_client_connect(&e, vi, disc);
		va_get(c, "target", &m, 20000);
		VIP_DESCRIPTOR *w = va_rdma_desc(&e, VIP_CONTROL_OP_RDMAWRITE, m.v[0],
						 (VIP_MEM_HANDLE)m.v[1], src, 256);
		va_post_send(&e, vi, w);
		(void)va_send_wait(&e, vi);
		t19_expect_error(&e, vi, k);
		va_barrier(c, "checked");
		va_teardown(&e, vi);
	}
	va_env_close(&e);
}

void t19_b(struct va_ctx *c)
{
	struct va_env e;
	char disc[16];
	va_env_open(c, &e, 65536);
	VA_OK(c, VipErrorCallback(e.nic, &va_async, va_async_handler));
	static uint8_t t[4096] __attribute__((aligned(4096)));
	VIP_PROTECTION_HANDLE other;
	VA_OK(c, VipCreatePtag(e.nic, &other));
	for (int k = 0; k < 3; k++) {
		VIP_VI_ATTRIBUTES a = va_vi_attrs(&e, RD);
		a.EnableRdmaWrite = k != 1;
		VIP_MEM_ATTRIBUTES ma = { .Ptag = k == 2 ? other : e.ptag,
					  .EnableRdmaWrite = k != 0 };
		VIP_MEM_HANDLE h;
		memset(t, 0x5a, sizeof t);
		VA_OK(c, VipRegisterMem(e.nic, t, sizeof t, &ma, &h));
		VIP_VI_HANDLE vi = va_vi_attr(&e, &a, NULL, NULL);
		snprintf(disc, sizeof disc, "t19-%d", k);
		va_barrier(c, "open");
		va_server_accept(&e, vi, disc);
		va_put(c, "target", (uint64_t)(uintptr_t)t, h, 0, 0);
		t19_expect_error(&e, vi, k);
		for (size_t i = 0; i < sizeof t; i++)
			VA_TRUE(c, t[i] == 0x5a, "case %d (%s): target memory changed at byte %zu",
				k, t19_case[k], i);
		va_barrier(c, "checked");
		va_teardown(&e, vi);
		VA_OK(c, VipDeregisterMem(e.nic, t, h));
	}
	VA_OK(c, VipDestroyPtag(e.nic, other));
	va_env_close(&e);
}

/* ---- T20 -------------------------------------------------------------------------------- */
static bool read_supported(struct va_env *e)
{
	return (e->attr.RDMAReadSupport & RD) != 0;
}

/* Unreliable: posting a Read is a format error. */
static void t20_read_on_ur(struct va_env *e, uint8_t *dst)
{
	char b[128];
	VIP_VI_HANDLE ur = va_vi(e, UR, NULL, NULL);
	va_client_connect(e, ur, "t20-ur");
	VIP_DESCRIPTOR *rd = va_rdma_desc(e, VIP_CONTROL_OP_RDMAREAD, (uint64_t)(uintptr_t)dst,
					  e->mh, dst, 100);
	va_post_send(e, ur, rd);
	VIP_DESCRIPTOR *got = va_send_wait(e, ur);
	VA_TRUE(e->ctx, got == rd && (rd->CS.Status & VIP_STATUS_FORMAT_ERROR),
		"RDMA Read on an Unreliable VI: status %s, expected FORMAT_ERROR",
		va_status_str(rd->CS.Status, b, sizeof b));
	va_barrier(e->ctx, "ur-done");
	va_teardown(e, ur);
}

/* RD: 3000 B from a contiguous remote buffer into three 1000 B segments. */
static void t20_read_3000(struct va_env *e, VIP_VI_HANDLE vi, const struct va_msg *m)
{
	VIP_DESCRIPTOR *r3 = va_desc(e, 4);
	r3->CS.Control = VIP_CONTROL_OP_RDMAREAD;
	r3->CS.SegCount = 4;
	r3->CS.Length = 3000;
	r3->DS[0].Remote.Data.AddressBits = m->v[0];
	r3->DS[0].Remote.Handle = (VIP_MEM_HANDLE)m->v[1];
	uint8_t *seg[3], all[3000];
	for (unsigned i = 0; i < 3; i++) {
		seg[i] = va_alloc(e, 1000);
		va_seg(e, r3, 1 + i, seg[i], 1000);
	}
	va_post_send(e, vi, r3);
	va_expect_desc(e, va_send_wait(e, vi), r3, VIP_STATUS_OP_RDMA_READ, "3000-byte Read");
	for (unsigned i = 0; i < 3; i++)
		memcpy(all + 1000 * i, seg[i], 1000);
	size_t bad;
	VA_TRUE(e->ctx, va_check_fill(all, 3000, 20, &bad), "read data differs at byte %zu", bad);
}

void t20_a(struct va_ctx *c)
{
	struct va_env e;
	struct va_msg m;
	char b[128];
	va_env_open(c, &e, 65536);
	if (!read_supported(&e)) {
		VIP_VI_ATTRIBUTES a = va_vi_attrs(&e, RD);
		VIP_VI_HANDLE vi;
		a.EnableRdmaRead = VIP_TRUE;
		VA_RC(c, VipCreateVi(e.nic, &a, NULL, NULL, &vi), VIP_INVALID_RDMAREAD);
		va_barrier(c, "unsupported");
		va_env_close(&e);
		return;
	}
	va_barrier(c, "supported");
	uint8_t *dst = va_alloc(&e, 3000);
	t20_read_on_ur(&e, dst);
	VIP_VI_HANDLE vi = va_vi(&e, RD, NULL, NULL);
	va_client_connect(&e, vi, "t20-rd");
	va_get(c, "source", &m, 20000);
	t20_read_3000(&e, vi, &m);
	va_barrier(c, "read");
	/* a source region without EnableRdmaRead */
	va_get(c, "protected", &m, 20000);
	VIP_DESCRIPTOR *rp = va_rdma_desc(&e, VIP_CONTROL_OP_RDMAREAD, m.v[0],
					  (VIP_MEM_HANDLE)m.v[1], dst, 100);
	va_post_send(&e, vi, rp);
	VIP_DESCRIPTOR *got = va_send_wait(&e, vi);
	VA_TRUE(c, got == rp && (rp->CS.Status & VIP_STATUS_RDMA_PROT_ERROR),
		"Read of a region without EnableRdmaRead: status %s, expected RDMA_PROT_ERROR",
		va_status_str(rp->CS.Status, b, sizeof b));
	va_close_vi(&e, vi, "done");
}

void t20_b(struct va_ctx *c)
{
	struct va_env e;
	VIP_DESCRIPTOR *got;
	struct va_msg m;
	va_env_open(c, &e, 65536);
	if (!read_supported(&e)) {
		va_get(c, "unsupported", &m, 20000);
		va_put(c, "unsupported", 0, 0, 0, 0);
		va_env_close(&e);
		return;
	}
	va_barrier(c, "supported");
	VIP_VI_HANDLE ur = va_vi(&e, UR, NULL, NULL);
	va_server_accept(&e, ur, "t20-ur");
	va_barrier(c, "ur-done");
	va_teardown(&e, ur);
	VIP_VI_HANDLE vi = va_vi(&e, RD, NULL, NULL);
	va_server_accept(&e, vi, "t20-rd");
	uint8_t *src = va_alloc(&e, 3000), *rb = va_alloc(&e, 64);
	va_fill(src, 3000, 20);
	VIP_DESCRIPTOR *r = va_desc1(&e, 0, rb, 64);
	va_post_recv(&e, vi, r);
	va_put(c, "source", (uint64_t)(uintptr_t)src, e.mh, 0, 0);
	va_barrier(c, "read");
	VA_RC(c, VipRecvDone(vi, &got), VIP_NOT_DONE);
	static uint8_t prot[4096] __attribute__((aligned(4096)));
	VIP_MEM_HANDLE ph;
	VIP_MEM_ATTRIBUTES ma = { .Ptag = e.ptag, .EnableRdmaRead = VIP_FALSE };
	VA_OK(c, VipRegisterMem(e.nic, prot, sizeof prot, &ma, &ph));
	va_put(c, "protected", (uint64_t)(uintptr_t)prot, ph, 0, 0);
	va_barrier(c, "done");
	va_teardown(&e, vi);
	VA_OK(c, VipDeregisterMem(e.nic, prot, ph));
	va_env_close(&e);
}

/* ---- T21 -------------------------------------------------------------------------------- */
#define T21_ROUNDS 20

void t21_a(struct va_ctx *c)
{
	struct va_env e;
	struct va_msg m;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_client_connect(&e, vi, "t21");
	va_get(c, "target", &m, 20000);
	uint8_t *buf = va_alloc(&e, 64);
	VIP_DESCRIPTOR *s1 = va_desc1(&e, 0, buf, 16), *s3 = va_desc1(&e, 0, buf, 16);
	VIP_DESCRIPTOR *w2 = va_rdma_desc(&e, VIP_CONTROL_OP_RDMAWRITE, m.v[0],
					  (VIP_MEM_HANDLE)m.v[1], buf, 32);
	for (unsigned i = 0; i < T21_ROUNDS; i++) {
		va_barrier(c, "posted");
		va_post_send(&e, vi, s1);
		va_post_send(&e, vi, w2);
		va_post_send(&e, vi, s3);
		va_expect_desc(&e, va_send_wait(&e, vi), s1, VIP_STATUS_OP_SEND, "Send1 first");
		va_expect_desc(&e, va_send_wait(&e, vi), w2, VIP_STATUS_OP_RDMA_WRITE, "Write2 second");
		va_expect_desc(&e, va_send_wait(&e, vi), s3, VIP_STATUS_OP_SEND, "Send3 third");
	}
	va_barrier(c, "ordered");
	if (!(e.attr.RDMAReadSupport & RD)) {
		va_note(c, "RDMA Read not supported: fence part not applicable");
		va_close_vi(&e, vi, "done");
		return;
	}
	/* [Read R of X, Send S with QFENCE]; the peer overwrites X when S arrives */
	uint8_t *rbuf = va_alloc(&e, 64);
	VIP_DESCRIPTOR *r = va_rdma_desc(&e, VIP_CONTROL_OP_RDMAREAD, m.v[2],
					 (VIP_MEM_HANDLE)m.v[1], rbuf, 64);
	VIP_DESCRIPTOR *s = va_desc1(&e, VIP_CONTROL_QFENCE, buf, 8);
	for (unsigned i = 0; i < T21_ROUNDS / 2; i++) {
		va_barrier(c, "x-old");
		memset(rbuf, 0, 64);
		va_post_send(&e, vi, r);
		va_post_send(&e, vi, s);
		va_expect_desc(&e, va_send_wait(&e, vi), r, VIP_STATUS_OP_RDMA_READ, "Read R");
		va_expect_desc(&e, va_send_wait(&e, vi), s, VIP_STATUS_OP_SEND, "fenced Send S");
		char want[64];
		memset(want, 0, sizeof want);
		snprintf(want, sizeof want, "OLD-%u", i);
		VA_TRUE(c, memcmp(rbuf, want, 64) == 0,
			"round %u: the Read returned '%.16s', expected the old value '%s'", i,
			(char *)rbuf, want);
		va_barrier(c, "x-checked");
	}
	va_close_vi(&e, vi, "done");
}

void t21_b(struct va_ctx *c)
{
	struct va_env e;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_server_accept(&e, vi, "t21");
	uint8_t *t = va_alloc(&e, 64), *x = va_alloc(&e, 64), *rb = va_alloc(&e, 2 * 64);
	VIP_DESCRIPTOR *d0 = va_desc1(&e, 0, rb, 64), *d1 = va_desc1(&e, 0, rb + 64, 64);
	va_put(c, "target", (uint64_t)(uintptr_t)t, e.mh, (uint64_t)(uintptr_t)x, 0);
	for (unsigned i = 0; i < T21_ROUNDS; i++) {
		va_post_recv(&e, vi, d0);
		va_post_recv(&e, vi, d1);
		va_barrier(c, "posted");
		va_expect_desc(&e, va_recv_wait(&e, vi), d0, VIP_STATUS_OP_RECEIVE, "Send1");
		va_expect_desc(&e, va_recv_wait(&e, vi), d1, VIP_STATUS_OP_RECEIVE, "Send3");
	}
	va_barrier(c, "ordered");
	if (e.attr.RDMAReadSupport & RD) {
		for (unsigned i = 0; i < T21_ROUNDS / 2; i++) {
			memset(x, 0, 64);
			snprintf((char *)x, 64, "OLD-%u", i);
			va_post_recv(&e, vi, d0);
			va_barrier(c, "x-old");
			va_expect_desc(&e, va_recv_wait(&e, vi), d0, VIP_STATUS_OP_RECEIVE, "S");
			memset(x, 0, 64);
			snprintf((char *)x, 64, "NEW-%u", i);
			va_barrier(c, "x-checked");
		}
	}
	va_close_vi(&e, vi, "done");
}
