/* CRC32c runtime dispatch: the first usable entry of crc32c_impls[] (fastest first) is
 * picked once and published through two function pointers.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "crc32c_impl.h"
#include "mpa_crc32c.h"

static bool always(void)
{
	return true;
}

/* Fastest first: 512-bit carry-less folding, then three interleaved crc32q chains, then the
 * table. There is no 128-bit PCLMULQDQ folding path: one carry-less multiply issues every
 * other cycle whatever its width, so 128-bit folding is slower than the crc32q chains. */
const struct crc32c_impl crc32c_impls[] = {
#if defined(__x86_64__)
	{ "vpclmul-avx512", crc32c_vpclmul_usable, crc32c_vpclmul_update, crc32c_vpclmul_copy },
	{ crc32c_sse42_name, crc32c_sse42_usable, crc32c_sse42_update, crc32c_sse42_copy },
#endif
	{ "table", always, mpa_crc32c_update_table, crc32c_table_copy },
};
const size_t crc32c_nimpls = sizeof(crc32c_impls) / sizeof(crc32c_impls[0]);

/* The chosen pair, published once. The hot path is one acquire load instead of a
 * pthread_once call, which matters for the 64-byte FPDUs of small sends. */
static _Atomic(crc32c_fn) impl_update;
static _Atomic(crc32c_copy_fn) impl_copy;
static const char *impl_name = "table";
static pthread_once_t impl_once = PTHREAD_ONCE_INIT;

static void impl_pick(void)
{
	const struct crc32c_impl *im = &crc32c_impls[crc32c_nimpls - 1];

	for (size_t i = 0; i < crc32c_nimpls; i++) {
		if (crc32c_impls[i].usable()) {
			im = &crc32c_impls[i];
			break;
		}
	}
	impl_name = im->name;
	/* Release: whoever sees a pointer also sees the constants usable() prepared. */
	atomic_store_explicit(&impl_copy, im->copy, memory_order_release);
	atomic_store_explicit(&impl_update, im->update, memory_order_release);
}

uint32_t mpa_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	crc32c_fn f = atomic_load_explicit(&impl_update, memory_order_acquire);

	if (!f) {
		pthread_once(&impl_once, impl_pick);
		f = atomic_load_explicit(&impl_update, memory_order_acquire);
	}
	return f(crc, buf, len);
}

uint32_t mpa_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	crc32c_copy_fn f = atomic_load_explicit(&impl_copy, memory_order_acquire);

	if (!f) {
		pthread_once(&impl_once, impl_pick);
		f = atomic_load_explicit(&impl_copy, memory_order_acquire);
	}
	return f(crc, dst, src, len);
}

const char *mpa_crc32c_impl_name(void)
{
	pthread_once(&impl_once, impl_pick);
	return impl_name;
}
