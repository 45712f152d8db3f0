/* T12-T15: scatter/gather with immediate data, local descriptor errors, a receive too small
 * on Reliable Delivery and on Unreliable VIs (docs/acceptance-vipl.md). */
#include <string.h>

#include "va.h"

#define RD VIP_SERVICE_RELIABLE_DELIVERY
#define UR VIP_SERVICE_UNRELIABLE

static bool has_error(uint32_t st)
{
	return (st & VIP_STATUS_DONE) && (st & VIP_STATUS_ERROR_MASK);
}

/* ---- T12 -------------------------------------------------------------------------------- */
void t12_a(struct va_ctx *c)
{
	struct va_env e;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_client_connect(&e, vi, "t12");
	uint8_t *src = va_alloc(&e, 100);
	va_fill(src, 100, 12);
	/* 10 B, 0 B, 90 B from three separate buffers */
	uint8_t *s0 = va_alloc(&e, 10), *s1 = va_alloc(&e, 16), *s2 = va_alloc(&e, 90);
	memcpy(s0, src, 10);
	memcpy(s2, src + 10, 90);
	VIP_DESCRIPTOR *d = va_desc(&e, 3);
	d->CS.Control = VIP_CONTROL_OP_SENDRECV | VIP_CONTROL_IMMEDIATE;
	d->CS.ImmediateData = 0xDEADBEEF;
	d->CS.SegCount = 3;
	d->CS.Length = 100;
	va_seg(&e, d, 0, s0, 10);
	va_seg(&e, d, 1, s1, 0);
	va_seg(&e, d, 2, s2, 90);
	VIP_DESCRIPTOR *z = va_desc(&e, 0);
	z->CS.Control = VIP_CONTROL_OP_SENDRECV | VIP_CONTROL_IMMEDIATE;
	z->CS.ImmediateData = 0x12345678;
	va_barrier(c, "posted");
	va_post_send(&e, vi, d);
	va_post_send(&e, vi, z);
	va_expect_desc(&e, va_send_wait(&e, vi), d, VIP_STATUS_OP_SEND, "3-segment send");
	va_expect_desc(&e, va_send_wait(&e, vi), z, VIP_STATUS_OP_SEND, "0-segment send");
	va_close_vi(&e, vi, "done");
}

void t12_b(struct va_ctx *c)
{
	struct va_env e;
	char b[128];
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_server_accept(&e, vi, "t12");
	VIP_DESCRIPTOR *d = va_desc(&e, 4);
	uint8_t *r[4];
	d->CS.SegCount = 4;
	for (int i = 0; i < 4; i++) {
		r[i] = va_alloc(&e, 30);
		memset(r[i], 0xee, 30);
		va_seg(&e, d, (unsigned)i, r[i], 30);
	}
	uint8_t *zb = va_alloc(&e, 64);
	VIP_DESCRIPTOR *z = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, zb, 64);
	va_post_recv(&e, vi, d);
	va_post_recv(&e, vi, z);
	va_barrier(c, "posted");
	va_expect_desc(&e, va_recv_wait(&e, vi), d, VIP_STATUS_OP_RECEIVE, "4-segment receive");
	uint32_t st = d->CS.Status;
	VA_TRUE(c, d->CS.Length == 100 && (st & VIP_STATUS_IMMEDIATE) &&
			   d->CS.ImmediateData == 0xDEADBEEF,
		"receive: Length %u status %s imm 0x%08x; expected 100, IMMEDIATE, 0xDEADBEEF",
		d->CS.Length, va_status_str(st, b, sizeof b), d->CS.ImmediateData);
	uint8_t all[120];
	for (int i = 0; i < 4; i++)
		memcpy(all + 30 * i, r[i], 30);
	size_t bad;
	VA_TRUE(c, va_check_fill(all, 100, 12, &bad), "scattered data differs at byte %zu", bad);
	VA_TRUE(c, r[3][10] == 0xee, "byte 101 of the receive was written");
	va_expect_desc(&e, va_recv_wait(&e, vi), z, VIP_STATUS_OP_RECEIVE, "0-byte receive");
	st = z->CS.Status;
	VA_TRUE(c, z->CS.Length == 0 && (st & VIP_STATUS_IMMEDIATE) &&
			   z->CS.ImmediateData == 0x12345678,
		"0-segment send: Length %u status %s imm 0x%08x; expected 0, IMMEDIATE, 0x12345678",
		z->CS.Length, va_status_str(st, b, sizeof b), z->CS.ImmediateData);
	va_close_vi(&e, vi, "done");
}

/* ---- T13 -------------------------------------------------------------------------------- */
/* Posts d (send or receive queue), expects VIP_SUCCESS and a completion with bit `want`. */
static void local_error(struct va_env *e, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d, bool recv,
			uint32_t want, const char *what)
{
	char b[128];
	VIP_DESCRIPTOR *got = NULL;
	if (recv)
		va_post_recv(e, vi, d);
	else
		va_post_send(e, vi, d);
	VIP_RETURN rc = recv ? VipRecvWait(vi, VA_WAIT_MS, &got) : VipSendWait(vi, VA_WAIT_MS, &got);
	VA_TRUE(e->ctx, rc == VIP_SUCCESS && got == d,
		"%s: wait returned %s with %p (posted %p)", what, va_rc_name(rc), (void *)got,
		(void *)d);
	VA_TRUE(e->ctx, (d->CS.Status & VIP_STATUS_DONE) && (d->CS.Status & want),
		"%s: status %s, expected DONE with 0x%x", what,
		va_status_str(d->CS.Status, b, sizeof b), want);
	va_note(e->ctx, "%s: %s", what, va_status_str(d->CS.Status, b, sizeof b));
}

void t13_a(struct va_ctx *c)
{
	struct va_env e;
	va_env_open(c, &e, 65536);
	/* Unreliable: a local error must not take the VI down, so each case is seen alone */
	VIP_VI_HANDLE vi = va_vi(&e, UR, NULL, NULL);
	va_barrier(c, "open");
	va_client_connect(&e, vi, "t13");
	uint8_t *buf = va_alloc(&e, 256);
	VIP_DESCRIPTOR *d = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf, 40);
	d->CS.Length = 50;
	local_error(&e, vi, d, false, VIP_STATUS_LENGTH_ERROR, "Length != sum of segments");
	d = va_desc1(&e, VIP_CONTROL_OP_SENDRECV | 0x0010, buf, 40);
	local_error(&e, vi, d, false, VIP_STATUS_FORMAT_ERROR, "reserved Control bit");
	d = va_desc1(&e, VIP_CONTROL_OP_RESERVED, buf, 40);
	local_error(&e, vi, d, false, VIP_STATUS_FORMAT_ERROR, "op 11b");
	d = va_rdma_desc(&e, VIP_CONTROL_OP_RDMAWRITE, (uint64_t)(uintptr_t)buf, e.mh, buf, 40);
	local_error(&e, vi, d, true, VIP_STATUS_FORMAT_ERROR, "RDMA Write on the receive queue");
	/* a data segment in memory registered under another Ptag */
	VIP_PROTECTION_HANDLE p2;
	VIP_MEM_HANDLE h2;
	VA_OK(c, VipCreatePtag(e.nic, &p2));
	static uint8_t other[4096] __attribute__((aligned(4096)));
	VIP_MEM_ATTRIBUTES ma = { .Ptag = p2 };
	VA_OK(c, VipRegisterMem(e.nic, other, sizeof other, &ma, &h2));
	d = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, other, 40);
	d->DS[0].Local.Handle = h2;
	local_error(&e, vi, d, false, VIP_STATUS_PROTECTION_ERROR, "data segment of another Ptag");
	VIP_VI_STATE st = va_state(&e, vi);
	VA_TRUE(c, st == VIP_STATE_CONNECTED, "after local errors the Unreliable VI is %s",
		va_state_name(st));
	/* none of them reached the peer: its first receive gets this message */
	va_fill(buf, 32, 13);
	d = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf, 32);
	va_post_send(&e, vi, d);
	va_expect_desc(&e, va_send_wait(&e, vi), d, VIP_STATUS_OP_SEND, "valid send");
	va_barrier(c, "done");
	va_teardown(&e, vi);
	VA_OK(c, VipDeregisterMem(e.nic, other, h2));
	VA_OK(c, VipDestroyPtag(e.nic, p2));
	va_env_close(&e);
}

void t13_b(struct va_ctx *c)
{
	struct va_env e;
	va_env_open(c, &e, 65536);
	VIP_VI_HANDLE vi = va_vi(&e, UR, NULL, NULL);
	uint8_t *buf = va_alloc(&e, 256);
	VIP_DESCRIPTOR *d = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf, 256);
	va_post_recv(&e, vi, d);
	va_barrier(c, "open");
	va_server_accept(&e, vi, "t13");
	va_expect_desc(&e, va_recv_wait(&e, vi), d, VIP_STATUS_OP_RECEIVE, "first receive");
	size_t bad;
	VA_TRUE(c, d->CS.Length == 32 && va_check_fill(buf, 32, 13, &bad),
		"first receive: Length %u (expected 32) or data differs: an erroneous descriptor "
		"reached the wire", d->CS.Length);
	va_close_vi(&e, vi, "done");
}

/* ---- T14 / T15: 200 B into a 100 B receive ---------------------------------------------- */
static int t14_async_errors;
static void t14_handler(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *ed)
{
	(void)ctx;
	(void)ed;
	__atomic_add_fetch(&t14_async_errors, 1, __ATOMIC_SEQ_CST);
}

static void small_recv_a(struct va_ctx *c, VIP_RELIABILITY_LEVEL rel, const char *disc)
{
	struct va_env e;
	char b[128];
	va_env_open(c, &e, 65536);
	VA_OK(c, VipErrorCallback(e.nic, NULL, t14_handler));
	VIP_VI_HANDLE vi = va_vi(&e, rel, NULL, NULL);
	va_barrier(c, "open");
	va_client_connect(&e, vi, disc);
	uint8_t *buf = va_alloc(&e, 200);
	va_fill(buf, 200, 14);
	VIP_DESCRIPTOR *big = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf, 200);
	VIP_DESCRIPTOR *ok = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf, 50);
	va_barrier(c, "posted");
	va_post_send(&e, vi, big);
	VIP_DESCRIPTOR *got = va_send_wait(&e, vi);
	va_note(c, "200-byte send: %s", va_status_str(got->CS.Status, b, sizeof b));
	if (rel == UR) {
		va_post_send(&e, vi, ok);
		va_expect_desc(&e, va_send_wait(&e, vi), ok, VIP_STATUS_OP_SEND, "50-byte send");
		va_close_vi(&e, vi, "done");
		return;
	}
	va_barrier(c, "b-error");
	/* RD: the sender learns asynchronously (callback) or on its next operation */
	long long end = va_now_ms() + VA_WAIT_MS;
	while (!__atomic_load_n(&t14_async_errors, __ATOMIC_SEQ_CST) &&
	       va_state(&e, vi) != VIP_STATE_ERROR && va_now_ms() < end)
		va_sleep_ms(5);
	va_post_send(&e, vi, ok);
	got = va_send_wait(&e, vi);
	VA_TRUE(c, got == ok && has_error(ok->CS.Status),
		"send after the peer's error: status %s, expected DONE with an error bit",
		va_status_str(ok->CS.Status, b, sizeof b));
	va_wait_state(&e, vi, VIP_STATE_ERROR, VA_WAIT_MS);
	va_note(c, "async errors seen: %d; next send %s", t14_async_errors,
		va_status_str(ok->CS.Status, b, sizeof b));
	va_close_vi(&e, vi, "done");
}

static void small_recv_b(struct va_ctx *c, VIP_RELIABILITY_LEVEL rel, const char *disc)
{
	struct va_env e;
	char b[128];
	VIP_VI_HANDLE vi = va_open_vi(c, &e, rel);
	va_server_accept(&e, vi, disc);
	uint8_t *r0 = va_alloc(&e, 100), *r1 = va_alloc(&e, 100), *r2 = va_alloc(&e, 100);
	VIP_DESCRIPTOR *d0 = va_desc1(&e, 0, r0, 100), *d1 = va_desc1(&e, 0, r1, 100),
		       *d2 = va_desc1(&e, 0, r2, 100);
	va_post_recv(&e, vi, d0);
	va_post_recv(&e, vi, d1);
	va_post_recv(&e, vi, d2);
	va_barrier(c, "posted");
	VIP_DESCRIPTOR *got = va_recv_wait(&e, vi);
	VA_TRUE(c, got == d0 && (d0->CS.Status & VIP_STATUS_DONE) &&
			   (d0->CS.Status & VIP_STATUS_LENGTH_ERROR),
		"too-small receive: status %s, expected DONE|LENGTH_ERROR",
		va_status_str(d0->CS.Status, b, sizeof b));
	va_note(c, "too-small receive: %s Length %u", va_status_str(d0->CS.Status, b, sizeof b),
		d0->CS.Length);
	if (rel == UR) {
		VIP_VI_STATE st = va_state(&e, vi);
		VA_TRUE(c, st == VIP_STATE_CONNECTED, "Unreliable VI is %s after the length error",
			va_state_name(st));
		va_expect_desc(&e, va_recv_wait(&e, vi), d1, VIP_STATUS_OP_RECEIVE, "next receive");
		size_t bad;
		VA_TRUE(c, d1->CS.Length == 50 && va_check_fill(r1, 50, 14, &bad),
			"next receive: Length %u (expected 50) or data differs", d1->CS.Length);
		va_close_vi(&e, vi, "done");
		return;
	}
	va_wait_state(&e, vi, VIP_STATE_ERROR, VA_WAIT_MS);
	for (VIP_DESCRIPTOR *want = d1; want; want = want == d1 ? d2 : NULL) {
		got = va_recv_wait(&e, vi);
		VA_TRUE(c, got == want && has_error(want->CS.Status),
			"remaining receive: status %s, expected DONE with an error bit",
			va_status_str(want->CS.Status, b, sizeof b));
	}
	/* later posts on the errored VI complete in error */
	va_post_recv(&e, vi, d0);
	got = va_recv_wait(&e, vi);
	VA_TRUE(c, got == d0 && has_error(d0->CS.Status), "receive posted in Error: status %s",
		va_status_str(d0->CS.Status, b, sizeof b));
	VIP_DESCRIPTOR *s = va_desc1(&e, 0, r1, 10);
	va_post_send(&e, vi, s);
	got = va_send_wait(&e, vi);
	VA_TRUE(c, got == s && has_error(s->CS.Status), "send posted in Error: status %s",
		va_status_str(s->CS.Status, b, sizeof b));
	va_barrier(c, "b-error");
	va_close_vi(&e, vi, "done");
}

void t14_a(struct va_ctx *c) { small_recv_a(c, RD, "t14"); }
void t14_b(struct va_ctx *c) { small_recv_b(c, RD, "t14"); }
void t15_a(struct va_ctx *c) { small_recv_a(c, UR, "t15"); }
void t15_b(struct va_ctx *c) { small_recv_b(c, UR, "t15"); }
