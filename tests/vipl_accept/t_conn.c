/* T06-T11: receive pre-posted on an Idle VI, destroy rules, handshake, reject, accept with
 * mismatched attributes, connect timeouts and invalid state (docs/acceptance-vipl.md). */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "va.h"

#define RD VIP_SERVICE_RELIABLE_DELIVERY
#define UR VIP_SERVICE_UNRELIABLE

/* ---- T06 -------------------------------------------------------------------------------- */
void t06_a(struct va_ctx *c)
{
	struct va_env e;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_barrier(c, "preposted");
	va_client_connect(&e, vi, "t06");
	uint8_t *buf = va_alloc(&e, 100);
	va_fill(buf, 100, 6);
	VIP_DESCRIPTOR *d = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf, 100);
	va_post_send(&e, vi, d);
	va_expect_desc(&e, va_send_wait(&e, vi), d, VIP_STATUS_OP_SEND, "100-byte send");
	va_close_vi(&e, vi, "received");
}

void t06_b(struct va_ctx *c)
{
	struct va_env e;
	VIP_DESCRIPTOR *got = NULL;
	va_env_open(c, &e, 65536);
	VIP_VI_HANDLE vi = va_vi(&e, RD, NULL, NULL);
	uint8_t *buf = va_alloc(&e, 256);
	VIP_DESCRIPTOR *d = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf, 256);
	va_post_recv(&e, vi, d);
	VA_RC(c, VipRecvDone(vi, &got), VIP_NOT_DONE);
	va_barrier(c, "open");
	va_barrier(c, "preposted");
	va_server_accept(&e, vi, "t06");
	va_expect_desc(&e, va_recv_wait(&e, vi), d, VIP_STATUS_OP_RECEIVE, "pre-posted receive");
	VA_TRUE(c, d->CS.Length == 100, "receive Length %u, expected 100", d->CS.Length);
	size_t bad;
	VA_TRUE(c, va_check_fill(buf, 100, 6, &bad), "received data differs at byte %zu", bad);
	va_close_vi(&e, vi, "received");
}

/* ---- T07 -------------------------------------------------------------------------------- */
void t07_a(struct va_ctx *c)
{
	struct va_env e;
	VIP_DESCRIPTOR *got = NULL;
	char b[128];
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_client_connect(&e, vi, "t07");
	VA_RC(c, VipDestroyVi(vi), VIP_ERROR_RESOURCE);
	/* an Idle VI with a posted receive */
	VIP_VI_HANDLE idle = va_vi(&e, RD, NULL, NULL);
	uint8_t *buf = va_alloc(&e, 64);
	VIP_DESCRIPTOR *d = va_desc1(&e, VIP_CONTROL_OP_SENDRECV, buf, 64);
	va_post_recv(&e, idle, d);
	VA_RC(c, VipDestroyVi(idle), VIP_ERROR_RESOURCE);
	VA_OK(c, VipDisconnect(idle));
	VA_OK(c, VipRecvWait(idle, VA_WAIT_MS, &got));
	VA_TRUE(c, got == d && (d->CS.Status & VIP_STATUS_DONE) &&
			   (d->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR),
		"flushed receive %p status %s, expected %p DONE|FLUSHED", (void *)got,
		va_status_str(d->CS.Status, b, sizeof b), (void *)d);
	VA_OK(c, VipDestroyVi(idle));
	/* the destroyed handle is refused everywhere */
	VIP_VI_STATE st;
	VIP_VI_ATTRIBUTES a;
	VIP_BOOLEAN se, re;
	VA_RC(c, VipQueryVi(idle, &st, &a, &se, &re), VIP_INVALID_PARAMETER);
	va_desc_reset(d);
	VA_RC(c, VipPostRecv(idle, d, e.mh), VIP_INVALID_PARAMETER);
	VA_RC(c, VipPostSend(idle, d, e.mh), VIP_INVALID_PARAMETER);
	VA_RC(c, VipRecvDone(idle, &got), VIP_INVALID_PARAMETER);
	VA_RC(c, VipDisconnect(idle), VIP_INVALID_PARAMETER);
	VA_RC(c, VipDestroyVi(idle), VIP_INVALID_PARAMETER);
	va_close_vi(&e, vi, "done");
}

/* B of T07 and T11: accepts one connection on disc and waits for A to finish. */
static void accept_until_done(struct va_ctx *c, const char *disc)
{
	struct va_env e;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	va_server_accept(&e, vi, disc);
	va_close_vi(&e, vi, "done");
}

void t07_b(struct va_ctx *c) { accept_until_done(c, "t07"); }

/* ---- T08 -------------------------------------------------------------------------------- */
static void attrs_equal(struct va_ctx *c, const char *what, const VIP_VI_ATTRIBUTES *got,
			const VIP_VI_ATTRIBUTES *want)
{
	VA_TRUE(c, got->ReliabilityLevel == want->ReliabilityLevel &&
			   got->MaxTransferSize == want->MaxTransferSize &&
			   got->EnableRdmaWrite == want->EnableRdmaWrite &&
			   got->EnableRdmaRead == want->EnableRdmaRead && got->QoS == NULL,
		"%s: got level 0x%x MTU %lu W %d R %d QoS %p; expected 0x%x %lu %d %d NULL", what,
		got->ReliabilityLevel, got->MaxTransferSize, got->EnableRdmaWrite,
		got->EnableRdmaRead, got->QoS, want->ReliabilityLevel, want->MaxTransferSize,
		want->EnableRdmaWrite, want->EnableRdmaRead);
}

/* A: RDMA Write accepted, Read refused. B: the opposite (Read only when the NIC has it). */
static VIP_VI_ATTRIBUTES t08_attrs(struct va_env *e, char role)
{
	VIP_VI_ATTRIBUTES a = va_vi_attrs(e, RD);
	a.MaxTransferSize = 32768;
	a.EnableRdmaWrite = role == 'A';
	a.EnableRdmaRead = role == 'B' && (e->attr.RDMAReadSupport & RD);
	return a;
}

void t08_a(struct va_ctx *c)
{
	struct va_env e;
	va_env_open(c, &e, 65536);
	VIP_VI_ATTRIBUTES mine = t08_attrs(&e, 'A'), theirs = mine, got;
	VIP_VI_HANDLE vi = va_vi_attr(&e, &mine, NULL, NULL);
	struct va_msg m;
	va_get(c, "b-attrs", &m, 20000);
	theirs.EnableRdmaWrite = (VIP_BOOLEAN)m.v[0];
	theirs.EnableRdmaRead = (VIP_BOOLEAN)m.v[1];
	memset(&got, 0x5a, sizeof got);
	VA_OK(c, va_request(&e, vi, "t08", "t08", VA_CONNECT_MS, &got));
	attrs_equal(c, "client's RemoteViAttribs", &got, &theirs);
	va_wait_state(&e, vi, VIP_STATE_CONNECTED, 1000);
	va_close_vi(&e, vi, "checked");
}

void t08_b(struct va_ctx *c)
{
	struct va_env e;
	va_env_open(c, &e, 65536);
	VIP_VI_ATTRIBUTES mine = t08_attrs(&e, 'B'), theirs = mine, got;
	theirs.EnableRdmaWrite = VIP_TRUE;
	theirs.EnableRdmaRead = VIP_FALSE;
	VIP_VI_HANDLE vi = va_vi_attr(&e, &mine, NULL, NULL);
	VIP_NET_ADDRESS *ra = NULL;
	VIP_CONN_HANDLE conn = NULL;
	/* nothing pending: timeout 0 returns at once */
	long long t0 = va_now_ms();
	VA_RC(c, va_wait_request(&e, "t08", 0, &got, &conn, NULL), VIP_TIMEOUT);
	long long dt = va_now_ms() - t0;
	VA_TRUE(c, dt < 100, "VipConnectWait(timeout 0) took %lld ms", dt);
	va_put(c, "b-attrs", (uint64_t)mine.EnableRdmaWrite, (uint64_t)mine.EnableRdmaRead, 0, 0);
	memset(&got, 0x5a, sizeof got);
	VA_OK(c, va_wait_request(&e, "t08", VA_CONNECT_MS, &got, &conn, &ra));
	attrs_equal(c, "server's RemoteViAttribs", &got, &theirs);
	uint8_t ip_a[4];
	inet_pton(AF_INET, c->ip_a, ip_a);
	/* the host octets run past the declared HostAddress[1] (variable-length struct) */
	const uint8_t *h = (const uint8_t *)ra + offsetof(VIP_NET_ADDRESS, HostAddress);
	VA_TRUE(c, ra->HostAddressLen == 6 && memcmp(h, ip_a, 4) == 0,
		"RemoteAddr: HostAddressLen %u, IP %u.%u.%u.%u, expected 6 and %s",
		ra->HostAddressLen, h[0], h[1], h[2], h[3], c->ip_a);
	free(ra);
	VA_OK(c, VipConnectAccept(conn, vi));
	va_wait_state(&e, vi, VIP_STATE_CONNECTED, 1000);
	va_close_vi(&e, vi, "checked");
}

/* ---- T09 -------------------------------------------------------------------------------- */
void t09_a(struct va_ctx *c)
{
	struct va_env e;
	VIP_VI_ATTRIBUTES got;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	VA_RC(c, va_request(&e, vi, "t09", "t09", VA_CONNECT_MS, &got), VIP_REJECT);
	VIP_VI_STATE st = va_state(&e, vi);
	VA_TRUE(c, st == VIP_STATE_IDLE, "after reject the VI is %s, expected IDLE",
		va_state_name(st));
	/* the same VI connects to another endpoint (discriminator t09-other) */
	va_client_connect(&e, vi, "t09-other");
	va_close_vi(&e, vi, "connected");
}

void t09_b(struct va_ctx *c)
{
	struct va_env e;
	VIP_VI_ATTRIBUTES got;
	VIP_CONN_HANDLE conn;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	VA_OK(c, va_wait_request(&e, "t09", VA_CONNECT_MS, &got, &conn, NULL));
	VA_OK(c, VipConnectReject(conn));
	va_server_accept(&e, vi, "t09-other");
	va_close_vi(&e, vi, "connected");
}

/* ---- T10 -------------------------------------------------------------------------------- */
void t10_a(struct va_ctx *c)
{
	struct va_env e;
	VIP_VI_ATTRIBUTES got;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, UR);
	VIP_RETURN rc = va_request(&e, vi, "t10", "t10", VA_CONNECT_MS, &got);
	/* B checks that this has not returned before its second Accept */
	va_put(c, "request-returned", (uint64_t)rc, 0, 0, 0);
	VA_RC(c, rc, VIP_SUCCESS);
	VA_TRUE(c, got.ReliabilityLevel == UR, "granted level 0x%x, expected UNRELIABLE",
		got.ReliabilityLevel);
	va_close_vi(&e, vi, "connected");
}

void t10_b(struct va_ctx *c)
{
	struct va_env e;
	VIP_VI_ATTRIBUTES got;
	VIP_CONN_HANDLE conn;
	struct va_msg m;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	VA_OK(c, va_wait_request(&e, "t10", VA_CONNECT_MS, &got, &conn, NULL));
	VA_TRUE(c, got.ReliabilityLevel == UR, "client level 0x%x, expected UNRELIABLE",
		got.ReliabilityLevel);
	VA_RC(c, VipConnectAccept(conn, vi), VIP_INVALID_RELIABILITY_LEVEL);
	VIP_VI_STATE st = va_state(&e, vi);
	VA_TRUE(c, st == VIP_STATE_IDLE, "after the failed Accept the VI is %s, expected IDLE",
		va_state_name(st));
	VA_TRUE(c, !va_peer_pending(c, 300),
		"the client's VipConnectRequest returned after a failed Accept");
	VIP_VI_ATTRIBUTES a = va_vi_attrs(&e, UR);
	VA_OK(c, VipSetViAttributes(vi, &a));
	VA_OK(c, VipConnectAccept(conn, vi));
	va_get(c, "request-returned", &m, 20000);
	VA_TRUE(c, m.v[0] == VIP_SUCCESS, "client VipConnectRequest returned %s",
		va_rc_name((VIP_RETURN)m.v[0]));
	va_close_vi(&e, vi, "connected");
}

/* ---- T11 -------------------------------------------------------------------------------- */
void t11_a(struct va_ctx *c)
{
	struct va_env e;
	VIP_VI_ATTRIBUTES got;
	VIP_VI_HANDLE vi = va_open_vi(c, &e, RD);
	long long t0 = va_now_ms();
	VA_RC(c, va_request(&e, vi, "t11", "t11-nobody", 0, &got), VIP_TIMEOUT);
	long long dt = va_now_ms() - t0;
	VA_TRUE(c, dt < 100, "VipConnectRequest(Timeout 0) took %lld ms", dt);
	t0 = va_now_ms();
	VIP_RETURN rc = va_request(&e, vi, "t11", "t11-nobody", 200, &got);
	dt = va_now_ms() - t0;
	va_note(c, "no listener, 200 ms: %s after %lld ms", va_rc_name(rc), dt);
	VA_TRUE(c, rc == VIP_TIMEOUT || rc == VIP_NO_MATCH,
		"no listener: %s, expected VIP_TIMEOUT or VIP_NO_MATCH", va_rc_name(rc));
	/* ε: 500 ms of scheduling and connection-setup slack (docs/acceptance-vipl.md) */
	VA_TRUE(c, dt <= 700, "no listener: returned after %lld ms, expected <= 200 + 500", dt);
	VIP_VI_STATE st = va_state(&e, vi);
	VA_TRUE(c, st == VIP_STATE_IDLE, "after the failed connect the VI is %s, expected IDLE",
		va_state_name(st));
	va_client_connect(&e, vi, "t11");
	rc = va_request(&e, vi, "t11", "t11", 1000, &got);
	VA_TRUE(c, rc != VIP_SUCCESS, "VipConnectRequest on a Connected VI returned VIP_SUCCESS");
	va_note(c, "VipConnectRequest on a Connected VI: %s", va_rc_name(rc));
	st = va_state(&e, vi);
	VA_TRUE(c, st == VIP_STATE_CONNECTED, "the refused request left the VI %s",
		va_state_name(st));
	va_close_vi(&e, vi, "done");
}

void t11_b(struct va_ctx *c) { accept_until_done(c, "t11"); }
