/* Hashed timer wheel. A timer due at absolute tick T (rounded up, so it never fires early)
 * lives in slot T mod SLOTS; processing tick c fires the timers of slot c whose tick is <= c
 * and leaves later rounds in place.
 *
 * Invariant: every armed timer has expire_tick >= cur_tick (the next tick to process).
 * cur_tick moves past a tick before its callbacks run, so a callback that re-arms (even with
 * delay 0) lands on a later tick: a run always terminates. */
#include "tcp_wheel.h"

#include <stddef.h>

static void list_init(struct tcp_timer *h)
{
	h->next = h->prev = h;
}

static bool list_empty(const struct tcp_timer *h) { return h->next == h; }

static void list_add_tail(struct tcp_timer *h, struct tcp_timer *t)
{
	t->prev = h->prev;
	t->next = h;
	h->prev->next = t;
	h->prev = t;
}

static void list_del(struct tcp_timer *t)
{
	t->prev->next = t->next;
	t->next->prev = t->prev;
	t->next = t->prev = NULL;
}

/* Move every timer of h onto the empty head to. */
static void list_splice(struct tcp_timer *h, struct tcp_timer *to)
{
	list_init(to);
	if (list_empty(h))
		return;
	to->next = h->next;
	to->prev = h->prev;
	to->next->prev = to;
	to->prev->next = to;
	list_init(h);
}

void tcp_wheel_init(struct tcp_wheel *w, uint64_t tick_us, uint64_t now_us)
{
	w->tick_us = tick_us ? tick_us : 1;
	w->cur_tick = 0;
	w->start_us = now_us;
	w->armed = 0;
	w->low_tick = 0;
	for (unsigned i = 0; i < TCP_WHEEL_SLOTS; i++)
		list_init(&w->slot[i]);
}

void tcp_timer_init(struct tcp_timer *t, tcp_timer_fn fn, void *arg)
{
	t->next = t->prev = NULL;
	t->expire_tick = 0;
	t->fn = fn;
	t->arg = arg;
	t->armed = false;
}

/* Ticks elapsed at now (rounded down); a clock behind the start counts as tick 0. */
static uint64_t tick_floor(const struct tcp_wheel *w, uint64_t now_us)
{
	return now_us > w->start_us ? (now_us - w->start_us) / w->tick_us : 0;
}

void tcp_timer_cancel(struct tcp_wheel *w, struct tcp_timer *t)
{
	if (!t->armed)
		return;
	list_del(t);
	t->armed = false;
	w->armed--;
}

static void insert(struct tcp_wheel *w, struct tcp_timer *t)
{
	list_add_tail(&w->slot[t->expire_tick % TCP_WHEEL_SLOTS], t);
}

void tcp_timer_arm(struct tcp_wheel *w, struct tcp_timer *t, uint64_t now_us, uint64_t delay_us)
{
	tcp_timer_cancel(w, t);
	uint64_t due = now_us + delay_us;
	if (due < now_us)
		due = UINT64_MAX; /* "never" in practice */
	uint64_t rel = due > w->start_us ? due - w->start_us : 0;
	uint64_t tick = rel / w->tick_us + (rel % w->tick_us != 0); /* round up: never early */
	t->expire_tick = tick < w->cur_tick ? w->cur_tick : tick;
	if (w->armed == 0 || t->expire_tick < w->low_tick)
		w->low_tick = t->expire_tick;
	t->armed = true;
	w->armed++;
	insert(w, t);
}

/* Fire the timers of one slot due by tick `due`; keep the others. Works on a detached list
 * so callbacks may arm or cancel anything, including timers still waiting in that list. */
static unsigned run_slot(struct tcp_wheel *w, unsigned slot, uint64_t due)
{
	struct tcp_timer pending;
	unsigned fired = 0;
	list_splice(&w->slot[slot], &pending);
	while (!list_empty(&pending)) {
		struct tcp_timer *t = pending.next;
		list_del(t);
		if (t->expire_tick > due) {
			insert(w, t);
			continue;
		}
		t->armed = false;
		w->armed--;
		fired++;
		t->fn(t, t->arg);
	}
	return fired;
}

unsigned tcp_wheel_run(struct tcp_wheel *w, uint64_t now_us)
{
	uint64_t now_tick = tick_floor(w, now_us);
	unsigned fired = 0;
	if (w->armed == 0 || now_tick < w->cur_tick) {
		if (now_tick >= w->cur_tick)
			w->cur_tick = now_tick + 1;
		return 0;
	}
	if (now_tick - w->cur_tick >= TCP_WHEEL_SLOTS) {
		/* A long gap: every slot once, all due timers at once. */
		w->cur_tick = now_tick + 1;
		for (unsigned i = 0; i < TCP_WHEEL_SLOTS; i++)
			fired += run_slot(w, i, now_tick);
		return fired;
	}
	while (w->cur_tick <= now_tick) {
		uint64_t c = w->cur_tick++;
		fired += run_slot(w, (unsigned)(c % TCP_WHEEL_SLOTS), c);
	}
	return fired;
}

uint64_t tcp_wheel_next_us(const struct tcp_wheel *w, uint64_t now_us)
{
	if (w->armed == 0)
		return UINT64_MAX;
	/* The first occupied slot from the lower bound on: a timer expiring at tick e sits in
	 * the slot the scan reaches at or before e, so the tick found is never later than the
	 * earliest expiry (a far timer there only makes us wake early). The bound makes the
	 * common case (the earliest timer still armed) a single step. */
	uint64_t from = w->low_tick > w->cur_tick ? w->low_tick : w->cur_tick;
	for (uint64_t i = 0; i < TCP_WHEEL_SLOTS; i++) {
		uint64_t c = from + i;
		if (list_empty(&w->slot[c % TCP_WHEEL_SLOTS]))
			continue;
		uint64_t due = w->start_us + c * w->tick_us;
		return due > now_us ? due - now_us : 0;
	}
	return 0; /* unreachable while armed > 0 */
}
