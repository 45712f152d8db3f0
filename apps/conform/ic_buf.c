/* Guarded buffers: every buffer a check registers or posts has IC_GUARD octets of
 * IC_GUARD_BYTE on each side, so an RNIC that places one octet too many (or too early) is
 * caught even when the data inside looks right. */
#include <stdlib.h>
#include <string.h>

#include "ic.h"

/* A buffer of len octets set to fill, registered on pd with access (no MR when access is
 * -1). NULL when out of slots or memory or registration fails (errno set). */
struct ic_buf *ic_buf_new_pd(struct ic *ic, struct ibv_pd *pd, size_t len, int access,
			     int fill)
{
	if (ic->nbufs == IC_MAXBUF)
		return NULL;
	struct ic_buf *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->raw = malloc(len + 2 * IC_GUARD);
	if (!b->raw) {
		free(b);
		return NULL;
	}
	memset(b->raw, IC_GUARD_BYTE, len + 2 * IC_GUARD);
	b->p = b->raw + IC_GUARD;
	b->len = len;
	memset(b->p, fill, len);
	ic->bufs[ic->nbufs++] = b;
	if (access >= 0 && !(b->mr = ibv_reg_mr(pd, b->p, len, access)))
		return NULL;
	return b;
}

/* The same on the check's PD. */
struct ic_buf *ic_buf_new(struct ic *ic, size_t len, int access, int fill)
{
	return ic_buf_new_pd(ic, ic->pd, len, access, fill);
}

bool ic_buf_guards_ok(const struct ic_buf *b)
{
	for (size_t i = 0; i < IC_GUARD; i++)
		if (b->raw[i] != IC_GUARD_BYTE || b->p[b->len + i] != IC_GUARD_BYTE)
			return false;
	return true;
}

static uint8_t pattern(size_t i, unsigned seed)
{
	return (uint8_t)(i * 7 + seed * 13 + 1 + (i >> 8));
}

void ic_buf_pattern(struct ic_buf *b, unsigned seed)
{
	for (size_t i = 0; i < b->len; i++)
		b->p[i] = pattern(i, seed);
}

/* Index + 1 of the first octet in [off, off + n) that differs from the pattern, 0 if none. */
size_t ic_buf_pattern_diff(const struct ic_buf *b, size_t off, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (b->p[off + i] != pattern(off + i, seed))
			return off + i + 1;
	return 0;
}

size_t ic_buf_fill_diff(const struct ic_buf *b, size_t off, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (b->p[off + i] != v)
			return off + i + 1;
	return 0;
}

/* Deregister and free every buffer of the check; FAIL when a guard octet was touched. */
int ic_bufs_free(struct ic *ic)
{
	int rc = 0;
	for (int i = 0; i < ic->nbufs; i++) {
		struct ic_buf *b = ic->bufs[i];
		if (!ic_buf_guards_ok(b))
			rc = ic_fail(ic, "guard octets around buffer %d (%zu octets) overwritten", i,
				     b->len);
		if (b->mr)
			ibv_dereg_mr(b->mr);
		free(b->raw);
		free(b);
	}
	ic->nbufs = 0;
	return rc;
}
