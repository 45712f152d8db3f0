/* Type-stable memory for the verbs-level objects (verbs_int.h, "Handle lifetime").
 *
 * A destroyed object's memory is never given back to malloc: it goes, its magic cleared, to
 * its kind's FIFO of dead objects, and the kind's allocations take from there only once
 * SV_OBJ_REUSE_AFTER dead ones wait. So a handle the application already destroyed always
 * points at memory that is ours and of the right kind: the handle check (sv_tag, then the
 * magic) reads it without a use after free, finds the magic cleared and the verb returns
 * EINVAL, as long as fewer than SV_OBJ_REUSE_AFTER objects of that kind were destroyed since
 * (after that the memory may carry a new object of the same kind, as a reused kernel handle
 * number would). The memory kept is the peak number of live objects of each kind, plus
 * SV_OBJ_REUSE_AFTER dead ones. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_int.h"

#define SV_OBJ_REUSE_AFTER 64u

struct sv_obj_hdr {
	struct sv_obj_hdr *next;
	size_t size;
	max_align_t align[];          /* the object follows, aligned as malloc's */
};

static struct {
	pthread_mutex_t lock;
	struct sv_obj_hdr *head, *tail;   /* dead objects, oldest first */
	unsigned count;
} pools[SV_OBJ_KINDS] = {
	[0 ... SV_OBJ_KINDS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

static struct sv_obj_hdr *hdr_of(void *obj)
{
	return (struct sv_obj_hdr *)((char *)obj - offsetof(struct sv_obj_hdr, align));
}

void *sv_obj_alloc(enum sv_obj_kind k, size_t size)
{
	struct sv_obj_hdr *h = NULL;

	pthread_mutex_lock(&pools[k].lock);
	if (pools[k].count > SV_OBJ_REUSE_AFTER) {
		h = pools[k].head;
		pools[k].head = h->next;
		if (!pools[k].head)
			pools[k].tail = NULL;
		pools[k].count--;
	}
	pthread_mutex_unlock(&pools[k].lock);
	if (h && h->size != size) {   /* one kind, one size: cannot happen */
		free(h);
		h = NULL;
	}
	if (!h) {
		h = malloc(sizeof(*h) + size);
		if (!h)
			return NULL;
		h->size = size;
	}
	h->next = NULL;
	memset(h->align, 0, size);
	return h->align;
}

void sv_obj_free(enum sv_obj_kind k, void *obj)
{
	struct sv_obj_hdr *h;

	if (!obj)
		return;
	h = hdr_of(obj);
	h->next = NULL;
	pthread_mutex_lock(&pools[k].lock);
	if (pools[k].tail)
		pools[k].tail->next = h;
	else
		pools[k].head = h;
	pools[k].tail = h;
	pools[k].count++;
	pthread_mutex_unlock(&pools[k].lock);
}
