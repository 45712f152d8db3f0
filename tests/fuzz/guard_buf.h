/* Guarded buffers for the QP fuzzer: a payload between two guard areas, all filled with a
 * known pattern, and the part of the payload the peer may legitimately change. A check finds
 * any octet written outside the registered payload (a guard) or inside it where no
 * operation with the right access could have placed it. */
#ifndef GUARD_BUF_H
#define GUARD_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUARD_LEN 64u

struct guard_buf {
	uint8_t *raw;
	uint8_t *p;        /* payload */
	size_t len;
	uint8_t fill;      /* payload pattern; the guards are its complement */
	size_t ok_lo, ok_hi; /* [ok_lo, ok_hi): octets that may change (empty: ok_lo == ok_hi) */
};

void guard_buf_new(struct guard_buf *b, size_t len, uint8_t fill);
/* Widen the range that may change to include [lo, hi). */
void guard_buf_allow(struct guard_buf *b, size_t lo, size_t hi);
/* True when the guards and every octet outside the allowed range still hold their pattern. */
bool guard_buf_intact(const struct guard_buf *b);
void guard_buf_free(struct guard_buf *b);

#endif
