/* Portable CRC32c, slicing-by-8 (reflected Castagnoli polynomial 0x82F63B78).
 *
 * This is the fallback for CPUs without the SSE4.2 crc32 instruction and the reference the
 * tests hold the fast path to, so it favours obviously-correct over clever.
 */
#include <pthread.h>
#include <string.h>

#include "crc32c_impl.h"
#include "mpa_crc32c.h"

/* tab[0] is the classic byte-at-a-time table; tab[k][b] is the register contribution of byte
 * b followed by k zero bytes, which lets eight input bytes be folded with eight independent
 * lookups instead of a serial chain of eight. */
static uint32_t crc32c_tab[8][256];
static pthread_once_t crc32c_tab_once = PTHREAD_ONCE_INIT;

static void crc32c_tab_build(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t crc = b;

		for (int bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (CRC32C_POLY_REFLECTED & (0u - (crc & 1u)));
		crc32c_tab[0][b] = crc;
	}
	for (int k = 1; k < 8; k++)
		for (int b = 0; b < 256; b++) {
			uint32_t prev = crc32c_tab[k - 1][b];

			crc32c_tab[k][b] = (prev >> 8) ^ crc32c_tab[0][prev & 0xFFu];
		}
}

/* Assembled byte by byte so the result is right on any endianness; compilers turn this into
 * one (unaligned) load on little-endian targets. */
static inline uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t crc32c_bytes(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = (crc >> 8) ^ crc32c_tab[0][(crc ^ *p++) & 0xFFu];
	return crc;
}

uint32_t mpa_crc32c_update_table(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&crc32c_tab_once, crc32c_tab_build);
	for (; len >= 8; len -= 8, p += 8) {
		uint32_t lo = load_le32(p) ^ crc;
		uint32_t hi = load_le32(p + 4);

		crc = crc32c_tab[7][lo & 0xFFu] ^ crc32c_tab[6][(lo >> 8) & 0xFFu] ^
		      crc32c_tab[5][(lo >> 16) & 0xFFu] ^ crc32c_tab[4][lo >> 24] ^
		      crc32c_tab[3][hi & 0xFFu] ^ crc32c_tab[2][(hi >> 8) & 0xFFu] ^
		      crc32c_tab[1][(hi >> 16) & 0xFFu] ^ crc32c_tab[0][hi >> 24];
	}
	return crc32c_bytes(crc, p, len);
}

/* Not fused: the table path only runs on CPUs without SSE4.2, where simplicity wins; the
 * vectorised memcpy adds little next to the much slower slicing-by-8 pass. */
uint32_t crc32c_table_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	if (len)
		memcpy(dst, src, len);
	return mpa_crc32c_update_table(crc, src, len);
}

/* a * b mod P, both reflected: walk a's terms from x^0 up while b is multiplied by x. */
static uint32_t gf_mulmod(uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	for (int i = 0; i < 32; i++) {
		if (a & (0x80000000u >> i))
			r ^= b;
		b = (b >> 1) ^ (CRC32C_POLY_REFLECTED & (0u - (b & 1u)));
	}
	return r;
}

/* Square and multiply; the reflected polynomial 1 is 0x80000000 and x is 0x40000000. */
uint32_t crc32c_xpow_mod(uint64_t n)
{
	uint32_t r = 0x80000000u, base = 0x40000000u;

	for (; n; n >>= 1) {
		if (n & 1)
			r = gf_mulmod(r, base);
		base = gf_mulmod(base, base);
	}
	return r;
}
