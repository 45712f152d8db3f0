/* A growable octet buffer for the fuzz harnesses: room for n more octets at the end. */
#ifndef GROWBUF_H
#define GROWBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct growbuf {
	uint8_t *p;
	size_t len, cap;
};

/* Where the next n octets go (the caller adds them to len); never NULL, aborts when memory
 * runs out. */
static inline uint8_t *growbuf_room(struct growbuf *b, size_t n)
{
	if (!b->p || b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2 + 64;
		uint8_t *p = realloc(b->p, cap);
		if (!p)
			abort();
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->len;
}

#endif
