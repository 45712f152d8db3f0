/* NEG: invalid handles (NULL, garbage, wrong type, stale), unregistered memory, a wrong
 * protection tag and malformed descriptors (segment counts, lengths over the MTU, reserved
 * bits, misalignment). Every call returns the spec's code or completes with an error status;
 * nothing crashes or hangs, and the connection still carries a valid message afterwards.
 * Run under ASan/UBSan too (build-*-san). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "va.h"

#define UR VIP_SERVICE_UNRELIABLE

static int neg_async, neg_post_desc;
static void neg_handler(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *ed)
{
	(void)ctx;
	__atomic_add_fetch(&neg_async, 1, __ATOMIC_SEQ_CST);
	if (ed->ErrorCode == VIP_ERROR_POST_DESC)
		__atomic_add_fetch(&neg_post_desc, 1, __ATOMIC_SEQ_CST);
}

static void bad_handles(struct va_env *e, VIP_PVOID bad, const char *what)
{
	struct va_ctx *c = e->ctx;
	VIP_DESCRIPTOR *d = NULL;
	VIP_VI_HANDLE vh;
	VIP_BOOLEAN b;
	VIP_VI_STATE st;
	VIP_VI_ATTRIBUTES va = va_vi_attrs(e, UR);
	VIP_NIC_ATTRIBUTES na;
	VIP_CQ_HANDLE cq;
	VIP_PROTECTION_HANDLE p;
	VIP_MEM_HANDLE mh;
	VIP_MEM_ATTRIBUTES ma = { .Ptag = e->ptag };
	VIP_DESCRIPTOR *desc = va_desc(e, 1);
	va_note(c, "handles: %s", what);
	VA_RC(c, VipCloseNic(bad), VIP_INVALID_PARAMETER);
	VA_RC(c, VipQueryNic(bad, &na), VIP_INVALID_PARAMETER);
	VA_RC(c, VipCreateVi(bad, &va, NULL, NULL, &vh), VIP_INVALID_PARAMETER);
	VA_RC(c, VipCreatePtag(bad, &p), VIP_INVALID_PARAMETER);
	VA_RC(c, VipCreateCQ(bad, 1024, &cq), VIP_INVALID_PARAMETER);
	VA_RC(c, VipRegisterMem(bad, e->arena, 4096, &ma, &mh), VIP_INVALID_PARAMETER);
	VA_RC(c, VipDestroyVi(bad), VIP_INVALID_PARAMETER);
	VA_RC(c, VipQueryVi(bad, &st, &va, &b, &b), VIP_INVALID_PARAMETER);
	VA_RC(c, VipSetViAttributes(bad, &va), VIP_INVALID_PARAMETER);
	VA_RC(c, VipPostSend(bad, desc, e->mh), VIP_INVALID_PARAMETER);
	VA_RC(c, VipPostRecv(bad, desc, e->mh), VIP_INVALID_PARAMETER);
	VA_RC(c, VipSendDone(bad, &d), VIP_INVALID_PARAMETER);
	VA_RC(c, VipRecvDone(bad, &d), VIP_INVALID_PARAMETER);
	VA_RC(c, VipSendWait(bad, 10, &d), VIP_INVALID_PARAMETER);
	VA_RC(c, VipRecvWait(bad, 10, &d), VIP_INVALID_PARAMETER);
	VA_RC(c, VipDisconnect(bad), VIP_INVALID_PARAMETER);
	VA_RC(c, VipConnectAccept(bad, bad), VIP_INVALID_PARAMETER);
	VA_RC(c, VipConnectReject(bad), VIP_INVALID_PARAMETER);
	VA_RC(c, VipCQDone(bad, &vh, &b), VIP_INVALID_PARAMETER);
	VA_RC(c, VipCQWait(bad, 10, &vh, &b), VIP_INVALID_PARAMETER);
	VA_RC(c, VipDestroyCQ(bad), VIP_INVALID_PARAMETER);
	VA_RC(c, VipResizeCQ(bad, 2048), VIP_INVALID_PARAMETER);
	VA_RC(c, VipErrorCallback(bad, NULL, NULL), VIP_INVALID_PARAMETER);
	VA_RC(c, VipDestroyPtag(e->nic, bad), VIP_INVALID_PARAMETER);
}

/* Posts a malformed send: refused with a parameter / descriptor code, or completed with one
 * of the status bits in want (any error bit when want is 0), or an async POST_DESC error. */
static void neg_send(struct va_env *e, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d, VIP_MEM_HANDLE mh,
		     uint32_t want, const char *what)
{
	char b[128];
	int async0 = __atomic_load_n(&neg_post_desc, __ATOMIC_SEQ_CST);
	d->CS.Status = 0;
	VIP_RETURN rc = VipPostSend(vi, d, mh);
	if (rc != VIP_SUCCESS) {
		VA_TRUE(e->ctx, rc == VIP_INVALID_PARAMETER || rc == VIP_DESCRIPTOR_ERROR,
			"%s: VipPostSend returned %s", what, va_rc_name(rc));
		va_note(e->ctx, "%s: refused at post (%s)", what, va_rc_name(rc));
		return;
	}
	VIP_DESCRIPTOR *got = NULL;
	rc = VipSendWait(vi, 2000, &got);
	if (rc == VIP_TIMEOUT) {
		VA_TRUE(e->ctx, __atomic_load_n(&neg_post_desc, __ATOMIC_SEQ_CST) > async0,
			"%s: no completion and no async POST_DESC error in 2 s", what);
		va_note(e->ctx, "%s: async VIP_ERROR_POST_DESC", what);
		return;
	}
	VA_RC(e->ctx, rc, VIP_SUCCESS);
	uint32_t st = got->CS.Status;
	VA_TRUE(e->ctx, got == d && (st & VIP_STATUS_DONE) &&
				(want ? (st & want) != 0 : (st & VIP_STATUS_ERROR_MASK) != 0),
		"%s: status %s, expected DONE with 0x%x", what, va_status_str(st, b, sizeof b),
		want ? want : VIP_STATUS_ERROR_MASK);
	va_note(e->ctx, "%s: %s", what, va_status_str(st, b, sizeof b));
}

/* A descriptor of one 40-byte data segment at buf, laid out at d (not allocated). */
static void one_seg_at(struct va_env *e, VIP_DESCRIPTOR *d, void *buf)
{
	memset(d, 0, 64);
	d->CS.SegCount = 1;
	d->CS.Length = 40;
	va_seg(e, d, 0, buf, 40);
}

/* Buffers and descriptors outside registered memory or under the wrong handle / Ptag. */
static void bad_memory(struct va_env *e, VIP_VI_HANDLE vi, uint8_t *buf)
{
	struct va_ctx *c = e->ctx;
	static uint8_t unreg[8192] __attribute__((aligned(64)));
	static uint8_t other[4096] __attribute__((aligned(4096)));
	VIP_DESCRIPTOR *d = va_desc1(e, 0, buf, 40);
	d->DS[0].Local.Handle = 0;
	neg_send(e, vi, d, e->mh, VIP_STATUS_PROTECTION_ERROR, "data segment handle 0");
	d = va_desc1(e, 0, unreg, 40);
	neg_send(e, vi, d, e->mh, VIP_STATUS_PROTECTION_ERROR, "data in unregistered memory");
	d = va_desc1(e, 0, e->arena + e->arena_len - 16, 40);
	neg_send(e, vi, d, e->mh, VIP_STATUS_PROTECTION_ERROR, "data past the region's end");
	one_seg_at(e, (VIP_DESCRIPTOR *)unreg, buf);
	neg_send(e, vi, (VIP_DESCRIPTOR *)unreg, e->mh, 0, "descriptor in unregistered memory");
	d = va_desc1(e, 0, buf, 40);
	neg_send(e, vi, d, e->mh + 0x100, 0, "descriptor under a wrong memory handle");
	VIP_PROTECTION_HANDLE p2;
	VIP_MEM_HANDLE h2;
	VA_OK(c, VipCreatePtag(e->nic, &p2));
	VIP_MEM_ATTRIBUTES ma = { .Ptag = p2 };
	VA_OK(c, VipRegisterMem(e->nic, other, sizeof other, &ma, &h2));
	one_seg_at(e, (VIP_DESCRIPTOR *)other, buf);
	neg_send(e, vi, (VIP_DESCRIPTOR *)other, h2, VIP_STATUS_PROTECTION_ERROR,
		 "descriptor under another Ptag");
	VA_OK(c, VipDeregisterMem(e->nic, other, h2));
	VA_OK(c, VipDestroyPtag(e->nic, p2));
}

/* Segment counts and lengths: SegCount 0 / above the limit, no address segment, Length
 * over the MTU, a 0xffffffff segment. */
static void bad_counts(struct va_env *e, VIP_VI_HANDLE vi, uint8_t *buf)
{
	VIP_DESCRIPTOR *d = va_desc1(e, 0, buf, 40);
	d->CS.SegCount = 0;
	neg_send(e, vi, d, e->mh, VIP_STATUS_LENGTH_ERROR, "SegCount 0 with Length 40");
	d = va_desc1(e, 0, buf, 40);
	d->CS.SegCount = (VIP_UINT16)(e->attr.MaxSegmentsPerDesc + 1 > 0xffff
					      ? 0xffff : e->attr.MaxSegmentsPerDesc + 1);
	neg_send(e, vi, d, e->mh, 0, "SegCount above MaxSegmentsPerDesc");
	d = va_desc(e, 0);
	d->CS.Control = VIP_CONTROL_OP_RDMAWRITE;
	neg_send(e, vi, d, e->mh, VIP_STATUS_FORMAT_ERROR, "RDMA Write without address segment");
	size_t big = 65536 + 64;   /* the VI's MTU is 65536 at most (va_vi_attrs) */
	d = va_desc1(e, 0, va_alloc(e, big), (uint32_t)big);
	neg_send(e, vi, d, e->mh, VIP_STATUS_LENGTH_ERROR, "Length over the MTU");
	d = va_desc1(e, 0, buf, 40);
	d->DS[0].Local.Length = 0xffffffffu;
	d->CS.Length = 0xffffffffu;
	neg_send(e, vi, d, e->mh, 0, "segment Length 0xffffffff");
}

/* Reserved fields, misalignment, NULL descriptors. */
static void bad_format(struct va_env *e, VIP_VI_HANDLE vi, uint8_t *buf)
{
	struct va_ctx *c = e->ctx;
	VIP_DESCRIPTOR *d = va_desc1(e, 0, buf, 40);
	d->CS.Reserved = 1;
	neg_send(e, vi, d, e->mh, VIP_STATUS_FORMAT_ERROR, "control Reserved != 0");
	d = va_rdma_desc(e, VIP_CONTROL_OP_RDMAWRITE, (uint64_t)(uintptr_t)buf, e->mh, buf, 40);
	d->DS[0].Remote.Reserved = 7;
	neg_send(e, vi, d, e->mh, VIP_STATUS_FORMAT_ERROR, "address segment Reserved != 0");
	d = va_desc1(e, 0xF000, buf, 40);
	neg_send(e, vi, d, e->mh, VIP_STATUS_FORMAT_ERROR, "Control bits 15:12");
	VIP_DESCRIPTOR *m = (VIP_DESCRIPTOR *)((uint8_t *)va_alloc(e, 256) + 8);
	one_seg_at(e, m, buf);
	neg_send(e, vi, m, e->mh, 0, "descriptor not 64-byte aligned");
	VIP_RETURN rc = VipPostSend(vi, NULL, e->mh);
	VA_TRUE(c, rc == VIP_INVALID_PARAMETER || rc == VIP_DESCRIPTOR_ERROR,
		"VipPostSend(NULL descriptor) returned %s", va_rc_name(rc));
	rc = VipPostRecv(vi, NULL, e->mh);
	VA_TRUE(c, rc == VIP_INVALID_PARAMETER || rc == VIP_DESCRIPTOR_ERROR,
		"VipPostRecv(NULL descriptor) returned %s", va_rc_name(rc));
}

static void malformed(struct va_env *e, VIP_VI_HANDLE vi)
{
	uint8_t *buf = va_alloc(e, 256);
	bad_memory(e, vi, buf);
	bad_counts(e, vi, buf);
	bad_format(e, vi, buf);
}

static void stale_and_misc(struct va_env *e)
{
	struct va_ctx *c = e->ctx;
	VIP_NIC_HANDLE n2;
	VIP_CQ_HANDLE cq;
	VIP_PROTECTION_HANDLE p;
	VIP_NIC_ATTRIBUTES na;
	/* NULL out-pointers */
	VA_RC(c, VipOpenNic("softrnic0", NULL), VIP_INVALID_PARAMETER);
	VA_RC(c, VipQueryNic(e->nic, NULL), VIP_INVALID_PARAMETER);
	VA_RC(c, VipCreatePtag(e->nic, NULL), VIP_INVALID_PARAMETER);
	VA_RC(c, VipCreateVi(e->nic, NULL, NULL, NULL, NULL), VIP_INVALID_PARAMETER);
	VA_RC(c, VipRegisterMem(e->nic, NULL, 4096, NULL, NULL), VIP_INVALID_PARAMETER);
	/* stale: a closed NIC, a destroyed CQ, a destroyed Ptag, a destroyed VI */
	VA_OK(c, VipOpenNic("softrnic0", &n2));
	VA_OK(c, VipCloseNic(n2));
	VA_RC(c, VipQueryNic(n2, &na), VIP_INVALID_PARAMETER);
	VA_OK(c, VipCreateCQ(e->nic, 1024, &cq));
	VA_OK(c, VipDestroyCQ(cq));
	bad_handles(e, cq, "destroyed CQ");
	VA_OK(c, VipCreatePtag(e->nic, &p));
	VA_OK(c, VipDestroyPtag(e->nic, p));
	VA_RC(c, VipDestroyPtag(e->nic, p), VIP_INVALID_PARAMETER);
	VIP_VI_HANDLE vi = va_vi(e, UR, NULL, NULL);
	VA_OK(c, VipDestroyVi(vi));
	bad_handles(e, vi, "destroyed VI");
	/* a handle of one type used as another */
	VA_OK(c, VipCreateCQ(e->nic, 1024, &cq));
	VIP_DESCRIPTOR *d;
	VA_RC(c, VipSendDone(cq, &d), VIP_INVALID_PARAMETER);
	VA_RC(c, VipPostRecv(e->ptag, va_desc(e, 1), e->mh), VIP_INVALID_PARAMETER);
	VA_RC(c, VipCQDone(e->nic, (VIP_VI_HANDLE *)&d, (VIP_BOOLEAN *)&p), VIP_INVALID_PARAMETER);
	VA_OK(c, VipDestroyCQ(cq));
	/* deregistration: wrong address, wrong handle, twice */
	static uint8_t r[4096] __attribute__((aligned(4096)));
	VIP_MEM_HANDLE h;
	VIP_MEM_ATTRIBUTES ma = { .Ptag = e->ptag };
	VA_OK(c, VipRegisterMem(e->nic, r, sizeof r, &ma, &h));
	VA_RC(c, VipDeregisterMem(e->nic, r + 64, h), VIP_INVALID_PARAMETER);
	VA_RC(c, VipDeregisterMem(e->nic, r, h + 0x1000), VIP_INVALID_PARAMETER);
	VA_OK(c, VipDeregisterMem(e->nic, r, h));
	VA_RC(c, VipDeregisterMem(e->nic, r, h), VIP_INVALID_PARAMETER);
	/* CQ sizes */
	VA_RC(c, VipCreateCQ(e->nic, 0, &cq), VIP_INVALID_PARAMETER);
	VIP_RETURN rc = VipCreateCQ(e->nic, ~0ul, &cq);
	VA_TRUE(c, rc == VIP_ERROR_RESOURCE || rc == VIP_INVALID_PARAMETER,
		"VipCreateCQ(~0) returned %s", va_rc_name(rc));
	/* addresses: discriminator too long, wrong host-address length */
	VIP_NET_ADDRESS *la = va_local_addr(e, "neg");
	la->DiscriminatorLen = 65;
	VIP_VI_ATTRIBUTES ra;
	VIP_CONN_HANDLE conn;
	VA_RC(c, VipConnectWait(e->nic, la, 0, la, &ra, &conn), VIP_INVALID_PARAMETER);
	la->DiscriminatorLen = 3;
	la->HostAddressLen = 4;
	rc = VipConnectWait(e->nic, la, 0, la, &ra, &conn);
	VA_TRUE(c, rc == VIP_INVALID_PARAMETER, "ConnectWait with HostAddressLen 4: %s",
		va_rc_name(rc));
	VA_RC(c, VipConnectWait(e->nic, NULL, 0, la, &ra, &conn), VIP_INVALID_PARAMETER);
	free(la);
}

void neg_a(struct va_ctx *c)
{
	struct va_env e;
	va_env_open(c, &e, 1 << 20);
	VA_OK(c, VipErrorCallback(e.nic, NULL, neg_handler));
	bad_handles(&e, NULL, "NULL");
	bad_handles(&e, (VIP_PVOID)(uintptr_t)0x5a5a5a50, "garbage pointer");
	bad_handles(&e, (VIP_PVOID)(uintptr_t)1, "small integer");
	stale_and_misc(&e);
	VIP_VI_HANDLE vi = va_vi(&e, UR, NULL, NULL);
	va_barrier(c, "open");
	va_client_connect(&e, vi, "neg");
	malformed(&e, vi);
	/* the connection survived and carried none of the malformed messages */
	uint8_t *buf = va_alloc(&e, 32);
	va_fill(buf, 32, 99);
	VIP_DESCRIPTOR *d = va_desc1(&e, 0, buf, 32);
	va_post_send(&e, vi, d);
	va_expect_desc(&e, va_send_wait(&e, vi), d, VIP_STATUS_OP_SEND, "valid send");
	va_barrier(c, "done");
	va_note(c, "%d async error(s), %d POST_DESC", neg_async, neg_post_desc);
	va_teardown(&e, vi);
	va_env_close(&e);
}

void neg_b(struct va_ctx *c)
{
	struct va_env e;
	va_env_open(c, &e, 65536);
	VIP_VI_HANDLE vi = va_vi(&e, UR, NULL, NULL);
	uint8_t *buf = va_alloc(&e, 256);
	VIP_DESCRIPTOR *d = va_desc1(&e, 0, buf, 256);
	va_post_recv(&e, vi, d);
	va_barrier(c, "open");
	va_server_accept(&e, vi, "neg");
	va_expect_desc(&e, va_recv_wait(&e, vi), d, VIP_STATUS_OP_RECEIVE, "first receive");
	size_t bad;
	VA_TRUE(c, d->CS.Length == 32 && va_check_fill(buf, 32, 99, &bad),
		"first receive: Length %u or data differ: a malformed descriptor reached the wire",
		d->CS.Length);
	va_close_vi(&e, vi, "done");
}
