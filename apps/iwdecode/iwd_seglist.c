/* iwdecode: collecting the decoded FPDUs of a capture and putting them in wire order. */
#include "iwdecode.h"

#include <stdlib.h>

void iwd_seglist_add(void *arg, const struct iwd_conn *c, const struct iwd_seg *s)
{
	(void)c;
	struct iwd_seglist *l = arg;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 256;
		struct iwd_seg *v = realloc(l->v, ncap * sizeof(*v));
		if (!v) {
			l->oom = true;
			return;
		}
		l->v = v;
		l->cap = ncap;
	}
	l->v[l->n] = *s;
	l->v[l->n].ulpdu = NULL; /* valid only during the callback */
	l->n++;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct iwd_seg *x = a, *y = b;
	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	if (x->conn != y->conn)
		return x->conn < y->conn ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

void iwd_seglist_sort(struct iwd_seglist *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), seg_cmp);
}

void iwd_seglist_free(struct iwd_seglist *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
