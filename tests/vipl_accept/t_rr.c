/* T16-T17: Reliable Reception. An empty receive queue fails the sender's descriptor with
 * REMOTE_DESC_ERROR and nothing behind it is delivered; a send is Done only once its data is
 * placed; an RDMA Write into a region without EnableRdmaWrite fails the sender's descriptor
 * with RDMA_PROT_ERROR and leaves the remote memory unchanged (docs/acceptance-vipl.md). */
#include <string.h>

#include "va.h"

#define RR VIP_SERVICE_RELIABLE_RECEPTION

static void need_rr(struct va_env *e)
{
	VA_TRUE(e->ctx, e->attr.ReliabilityLevelSupport & RR,
		"ReliabilityLevelSupport 0x%x: Reliable Reception is not offered (docs/decisions.md D114 "
		"says it is)", e->attr.ReliabilityLevelSupport);
}

/* ---- T16 -------------------------------------------------------------------------------- */
/* The start of both T16 roles: va_open_vi's, on a NIC that must offer Reliable Reception. */
static VIP_VI_HANDLE rr_open(struct va_ctx *c, struct va_env *e)
{
	va_env_open(c, e, 65536);
	need_rr(e);
	VIP_VI_HANDLE vi = va_vi(e, RR, NULL, NULL);
	va_barrier(c, "open");
	return vi;
}

void t16_a(struct va_ctx *c)
{
	struct va_env e;
	char b[128];
	VIP_VI_HANDLE vi = rr_open(c, &e);
	va_client_connect(&e, vi, "t16");
	va_barrier(c, "connected");
	uint8_t *buf = va_alloc(&e, 64);
	VIP_DESCRIPTOR *s[3];
	for (int i = 0; i < 3; i++) {
		s[i] = va_desc1(&e, 0, buf, 64);
		va_fill(buf, 64, 160 + (unsigned)i);
	}
	for (int i = 0; i < 3; i++)
		va_post_send(&e, vi, s[i]);
	for (int i = 0; i < 3; i++) {
		VIP_DESCRIPTOR *got = va_send_wait(&e, vi);
		uint32_t st = got->CS.Status;
		uint32_t want = i == 0 ? VIP_STATUS_REMOTE_DESC_ERROR : VIP_STATUS_DESC_FLUSHED_ERROR;
		VA_TRUE(c, got == s[i] && (st & VIP_STATUS_DONE) && (st & want),
			"send %d: status %s, expected DONE with 0x%x", i + 1,
			va_status_str(st, b, sizeof b), want);
		va_note(c, "send %d: %s", i + 1, va_status_str(st, b, sizeof b));
	}
	va_wait_state(&e, vi, VIP_STATE_ERROR, VA_WAIT_MS);
	va_barrier(c, "sender-checked");
	va_close_vi(&e, vi, "done");
}

void t16_b(struct va_ctx *c)
{
	struct va_env e;
	char b[128];
	VIP_VI_HANDLE vi = rr_open(c, &e);
	va_server_accept(&e, vi, "t16");
	va_barrier(c, "connected");
	va_barrier(c, "sender-checked");
	/* repost: nothing sent after the failing send may ever arrive */
	uint8_t *r = va_alloc(&e, 2 * 64);
	VIP_DESCRIPTOR *d0 = va_desc1(&e, 0, r, 64), *d1 = va_desc1(&e, 0, r + 64, 64);
	va_post_recv(&e, vi, d0);
	va_post_recv(&e, vi, d1);
	va_sleep_ms(500);
	VIP_DESCRIPTOR *got;
	for (int i = 0; i < 2; i++) {
		VIP_RETURN rc = VipRecvDone(vi, &got);
		if (rc == VIP_NOT_DONE)
			break;
		VA_RC(c, rc, VIP_SUCCESS);
		VA_TRUE(c, got->CS.Status & VIP_STATUS_ERROR_MASK,
			"a receive posted after the failure completed without error (%s, Length "
			"%u): a flushed send was delivered",
			va_status_str(got->CS.Status, b, sizeof b), got->CS.Length);
	}
	va_close_vi(&e, vi, "done");
}

/* ---- T17 -------------------------------------------------------------------------------- */
#define T17_MSG 16384
#define T17_ROUNDS 8

void t17_a(struct va_ctx *c)
{
	struct va_env e;
	char b[128];
	struct va_msg m;
	va_env_open(c, &e, 4 * T17_MSG + 65536);
	need_rr(&e);
	VIP_VI_HANDLE vi = va_vi(&e, RR, NULL, NULL);
	va_barrier(c, "open");
	va_client_connect(&e, vi, "t17");
	/* completion timing: when our send is Done, the data is already in the peer's buffer */
	uint8_t *buf = va_alloc(&e, T17_MSG);
	VIP_DESCRIPTOR *d = va_desc1(&e, 0, buf, T17_MSG);
	for (unsigned i = 0; i < T17_ROUNDS; i++) {
		va_fill(buf, T17_MSG, 170 + i);
		va_barrier(c, "posted");
		va_post_send(&e, vi, d);
		va_expect_desc(&e, va_send_wait(&e, vi), d, VIP_STATUS_OP_SEND, "RR send");
		va_put(c, "send-done", i, 0, 0, 0);
		va_barrier(c, "checked");
	}
	/* RDMA Write into a region without EnableRdmaWrite */
	va_get(c, "target", &m, 20000);
	uint8_t *src = va_alloc(&e, 256);
	memset(src, 0x11, 256);
	VIP_DESCRIPTOR *w = va_rdma_desc(&e, VIP_CONTROL_OP_RDMAWRITE, m.v[0],
					 (VIP_MEM_HANDLE)m.v[1], src, 256);
	va_post_send(&e, vi, w);
	VIP_DESCRIPTOR *got = va_send_wait(&e, vi);
	VA_TRUE(c, got == w && (w->CS.Status & VIP_STATUS_DONE) &&
			   (w->CS.Status & VIP_STATUS_RDMA_PROT_ERROR),
		"RDMA Write to a write-protected region: status %s, expected DONE|RDMA_PROT",
		va_status_str(w->CS.Status, b, sizeof b));
	va_barrier(c, "written");
	va_close_vi(&e, vi, "done");
}

void t17_b(struct va_ctx *c)
{
	struct va_env e;
	struct va_msg m;
	va_env_open(c, &e, 4 * T17_MSG + 65536);
	need_rr(&e);
	VIP_VI_ATTRIBUTES a = va_vi_attrs(&e, RR);
	a.EnableRdmaWrite = VIP_TRUE;
	VIP_VI_HANDLE vi = va_vi_attr(&e, &a, NULL, NULL);
	va_barrier(c, "open");
	va_server_accept(&e, vi, "t17");
	uint8_t *r = va_alloc(&e, T17_MSG);
	VIP_DESCRIPTOR *d = va_desc1(&e, 0, r, T17_MSG);
	for (unsigned i = 0; i < T17_ROUNDS; i++) {
		memset(r, 0, T17_MSG);
		va_post_recv(&e, vi, d);
		va_barrier(c, "posted");
		va_get(c, "send-done", &m, 20000);
		size_t bad;
		/* read the buffer before any VIPL call: placement preceded the sender's Done */
		VA_TRUE(c, va_check_fill(r, T17_MSG, 170 + i, &bad),
			"round %u: the sender's descriptor was Done but our buffer differs at byte "
			"%zu (data not yet placed)", i, bad);
		va_expect_desc(&e, va_recv_wait(&e, vi), d, VIP_STATUS_OP_RECEIVE, "RR receive");
		va_barrier(c, "checked");
	}
	static uint8_t prot[4096] __attribute__((aligned(4096)));
	memset(prot, 0x5a, sizeof prot);
	VIP_MEM_HANDLE ph;
	VIP_MEM_ATTRIBUTES ma = { .Ptag = e.ptag, .EnableRdmaWrite = VIP_FALSE };
	VA_OK(c, VipRegisterMem(e.nic, prot, sizeof prot, &ma, &ph));
	va_put(c, "target", (uint64_t)(uintptr_t)prot, ph, 0, 0);
	va_barrier(c, "written");
	for (size_t i = 0; i < sizeof prot; i++)
		VA_TRUE(c, prot[i] == 0x5a, "write-protected memory changed at byte %zu", i);
	va_barrier(c, "done");
	va_teardown(&e, vi);
	VA_OK(c, VipDeregisterMem(e.nic, prot, ph));
	va_env_close(&e);
}
