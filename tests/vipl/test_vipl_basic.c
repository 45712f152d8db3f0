/* libvipl without connections: NIC limits and handles (T01), Ptag reference counts (T02),
 * registration edges (T03), VI attributes (T04), sends on an Idle VI (T05), destroy rules
 * and the Idle Disconnect (T07 without the connection), CQ rules, stale handles. */
#include "tv.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>

static void t01_nic(void **state)
{
	(void)state;
	VIP_NIC_HANDLE nic, bad;
	VIP_NIC_ATTRIBUTES a;
	assert_int_equal(VipOpenNic("softrnic0", &nic), VIP_SUCCESS);
	assert_int_equal(VipQueryNic(nic, &a), VIP_SUCCESS);
	assert_true(a.MaxSegmentsPerDesc >= 252);
	assert_true(a.MaxTransferSize >= 32768);
	assert_true(a.MaxCQEntries >= 1024);
	assert_true(a.MaxPtags >= a.MaxVI);
	assert_true(a.MaxVI >= 100);
	assert_true(a.ReliabilityLevelSupport & VIP_SERVICE_UNRELIABLE);
	assert_int_equal(a.NicAddressLen, 6);
	assert_int_equal(a.ThreadSafe, VIP_TRUE);
	assert_int_equal(VipOpenNic("nonexistent", &bad), VIP_INVALID_PARAMETER);
	assert_int_equal(VipOpenNic("softrnic0", NULL), VIP_INVALID_PARAMETER);
	assert_int_equal(VipCloseNic(nic), VIP_SUCCESS);
	assert_int_equal(VipCloseNic(nic), VIP_INVALID_PARAMETER);
	assert_int_equal(VipQueryNic(nic, &a), VIP_INVALID_PARAMETER);
	assert_int_equal(VipCloseNic(NULL), VIP_INVALID_PARAMETER);
	assert_int_equal(VipCloseNic((VIP_NIC_HANDLE)(uintptr_t)0x12345), VIP_INVALID_PARAMETER);
	/* the legacy aliases */
	assert_int_equal(VipOpenNic("/dev/clanvi0", &nic), VIP_SUCCESS);
	assert_int_equal(VipCloseNic(nic), VIP_SUCCESS);
}

static void t02_ptag(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_PROTECTION_HANDLE p;
	VIP_MEM_HANDLE mh;
	uint8_t *buf = aligned_alloc(4096, 8192);
	assert_int_equal(VipCreatePtag(t.nic[0], &p), VIP_SUCCESS);
	VIP_MEM_ATTRIBUTES ma = { p, VIP_FALSE, VIP_FALSE };
	assert_int_equal(VipRegisterMem(t.nic[0], buf, 100, &ma, &mh), VIP_SUCCESS);
	assert_int_equal(VipDestroyPtag(t.nic[0], p), VIP_ERROR_RESOURCE);
	assert_int_equal(VipDeregisterMem(t.nic[0], buf, mh), VIP_SUCCESS);
	assert_int_equal(VipDeregisterMem(t.nic[0], buf, mh), VIP_INVALID_PARAMETER);
	VIP_VI_ATTRIBUTES va = { VIP_SERVICE_RELIABLE_DELIVERY, 4096, NULL, p, 0, 0 };
	VIP_VI_HANDLE vi;
	assert_int_equal(VipCreateVi(t.nic[0], &va, NULL, NULL, &vi), VIP_SUCCESS);
	assert_int_equal(VipDestroyPtag(t.nic[0], p), VIP_ERROR_RESOURCE);
	assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
	assert_int_equal(VipDestroyPtag(t.nic[1], p), VIP_INVALID_PARAMETER); /* other NIC's */
	assert_int_equal(VipDestroyPtag(t.nic[0], p), VIP_SUCCESS);
	assert_int_equal(VipDestroyPtag(t.nic[0], p), VIP_INVALID_PARAMETER);
	free(buf);
	tv_close(&t);
}

static void t03_register(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	uint8_t *buf = aligned_alloc(4096, 16384);
	VIP_MEM_HANDLE h1 = 1, h2, h;
	VIP_MEM_ATTRIBUTES ma = { t.ptag[0], VIP_TRUE, VIP_FALSE }, q;
	assert_int_equal(VipRegisterMem(t.nic[0], buf, 0, &ma, &h1), VIP_INVALID_PARAMETER);
	assert_int_equal(h1, 0);
	VIP_MEM_ATTRIBUTES bad = { (VIP_PROTECTION_HANDLE)(uintptr_t)0x999, 0, 0 };
	assert_int_equal(VipRegisterMem(t.nic[0], buf, 10, &bad, &h), VIP_INVALID_PTAG);
	VIP_MEM_ATTRIBUTES other = { t.ptag[1], 0, 0 };
	assert_int_equal(VipRegisterMem(t.nic[0], buf, 10, &other, &h), VIP_INVALID_PTAG);
	assert_int_equal(VipRegisterMem(t.nic[0], buf + 10, 5000, &ma, &h1), VIP_SUCCESS);
	assert_int_equal(VipRegisterMem(t.nic[0], buf + 10, 5000, &ma, &h2), VIP_SUCCESS);
	assert_int_not_equal(h1, 0);
	assert_int_not_equal(h2, 0);
	assert_int_not_equal(h1, h2);
	assert_int_equal(VipQueryMem(t.nic[0], buf + 10, h1, &q), VIP_SUCCESS);
	assert_ptr_equal(q.Ptag, t.ptag[0]);
	assert_int_equal(q.EnableRdmaWrite, VIP_TRUE);
	assert_int_equal(q.EnableRdmaRead, VIP_FALSE);
	/* the registered address only */
	assert_int_equal(VipQueryMem(t.nic[0], buf, h1, &q), VIP_INVALID_PARAMETER);
	assert_int_equal(VipDeregisterMem(t.nic[0], buf, h1), VIP_INVALID_PARAMETER);
	/* a new Ptag and enables; the handle stays valid */
	VIP_PROTECTION_HANDLE p2;
	assert_int_equal(VipCreatePtag(t.nic[0], &p2), VIP_SUCCESS);
	VIP_MEM_ATTRIBUTES m2 = { p2, VIP_FALSE, VIP_TRUE };
	assert_int_equal(VipSetMemAttributes(t.nic[0], buf + 10, h1, &m2), VIP_SUCCESS);
	assert_int_equal(VipQueryMem(t.nic[0], buf + 10, h1, &q), VIP_SUCCESS);
	assert_ptr_equal(q.Ptag, p2);
	assert_int_equal(q.EnableRdmaRead, VIP_TRUE);
	assert_int_equal(VipDestroyPtag(t.nic[0], p2), VIP_ERROR_RESOURCE);
	assert_int_equal(VipDeregisterMem(t.nic[0], buf + 10, h1), VIP_SUCCESS);
	assert_int_equal(VipDeregisterMem(t.nic[0], buf + 10, h2), VIP_SUCCESS);
	assert_int_equal(VipDestroyPtag(t.nic[0], p2), VIP_SUCCESS);
	/* read-only pages: never writable by RDMA (§9.5.3) */
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(ro != MAP_FAILED);
	assert_int_equal(VipRegisterMem(t.nic[0], ro, 4096, &ma, &h), VIP_INVALID_PARAMETER);
	VIP_MEM_ATTRIBUTES rd = { t.ptag[0], VIP_FALSE, VIP_TRUE };
	assert_int_equal(VipRegisterMem(t.nic[0], ro, 4096, &rd, &h), VIP_SUCCESS);
	assert_int_equal(VipDeregisterMem(t.nic[0], ro, h), VIP_SUCCESS);
	munmap(ro, 4096);
	free(buf);
	tv_close(&t);
}

static void t04_vi_attrs(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_VI_HANDLE vi;
	VIP_VI_ATTRIBUTES a = { VIP_SERVICE_RELIABLE_DELIVERY, 4096, NULL, t.ptag[0], 0, 0 };
	VIP_VI_ATTRIBUTES b = a;
	b.ReliabilityLevel = 0x8;
	assert_int_equal(VipCreateVi(t.nic[0], &b, NULL, NULL, &vi), VIP_INVALID_RELIABILITY_LEVEL);
	b = a;
	b.MaxTransferSize = t.attr[0].MaxTransferSize + 1;
	assert_int_equal(VipCreateVi(t.nic[0], &b, NULL, NULL, &vi), VIP_INVALID_MTU);
	b = a;
	b.Ptag = t.ptag[1];
	assert_int_equal(VipCreateVi(t.nic[0], &b, NULL, NULL, &vi), VIP_INVALID_PTAG);
	b = a;
	b.QoS = &b;
	assert_int_equal(VipCreateVi(t.nic[0], &b, NULL, NULL, &vi), VIP_INVALID_QOS);
	b = a;
	b.ReliabilityLevel = VIP_SERVICE_UNRELIABLE;
	b.EnableRdmaRead = VIP_TRUE;
	assert_int_equal(VipCreateVi(t.nic[0], &b, NULL, NULL, &vi), VIP_INVALID_RDMAREAD);
	assert_int_equal(VipCreateVi(t.nic[0], &a, (VIP_CQ_HANDLE)(uintptr_t)0x77, NULL, &vi),
			 VIP_INVALID_PARAMETER);
	assert_int_equal(VipCreateVi(t.nic[0], &a, NULL, NULL, &vi), VIP_SUCCESS);
	VIP_VI_STATE st;
	VIP_VI_ATTRIBUTES q;
	VIP_BOOLEAN se, re;
	assert_int_equal(VipQueryVi(vi, &st, &q, &se, &re), VIP_SUCCESS);
	assert_int_equal(st, VIP_STATE_IDLE);
	assert_int_equal(q.ReliabilityLevel, VIP_SERVICE_RELIABLE_DELIVERY);
	assert_int_equal(q.MaxTransferSize, 4096);
	assert_true(se && re);
	b = a;
	b.ReliabilityLevel = VIP_SERVICE_RELIABLE_RECEPTION;
	assert_int_equal(VipSetViAttributes(vi, &b), VIP_SUCCESS);
	assert_int_equal(VipQueryVi(vi, &st, &q, NULL, NULL), VIP_SUCCESS);
	assert_int_equal(q.ReliabilityLevel, VIP_SERVICE_RELIABLE_RECEPTION);
	assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
	assert_int_equal(VipQueryVi(vi, &st, &q, &se, &re), VIP_INVALID_PARAMETER);
	assert_int_equal(VipDestroyVi(vi), VIP_INVALID_PARAMETER);
	tv_close(&t);
}

static void t05_t07_idle(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_VI_HANDLE vi = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	uint8_t *buf = tv_alloc(&t, 0, 256);
	VIP_DESCRIPTOR *s = tv_desc(&t, 0, 1), *r = tv_desc(&t, 0, 1), *out;
	s->CS.SegCount = 1;
	s->CS.Length = 100;
	s->DS[0].Local.Data.Address = buf;
	s->DS[0].Local.Handle = t.mh[0];
	s->DS[0].Local.Length = 100;
	*r = *s;
	assert_int_equal(VipPostSend(vi, s, t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipSendDone(vi, &out), VIP_SUCCESS);
	assert_ptr_equal(out, s);
	assert_true(s->CS.Status & VIP_STATUS_DONE);
	assert_true(s->CS.Status & VIP_STATUS_ERROR_MASK);
	assert_true(s->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
	/* a receive waits in Idle; destroy refused while it is queued */
	assert_int_equal(VipPostRecv(vi, r, t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipRecvDone(vi, &out), VIP_NOT_DONE);
	assert_int_equal(VipRecvWait(vi, 50, &out), VIP_TIMEOUT);
	assert_int_equal(VipDestroyVi(vi), VIP_ERROR_RESOURCE);
	/* Disconnect on Idle flushes it (VIA §5.1) */
	assert_int_equal(VipDisconnect(vi), VIP_SUCCESS);
	assert_int_equal(VipRecvDone(vi, &out), VIP_SUCCESS);
	assert_ptr_equal(out, r);
	assert_true(r->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
	assert_int_equal(r->CS.Status & VIP_STATUS_OP_MASK, VIP_STATUS_OP_RECEIVE);
	assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
	assert_int_equal(VipPostSend(vi, s, t.mh[0]), VIP_INVALID_PARAMETER);
	assert_int_equal(VipPostSend(NULL, s, t.mh[0]), VIP_INVALID_PARAMETER);
	tv_close(&t);
}

/* Descriptor checks happen at post, on an Idle VI too: the errors come before the flush. */
static void t13_format(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_VI_HANDLE vi = tv_vi(&t, 0, VIP_SERVICE_UNRELIABLE, NULL, NULL);
	uint8_t *buf = tv_alloc(&t, 0, 256);
	VIP_DESCRIPTOR *d, *out;
	struct { uint16_t ctl; uint32_t len, res, seglen; int op_recv; VIP_MEM_HANDLE h;
		 uint32_t expect; } cases[] = {
		{ 0, 99, 0, 100, 0, 0, VIP_STATUS_LENGTH_ERROR },
		{ 0x0010, 100, 0, 100, 0, 0, VIP_STATUS_FORMAT_ERROR },
		{ VIP_CONTROL_OP_RESERVED, 100, 0, 100, 0, 0, VIP_STATUS_FORMAT_ERROR },
		{ 0, 100, 1, 100, 0, 0, VIP_STATUS_FORMAT_ERROR },
		{ VIP_CONTROL_OP_RDMAWRITE, 100, 0, 100, 1, 0, VIP_STATUS_FORMAT_ERROR },
		{ VIP_CONTROL_OP_RDMAREAD, 100, 0, 100, 0, 0, VIP_STATUS_FORMAT_ERROR },
		{ 0, 100, 0, 100, 0, 0x4242, VIP_STATUS_PROTECTION_ERROR },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		d = tv_desc(&t, 0, 2);
		unsigned s = (cases[i].ctl & VIP_CONTROL_OP_MASK) == VIP_CONTROL_OP_SENDRECV ||
			     (cases[i].ctl & VIP_CONTROL_OP_MASK) == VIP_CONTROL_OP_RESERVED ? 0 : 1;
		d->CS.Control = cases[i].ctl;
		d->CS.Length = cases[i].len;
		d->CS.Reserved = cases[i].res;
		d->CS.SegCount = (VIP_UINT16)(s + 1);
		d->DS[s].Local.Data.Address = buf;
		d->DS[s].Local.Handle = cases[i].h ? cases[i].h : t.mh[0];
		d->DS[s].Local.Length = cases[i].seglen;
		if (cases[i].op_recv) {
			assert_int_equal(VipPostRecv(vi, d, t.mh[0]), VIP_SUCCESS);
			assert_int_equal(VipRecvDone(vi, &out), VIP_SUCCESS);
		} else {
			assert_int_equal(VipPostSend(vi, d, t.mh[0]), VIP_SUCCESS);
			assert_int_equal(VipSendDone(vi, &out), VIP_SUCCESS);
		}
		assert_ptr_equal(out, d);
		assert_true(d->CS.Status & VIP_STATUS_DONE);
		assert_true(d->CS.Status & cases[i].expect);
	}
	/* another Ptag's region: protection error */
	VIP_PROTECTION_HANDLE p2;
	VIP_MEM_HANDLE h2;
	assert_int_equal(VipCreatePtag(t.nic[0], &p2), VIP_SUCCESS);
	uint8_t *other = aligned_alloc(4096, 4096);
	VIP_MEM_ATTRIBUTES ma = { p2, 0, 0 };
	assert_int_equal(VipRegisterMem(t.nic[0], other, 4096, &ma, &h2), VIP_SUCCESS);
	d = tv_desc(&t, 0, 1);
	d->CS.SegCount = 1;
	d->CS.Length = 10;
	d->DS[0].Local.Data.Address = other;
	d->DS[0].Local.Handle = h2;
	d->DS[0].Local.Length = 10;
	assert_int_equal(VipPostSend(vi, d, t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipSendDone(vi, &out), VIP_SUCCESS);
	assert_true(d->CS.Status & VIP_STATUS_PROTECTION_ERROR);
	/* misaligned descriptor */
	VIP_DESCRIPTOR *m = (VIP_DESCRIPTOR *)((uint8_t *)tv_desc(&t, 0, 3) + 8);
	memset(m, 0, sizeof(*m));
	assert_int_equal(VipPostSend(vi, m, t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipSendDone(vi, &out), VIP_SUCCESS);
	assert_true(m->CS.Status & VIP_STATUS_FORMAT_ERROR);
	assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
	tv_close(&t);
	free(other);
}

static void cq_rules(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_CQ_HANDLE cq;
	VIP_VI_HANDLE vi, wv;
	VIP_BOOLEAN rq;
	assert_int_equal(VipCreateCQ(t.nic[0], 0, &cq), VIP_INVALID_PARAMETER);
	assert_int_equal(VipCreateCQ(t.nic[0], 1024, &cq), VIP_SUCCESS);
	vi = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, cq);
	assert_int_equal(VipDestroyCQ(cq), VIP_ERROR_RESOURCE);
	VIP_DESCRIPTOR *out;
	assert_int_equal(VipRecvWait(vi, 10, &out), VIP_ERROR_RESOURCE); /* VIA §9.6.6 */
	assert_int_equal(VipSendWait(vi, 10, &out), VIP_TIMEOUT);        /* not CQ-bound */
	assert_int_equal(VipCQDone(cq, &wv, &rq), VIP_NOT_DONE);
	uint64_t t0 = tv_ms();
	assert_int_equal(VipCQWait(cq, 50, &wv, &rq), VIP_TIMEOUT);
	assert_true(tv_ms() - t0 >= 50);
	/* an Idle receive flushed by Disconnect makes a CQ entry */
	VIP_DESCRIPTOR *r = tv_desc(&t, 0, 1);
	assert_int_equal(VipPostRecv(vi, r, t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipResizeCQ(cq, 4096), VIP_SUCCESS);
	assert_int_equal(VipDisconnect(vi), VIP_SUCCESS);
	assert_int_equal(VipResizeCQ(cq, 2000), VIP_SUCCESS);
	assert_int_equal(VipCQDone(cq, &wv, &rq), VIP_SUCCESS);
	assert_ptr_equal(wv, vi);
	assert_true(rq);
	assert_int_equal(VipCQDone(cq, &wv, &rq), VIP_NOT_DONE);
	assert_int_equal(VipRecvDone(vi, &out), VIP_SUCCESS);
	assert_int_equal(VipRecvNotify(vi, NULL, (VIP_VI_NOTIFY_HANDLER)1), VIP_ERROR_RESOURCE);
	assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
	assert_int_equal(VipDestroyCQ(cq), VIP_SUCCESS);
	assert_int_equal(VipDestroyCQ(cq), VIP_INVALID_PARAMETER);
	assert_int_equal(VipCQDone(cq, &wv, &rq), VIP_INVALID_PARAMETER);
	tv_close(&t);
}

/* Closing a NIC with everything still open tears it down; the handles die. */
static void close_with_children(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_CQ_HANDLE cq;
	assert_int_equal(VipCreateCQ(t.nic[0], 1024, &cq), VIP_SUCCESS);
	VIP_VI_HANDLE vi = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, cq, cq);
	VIP_DESCRIPTOR *r = tv_desc(&t, 0, 1);
	assert_int_equal(VipPostRecv(vi, r, t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipCloseNic(t.nic[0]), VIP_SUCCESS);
	t.nic[0] = NULL;
	VIP_VI_STATE st;
	assert_int_equal(VipQueryVi(vi, &st, NULL, NULL, NULL), VIP_INVALID_PARAMETER);
	assert_int_equal(VipDestroyCQ(cq), VIP_INVALID_PARAMETER);
	tv_close(&t);
}

static void name_service(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	struct tv_addr a;
	memset(&a, 0, sizeof(a));
	a.a.DiscriminatorLen = 3; /* set by the caller before: must be kept */
	assert_int_equal(VipNSGetHostByName(t.nic[0], "127.0.0.1", &a.a, 0), VIP_SUCCESS);
	assert_int_equal(a.a.HostAddressLen, 6);
	assert_int_equal(a.a.DiscriminatorLen, 3);
	const uint8_t *h = (const uint8_t *)&a + 4;
	assert_memory_equal(h, "\x7f\0\0\x01", 4);
	assert_memory_equal(h + 4, t.attr[0].LocalNicAddress + 4, 2);
	assert_int_equal(VipNSInit(t.nic[0], NULL), VIP_SUCCESS);
	assert_int_equal(VipNSGetHostByName(t.nic[0], "localhost:4000", &a.a, 0), VIP_SUCCESS);
	assert_int_equal(h[4] << 8 | h[5], 4000);
	assert_int_equal(VipNSGetHostByName(t.nic[0], "no.such.host.invalid", &a.a, 0),
			 VIP_ERROR_NAMESERVICE);
	char name[256];
	VIP_ULONG len = sizeof(name);
	assert_int_equal(VipNSGetHostByName(t.nic[0], "127.0.0.1", &a.a, 0), VIP_SUCCESS);
	VIP_RETURN rc = VipNSGetHostByAddr(t.nic[0], &a.a, name, &len);
	assert_true(rc == VIP_SUCCESS || rc == VIP_ERROR_NAMESERVICE);
	if (rc == VIP_SUCCESS) {
		assert_int_equal(len, strlen(name) + 1);
		VIP_ULONG small = 1;
		assert_int_equal(VipNSGetHostByAddr(t.nic[0], &a.a, name, &small), VIP_ERROR_RESOURCE);
		assert_int_equal(small, len);
	}
	assert_int_equal(VipNSShutdown(t.nic[0]), VIP_SUCCESS);
	VIP_AUTODISCOVERY_LIST l;
	assert_int_equal(VipQuerySystemManagementInfo(t.nic[0], VIP_SMI_AUTODISCOVERY, &l),
			 VIP_SUCCESS);
	assert_int_equal(l.NumAdAddrs, 0);
	assert_int_equal(VipQuerySystemManagementInfo(t.nic[0], 99, &l), VIP_ERROR_NOT_SUPPORTED);
	tv_close(&t);
}

struct blocked {
	VIP_NIC_HANDLE nic;
	VIP_VI_HANDLE vi;
	VIP_RETURN rc;
};

static void *block_recv(void *arg)
{
	struct blocked *b = arg;
	VIP_DESCRIPTOR *d;
	b->rc = VipRecvWait(b->vi, VIP_INFINITE, &d);
	return NULL;
}

static void *block_conn(void *arg)
{
	struct blocked *b = arg;
	struct tv_addr l, r;
	VIP_VI_ATTRIBUTES ra;
	VIP_CONN_HANDLE ch;
	memset(&l, 0, sizeof(l));
	l.a.DiscriminatorLen = 1;
	((uint8_t *)&l)[4] = 'x';
	b->rc = VipConnectWait(b->nic, &l.a, VIP_INFINITE, &r.a, &ra, &ch);
	return NULL;
}

/* Calls blocked forever return when the NIC closes under them (no hang, no use after free). */
static void close_unblocks(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	struct blocked b1 = { t.nic[0], tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL),
			      VIP_SUCCESS };
	struct blocked b2 = { t.nic[0], NULL, VIP_SUCCESS };
	pthread_t th1, th2;
	pthread_create(&th1, NULL, block_recv, &b1);
	pthread_create(&th2, NULL, block_conn, &b2);
	struct timespec ms100 = { 0, 100000000 };
	nanosleep(&ms100, NULL);
	assert_int_equal(VipCloseNic(t.nic[0]), VIP_SUCCESS);
	t.nic[0] = NULL;
	pthread_join(th1, NULL);
	pthread_join(th2, NULL);
	assert_int_equal(b1.rc, VIP_INVALID_PARAMETER);
	assert_int_equal(b2.rc, VIP_INVALID_PARAMETER);
	tv_close(&t);
}

int main(void)
{
	tv_env();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_nic),
		cmocka_unit_test(t02_ptag),
		cmocka_unit_test(t03_register),
		cmocka_unit_test(t04_vi_attrs),
		cmocka_unit_test(t05_t07_idle),
		cmocka_unit_test(t13_format),
		cmocka_unit_test(cq_rules),
		cmocka_unit_test(close_with_children),
		cmocka_unit_test(close_unblocks),
		cmocka_unit_test(name_service),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
