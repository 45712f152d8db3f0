/* va_dlpeer: peer A of P02 (t_port.c), a cLAN-era program that is not linked with the VI
 * Provider Library but loads it at run time, dlopen("libvipl.so"), and looks every call up by
 * name, as tools that ran on whichever VIA stack a cluster had installed did. cLAN's spellings:
 * "/dev/clanvi0", descriptors as Control / Data[], VIP_NOT_REACHABLE. The driver (va_main.c)
 * starts it in place of itself with the peer's arguments:
 *   va_dlpeer --role A --fd N --ip-a IP --port-a P --ip-b IP --port-b P P02
 * It finds B by the name VA_PEER_NAME (default "localhost") at the well-known port. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "va.h"

#define P_MSG 64

/* The calls this program makes, found in libvipl.so by name. */
static struct vip_table {
	VIP_RETURN (*OpenNic)(const VIP_CHAR *, VIP_NIC_HANDLE *);
	VIP_RETURN (*QueryNic)(VIP_NIC_HANDLE, VIP_NIC_ATTRIBUTES *);
	VIP_RETURN (*CloseNic)(VIP_NIC_HANDLE);
	VIP_RETURN (*CreatePtag)(VIP_NIC_HANDLE, VIP_PROTECTION_HANDLE *);
	VIP_RETURN (*DestroyPtag)(VIP_NIC_HANDLE, VIP_PROTECTION_HANDLE);
	VIP_RETURN (*RegisterMem)(VIP_NIC_HANDLE, VIP_PVOID, VIP_ULONG, VIP_MEM_ATTRIBUTES *,
				  VIP_MEM_HANDLE *);
	VIP_RETURN (*DeregisterMem)(VIP_NIC_HANDLE, VIP_PVOID, VIP_MEM_HANDLE);
	VIP_RETURN (*CreateVi)(VIP_NIC_HANDLE, VIP_VI_ATTRIBUTES *, VIP_CQ_HANDLE, VIP_CQ_HANDLE,
			       VIP_VI_HANDLE *);
	VIP_RETURN (*DestroyVi)(VIP_VI_HANDLE);
	VIP_RETURN (*QueryVi)(VIP_VI_HANDLE, VIP_VI_STATE *, VIP_VI_ATTRIBUTES *, VIP_BOOLEAN *,
			      VIP_BOOLEAN *);
	VIP_RETURN (*NSGetHostByName)(VIP_NIC_HANDLE, VIP_CHAR *, VIP_NET_ADDRESS *, VIP_ULONG);
	VIP_RETURN (*ConnectRequest)(VIP_VI_HANDLE, VIP_NET_ADDRESS *, VIP_NET_ADDRESS *,
				     VIP_ULONG, VIP_VI_ATTRIBUTES *);
	VIP_RETURN (*Disconnect)(VIP_VI_HANDLE);
	VIP_RETURN (*PostSend)(VIP_VI_HANDLE, VIP_DESCRIPTOR *, VIP_MEM_HANDLE);
	VIP_RETURN (*PostRecv)(VIP_VI_HANDLE, VIP_DESCRIPTOR *, VIP_MEM_HANDLE);
	VIP_RETURN (*SendWait)(VIP_VI_HANDLE, VIP_ULONG, VIP_DESCRIPTOR **);
	VIP_RETURN (*RecvWait)(VIP_VI_HANDLE, VIP_ULONG, VIP_DESCRIPTOR **);
	VIP_RETURN (*SendDone)(VIP_VI_HANDLE, VIP_DESCRIPTOR **);
	VIP_RETURN (*RecvDone)(VIP_VI_HANDLE, VIP_DESCRIPTOR **);
} vip;

static const struct { const char *name; size_t off; } vip_calls[] = {
#define CALL(n) { "Vip" #n, offsetof(struct vip_table, n) }
	CALL(OpenNic), CALL(QueryNic), CALL(CloseNic), CALL(CreatePtag), CALL(DestroyPtag),
	CALL(RegisterMem), CALL(DeregisterMem), CALL(CreateVi), CALL(DestroyVi), CALL(QueryVi),
	CALL(NSGetHostByName), CALL(ConnectRequest), CALL(Disconnect), CALL(PostSend),
	CALL(PostRecv), CALL(SendWait), CALL(RecvWait), CALL(SendDone), CALL(RecvDone),
#undef CALL
};

static void load_vipl(struct va_ctx *c)
{
	void *lib = dlopen("libvipl.so", RTLD_NOW);
	VA_TRUE(c, lib != NULL, "dlopen(\"libvipl.so\"): %s", dlerror());
	for (size_t i = 0; i < sizeof vip_calls / sizeof vip_calls[0]; i++) {
		void *f = dlsym(lib, vip_calls[i].name);
		VA_TRUE(c, f != NULL, "libvipl.so has no %s", vip_calls[i].name);
		/* POSIX's way from dlsym's data pointer to a function pointer */
		memcpy((char *)&vip + vip_calls[i].off, &f, sizeof f);
	}
}

/* One process's VIA: NIC, Ptag, 8 KiB registered (descriptors below 4096, data above), VI. */
struct node {
	VIP_NIC_HANDLE nic;
	VIP_NIC_ATTRIBUTES attr;
	VIP_PROTECTION_HANDLE ptag;
	VIP_MEM_HANDLE mh;
	char *mem;
	VIP_VI_HANDLE vi;
};

#define CK(c, call) VA_RC(c, call, VIP_SUCCESS)

static void node_open(struct va_ctx *c, struct node *n)
{
	VIP_MEM_ATTRIBUTES ma = { 0 };
	VIP_VI_ATTRIBUTES va = { 0 };
	CK(c, vip.OpenNic((const VIP_CHAR *)"/dev/clanvi0", &n->nic));
	CK(c, vip.QueryNic(n->nic, &n->attr));
	CK(c, vip.CreatePtag(n->nic, &n->ptag));
	n->mem = aligned_alloc(4096, 8192);
	VA_TRUE(c, n->mem != NULL, "out of memory");
	memset(n->mem, 0, 8192);
	ma.Ptag = n->ptag;
	CK(c, vip.RegisterMem(n->nic, n->mem, 8192, &ma, &n->mh));
	va.ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY;
	va.MaxTransferSize = 4096;
	va.Ptag = n->ptag;
	CK(c, vip.CreateVi(n->nic, &va, NULL, NULL, &n->vi));
}

/* Descriptor i (of 64 octets) and its data slot i, as cLAN's header spelled them. */
static VIP_DESCRIPTOR *node_desc(struct node *n, int i)
{
	VIP_DESCRIPTOR *d = (VIP_DESCRIPTOR *)(void *)(n->mem + 64 * i);
	memset(d, 0, sizeof *d);
	d->Control.Control = VIP_CONTROL_OP_SENDRECV;
	d->Control.SegCount = 1;
	d->Control.Length = P_MSG;
	d->Data[0].Data.Address = n->mem + 4096 + P_MSG * i;
	d->Data[0].Handle = n->mh;
	d->Data[0].Length = P_MSG;
	return d;
}

/* B by name at the well-known port; a cLAN program retried "no match" (nobody waits there
 * yet) and gave up on "not reachable". */
static void node_connect(struct va_ctx *c, struct node *n)
{
	struct { VIP_NET_ADDRESS a; VIP_UINT8 room[6 + 16]; } local, remote;
	const char *peer = getenv("VA_PEER_NAME");
	VIP_VI_ATTRIBUTES ra;
	peer = peer != NULL && peer[0] != '\0' ? peer : "localhost";
	CK(c, vip.NSGetHostByName(n->nic, (VIP_CHAR *)peer, &remote.a, 0));
	remote.a.DiscriminatorLen = 8;
	memcpy(remote.a.HostAddress + 6, "p02-clan", 8);
	local.a.HostAddressLen = 6;
	local.a.DiscriminatorLen = 5;
	memcpy(local.a.HostAddress, n->attr.LocalNicAddress, 6);
	memcpy(local.a.HostAddress + 6, "p02-a", 5);
	long long end = va_now_ms() + VA_CONNECT_MS;
	for (;;) {
		VIP_RETURN rc = vip.ConnectRequest(n->vi, &local.a, &remote.a, 1000, &ra);
		switch (rc) {
		case VIP_SUCCESS:
			return;
		case VIP_NOT_REACHABLE:
			va_fail(c, __LINE__, "%s is not reachable", peer);
		case VIP_NO_MATCH:
		case VIP_TIMEOUT:
			VA_TRUE(c, va_now_ms() < end, "%s: %s until the deadline", peer,
				va_rc_name(rc));
			va_sleep_ms(50);
			break;
		default:
			va_fail(c, __LINE__, "VipConnectRequest to %s: %s", peer, va_rc_name(rc));
		}
	}
}

static void node_exchange(struct va_ctx *c, struct node *n)
{
	VIP_DESCRIPTOR *rd = node_desc(n, 0), *sd = node_desc(n, 1), *done = NULL;
	struct va_msg m;
	CK(c, vip.PostRecv(n->vi, rd, n->mh));
	va_get(c, "ready", &m, VA_CONNECT_MS);
	node_connect(c, n);
	va_fill(sd->Data[0].Data.Address, P_MSG, 4);
	CK(c, vip.PostSend(n->vi, sd, n->mh));
	CK(c, vip.SendWait(n->vi, VA_WAIT_MS, &done));
	VA_TRUE(c, done == sd && (sd->Control.Status & VIP_STATUS_DONE) &&
			   !(sd->Control.Status & VIP_STATUS_ERROR_MASK),
		"send: status 0x%x", sd->Control.Status);
	CK(c, vip.RecvWait(n->vi, VA_WAIT_MS, &done));
	VA_TRUE(c, done == rd && !(rd->Control.Status & VIP_STATUS_ERROR_MASK) &&
			   rd->Control.Length == P_MSG &&
			   va_check_fill(rd->Data[0].Data.Address, P_MSG, 5, NULL),
		"reply: status 0x%x Length %u or data differ", rd->Control.Status,
		rd->Control.Length);
}

/* B disconnects first; this side sees it, then ends as a program does. */
static void node_close(struct va_ctx *c, struct node *n)
{
	VIP_VI_STATE st = VIP_STATE_CONNECTED;
	VIP_VI_ATTRIBUTES a;
	VIP_BOOLEAN se, re;
	VIP_DESCRIPTOR *d;
	long long end = va_now_ms() + VA_WAIT_MS;
	while (st == VIP_STATE_CONNECTED && va_now_ms() < end) {
		CK(c, vip.QueryVi(n->vi, &st, &a, &se, &re));
		va_sleep_ms(5);
	}
	VA_TRUE(c, st != VIP_STATE_CONNECTED, "still Connected after the peer's VipDisconnect");
	CK(c, vip.Disconnect(n->vi));
	while (vip.SendDone(n->vi, &d) == VIP_SUCCESS || vip.RecvDone(n->vi, &d) == VIP_SUCCESS)
		;
	CK(c, vip.DestroyVi(n->vi));
	va_barrier(c, "closed");
	CK(c, vip.DeregisterMem(n->nic, n->mem, n->mh));
	CK(c, vip.DestroyPtag(n->nic, n->ptag));
	CK(c, vip.CloseNic(n->nic));
	free(n->mem);
}

static void run_a(struct va_ctx *c)
{
	struct node n;
	load_vipl(c);
	node_open(c, &n);
	node_exchange(c, &n);
	va_barrier(c, "exchanged");
	va_quiet_begin(c);
	node_close(c, &n);
	va_quiet_end(c, "A's end after the peer's disconnect");
}

int main(int argc, char **argv)
{
	struct va_ctx c = { .role = 'A', .scenario = "P02", .ctl = -1 };
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (strcmp(k, "--fd") == 0) c.ctl = atoi(v);
		else if (strcmp(k, "--ip-a") == 0) snprintf(c.ip_a, sizeof c.ip_a, "%s", v);
		else if (strcmp(k, "--ip-b") == 0) snprintf(c.ip_b, sizeof c.ip_b, "%s", v);
		else if (strcmp(k, "--port-a") == 0) c.port_a = (uint16_t)atoi(v);
		else if (strcmp(k, "--port-b") == 0) c.port_b = (uint16_t)atoi(v);
		else if (strcmp(k, "--role") != 0) break;
	}
	if (c.ctl < 0 || strcmp(argv[argc - 1], "P02") != 0) {
		fprintf(stderr, "usage: va_dlpeer --role A --fd N --ip-a IP --port-a P "
				"--ip-b IP --port-b P P02 (started by vipl_accept)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	run_a(&c);
	return 0;
}
