/* A hashed timer wheel (Varghese & Lauck): O(1) arm, cancel and per-tick expiry, timers
 * embedded in their owners (no allocation). Resolution tick_us; timers further out than the
 * wheel's span stay in their slot for more rounds. */
#ifndef TCP_WHEEL_H
#define TCP_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

struct tcp_timer;
typedef void (*tcp_timer_fn)(struct tcp_timer *t, void *arg);

struct tcp_timer {
	/* private */
	struct tcp_timer *next, *prev;
	uint64_t expire_tick;
	tcp_timer_fn fn;
	void *arg;
	bool armed;
};

#define TCP_WHEEL_SLOTS 1024u

struct tcp_wheel {
	uint64_t tick_us;
	uint64_t cur_tick;      /* ticks processed so far */
	uint64_t start_us;
	uint32_t armed;
	uint64_t low_tick;      /* no armed timer expires before it (next_us starts there) */
	struct tcp_timer slot[TCP_WHEEL_SLOTS]; /* list heads */
};

/* tick_us: resolution (e.g. 100). now_us: the clock at creation. */
void tcp_wheel_init(struct tcp_wheel *w, uint64_t tick_us, uint64_t now_us);
void tcp_timer_init(struct tcp_timer *t, tcp_timer_fn fn, void *arg);
/* Fire once at now_us + delay_us or at most one tick later (never earlier). Re-arming moves. */
void tcp_timer_arm(struct tcp_wheel *w, struct tcp_timer *t, uint64_t now_us, uint64_t delay_us);
void tcp_timer_cancel(struct tcp_wheel *w, struct tcp_timer *t);
static inline bool tcp_timer_armed(const struct tcp_timer *t) { return t->armed; }
/* The latest time an armed timer fires (the end of its tick). */
static inline uint64_t tcp_timer_due_us(const struct tcp_wheel *w, const struct tcp_timer *t)
{
	return w->start_us + t->expire_tick * w->tick_us;
}
/* Run every timer due by now_us (callbacks may arm and cancel any timer, including their
 * own). Returns the number fired. */
unsigned tcp_wheel_run(struct tcp_wheel *w, uint64_t now_us);
/* us until the earliest armed timer may be due (an upper bound on a safe sleep), UINT64_MAX
 * when none is armed. */
uint64_t tcp_wheel_next_us(const struct tcp_wheel *w, uint64_t now_us);

#endif
