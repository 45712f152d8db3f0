/* Reliable Reception's acknowledgements (docs/vipl.md "Reliable Reception", vipl_rr.c): a send
 * completes only once its data is in the peer's memory, whichever way the acknowledgement
 * comes: with the peer's reply, from a peer that goes waiting, from a peer's NIC thread or a
 * Read when the peer's application does nothing, at the peer's Disconnect; and a window of
 * sends completes in order. */
#include "tv.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#define LEN 256

struct rr {
	struct tv t;
	VIP_VI_HANDLE a, b;
	VIP_DESCRIPTOR *sd[16], *rd[16];
	uint8_t *sbuf[16], *rbuf[16];
};

static VIP_DESCRIPTOR *desc(struct tv *t, int side, uint8_t *buf)
{
	VIP_DESCRIPTOR *d = tv_desc(t, side, 1);
	d->CS.SegCount = 1;
	d->CS.Length = LEN;
	d->DS[0].Local.Data.Address = buf;
	d->DS[0].Local.Handle = t->mh[side];
	d->DS[0].Local.Length = LEN;
	return d;
}

/* A (side 0) and B (side 1) connected at RR, n receives posted on B before. */
static void rr_up(struct rr *r, unsigned n)
{
	tv_open(&r->t);
	r->a = tv_vi(&r->t, 0, VIP_SERVICE_RELIABLE_RECEPTION, NULL, NULL);
	r->b = tv_vi(&r->t, 1, VIP_SERVICE_RELIABLE_RECEPTION, NULL, NULL);
	for (unsigned i = 0; i < 16; i++) {
		r->sbuf[i] = tv_alloc(&r->t, 0, LEN);
		r->rbuf[i] = tv_alloc(&r->t, 1, LEN);
		memset(r->sbuf[i], 'a' + (int)i, LEN);
		r->sd[i] = desc(&r->t, 0, r->sbuf[i]);
		r->rd[i] = desc(&r->t, 1, r->rbuf[i]);
	}
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(VipPostRecv(r->b, r->rd[i], r->t.mh[1]), VIP_SUCCESS);
	tv_connect(&r->t, r->a, r->b, "rr-a", "rr-b");
}

static void rr_down(struct rr *r)
{
	VIP_DESCRIPTOR *d;
	assert_int_equal(VipDisconnect(r->a), VIP_SUCCESS);
	assert_int_equal(VipDisconnect(r->b), VIP_SUCCESS);
	while (VipSendDone(r->a, &d) == VIP_SUCCESS || VipRecvDone(r->b, &d) == VIP_SUCCESS ||
	       VipSendDone(r->b, &d) == VIP_SUCCESS || VipRecvDone(r->a, &d) == VIP_SUCCESS)
		;
	assert_int_equal(VipDestroyVi(r->a), VIP_SUCCESS);
	assert_int_equal(VipDestroyVi(r->b), VIP_SUCCESS);
	tv_close(&r->t);
}

/* Spin on A's SendDone; when it completes, the data must be in B's memory already. */
static void spin_send_placed(struct rr *r, unsigned i)
{
	VIP_DESCRIPTOR *d = NULL;
	uint64_t t0 = tv_ms();
	VIP_RETURN rc;
	while ((rc = VipSendDone(r->a, &d)) == VIP_NOT_DONE && tv_ms() - t0 < 3000)
		;
	assert_int_equal(rc, VIP_SUCCESS);
	assert_ptr_equal(d, r->sd[i]);
	assert_int_equal(d->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_memory_equal(r->rbuf[i], r->sbuf[i], LEN);
}

/* The peer's application never calls the library: its NIC thread or a Read completes ours. */
static void silent_peer(void **state)
{
	(void)state;
	struct rr r;
	rr_up(&r, 1);
	assert_int_equal(VipPostSend(r.a, r.sd[0], r.t.mh[0]), VIP_SUCCESS);
	spin_send_placed(&r, 0);
	rr_down(&r);
}

/* A blocking SendWait with a silent peer does not hang: it sleeps behind a Read. */
static void blocking_sender(void **state)
{
	(void)state;
	struct rr r;
	VIP_DESCRIPTOR *d = NULL;
	rr_up(&r, 1);
	assert_int_equal(VipPostSend(r.a, r.sd[0], r.t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipSendWait(r.a, 3000, &d), VIP_SUCCESS);
	assert_ptr_equal(d, r.sd[0]);
	assert_memory_equal(r.rbuf[0], r.sbuf[0], LEN);
	rr_down(&r);
}

/* A window of sends completes in post order, each after its data was placed. */
static void window_in_order(void **state)
{
	(void)state;
	struct rr r;
	rr_up(&r, 16);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(VipPostSend(r.a, r.sd[i], r.t.mh[0]), VIP_SUCCESS);
	for (unsigned i = 0; i < 16; i++)
		spin_send_placed(&r, i);
	rr_down(&r);
}

struct echo {
	struct rr *r;
	VIP_RETURN rc;
	bool disconnect;      /* after receiving, disconnect instead of replying */
};

static void *echo_main(void *arg)
{
	struct echo *e = arg;
	VIP_DESCRIPTOR *d = NULL;
	e->rc = VipRecvWait(e->r->b, 3000, &d);
	if (e->rc != VIP_SUCCESS)
		return NULL;
	if (e->disconnect) {
		e->rc = VipDisconnect(e->r->b);
		return NULL;
	}
	VIP_DESCRIPTOR *s = desc(&e->r->t, 1, e->r->rbuf[0]); /* the message back */
	e->rc = VipPostSend(e->r->b, s, e->r->t.mh[1]);
	if (e->rc == VIP_SUCCESS)
		e->rc = VipSendWait(e->r->b, 3000, &d);
	return NULL;
}

/* A ping answered: the reply carries the acknowledgement, and the reply's own completes too
 * (the pinging side goes waiting after it, which sends its count). */
static void reply_carries_ack(void **state)
{
	(void)state;
	struct rr r;
	struct echo e = { .r = &r };
	pthread_t th;
	VIP_DESCRIPTOR *d = NULL;
	rr_up(&r, 1);
	VIP_DESCRIPTOR *back = desc(&r.t, 0, r.sbuf[1]);
	assert_int_equal(VipPostRecv(r.a, back, r.t.mh[0]), VIP_SUCCESS);
	assert_int_equal(pthread_create(&th, NULL, echo_main, &e), 0);
	assert_int_equal(VipPostSend(r.a, r.sd[0], r.t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipRecvWait(r.a, 3000, &d), VIP_SUCCESS);
	assert_ptr_equal(d, back);
	spin_send_placed(&r, 0);
	pthread_join(th, NULL);
	assert_int_equal(e.rc, VIP_SUCCESS);
	rr_down(&r);
}

/* The peer receives and disconnects at once: our send still completes successfully (its
 * acknowledgement leaves before the stream ends). */
static void peer_disconnects(void **state)
{
	(void)state;
	struct rr r;
	struct echo e = { .r = &r, .disconnect = true };
	pthread_t th;
	VIP_DESCRIPTOR *d = NULL;
	rr_up(&r, 1);
	assert_int_equal(pthread_create(&th, NULL, echo_main, &e), 0);
	assert_int_equal(VipPostSend(r.a, r.sd[0], r.t.mh[0]), VIP_SUCCESS);
	pthread_join(th, NULL);
	assert_int_equal(e.rc, VIP_SUCCESS);
	uint64_t t0 = tv_ms();
	VIP_RETURN rc;
	while ((rc = VipSendDone(r.a, &d)) == VIP_NOT_DONE && tv_ms() - t0 < 3000)
		;
	assert_int_equal(rc, VIP_SUCCESS);
	assert_int_equal(d->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_memory_equal(r.rbuf[0], r.sbuf[0], LEN);
	rr_down(&r);
}

int main(void)
{
	tv_env();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(silent_peer),       cmocka_unit_test(blocking_sender),
		cmocka_unit_test(window_in_order),   cmocka_unit_test(reply_carries_ack),
		cmocka_unit_test(peer_disconnects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
