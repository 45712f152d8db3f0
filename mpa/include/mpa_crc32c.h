/* CRC32c (Castagnoli, reflected polynomial 0x82F63B78) as MPA uses it (RFC 5044 §6.5).
 *
 * The running value is the raw register: start with MPA_CRC32C_INIT, feed any number of
 * buffers, and finish with mpa_crc32c_final(). mpa_crc32c() does all three in one call.
 * The best implementation for this CPU is picked once at first use: carry-less folding on
 * 512-bit vectors (AVX-512 + VPCLMULQDQ) running alongside SSE4.2 crc32 chains, or the
 * crc32 instruction alone (three interleaved streams combined with PCLMUL); the table
 * version is the fallback and the reference the tests compare against.
 */
#ifndef MPA_CRC32C_H
#define MPA_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#define MPA_CRC32C_INIT 0xFFFFFFFFu

/* Feeds len bytes at buf into the running CRC register crc. */
uint32_t mpa_crc32c_update(uint32_t crc, const void *buf, size_t len);

static inline uint32_t mpa_crc32c_final(uint32_t crc)
{
	return crc ^ 0xFFFFFFFFu;
}

/* One-shot CRC32c of a buffer: the value the RFC 3720 B.4 vectors give. */
static inline uint32_t mpa_crc32c(const void *buf, size_t len)
{
	return mpa_crc32c_final(mpa_crc32c_update(MPA_CRC32C_INIT, buf, len));
}

/* Copies len bytes from src to dst and feeds them into crc in the same pass. */
uint32_t mpa_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len);

/* The portable slicing-by-8 table implementation, always available. */
uint32_t mpa_crc32c_update_table(uint32_t crc, const void *buf, size_t len);

/* Name of the implementation mpa_crc32c_update() dispatches to ("vpclmul-avx512",
 * "sse42-3way", "table"). */
const char *mpa_crc32c_impl_name(void);

#endif
