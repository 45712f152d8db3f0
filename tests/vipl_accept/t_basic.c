/* T01-T05: NIC limits, Ptag reference counts, registration edge cases, VI creation
 * attributes, a send posted on an Idle VI (single process; docs/acceptance-vipl.md). */
#include <stdlib.h>
#include <string.h>

#include "va.h"

void t01_a(struct va_ctx *c)
{
	VIP_NIC_HANDLE nic = NULL, bad = NULL;
	VIP_NIC_ATTRIBUTES a;
	VA_OK(c, VipOpenNic("softrnic0", &nic));
	VA_OK(c, VipQueryNic(nic, &a));
	va_note(c, "MaxSegmentsPerDesc %lu MaxTransferSize %lu MaxCQEntries %lu MaxPtags %lu "
		"MaxVI %lu ReliabilityLevelSupport 0x%x RDMAReadSupport 0x%x",
		a.MaxSegmentsPerDesc, a.MaxTransferSize, a.MaxCQEntries, a.MaxPtags, a.MaxVI,
		a.ReliabilityLevelSupport, a.RDMAReadSupport);
	VA_TRUE(c, a.MaxSegmentsPerDesc >= 252, "MaxSegmentsPerDesc %lu < 252", a.MaxSegmentsPerDesc);
	VA_TRUE(c, a.MaxTransferSize >= 32768, "MaxTransferSize %lu < 32768", a.MaxTransferSize);
	VA_TRUE(c, a.MaxCQEntries >= 1024, "MaxCQEntries %lu < 1024", a.MaxCQEntries);
	VA_TRUE(c, a.MaxPtags >= a.MaxVI, "MaxPtags %lu < MaxVI %lu", a.MaxPtags, a.MaxVI);
	VA_TRUE(c, a.MaxVI >= 100, "MaxVI %lu < 100", a.MaxVI);
	VA_TRUE(c, a.ReliabilityLevelSupport & VIP_SERVICE_UNRELIABLE,
		"ReliabilityLevelSupport 0x%x lacks UNRELIABLE", a.ReliabilityLevelSupport);
	VIP_RETURN rc = VipOpenNic("nonexistent", &bad);
	VA_TRUE(c, rc != VIP_SUCCESS, "VipOpenNic(\"nonexistent\") returned VIP_SUCCESS");
	VA_OK(c, VipCloseNic(nic));
	VA_RC(c, VipCloseNic(nic), VIP_INVALID_PARAMETER);
}

void t02_a(struct va_ctx *c)
{
	VIP_NIC_HANDLE nic;
	VIP_PROTECTION_HANDLE p, p2;
	VIP_MEM_HANDLE mh;
	static char buf[8192];
	VA_OK(c, VipOpenNic("softrnic0", &nic));
	VA_OK(c, VipCreatePtag(nic, &p));
	VIP_MEM_ATTRIBUTES ma = { .Ptag = p };
	VA_OK(c, VipRegisterMem(nic, buf, sizeof buf, &ma, &mh));
	VA_RC(c, VipDestroyPtag(nic, p), VIP_ERROR_RESOURCE);
	VA_OK(c, VipDeregisterMem(nic, buf, mh));
	VA_OK(c, VipDestroyPtag(nic, p));
	/* the same with a VI holding the tag */
	VA_OK(c, VipCreatePtag(nic, &p2));
	VIP_VI_ATTRIBUTES va = { .ReliabilityLevel = VIP_SERVICE_UNRELIABLE,
				 .MaxTransferSize = 32768, .Ptag = p2 };
	VIP_VI_HANDLE vi;
	VA_OK(c, VipCreateVi(nic, &va, NULL, NULL, &vi));
	VA_RC(c, VipDestroyPtag(nic, p2), VIP_ERROR_RESOURCE);
	VA_OK(c, VipDestroyVi(vi));
	VA_OK(c, VipDestroyPtag(nic, p2));
	VA_OK(c, VipCloseNic(nic));
}

/* Sends 40 bytes of buf under data handle h; B checks them (T03 "both usable"). */
static void t03_send_under(struct va_env *e, VIP_VI_HANDLE vi, uint8_t *buf, VIP_MEM_HANDLE h,
			   unsigned seed)
{
	va_fill(buf, 40, seed);
	VIP_DESCRIPTOR *d = va_desc1(e, 0, buf, 40);
	d->DS[0].Local.Handle = h;
	va_post_send(e, vi, d);
	va_expect_desc(e, va_send_wait(e, vi), d, VIP_STATUS_OP_SEND, "send under a duplicate handle");
}

void t03_a(struct va_ctx *c)
{
	struct va_env e;
	VIP_PROTECTION_HANDLE dead;
	VIP_MEM_HANDLE h1 = 0, h2 = 0, h3 = 0;
	static uint8_t buf[3 * 4096];
	va_env_open(c, &e, 65536);
	VIP_MEM_ATTRIBUTES ma = { .Ptag = e.ptag, .EnableRdmaWrite = VIP_TRUE };
	VA_RC(c, VipRegisterMem(e.nic, buf, 0, &ma, &h1), VIP_INVALID_PARAMETER);
	/* bogus Ptags: a destroyed one and one that was never a handle */
	VA_OK(c, VipCreatePtag(e.nic, &dead));
	VA_OK(c, VipDestroyPtag(e.nic, dead));
	VIP_MEM_ATTRIBUTES bad = ma;
	bad.Ptag = dead;
	VA_RC(c, VipRegisterMem(e.nic, buf, sizeof buf, &bad, &h1), VIP_INVALID_PTAG);
	bad.Ptag = (VIP_PROTECTION_HANDLE)(uintptr_t)0x5a5a5a50;
	VA_RC(c, VipRegisterMem(e.nic, buf, sizeof buf, &bad, &h1), VIP_INVALID_PTAG);
	/* the same range twice: two different non-zero handles, each valid on its own */
	VA_OK(c, VipRegisterMem(e.nic, buf + 100, 5000, &ma, &h1));
	VA_OK(c, VipRegisterMem(e.nic, buf + 100, 5000, &ma, &h2));
	VA_TRUE(c, h1 && h2 && h1 != h2, "two registrations gave handles 0x%x and 0x%x", h1, h2);
	VIP_MEM_ATTRIBUTES q;
	memset(&q, 0xff, sizeof q);
	VA_OK(c, VipQueryMem(e.nic, buf + 100, h1, &q));
	VA_TRUE(c, q.Ptag == e.ptag && q.EnableRdmaWrite == VIP_TRUE && q.EnableRdmaRead == VIP_FALSE,
		"VipQueryMem: Ptag %p W %d R %d, expected %p 1 0", q.Ptag, q.EnableRdmaWrite,
		q.EnableRdmaRead, e.ptag);
	/* both carry data to the peer */
	VIP_VI_HANDLE vi = va_vi(&e, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	va_barrier(c, "open");
	va_client_connect(&e, vi, "t03");
	va_barrier(c, "posted");
	t03_send_under(&e, vi, buf + 200, h1, 31);
	t03_send_under(&e, vi, buf + 300, h2, 32);
	va_barrier(c, "received");
	va_teardown(&e, vi);
	VA_OK(c, VipDeregisterMem(e.nic, buf + 100, h1));
	VA_RC(c, VipQueryMem(e.nic, buf + 100, h1, &q), VIP_INVALID_PARAMETER);
	VA_OK(c, VipQueryMem(e.nic, buf + 100, h2, &q));
	VA_OK(c, VipDeregisterMem(e.nic, buf + 100, h2));
	/* RDMA Read enable: refused exactly when the NIC has no RDMA Read */
	VIP_MEM_ATTRIBUTES rd = ma;
	rd.EnableRdmaRead = VIP_TRUE;
	if (e.attr.RDMAReadSupport == 0) {
		VA_RC(c, VipRegisterMem(e.nic, buf, sizeof buf, &rd, &h3), VIP_INVALID_RDMAREAD);
	} else {
		VA_OK(c, VipRegisterMem(e.nic, buf, sizeof buf, &rd, &h3));
		VA_OK(c, VipQueryMem(e.nic, buf, h3, &q));
		VA_TRUE(c, q.EnableRdmaRead == VIP_TRUE, "EnableRdmaRead not kept");
		VA_OK(c, VipDeregisterMem(e.nic, buf, h3));
	}
	va_env_close(&e);
}

void t03_b(struct va_ctx *c)
{
	struct va_env e;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, VIP_SERVICE_RELIABLE_DELIVERY);
	va_server_accept(&e, vi, "t03");
	uint8_t *r = va_alloc(&e, 128);
	VIP_DESCRIPTOR *d[2] = { va_desc1(&e, 0, r, 64), va_desc1(&e, 0, r + 64, 64) };
	va_post_recv(&e, vi, d[0]);
	va_post_recv(&e, vi, d[1]);
	va_barrier(c, "posted");
	for (unsigned i = 0; i < 2; i++) {
		va_expect_desc(&e, va_recv_wait(&e, vi), d[i], VIP_STATUS_OP_RECEIVE, "receive");
		size_t bad;
		VA_TRUE(c, d[i]->CS.Length == 40 && va_check_fill(r + 64 * i, 40, 31 + i, &bad),
			"message %u sent under handle h%u: Length %u or data differ", i + 1, i + 1,
			d[i]->CS.Length);
	}
	va_close_vi(&e, vi, "received");
}

void t04_a(struct va_ctx *c)
{
	struct va_env e;
	va_env_open(c, &e, 65536);
	VIP_VI_HANDLE vi = NULL;
	VIP_VI_ATTRIBUTES a = va_vi_attrs(&e, VIP_SERVICE_RELIABLE_DELIVERY);
	/* a level the NIC does not support: a missing bit, else a value that is no level */
	VIP_RELIABILITY_LEVEL unsup = 0x08;
	for (VIP_RELIABILITY_LEVEL l = 1; l <= 4; l <<= 1)
		if (!(e.attr.ReliabilityLevelSupport & l)) {
			unsup = l;
			break;
		}
	a.ReliabilityLevel = unsup;
	VA_RC(c, VipCreateVi(e.nic, &a, NULL, NULL, &vi), VIP_INVALID_RELIABILITY_LEVEL);
	a = va_vi_attrs(&e, VIP_SERVICE_RELIABLE_DELIVERY);
	a.MaxTransferSize = e.attr.MaxTransferSize + 1;
	VA_RC(c, VipCreateVi(e.nic, &a, NULL, NULL, &vi), VIP_INVALID_MTU);
	a = va_vi_attrs(&e, VIP_SERVICE_RELIABLE_DELIVERY);
	a.Ptag = (VIP_PROTECTION_HANDLE)(uintptr_t)0x5a5a5a50;
	VA_RC(c, VipCreateVi(e.nic, &a, NULL, NULL, &vi), VIP_INVALID_PTAG);
	vi = va_vi(&e, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	VIP_VI_STATE st = va_state(&e, vi);
	VA_TRUE(c, st == VIP_STATE_IDLE, "new VI in state %s, expected IDLE", va_state_name(st));
	VA_OK(c, VipDestroyVi(vi));
	va_env_close(&e);
}

void t05_a(struct va_ctx *c)
{
	struct va_env e;
	char b[128];
	va_env_open(c, &e, 65536);
	VIP_VI_HANDLE vi = va_vi(&e, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	uint8_t *buf = va_alloc(&e, 64);
	VIP_DESCRIPTOR *d = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf, 64), *got = NULL;
	va_post_send(&e, vi, d);
	/* "completes at once": Done within 1 s without any connection */
	long long end = va_now_ms() + 1000;
	VIP_RETURN rc;
	while ((rc = VipSendDone(vi, &got)) == VIP_NOT_DONE && va_now_ms() < end)
		va_sleep_ms(1);
	VA_RC(c, rc, VIP_SUCCESS);
	VA_TRUE(c, got == d, "VipSendDone returned %p, posted %p", (void *)got, (void *)d);
	uint32_t st = d->CS.Status;
	VA_TRUE(c, (st & VIP_STATUS_DONE) && (st & VIP_STATUS_ERROR_MASK),
		"Idle send status %s, expected DONE with an error bit",
		va_status_str(st, b, sizeof b));
	va_note(c, "send on Idle VI: status %s", va_status_str(st, b, sizeof b));
	VA_OK(c, VipDestroyVi(vi));
	va_env_close(&e);
}
