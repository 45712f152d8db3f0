/* Data transfer between two connected VIs of one process: pre-posted receives (T06), Send
 * from the accepting side first, scatter/gather with immediate data (T12), more segments than
 * the QP's SGE limit, RDMA Write with and without immediate (T18), RDMA Read into three
 * segments (T20), receive too small per reliability level (T14, T15), Reliable Reception's
 * remote errors in the sender's descriptor (T16, T17), order (T21), one CQ for several VIs
 * (T22), waits without spinning (T23), notify (T24), disconnect and reconnect (T25). */
#include "tv.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

struct pair {
	struct tv t;
	VIP_VI_HANDLE a, b; /* a on NIC 0 (client), b on NIC 1 (server) */
};

static void pair_up(struct pair *p, VIP_RELIABILITY_LEVEL rel, VIP_CQ_HANDLE bcq)
{
	p->a = tv_vi(&p->t, 0, rel, NULL, NULL);
	p->b = tv_vi(&p->t, 1, rel, NULL, bcq);
}

static VIP_DESCRIPTOR *mk(struct tv *t, int side, uint16_t ctl, const uint32_t *lens,
			  unsigned n, uint8_t **bufs)
{
	unsigned first = (ctl & VIP_CONTROL_OP_MASK) ? 1 : 0;
	VIP_DESCRIPTOR *d = tv_desc(t, side, n + first);
	VIP_DATA_SEGMENT *s = &d->DS[first].Local;
	uint32_t sum = 0;
	d->CS.Control = ctl;
	d->CS.SegCount = (VIP_UINT16)(n + first);
	for (unsigned i = 0; i < n; i++) {
		bufs[i] = tv_alloc(t, side, lens[i] ? lens[i] : 1);
		s[i].Data.Address = bufs[i];
		s[i].Handle = t->mh[side];
		s[i].Length = lens[i];
		sum += lens[i];
	}
	d->CS.Length = sum;
	return d;
}

static VIP_DESCRIPTOR *recv_wait(VIP_VI_HANDLE vi)
{
	VIP_DESCRIPTOR *d = NULL;
	assert_int_equal(VipRecvWait(vi, 5000, &d), VIP_SUCCESS);
	return d;
}

static VIP_DESCRIPTOR *send_wait(VIP_VI_HANDLE vi)
{
	VIP_DESCRIPTOR *d = NULL;
	assert_int_equal(VipSendWait(vi, 5000, &d), VIP_SUCCESS);
	return d;
}

static void wait_state(VIP_VI_HANDLE vi, VIP_VI_STATE want)
{
	uint64_t dl = tv_ms() + 3000;
	while (tv_state(vi) != want && tv_ms() < dl) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	assert_int_equal(tv_state(vi), want);
}

/* T06 + the accepting side sends first + T12. */
static void t06_t12(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, NULL);
	uint8_t *rb[4], *sb[3], *x[1];
	uint32_t rl[4] = { 30, 30, 30, 30 }, one[1] = { 100 };
	VIP_DESCRIPTOR *r0 = mk(&p.t, 1, 0, one, 1, x), *out;
	assert_int_equal(VipPostRecv(p.b, r0, p.t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipRecvDone(p.b, &out), VIP_NOT_DONE);
	uint8_t *ax[1];
	VIP_DESCRIPTOR *ra = mk(&p.t, 0, 0, one, 1, ax);
	assert_int_equal(VipPostRecv(p.a, ra, p.t.mh[0]), VIP_SUCCESS);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	/* the server (accepting side) sends first, right away */
	uint8_t *bs[1];
	VIP_DESCRIPTOR *s0 = mk(&p.t, 1, 0, one, 1, bs);
	memset(bs[0], 0x5b, 100);
	assert_int_equal(VipPostSend(p.b, s0, p.t.mh[1]), VIP_SUCCESS);
	assert_ptr_equal(send_wait(p.b), s0);
	assert_int_equal(s0->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_ptr_equal(recv_wait(p.a), ra);
	assert_int_equal(ra->CS.Length, 100);
	assert_memory_equal(ax[0], bs[0], 100);
	/* T06: the pre-posted receive gets the client's 100 octets */
	uint8_t *as[1];
	VIP_DESCRIPTOR *s1 = mk(&p.t, 0, 0, one, 1, as);
	memset(as[0], 0xa1, 100);
	assert_int_equal(VipPostSend(p.a, s1, p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(recv_wait(p.b), r0);
	assert_int_equal(r0->CS.Length, 100);
	assert_int_equal(r0->CS.Status & VIP_STATUS_OP_MASK, VIP_STATUS_OP_RECEIVE);
	assert_int_equal(r0->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_memory_equal(x[0], as[0], 100);
	assert_ptr_equal(send_wait(p.a), s1);
	/* T12: 10 + 0 + 90 with immediate into 4 x 30 */
	VIP_DESCRIPTOR *r = mk(&p.t, 1, 0, rl, 4, rb);
	assert_int_equal(VipPostRecv(p.b, r, p.t.mh[1]), VIP_SUCCESS);
	uint32_t sl[3] = { 10, 0, 90 };
	VIP_DESCRIPTOR *s = mk(&p.t, 0, VIP_CONTROL_IMMEDIATE, sl, 3, sb);
	s->CS.ImmediateData = 0xDEADBEEF;
	for (int i = 0; i < 10; i++)
		sb[0][i] = (uint8_t)i;
	for (int i = 0; i < 90; i++)
		sb[2][i] = (uint8_t)(10 + i);
	assert_int_equal(VipPostSend(p.a, s, p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(recv_wait(p.b), r);
	assert_int_equal(r->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_int_equal(r->CS.Length, 100);
	assert_true(r->CS.Status & VIP_STATUS_IMMEDIATE);
	assert_int_equal(r->CS.ImmediateData, 0xDEADBEEF);
	for (int i = 0; i < 100; i++)
		assert_int_equal(rb[i / 30][i % 30], i);
	assert_ptr_equal(send_wait(p.a), s);
	/* zero segments, immediate only */
	VIP_DESCRIPTOR *r2 = mk(&p.t, 1, 0, rl, 1, rb);
	assert_int_equal(VipPostRecv(p.b, r2, p.t.mh[1]), VIP_SUCCESS);
	VIP_DESCRIPTOR *z = mk(&p.t, 0, VIP_CONTROL_IMMEDIATE, sl, 0, sb);
	z->CS.ImmediateData = 7;
	assert_int_equal(VipPostSend(p.a, z, p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(recv_wait(p.b), r2);
	assert_int_equal(r2->CS.Length, 0);
	assert_int_equal(r2->CS.ImmediateData, 7);
	assert_ptr_equal(send_wait(p.a), z);
	tv_close(&p.t);
}

/* More data segments than the QP takes (bounce buffer both ways), and a 300-segment send. */
static void many_segments(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, NULL);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	enum { N = 300 };
	uint32_t l[N];
	uint8_t *sb[N], *rb[N];
	for (int i = 0; i < N; i++)
		l[i] = (uint32_t)(i % 7 + 1);
	VIP_DESCRIPTOR *r = mk(&p.t, 1, 0, l, N, rb);
	VIP_DESCRIPTOR *s = mk(&p.t, 0, 0, l, N, sb);
	uint32_t k = 0;
	for (int i = 0; i < N; i++)
		for (uint32_t j = 0; j < l[i]; j++)
			sb[i][j] = (uint8_t)(k++ * 7);
	assert_int_equal(VipPostRecv(p.b, r, p.t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipPostSend(p.a, s, p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(send_wait(p.a), s);
	assert_int_equal(s->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_ptr_equal(recv_wait(p.b), r);
	assert_int_equal(r->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_int_equal(r->CS.Length, k);
	for (int i = 0; i < N; i++)
		assert_memory_equal(rb[i], sb[i], l[i]);
	/* RDMA Write from 40 segments, then an RDMA Read back into 40 others */
	enum { M = 40 };
	uint32_t ml[M], total = 0;
	uint8_t *wb[M], *back[M], *tgt = tv_alloc(&p.t, 1, 4096);
	for (int i = 0; i < M; i++) {
		ml[i] = (uint32_t)(i % 5 + 3);
		total += ml[i];
	}
	VIP_DESCRIPTOR *w = mk(&p.t, 0, VIP_CONTROL_OP_RDMAWRITE, ml, M, wb);
	for (int i = 0; i < M; i++)
		memset(wb[i], i + 1, ml[i]);
	w->DS[0].Remote.Data.Address = tgt;
	w->DS[0].Remote.Handle = p.t.mh[1];
	VIP_DESCRIPTOR *rd = mk(&p.t, 0, VIP_CONTROL_OP_RDMAREAD, ml, M, back);
	rd->DS[0].Remote.Data.Address = tgt;
	rd->DS[0].Remote.Handle = p.t.mh[1];
	assert_int_equal(VipPostSend(p.a, w, p.t.mh[0]), VIP_SUCCESS);
	assert_int_equal(VipPostSend(p.a, rd, p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(send_wait(p.a), w);
	assert_int_equal(w->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_ptr_equal(send_wait(p.a), rd);
	assert_int_equal(rd->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_int_equal(rd->CS.Length, total);
	for (int i = 0; i < M; i++)
		assert_memory_equal(back[i], wb[i], ml[i]);
	tv_close(&p.t);
}

/* T18 + T20 on Reliable Delivery. */
static void rdma(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, NULL);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	uint8_t *target = tv_alloc(&p.t, 1, 3000), *src[1], *dst[3], *rb[1];
	for (int i = 0; i < 3000; i++)
		target[i] = (uint8_t)(i * 3);
	/* Write without immediate: no receive consumed */
	uint32_t wl[1] = { 500 };
	VIP_DESCRIPTOR *w = mk(&p.t, 0, VIP_CONTROL_OP_RDMAWRITE, wl, 1, src);
	memset(src[0], 0xEE, 500);
	w->DS[0].Remote.Data.Address = target + 1000;
	w->DS[0].Remote.Handle = p.t.mh[1];
	VIP_DESCRIPTOR *r = mk(&p.t, 1, 0, wl, 1, rb), *out;
	assert_int_equal(VipPostRecv(p.b, r, p.t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipPostSend(p.a, w, p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(send_wait(p.a), w);
	assert_int_equal(w->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_int_equal(w->CS.Status & VIP_STATUS_OP_MASK, VIP_STATUS_OP_RDMA_WRITE);
	/* Read 3000 from the target into 3 x 1000: sees the Write (ordered behind it) */
	uint32_t rl[3] = { 1000, 1000, 1000 };
	VIP_DESCRIPTOR *rd = mk(&p.t, 0, VIP_CONTROL_OP_RDMAREAD, rl, 3, dst);
	rd->DS[0].Remote.Data.Address = target;
	rd->DS[0].Remote.Handle = p.t.mh[1];
	assert_int_equal(VipPostSend(p.a, rd, p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(send_wait(p.a), rd);
	assert_int_equal(rd->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_int_equal(rd->CS.Status & VIP_STATUS_OP_MASK, VIP_STATUS_OP_RDMA_READ);
	assert_int_equal(rd->CS.Length, 3000);
	for (int i = 0; i < 3000; i++)
		assert_int_equal(dst[i / 1000][i % 1000], i >= 1000 && i < 1500 ? 0xEE : (uint8_t)(i * 3));
	assert_int_equal(VipRecvDone(p.b, &out), VIP_NOT_DONE);
	/* Write with immediate: consumes the receive, data visible at its completion */
	VIP_DESCRIPTOR *wi = mk(&p.t, 0, VIP_CONTROL_OP_RDMAWRITE | VIP_CONTROL_IMMEDIATE, wl, 1, src);
	memset(src[0], 0x77, 500);
	wi->CS.ImmediateData = 0x1234;
	wi->DS[0].Remote.Data.Address = target;
	wi->DS[0].Remote.Handle = p.t.mh[1];
	assert_int_equal(VipPostSend(p.a, wi, p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(recv_wait(p.b), r);
	assert_int_equal(r->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_int_equal(r->CS.Status & VIP_STATUS_OP_MASK, VIP_STATUS_OP_REMOTE_RDMA_WRITE);
	assert_true(r->CS.Status & VIP_STATUS_IMMEDIATE);
	assert_int_equal(r->CS.ImmediateData, 0x1234);
	assert_int_equal(r->CS.Length, 0);
	assert_int_equal(target[0], 0x77);
	assert_int_equal(target[499], 0x77);
	assert_ptr_equal(send_wait(p.a), wi);
	tv_close(&p.t);
}

/* T14 (RD: Error on both sides) and T15 (Unreliable: LENGTH_ERROR, stays Connected). */
static void recv_too_small(void **state)
{
	(void)state;
	for (int level = 0; level < 2; level++) {
		struct pair p;
		tv_open(&p.t);
		VIP_RELIABILITY_LEVEL rel = level ? VIP_SERVICE_UNRELIABLE : VIP_SERVICE_RELIABLE_DELIVERY;
		pair_up(&p, rel, NULL);
		tv_connect(&p.t, p.a, p.b, "a", "b");
		uint32_t small[1] = { 100 }, big[1] = { 200 };
		uint8_t *b1[1], *b2[1], *b3[1];
		VIP_DESCRIPTOR *r1 = mk(&p.t, 1, 0, small, 1, b1);
		VIP_DESCRIPTOR *r2 = mk(&p.t, 1, 0, big, 1, b2);
		assert_int_equal(VipPostRecv(p.b, r1, p.t.mh[1]), VIP_SUCCESS);
		assert_int_equal(VipPostRecv(p.b, r2, p.t.mh[1]), VIP_SUCCESS);
		VIP_DESCRIPTOR *s = mk(&p.t, 0, 0, big, 1, b3);
		assert_int_equal(VipPostSend(p.a, s, p.t.mh[0]), VIP_SUCCESS);
		assert_ptr_equal(recv_wait(p.b), r1);
		assert_true(r1->CS.Status & VIP_STATUS_LENGTH_ERROR);
		assert_int_equal(r1->CS.Length, 0);
		if (level == 0) {
			assert_ptr_equal(recv_wait(p.b), r2);
			assert_true(r2->CS.Status & VIP_STATUS_ERROR_MASK);
			assert_int_equal(tv_state(p.b), VIP_STATE_ERROR);
			wait_state(p.a, VIP_STATE_ERROR);
			send_wait(p.a);
			/* later posts complete in error */
			VIP_DESCRIPTOR *s2 = mk(&p.t, 0, 0, small, 1, b3);
			assert_int_equal(VipPostSend(p.a, s2, p.t.mh[0]), VIP_SUCCESS);
			assert_ptr_equal(send_wait(p.a), s2);
			assert_true(s2->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
		} else {
			assert_int_equal(tv_state(p.b), VIP_STATE_CONNECTED);
			VIP_DESCRIPTOR *s2 = mk(&p.t, 0, 0, small, 1, b3);
			memset(b3[0], 0x42, 100);
			assert_int_equal(VipPostSend(p.a, s2, p.t.mh[0]), VIP_SUCCESS);
			assert_ptr_equal(recv_wait(p.b), r2);
			assert_int_equal(r2->CS.Status & VIP_STATUS_ERROR_MASK, 0);
			assert_int_equal(r2->CS.Length, 100);
			assert_memory_equal(b2[0], b3[0], 100);
			assert_int_equal(tv_state(p.a), VIP_STATE_CONNECTED);
		}
		tv_close(&p.t);
	}
}

/* T16 + T17: Reliable Reception reports the peer's errors in the sender's descriptor. */
static void rr_remote_errors(void **state)
{
	(void)state;
	for (int round = 0; round < 2; round++) {
		struct pair p;
		tv_open(&p.t);
		pair_up(&p, VIP_SERVICE_RELIABLE_RECEPTION, NULL);
		tv_connect(&p.t, p.a, p.b, "a", "b");
		uint32_t l[1] = { 64 };
		uint8_t *b[1], *b2[1];
		/* first a good send: completes only once delivered */
		VIP_DESCRIPTOR *r = mk(&p.t, 1, 0, l, 1, b);
		assert_int_equal(VipPostRecv(p.b, r, p.t.mh[1]), VIP_SUCCESS);
		VIP_DESCRIPTOR *s = mk(&p.t, 0, 0, l, 1, b2);
		assert_int_equal(VipPostSend(p.a, s, p.t.mh[0]), VIP_SUCCESS);
		assert_ptr_equal(send_wait(p.a), s);
		assert_int_equal(s->CS.Status & VIP_STATUS_ERROR_MASK, 0);
		VIP_DESCRIPTOR *out;
		assert_int_equal(VipRecvDone(p.b, &out), VIP_SUCCESS); /* already there */
		VIP_DESCRIPTOR *bad, *after;
		uint32_t want;
		if (round == 0) { /* T16: no receive posted */
			bad = mk(&p.t, 0, 0, l, 1, b2);
			want = VIP_STATUS_REMOTE_DESC_ERROR;
		} else { /* T17: Write into a region without EnableRdmaWrite */
			uint8_t *ro = aligned_alloc(4096, 4096);
			memset(ro, 0x11, 4096);
			VIP_MEM_HANDLE h;
			VIP_MEM_ATTRIBUTES ma = { p.t.ptag[1], VIP_FALSE, VIP_FALSE };
			assert_int_equal(VipRegisterMem(p.t.nic[1], ro, 4096, &ma, &h), VIP_SUCCESS);
			bad = mk(&p.t, 0, VIP_CONTROL_OP_RDMAWRITE, l, 1, b2);
			bad->DS[0].Remote.Data.Address = ro;
			bad->DS[0].Remote.Handle = h;
			memset(b2[0], 0x99, 64);
			want = VIP_STATUS_RDMA_PROT_ERROR;
			assert_int_equal(VipPostSend(p.a, bad, p.t.mh[0]), VIP_SUCCESS);
			assert_ptr_equal(send_wait(p.a), bad);
			assert_true(bad->CS.Status & want);
			assert_int_equal(ro[0], 0x11);
			assert_int_equal(tv_state(p.a), VIP_STATE_ERROR);
			tv_close(&p.t);
			free(ro);
			continue;
		}
		after = mk(&p.t, 0, 0, l, 1, b2);
		assert_int_equal(VipPostSend(p.a, bad, p.t.mh[0]), VIP_SUCCESS);
		assert_int_equal(VipPostSend(p.a, after, p.t.mh[0]), VIP_SUCCESS);
		assert_ptr_equal(send_wait(p.a), bad);
		assert_true(bad->CS.Status & want);
		assert_ptr_equal(send_wait(p.a), after);
		if (!(after->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR)) print_error("after 0x%x bad 0x%x\n", after->CS.Status, bad->CS.Status);
		assert_true(after->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
		assert_int_equal(tv_state(p.a), VIP_STATE_ERROR);
		tv_close(&p.t);
	}
}

/* A VI that disables RDMA Write and Read refuses the peer's, whatever the regions allow, at
 * every reliability level: on RR its connection still takes the acknowledgements RR itself
 * writes and reads, and nothing else. */
static void vi_rdma_disabled(void **state)
{
	(void)state;
	const VIP_RELIABILITY_LEVEL rels[] = { VIP_SERVICE_RELIABLE_DELIVERY,
					       VIP_SERVICE_RELIABLE_RECEPTION };
	for (unsigned k = 0; k < 2; k++) {
		struct pair p;
		tv_open(&p.t);
		VIP_VI_ATTRIBUTES ba = { .ReliabilityLevel = rels[k], .MaxTransferSize = 65536,
					 .Ptag = p.t.ptag[1], .EnableRdmaWrite = VIP_FALSE,
					 .EnableRdmaRead = VIP_FALSE };
		p.a = tv_vi(&p.t, 0, rels[k], NULL, NULL);
		assert_int_equal(VipCreateVi(p.t.nic[1], &ba, NULL, NULL, &p.b), VIP_SUCCESS);
		tv_connect(&p.t, p.a, p.b, "a", "b");
		uint32_t l[1] = { 64 };
		uint8_t *rb[1], *sb[1], *wb[1], *target[1];
		/* a Send completes (on RR: acknowledged through the connection's own block) */
		VIP_DESCRIPTOR *r = mk(&p.t, 1, 0, l, 1, rb);
		assert_int_equal(VipPostRecv(p.b, r, p.t.mh[1]), VIP_SUCCESS);
		VIP_DESCRIPTOR *s = mk(&p.t, 0, 0, l, 1, sb);
		assert_int_equal(VipPostSend(p.a, s, p.t.mh[0]), VIP_SUCCESS);
		assert_ptr_equal(send_wait(p.a), s);
		assert_int_equal(s->CS.Status & VIP_STATUS_ERROR_MASK, 0);
		assert_ptr_equal(recv_wait(p.b), r);
		/* an RDMA Write into B's arena, whose region allows it: the VI does not */
		target[0] = tv_alloc(&p.t, 1, 64);
		memset(target[0], 0x11, 64);
		VIP_DESCRIPTOR *w = mk(&p.t, 0, VIP_CONTROL_OP_RDMAWRITE, l, 1, wb);
		memset(wb[0], 0x99, 64);
		w->DS[0].Remote.Data.Address = target[0];
		w->DS[0].Remote.Handle = p.t.mh[1];
		assert_int_equal(VipPostSend(p.a, w, p.t.mh[0]), VIP_SUCCESS);
		assert_ptr_equal(send_wait(p.a), w);
		if (rels[k] == VIP_SERVICE_RELIABLE_RECEPTION) /* done only once placed: it failed */
			assert_true(w->CS.Status & VIP_STATUS_RDMA_PROT_ERROR);
		/* RD: the Write was done once sent; the peer's refusal breaks the connection */
		wait_state(p.a, VIP_STATE_ERROR);
		assert_int_equal(target[0][0], 0x11);
		assert_int_equal(target[0][63], 0x11);
		tv_close(&p.t);
	}
}

/* T21: Send, Write, Send come back in order; a fenced Send waits for the Read before it. */
static void order_fence(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, NULL);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	uint32_t l[1] = { 32 };
	uint8_t *x[1], *tgt = tv_alloc(&p.t, 1, 64);
	for (int round = 0; round < 20; round++) {
		VIP_DESCRIPTOR *d[3];
		for (int i = 0; i < 2; i++)
			assert_int_equal(VipPostRecv(p.b, mk(&p.t, 1, 0, l, 1, x), p.t.mh[1]), VIP_SUCCESS);
		d[0] = mk(&p.t, 0, 0, l, 1, x);
		d[1] = mk(&p.t, 0, VIP_CONTROL_OP_RDMAWRITE, l, 1, x);
		d[1]->DS[0].Remote.Data.Address = tgt;
		d[1]->DS[0].Remote.Handle = p.t.mh[1];
		d[2] = mk(&p.t, 0, VIP_CONTROL_QFENCE, l, 1, x);
		for (int i = 0; i < 3; i++)
			assert_int_equal(VipPostSend(p.a, d[i], p.t.mh[0]), VIP_SUCCESS);
		for (int i = 0; i < 3; i++) {
			assert_ptr_equal(send_wait(p.a), d[i]);
			assert_int_equal(d[i]->CS.Status & VIP_STATUS_ERROR_MASK, 0);
		}
		recv_wait(p.b);
		recv_wait(p.b);
		p.t.used[0] = p.t.used[1] = 4096; /* reuse the arena */
	}
	tv_close(&p.t);
}

static int notified;
static VIP_DESCRIPTOR *notified_desc;
static VIP_VI_HANDLE notified_vi;

static void on_recv(VIP_PVOID ctx, VIP_NIC_HANDLE nic, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d)
{
	(void)nic;
	__atomic_add_fetch(&notified, 1, __ATOMIC_SEQ_CST);
	notified_desc = d;
	notified_vi = vi;
	if (ctx != NULL) /* re-arm from inside the handler */
		assert_int_equal(VipRecvNotify(vi, NULL, on_recv), VIP_SUCCESS);
}

static void wait_notified(int n)
{
	uint64_t dl = tv_ms() + 3000;
	while (__atomic_load_n(&notified, __ATOMIC_SEQ_CST) < n && tv_ms() < dl) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	assert_int_equal(__atomic_load_n(&notified, __ATOMIC_SEQ_CST), n);
}

/* T24 on the receive queue, T23's CPU check, T22 with one CQ for two VIs. */
static void notify_waits_cq(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	VIP_CQ_HANDLE cq;
	assert_int_equal(VipCreateCQ(p.t.nic[1], 1024, &cq), VIP_SUCCESS);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, NULL);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	uint32_t l[1] = { 16 };
	uint8_t *x[1];
	notified = 0;
	VIP_DESCRIPTOR *r1 = mk(&p.t, 1, 0, l, 1, x), *r2 = mk(&p.t, 1, 0, l, 1, x);
	assert_int_equal(VipPostRecv(p.b, r1, p.t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipPostRecv(p.b, r2, p.t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipRecvNotify(p.b, NULL, on_recv), VIP_SUCCESS);
	assert_int_equal(VipPostSend(p.a, mk(&p.t, 0, 0, l, 1, x), p.t.mh[0]), VIP_SUCCESS);
	wait_notified(1);
	assert_ptr_equal(notified_desc, r1);
	assert_ptr_equal(notified_vi, p.b);
	/* a second completion without re-arming: no call; then arming finds it at once */
	assert_int_equal(VipPostSend(p.a, mk(&p.t, 0, 0, l, 1, x), p.t.mh[0]), VIP_SUCCESS);
	send_wait(p.a);
	send_wait(p.a);
	struct timespec ms50 = { 0, 50000000 };
	nanosleep(&ms50, NULL);
	assert_int_equal(notified, 1);
	assert_int_equal(VipRecvNotify(p.b, NULL, on_recv), VIP_SUCCESS);
	assert_int_equal(notified, 2); /* in the caller, before the return */
	assert_ptr_equal(notified_desc, r2);
	/* re-arming inside the handler */
	for (int i = 0; i < 2; i++)
		assert_int_equal(VipPostRecv(p.b, mk(&p.t, 1, 0, l, 1, x), p.t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipRecvNotify(p.b, (void *)1, on_recv), VIP_SUCCESS);
	for (int i = 0; i < 2; i++)
		assert_int_equal(VipPostSend(p.a, mk(&p.t, 0, 0, l, 1, x), p.t.mh[0]), VIP_SUCCESS);
	wait_notified(4);
	send_wait(p.a);
	send_wait(p.a);
	/* T23: RecvWait timeout, and a 1 s wait that burns no CPU */
	VIP_DESCRIPTOR *out;
	uint64_t t0 = tv_ms();
	assert_int_equal(VipSendWait(p.a, 50, &out), VIP_TIMEOUT);
	assert_true(tv_ms() - t0 >= 50 && tv_ms() - t0 < 300);
	struct rusage u0, u1;
	getrusage(RUSAGE_SELF, &u0);
	t0 = tv_ms();
	assert_int_equal(VipSendWait(p.a, 1000, &out), VIP_TIMEOUT);
	getrusage(RUSAGE_SELF, &u1);
	long cpu_us = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) * 1000000L +
		      (u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) +
		      (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) * 1000000L +
		      (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec);
	assert_true(tv_ms() - t0 >= 1000);
	assert_true(cpu_us < 200000);
	/* T22: two server VIs on one receive CQ */
	VIP_VI_HANDLE a2 = tv_vi(&p.t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	VIP_VI_HANDLE v1 = tv_vi(&p.t, 1, VIP_SERVICE_RELIABLE_DELIVERY, NULL, cq);
	VIP_VI_HANDLE v2 = tv_vi(&p.t, 1, VIP_SERVICE_RELIABLE_DELIVERY, NULL, cq);
	VIP_VI_HANDLE a1 = tv_vi(&p.t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	tv_connect(&p.t, a1, v1, "a1", "v1");
	tv_connect(&p.t, a2, v2, "a2", "v2");
	for (int i = 0; i < 2; i++)
		assert_int_equal(VipPostRecv(v1, mk(&p.t, 1, 0, l, 1, x), p.t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipPostRecv(v2, mk(&p.t, 1, 0, l, 1, x), p.t.mh[1]), VIP_SUCCESS);
	VIP_VI_HANDLE order[3] = { a1, a2, a1 }, want[3] = { v1, v2, v1 };
	for (int i = 0; i < 3; i++) { /* each arrival before the next send: a known order */
		VIP_VI_HANDLE vi;
		VIP_BOOLEAN rq;
		assert_int_equal(VipPostSend(order[i], mk(&p.t, 0, 0, l, 1, x), p.t.mh[0]), VIP_SUCCESS);
		send_wait(order[i]);
		assert_int_equal(VipCQWait(cq, 3000, &vi, &rq), VIP_SUCCESS);
		assert_true(rq);
		assert_ptr_equal(vi, want[i]);
		assert_int_equal(VipRecvDone(vi, &out), VIP_SUCCESS);
	}
	VIP_VI_HANDLE vi;
	VIP_BOOLEAN rq;
	assert_int_equal(VipCQDone(cq, &vi, &rq), VIP_NOT_DONE);
	assert_int_equal(VipRecvWait(v1, 10, &out), VIP_ERROR_RESOURCE);
	assert_int_equal(VipDestroyCQ(cq), VIP_ERROR_RESOURCE);
	tv_close(&p.t);
}

/* T25 in one process: flushes on Disconnect, the peer goes to Error, both reconnect. */
static void disconnect_reconnect(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, NULL);
	uint32_t l[1] = { 16 };
	uint8_t *x[1];
	for (int round = 0; round < 3; round++) {
		tv_connect(&p.t, p.a, p.b, "a", "b");
		VIP_DESCRIPTOR *rs[3];
		for (int i = 0; i < 3; i++) {
			rs[i] = mk(&p.t, 0, 0, l, 1, x);
			assert_int_equal(VipPostRecv(p.a, rs[i], p.t.mh[0]), VIP_SUCCESS);
		}
		VIP_DESCRIPTOR *br = mk(&p.t, 1, 0, l, 1, x);
		assert_int_equal(VipPostRecv(p.b, br, p.t.mh[1]), VIP_SUCCESS);
		assert_int_equal(VipDisconnect(p.a), VIP_SUCCESS);
		assert_int_equal(tv_state(p.a), VIP_STATE_IDLE);
		for (int i = 0; i < 3; i++) {
			VIP_DESCRIPTOR *d;
			assert_int_equal(VipRecvDone(p.a, &d), VIP_SUCCESS);
			assert_ptr_equal(d, rs[i]);
			assert_true(d->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
		}
		wait_state(p.b, VIP_STATE_ERROR);
		assert_ptr_equal(recv_wait(p.b), br);
		assert_true(br->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
		assert_int_equal(VipDisconnect(p.b), VIP_SUCCESS);
		assert_int_equal(tv_state(p.b), VIP_STATE_IDLE);
		p.t.used[0] = p.t.used[1] = 0;
	}
	/* and data flows after the last reconnect */
	tv_connect(&p.t, p.a, p.b, "a", "b");
	VIP_DESCRIPTOR *r = mk(&p.t, 1, 0, l, 1, x);
	assert_int_equal(VipPostRecv(p.b, r, p.t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipPostSend(p.a, mk(&p.t, 0, 0, l, 1, x), p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(recv_wait(p.b), r);
	assert_int_equal(r->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	tv_close(&p.t);
}

static int errs;
static VIP_ERROR_DESCRIPTOR last_err;
static void *err_ctx;

static void on_error(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *e)
{
	last_err = *e;
	err_ctx = ctx;
	__atomic_add_fetch(&errs, 1, __ATOMIC_SEQ_CST);
}

static int cq_calls;
static VIP_VI_HANDLE cq_vi;

static void on_cq(VIP_PVOID ctx, VIP_NIC_HANDLE nic, VIP_VI_HANDLE vi, VIP_BOOLEAN rq)
{
	(void)nic;
	cq_vi = vi;
	assert_true(rq);
	if (__atomic_add_fetch(&cq_calls, 1, __ATOMIC_SEQ_CST) == 1)
		assert_int_equal(VipCQNotify(ctx, ctx, on_cq), VIP_SUCCESS); /* re-arm inside */
}

/* T26 (error callback plumbing), T24's CQ notify and the cancel on destroy. */
static void callbacks(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	VIP_CQ_HANDLE cq;
	assert_int_equal(VipCreateCQ(p.t.nic[1], 1024, &cq), VIP_SUCCESS);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, cq);
	int ctx;
	errs = 0;
	assert_int_equal(VipErrorCallback(p.t.nic[1], &ctx, on_error), VIP_SUCCESS);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	uint32_t l[1] = { 16 };
	uint8_t *x[1];
	VIP_DESCRIPTOR *out;
	assert_int_equal(VipRecvNotify(p.b, NULL, on_recv), VIP_ERROR_RESOURCE);
	cq_calls = 0;
	assert_int_equal(VipCQNotify(cq, cq, on_cq), VIP_SUCCESS);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(VipPostRecv(p.b, mk(&p.t, 1, 0, l, 1, x), p.t.mh[1]), VIP_SUCCESS);
		assert_int_equal(VipPostSend(p.a, mk(&p.t, 0, 0, l, 1, x), p.t.mh[0]), VIP_SUCCESS);
		send_wait(p.a);
	}
	uint64_t dl = tv_ms() + 3000;
	while (__atomic_load_n(&cq_calls, __ATOMIC_SEQ_CST) < 2 && tv_ms() < dl)
		tv_nap();
	assert_int_equal(cq_calls, 2);
	assert_ptr_equal(cq_vi, p.b);
	for (int i = 0; i < 2; i++)
		assert_int_equal(VipRecvDone(p.b, &out), VIP_SUCCESS);
	/* the peer goes: CONN_LOST on our handler, with the VI */
	assert_int_equal(VipDisconnect(p.a), VIP_SUCCESS);
	dl = tv_ms() + 3000;
	while (__atomic_load_n(&errs, __ATOMIC_SEQ_CST) < 1 && tv_ms() < dl)
		tv_nap();
	assert_int_equal(errs, 1);
	assert_ptr_equal(err_ctx, &ctx);
	assert_ptr_equal(last_err.NicHandle, p.t.nic[1]);
	assert_ptr_equal(last_err.ViHandle, p.b);
	assert_int_equal(last_err.ResourceCode, VIP_RESOURCE_VI);
	assert_int_equal(last_err.ErrorCode, VIP_ERROR_CONN_LOST);
	assert_int_equal(VipErrorCallback(p.t.nic[1], NULL, NULL), VIP_SUCCESS);
	assert_int_equal(VipDisconnect(p.b), VIP_SUCCESS);
	/* an armed notify dies with its VI */
	notified = 0;
	assert_int_equal(VipSendNotify(p.a, NULL, on_recv), VIP_SUCCESS);
	assert_int_equal(VipDestroyVi(p.a), VIP_SUCCESS);
	assert_int_equal(VipSendNotify(p.a, NULL, on_recv), VIP_INVALID_PARAMETER);
	assert_int_equal(notified, 0);
	assert_int_equal(VipDestroyVi(p.b), VIP_SUCCESS);
	assert_int_equal(VipCQNotify(cq, cq, on_cq), VIP_SUCCESS);
	assert_int_equal(VipDestroyCQ(cq), VIP_SUCCESS);
	tv_close(&p.t);
	assert_int_equal(cq_calls, 2);
}

/* One 8-octet message a -> b whose receive the test sees complete by reading Status in
 * memory only (after one inline poll that finds nothing when poll_first). */
static void status_round(struct pair *p, bool poll_first)
{
	uint32_t l[1] = { 8 };
	uint8_t *x[1];
	VIP_DESCRIPTOR *out, *r = mk(&p->t, 1, 0, l, 1, x);
	assert_int_equal(VipPostRecv(p->b, r, p->t.mh[1]), VIP_SUCCESS);
	if (poll_first)
		assert_int_equal(VipRecvDone(p->b, &out), VIP_NOT_DONE);
	assert_int_equal(VipPostSend(p->a, mk(&p->t, 0, 0, l, 1, x), p->t.mh[0]), VIP_SUCCESS);
	uint64_t dl = tv_ms() + 3000;
	while (!(__atomic_load_n(&r->CS.Status, __ATOMIC_ACQUIRE) & VIP_STATUS_DONE) && tv_ms() < dl)
		tv_nap();
	assert_true(r->CS.Status & VIP_STATUS_DONE);
	assert_int_equal(r->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_int_equal(r->CS.Length, 8);
	assert_int_equal(VipRecvDone(p->b, &out), VIP_SUCCESS);
	assert_ptr_equal(out, r);
	send_wait(p->a);
	p->t.used[0] = p->t.used[1] = 4096;
}

/* Trap 2: the provider completes descriptors without API calls (Status polled in memory),
 * also right after the application polled inline (the thread re-arms the CQ it left
 * unarmed: vipl_arm.c). */
static void progress_without_calls(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, NULL);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	for (int round = 0; round < 20; round++)
		status_round(&p, true);
	tv_close(&p.t);
}

/* An application that polled Done for a while (the thread's look interval at a left-unarmed
 * CQ has doubled to its cap) and then only spins on Status still sees its receive complete:
 * the thread re-arms at its next look (<= 8 ms, vipl_arm.c), well inside the bound here. */
static void progress_after_long_polling(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, NULL);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	uint32_t l[1] = { 8 };
	uint8_t *x[1];
	VIP_DESCRIPTOR *out;
	uint64_t busy_until = tv_ms() + 60; /* > 1 + 2 + 4 + 8 ms: the interval reaches its cap */
	unsigned msgs = 0;
	while (tv_ms() < busy_until) {
		VIP_DESCRIPTOR *r = mk(&p.t, 1, 0, l, 1, x);
		assert_int_equal(VipPostRecv(p.b, r, p.t.mh[1]), VIP_SUCCESS);
		assert_int_equal(VipPostSend(p.a, mk(&p.t, 0, 0, l, 1, x), p.t.mh[0]), VIP_SUCCESS);
		uint64_t dl = tv_ms() + 3000;
		VIP_RETURN rc;
		while ((rc = VipRecvDone(p.b, &out)) == VIP_NOT_DONE && tv_ms() < dl)
			;
		assert_int_equal(rc, VIP_SUCCESS);
		assert_ptr_equal(out, r);
		send_wait(p.a);
		p.t.used[0] = p.t.used[1] = 4096;
		msgs++;
	}
	assert_true(msgs > 0);
	for (int round = 0; round < 3; round++) /* now only Status in memory */
		status_round(&p, false);
	tv_close(&p.t);
}

/* Unreliable: an RDMA Write into a region without EnableRdmaWrite is dropped at the target
 * (tolerant QP), memory unchanged, both VIs stay Connected and keep working. */
static void unreliable_rdma_prot(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	pair_up(&p, VIP_SERVICE_UNRELIABLE, NULL);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	uint8_t *ro = aligned_alloc(4096, 4096), *x[1];
	memset(ro, 0x11, 4096);
	VIP_MEM_HANDLE h;
	VIP_MEM_ATTRIBUTES ma = { p.t.ptag[1], VIP_FALSE, VIP_FALSE };
	assert_int_equal(VipRegisterMem(p.t.nic[1], ro, 4096, &ma, &h), VIP_SUCCESS);
	uint32_t l[1] = { 64 };
	VIP_DESCRIPTOR *w = mk(&p.t, 0, VIP_CONTROL_OP_RDMAWRITE, l, 1, x);
	memset(x[0], 0x99, 64);
	w->DS[0].Remote.Data.Address = ro;
	w->DS[0].Remote.Handle = h;
	assert_int_equal(VipPostSend(p.a, w, p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(send_wait(p.a), w);
	VIP_DESCRIPTOR *r = mk(&p.t, 1, 0, l, 1, x);
	assert_int_equal(VipPostRecv(p.b, r, p.t.mh[1]), VIP_SUCCESS);
	assert_int_equal(VipPostSend(p.a, mk(&p.t, 0, 0, l, 1, x), p.t.mh[0]), VIP_SUCCESS);
	assert_ptr_equal(recv_wait(p.b), r); /* behind the dropped Write */
	assert_int_equal(r->CS.Status & VIP_STATUS_ERROR_MASK, 0);
	assert_int_equal(ro[0], 0x11);
	assert_int_equal(ro[63], 0x11);
	assert_int_equal(tv_state(p.a), VIP_STATE_CONNECTED);
	assert_int_equal(tv_state(p.b), VIP_STATE_CONNECTED);
	tv_close(&p.t);
	free(ro);
}

static int post_desc_errs;

static void on_post_err(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *e)
{
	(void)ctx;
	if (e->ErrorCode == VIP_ERROR_POST_DESC && e->ResourceCode == VIP_RESOURCE_DESCRIPTOR)
		__atomic_add_fetch(&post_desc_errs, 1, __ATOMIC_SEQ_CST);
}

/* §3.2.1: a receive whose region went away before the connection fails at access with a
 * protection error; a descriptor outside the region named at post: PROTECTION_ERROR plus the
 * async Post Descriptor Error. */
static void protection_at_access(void **state)
{
	(void)state;
	struct pair p;
	tv_open(&p.t);
	pair_up(&p, VIP_SERVICE_RELIABLE_DELIVERY, NULL);
	uint8_t *buf = aligned_alloc(4096, 4096), *x[1];
	VIP_MEM_HANDLE h;
	VIP_MEM_ATTRIBUTES ma = { p.t.ptag[1], VIP_FALSE, VIP_FALSE };
	assert_int_equal(VipRegisterMem(p.t.nic[1], buf, 4096, &ma, &h), VIP_SUCCESS);
	VIP_DESCRIPTOR *r = tv_desc(&p.t, 1, 1), *out;
	r->CS.SegCount = 1;
	r->DS[0].Local = (VIP_DATA_SEGMENT){ { .Address = buf }, h, 64 };
	assert_int_equal(VipPostRecv(p.b, r, p.t.mh[1]), VIP_SUCCESS); /* valid now */
	assert_int_equal(VipDeregisterMem(p.t.nic[1], buf, h), VIP_SUCCESS);
	tv_connect(&p.t, p.a, p.b, "a", "b");
	assert_ptr_equal(recv_wait(p.b), r);
	assert_true(r->CS.Status & VIP_STATUS_PROTECTION_ERROR);
	post_desc_errs = 0;
	assert_int_equal(VipErrorCallback(p.t.nic[0], NULL, on_post_err), VIP_SUCCESS);
	uint32_t l[1] = { 8 };
	VIP_DESCRIPTOR *s = mk(&p.t, 0, 0, l, 1, x);
	assert_int_equal(VipPostSend(p.a, s, p.t.mh[0] + 0x100), VIP_SUCCESS); /* wrong handle */
	assert_int_equal(VipSendDone(p.a, &out), VIP_SUCCESS);
	assert_ptr_equal(out, s);
	assert_true(s->CS.Status & VIP_STATUS_PROTECTION_ERROR);
	uint64_t dl = tv_ms() + 3000;
	while (__atomic_load_n(&post_desc_errs, __ATOMIC_SEQ_CST) < 1 && tv_ms() < dl)
		tv_nap();
	assert_int_equal(post_desc_errs, 1);
	assert_int_equal(tv_state(p.a), VIP_STATE_CONNECTED); /* local errors keep the VI */
	tv_close(&p.t);
	free(buf);
}

int main(void)
{
	tv_env();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t06_t12),
		cmocka_unit_test(many_segments),
		cmocka_unit_test(rdma),
		cmocka_unit_test(recv_too_small),
		cmocka_unit_test(rr_remote_errors),
		cmocka_unit_test(order_fence),
		cmocka_unit_test(vi_rdma_disabled),
		cmocka_unit_test(notify_waits_cq),
		cmocka_unit_test(disconnect_reconnect),
		cmocka_unit_test(callbacks),
		cmocka_unit_test(progress_without_calls),
		cmocka_unit_test(progress_after_long_polling),
		cmocka_unit_test(unreliable_rdma_prot),
		cmocka_unit_test(protection_at_access),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
