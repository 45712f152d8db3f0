/* TCP engine, mixed sends (tcp_send_ref): records whose headers and trailers are copied and
 * whose payload is referenced, under loss; the referenced memory held until acknowledged
 * and the copied parts not held at all; tcp_stack_zc_unref copying out what a
 * deregistration takes away, and resetting a connection it cannot copy for. Two stacks,
 * virtual clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mbuf.h>

#include "tcp_int.h"
#include "tcp_fixture.h"

#define MS 1000000ull
#define SEC 1000000000ull

#define MEM_LEN (1u << 20)
#define BATCH 8u /* records per tcp_send_ref */

static size_t rec_len(const uint8_t h[2])
{
	return (size_t)((h[0] << 8) | h[1]);
}

/* Drops data segments A sends whose ordinal is in which[]; block_a / block_b: every data
 * segment A sends / every segment B sends. */
struct loss {
	unsigned seen, n, which[8];
	bool block_a, block_b;
};

static enum pair_action lose(void *arg, const struct pair_seg *s, unsigned n)
{
	struct loss *l = arg;

	(void)n;
	if (s->dir == PAIR_B)
		return l->block_b ? PAIR_DROP : PAIR_PASS;
	if (!s->len)
		return PAIR_PASS;
	if (l->block_a)
		return PAIR_DROP;
	l->seen++;
	for (unsigned i = 0; i < l->n; i++)
		if (l->which[i] == l->seen)
			return PAIR_DROP;
	return PAIR_PASS;
}

/* A sender of records [2-octet length | payload | 2-octet trailer]: the payload lies in mem
 * (referenced), the length and the trailer in scratch (copied; scribbled after each call). */
struct ref_tx {
	uint8_t *mem, *expect;
	size_t mem_off, exp_len, sent_len;
	uint8_t scratch[BATCH][4];
	unsigned batches;
};

static void ref_tx_init(struct ref_tx *t)
{
	t->mem = malloc(MEM_LEN);
	t->expect = malloc(2 * MEM_LEN);
	assert_non_null(t->mem);
	assert_non_null(t->expect);
	for (size_t i = 0; i < MEM_LEN; i++)
		t->mem[i] = (uint8_t)(i * 7 + (i >> 9));
	t->mem_off = t->exp_len = t->sent_len = 0;
	t->batches = 0;
}

static void ref_tx_fini(struct ref_tx *t)
{
	free(t->mem);
	free(t->expect);
}

/* One tcp_send_ref of up to BATCH records with payloads of 100..3099 octets (some above the
 * MSS); returns its result. On success the accepted records join the expected stream. */
static ssize_t ref_tx_batch(struct ref_tx *t, struct tcp_conn *c)
{
	struct iovec iov[3 * BATCH];
	bool ref[3 * BATCH];
	size_t plen[BATCH], off = t->mem_off, done = 0;
	bool held = true;
	unsigned k, cnt = 0;
	ssize_t r;

	for (k = 0; k < BATCH; k++) {
		size_t p = 100 + (size_t)rand() % 3000, rl = p + 4;

		if (off + p > MEM_LEN)
			break;
		plen[k] = p;
		t->scratch[k][0] = (uint8_t)(rl >> 8);
		t->scratch[k][1] = (uint8_t)rl;
		t->scratch[k][2] = (uint8_t)k;
		t->scratch[k][3] = 0xa5;
		iov[cnt] = (struct iovec){ t->scratch[k], 2 };
		ref[cnt++] = false;
		iov[cnt] = (struct iovec){ t->mem + off, p };
		ref[cnt++] = true;
		iov[cnt] = (struct iovec){ t->scratch[k] + 2, 2 };
		ref[cnt++] = false;
		off += p;
	}
	if (k == 0)
		return 0;
	r = tcp_send_ref(c, iov, cnt, ref, (void *)(uintptr_t)(t->batches + 1), &held);
	assert_true(held == (r > 0));
	if (r > 0) {
		/* whole records only; copy what was taken into the expected stream */
		for (unsigned j = 0; j < k && done < (size_t)r; j++) {
			memcpy(t->expect + t->exp_len, t->scratch[j], 2);
			memcpy(t->expect + t->exp_len + 2, t->mem + t->mem_off, plen[j]);
			memcpy(t->expect + t->exp_len + 2 + plen[j], t->scratch[j] + 2, 2);
			t->exp_len += plen[j] + 4;
			t->mem_off += plen[j];
			done += plen[j] + 4;
		}
		assert_int_equal(done, (size_t)r);
		t->batches++;
	}
	memset(t->scratch, 0xee, sizeof(t->scratch)); /* copied: never read again */
	return r;
}

/* A and B connected, A in record mode sending through l's losses, t ready. */
static void ref_setup(struct pair_ep *a, struct pair_ep *b, struct ref_tx *t, struct loss *l,
		      unsigned seed)
{
	srand(seed);
	ref_tx_init(t);
	pair_established(a, b);
	tcp_conn_set_records(a->c, rec_len);
	P.filter = lose;
	P.filter_arg = l;
}

/* Records under loss: every octet arrives as sent, the referenced memory is released in
 * send order only after it was acknowledged, and the copied parts were never referenced. */
static void test_send_ref_records(void **state)
{
	struct pair_ep a, b;
	struct loss l = { .n = 4, .which = { 3, 40, 41, 200 } };
	struct ref_tx t;
	struct tcp_stack_cfg cfg;
	unsigned calls = 0;

	(void)state;
	pair_cfg_default(&cfg);
	cfg.snd_buf = 64u << 10;
	pair_fini(&P);
	pair_init(&P, &cfg, NULL, 5000000000ull);
	ref_setup(&a, &b, &t, &l, 11);
	while ((b.rx_len < t.exp_len || t.mem_off + 3100 < MEM_LEN / 2) && P.now_ns < 120 * SEC) {
		while (t.mem_off + 3100 < MEM_LEN / 2) {
			ssize_t r = ref_tx_batch(&t, a.c);

			calls++;
			if (r <= 0) {
				assert_int_equal(r, -EAGAIN);
				break;
			}
		}
		/* nothing released beyond what B acknowledged */
		assert_true(a.nzc <= t.batches);
		tcp_stack_flush(P.st[0]);
		pair_advance(&P, 1 * MS, 1 * MS);
	}
	pair_advance(&P, 50 * MS, 1 * MS);
	assert_int_equal(b.rx_len, t.exp_len);
	assert_memory_equal(b.rx, t.expect, t.exp_len);
	assert_int_equal(a.nzc, t.batches);
	assert_int_equal(a.zc_errs, 0); /* every one acknowledged, in send order */
	assert_ptr_equal(a.zc_last, (void *)(uintptr_t)t.batches);
	assert_true(calls > t.batches); /* the send buffer filled: -EAGAIN was seen */
	pair_ep_fini(&a);
	pair_ep_fini(&b);
	ref_tx_fini(&t);
}

/* The memory is held until the ACK: with A's transmissions lost, no completion.
 * tcp_stack_zc_unref copies the queued payload out: the completion follows at once (err 0:
 * delivered like tcp_send's), the memory may change, and the retransmissions, the only
 * transmissions that reach B, carry the copies. */
static void test_send_ref_unref(void **state)
{
	struct pair_ep a, b;
	struct loss l = { .block_a = true };
	struct ref_tx t;

	(void)state;
	ref_setup(&a, &b, &t, &l, 12);
	assert_true(ref_tx_batch(&t, a.c) > 0);
	tcp_stack_flush(P.st[0]);
	pair_advance(&P, 20 * MS, 1 * MS);
	assert_int_equal(a.nzc, 0);
	assert_int_equal(tcp_stack_zc_unref(P.st[0]), 0);
	assert_int_equal(a.nzc, 1);
	assert_int_equal(a.zc_err[0], 0);
	memset(t.mem, 0x5a, MEM_LEN); /* deregistered and reused */
	l.block_a = false;
	pair_advance(&P, 10 * SEC, 1 * MS);
	assert_int_equal(b.rx_len, t.exp_len);
	assert_memory_equal(b.rx, t.expect, t.exp_len);
	assert_true(tcp_conn_state(a.c) == TCP_ESTABLISHED);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
	ref_tx_fini(&t);
}

/* With the pool empty unref cannot copy: the connection is reset (on_closed(-ENOBUFS)), the
 * memory released, and the peer sees the RST. */
static void test_send_ref_unref_no_mbufs(void **state)
{
	struct pair_ep a, b;
	struct loss l = { .block_b = true };
	struct ref_tx t;
	struct rte_mbuf **hog = calloc(32768, sizeof(*hog));
	unsigned nh = 0;

	(void)state;
	ref_setup(&a, &b, &t, &l, 14);
	assert_true(ref_tx_batch(&t, a.c) > 0);
	tcp_stack_flush(P.st[0]);
	pair_advance(&P, 5 * MS, 1 * MS);
	assert_non_null(hog);
	while (nh < 32768 && (hog[nh] = rte_pktmbuf_alloc(pair_pool())) != NULL)
		nh++;
	assert_true(nh < 32768);
	assert_int_equal(tcp_stack_zc_unref(P.st[0]), 1);
	assert_true(a.closed);
	assert_int_equal(a.close_err, -ENOBUFS);
	assert_int_equal(a.nzc, 1);
	assert_int_not_equal(a.zc_err[0], 0);
	rte_pktmbuf_free_bulk(hog, nh);
	free(hog);
	l.block_b = false;
	{
		/* the RST found no mbuf either: B's next segment draws one */
		uint8_t x[10] = { 0 };
		struct iovec iov = { x, sizeof(x) };

		assert_int_equal(tcp_send(b.c, &iov, 1), 10);
	}
	pair_advance(&P, 100 * MS, 1 * MS);
	assert_true(b.closed);
	assert_int_equal(b.close_err, -ECONNRESET);
	pair_ep_fini(&a);
	pair_ep_fini(&b);
	ref_tx_fini(&t);
}

/* Bad calls: a missing ref array, an incomplete record; no referenced octet: a plain copy. */
static void test_send_ref_args(void **state)
{
	struct pair_ep a, b;
	uint8_t rec[8] = { 0, 8, 1, 2, 3, 4, 5, 6 };
	struct iovec iov[2] = { { rec, 2 }, { rec + 2, 6 } };
	bool ref[2] = { false, false };

	(void)state;
	pair_established(&a, &b);
	tcp_conn_set_records(a.c, rec_len);
	bool held = true;

	assert_int_equal(tcp_send_ref(a.c, iov, 2, NULL, NULL, &held), -EINVAL);
	assert_false(held);
	iov[1].iov_len = 5;
	assert_int_equal(tcp_send_ref(a.c, iov, 2, ref, NULL, NULL), -EINVAL);
	iov[1].iov_len = 6;
	held = true;
	assert_int_equal(tcp_send_ref(a.c, iov, 2, ref, NULL, &held), 8);
	assert_false(held);
	memset(rec, 0, sizeof(rec));
	pair_advance(&P, 50 * MS, 1 * MS);
	assert_int_equal(b.rx_len, 8);
	assert_int_equal(b.rx[1], 8);
	assert_int_equal(b.rx[7], 6);
	assert_int_equal(a.nzc, 0); /* nothing was referenced: no completion */
	pair_ep_fini(&a);
	pair_ep_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_ref_records, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_send_ref_unref, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_send_ref_unref_no_mbufs, pair_fixture_setup,
						pair_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_send_ref_args, pair_fixture_setup,
						pair_fixture_teardown),
	};

	if (pair_eal_init("test_tcp_send_ref"))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
