/* CRC32c unit tests: RFC 3720 B.4 vectors, the dispatched fast path against the table and a
 * bitwise reference at every length and misalignment, incremental updates, and the fused copy;
 * then every implementation this CPU can run (crc32c_impl.h), not only the dispatched one, at
 * every block and crossover boundary up to ~1 MiB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "crc32c_impl.h"
#include "mpa_crc32c.h"

#define MAXLEN 4096
/* Pieces in the chaining test straddle this many bytes, the hybrid block of the AVX-512 path. */
#define CRC32C_BLOCK_FOR_CHAIN 7936
#define GUARD 64
#define GUARD_BYTE 0xA5

/* xorshift64: deterministic, so a failure reproduces. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint8_t rng_byte(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint8_t)(rng_state >> 32);
}

static void fill_random(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = rng_byte();
}

/* Bit-at-a-time CRC32c: shares no code or table with the library, so it checks the table. */
static uint32_t ref_crc32c(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xFFFFFFFFu;

	while (len--) {
		crc ^= *p++;
		for (int bit = 0; bit < 8; bit++)
			crc = (crc & 1u) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return crc ^ 0xFFFFFFFFu;
}

static uint32_t table_crc(const void *p, size_t len)
{
	return mpa_crc32c_final(mpa_crc32c_update_table(MPA_CRC32C_INIT, p, len));
}

/* Both implementations must give the published value. */
static void expect_vector(const uint8_t *buf, size_t len, uint32_t want)
{
	assert_int_equal(mpa_crc32c(buf, len), want);
	assert_int_equal(table_crc(buf, len), want);
	assert_int_equal(ref_crc32c(buf, len), want);
}

/* RFC 3720 Appendix B.4 prints the CRC as the bytes sent on the wire ("aa 36 91 8a"); that is
 * the register value stored little-endian, hence the reversed hex below. */
static void test_rfc3720_vectors(void **state)
{
	uint8_t buf[48];

	(void)state;
	memset(buf, 0x00, 32);
	expect_vector(buf, 32, 0x8A9136AAu);
	memset(buf, 0xFF, 32);
	expect_vector(buf, 32, 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	expect_vector(buf, 32, 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	expect_vector(buf, 32, 0x113FDB5Cu);

	/* iSCSI SCSI Read (10) command PDU, 48 bytes. */
	static const uint8_t pdu[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	expect_vector(pdu, sizeof(pdu), 0xD9963A56u);
}

static void test_check_value_and_empty(void **state)
{
	(void)state;
	expect_vector((const uint8_t *)"123456789", 9, 0xE3069283u);
	/* Empty input leaves the register alone. */
	assert_int_equal(mpa_crc32c_update(0x12345678u, "", 0), 0x12345678u);
	assert_int_equal(mpa_crc32c_update_table(0x12345678u, "", 0), 0x12345678u);
	assert_int_equal(mpa_crc32c("", 0), 0);
}

/* The dispatcher must pick the fastest path the CPU has, or the comparisons below would
 * only be testing a slow path (or the table against itself). The expectation comes from
 * the CPU flags here, independently of the implementations' own checks. */
static void test_dispatch_picks_fast_path(void **state)
{
	const char *name = mpa_crc32c_impl_name();

	(void)state;
	assert_non_null(name);
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq") &&
	    __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2"))
		assert_string_equal(name, "vpclmul-avx512");
	else if (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul"))
		assert_string_equal(name, "sse42-3way");
	else
		assert_string_equal(name, "table");
#else
	assert_string_equal(name, "table");
#endif
	/* And it is the first usable entry of the list the per-implementation tests walk. */
	for (size_t i = 0; i < crc32c_nimpls; i++) {
		if (crc32c_impls[i].usable()) {
			assert_string_equal(name, crc32c_impls[i].name);
			break;
		}
	}
	print_message("crc32c implementation: %s\n", name);
}

/* Every length 0..4096 at every start offset 0..7: covers each block tier boundary and every
 * tail length. The table is also held to the bitwise reference on one offset per length. */
static void test_fast_vs_table_every_length(void **state)
{
	uint8_t *buf = malloc(MAXLEN + 8);

	(void)state;
	assert_non_null(buf);
	fill_random(buf, MAXLEN + 8);
	for (size_t len = 0; len <= MAXLEN; len++) {
		for (size_t off = 0; off < 8; off++) {
			uint32_t t = mpa_crc32c_update_table(MPA_CRC32C_INIT, buf + off, len);
			uint32_t f = mpa_crc32c_update(MPA_CRC32C_INIT, buf + off, len);

			if (t != f)
				fail_msg("len %zu off %zu: fast %08x table %08x", len, off, f, t);
		}
		assert_int_equal(table_crc(buf + len % 8, len), ref_crc32c(buf + len % 8, len));
	}
	free(buf);
}

/* Lengths past 4096 reach the largest block tier (3 x 2048) and mixes of all tiers. */
static void test_fast_vs_table_long(void **state)
{
	static const size_t lens[] = { 6143, 6144, 6145, 6144 + 768 + 96 + 7, 12288, 65536, 65536 + 13,
				       100003 };
	size_t max = 100003 + 8;
	uint8_t *buf = malloc(max);

	(void)state;
	assert_non_null(buf);
	fill_random(buf, max);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (size_t off = 0; off < 8; off++)
			assert_int_equal(mpa_crc32c_update(MPA_CRC32C_INIT, buf + off, lens[i]),
					 mpa_crc32c_update_table(MPA_CRC32C_INIT, buf + off, lens[i]));
	assert_int_equal(table_crc(buf, 65536), ref_crc32c(buf, 65536));
	free(buf);
}

/* A single flipped bit anywhere must change the CRC (CRCs detect all 1-bit errors). */
static void test_single_bit_flip_detected(void **state)
{
	uint8_t buf[7000];

	(void)state;
	fill_random(buf, sizeof(buf));
	uint32_t good = mpa_crc32c(buf, sizeof(buf));
	for (size_t pos = 0; pos < sizeof(buf); pos += 37) {
		buf[pos] ^= (uint8_t)(1u << (pos % 8));
		assert_int_not_equal(mpa_crc32c(buf, sizeof(buf)), good);
		buf[pos] ^= (uint8_t)(1u << (pos % 8));
	}
	assert_int_equal(mpa_crc32c(buf, sizeof(buf)), good);
}

/* Feeding a buffer in pieces must equal one pass, for every split point. */
static void test_incremental_split(void **state)
{
	enum { N = 2000 };
	uint8_t buf[N + 1];

	(void)state;
	fill_random(buf, sizeof(buf));
	const uint8_t *p = buf + 1; /* odd start so pieces are misaligned too */
	uint32_t whole = mpa_crc32c_update(MPA_CRC32C_INIT, p, N);
	assert_int_equal(whole, mpa_crc32c_update_table(MPA_CRC32C_INIT, p, N));
	for (size_t split = 0; split <= N; split++) {
		uint32_t c = mpa_crc32c_update(MPA_CRC32C_INIT, p, split);

		assert_int_equal(mpa_crc32c_update(c, p + split, N - split), whole);
		c = mpa_crc32c_update_table(MPA_CRC32C_INIT, p, split);
		assert_int_equal(mpa_crc32c_update_table(c, p + split, N - split), whole);
	}
	/* Random many-piece splits, mixing the fast path and the table mid-stream. */
	for (int round = 0; round < 200; round++) {
		uint32_t c = MPA_CRC32C_INIT;
		size_t at = 0;

		while (at < N) {
			size_t piece = rng_byte() % 700;

			if (piece > N - at)
				piece = N - at;
			c = (round & 1) ? mpa_crc32c_update_table(c, p + at, piece)
					: mpa_crc32c_update(c, p + at, piece);
			at += piece;
		}
		assert_int_equal(c, whole);
	}
}

static void check_copy_fn(crc32c_copy_fn fn, const uint8_t *src, size_t len, size_t dst_off,
			  uint8_t *arena)
{
	size_t span = GUARD + 8 + len + GUARD;
	uint8_t *dst = arena + GUARD + dst_off;

	memset(arena, GUARD_BYTE, span);
	uint32_t c = fn(MPA_CRC32C_INIT, dst, src, len);
	if (c != mpa_crc32c_update_table(MPA_CRC32C_INIT, src, len))
		fail_msg("copy len %zu dst_off %zu: wrong crc", len, dst_off);
	if (len && memcmp(dst, src, len) != 0)
		fail_msg("copy len %zu dst_off %zu: wrong bytes", len, dst_off);
	for (uint8_t *g = arena; g < dst; g++)
		if (*g != GUARD_BYTE)
			fail_msg("copy len %zu dst_off %zu: wrote before dst", len, dst_off);
	for (uint8_t *g = dst + len; g < arena + span; g++)
		if (*g != GUARD_BYTE)
			fail_msg("copy len %zu dst_off %zu: wrote past dst+len", len, dst_off);
}

static void check_copy(const uint8_t *src, size_t len, size_t dst_off, uint8_t *arena)
{
	check_copy_fn(mpa_crc32c_copy, src, len, dst_off, arena);
}

/* Every length 0..4096 with varying src/dst misalignment, all 64 offset pairs on a few lengths,
 * and the long tiers. */
static void test_copy(void **state)
{
	enum { LONG = 65536 + 13 };
	uint8_t *src = malloc(LONG + 8);
	uint8_t *arena = malloc(GUARD + 8 + LONG + GUARD);

	(void)state;
	assert_non_null(src);
	assert_non_null(arena);
	fill_random(src, LONG + 8);
	for (size_t len = 0; len <= MAXLEN; len++)
		check_copy(src + len % 8, len, (len * 3 + 1) % 8, arena);
	static const size_t some[] = { 1, 7, 8, 95, 96, 97, 767, 768, 1000, 6144, 6151 };
	for (size_t i = 0; i < sizeof(some) / sizeof(some[0]); i++)
		for (size_t so = 0; so < 8; so++)
			for (size_t d = 0; d < 8; d++)
				check_copy(src + so, some[i], d, arena);
	check_copy(src + 3, LONG, 5, arena);
	free(arena);
	free(src);
}

/* The fused copy must also chain: copy in pieces equals one pass, and continues a register
 * produced by mpa_crc32c_update. */
static void test_copy_incremental(void **state)
{
	enum { N = 9000 };
	uint8_t *src = malloc(N), *dst = malloc(N);

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	fill_random(src, N);
	uint32_t whole = mpa_crc32c_update(MPA_CRC32C_INIT, src, N);
	for (size_t split = 0; split <= N; split += 97) {
		memset(dst, 0, N);
		uint32_t c = mpa_crc32c_update(MPA_CRC32C_INIT, src, split);

		memcpy(dst, src, split);
		c = mpa_crc32c_copy(c, dst + split, src + split, N - split);
		assert_int_equal(c, whole);
		assert_memory_equal(dst, src, N);
	}
	free(dst);
	free(src);
}

/* ---------------------------------------------------------------------------------------- */
/* Every implementation the CPU can run, called directly                                    */

/* x^n mod P against n single multiplications by x. */
static void test_xpow_mod(void **state)
{
	uint32_t v = 0x80000000u; /* 1 */

	(void)state;
	for (uint64_t n = 0; n <= 70000; n++) {
		if (n <= 300 || n % 997 == 0)
			assert_int_equal(crc32c_xpow_mod(n), v);
		v = (v >> 1) ^ (0x82F63B78u & (0u - (v & 1u)));
	}
	assert_int_equal(crc32c_xpow_mod(32), 0x82F63B78u); /* x^32 = P - x^32 */
}

/* Lengths that sit on or next to a boundary of some implementation: the folding crossover,
 * whole zmm / xmm steps, the hybrid block and its multiples up to ~1 MiB, the SSE4.2 tiers. */
static size_t boundary_lens(size_t *out, size_t max)
{
	static const size_t bases[] = { 64, 96, 192, 256, 768, 6144,
#if defined(__x86_64__)
					CRC32C_VPCLMUL_MIN, CRC32C_VPCLMUL_BLOCK,
					2 * CRC32C_VPCLMUL_BLOCK, 3 * CRC32C_VPCLMUL_BLOCK,
					8 * CRC32C_VPCLMUL_BLOCK, 132 * CRC32C_VPCLMUL_BLOCK,
#endif
					65536, 1u << 20 };
	static const long deltas[] = { -257, -256, -255, -65, -64, -63, -17, -16, -15, -8, -1,
				       0, 1, 7, 15, 16, 17, 63, 64, 65, 255, 256, 257, 2048 + 13 };
	size_t n = 0;

	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++) {
			long len = (long)bases[b] + deltas[d];

			if (len >= 0 && (size_t)len <= max)
				out[n++] = (size_t)len;
		}
	return n;
}

#define BIG ((1u << 20) + 4096)

/* Every length 0..4096 at offsets 0..7 from a random register, then the boundary lengths. */
static void check_impl_update(const struct crc32c_impl *im, const uint8_t *buf)
{
	static size_t lens[512];
	size_t nl = boundary_lens(lens, BIG - 8);

	for (size_t len = 0; len <= MAXLEN; len++)
		for (size_t off = 0; off < 8; off++) {
			uint32_t init = (uint32_t)(len * 2654435761u) ^ (uint32_t)off;
			uint32_t t = mpa_crc32c_update_table(init, buf + off, len);
			uint32_t f = im->update(init, buf + off, len);

			if (t != f)
				fail_msg("%s len %zu off %zu: %08x table %08x", im->name, len, off, f, t);
		}
	for (size_t i = 0; i < nl; i++)
		for (size_t off = 0; off < 8; off += 3) {
			uint32_t t = mpa_crc32c_update_table(MPA_CRC32C_INIT, buf + off, lens[i]);
			uint32_t f = im->update(MPA_CRC32C_INIT, buf + off, lens[i]);

			if (t != f)
				fail_msg("%s len %zu off %zu: %08x table %08x", im->name, lens[i], off, f, t);
		}
}

static void check_impl_copy(const struct crc32c_impl *im, const uint8_t *src, uint8_t *arena)
{
	static size_t lens[512];
	size_t nl = boundary_lens(lens, BIG - 8);

	for (size_t len = 0; len <= MAXLEN; len++)
		check_copy_fn(im->copy, src + len % 8, len, (len * 3 + 1) % 8, arena);
	for (size_t i = 0; i < nl; i++)
		check_copy_fn(im->copy, src + i % 8, lens[i], (i * 5 + 3) % 8, arena);
}

/* Chaining across calls that end on and off block boundaries, update and copy mixed. */
static void check_impl_chain(const struct crc32c_impl *im, const uint8_t *buf, uint8_t *dst)
{
	enum { N = 5 * CRC32C_BLOCK_FOR_CHAIN };
	uint32_t whole = mpa_crc32c_update_table(MPA_CRC32C_INIT, buf, N);

	for (int round = 0; round < 40; round++) {
		uint32_t c = MPA_CRC32C_INIT;
		size_t at = 0;

		while (at < N) {
			size_t piece = round < 20 ? (size_t)(rng_byte() * 97 + rng_byte()) : (size_t)(CRC32C_BLOCK_FOR_CHAIN + round);

			if (piece > N - at)
				piece = N - at;
			c = (at & 1) ? im->copy(c, dst + at, buf + at, piece) : im->update(c, buf + at, piece);
			at += piece;
		}
		assert_int_equal(c, whole);
	}
}

static void test_each_impl(void **state)
{
	uint8_t *buf = malloc(BIG), *arena = malloc(GUARD + 8 + BIG + GUARD);
	size_t ran = 0;

	(void)state;
	assert_non_null(buf);
	assert_non_null(arena);
	fill_random(buf, BIG);
	for (size_t i = 0; i < crc32c_nimpls; i++) {
		const struct crc32c_impl *im = &crc32c_impls[i];

		if (!im->usable()) {
			print_message("crc32c %s: not usable on this CPU, skipped\n", im->name);
			continue;
		}
		check_impl_update(im, buf);
		check_impl_copy(im, buf, arena);
		check_impl_chain(im, buf, arena);
		print_message("crc32c %s: checked\n", im->name);
		ran++;
	}
	assert_true(ran >= 1); /* the table at least */
	free(arena);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc3720_vectors),
		cmocka_unit_test(test_check_value_and_empty),
		cmocka_unit_test(test_dispatch_picks_fast_path),
		cmocka_unit_test(test_fast_vs_table_every_length),
		cmocka_unit_test(test_fast_vs_table_long),
		cmocka_unit_test(test_single_bit_flip_detected),
		cmocka_unit_test(test_incremental_split),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_copy_incremental),
		cmocka_unit_test(test_xpow_mod),
		cmocka_unit_test(test_each_impl),
	};

	return cmocka_run_group_tests_name("mpa_crc32c", tests, NULL, NULL);
}
