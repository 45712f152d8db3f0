/* Giganet cLAN style: devices "/dev/clanvi0" / "/dev/clanvi1", descriptors as Control / Data[],
 * descriptor flow control (VIP_SERVICE_DFC, VipPostDeferredSends), a VIP_VI_CALLBACK, a CQ with
 * tag demultiplexing (VipAddTagCQ, VIP_EVENT_HANDLE) keyed by VipSetUserData, and the cLAN
 * return codes. */
#include "compat.h"

#include <string.h>
#include <time.h>

#define MSG 48
#define TAG 7

static volatile int sent;

static void on_sent(VIP_PVOID Context, VIP_NIC_HANDLE NicHandle, VIP_VI_HANDLE ViHandle,
		    VIP_DESCRIPTOR *Descriptor)
{
	(void)Context;
	(void)NicHandle;
	(void)ViHandle;
	if ((Descriptor->Control.Status & VIP_STATUS_DONE) &&
	    !(Descriptor->Control.Status & VIP_STATUS_ERROR_MASK))
		sent = 1;
}

static void on_cq(VIP_PVOID Context, VIP_NIC_HANDLE NicHandle, VIP_VI_HANDLE ViHandle,
		  VIP_BOOLEAN RecvQueue)
{
	(void)Context;
	(void)NicHandle;
	(void)ViHandle;
	(void)RecvQueue;
}

static const char *code(VIP_RETURN rc)
{
	switch (rc) {
	case VIP_SUCCESS: return "success";
	case VIP_NO_MATCH: return "no match";
	case VIP_NOT_REACHABLE: return "not reachable";
	case VIP_ERROR_NOT_SUPPORTED: return "not supported";
	case VIP_ERROR: return "error";
	default: return "other";
	}
}

static void desc(VIP_DESCRIPTOR *d, char *buf, VIP_MEM_HANDLE mh, VIP_UINT32 len)
{
	memset(d, 0, sizeof(*d));
	d->Control.Control = VIP_CONTROL_OP_SENDRECV;
	d->Control.SegCount = 1;
	d->Control.Length = len;
	d->Data[0].Data.Address = buf;
	d->Data[0].Handle = mh;
	d->Data[0].Length = len;
}

/* the server's VI again, its receive queue on cq */
static int server_vi_on_cq(struct compat_pair *p, VIP_CQ_HANDLE cq)
{
	VIP_VI_ATTRIBUTES va;
	memset(&va, 0, sizeof(va));
	va.ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_DFC;
	va.MaxTransferSize = 4096;
	va.Ptag = p->s.ptag;
	return VipDestroyVi(p->s.vi) == VIP_SUCCESS &&
	       VipCreateVi(p->s.nic, &va, NULL, cq, &p->s.vi) == VIP_SUCCESS ? 0 : -1;
}

int compat_clan_run(void)
{
	struct compat_pair p;
	VIP_CQ_HANDLE cq = NULL;
	VIP_EVENT_HANDLE ev = NULL;
	VIP_VI_CALLBACK callback = on_sent;
	VIP_CQ_CALLBACK cq_callback = on_cq;
	VIP_AUTODISCOVERY_LIST list;
	VIP_DESCRIPTOR *sd, *rd, *done = NULL;
	VIP_VI_HANDLE which = NULL;
	VIP_BOOLEAN recvq = VIP_FALSE, deferred = VIP_FALSE;
	int rc = -1;

	sent = 0;
	if (compat_open(&p, "/dev/clanvi0", "/dev/clanvi1",
			VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_DFC) ||
	    VipCreateCQ(p.s.nic, 16, &cq) != VIP_SUCCESS || server_vi_on_cq(&p, cq))
		goto out;
	VipSetUserData(p.s.vi, (VIP_PVOID)(VIP_ULONG)TAG);
	if (VipAddTagCQ(cq, &ev, TAG, 1) != VIP_SUCCESS || ev == NULL ||
	    compat_connect(&p, "clan", NULL))
		goto out;
	/* DFC: the server has no receive posted yet, the send waits in the library */
	sd = (VIP_DESCRIPTOR *)(void *)p.c.mem;
	desc(sd, p.c.mem + 4096, p.c.mh, MSG);
	memset(p.c.mem + 4096, 'C', MSG);
	if (VipPostSend(p.c.vi, sd, p.c.mh) != VIP_SUCCESS ||
	    VipSendNotify(p.c.vi, NULL, callback) != VIP_SUCCESS ||
	    VipPostDeferredSends(p.c.vi, VIP_FALSE, &deferred) != VIP_SUCCESS || !deferred)
		goto out;
	rd = (VIP_DESCRIPTOR *)(void *)p.s.mem;
	desc(rd, p.s.mem + 4096, p.s.mh, MSG);
	if (VipPostRecv(p.s.vi, rd, p.s.mh) != VIP_SUCCESS)
		goto out;
	for (int i = 0; i < 5000 && deferred; i++) {
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		if (VipPostDeferredSends(p.c.vi, VIP_TRUE, &deferred) != VIP_SUCCESS)
			goto out;
	}
	if (deferred || VipEventWait(ev, 5000) != VIP_SUCCESS ||
	    VipCQDone(cq, &which, &recvq) != VIP_SUCCESS || which != p.s.vi || !recvq ||
	    VipRecvDone(p.s.vi, &done) != VIP_SUCCESS || done != rd ||
	    (VIP_ULONG)VipGetUserData(which) != TAG)
		goto out;
	for (int i = 0; i < 5000 && !sent; i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (sent && rd->Control.Length == MSG && memcmp(p.s.mem + 4096, p.c.mem + 4096, MSG) == 0 &&
	    rd->Control.Next.Descriptor == NULL &&
	    VipCQNotify(cq, NULL, cq_callback) == VIP_SUCCESS &&
	    strcmp(code(VipQuerySystemManagementInfo(p.s.nic, 2, &list)), "not supported") == 0)
		rc = 0;
out:
	if (cq != NULL && ev != NULL)
		VipRemoveTagCQ(cq, ev, TAG);
	if (ev != NULL)
		VipEventClose(ev);
	compat_close(&p);
	if (cq != NULL)
		VipDestroyCQ(cq);
	return rc;
}
