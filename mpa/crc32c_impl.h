/* Private to the CRC32c implementation files and their tests: every implementation's entry
 * points, so the tests can run each one this CPU supports, not only the dispatched one.
 *
 * Polynomial convention shared by the files: a 32-bit CRC register is "reflected", bit j
 * holding the coefficient of x^(31-j); a 64-bit (128-bit) lane likewise holds x^(63-j)
 * (x^(127-j)) in bit j, and the first message bit is the highest power.
 */
#ifndef CRC32C_IMPL_H
#define CRC32C_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRC32C_POLY_REFLECTED 0x82F63B78u

typedef uint32_t (*crc32c_fn)(uint32_t crc, const void *buf, size_t len);
typedef uint32_t (*crc32c_copy_fn)(uint32_t crc, void *dst, const void *src, size_t len);

struct crc32c_impl {
	const char *name;
	/* True if this CPU and OS can run it; also prepares its constants (thread-safe,
	 * idempotent). update/copy must not be called before it returned true. */
	bool (*usable)(void);
	crc32c_fn update;
	crc32c_copy_fn copy;
};

/* Every implementation built into this binary, fastest first; the last is the table,
 * which is always usable. The dispatcher picks the first usable entry. */
extern const struct crc32c_impl crc32c_impls[];
extern const size_t crc32c_nimpls;

/* x^n mod P as a reflected 32-bit register. Portable; used to derive folding constants. */
uint32_t crc32c_xpow_mod(uint64_t n);

/* Constants that fold a 128-bit lane forward by d bits (d >= 33): the lane r = h*x^64 + l
 * (h in its low qword) becomes h*k[0] + l*k[1], congruent to r*x^d mod P. Each k sits in
 * the low 32 bits of its qword; a carry-less 64x64 product of reflected operands comes out
 * multiplied by x^1, and a 32-bit constant read as a 64-bit lane by x^32, hence
 * k[0] = x^(64+d-33) and k[1] = x^(d-33). The products have degree < 96, so no reduction
 * is needed until the very end. */
static inline void crc32c_fold_consts(uint64_t d, uint64_t k[2])
{
	k[0] = crc32c_xpow_mod(d + 31);
	k[1] = crc32c_xpow_mod(d - 33);
}

uint32_t crc32c_table_copy(uint32_t crc, void *dst, const void *src, size_t len);

#if defined(__x86_64__)
extern const char crc32c_sse42_name[]; /* "sse42-3way": names the stream count */
bool crc32c_sse42_usable(void);
uint32_t crc32c_sse42_update(uint32_t crc, const void *buf, size_t len);
uint32_t crc32c_sse42_copy(uint32_t crc, void *dst, const void *src, size_t len);

bool crc32c_vpclmul_usable(void);
uint32_t crc32c_vpclmul_update(uint32_t crc, const void *buf, size_t len);
uint32_t crc32c_vpclmul_copy(uint32_t crc, void *dst, const void *src, size_t len);

/* Geometry of crc32c_vpclmul.c, exposed so the tests can probe both sides of each boundary:
 * buffers (and what is left after the hybrid blocks) shorter than CRC32C_VPCLMUL_MIN go to
 * the SSE4.2 path; CRC32C_VPCLMUL_BLOCK is the size of one hybrid block. */
#define CRC32C_VPCLMUL_MIN 256
#define CRC32C_VPCLMUL_BLOCK 7936
#endif

#endif
