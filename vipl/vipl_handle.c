/* Generation-checked handle table: a handle is (generation, kind, slot) packed in a pointer-
 * sized value, never an object address, so a stale, destroyed or forged handle is refused
 * with VIP_INVALID_PARAMETER and never dereferenced, even when an application passes one. */
#include "vipl_int.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SLOT_BITS 20
#define KIND_BITS 4
#define MAX_SLOTS (1u << SLOT_BITS)

struct slot {
	struct vipl_obj *obj;
	uint32_t gen;
};

/* A spinlock, not a mutex: every VIPL call takes it once around a few loads (the data path
 * several times per message), where an uncontended pthread mutex cost about as much as the
 * lookup itself. A holder preempted on a shared core is waited out with sched_yield. */
static atomic_flag tab_flag = ATOMIC_FLAG_INIT;

static void tab_lock(void)
{
	unsigned spins = 0;
	while (atomic_flag_test_and_set_explicit(&tab_flag, memory_order_acquire))
		if (++spins % 64 == 0)
			sched_yield();
}

static void tab_unlock(void)
{
	atomic_flag_clear_explicit(&tab_flag, memory_order_release);
}

static struct slot *tab;
static uint32_t tab_cap, tab_free_hint = 1;

static void *encode(uint32_t idx, uint32_t gen, enum vipl_kind k)
{
	uintptr_t v = ((uintptr_t)(gen & 0xFFFFFF) << (SLOT_BITS + KIND_BITS)) |
		      ((uintptr_t)k << SLOT_BITS) | idx;
	return (void *)v;
}

static bool grow(void)
{
	uint32_t ncap = tab_cap ? tab_cap * 2 : 256;
	if (ncap > MAX_SLOTS)
		return false;
	struct slot *n = realloc(tab, ncap * sizeof(*n));
	if (n == NULL)
		return false;
	for (uint32_t i = tab_cap; i < ncap; i++)
		n[i] = (struct slot){ NULL, 1 };
	tab = n;
	tab_cap = ncap;
	return true;
}

void *vipl_handle_add(struct vipl_obj *o)
{
	void *h = NULL;
	tab_lock();
	for (uint32_t pass = 0; pass < 2 && h == NULL; pass++) {
		for (uint32_t i = tab_free_hint; i < tab_cap; i++) {
			if (tab[i].obj == NULL) {
				tab[i].obj = o;
				tab_free_hint = i + 1;
				h = encode(i, tab[i].gen, o->kind);
				break;
			}
		}
		if (h == NULL) {
			tab_free_hint = 1;
			if (pass == 0 && !grow())
				break;
		}
	}
	if (h != NULL) {
		atomic_store(&o->refs, 1);
		o->dead = false;
		o->handle = h;
	}
	tab_unlock();
	return h;
}

struct vipl_obj *vipl_handle_get(void *h, enum vipl_kind k)
{
	uintptr_t v = (uintptr_t)h;
	uint32_t idx = v & (MAX_SLOTS - 1);
	uint32_t kind = (v >> SLOT_BITS) & ((1u << KIND_BITS) - 1);
	uint32_t gen = (uint32_t)((v >> (SLOT_BITS + KIND_BITS)) & 0xFFFFFF);
	struct vipl_obj *o = NULL;

	if (h == NULL || kind != (uint32_t)k || (v >> 48) != 0)
		return NULL;
	tab_lock();
	if (idx > 0 && idx < tab_cap && tab[idx].obj != NULL && (tab[idx].gen & 0xFFFFFF) == gen &&
	    !tab[idx].obj->dead) {
		o = tab[idx].obj;
		atomic_fetch_add(&o->refs, 1);
	}
	tab_unlock();
	return o;
}

void vipl_handle_put(struct vipl_obj *o)
{
	if (o != NULL && atomic_fetch_sub(&o->refs, 1) == 1)
		vipl_obj_free(o);
}

void vipl_handle_remove(struct vipl_obj *o)
{
	uint32_t idx = (uint32_t)((uintptr_t)o->handle & (MAX_SLOTS - 1));
	tab_lock();
	if (!o->dead && idx < tab_cap && tab[idx].obj == o) {
		tab[idx].obj = NULL;
		tab[idx].gen++;
		if (idx < tab_free_hint)
			tab_free_hint = idx;
	}
	o->dead = true;
	tab_unlock();
	vipl_handle_put(o);
}
