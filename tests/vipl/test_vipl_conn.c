/* Connections between two NICs of one process over loopback: handshake with attributes (T08),
 * reject (T09), accept with mismatched attributes then retry (T10), timeouts and invalid state
 * (T11), peer-to-peer connect, disconnect and reconnect (T25, one process). */
#include "tv.h"

#include <stdlib.h>

#include <pthread.h>
#include <string.h>

struct cli {
	struct tv *t;
	VIP_VI_HANDLE vi;
	const char *ld, *rd;
	VIP_ULONG timeout;
	VIP_RETURN rc;
	VIP_VI_ATTRIBUTES ra;
	uint64_t ms;
};

static void *cli_main(void *arg)
{
	struct cli *c = arg;
	struct tv_addr l, r;
	tv_addr(c->t, 0, c->ld, &l);
	tv_addr(c->t, 1, c->rd, &r);
	uint64_t t0 = tv_ms();
	c->rc = VipConnectRequest(c->vi, &l.a, &r.a, c->timeout, &c->ra);
	c->ms = tv_ms() - t0;
	return NULL;
}

static VIP_CONN_HANDLE wait_req(struct tv *t, const char *disc, struct tv_addr *ra,
				VIP_VI_ATTRIBUTES *rattr)
{
	struct tv_addr l;
	VIP_CONN_HANDLE ch = NULL;
	tv_addr(t, 1, disc, &l);
	assert_int_equal(VipConnectWait(t->nic[1], &l.a, 5000, &ra->a, rattr, &ch), VIP_SUCCESS);
	return ch;
}

static void t08_handshake(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_VI_HANDLE a = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	VIP_VI_HANDLE b = tv_vi(&t, 1, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	VIP_VI_ATTRIBUTES ab = { VIP_SERVICE_RELIABLE_DELIVERY, 8192, NULL, t.ptag[1], VIP_TRUE,
				 VIP_FALSE };
	assert_int_equal(VipSetViAttributes(b, &ab), VIP_SUCCESS);
	struct tv_addr l, ra;
	VIP_CONN_HANDLE ch;
	VIP_VI_ATTRIBUTES rattr;
	tv_addr(&t, 1, "srv", &l);
	uint64_t t0 = tv_ms();
	assert_int_equal(VipConnectWait(t.nic[1], &l.a, 0, &ra.a, &rattr, &ch), VIP_TIMEOUT);
	assert_true(tv_ms() - t0 < 100);
	struct cli c = { &t, a, "cli", "srv", 5000, 0, { 0 }, 0 };
	pthread_t th;
	pthread_create(&th, NULL, cli_main, &c);
	ch = wait_req(&t, "srv", &ra, &rattr);
	assert_int_equal(rattr.ReliabilityLevel, VIP_SERVICE_RELIABLE_DELIVERY);
	assert_int_equal(rattr.MaxTransferSize, 65536);
	assert_int_equal(rattr.EnableRdmaWrite, VIP_TRUE);
	assert_int_equal(rattr.EnableRdmaRead, VIP_TRUE);
	assert_int_equal(ra.a.HostAddressLen, 6);
	assert_int_equal(ra.a.DiscriminatorLen, 3);
	const uint8_t *h = (const uint8_t *)&ra + 4;
	assert_memory_equal(h, t.attr[0].LocalNicAddress, 6);
	assert_memory_equal(h + 6, "cli", 3);
	assert_int_equal(VipConnectAccept(ch, b), VIP_SUCCESS);
	pthread_join(th, NULL);
	assert_int_equal(c.rc, VIP_SUCCESS);
	/* the granted MTU is the minimum, on both sides */
	assert_int_equal(c.ra.MaxTransferSize, 8192);
	assert_int_equal(c.ra.EnableRdmaRead, VIP_FALSE);
	assert_int_equal(tv_state(a), VIP_STATE_CONNECTED);
	assert_int_equal(tv_state(b), VIP_STATE_CONNECTED);
	VIP_VI_ATTRIBUTES qa;
	assert_int_equal(VipQueryVi(a, NULL, &qa, NULL, NULL), VIP_SUCCESS);
	assert_int_equal(qa.MaxTransferSize, 8192);
	/* T11: no second connect on a connected VI; no destroy */
	struct tv_addr x, y;
	tv_addr(&t, 0, "cli", &x);
	tv_addr(&t, 1, "srv", &y);
	assert_int_not_equal(VipConnectRequest(a, &x.a, &y.a, 100, &qa), VIP_SUCCESS);
	assert_int_equal(VipDestroyVi(a), VIP_ERROR_RESOURCE);
	assert_int_equal(VipSetViAttributes(a, &ab), VIP_INVALID_STATE);
	assert_int_equal(VipConnectAccept(ch, b), VIP_INVALID_PARAMETER); /* used up */
	assert_int_equal(VipDisconnect(a), VIP_SUCCESS);
	assert_int_equal(tv_state(a), VIP_STATE_IDLE);
	assert_int_equal(VipDestroyVi(a), VIP_SUCCESS);
	/* the peer sees the connection go (CONN_LOST: Error) */
	uint64_t dl = tv_ms() + 3000;
	while (tv_state(b) != VIP_STATE_ERROR && tv_ms() < dl)
		tv_nap();
	assert_int_equal(tv_state(b), VIP_STATE_ERROR);
	assert_int_equal(VipDisconnect(b), VIP_SUCCESS);
	assert_int_equal(VipDestroyVi(b), VIP_SUCCESS);
	tv_close(&t);
}

static void t09_reject(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_VI_HANDLE a = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	VIP_VI_HANDLE b = tv_vi(&t, 1, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	struct cli c = { &t, a, "c9", "s9", 5000, 0, { 0 }, 0 };
	pthread_t th;
	struct tv_addr ra;
	VIP_VI_ATTRIBUTES rattr;
	/* a receive held across the rejected attempt serves the next connection */
	uint8_t *rbuf = tv_alloc(&t, 0, 64), *sbuf = tv_alloc(&t, 1, 64);
	VIP_DESCRIPTOR *rd = tv_desc(&t, 0, 1), *sd = tv_desc(&t, 1, 1), *out;
	rd->CS.SegCount = 1;
	rd->DS[0].Local = (VIP_DATA_SEGMENT){ { .Address = rbuf }, t.mh[0], 64 };
	sd->CS.SegCount = 1;
	sd->CS.Length = 64;
	sd->DS[0].Local = (VIP_DATA_SEGMENT){ { .Address = sbuf }, t.mh[1], 64 };
	memset(sbuf, 0x3c, 64);
	assert_int_equal(VipPostRecv(a, rd, t.mh[0]), VIP_SUCCESS);
	pthread_create(&th, NULL, cli_main, &c);
	VIP_CONN_HANDLE ch = wait_req(&t, "s9", &ra, &rattr);
	assert_int_equal(VipConnectReject(ch), VIP_SUCCESS);
	assert_int_equal(VipConnectReject(ch), VIP_INVALID_PARAMETER);
	pthread_join(th, NULL);
	assert_int_equal(c.rc, VIP_REJECT);
	assert_int_equal(tv_state(a), VIP_STATE_IDLE);
	/* the same VI connects again, to another discriminator, accepted */
	c.rd = "s9b";
	pthread_create(&th, NULL, cli_main, &c);
	ch = wait_req(&t, "s9b", &ra, &rattr);
	assert_int_equal(VipConnectAccept(ch, b), VIP_SUCCESS);
	pthread_join(th, NULL);
	assert_int_equal(c.rc, VIP_SUCCESS);
	assert_int_equal(VipPostSend(b, sd, t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipRecvWait(a, 5000, &out), VIP_SUCCESS);
	assert_ptr_equal(out, rd);
	assert_int_equal(rd->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_int_equal(rd->CS.Length, 64);
	assert_memory_equal(rbuf, sbuf, 64);
	assert_int_equal(VipSendWait(b, 5000, &out), VIP_SUCCESS);
	assert_int_equal(VipDisconnect(a), VIP_SUCCESS);
	assert_int_equal(VipDisconnect(b), VIP_SUCCESS);
	assert_int_equal(VipDestroyVi(a), VIP_SUCCESS);
	assert_int_equal(VipDestroyVi(b), VIP_SUCCESS);
	tv_close(&t);
}

static void t10_mismatch(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_VI_HANDLE a = tv_vi(&t, 0, VIP_SERVICE_UNRELIABLE, NULL, NULL);
	VIP_VI_HANDLE b = tv_vi(&t, 1, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	struct cli c = { &t, a, "c10", "s10", 5000, 0, { 0 }, 0 };
	pthread_t th;
	struct tv_addr ra;
	VIP_VI_ATTRIBUTES rattr;
	pthread_create(&th, NULL, cli_main, &c);
	VIP_CONN_HANDLE ch = wait_req(&t, "s10", &ra, &rattr);
	assert_int_equal(rattr.ReliabilityLevel, VIP_SERVICE_UNRELIABLE);
	assert_int_equal(VipConnectAccept(ch, b), VIP_INVALID_RELIABILITY_LEVEL);
	assert_int_equal(tv_state(b), VIP_STATE_IDLE);
	VIP_VI_ATTRIBUTES na = { VIP_SERVICE_UNRELIABLE, 65536, NULL, t.ptag[1], VIP_TRUE, 0 };
	assert_int_equal(VipSetViAttributes(b, &na), VIP_SUCCESS);
	assert_int_equal(VipConnectAccept(ch, b), VIP_SUCCESS);
	pthread_join(th, NULL);
	assert_int_equal(c.rc, VIP_SUCCESS);
	assert_int_equal(tv_state(a), VIP_STATE_CONNECTED);
	VipDisconnect(a);
	VipDisconnect(b);
	tv_close(&t);
}

static void t11_timeouts(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	VIP_VI_HANDLE a = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	struct tv_addr l, r;
	VIP_VI_ATTRIBUTES rattr;
	tv_addr(&t, 0, "c11", &l);
	tv_addr(&t, 1, "nobody", &r);
	uint64_t t0 = tv_ms();
	assert_int_equal(VipConnectRequest(a, &l.a, &r.a, 0, &rattr), VIP_TIMEOUT);
	assert_true(tv_ms() - t0 < 50);
	/* nobody waits for the discriminator: TIMEOUT (queued) or NO_MATCH, within bounds */
	t0 = tv_ms();
	VIP_RETURN rc = VipConnectRequest(a, &l.a, &r.a, 200, &rattr);
	assert_true(rc == VIP_NO_MATCH || rc == VIP_TIMEOUT);
	assert_true(tv_ms() - t0 < 1000); /* 200 ms + a slack for a loaded machine */
	assert_int_equal(tv_state(a), VIP_STATE_IDLE);
	/* a listener (ConnectWait elsewhere) but nobody for this discriminator: held for half
	 * the requester's wait, then NO_MATCH (VIPL 1.0), before the requester's timeout */
	struct tv_addr sl, ra;
	VIP_CONN_HANDLE ch;
	tv_addr(&t, 1, "other", &sl);
	assert_int_equal(VipConnectWait(t.nic[1], &sl.a, 0, &ra.a, &rattr, &ch), VIP_TIMEOUT);
	t0 = tv_ms();
	rc = VipConnectRequest(a, &l.a, &r.a, 200, &rattr);
	uint64_t el = tv_ms() - t0;
	assert_int_equal(rc, VIP_NO_MATCH);
	assert_true(el >= 90);
	assert_int_equal(tv_state(a), VIP_STATE_IDLE);
	/* bad addresses */
	r.a.HostAddressLen = 4;
	assert_int_equal(VipConnectRequest(a, &l.a, &r.a, 100, &rattr), VIP_INVALID_PARAMETER);
	assert_int_equal(VipDestroyVi(a), VIP_SUCCESS);
	tv_close(&t);
}

struct peer {
	VIP_VI_HANDLE vi;
	struct tv_addr l, r;
	VIP_RETURN rq, rw;
	VIP_VI_ATTRIBUTES ra;
};

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	p->rq = VipConnectPeerRequest(p->vi, &p->l.a, &p->r.a, 5000);
	if (p->rq == VIP_SUCCESS)
		p->rw = VipConnectPeerWait(p->vi, &p->ra);
	return NULL;
}

/* Two VIs of two NICs connect as peers, from both orders of calls; then two VIs of one NIC
 * (equal host addresses: the discriminators break the tie). */
static void peer_connect(void **state)
{
	(void)state;
	struct tv t;
	tv_open(&t);
	for (int round = 0; round < 3; round++) {
		int sb = round == 2 ? 0 : 1;
		struct peer p[2] = { { .vi = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL) },
				     { .vi = tv_vi(&t, sb, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL) } };
		tv_addr(&t, 0, "pa", &p[0].l);
		tv_addr(&t, sb, "pb", &p[0].r);
		tv_addr(&t, sb, "pb", &p[1].l);
		tv_addr(&t, 0, "pa", &p[1].r);
		VIP_VI_ATTRIBUTES ra;
		assert_int_equal(VipConnectPeerDone(p[0].vi, &ra), VIP_INVALID_STATE);
		/* receives held across the active side's retries serve the connection */
		int side[2] = { 0, sb };
		VIP_DESCRIPTOR *rd[2], *sd[2], *out;
		for (int i = 0; i < 2; i++) {
			uint8_t *rb = tv_alloc(&t, side[i], 32), *sbuf = tv_alloc(&t, side[i], 32);
			memset(sbuf, 0x40 + i, 32);
			rd[i] = tv_desc(&t, side[i], 1);
			rd[i]->CS.SegCount = 1;
			rd[i]->DS[0].Local = (VIP_DATA_SEGMENT){ { .Address = rb }, t.mh[side[i]], 32 };
			sd[i] = tv_desc(&t, side[i], 1);
			sd[i]->CS.SegCount = 1;
			sd[i]->CS.Length = 32;
			sd[i]->DS[0].Local = (VIP_DATA_SEGMENT){ { .Address = sbuf }, t.mh[side[i]], 32 };
			assert_int_equal(VipPostRecv(p[i].vi, rd[i], t.mh[side[i]]), VIP_SUCCESS);
		}
		pthread_t th[2];
		int first = round % 2;
		pthread_create(&th[first], NULL, peer_main, &p[first]);
		struct timespec ms50 = { 0, 50000000 };
		nanosleep(&ms50, NULL); /* the other side comes later: retries on NO_MATCH */
		pthread_create(&th[!first], NULL, peer_main, &p[!first]);
		for (int i = 0; i < 2; i++) {
			pthread_join(th[i], NULL);
			assert_int_equal(p[i].rq, VIP_SUCCESS);
			assert_int_equal(p[i].rw, VIP_SUCCESS);
			assert_int_equal(p[i].ra.ReliabilityLevel, VIP_SERVICE_RELIABLE_DELIVERY);
			assert_int_equal(tv_state(p[i].vi), VIP_STATE_CONNECTED);
		}
		for (int i = 0; i < 2; i++)
			assert_int_equal(VipPostSend(p[i].vi, sd[i], t.mh[side[i]]), VIP_SUCCESS);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(VipRecvWait(p[i].vi, 5000, &out), VIP_SUCCESS);
			assert_ptr_equal(out, rd[i]);
			assert_int_equal(rd[i]->CS.Status & VIP_STATUS_ERROR_MASK, 0);
			assert_int_equal(((uint8_t *)rd[i]->DS[0].Local.Data.Address)[0], 0x40 + !i);
			assert_int_equal(VipSendWait(p[i].vi, 5000, &out), VIP_SUCCESS);
		}
		for (int i = 0; i < 2; i++) {
			assert_int_equal(VipDisconnect(p[i].vi), VIP_SUCCESS);
			assert_int_equal(VipDestroyVi(p[i].vi), VIP_SUCCESS);
		}
	}
	/* nobody on the other side: TIMEOUT from PeerWait, VI Idle */
	struct peer q = { .vi = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL) };
	tv_addr(&t, 0, "lonely", &q.l);
	tv_addr(&t, 1, "zz", &q.r);
	assert_int_equal(VipConnectPeerRequest(q.vi, &q.l.a, &q.r.a, 300), VIP_SUCCESS);
	VIP_VI_ATTRIBUTES ra;
	assert_int_equal(VipConnectPeerDone(q.vi, &ra), VIP_NOT_DONE);
	uint64_t t0 = tv_ms();
	assert_int_equal(VipConnectPeerWait(q.vi, &ra), VIP_TIMEOUT);
	assert_true(tv_ms() - t0 < 1000);
	assert_int_equal(tv_state(q.vi), VIP_STATE_IDLE);
	assert_int_equal(VipDestroyVi(q.vi), VIP_SUCCESS);
	tv_close(&t);
}

int main(void)
{
	tv_env();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t08_handshake),
		cmocka_unit_test(t09_reject),
		cmocka_unit_test(t10_mismatch),
		cmocka_unit_test(t11_timeouts),
		cmocka_unit_test(peer_connect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
