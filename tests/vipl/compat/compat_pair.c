/* The harness of the header-style programs (compat.h). */
#include "compat.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int side_open(struct compat_side *s, const char *dev, VIP_RELIABILITY_LEVEL rel)
{
	VIP_MEM_ATTRIBUTES ma;
	VIP_VI_ATTRIBUTES va;
	if (VipOpenNic(dev, &s->nic) != VIP_SUCCESS || VipQueryNic(s->nic, &s->attr) != VIP_SUCCESS ||
	    VipCreatePtag(s->nic, &s->ptag) != VIP_SUCCESS)
		return -1;
	s->mem = aligned_alloc(4096, 8192);
	if (s->mem == NULL)
		return -1;
	memset(s->mem, 0, 8192);
	ma.Ptag = s->ptag;
	ma.EnableRdmaWrite = VIP_TRUE;
	ma.EnableRdmaRead = VIP_FALSE;
	if (VipRegisterMem(s->nic, s->mem, 8192, &ma, &s->mh) != VIP_SUCCESS)
		return -1;
	memset(&va, 0, sizeof(va));
	va.ReliabilityLevel = rel;
	va.MaxTransferSize = 4096;
	va.Ptag = s->ptag;
	va.EnableRdmaWrite = VIP_TRUE;
	return VipCreateVi(s->nic, &va, NULL, NULL, &s->vi) == VIP_SUCCESS ? 0 : -1;
}

int compat_open(struct compat_pair *p, const char *sdev, const char *cdev,
		VIP_RELIABILITY_LEVEL rel)
{
	memset(p, 0, sizeof(*p));
	return side_open(&p->s, sdev, rel) || side_open(&p->c, cdev, rel) ? -1 : 0;
}

static void side_close(struct compat_side *s)
{
	VIP_DESCRIPTOR *d;
	if (s->vi != NULL) {
		VipDisconnect(s->vi);
		while (VipSendDone(s->vi, &d) == VIP_SUCCESS || VipRecvDone(s->vi, &d) == VIP_SUCCESS)
			;
		VipDestroyVi(s->vi);
	}
	if (s->mh != 0)
		VipDeregisterMem(s->nic, s->mem, s->mh);
	if (s->ptag != NULL)
		VipDestroyPtag(s->nic, s->ptag);
	if (s->nic != NULL)
		VipCloseNic(s->nic);
	free(s->mem);
}

void compat_close(struct compat_pair *p)
{
	side_close(&p->c);
	side_close(&p->s);
}

/* An address buffer: the header, 6 host octets, a discriminator of up to 64. */
struct addr {
	VIP_NET_ADDRESS a;
	VIP_UINT8 room[80];
};

static void addr_set(struct addr *n, const VIP_UINT8 *host, const char *disc)
{
	n->a.HostAddressLen = 6;
	n->a.DiscriminatorLen = (VIP_UINT16)strlen(disc);
	memcpy(n->a.HostAddress, host, 6);
	memcpy(n->a.HostAddress + 6, disc, strlen(disc));
}

struct request {
	VIP_VI_HANDLE vi;
	struct addr local, remote;
	VIP_RETURN rc;
};

static void *requester(void *arg)
{
	struct request *q = arg;
	VIP_VI_ATTRIBUTES ra;
	q->rc = VipConnectRequest(q->vi, &q->local.a, &q->remote.a, 5000, &ra);
	return NULL;
}

int compat_connect(struct compat_pair *p, const char *disc, const VIP_NET_ADDRESS *server_addr)
{
	struct request q = { .vi = p->c.vi, .rc = VIP_TIMEOUT };
	struct addr listen, peer;
	VIP_VI_ATTRIBUTES ra;
	VIP_CONN_HANDLE conn;
	pthread_t th;

	addr_set(&q.local, p->c.attr.LocalNicAddress, "client");
	addr_set(&q.remote, server_addr ? server_addr->HostAddress : p->s.attr.LocalNicAddress, disc);
	addr_set(&listen, p->s.attr.LocalNicAddress, disc);
	if (pthread_create(&th, NULL, requester, &q) != 0)
		return -1;
	VIP_RETURN rc = VipConnectWait(p->s.nic, &listen.a, 5000, &peer.a, &ra, &conn);
	if (rc == VIP_SUCCESS)
		rc = VipConnectAccept(conn, p->s.vi);
	pthread_join(th, NULL);
	return rc == VIP_SUCCESS && q.rc == VIP_SUCCESS ? 0 : -1;
}
