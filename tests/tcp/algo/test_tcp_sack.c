/* SACK: the receiver's block list (merging, most recent first, capacity, advance) and the
 * RFC 6675 scoreboard (bad blocks ignored, IsLost, pipe, NextSeg), also across the wrap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tcp_sack.h"
#include "tcp_seq.h"

#define SMSS 100u

static void assert_blk(const struct tcp_sack_block *b, uint32_t s, uint32_t e)
{
	assert_int_equal(b->start, s);
	assert_int_equal(b->end, e);
}

static void test_rcv_order_and_merge(void **state)
{
	(void)state;
	struct tcp_sack_rcv r;
	tcp_sack_rcv_init(&r);
	tcp_sack_rcv_add(&r, 200, 300);
	tcp_sack_rcv_add(&r, 400, 500);
	tcp_sack_rcv_add(&r, 600, 700);
	struct tcp_sack_block out[4];
	assert_int_equal(tcp_sack_rcv_blocks(&r, out, 4), 3);
	assert_blk(&out[0], 600, 700); /* most recent first (RFC 2018 4) */
	assert_blk(&out[1], 400, 500);
	assert_blk(&out[2], 200, 300);
	/* Filling the gap between two blocks merges all three into one at the front. */
	tcp_sack_rcv_add(&r, 300, 400);
	assert_int_equal(tcp_sack_rcv_blocks(&r, out, 4), 2);
	assert_blk(&out[0], 200, 500);
	assert_blk(&out[1], 600, 700);
	/* Overlap on one side, duplicate, empty segment. */
	tcp_sack_rcv_add(&r, 650, 750);
	tcp_sack_rcv_add(&r, 650, 750);
	tcp_sack_rcv_add(&r, 800, 800);
	assert_int_equal(tcp_sack_rcv_blocks(&r, out, 4), 2);
	assert_blk(&out[0], 600, 750);
	/* max limits the count (3 fit next to timestamps). */
	tcp_sack_rcv_add(&r, 900, 950);
	tcp_sack_rcv_add(&r, 1000, 1050);
	assert_int_equal(tcp_sack_rcv_blocks(&r, out, 3), 3);
	assert_blk(&out[0], 1000, 1050);
}

static void test_rcv_advance_and_capacity(void **state)
{
	(void)state;
	struct tcp_sack_rcv r;
	tcp_sack_rcv_init(&r);
	for (uint32_t i = 0; i < TCP_SACK_RCV_MAX + 4; i++)
		tcp_sack_rcv_add(&r, 1000 + 100 * i, 1050 + 100 * i);
	assert_int_equal(r.n, TCP_SACK_RCV_MAX);
	assert_blk(&r.blk[0], 1000 + 100 * (TCP_SACK_RCV_MAX + 3), 1050 + 100 * (TCP_SACK_RCV_MAX + 3));
	/* rcv_nxt moves into the middle: blocks below go, the one straddling is trimmed. */
	tcp_sack_rcv_advance(&r, 1000 + 100 * 10 + 25);
	for (unsigned i = 0; i < r.n; i++)
		assert_true(r.blk[i].start >= 1000 + 100 * 10 + 25);
	assert_int_equal(r.n, TCP_SACK_RCV_MAX + 4 - 10);
	tcp_sack_rcv_advance(&r, 100000);
	assert_int_equal(r.n, 0);
}

static void test_rcv_wrap(void **state)
{
	(void)state;
	struct tcp_sack_rcv r;
	tcp_sack_rcv_init(&r);
	tcp_sack_rcv_add(&r, 0xffffff00u, 0xffffff80u);
	tcp_sack_rcv_add(&r, 0xffffff80u, 0x80u);
	assert_int_equal(r.n, 1);
	assert_blk(&r.blk[0], 0xffffff00u, 0x80u);
	tcp_sack_rcv_advance(&r, 0x10u);
	assert_blk(&r.blk[0], 0x10u, 0x80u);
}

static void test_snd_update_validation(void **state)
{
	(void)state;
	struct tcp_sack_snd s;
	tcp_sack_snd_init(&s);
	assert_int_equal(s.dupthresh, 3);
	const struct tcp_sack_block bad[] = {
		{500, 400},   /* reversed */
		{500, 500},   /* empty */
		{900, 1200},  /* beyond snd_max */
		{50, 100},    /* D-SACK below snd_una */
		{0x80001000u, 0x80001100u}, /* nonsense far away */
	};
	assert_int_equal(tcp_sack_snd_update(&s, 100, 1000, bad, 5), 0);
	assert_int_equal(s.n, 0);
	const struct tcp_sack_block good[] = {{300, 400}, {600, 700}, {350, 450}};
	assert_int_equal(tcp_sack_snd_update(&s, 100, 1000, good, 3), 250);
	assert_int_equal(s.n, 2);
	assert_blk(&s.blk[0], 300, 450);
	assert_blk(&s.blk[1], 600, 700);
	/* Reported again: nothing new. Straddling snd_una: clipped. */
	assert_int_equal(tcp_sack_snd_update(&s, 100, 1000, good, 3), 0);
	const struct tcp_sack_block straddle[] = {{50, 150}};
	assert_int_equal(tcp_sack_snd_update(&s, 100, 1000, straddle, 1), 50);
	assert_blk(&s.blk[0], 100, 150);
	assert_true(tcp_sack_snd_is_sacked(&s, 120));
	assert_false(tcp_sack_snd_is_sacked(&s, 150));
	assert_int_equal(tcp_sack_snd_sacked_bytes(&s), 300);
	tcp_sack_snd_advance(&s, 400);
	assert_int_equal(s.n, 2);
	assert_blk(&s.blk[0], 400, 450);
	tcp_sack_snd_clear(&s);
	assert_int_equal(s.n, 0);
	assert_int_equal(s.dupthresh, 3);
}

static void test_snd_capacity(void **state)
{
	(void)state;
	struct tcp_sack_snd s;
	tcp_sack_snd_init(&s);
	for (uint32_t i = 0; i < TCP_SACK_SND_MAX + 5; i++) {
		struct tcp_sack_block b = {1000 + 20 * i, 1010 + 20 * i};
		tcp_sack_snd_update(&s, 0, 100000, &b, 1);
	}
	assert_int_equal(s.n, TCP_SACK_SND_MAX);
	for (unsigned i = 1; i < s.n; i++)
		assert_true(s.blk[i - 1].end < s.blk[i].start); /* sorted, disjoint */
	/* A low block still gets in (the highest is dropped). */
	struct tcp_sack_block low = {10, 20};
	tcp_sack_snd_update(&s, 0, 100000, &low, 1);
	assert_blk(&s.blk[0], 10, 20);
	assert_int_equal(s.n, TCP_SACK_SND_MAX);
}

/* Layout used below: snd_una 0, snd_max 1000, SMSS 100; the peer SACKed
 * [100,200) [300,400) [500,600) [700,800). */
static void scoreboard(struct tcp_sack_snd *s)
{
	tcp_sack_snd_init(s);
	const struct tcp_sack_block b[] = {{100, 200}, {300, 400}, {500, 600}, {700, 800}};
	assert_int_equal(tcp_sack_snd_update(s, 0, 1000, b, 4), 400);
}

static void test_is_lost(void **state)
{
	(void)state;
	struct tcp_sack_snd s;
	scoreboard(&s);
	assert_true(tcp_sack_snd_is_lost(&s, 0, SMSS));    /* 4 blocks above */
	assert_true(tcp_sack_snd_is_lost(&s, 250, SMSS));  /* 3 blocks above */
	/* 2 blocks, 200 octets above 450: not more than (3 - 1) * SMSS */
	assert_false(tcp_sack_snd_is_lost(&s, 450, SMSS));
	/* with a smaller SMSS the octet count decides */
	assert_true(tcp_sack_snd_is_lost(&s, 450, 99));
	assert_false(tcp_sack_snd_is_lost(&s, 900, SMSS));
}

static void test_pipe(void **state)
{
	(void)state;
	struct tcp_sack_snd s;
	scoreboard(&s);
	/* Holes [0,100) [200,300) lost; [400,500) [600,700) not lost; [800,1000) above the
	 * highest SACK: not lost. No retransmissions yet. */
	assert_int_equal(tcp_sack_snd_pipe(&s, 0, 1000, SMSS), 400);
	/* Retransmitted [0,100): counted again (once). */
	s.high_rxt = 100;
	assert_int_equal(tcp_sack_snd_pipe(&s, 0, 1000, SMSS), 500);
	/* No SACK at all: everything is in flight. */
	struct tcp_sack_snd e;
	tcp_sack_snd_init(&e);
	assert_int_equal(tcp_sack_snd_pipe(&e, 5000, 9000, SMSS), 4000);
	assert_int_equal(tcp_sack_snd_pipe(&e, 9000, 9000, SMSS), 0);
}

static void test_next_seg(void **state)
{
	(void)state;
	struct tcp_sack_snd s;
	scoreboard(&s);
	uint32_t seq, len;
	/* Rule 1: the first lost hole. */
	assert_true(tcp_sack_snd_next_seg(&s, 0, 1000, SMSS, &seq, &len));
	assert_int_equal(seq, 0);
	assert_int_equal(len, 100);
	s.high_rxt = 100;
	assert_true(tcp_sack_snd_next_seg(&s, 0, 1000, SMSS, &seq, &len));
	assert_int_equal(seq, 200);
	assert_int_equal(len, 100);
	/* Segment stops at the next SACKed octet and at SMSS. */
	s.high_rxt = 250;
	assert_true(tcp_sack_snd_next_seg(&s, 0, 1000, SMSS, &seq, &len));
	assert_int_equal(seq, 250);
	assert_int_equal(len, 50);
	/* Rule 3: nothing lost above HighRxt, but [400,500) has SACKed data above. */
	s.high_rxt = 300;
	assert_true(tcp_sack_snd_next_seg(&s, 0, 1000, SMSS, &seq, &len));
	assert_int_equal(seq, 400);
	/* Above the highest SACKed octet there is nothing to retransmit. */
	s.high_rxt = 800;
	assert_false(tcp_sack_snd_next_seg(&s, 0, 1000, SMSS, &seq, &len));
	/* A stale HighRxt (outside the window) is ignored. */
	s.high_rxt = 0xf0000000u;
	assert_true(tcp_sack_snd_next_seg(&s, 0, 1000, SMSS, &seq, &len));
	assert_int_equal(seq, 0);
}

static void test_wrap(void **state)
{
	(void)state;
	struct tcp_sack_snd s;
	tcp_sack_snd_init(&s);
	uint32_t una = 0xffffff00u, max = 0x300u;
	const struct tcp_sack_block b[] = {
		{0xffffff80u, 0x0u}, {0x80u, 0x100u}, {0x180u, 0x200u},
	};
	assert_int_equal(tcp_sack_snd_update(&s, una, max, b, 3), 0x180);
	assert_blk(&s.blk[0], 0xffffff80u, 0x0u);
	uint32_t seq, len;
	assert_true(tcp_sack_snd_next_seg(&s, una, max, 0x80, &seq, &len));
	assert_int_equal(seq, una);
	assert_int_equal(len, 0x80);
	tcp_sack_snd_advance(&s, 0x90u);
	assert_int_equal(s.n, 2);
	assert_blk(&s.blk[0], 0x90u, 0x100u);
}

/* ---- the scoreboard against a per-octet reference model (RFC 6675 section 4 literally) ---- */
#define RW 2000u   /* window in octets */
#define RSMSS 100u

struct ref {
	bool sacked[RW];
};

/* Runs of SACKed octets above offset o, and SACKed octets above it. */
static void ref_above(const struct ref *r, unsigned o, unsigned *runs, unsigned *octets)
{
	*runs = *octets = 0;
	for (unsigned k = o + 1; k < RW; k++) {
		if (!r->sacked[k])
			continue;
		(*octets)++;
		if (k == o + 1 || !r->sacked[k - 1])
			(*runs)++;
	}
}

static bool ref_lost(const struct ref *r, unsigned o)
{
	unsigned runs, octets;
	ref_above(r, o, &runs, &octets);
	return runs >= 3 || octets > 2 * RSMSS;
}

/* NextSeg rule 1, else rule 3, from offset floor: offset and length, false if none. */
static bool ref_next(const struct ref *r, unsigned floor, unsigned *seq, unsigned *len)
{
	for (int rule = 1; rule <= 3; rule += 2) {
		for (unsigned o = floor; o < RW; o++) {
			unsigned runs, octets;
			if (r->sacked[o])
				continue;
			ref_above(r, o, &runs, &octets);
			if (octets == 0)
				break; /* nothing SACKed above: neither rule applies further up */
			if (rule == 1 && !ref_lost(r, o))
				continue;
			unsigned n = 0;
			while (o + n < RW && !r->sacked[o + n] && n < RSMSS)
				n++;
			*seq = o;
			*len = n;
			return true;
		}
	}
	return false;
}

static void test_against_reference(void **state)
{
	(void)state;
	srand(2018);
	for (int trial = 0; trial < 300; trial++) {
		/* half the trials straddle the 2^32 wrap */
		uint32_t una = (trial & 1) ? 0xffffffffu - (uint32_t)(rand() % 3000) : (uint32_t)rand();
		uint32_t max = una + RW;
		struct tcp_sack_snd s;
		struct ref r = {{0}};
		tcp_sack_snd_init(&s);
		unsigned nblk = 1 + (unsigned)rand() % 8;
		for (unsigned b = 0; b < nblk; b++) {
			/* mostly valid blocks, some reaching outside the window */
			int lo = rand() % (int)(RW + 400) - 200, hi = lo + 1 + rand() % 300;
			struct tcp_sack_block blk = {una + (uint32_t)lo, una + (uint32_t)hi};
			unsigned newly = 0;
			bool valid = hi > 0 && hi <= (int)RW;
			if (valid)
				for (int k = lo < 0 ? 0 : lo; k < hi; k++)
					if (!r.sacked[k]) {
						r.sacked[k] = true;
						newly++;
					}
			assert_int_equal(tcp_sack_snd_update(&s, una, max, &blk, 1), newly);
		}
		s.high_rxt = una + (uint32_t)(rand() % (int)RW);
		unsigned mark = s.high_rxt - una;
		uint32_t pipe = 0;
		for (unsigned o = 0; o < RW; o++) {
			assert_int_equal(tcp_sack_snd_is_sacked(&s, una + o), r.sacked[o]);
			if (r.sacked[o])
				continue;
			assert_int_equal(tcp_sack_snd_is_lost(&s, una + o, RSMSS), ref_lost(&r, o));
			pipe += !ref_lost(&r, o) + (o < mark);
		}
		assert_int_equal(tcp_sack_snd_pipe(&s, una, max, RSMSS), pipe);
		uint32_t seq = 0, len = 0;
		unsigned rseq = 0, rlen = 0;
		bool got = tcp_sack_snd_next_seg(&s, una, max, RSMSS, &seq, &len);
		bool want = ref_next(&r, mark, &rseq, &rlen);
		assert_int_equal(got, want);
		if (got) {
			assert_int_equal(seq - una, rseq);
			assert_int_equal(len, rlen);
		}
		/* The window moves: what remains SACKed above the new una is unchanged. */
		unsigned adv = (unsigned)rand() % RW;
		tcp_sack_snd_advance(&s, una + adv);
		for (unsigned o = adv; o < RW; o++)
			assert_int_equal(tcp_sack_snd_is_sacked(&s, una + o), r.sacked[o]);
		for (unsigned i = 0; i < s.n; i++)
			assert_true(seq_geq(s.blk[i].start, una + adv));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rcv_order_and_merge),
		cmocka_unit_test(test_rcv_advance_and_capacity),
		cmocka_unit_test(test_rcv_wrap),
		cmocka_unit_test(test_snd_update_validation),
		cmocka_unit_test(test_snd_capacity),
		cmocka_unit_test(test_is_lost),
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_next_seg),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_against_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
