/* P01-P03: VIA programs as they were ported (docs/acceptance-vipl.md "Porting scenarios"),
 * two processes on the cluster's one well-known port, each finding the other by host name.
 *   P01  A: M-VIA style (Intel's spellings, "/dev/via_eth0", VipNSInit, an RDMA Write with
 *        immediate data); B: cLAN style ("/dev/clanvi0", Control / Data[], its receive queue on
 *        a CQ demultiplexed by tag: VipSetUserData, VipAddTagCQ, VipEventWait).
 *   P02  A: va_dlpeer.c, a cLAN program that loads dlopen("libvipl.so"); B here: M-VIA's
 *        loopback device "/dev/via_lo".
 *   P03  B has two NICs, both found at the one well-known port by discriminator.
 * The peer's name is VA_PEER_NAME (default "localhost": on kernel sockets both processes are
 * one host); over DPDK, accept_dpdk.sh gives each peer's port a name in a hosts file of its
 * own. The ends are normal disconnects, and nothing may appear on stderr from them. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "va.h"

#define P_MSG 64
#define P_TAG 29                 /* cLAN programs kept a peer's index as the VI's tag */
#define P_IMM 0x56495041u

/* A receive or send descriptor as cLAN's header spelled it. */
static VIP_DESCRIPTOR *clan_desc(struct va_env *e, char *buf, VIP_UINT32 len)
{
	VIP_DESCRIPTOR *d = va_desc(e, 1);
	d->Control.Control = VIP_CONTROL_OP_SENDRECV;
	d->Control.SegCount = 1;
	d->Control.Length = len;
	d->Data[0].Data.Address = buf;
	d->Data[0].Handle = e->mh;
	d->Data[0].Length = len;
	return d;
}

static const char *peer_name(void)
{
	const char *n = getenv("VA_PEER_NAME");
	return n != NULL && n[0] != '\0' ? n : "localhost";
}

/* The server as the name service gives it: the peer's IP at the well-known port, which both
 * processes were given (one_port), then the discriminator. */
static VIP_NET_ADDRESS *server_by_name(struct va_env *e, const char *disc)
{
	struct va_ctx *c = e->ctx;
	VIP_NET_ADDRESS *a = va_local_addr(e, disc);
	struct in_addr want;
	uint16_t port;
	VA_OK(c, VipNSGetHostByName(e->nic, (VIP_CHAR *)peer_name(), a, 0));
	VA_TRUE(c, inet_pton(AF_INET, c->ip_b, &want) == 1, "bad peer IP %s", c->ip_b);
	memcpy(&port, a->HostAddress + 4, 2);
	VA_TRUE(c, a->HostAddressLen == 6 && memcmp(a->HostAddress, &want, 4) == 0 &&
			   ntohs(port) == c->port_a,
		"VipNSGetHostByName(%s): not %s:%u", peer_name(), c->ip_b, c->port_a);
	return a;
}

/* VipConnectRequest to the address the name gave, again while nobody waits there yet. */
static void connect_by_name(struct va_env *e, VIP_VI_HANDLE vi, const char *disc)
{
	VIP_NET_ADDRESS *local = va_local_addr(e, disc), *remote = server_by_name(e, disc);
	VIP_VI_ATTRIBUTES ra;
	long long end = va_now_ms() + VA_CONNECT_MS;
	VIP_RETURN rc;
	while ((rc = VipConnectRequest(vi, local, remote, 1000, &ra)) != VIP_SUCCESS &&
	       (rc == VIP_NO_MATCH || rc == VIP_TIMEOUT) && va_now_ms() < end)
		va_sleep_ms(50);
	VA_TRUE(e->ctx, rc == VIP_SUCCESS, "VipConnectRequest to %s: %s", peer_name(),
		va_rc_name(rc));
	free(local);
	free(remote);
}

/* The requester's address names the peer back (VipNSGetHostByAddr). */
static void check_name_back(struct va_env *e, VIP_NET_ADDRESS *remote)
{
	char name[256];
	VIP_ULONG len = sizeof name;
	VA_OK(e->ctx, VipNSGetHostByAddr(e->nic, remote, name, &len));
	VA_TRUE(e->ctx, strcmp(name, peer_name()) == 0, "VipNSGetHostByAddr: '%s', expected '%s'",
		name, peer_name());
}

static void p01_send(struct va_env *e, VIP_VI_HANDLE vi, char *buf, const struct va_msg *m)
{
	va_fill(buf, P_MSG, 1);
	VIP_DESCRIPTOR *sd = va_desc1(e, VIP_CONTROL_OP_SENDRECV, buf, P_MSG);
	va_post_send(e, vi, sd);
	va_expect_desc(e, va_send_wait(e, vi), sd, VIP_STATUS_OP_SEND, "send");
	va_fill(buf + P_MSG, P_MSG, 2);
	VIP_DESCRIPTOR *wd = va_desc(e, 2);
	wd->CS.Control = VIP_CONTROL_OP_RDMAWRITE | VIP_CONTROL_IMMEDIATE;
	wd->CS.ImmediateData = P_IMM;
	wd->CS.SegCount = 2;
	wd->CS.Length = P_MSG;
	wd->DS[0].Remote.Data.AddressBits = m->v[0];
	wd->DS[0].Remote.Handle = (VIP_MEM_HANDLE)m->v[1];
	wd->DS[1].Local.Data.Address = buf + P_MSG;
	wd->DS[1].Local.Handle = e->mh;
	wd->DS[1].Local.Length = P_MSG;
	va_post_send(e, vi, wd);
	va_expect_desc(e, va_send_wait(e, vi), wd, VIP_STATUS_OP_RDMA_WRITE, "RDMA Write");
}

void p01_a(struct va_ctx *c)
{
	struct va_env e;
	struct va_msg m;
	va_env_open_dev(c, &e, "/dev/via_eth0", 65536);
	VA_OK(c, VipNSInit(e.nic, NULL));
	VIP_VI_HANDLE vi = va_vi(&e, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	char *buf = va_alloc(&e, 3 * P_MSG);
	VIP_DESCRIPTOR *rd = va_desc1(&e, 0, buf + 2 * P_MSG, P_MSG);
	va_post_recv(&e, vi, rd);
	va_get(c, "mem", &m, VA_CONNECT_MS);
	connect_by_name(&e, vi, "p01-mvia");
	p01_send(&e, vi, buf, &m);
	va_expect_desc(&e, va_recv_wait(&e, vi), rd, VIP_STATUS_OP_RECEIVE, "reply");
	VA_TRUE(c, rd->CS.Length == P_MSG && va_check_fill(buf + 2 * P_MSG, P_MSG, 3, NULL),
		"reply: Length %u or data differ", rd->CS.Length);
	va_barrier(c, "exchanged");
	va_quiet_begin(c);
	va_teardown(&e, vi);
	va_barrier(c, "closed");
	VA_OK(c, VipNSShutdown(e.nic));
	va_env_close(&e);
	va_quiet_end(c, "A's disconnect and close");
}

/* One entry of cq for VI vi: its tag's event, then the CQ names the VI and its receive queue,
 * then the receive queue gives want. */
static void clan_tagged_recv(struct va_env *e, VIP_CQ_HANDLE cq, VIP_EVENT_HANDLE ev,
			     VIP_VI_HANDLE vi, VIP_DESCRIPTOR *want, uint32_t op, const char *what)
{
	VIP_VI_HANDLE which = NULL;
	VIP_BOOLEAN recvq = VIP_FALSE;
	VIP_DESCRIPTOR *got = NULL;
	VA_OK(e->ctx, VipEventWait(ev, VA_WAIT_MS));
	VA_OK(e->ctx, VipCQDone(cq, &which, &recvq));
	VA_TRUE(e->ctx, which == vi && recvq, "%s: VipCQDone gave VI %p queue %d", what,
		(void *)which, recvq);
	VA_TRUE(e->ctx, (VIP_ULONG)VipGetUserData(which) == P_TAG, "%s: user data not the tag",
		what);
	VA_OK(e->ctx, VipRecvDone(which, &got));
	va_expect_desc(e, got, want, op, what);
}

static void p01_check(struct va_env *e, char *buf, VIP_DESCRIPTOR *rd[2])
{
	struct va_ctx *c = e->ctx;
	VA_TRUE(c, rd[0]->Control.Length == P_MSG && va_check_fill(buf, P_MSG, 1, NULL),
		"send: Length %u or data differ", rd[0]->Control.Length);
	VA_TRUE(c, (rd[1]->Control.Status & VIP_STATUS_IMMEDIATE) &&
			   rd[1]->Control.ImmediateData == P_IMM &&
			   va_check_fill(buf + P_MSG, P_MSG, 2, NULL),
		"RDMA Write: immediate 0x%x or data differ", rd[1]->Control.ImmediateData);
}

/* B's VI state once A has disconnected: anything but Connected. */
static void wait_peer_gone(struct va_env *e, VIP_VI_HANDLE vi)
{
	long long end = va_now_ms() + VA_WAIT_MS;
	while (va_state(e, vi) == VIP_STATE_CONNECTED && va_now_ms() < end)
		va_sleep_ms(5);
	VA_TRUE(e->ctx, va_state(e, vi) != VIP_STATE_CONNECTED,
		"VI still Connected %lu ms after the peer's VipDisconnect", VA_WAIT_MS);
}

/* B's side of the connection: the request for A's discriminator, which names A back. */
static void p01_accept(struct va_env *e, VIP_VI_HANDLE vi)
{
	VIP_CONN_HANDLE conn = NULL;
	VIP_NET_ADDRESS *remote = NULL;
	VIP_VI_ATTRIBUTES ra;
	VA_OK(e->ctx, va_wait_request(e, "p01-mvia", VA_CONNECT_MS, &ra, &conn, &remote));
	VA_OK(e->ctx, VipConnectAccept(conn, vi));
	check_name_back(e, remote);
	free(remote);
}

static void p01_reply(struct va_env *e, VIP_VI_HANDLE vi, char *buf)
{
	VIP_DESCRIPTOR *done = NULL;
	va_fill(buf, P_MSG, 3);
	VIP_DESCRIPTOR *sd = clan_desc(e, buf, P_MSG);
	VA_OK(e->ctx, VipPostSend(vi, sd, e->mh));
	VA_OK(e->ctx, VipSendWait(vi, VA_WAIT_MS, &done));
	va_expect_desc(e, done, sd, VIP_STATUS_OP_SEND, "reply");
}

void p01_b(struct va_ctx *c)
{
	struct va_env e;
	VIP_CQ_HANDLE cq = NULL;
	VIP_EVENT_HANDLE ev = NULL;
	va_env_open_dev(c, &e, "/dev/clanvi0", 65536);
	char *buf = va_alloc(&e, 3 * P_MSG);
	VA_OK(c, VipCreateCQ(e.nic, 16, &cq));
	VIP_VI_HANDLE vi = va_vi(&e, VIP_SERVICE_RELIABLE_DELIVERY, NULL, cq);
	VipSetUserData(vi, (VIP_PVOID)(VIP_ULONG)P_TAG);
	VA_OK(c, VipAddTagCQ(cq, &ev, P_TAG, 1));
	/* the Send's receive, and the one the Write's immediate data takes (no segment) */
	VIP_DESCRIPTOR *rd[2] = { clan_desc(&e, buf, P_MSG), va_desc(&e, 0) };
	for (int i = 0; i < 2; i++)
		VA_OK(c, VipPostRecv(vi, rd[i], e.mh));
	va_put(c, "mem", (uint64_t)(uintptr_t)(buf + P_MSG), e.mh, 0, 0);
	p01_accept(&e, vi);
	clan_tagged_recv(&e, cq, ev, vi, rd[0], VIP_STATUS_OP_RECEIVE, "send");
	clan_tagged_recv(&e, cq, ev, vi, rd[1], VIP_STATUS_OP_REMOTE_RDMA_WRITE, "RDMA Write");
	p01_check(&e, buf, rd);
	p01_reply(&e, vi, buf + 2 * P_MSG);
	va_barrier(c, "exchanged");
	va_quiet_begin(c);
	wait_peer_gone(&e, vi);
	va_teardown(&e, vi);
	va_barrier(c, "closed");
	VA_OK(c, VipRemoveTagCQ(cq, ev, P_TAG));
	VA_OK(c, VipEventClose(ev));
	VA_OK(c, VipDestroyCQ(cq));
	va_env_close(&e);
	va_quiet_end(c, "B's end after the peer's disconnect");
}

/* P02's server: M-VIA's loopback device; it disconnects first this time. */
void p02_b(struct va_ctx *c)
{
	struct va_env e;
	va_env_open_dev(c, &e, "/dev/via_lo", 65536);
	VIP_VI_HANDLE vi = va_vi(&e, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	char *buf = va_alloc(&e, 2 * P_MSG);
	VIP_DESCRIPTOR *rd = va_desc1(&e, 0, buf, P_MSG);
	va_post_recv(&e, vi, rd);
	va_put(c, "ready", 0, 0, 0, 0);
	va_server_accept(&e, vi, "p02-clan");
	va_expect_desc(&e, va_recv_wait(&e, vi), rd, VIP_STATUS_OP_RECEIVE, "send");
	VA_TRUE(c, rd->CS.Length == P_MSG && va_check_fill(buf, P_MSG, 4, NULL),
		"send: Length %u or data differ", rd->CS.Length);
	va_fill(buf + P_MSG, P_MSG, 5);
	VIP_DESCRIPTOR *sd = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf + P_MSG, P_MSG);
	va_post_send(&e, vi, sd);
	va_expect_desc(&e, va_send_wait(&e, vi), sd, VIP_STATUS_OP_SEND, "reply");
	va_barrier(c, "exchanged");
	va_quiet_begin(c);
	va_teardown(&e, vi);
	va_barrier(c, "closed");
	va_env_close(&e);
	va_quiet_end(c, "B's disconnect and close");
}

/* P03: two NICs of one process ("/dev/via_eth0", "/dev/via_eth1": ports P and P + 1, or
 * others where P is taken), both reached at the well-known port P by the host's name: the
 * request for NIC 1's discriminator is sent on to NIC 1's port (docs/vipl.md D241), over DPDK
 * too. A is M-VIA code. */
#define P03_N 2
static const char *const p03_disc[P03_N] = { "p03-zero", "p03-one" };

void p03_a(struct va_ctx *c)
{
	struct va_env e;
	struct va_msg m;
	VIP_VI_HANDLE vi[P03_N];
	va_env_open_dev(c, &e, "/dev/via_eth0", 65536);
	char *buf = va_alloc(&e, P03_N * P_MSG);
	va_get(c, "ready", &m, VA_CONNECT_MS);
	for (int i = P03_N - 1; i >= 0; i--) { /* NIC 1's first: the one sent on */
		vi[i] = va_vi(&e, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
		connect_by_name(&e, vi[i], p03_disc[i]);
		va_fill(buf + i * P_MSG, P_MSG, 6 + (unsigned)i);
		VIP_DESCRIPTOR *sd = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf + i * P_MSG, P_MSG);
		va_post_send(&e, vi[i], sd);
		va_expect_desc(&e, va_send_wait(&e, vi[i]), sd, VIP_STATUS_OP_SEND, p03_disc[i]);
	}
	va_barrier(c, "exchanged");
	va_quiet_begin(c);
	for (int i = 0; i < P03_N; i++)
		va_teardown(&e, vi[i]);
	va_barrier(c, "closed");
	va_env_close(&e);
	va_quiet_end(c, "A's disconnects and close");
}

/* NIC i of B: its VI with a receive posted; NIC 1's port is NIC 0's + 1. */
static VIP_VI_HANDLE p03_nic(struct va_ctx *c, struct va_env *e, int i, VIP_DESCRIPTOR **rd)
{
	static const char *const dev[P03_N] = { "/dev/via_eth0", "/dev/via_eth1" };
	va_env_open_dev(c, e, dev[i], 65536);
	VIP_VI_HANDLE vi = va_vi(e, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	*rd = va_desc1(e, 0, va_alloc(e, P_MSG), P_MSG);
	va_post_recv(e, vi, *rd);
	return vi;
}

void p03_b(struct va_ctx *c)
{
	struct va_env e[P03_N];
	VIP_VI_HANDLE vi[P03_N];
	VIP_DESCRIPTOR *rd[P03_N];
	for (int i = 0; i < P03_N; i++)
		vi[i] = p03_nic(c, &e[i], i, &rd[i]);
	uint16_t port1;
	memcpy(&port1, e[1].attr.LocalNicAddress + 4, 2);
	/* so A's request to P reaches NIC 1 only by being sent on */
	VA_TRUE(c, ntohs(port1) != c->port_b, "NIC 1 listens at the well-known port %u",
		c->port_b);
	va_put(c, "ready", 0, 0, 0, 0);
	for (int i = P03_N - 1; i >= 0; i--) {
		va_server_accept(&e[i], vi[i], p03_disc[i]);
		va_expect_desc(&e[i], va_recv_wait(&e[i], vi[i]), rd[i], VIP_STATUS_OP_RECEIVE,
			       p03_disc[i]);
		VA_TRUE(c, rd[i]->CS.Length == P_MSG &&
				   va_check_fill(rd[i]->DS[0].Local.Data.Address, P_MSG,
						 6 + (unsigned)i, NULL),
			"%s: Length %u or data differ", p03_disc[i], rd[i]->CS.Length);
	}
	va_barrier(c, "exchanged");
	va_quiet_begin(c);
	for (int i = 0; i < P03_N; i++) {
		wait_peer_gone(&e[i], vi[i]);
		va_teardown(&e[i], vi[i]);
	}
	va_barrier(c, "closed");
	for (int i = 0; i < P03_N; i++)
		va_env_close(&e[i]);
	va_quiet_end(c, "B's ends after the peer's disconnects");
}
