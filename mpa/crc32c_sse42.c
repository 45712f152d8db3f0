/* CRC32c with the SSE4.2 crc32 instruction, three interleaved streams merged with PCLMUL.
 *
 * crc32q has a latency of 3 cycles but can issue every cycle, so one dependent chain uses a
 * third of the unit. Long buffers are therefore cut into blocks of three equal streams whose
 * CRCs run interleaved; the partial registers are then merged with
 *     crc(A|B|C) = A' * x^(16L) ^ B' * x^(8L) ^ C'     (mod P, L = stream length in bytes)
 * where A' continues the caller's register, B' and C' start from 0, and each shift is a
 * carry-less multiply by a precomputed x^k mod P plus one crc32q that reduces the 64-bit
 * product back to 32 bits. This is also the short-buffer path of the folding implementations.
 */
#include <pthread.h>
#include <string.h>

#include "crc32c_impl.h"
#include "mpa_crc32c.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define X86_TARGET __attribute__((target("sse4.2,pclmul")))
#define X86_INLINE static inline __attribute__((always_inline)) X86_TARGET

/* Interleaved crc32q chains per block. Three fill a core that issues one crc32 per cycle
 * (3-cycle latency); cores that issue two per cycle (AMD Zen 3 and later) would gain from 6. */
#ifndef CRC32C_NSTREAMS
#define CRC32C_NSTREAMS 3
#endif
#define NS CRC32C_NSTREAMS
#if NS < 2
#error "CRC32C_NSTREAMS must be at least 2"
#endif
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* Bytes per stream for each block size, largest first. Large blocks amortise the ~15-cycle
 * merge; the smaller ones keep all streams busy on medium buffers (FPDU payloads are often
 * a few hundred bytes). Below NS * 32 bytes the merge would cost about as much as it saves. */
#define NTIERS 3
static const size_t tier_len[NTIERS] = { 2048, 256, 32 };
/* tier_k[t][j] = x^(8L(j+1)-33) mod P, reflected: shifts a register past j+1 later streams.
 * The -33 compensates for the one-bit offset of a reflected 32x32 carry-less product (x^1)
 * and the x^32 that the reducing crc32q applies. */
static uint64_t tier_k[NTIERS][NS - 1];

const char crc32c_sse42_name[] = "sse42-" STRINGIFY(NS) "way";

static pthread_once_t sse42_once = PTHREAD_ONCE_INIT;

static void sse42_init(void)
{
	for (int t = 0; t < NTIERS; t++)
		for (int j = 0; j < NS - 1; j++)
			tier_k[t][j] = crc32c_xpow_mod(8 * tier_len[t] * (uint64_t)(j + 1) - 33);
}

bool crc32c_sse42_usable(void)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("sse4.2") || !__builtin_cpu_supports("pclmul"))
		return false;
	pthread_once(&sse42_once, sse42_init);
	return true;
}

/* crc * x^(8L) mod P, given k = x^(8L-33) mod P. */
X86_INLINE uint32_t crc_shift(uint32_t crc, uint64_t k)
{
	__m128i prod = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)crc),
					    _mm_cvtsi64_si128((long long)k), 0x00);

	return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(prod));
}

/* One 8-byte step; with copy set the same register value is also stored, which is what makes
 * the fused copy cheaper than memcpy followed by a second pass. memcpy keeps loads and stores
 * legal at any alignment and compiles to plain mov. */
X86_INLINE uint64_t step8(uint64_t crc, uint8_t *dst, const uint8_t *src, int copy)
{
	uint64_t v;

	memcpy(&v, src, 8);
	if (copy)
		memcpy(dst, &v, 8);
	return _mm_crc32_u64(crc, v);
}

X86_INLINE uint32_t block(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t l,
			  const uint64_t *k, int copy)
{
	uint64_t c[NS] = { crc };

	for (size_t i = 0; i < l; i += 8) {
#pragma GCC unroll 8
		for (int s = 0; s < NS; s++)
			c[s] = step8(c[s], dst + s * l + i, src + s * l + i, copy);
	}
	/* Stream s is followed by NS-1-s streams of l bytes each. */
	crc = (uint32_t)c[NS - 1];
#pragma GCC unroll 8
	for (int s = 0; s < NS - 1; s++)
		crc ^= crc_shift((uint32_t)c[s], k[NS - 2 - s]);
	return crc;
}

/* Leftovers shorter than the smallest block: one chain of crc32q, then 4/2/1-byte steps. */
X86_INLINE uint32_t tail(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len, int copy)
{
	uint64_t c = crc;
	uint32_t w;
	uint16_t h;

#pragma GCC unroll 4
	for (; len >= 8; len -= 8, src += 8, dst += 8)
		c = step8(c, dst, src, copy);
	crc = (uint32_t)c;
	if (len & 4) {
		memcpy(&w, src, 4);
		if (copy)
			memcpy(dst, &w, 4);
		crc = _mm_crc32_u32(crc, w);
		src += 4, dst += 4;
	}
	if (len & 2) {
		memcpy(&h, src, 2);
		if (copy)
			memcpy(dst, &h, 2);
		crc = _mm_crc32_u16(crc, h);
		src += 2, dst += 2;
	}
	if (len & 1) {
		if (copy)
			*dst = *src;
		crc = _mm_crc32_u8(crc, *src);
	}
	return crc;
}

X86_INLINE uint32_t sse42_run(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len, int copy)
{
	/* Short buffers (the 64-octet FPDUs of small sends) go straight to the single chain:
	 * the tier loops and their register saves would cost as much as the CRC itself. */
	if (len < NS * tier_len[NTIERS - 1])
		return tail(crc, dst, src, len, copy);
	for (int t = 0; t < NTIERS; t++) {
		size_t blk = NS * tier_len[t];

		for (; len >= blk; len -= blk, src += blk, dst += blk)
			crc = block(crc, dst, src, tier_len[t], tier_k[t], copy);
	}
	return tail(crc, dst, src, len, copy);
}

X86_TARGET uint32_t crc32c_sse42_update(uint32_t crc, const void *buf, size_t len)
{
	/* dst is never written when copy == 0; src stands in so the pointer math stays valid. */
	return sse42_run(crc, (uint8_t *)(uintptr_t)buf, buf, len, 0);
}

/* Fused on purpose: faster than memcpy followed by crc32c_sse42 on large buffers, because
 * the CRC pass is the bottleneck and the stores ride along for free. */
X86_TARGET uint32_t crc32c_sse42_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	return sse42_run(crc, dst, src, len, 1);
}
#endif /* __x86_64__ */
