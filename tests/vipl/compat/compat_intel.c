/* Intel's VIPL 1.0 style (VI Architecture Developer's Guide): device "nic0", descriptors as
 * CS / DS[].Local, the 5-argument VipQueryVi, a VIP_VI_NOTIFY_HANDLER on the receive queue. */
#include "compat.h"

#include <string.h>
#include <time.h>

#define MSG 100

static volatile int received;

static void on_recv(VIP_PVOID Context, VIP_NIC_HANDLE NicHandle, VIP_VI_HANDLE ViHandle,
		    VIP_DESCRIPTOR *DescriptorPtr)
{
	(void)NicHandle;
	(void)ViHandle;
	if (Context == &received && (DescriptorPtr->CS.Status & VIP_STATUS_DONE) &&
	    !(DescriptorPtr->CS.Status & VIP_STATUS_ERROR_MASK))
		received = (int)DescriptorPtr->CS.Length;
}

static void fill(VIP_DESCRIPTOR *d, char *buf, VIP_MEM_HANDLE mh, VIP_UINT32 len)
{
	memset(d, 0, sizeof(*d));
	d->CS.Control = VIP_CONTROL_OP_SENDRECV;
	d->CS.SegCount = 1;
	d->CS.Length = len;
	d->DS[0].Local.Data.Address = buf;
	d->DS[0].Local.Handle = mh;
	d->DS[0].Local.Length = len;
}

int compat_intel_run(void)
{
	struct compat_pair p;
	VIP_VI_NOTIFY_HANDLER handler = on_recv;
	VIP_DESCRIPTOR *sd, *rd, *done = NULL;
	VIP_VI_STATE state;
	VIP_VI_ATTRIBUTES attrs;
	VIP_BOOLEAN sq_empty, rq_empty;
	int rc = -1;

	received = 0;
	if (compat_open(&p, "nic0", "softrnic1", VIP_SERVICE_RELIABLE_DELIVERY))
		goto out;
	rd = (VIP_DESCRIPTOR *)(void *)p.s.mem;
	fill(rd, p.s.mem + 4096, p.s.mh, MSG);
	if (VipPostRecv(p.s.vi, rd, p.s.mh) != VIP_SUCCESS ||
	    VipRecvNotify(p.s.vi, (VIP_PVOID)&received, handler) != VIP_SUCCESS ||
	    compat_connect(&p, "intel", NULL))
		goto out;
	sd = (VIP_DESCRIPTOR *)(void *)p.c.mem;
	fill(sd, p.c.mem + 4096, p.c.mh, MSG);
	memset(p.c.mem + 4096, 'I', MSG);
	if (VipPostSend(p.c.vi, sd, p.c.mh) != VIP_SUCCESS ||
	    VipSendWait(p.c.vi, 5000, &done) != VIP_SUCCESS || done != sd ||
	    (sd->CS.Status & VIP_STATUS_OP_MASK) != VIP_STATUS_OP_SEND)
		goto out;
	for (int i = 0; i < 5000 && received == 0; i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (VipQueryVi(p.s.vi, &state, &attrs, &sq_empty, &rq_empty) == VIP_SUCCESS &&
	    state == VIP_STATE_CONNECTED && rq_empty && received == MSG &&
	    memcmp(p.s.mem + 4096, p.c.mem + 4096, MSG) == 0)
		rc = 0;
out:
	compat_close(&p);
	return rc;
}
