/* The CQ -> feeders index of rn_device_feed.h. Open addressing with linear probing; a CQ
 * whose last feeder left keeps its slot as a tombstone (its key may come back: a new CQ at
 * the same address), and a rehash at three quarters used drops the tombstones. */
#include "rn_device_feed.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static const char tomb;
#define TOMB ((const void *)&tomb)

static unsigned hash_of(const void *cq, unsigned cap)
{
	uint64_t h = (uint64_t)(uintptr_t)cq * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 32) & (cap - 1);
}

/* The slot of cq, or NULL. */
static struct rn_feed *find(const struct rn_feed_tab *t, const void *cq)
{
	if (!t->cap)
		return NULL;
	for (unsigned i = hash_of(cq, t->cap);; i = (i + 1) & (t->cap - 1)) {
		struct rn_feed *f = &t->slot[i];
		if (f->cq == cq)
			return f;
		if (!f->cq)
			return NULL;
	}
}

static int rehash(struct rn_feed_tab *t, unsigned cap)
{
	struct rn_feed *old = t->slot;
	unsigned ocap = t->cap;
	struct rn_feed *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	t->slot = s;
	t->cap = cap;
	t->used = 0;
	for (unsigned i = 0; i < ocap; i++) {
		if (!old[i].cq || old[i].cq == TOMB)
			continue;
		unsigned j = hash_of(old[i].cq, cap);
		while (s[j].cq)
			j = (j + 1) & (cap - 1);
		s[j] = old[i];
		t->used++;
	}
	free(old);
	return 0;
}

/* The slot for cq, made when missing. */
static struct rn_feed *find_or_make(struct rn_feed_tab *t, const void *cq)
{
	struct rn_feed *f = find(t, cq);
	if (f)
		return f;
	if ((t->used + 1) * 4 > t->cap * 3 && rehash(t, t->cap ? t->cap * 2 : 16))
		return NULL;
	unsigned i = hash_of(cq, t->cap);
	while (t->slot[i].cq && t->slot[i].cq != TOMB)
		i = (i + 1) & (t->cap - 1);
	if (!t->slot[i].cq)
		t->used++;
	t->slot[i] = (struct rn_feed){ .cq = cq };
	return &t->slot[i];
}

int rn_feed_add(struct rn_feed_tab *t, const void *cq, void *item, atomic_uint *pos)
{
	struct rn_feed *f = find_or_make(t, cq);
	if (!f)
		return -ENOMEM;
	if (f->n == f->cap) {
		unsigned cap = f->cap ? f->cap * 2 : 4;
		struct rn_feed_member *v = realloc(f->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	atomic_store_explicit(pos, f->n, memory_order_relaxed);
	f->v[f->n++] = (struct rn_feed_member){ item, pos };
	return 0;
}

void rn_feed_del(struct rn_feed_tab *t, const void *cq, unsigned pos)
{
	struct rn_feed *f = find(t, cq);
	if (!f || pos >= f->n)
		return;
	f->v[pos] = f->v[--f->n];
	atomic_store_explicit(f->v[pos].pos, pos, memory_order_relaxed);
	if (f->n)
		return;
	free(f->v);
	*f = (struct rn_feed){ .cq = TOMB };
}

unsigned rn_feed_take(struct rn_feed_tab *t, const void *cq, unsigned hint, void **out,
		      unsigned max)
{
	struct rn_feed *f = find(t, cq);
	unsigned k = 0, i;

	if (!f || !f->n || !max)
		return 0;
	if (hint > f->n)
		hint = 0;
	if (hint)
		out[k++] = f->v[hint - 1].item;
	if (f->turn >= f->n)
		f->turn = 0;
	for (i = 0; k < max && i < f->n; i++) {
		unsigned j = (f->turn + i) % f->n;
		if (j + 1 != hint)
			out[k++] = f->v[j].item;
	}
	f->turn = (f->turn + i) % f->n;
	return k;
}

void rn_feed_free(struct rn_feed_tab *t)
{
	for (unsigned i = 0; i < t->cap; i++)
		if (t->slot[i].cq && t->slot[i].cq != TOMB)
			free(t->slot[i].v);
	free(t->slot);
	*t = (struct rn_feed_tab){ 0 };
}
