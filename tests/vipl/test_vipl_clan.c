/* cLAN's extensions (docs/vipl.md "One header for three stacks"): user data, descriptor flow
 * control with the library issuing deferred sends by itself, tag demultiplexing (priority,
 * removal, the event's rules), and VIP_NOT_REACHABLE for a host without a route. */
#include "tv.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static VIP_DESCRIPTOR *msg_desc(struct tv *t, int side, uint32_t len)
{
	VIP_DESCRIPTOR *d = tv_desc(t, side, 1);
	uint8_t *buf = tv_alloc(t, side, len);
	memset(buf, 'd', len);
	d->Control.SegCount = 1;
	d->Control.Length = len;
	d->Data[0].Data.Address = buf;
	d->Data[0].Handle = t->mh[side];
	d->Data[0].Length = len;
	return d;
}

static void user_data(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_VI_HANDLE vi = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	assert_null(VipGetUserData(vi));
	VipSetUserData(vi, &t);
	assert_ptr_equal(VipGetUserData(vi), &t);
	assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
	VipSetUserData(vi, &t); /* a stale handle: nothing happens */
	assert_null(VipGetUserData(vi));
	tv_close(&t);
}

struct later {
	VIP_VI_HANDLE vi;
	VIP_DESCRIPTOR *d;
	VIP_MEM_HANDLE mh;
};

static void *post_later(void *arg)
{
	struct later *l = arg;
	usleep(100000);
	VipPostRecv(l->vi, l->d, l->mh);
	return NULL;
}

/* A DFC sender blocked in VipSendWait: the receive the peer posts 100 ms later lets the NIC
 * thread issue the send; the connection stays up (no receive was missing on the wire). */
static void dfc_interrupt(void **state)
{
	(void)state;
	struct tv t;
	VIP_VI_ATTRIBUTES q;
	VIP_VI_STATE st;
	VIP_BOOLEAN deferred = VIP_FALSE;
	VIP_DESCRIPTOR *d = NULL;
	pthread_t th;
	tv_open(&t);
	VIP_VI_HANDLE a = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_DFC, NULL, NULL);
	VIP_VI_HANDLE b = tv_vi(&t, 1, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	assert_int_equal(VipQueryVi(a, &st, &q, NULL, NULL), VIP_SUCCESS);
	assert_int_equal(q.ReliabilityLevel,
			 VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_DFC);
	assert_int_equal(VipPostDeferredSends(b, VIP_TRUE, &deferred), VIP_INVALID_STATE);
	tv_connect(&t, a, b, "dfc-a", "dfc-b");
	VIP_DESCRIPTOR *s1 = msg_desc(&t, 0, 64), *s2 = msg_desc(&t, 0, 64);
	assert_int_equal(VipPostSend(a, s1, t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipPostSend(a, s2, t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipPostDeferredSends(a, VIP_TRUE, &deferred), VIP_SUCCESS);
	assert_true(deferred);
	struct later l = { b, msg_desc(&t, 1, 64), t.mh[1] };
	assert_int_equal(pthread_create(&th, NULL, post_later, &l), 0);
	uint64_t t0 = tv_ms();
	assert_int_equal(VipSendWait(a, 3000, &d), VIP_SUCCESS);
	assert_ptr_equal(d, s1);
	assert_true(tv_ms() - t0 >= 80);
	pthread_join(th, NULL);
	assert_int_equal(VipSendWait(a, 50, &d), VIP_TIMEOUT); /* s2: no second receive */
	assert_int_equal(VipPostDeferredSends(a, VIP_FALSE, &deferred), VIP_SUCCESS);
	assert_true(deferred);
	assert_int_equal(VipRecvWait(b, 1000, &d), VIP_SUCCESS);
	assert_int_equal(d->Control.Length, 64);
	assert_int_equal(tv_state(a), VIP_STATE_CONNECTED);
	assert_int_equal(tv_state(b), VIP_STATE_CONNECTED);
	tv_close(&t);
}

/* Two VIs on one CQ with tags 1 and 2: each entry signals its tag's event, the higher
 * priority's when two events share a tag; removed, an event hears no more. */
static void tags(void **state)
{
	(void)state;
	struct tv t;
	VIP_CQ_HANDLE cq;
	VIP_EVENT_HANDLE e1 = NULL, e2 = NULL, hi = NULL, bad = NULL;
	tv_open(&t);
	assert_int_equal(VipCreateCQ(t.nic[1], 16, &cq), VIP_SUCCESS);
	VIP_VI_HANDLE a1 = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	VIP_VI_HANDLE a2 = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	VIP_VI_HANDLE b1 = tv_vi(&t, 1, VIP_SERVICE_RELIABLE_DELIVERY, NULL, cq);
	VIP_VI_HANDLE b2 = tv_vi(&t, 1, VIP_SERVICE_RELIABLE_DELIVERY, NULL, cq);
	VipSetUserData(b1, (VIP_PVOID)1);
	VipSetUserData(b2, (VIP_PVOID)2);
	assert_int_equal(VipAddTagCQ(cq, &e1, 1, 0), VIP_SUCCESS);
	assert_int_equal(VipAddTagCQ(cq, &e2, 2, 0), VIP_SUCCESS);
	assert_int_equal(VipAddTagCQ(cq, &hi, 2, 5), VIP_SUCCESS);
	assert_true(VipEventFd(e1) >= 0);
	bad = (VIP_EVENT_HANDLE)cq; /* a handle of another kind */
	assert_int_equal(VipAddTagCQ(cq, &bad, 3, 0), VIP_INVALID_PARAMETER);
	assert_int_equal(VipEventWait(e1, 0), VIP_TIMEOUT);
	for (int i = 0; i < 2; i++)
		assert_int_equal(VipPostRecv(b1, msg_desc(&t, 1, 64), t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipPostRecv(b2, msg_desc(&t, 1, 64), t.mh[1]), VIP_SUCCESS);
	tv_connect(&t, a1, b1, "tag-a1", "tag-b1");
	tv_connect(&t, a2, b2, "tag-a2", "tag-b2");
	assert_int_equal(VipPostSend(a2, msg_desc(&t, 0, 64), t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipEventWait(hi, 3000), VIP_SUCCESS);   /* tag 2: the priority 5 one */
	assert_int_equal(VipPostSend(a1, msg_desc(&t, 0, 64), t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipEventWait(e1, 3000), VIP_SUCCESS);
	assert_int_equal(VipEventWait(e2, 0), VIP_TIMEOUT);
	assert_int_equal(VipEventWait(e1, 0), VIP_TIMEOUT);      /* one signal per entry */
	assert_int_equal(VipRemoveTagCQ(cq, e1, 1), VIP_SUCCESS);
	assert_int_equal(VipRemoveTagCQ(cq, e1, 1), VIP_INVALID_PARAMETER);
	assert_int_equal(VipPostSend(a1, msg_desc(&t, 0, 64), t.mh[0]), VIP_SUCCESS);
	VIP_VI_HANDLE vi;
	VIP_BOOLEAN rq;
	for (int i = 0; i < 3; i++)
		assert_int_equal(VipCQWait(cq, 3000, &vi, &rq), VIP_SUCCESS);
	assert_int_equal(VipEventWait(e1, 20), VIP_TIMEOUT);     /* removed: not signalled */
	assert_int_equal(VipEventClose(e1), VIP_SUCCESS);
	assert_int_equal(VipEventWait(e1, 0), VIP_INVALID_PARAMETER);
	assert_int_equal(VipEventClose(hi), VIP_ERROR_RESOURCE); /* the CQ holds it */
	tv_close(&t);                                            /* the CQ goes with the NIC */
	assert_int_equal(VipEventClose(hi), VIP_SUCCESS);
	assert_int_equal(VipEventClose(e2), VIP_SUCCESS);
}

/* In a network namespace of its own with no route (a child; root or a user namespace): a host
 * that cannot be reached gives VIP_NOT_REACHABLE, not NO_MATCH. */
static void not_reachable(void **state)
{
	(void)state;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		if (unshare(CLONE_NEWNET) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
			_exit(77);
		setenv("SOFTRNIC_VIPL_ADDR", "127.0.0.1:7447", 1);
		VIP_NIC_HANDLE nic;
		VIP_PROTECTION_HANDLE ptag;
		VIP_VI_HANDLE vi;
		VIP_VI_ATTRIBUTES ra, va = { .ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY,
					     .MaxTransferSize = 4096 };
		struct tv_addr l, r;
		if (VipOpenNic("softrnic0", &nic) != VIP_SUCCESS ||
		    VipCreatePtag(nic, &ptag) != VIP_SUCCESS)
			_exit(2);
		va.Ptag = ptag;
		if (VipCreateVi(nic, &va, NULL, NULL, &vi) != VIP_SUCCESS)
			_exit(3);
		memset(&l, 0, sizeof(l));
		memset(&r, 0, sizeof(r));
		r.a.HostAddressLen = 6;
		r.a.DiscriminatorLen = 1;
		static const uint8_t host[7] = { 198, 51, 100, 7, 0x1d, 0x17, 'x' };
		memcpy(r.a.HostAddress, host, 7);
		VIP_RETURN rc = VipConnectRequest(vi, &l.a, &r.a, 2000, &ra);
		_exit(rc == VIP_NOT_REACHABLE ? 0 : 10 + (int)rc);
	}
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	tv_env();
	const struct CMUnitTest tests[] = {
		/* first: the child it forks must not inherit the threads of open NICs */
		cmocka_unit_test(not_reachable),
		cmocka_unit_test(user_data), cmocka_unit_test(dfc_interrupt),
		cmocka_unit_test(tags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
