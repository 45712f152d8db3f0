/* CRC32c by carry-less folding over 512-bit vectors (AVX-512 + VPCLMULQDQ).
 *
 * The technique of Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ":
 * a 128-bit lane r = h*x^64 + l that stands d bits before later data is replaced by
 * h*(x^(64+d) mod P) ^ l*(x^d mod P), which is congruent mod P, no wider than 96 bits, and
 * lines up with the data d bits on, so it is simply XORed into it. Nothing is reduced mod P
 * until the end, when the last 128-bit lane is fed through two crc32q (which multiply by
 * x^32 and reduce, exactly what a CRC of those 16 bytes from register 0 does).
 *
 * Vector loop: four zmm accumulators, 256 bytes per iteration, each lane folded by 2048 bits.
 * One fold is 2 vpclmulqdq + 1 vpternlogq (3-way XOR): the four independent chains hide the
 * multiply latency. Long buffers go through hybrid blocks that run six crc32q chains next to
 * the vector loop (see k_hyb); the rest through the vector loop alone, then 16-byte folds,
 * then the SSE4.2 path for the last < 16 bytes and for buffers under CRC32C_VPCLMUL_MIN.
 * Where a register enters the vector loop it is XORed into the first 4 bytes, which turns
 * "register c, then message M" into "register 0, then M with c added at its start".
 * All constants are x^n mod P from crc32c_xpow_mod(), computed at start-up.
 */
#include <pthread.h>
#include <string.h>

#include "crc32c_impl.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

#define VP_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,vpclmulqdq,pclmul,sse4.2")))
#define VP_INLINE static inline __attribute__((always_inline)) VP_TARGET

/* Fold distances, in bits: 256 bytes (main loop), 128 and 64 bytes (merging the four
 * accumulators; 64 bytes also for one zmm at a time), 16 bytes (one xmm at a time).
 * k_lanes folds the four lanes of one zmm onto its last: 48, 32 and 16 bytes, then zero. */
static uint64_t k_d2048[2], k_d1024[2], k_d512[2], k_d128[2];
static uint64_t k_lanes[8];

/* Hybrid blocks: the multiplier issues one zmm vpclmulqdq every other cycle, while the crc32
 * unit sits idle and can retire two crc32q per cycle; each unit alone reaches about the
 * same throughput. A block therefore runs HS crc32q chains
 * over HR bytes each, then the vector fold over HV bytes, all in one loop so both units
 * work at once, and merges the results as crc32c_sse42.c merges its streams:
 *     crc' = crc * x^(8 HBLK) ^ sum_s c_s * x^(8 (HBLK - (s+1) HR)) ^ crc(vector part)
 * with every register but the caller's starting from 0, so no block waits on the previous
 * one. Per iteration 256 vector bytes take ~16 cycles of multiplier time and HS * HSTEP
 * scalar bytes 15 cycles of crc32 time. */
#define HS 6
#define HSTEP 40
#define HNIT 16
#define HR (HSTEP * HNIT)
#define HV (256 * HNIT)
#define HBLK (HS * HR + HV)
_Static_assert(HBLK == CRC32C_VPCLMUL_BLOCK, "crc32c_impl.h tells the tests the block size");
_Static_assert(CRC32C_VPCLMUL_MIN >= 64, "fold_rest needs one whole zmm");
/* k_hyb[s] = x^(8 d - 33), d = bytes after stream s to the block end; k_hyb[HS] for the
 * caller's register (d = HBLK). The -33: see crc_shift(). */
static uint64_t k_hyb[HS + 1];
static pthread_once_t vp_once = PTHREAD_ONCE_INIT;

static void vp_init(void)
{
	crc32c_fold_consts(2048, k_d2048);
	crc32c_fold_consts(1024, k_d1024);
	crc32c_fold_consts(512, k_d512);
	crc32c_fold_consts(128, k_d128);
	for (int lane = 0; lane < 3; lane++)
		crc32c_fold_consts(128 * (uint64_t)(3 - lane), &k_lanes[2 * lane]);
	for (int st = 0; st < HS; st++)
		k_hyb[st] = crc32c_xpow_mod(8 * (uint64_t)(HBLK - (st + 1) * HR) - 33);
	k_hyb[HS] = crc32c_xpow_mod(8 * (uint64_t)HBLK - 33);
}

/* The OS must save the opmask and all zmm state (XCR0 bits 1, 2, 5, 6, 7) or AVX-512
 * instructions fault or lose state on a context switch; CPUID alone does not tell. */
static bool os_saves_zmm(void)
{
	unsigned a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return false;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	(void)hi;
	return (lo & 0xE6u) == 0xE6u;
}

bool crc32c_vpclmul_usable(void)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
	    !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("vpclmulqdq") ||
	    !__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse4.2") ||
	    !os_saves_zmm() || !crc32c_sse42_usable())
		return false;
	pthread_once(&vp_once, vp_init);
	return true;
}

VP_INLINE __m512i bcast(const uint64_t k[2])
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k[1], (long long)k[0]));
}

/* acc folded d bits forward (k = constants for d) and XORed into data. */
VP_INLINE __m512i fold(__m512i acc, __m512i k, __m512i data)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, k, 0x00),
					 _mm512_clmulepi64_epi128(acc, k, 0x11), data, 0x96);
}

VP_INLINE __m128i fold128(__m128i acc, __m128i k, __m128i data)
{
	return _mm_ternarylogic_epi64(_mm_clmulepi64_si128(acc, k, 0x00),
				      _mm_clmulepi64_si128(acc, k, 0x11), data, 0x96);
}

/* Loads 64 bytes and, when copying, stores them: one read of the source serves both. */
VP_INLINE __m512i ld(uint8_t *dst, const uint8_t *src, int copy)
{
	__m512i v = _mm512_loadu_si512(src);

	if (copy)
		_mm512_storeu_si512(dst, v);
	return v;
}

struct vp_cur {
	uint8_t *dst;
	const uint8_t *src;
	size_t len;
};

VP_INLINE void advance(struct vp_cur *c, size_t n)
{
	c->src += n;
	c->dst += n;
	c->len -= n;
}

/* The four accumulators of consecutive 64-byte columns merged onto the last, as a tree. */
VP_INLINE __m512i merge4(__m512i a0, __m512i a1, __m512i a2, __m512i a3)
{
	a1 = fold(a0, bcast(k_d512), a1);
	a3 = fold(a2, bcast(k_d512), a3);
	return fold(a1, bcast(k_d1024), a3);
}

/* Main loop over 256-byte blocks (c->len >= 256 on entry); returns one zmm whose four lanes
 * stand for everything consumed. */
VP_INLINE __m512i fold_256s(struct vp_cur *c, __m512i first, int copy)
{
	__m512i a0 = first, a1 = ld(c->dst + 64, c->src + 64, copy);
	__m512i a2 = ld(c->dst + 128, c->src + 128, copy), a3 = ld(c->dst + 192, c->src + 192, copy);
	const __m512i k = bcast(k_d2048);

	for (advance(c, 256); c->len >= 256; advance(c, 256)) {
		a0 = fold(a0, k, ld(c->dst, c->src, copy));
		a1 = fold(a1, k, ld(c->dst + 64, c->src + 64, copy));
		a2 = fold(a2, k, ld(c->dst + 128, c->src + 128, copy));
		a3 = fold(a3, k, ld(c->dst + 192, c->src + 192, copy));
	}
	return merge4(a0, a1, a2, a3);
}

/* The four lanes of v (lane 0 first in the message) folded into one 128-bit lane. */
VP_INLINE __m128i zmm_to_xmm(__m512i v)
{
	const __m512i k = _mm512_loadu_si512(k_lanes);
	/* Lane 3 of k is zero, so lane 3 of the product is zero and v's lane 3 goes in as is. */
	__m512i p = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(v, k, 0x00),
					      _mm512_clmulepi64_epi128(v, k, 0x11),
					      _mm512_maskz_mov_epi64(0xC0, v), 0x96);
	__m256i h = _mm256_xor_si256(_mm512_castsi512_si256(p), _mm512_extracti64x4_epi64(p, 1));

	return _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* A lane r stands for the message bits r*x^32 mod P would be the CRC of, from register 0:
 * two crc32q over its qwords compute exactly that. */
VP_INLINE uint32_t xmm_crc(__m128i x)
{
	return (uint32_t)_mm_crc32_u64(_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(x)),
				       (uint64_t)_mm_extract_epi64(x, 1));
}

/* crc * x^(8d) mod P, given k = x^(8d-33) mod P: the reflected 32x32 product carries an
 * extra x^1 and the reducing crc32q an x^32. */
VP_INLINE uint32_t crc_shift(uint32_t crc, uint64_t k)
{
	__m128i prod = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)crc),
					    _mm_cvtsi64_si128((long long)k), 0x00);

	return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(prod));
}

/* HSTEP bytes at offset off of every scalar stream. */
VP_INLINE void scalar_steps(uint64_t *c, uint8_t *dst, const uint8_t *src, size_t off, int copy)
{
#pragma GCC unroll 8
	for (int j = 0; j < HSTEP; j += 8) {
#pragma GCC unroll 8
		for (int st = 0; st < HS; st++) {
			size_t at = (size_t)st * HR + off + (size_t)j;
			uint64_t v;

			memcpy(&v, src + at, 8);
			if (copy)
				memcpy(dst + at, &v, 8);
			c[st] = _mm_crc32_u64(c[st], v);
		}
	}
}

/* One hybrid block of HBLK bytes (see the k_hyb comment). */
VP_INLINE uint32_t hybrid_block(uint32_t crc, uint8_t *dst, const uint8_t *src, int copy)
{
	uint8_t *vd = dst + HS * HR;
	const uint8_t *vs = src + HS * HR;
	__m512i a0 = ld(vd, vs, copy), a1 = ld(vd + 64, vs + 64, copy);
	__m512i a2 = ld(vd + 128, vs + 128, copy), a3 = ld(vd + 192, vs + 192, copy);
	const __m512i k = bcast(k_d2048);
	uint64_t c[HS] = { 0 };

	scalar_steps(c, dst, src, 0, copy);
	for (size_t i = 1; i < HNIT; i++) {
		size_t v = 256 * i;

		a0 = fold(a0, k, ld(vd + v, vs + v, copy));
		a1 = fold(a1, k, ld(vd + v + 64, vs + v + 64, copy));
		a2 = fold(a2, k, ld(vd + v + 128, vs + v + 128, copy));
		a3 = fold(a3, k, ld(vd + v + 192, vs + v + 192, copy));
		scalar_steps(c, dst, src, HSTEP * i, copy);
	}
	crc = crc_shift(crc, k_hyb[HS]) ^ xmm_crc(zmm_to_xmm(merge4(a0, a1, a2, a3)));
#pragma GCC unroll 8
	for (int st = 0; st < HS; st++)
		crc ^= crc_shift((uint32_t)c[st], k_hyb[st]);
	return crc;
}

/* Vector folding alone, for what is left after the hybrid blocks (c->len >= 64). */
VP_INLINE uint32_t fold_rest(uint32_t crc, struct vp_cur *c, int copy)
{
	__m512i v = _mm512_xor_si512(ld(c->dst, c->src, copy),
				     _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));

	if (c->len >= 256)
		v = fold_256s(c, v, copy);
	else
		advance(c, 64);
	for (const __m512i k = bcast(k_d512); c->len >= 64; advance(c, 64))
		v = fold(v, k, ld(c->dst, c->src, copy));
	__m128i x = zmm_to_xmm(v);
	for (const __m128i k = _mm_loadu_si128((const __m128i *)k_d128); c->len >= 16; advance(c, 16)) {
		__m128i d = _mm_loadu_si128((const __m128i *)c->src);

		if (copy)
			_mm_storeu_si128((__m128i *)c->dst, d);
		x = fold128(x, k, d);
	}
	return xmm_crc(x);
}

VP_INLINE uint32_t vp_run(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len, int copy)
{
	struct vp_cur c = { dst, src, len };

	/* A zmm load that straddles two cache lines costs two: on long buffers, first bring the
	 * source to a 64-byte boundary with the crc32 instruction (decoded payload starts at
	 * FPDU offset 2 + head). */
	if (c.len >= HBLK && ((uintptr_t)c.src & 63)) {
		size_t pre = 64 - ((uintptr_t)c.src & 63);

		crc = copy ? crc32c_sse42_copy(crc, c.dst, c.src, pre)
			   : crc32c_sse42_update(crc, c.src, pre);
		advance(&c, pre);
	}
	for (; c.len >= HBLK; advance(&c, HBLK))
		crc = hybrid_block(crc, c.dst, c.src, copy);
	if (c.len >= CRC32C_VPCLMUL_MIN)
		crc = fold_rest(crc, &c, copy);
	return copy ? crc32c_sse42_copy(crc, c.dst, c.src, c.len)
		    : crc32c_sse42_update(crc, c.src, c.len);
}

VP_TARGET uint32_t crc32c_vpclmul_update(uint32_t crc, const void *buf, size_t len)
{
	/* dst is never written when copy == 0; src stands in so the pointer math stays valid. */
	return vp_run(crc, (uint8_t *)(uintptr_t)buf, buf, len, 0);
}

VP_TARGET uint32_t crc32c_vpclmul_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	return vp_run(crc, dst, src, len, 1);
}
#endif /* __x86_64__ */
