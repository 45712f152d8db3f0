/* va_setup: NIC, Ptag, registered arena, descriptors, addresses and connections for the
 * scenarios. Every call is checked; a failure ends the process with the reason. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "va.h"

void va_env_open(struct va_ctx *ctx, struct va_env *e, size_t arena_len)
{
	va_env_open_dev(ctx, e, "softrnic0", arena_len);
}

/* The same on the NIC that device name dev opens (docs/vipl.md "Device names"). */
void va_env_open_dev(struct va_ctx *ctx, struct va_env *e, const char *dev, size_t arena_len)
{
	memset(e, 0, sizeof *e);
	e->ctx = ctx;
	VA_OK(ctx, VipOpenNic(dev, &e->nic));
	VA_OK(ctx, VipQueryNic(e->nic, &e->attr));
	VA_OK(ctx, VipCreatePtag(e->nic, &e->ptag));
	e->arena_len = (arena_len + 4095) & ~(size_t)4095;
	e->arena = mmap(NULL, e->arena_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	VA_TRUE(ctx, e->arena != MAP_FAILED, "mmap of %zu bytes failed", e->arena_len);
	VIP_MEM_ATTRIBUTES ma = { .Ptag = e->ptag, .EnableRdmaWrite = VIP_TRUE,
				  .EnableRdmaRead = (e->attr.RDMAReadSupport != 0) };
	VA_OK(ctx, VipRegisterMem(e->nic, e->arena, e->arena_len, &ma, &e->mh));
	VA_TRUE(ctx, e->mh != 0, "VipRegisterMem returned the memory handle 0");
}

void va_env_close(struct va_env *e)
{
	VA_OK(e->ctx, VipDeregisterMem(e->nic, e->arena, e->mh));
	VA_OK(e->ctx, VipDestroyPtag(e->nic, e->ptag));
	VA_OK(e->ctx, VipCloseNic(e->nic));
	munmap(e->arena, e->arena_len);
}

void *va_alloc(struct va_env *e, size_t len)
{
	size_t off = (e->used + VIP_DESCRIPTOR_ALIGNMENT - 1) & ~(size_t)(VIP_DESCRIPTOR_ALIGNMENT - 1);
	VA_TRUE(e->ctx, off + len <= e->arena_len, "test arena exhausted (%zu + %zu > %zu)", off,
		len, e->arena_len);
	e->used = off + len;
	memset(e->arena + off, 0, len);
	return e->arena + off;
}

/* A zeroed descriptor with room for nseg segments after the control segment. */
VIP_DESCRIPTOR *va_desc(struct va_env *e, unsigned nseg)
{
	size_t len = sizeof(VIP_CONTROL_SEGMENT) + (nseg ? nseg : 1) * sizeof(VIP_DESCRIPTOR_SEGMENT);
	if (len < sizeof(VIP_DESCRIPTOR))
		len = sizeof(VIP_DESCRIPTOR);
	return va_alloc(e, len);
}

/* Data segment i of d (index into DS[], so after an address segment use i >= 1). */
void va_seg(struct va_env *e, VIP_DESCRIPTOR *d, unsigned i, void *buf, uint32_t len)
{
	d->DS[i].Local.Data.Address = buf;
	d->DS[i].Local.Handle = e->mh;
	d->DS[i].Local.Length = len;
}

VIP_DESCRIPTOR *va_desc1(struct va_env *e, uint16_t control, void *buf, uint32_t len)
{
	VIP_DESCRIPTOR *d = va_desc(e, 1);
	d->CS.Control = control;
	d->CS.SegCount = 1;
	d->CS.Length = len;
	va_seg(e, d, 0, buf, len);
	return d;
}

VIP_DESCRIPTOR *va_rdma_desc(struct va_env *e, uint16_t op, uint64_t rva, VIP_MEM_HANDLE rh,
			     void *buf, uint32_t len)
{
	VIP_DESCRIPTOR *d = va_desc(e, 2);
	d->CS.Control = op;
	d->CS.SegCount = 2;
	d->CS.Length = len;
	d->DS[0].Remote.Data.AddressBits = rva;
	d->DS[0].Remote.Handle = rh;
	va_seg(e, d, 1, buf, len);
	return d;
}

/* Ready to post again: Status 0 (VIA §10.2: the consumer clears it before posting). */
void va_desc_reset(VIP_DESCRIPTOR *d)
{
	d->CS.Status = 0;
	d->CS.Next.AddressBits = 0;
	d->CS.NextHandle = 0;
}

VIP_VI_ATTRIBUTES va_vi_attrs(struct va_env *e, VIP_RELIABILITY_LEVEL rel)
{
	VIP_VI_ATTRIBUTES a = { .ReliabilityLevel = rel, .MaxTransferSize = 65536,
				.QoS = NULL, .Ptag = e->ptag, .EnableRdmaWrite = VIP_TRUE,
				.EnableRdmaRead = rel != VIP_SERVICE_UNRELIABLE &&
						  (e->attr.RDMAReadSupport & rel) };
	if (a.MaxTransferSize > e->attr.MaxTransferSize)
		a.MaxTransferSize = e->attr.MaxTransferSize;
	return a;
}

VIP_VI_HANDLE va_vi_attr(struct va_env *e, const VIP_VI_ATTRIBUTES *a, VIP_CQ_HANDLE scq,
			 VIP_CQ_HANDLE rcq)
{
	VIP_VI_HANDLE vi = NULL;
	VIP_VI_ATTRIBUTES copy = *a;
	VA_OK(e->ctx, VipCreateVi(e->nic, &copy, scq, rcq, &vi));
	VA_TRUE(e->ctx, vi != NULL, "VipCreateVi returned a NULL handle");
	return vi;
}

VIP_VI_HANDLE va_vi(struct va_env *e, VIP_RELIABILITY_LEVEL rel, VIP_CQ_HANDLE scq,
		    VIP_CQ_HANDLE rcq)
{
	VIP_VI_ATTRIBUTES a = va_vi_attrs(e, rel);
	return va_vi_attr(e, &a, scq, rcq);
}

static VIP_NET_ADDRESS *make_addr(struct va_env *e, const uint8_t host[6], const char *disc)
{
	size_t dl = strlen(disc);
	VA_TRUE(e->ctx, dl <= VA_DISC_MAX, "discriminator too long");
	VIP_NET_ADDRESS *a = calloc(1, sizeof *a + 6 + VA_DISC_MAX);
	VA_TRUE(e->ctx, a != NULL, "out of memory");
	a->HostAddressLen = 6;
	a->DiscriminatorLen = (VIP_UINT16)dl;
	memcpy(a->HostAddress, host, 6);
	memcpy(a->HostAddress + 6, disc, dl);
	return a;
}

/* Our address as the NIC reports it (NicAddressLen 6: IPv4 + port, docs/vipl.md). */
VIP_NET_ADDRESS *va_local_addr(struct va_env *e, const char *disc)
{
	VA_TRUE(e->ctx, e->attr.NicAddressLen == 6 && e->attr.LocalNicAddress,
		"VipQueryNic: NicAddressLen %u (expected 6) or no LocalNicAddress",
		e->attr.NicAddressLen);
	return make_addr(e, e->attr.LocalNicAddress, disc);
}

/* The peer's address: its IP and the port its SOFTRNIC_VIPL_ADDR names. */
VIP_NET_ADDRESS *va_peer_addr(struct va_env *e, const char *disc)
{
	struct va_ctx *c = e->ctx;
	uint8_t host[6];
	const char *ip = c->role == 'A' ? c->ip_b : c->ip_a;
	uint16_t port = htons(c->role == 'A' ? c->port_b : c->port_a);
	VA_TRUE(c, inet_pton(AF_INET, ip, host) == 1, "bad peer IP %s", ip);
	memcpy(host + 4, &port, 2);
	return make_addr(e, host, disc);
}

/* VipConnectWait on our address with discriminator disc. *remote (when not NULL) gets the
 * requester's address, which the caller frees. */
VIP_RETURN va_wait_request(struct va_env *e, const char *disc, VIP_ULONG ms,
			   VIP_VI_ATTRIBUTES *rattr, VIP_CONN_HANDLE *conn, VIP_NET_ADDRESS **remote)
{
	VIP_NET_ADDRESS *la = va_local_addr(e, disc), *ra = va_local_addr(e, "");
	VIP_RETURN rc = VipConnectWait(e->nic, la, ms, ra, rattr, conn);
	free(la);
	if (remote)
		*remote = ra;
	else
		free(ra);
	return rc;
}

/* VipConnectRequest from our address (discriminator ldisc) to the peer's (rdisc). */
VIP_RETURN va_request(struct va_env *e, VIP_VI_HANDLE vi, const char *ldisc, const char *rdisc,
		      VIP_ULONG ms, VIP_VI_ATTRIBUTES *rattr)
{
	VIP_NET_ADDRESS *la = va_local_addr(e, ldisc), *ra = va_peer_addr(e, rdisc);
	VIP_RETURN rc = VipConnectRequest(vi, la, ra, ms, rattr);
	free(la);
	free(ra);
	return rc;
}

void va_server_accept(struct va_env *e, VIP_VI_HANDLE vi, const char *disc)
{
	VIP_VI_ATTRIBUTES rattr;
	VIP_CONN_HANDLE conn = NULL;
	VA_OK(e->ctx, va_wait_request(e, disc, VA_CONNECT_MS, &rattr, &conn, NULL));
	VA_OK(e->ctx, VipConnectAccept(conn, vi));
}

void va_client_connect(struct va_env *e, VIP_VI_HANDLE vi, const char *disc)
{
	VIP_VI_ATTRIBUTES rattr;
	VA_OK(e->ctx, va_request(e, vi, disc, disc, VA_CONNECT_MS, &rattr));
}

VIP_VI_STATE va_state(struct va_env *e, VIP_VI_HANDLE vi)
{
	VIP_VI_STATE st;
	VIP_VI_ATTRIBUTES a;
	VIP_BOOLEAN se, re;
	VA_OK(e->ctx, VipQueryVi(vi, &st, &a, &se, &re));
	return st;
}

/* Polls VipQueryVi until the VI is in state want (bounded). */
void va_wait_state(struct va_env *e, VIP_VI_HANDLE vi, VIP_VI_STATE want, unsigned ms)
{
	long long end = va_now_ms() + ms;
	VIP_VI_STATE st;
	while ((st = va_state(e, vi)) != want && va_now_ms() < end)
		va_sleep_ms(5);
	VA_TRUE(e->ctx, st == want, "VI state %s after %u ms, expected %s", va_state_name(st),
		ms, va_state_name(want));
}

VIP_DESCRIPTOR *va_send_wait(struct va_env *e, VIP_VI_HANDLE vi)
{
	VIP_DESCRIPTOR *d = NULL;
	VA_OK(e->ctx, VipSendWait(vi, VA_WAIT_MS, &d));
	VA_TRUE(e->ctx, d != NULL, "VipSendWait returned SUCCESS with a NULL descriptor");
	return d;
}

VIP_DESCRIPTOR *va_recv_wait(struct va_env *e, VIP_VI_HANDLE vi)
{
	VIP_DESCRIPTOR *d = NULL;
	VA_OK(e->ctx, VipRecvWait(vi, VA_WAIT_MS, &d));
	VA_TRUE(e->ctx, d != NULL, "VipRecvWait returned SUCCESS with a NULL descriptor");
	return d;
}

/* The dequeued descriptor is the expected one and completed without error with op. */
void va_expect_desc(struct va_env *e, VIP_DESCRIPTOR *got, VIP_DESCRIPTOR *want, uint32_t op,
		    const char *what)
{
	char b[128];
	uint32_t st = got->CS.Status;
	VA_TRUE(e->ctx, got == want, "%s: dequeued descriptor %p, expected %p", what,
		(void *)got, (void *)want);
	VA_TRUE(e->ctx, (st & VIP_STATUS_DONE) && !(st & VIP_STATUS_ERROR_MASK) &&
				(st & VIP_STATUS_OP_MASK) == op,
		"%s: status %s, expected DONE, no error, op 0x%05x", what,
		va_status_str(st, b, sizeof b), op);
}

/* Disconnect, drain both queues, destroy. */
void va_teardown(struct va_env *e, VIP_VI_HANDLE vi)
{
	VIP_DESCRIPTOR *d;
	VA_OK(e->ctx, VipDisconnect(vi));
	long long end = va_now_ms() + VA_WAIT_MS;
	for (;;) {
		VIP_VI_STATE st;
		VIP_VI_ATTRIBUTES a;
		VIP_BOOLEAN se = 0, re = 0;
		VA_OK(e->ctx, VipQueryVi(vi, &st, &a, &se, &re));
		while (VipSendDone(vi, &d) == VIP_SUCCESS)
			;
		while (VipRecvDone(vi, &d) == VIP_SUCCESS)
			;
		if (se && re)
			break;
		VA_TRUE(e->ctx, va_now_ms() < end, "queues not empty %u ms after VipDisconnect",
			(unsigned)VA_WAIT_MS);
		va_sleep_ms(2);
	}
	VA_OK(e->ctx, VipDestroyVi(vi));
}

/* The start most roles share: the environment (64 KiB arena), one VI of level rel without
 * CQs, and the "open" barrier. */
VIP_VI_HANDLE va_open_vi(struct va_ctx *ctx, struct va_env *e, VIP_RELIABILITY_LEVEL rel)
{
	va_env_open(ctx, e, 65536);
	VIP_VI_HANDLE vi = va_vi(e, rel, NULL, NULL);
	va_barrier(ctx, "open");
	return vi;
}

/* The end most roles share: the barrier tag, then vi torn down and the environment closed. */
void va_close_vi(struct va_env *e, VIP_VI_HANDLE vi, const char *tag)
{
	va_barrier(e->ctx, tag);
	va_teardown(e, vi);
	va_env_close(e);
}

/* Spins on the descriptor's Status word (VIA §6.4.2: a consumer may poll memory) until Done. */
uint32_t va_status_spin(struct va_env *e, VIP_DESCRIPTOR *d, unsigned ms)
{
	long long end = va_now_ms() + ms;
	uint32_t st;
	while (!((st = __atomic_load_n(&d->CS.Status, __ATOMIC_ACQUIRE)) & VIP_STATUS_DONE)) {
		VA_TRUE(e->ctx, va_now_ms() < end, "descriptor %p not Done after %u ms",
			(void *)d, ms);
		va_sleep_ms(1);
	}
	return st;
}

void va_post_send(struct va_env *e, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d)
{
	va_desc_reset(d);
	VA_OK(e->ctx, VipPostSend(vi, d, e->mh));
}

void va_post_recv(struct va_env *e, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d)
{
	va_desc_reset(d);
	VA_OK(e->ctx, VipPostRecv(vi, d, e->mh));
}
