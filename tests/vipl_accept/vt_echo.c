/* vt_echo: a VIPL echo server and client for the VI/TCP hostile-peer test (vitcp_hostile.py).
 *   vt_echo -s        serve discriminator "echo" at SOFTRNIC_VIPL_ADDR, one connection after
 *                     another, forever: every message received goes back as a Send. It prints
 *                     "region ADDR HANDLE LEN" for the RDMA-enabled page it registered, with a
 *                     guard page either side that no peer may change: after every connection
 *                     the guards are checked and a change ends the server with status 3.
 *   vt_echo -c H:P    connect to "echo" at H:P, send "hello", expect it back; 0 on success.
 * Reliable Delivery VIs with RDMA Write and Read enabled. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vipl.h"

#define PAGE 4096
#define NRECV 4
#define MSG 256
#define GUARD 0xA5

/* Connection errors are the test's point: quiet (the VI's state tells the server). */
static void on_error(void *ctx, VIP_ERROR_DESCRIPTOR *e)
{
	(void)ctx;
	(void)e;
}

static bool connected(VIP_VI_HANDLE vi)
{
	VIP_VI_STATE st;
	VIP_VI_ATTRIBUTES a;
	VIP_BOOLEAN sq, rq;
	return VipQueryVi(vi, &st, &a, &sq, &rq) == VIP_SUCCESS && st == VIP_STATE_CONNECTED;
}

static void die(const char *what, VIP_RETURN rc)
{
	fprintf(stderr, "vt_echo: %s: %d\n", what, (int)rc);
	exit(2);
}

#define OK(call) do { VIP_RETURN rc_ = (call); if (rc_ != VIP_SUCCESS) die(#call, rc_); } while (0)

struct env {
	VIP_NIC_HANDLE nic;
	VIP_PROTECTION_HANDLE ptag;
	uint8_t *mem;               /* guard | RDMA page | guard | descriptors and buffers */
	VIP_MEM_HANDLE mh;
};

static void env_open(struct env *e)
{
	VIP_MEM_ATTRIBUTES ma;
	OK(VipOpenNic("vitcp0", &e->nic));
	OK(VipErrorCallback(e->nic, NULL, on_error));
	OK(VipCreatePtag(e->nic, &e->ptag));
	e->mem = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->mem == MAP_FAILED)
		die("mmap", 0);
	memset(e->mem, GUARD, 3 * PAGE);
	ma = (VIP_MEM_ATTRIBUTES){ .Ptag = e->ptag, .EnableRdmaWrite = VIP_TRUE,
				   .EnableRdmaRead = VIP_TRUE };
	OK(VipRegisterMem(e->nic, e->mem + PAGE, PAGE, &ma, &e->mh)); /* the one peers get */
}

static bool guards_intact(const struct env *e)
{
	for (size_t i = 0; i < PAGE; i++)
		if (e->mem[i] != GUARD || e->mem[2 * PAGE + i] != GUARD)
			return false;
	return true;
}

static VIP_VI_HANDLE new_vi(struct env *e)
{
	VIP_VI_ATTRIBUTES va = { .ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY,
				 .MaxTransferSize = 65536, .Ptag = e->ptag,
				 .EnableRdmaWrite = VIP_TRUE, .EnableRdmaRead = VIP_TRUE };
	VIP_VI_HANDLE vi;
	OK(VipCreateVi(e->nic, &va, NULL, NULL, &vi));
	return vi;
}

/* Descriptor i (0..2*NRECV) and its buffer, in the area registered without RDMA. */
static VIP_DESCRIPTOR *desc(struct env *e, VIP_MEM_HANDLE dh, unsigned i, uint32_t len,
			    bool send)
{
	VIP_DESCRIPTOR *d = (VIP_DESCRIPTOR *)(e->mem + 3 * PAGE + i * 128);
	uint8_t *buf = e->mem + 4 * PAGE + i * MSG;
	memset(d, 0, sizeof(*d));
	d->CS.Control = VIP_CONTROL_OP_SENDRECV;
	d->CS.SegCount = 1;
	d->CS.Length = send ? len : 0;
	d->DS[0].Local.Data.Address = buf;
	d->DS[0].Local.Handle = dh;
	d->DS[0].Local.Length = len;
	return d;
}

static void addr(VIP_NET_ADDRESS *a, const uint8_t *host, const char *disc)
{
	a->HostAddressLen = 6;
	a->DiscriminatorLen = (VIP_UINT16)strlen(disc);
	memcpy(a->HostAddress, host, 6);
	memcpy(a->HostAddress + 6, disc, strlen(disc));
}

/* Echo on vi until the connection ends. */
static void serve_one(struct env *e, VIP_MEM_HANDLE dh, VIP_VI_HANDLE vi)
{
	VIP_DESCRIPTOR *d;
	for (;;) {
		VIP_RETURN rc = VipRecvWait(vi, 200, &d);
		if (rc == VIP_TIMEOUT && connected(vi))
			continue;
		if (rc != VIP_SUCCESS || (d->CS.Status & VIP_STATUS_ERROR_MASK))
			break;
		VIP_DESCRIPTOR *s = desc(e, dh, 2 * NRECV, d->CS.Length, true);
		memcpy(s->DS[0].Local.Data.Address, d->DS[0].Local.Data.Address, d->CS.Length);
		OK(VipPostSend(vi, s, dh));
		if (VipSendWait(vi, 5000, &s) != VIP_SUCCESS)
			break;
		d->CS.Status = 0;
		OK(VipPostRecv(vi, d, dh));
	}
}

static int server(void)
{
	struct env e;
	env_open(&e);
	VIP_MEM_ATTRIBUTES ma = { .Ptag = e.ptag }; /* descriptors and buffers: no RDMA */
	VIP_MEM_HANDLE all;
	OK(VipRegisterMem(e.nic, e.mem + 3 * PAGE, 5 * PAGE, &ma, &all));
	printf("region %lu %lu %d\n", (unsigned long)(uintptr_t)(e.mem + PAGE),
	       (unsigned long)e.mh, PAGE);
	fflush(stdout);
	for (unsigned n = 0;; n++) {
		VIP_VI_HANDLE vi = new_vi(&e);
		for (unsigned i = 0; i < NRECV; i++)
			OK(VipPostRecv(vi, desc(&e, all, i, MSG, false), all));
		struct { VIP_NET_ADDRESS a; uint8_t more[64]; } l, r;
		static const uint8_t any[6];
		addr(&l.a, any, "echo");
		VIP_VI_ATTRIBUTES ra;
		VIP_CONN_HANDLE ch;
		VIP_RETURN rc = VipConnectWait(e.nic, &l.a, VIP_INFINITE, &r.a, &ra, &ch);
		if (rc == VIP_SUCCESS && VipConnectAccept(ch, vi) == VIP_SUCCESS)
			serve_one(&e, all, vi);
		else if (rc == VIP_SUCCESS)
			(void)VipConnectReject(ch);
		VipDisconnect(vi);
		VIP_DESCRIPTOR *d;
		while (VipRecvDone(vi, &d) == VIP_SUCCESS || VipSendDone(vi, &d) == VIP_SUCCESS)
			;
		OK(VipDestroyVi(vi));
		if (!guards_intact(&e)) {
			printf("guard pages changed\n");
			return 3;
		}
		printf("served %u\n", n);
		fflush(stdout);
	}
}

static int client(const char *hp)
{
	struct env e;
	env_open(&e);
	VIP_MEM_ATTRIBUTES ma = { .Ptag = e.ptag };
	VIP_MEM_HANDLE all;
	OK(VipRegisterMem(e.nic, e.mem + 3 * PAGE, 5 * PAGE, &ma, &all));
	char host[64];
	snprintf(host, sizeof(host), "%s", hp);
	char *colon = strchr(host, ':');
	if (colon == NULL)
		return 2;
	*colon = '\0';
	uint8_t h[6];
	uint16_t port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, h) != 1)
		return 2;
	memcpy(h + 4, &port, 2);
	VIP_VI_HANDLE vi = new_vi(&e);
	VIP_DESCRIPTOR *r = desc(&e, all, 0, MSG, false), *d;
	OK(VipPostRecv(vi, r, all));
	struct { VIP_NET_ADDRESS a; uint8_t more[64]; } l, rem;
	static const uint8_t any[6];
	addr(&l.a, any, "cli");
	addr(&rem.a, h, "echo");
	VIP_VI_ATTRIBUTES ra;
	OK(VipConnectRequest(vi, &l.a, &rem.a, 5000, &ra));
	VIP_DESCRIPTOR *s = desc(&e, all, 1, 6, true);
	memcpy(s->DS[0].Local.Data.Address, "hello", 6);
	OK(VipPostSend(vi, s, all));
	OK(VipSendWait(vi, 5000, &d));
	OK(VipRecvWait(vi, 5000, &d));
	bool ok = d->CS.Length == 6 && memcmp(d->DS[0].Local.Data.Address, "hello", 6) == 0 &&
		  !(d->CS.Status & VIP_STATUS_ERROR_MASK);
	printf("echo %s (Length %u, Status 0x%08x, \"%.6s\")\n", ok ? "ok" : "wrong",
	       (unsigned)d->CS.Length, (unsigned)d->CS.Status,
	       (const char *)d->DS[0].Local.Data.Address);
	VipDisconnect(vi);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "-s") == 0)
		return server();
	if (argc == 3 && strcmp(argv[1], "-c") == 0)
		return client(argv[2]);
	fprintf(stderr, "usage: vt_echo -s | -c IP:PORT\n");
	return 2;
}
