/* rn_device_feed: the CQ -> feeders index behind consumer-side progress. Joining and
 * leaving in any order, every feeder taken in turn, CQs emptied and back (tombstones), and
 * the table grown past thousands of CQs with every feeder still found. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "rn_device_feed.h"

struct item {
	atomic_uint pos;
	int cq;
};

static unsigned take_all(struct rn_feed_tab *t, const void *cq, void **out, unsigned max)
{
	return rn_feed_take(t, cq, 0, out, max);
}

/* Takes rotate: with 5 feeders and takes of 2, every feeder comes within 3 takes. */
static void test_turns(void **state)
{
	struct rn_feed_tab t = { 0 };
	struct item it[5];
	int cq;
	unsigned seen[5] = { 0 };
	void *out[2];

	(void)state;
	for (int i = 0; i < 5; i++)
		assert_int_equal(rn_feed_add(&t, &cq, &it[i], &it[i].pos), 0);
	for (int k = 0; k < 3; k++) {
		unsigned n = take_all(&t, &cq, out, 2);
		assert_int_equal(n, 2);
		for (unsigned j = 0; j < n; j++)
			seen[(struct item *)out[j] - it]++;
	}
	for (int i = 0; i < 5; i++)
		assert_true(seen[i] >= 1);
	assert_int_equal(take_all(&t, &cq + 1, out, 2), 0); /* a CQ nobody feeds */
	rn_feed_free(&t);
}

/* Leaving from the middle keeps the others' positions right: each can still leave. */
/* A hint puts that feeder first, once; the others follow in turn; a hint past the end is
 * ignored. */
static void test_hint(void **state)
{
	struct rn_feed_tab t = { 0 };
	struct item it[5];
	int cq;
	void *out[5];
	(void)state;

	for (int i = 0; i < 5; i++)
		assert_int_equal(rn_feed_add(&t, &cq, &it[i], &it[i].pos), 0);
	unsigned h = atomic_load(&it[3].pos) + 1;
	assert_int_equal(rn_feed_take(&t, &cq, h, out, 1), 1);
	assert_ptr_equal(out[0], &it[3]);
	assert_int_equal(rn_feed_take(&t, &cq, h, out, 5), 5);
	assert_ptr_equal(out[0], &it[3]);
	for (int i = 1; i < 5; i++)
		assert_ptr_not_equal(out[i], &it[3]);
	assert_int_equal(rn_feed_take(&t, &cq, 6, out, 5), 5);   /* past the end: no hint */
	unsigned seen = 0;
	for (int i = 0; i < 5; i++)
		seen |= 1u << ((struct item *)out[i] - it);
	assert_int_equal(seen, 0x1f);
	rn_feed_free(&t);
}

static void test_leave_any_order(void **state)
{
	struct rn_feed_tab t = { 0 };
	struct item it[64];
	int cq;
	void *out[64];

	(void)state;
	for (int i = 0; i < 64; i++)
		assert_int_equal(rn_feed_add(&t, &cq, &it[i], &it[i].pos), 0);
	for (int i = 0; i < 64; i += 2)
		rn_feed_del(&t, &cq, atomic_load(&it[i].pos));
	unsigned n = take_all(&t, &cq, out, 64);
	assert_int_equal(n, 32);
	for (unsigned j = 0; j < n; j++)
		assert_int_equal(((struct item *)out[j] - it) % 2, 1);
	for (int i = 63; i > 0; i -= 2)
		rn_feed_del(&t, &cq, atomic_load(&it[i].pos));
	assert_int_equal(take_all(&t, &cq, out, 64), 0);
	/* the emptied CQ comes back (a new CQ at the same address) */
	assert_int_equal(rn_feed_add(&t, &cq, &it[0], &it[0].pos), 0);
	assert_int_equal(take_all(&t, &cq, out, 64), 1);
	assert_ptr_equal(out[0], &it[0]);
	rn_feed_free(&t);
}

/* 10,000 feeders over 3,000 CQs, CQs emptied and refilled: the table grows and drops its
 * tombstones, and every CQ still yields exactly its own feeders. */
#define NCQ 3000
#define NIT 10000
static void test_many_cqs(void **state)
{
	struct rn_feed_tab t = { 0 };
	static int cq[NCQ];
	static struct item it[NIT];
	void *out[16];

	(void)state;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < NIT; i++) {
			it[i].cq = (i * 7 + round) % NCQ;
			assert_int_equal(rn_feed_add(&t, &cq[it[i].cq], &it[i], &it[i].pos), 0);
		}
		for (int c = 0; c < NCQ; c += 97) {
			unsigned n = take_all(&t, &cq[c], out, 16);
			assert_true(n >= 3 && n <= 4);
			for (unsigned j = 0; j < n; j++)
				assert_int_equal(((struct item *)out[j])->cq, c);
		}
		for (int i = NIT - 1; i >= 0; i--)
			rn_feed_del(&t, &cq[it[i].cq], atomic_load(&it[i].pos));
		for (int c = 0; c < NCQ; c += 97)
			assert_int_equal(take_all(&t, &cq[c], out, 16), 0);
	}
	assert_true(t.cap <= 8192); /* tombstones were dropped, not piled up */
	rn_feed_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_turns),
		cmocka_unit_test(test_hint),
		cmocka_unit_test(test_leave_any_order),
		cmocka_unit_test(test_many_cqs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
