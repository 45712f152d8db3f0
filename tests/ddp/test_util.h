/* Shared helpers for the DDP/RDMAP unit tests: hex vectors and error assertions. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ddp.h"

/* Decode a hex string (spaces allowed) into out; returns the octet count. */
static inline size_t hex2bin(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (const char *p = hex; *p;) {
		if (*p == ' ') {
			p++;
			continue;
		}
		assert_true(n < cap);
		char b[3] = { p[0], p[1], 0 };
		out[n++] = (uint8_t)strtoul(b, NULL, 16);
		p += 2;
	}
	return n;
}

#define assert_err(e, l, t, c) do {                  \
		assert_int_equal((e).layer, (l));    \
		assert_int_equal((e).etype, (t));    \
		assert_int_equal((e).ecode, (c));    \
	} while (0)

/* Copy len octets into an exactly-sized heap block so ASan flags any read past len. */
static inline uint8_t *exact_copy(const uint8_t *src, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	assert_non_null(p);
	if (len)
		memcpy(p, src, len);
	return p;
}

#endif
