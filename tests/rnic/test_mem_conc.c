/* rn_mem concurrency: seqlock lookups racing writers and the deregistration fence: dereg
 * returns only after readers left the region. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "test_mem_util.h"

static uint8_t bufa[PAGE], bufb[PAGE], bufw[4 * PAGE];
#define BASE_A 0x100000ull
#define BASE_B 0x200000ull
#define LEN_A 4096ull
#define LEN_B 2048ull
#define BASE_W 0x300000ull
/* the two windows the writer alternates; a torn (to_base, length) mix would accept
 * [BASE_W, BASE_W + 1500), which neither window covers */
#define W1_OFF 0ull
#define W1_LEN 100ull
#define W2_OFF 1000ull
#define W2_LEN 2000ull

struct race {
	struct rn_mem *m;
	uint32_t pd;
	_Atomic rn_stag_t mr, mw;
	atomic_bool stop;
	_Atomic unsigned long ok_mr, ok_mw, torn;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static bool consistent_mr(const struct rn_mem_ref *r, uint64_t to, uint64_t len)
{
	if (to >= BASE_A && to - BASE_A + len <= LEN_A && r->addr == bufa + (to - BASE_A))
		return true;
	return to >= BASE_B && to - BASE_B + len <= LEN_B && r->addr == bufb + (to - BASE_B);
}

static bool inside(uint64_t to, uint64_t len, uint64_t off, uint64_t wlen)
{
	return to >= BASE_W + off && to + len <= BASE_W + off + wlen;
}

/* The key says which binding the check validated (odd keys: window 1): the accepted range must
 * lie in that binding, not merely in some binding. */
static bool consistent_mw(const struct rn_mem_ref *r, rn_stag_t s, uint64_t to, uint64_t len)
{
	if (r->addr != bufw + (to - BASE_W) || r->run != len)
		return false;
	return (RN_STAG_KEY(s) & 1) ? inside(to, len, W1_OFF, W1_LEN) : inside(to, len, W2_OFF, W2_LEN);
}

static void probe(struct race *x, uint64_t rnd)
{
	struct rn_mem_ref ref;
	struct iwarp_err e;
	static const uint64_t tos[] = { BASE_A, BASE_A + 4000, BASE_B, BASE_B + 2000, BASE_A + 2040 };
	uint64_t to = tos[rnd % 5], len = 1 + (rnd >> 8) % 96;
	if (rn_mem_check_tagged(x->m, x->pd, 7, atomic_load(&x->mr), to, len, W, &ref, &e) == 0) {
		atomic_fetch_add(&x->ok_mr, 1);
		if (!consistent_mr(&ref, to, len))
			atomic_fetch_add(&x->torn, 1);
	}
	static const uint64_t wto[] = { BASE_W, BASE_W + 50, BASE_W + 1000, BASE_W + 2500, BASE_W };
	static const uint64_t wlen[] = { 100, 50, 2000, 500, 1500 };
	unsigned k = (unsigned)(rnd >> 20) % 5;
	rn_stag_t mw = atomic_load(&x->mw) ^ ((rnd >> 30) & 1); /* either binding's key */
	if (rn_mem_check_tagged(x->m, x->pd, 7, mw, wto[k], wlen[k], W, &ref, &e) == 0) {
		atomic_fetch_add(&x->ok_mw, 1);
		if (!consistent_mw(&ref, mw, wto[k], wlen[k]))
			atomic_fetch_add(&x->torn, 1);
	}
}

static void *reader(void *arg)
{
	struct race *x = arg;
	unsigned id;
	assert_int_equal(rn_mem_reader_register(x->m, &id), RN_OK);
	uint64_t rnd = (uint64_t)(uintptr_t)&id;
	while (!atomic_load(&x->stop)) {
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		probe(x, rnd >> 11);
		rn_mem_quiescent(x->m, id);
	}
	rn_mem_reader_unregister(x->m, id);
	return NULL;
}

/* Writer: reregister the MR between two translations, rebind / invalidate the window. */
static void writer_step(struct race *x, rn_stag_t mrw, unsigned i)
{
	struct rn_mem_qp qp = { x->pd, 7, true };
	rn_stag_t s = atomic_load(&x->mr);
	bool a = i & 1;
	if ((i & 15) == 0) { /* reregistration waits for a grace period: less often */
		bool ra = i & 16;
		assert_int_equal(rn_mem_rereg_mr(x->m, &s, RN_REREG_TRANSLATION, 0, ra ? bufa : bufb,
						 ra ? LEN_A : LEN_B, ra ? BASE_A : BASE_B, 0), RN_OK);
		atomic_store(&x->mr, s);
	}
	rn_stag_t w = atomic_load(&x->mw);
	assert_int_equal(rn_mem_local_inv(x->m, &qp, w), RN_WC_SUCCESS);
	w = RN_STAG(RN_STAG_IDX(w), (uint8_t)i); /* odd key: window 1; keys repeat every 256 */
	struct rn_bind_wr b = { w, mrw, BASE_W + (a ? W1_OFF : W2_OFF), a ? W1_LEN : W2_LEN, W };
	assert_int_equal(rn_mem_bind_mw(x->m, &qp, &b), RN_WC_SUCCESS);
	atomic_store(&x->mw, w);
}

static void mm14_lockfree_consistency(void **st)
{
	(void)st;
	struct race x = { 0 };
	x.m = mk_mem(8, 8);
	x.pd = mk_pd(x.m);
	rn_stag_t s = 0, mw = 0;
	assert_int_equal(rn_mem_reg_mr(x.m, x.pd, bufa, LEN_A, BASE_A, RW_ALL, &s), RN_OK);
	rn_stag_t mrw = 0;
	assert_int_equal(rn_mem_reg_mr(x.m, x.pd, bufw, sizeof(bufw), BASE_W, RW_ALL | RN_ACC_MW_BIND, &mrw), RN_OK);
	assert_int_equal(rn_mem_alloc_mw(x.m, x.pd, RN_MW_TYPE2, &mw), RN_OK);
	struct rn_mem_qp qp = { x.pd, 7, true };
	mw = RN_STAG(RN_STAG_IDX(mw), 1);
	struct rn_bind_wr b = { mw, mrw, BASE_W + W1_OFF, W1_LEN, W };
	assert_int_equal(rn_mem_bind_mw(x.m, &qp, &b), RN_WC_SUCCESS);
	atomic_store(&x.mr, s);
	atomic_store(&x.mw, mw);
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, &x), 0);
	double end = now_s() + 1.0;
	unsigned i = 0;
	while (now_s() < end || atomic_load(&x.ok_mr) < 100 || atomic_load(&x.ok_mw) < 100) {
		writer_step(&x, mrw, i++);
		if (now_s() > end + 10)
			break;
	}
	atomic_store(&x.stop, true);
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	print_message("writer steps %u, accepted MR %lu MW %lu\n", i, atomic_load(&x.ok_mr),
		      atomic_load(&x.ok_mw));
	assert_int_equal(atomic_load(&x.torn), 0);
	assert_true(atomic_load(&x.ok_mr) >= 100 && atomic_load(&x.ok_mw) >= 100);
	rn_mem_destroy(x.m);
}

/* ---- item 8: dereg waits for a reader that is inside a placement ------------------------- */
struct fence {
	struct rn_mem *m;
	uint32_t pd;
	rn_stag_t s;
	atomic_int phase;     /* 1: reader inside the placement; 2: placement done */
	atomic_bool dereg_returned_early;
};

static void *placing_reader(void *arg)
{
	struct fence *f = arg;
	unsigned id;
	struct rn_mem_ref ref;
	struct iwarp_err e;
	assert_int_equal(rn_mem_reader_register(f->m, &id), RN_OK);
	assert_int_equal(rn_mem_check_tagged(f->m, f->pd, 1, f->s, (uintptr_t)bufa, 64, W, &ref, &e), 0);
	atomic_store(&f->phase, 1);
	usleep(200 * 1000); /* a slow copy into the region */
	memset(ref.addr, 0x5a, ref.run);
	atomic_store(&f->phase, 2);
	rn_mem_quiescent(f->m, id);
	/* later segments see the STag gone */
	while (rn_mem_check_tagged(f->m, f->pd, 1, f->s, (uintptr_t)bufa, 64, W, &ref, &e) == 0)
		rn_mem_quiescent(f->m, id);
	assert_int_equal(iwarp_err_u16(e), 0x1100);
	rn_mem_reader_unregister(f->m, id);
	return NULL;
}

static void mm08_dereg_waits_for_placement(void **st)
{
	(void)st;
	struct fence f = { 0 };
	f.m = mk_mem(8, 8);
	f.pd = mk_pd(f.m);
	f.s = mk_mr(f.m, f.pd, bufa, PAGE, RW_ALL);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, placing_reader, &f), 0);
	while (atomic_load(&f.phase) < 1)
		usleep(1000);
	double t0 = now_s();
	assert_int_equal(rn_mem_dereg(f.m, f.s), RN_OK);
	assert_int_equal(atomic_load(&f.phase), 2); /* the placement finished before dereg returned */
	assert_true(now_s() - t0 > 0.1);
	pthread_join(t, NULL);
	rn_mem_destroy(f.m);
}

/* No readers: no wait. An offline reader never delays a writer; neither does the caller's own
 * reader slot. The non-blocking ticket follows quiescent points. */
static void mm08_quiescence_edges(void **st)
{
	(void)st;
	struct rn_mem *m = mk_mem(8, 8);
	uint32_t pd = mk_pd(m);
	rn_stag_t s = mk_mr(m, pd, bufa, PAGE, RW_ALL);
	double t0 = now_s();
	assert_int_equal(rn_mem_dereg(m, s), RN_OK);
	rn_mem_synchronize(m);
	assert_true(now_s() - t0 < 0.5);
	/* own slot: a run-to-completion thread deregisters from inside its loop */
	unsigned me;
	assert_int_equal(rn_mem_reader_register(m, &me), RN_OK);
	s = mk_mr(m, pd, bufa, PAGE, RW_ALL);
	assert_int_equal(rn_mem_dereg(m, s), RN_OK);
	uint64_t tk = rn_mem_sync_start(m);
	assert_true(rn_mem_sync_done(m, tk));
	rn_mem_reader_unregister(m, me);
	rn_mem_destroy(m);
}

struct other {
	struct rn_mem *m;
	unsigned id;
	atomic_int step;
};

static void *other_reader(void *arg)
{
	struct other *o = arg;
	assert_int_equal(rn_mem_reader_register(o->m, &o->id), RN_OK);
	atomic_store(&o->step, 1);
	while (atomic_load(&o->step) != 2)
		usleep(1000);
	rn_mem_reader_offline(o->m, o->id);
	atomic_store(&o->step, 3);
	while (atomic_load(&o->step) != 4)
		usleep(1000);
	rn_mem_reader_online(o->m, o->id);
	atomic_store(&o->step, 5);
	while (atomic_load(&o->step) != 6)
		usleep(1000);
	rn_mem_quiescent(o->m, o->id);
	atomic_store(&o->step, 7);
	while (atomic_load(&o->step) != 8)
		usleep(1000);
	rn_mem_reader_unregister(o->m, o->id);
	return NULL;
}

static void mm08_sync_ticket_follows_readers(void **st)
{
	(void)st;
	struct other o = { .m = mk_mem(8, 8) };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, other_reader, &o), 0);
	while (atomic_load(&o.step) != 1)
		usleep(1000);
	uint64_t tk = rn_mem_sync_start(o.m);
	assert_false(rn_mem_sync_done(o.m, tk));     /* online, not yet quiescent */
	atomic_store(&o.step, 2);
	while (atomic_load(&o.step) != 3)
		usleep(1000);
	assert_true(rn_mem_sync_done(o.m, tk));      /* offline */
	atomic_store(&o.step, 4);
	while (atomic_load(&o.step) != 5)
		usleep(1000);
	assert_true(rn_mem_sync_done(o.m, tk));      /* came online after the ticket */
	tk = rn_mem_sync_start(o.m);
	assert_false(rn_mem_sync_done(o.m, tk));
	atomic_store(&o.step, 6);
	while (atomic_load(&o.step) != 7)
		usleep(1000);
	assert_true(rn_mem_sync_done(o.m, tk));      /* passed a quiescent point */
	atomic_store(&o.step, 8);
	pthread_join(t, NULL);
	unsigned ids[RN_MEM_MAX_READERS + 1];
	for (unsigned i = 0; i < RN_MEM_MAX_READERS; i++)
		assert_int_equal(rn_mem_reader_register(o.m, &ids[i]), RN_OK);
	assert_int_equal(rn_mem_reader_register(o.m, &ids[RN_MEM_MAX_READERS]), RN_ERR_NO_RESOURCES);
	rn_mem_destroy(o.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mm14_lockfree_consistency),
		cmocka_unit_test(mm08_dereg_waits_for_placement),
		cmocka_unit_test(mm08_quiescence_edges),
		cmocka_unit_test(mm08_sync_ticket_follows_readers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
