/* Guarded buffers (guard_buf.h). */
#include "guard_buf.h"

#include <stdlib.h>
#include <string.h>

void guard_buf_new(struct guard_buf *b, size_t len, uint8_t fill)
{
	b->raw = malloc(len + 2 * GUARD_LEN);
	if (!b->raw)
		abort();
	memset(b->raw, (uint8_t)~fill, len + 2 * GUARD_LEN);
	b->p = b->raw + GUARD_LEN;
	b->len = len;
	b->fill = fill;
	memset(b->p, fill, len);
	b->ok_lo = b->ok_hi = 0;
}

void guard_buf_allow(struct guard_buf *b, size_t lo, size_t hi)
{
	if (hi > b->len)
		hi = b->len;
	if (lo >= hi)
		return;
	if (b->ok_lo == b->ok_hi) {
		b->ok_lo = lo;
		b->ok_hi = hi;
		return;
	}
	b->ok_lo = lo < b->ok_lo ? lo : b->ok_lo;
	b->ok_hi = hi > b->ok_hi ? hi : b->ok_hi;
}

/* p[0, n) all v: the first octet is v and each octet equals the next (one memcmp, fast on
 * the large buffers checked after every input). */
static bool all_are(const uint8_t *p, size_t n, uint8_t v)
{
	return n == 0 || (p[0] == v && memcmp(p, p + 1, n - 1) == 0);
}

bool guard_buf_intact(const struct guard_buf *b)
{
	const uint8_t guard = (uint8_t)~b->fill;

	return all_are(b->raw, GUARD_LEN, guard) && all_are(b->p + b->len, GUARD_LEN, guard) &&
	       all_are(b->p, b->ok_lo, b->fill) &&
	       all_are(b->p + b->ok_hi, b->len - b->ok_hi, b->fill);
}

void guard_buf_free(struct guard_buf *b)
{
	free(b->raw);
	b->raw = b->p = NULL;
}
