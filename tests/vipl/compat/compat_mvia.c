/* M-VIA style (NERSC's M-VIA: Intel's spellings, its Ethernet devices, the name service): the
 * NICs "/dev/via_eth0" and "/dev/via_eth1", VipNSInit, the server found by VipNSGetHostByName,
 * an RDMA Write with immediate data (DS[0].Remote then DS[1].Local). */
#include "compat.h"

#include <stdio.h>
#include <string.h>

#define MSG 64

int compat_mvia_run(void)
{
	struct compat_pair p;
	struct {
		VIP_NET_ADDRESS a;
		VIP_UINT8 room[16];
	} server;
	VIP_DESCRIPTOR *wd, *rd, *done = NULL;
	char name[64];
	int rc = -1;

	if (compat_open(&p, "/dev/via_eth0", "/dev/via_eth1", VIP_SERVICE_RELIABLE_DELIVERY) ||
	    VipNSInit(p.c.nic, NULL) != VIP_SUCCESS)
		goto out;
	/* the server NIC's own port: name:port */
	VIP_UINT8 hi = p.s.attr.LocalNicAddress[4], lo = p.s.attr.LocalNicAddress[5];
	snprintf(name, sizeof(name), "localhost:%u", (unsigned)(hi << 8 | lo));
	if (VipNSGetHostByName(p.c.nic, name, &server.a, 0) != VIP_SUCCESS)
		goto out;
	rd = (VIP_DESCRIPTOR *)(void *)p.s.mem; /* the Write's immediate data takes a receive */
	memset(rd, 0, sizeof(*rd));
	if (VipPostRecv(p.s.vi, rd, p.s.mh) != VIP_SUCCESS || compat_connect(&p, "mvia", &server.a))
		goto out;
	wd = (VIP_DESCRIPTOR *)(void *)p.c.mem;
	memset(wd, 0, sizeof(*wd));
	memset(p.c.mem + 4096, 'M', MSG);
	wd->CS.Control = VIP_CONTROL_OP_RDMAWRITE | VIP_CONTROL_IMMEDIATE;
	wd->CS.ImmediateData = 0x4d564941;
	wd->CS.SegCount = 2;
	wd->CS.Length = MSG;
	wd->DS[0].Remote.Data.Address = p.s.mem + 4096;
	wd->DS[0].Remote.Handle = p.s.mh;
	wd->DS[1].Local.Data.Address = p.c.mem + 4096;
	wd->DS[1].Local.Handle = p.c.mh;
	wd->DS[1].Local.Length = MSG;
	if (VipPostSend(p.c.vi, wd, p.c.mh) != VIP_SUCCESS ||
	    VipSendWait(p.c.vi, 5000, &done) != VIP_SUCCESS || done != wd ||
	    VipRecvWait(p.s.vi, 5000, &done) != VIP_SUCCESS || done != rd)
		goto out;
	if ((rd->CS.Status & VIP_STATUS_OP_MASK) == VIP_STATUS_OP_REMOTE_RDMA_WRITE &&
	    (rd->CS.Status & VIP_STATUS_IMMEDIATE) && rd->CS.ImmediateData == 0x4d564941 &&
	    memcmp(p.s.mem + 4096, p.c.mem + 4096, MSG) == 0 && VipNSShutdown(p.c.nic) == VIP_SUCCESS)
		rc = 0;
out:
	compat_close(&p);
	return rc;
}
