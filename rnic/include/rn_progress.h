/* The progress engine (docs/rnic.md, "Progress model"): a generic event loop
 * that knows nothing of QPs or connections. It waits in epoll on registered fds, a doorbell
 * (rn_progress_wake) and one-shot timers, and runs their callbacks.
 *
 * Drivers. Exactly one thread drives an engine at a time: either its own thread
 * (rn_progress_start / rn_progress_stop) or, in inline mode, an application thread calling
 * rn_progress_poll() (busy-polling applications that never want a second thread). The two are
 * mutually exclusive: start fails with -EBUSY during a poll, poll fails with -EBUSY while the
 * thread runs. Every callback runs on the driving thread, one at a time.
 *
 * Busy-poll window (thread mode). After any activity (an fd callback, a timer, a doorbell) the
 * thread keeps polling with epoll_wait(timeout 0) for spin_us microseconds before it blocks, so
 * a ping-pong does not pay a wake-up per message, while an idle engine sleeps. Each empty pass
 * of the window yields the core (the application thread may share it). A yield that takes
 * longer than RN_PROGRESS_YIELD_STALL_NS while no consumer polled (an application spinning on
 * memory holds the core) turns the window off for RN_PROGRESS_NOSPIN_NS: the engine blocks
 * after each piece of work, so a wake-up preempts the spinner instead of waiting out its time
 * slice. Default
 * RN_PROGRESS_SPIN_DEFAULT_US, chosen by measurement (tests/rnic/bench_progress.c).
 *
 * Thread safety. add / mod / del, timer arm / cancel and wake may be called from any thread,
 * including from inside callbacks. del and cancel guarantee that the callback is not running
 * and will not run again once they return - except when called on the driving thread itself
 * (from a callback), where nothing can be running concurrently anyway. Registrations are keyed
 * by fd: del an fd before closing it. Nothing runs after rn_progress_stop returns.
 *
 * Hooks run on the driving thread at fixed points of the loop (for instance the device's
 * rn_mem quiescent-state reporting); the hook list may only change while no one drives. */
#ifndef RN_PROGRESS_H
#define RN_PROGRESS_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdbool.h>
#include <stdint.h>

#define RN_PROGRESS_SPIN_DEFAULT_US 50u

struct rn_progress;

/* events: EPOLLIN / EPOLLOUT / EPOLLERR / EPOLLHUP ... as epoll reported them. */
typedef void (*rn_progress_fd_fn)(void *arg, int fd, uint32_t events);
typedef void (*rn_progress_timer_fn)(void *arg);

struct rn_progress_cfg {
	unsigned spin_us;    /* busy-poll window after activity; 0 = block at once */
	unsigned max_events; /* epoll batch size; 0 = 64 */
};
void rn_progress_cfg_default(struct rn_progress_cfg *cfg);

/* cfg NULL = defaults. 0, -ENOMEM, or the errno of epoll_create1 / eventfd. */
int rn_progress_create(const struct rn_progress_cfg *cfg, struct rn_progress **out);
/* Stops the thread if it runs (must not be called on the driving thread), drops every
 * registration without calling anything. NULL is ignored. */
void rn_progress_destroy(struct rn_progress *eng);

/* The window may be changed at any time; the driver picks it up at its next iteration. */
void rn_progress_set_spin_us(struct rn_progress *eng, unsigned us);
unsigned rn_progress_spin_us(const struct rn_progress *eng);

/* ---- hold (consumer-side progress, thread mode) ------------------------------------------ */
/* An application thread that busy-polls a CQ makes the receive progress of the QPs feeding it
 * itself (rn_device_cq_progress); the thread would only compete for the core. hold: for us
 * microseconds from now the thread does not watch the fds: it sleeps until the hold ends, a
 * timer is due or a doorbell rings, then makes one non-blocking pass over the fds (so fds no
 * consumer covers still move, one pass per hold period) and sleeps again while held. Repeated
 * calls extend the hold. unhold ends it at once (a consumer about to block). Any thread. */
void rn_progress_hold(struct rn_progress *eng, uint64_t now_ns, unsigned us);
/* Driver thread only: the callbacks running now belong to the one pass a hold makes per
 * period (rn_progress_hold): a consumer busy-polls, so an object it holds can wait. */
bool rn_progress_hold_pass(const struct rn_progress *eng);
void rn_progress_unhold(struct rn_progress *eng);
/* A consumer polled a CQ and made progress inline (any thread, cheap). The engine uses it to
 * tell a core taken by a spinning consumer that receives by itself from one taken by a
 * consumer that only spins on memory (see the busy-poll window above). */
void rn_progress_consumer_polled(struct rn_progress *eng, uint64_t now_ns);
/* The engine's clock, CLOCK_MONOTONIC ns, for the now_ns arguments above: a consumer's empty
 * poll calls both, and reads the clock once for them (a read is a noticeable part of a spin). */
uint64_t rn_progress_now_ns(void);

/* ---- fds (level-triggered) ---------------------------------------------------------------- */
/* -EEXIST when fd is registered already, -EINVAL for a bad fd or NULL fn, -ENOMEM, or the
 * errno of epoll_ctl. events may be 0 (registered, nothing awaited; note that epoll always
 * reports EPOLLERR / EPOLLHUP). */
int rn_progress_add(struct rn_progress *eng, int fd, uint32_t events, rn_progress_fd_fn fn,
		    void *arg);
/* Change the awaited events. -ENOENT when fd is not registered. */
int rn_progress_mod(struct rn_progress *eng, int fd, uint32_t events);
/* Remove fd; afterwards its callback is not running (unless del was called from it) and never
 * runs again. -ENOENT when fd is not registered. */
int rn_progress_del(struct rn_progress *eng, int fd);

/* ---- doorbell ----------------------------------------------------------------------------- */
/* Make the driver run an iteration soon (hooks' iter runs; the busy-poll window restarts).
 * Costs one eventfd write only when the driver is blocked; free while it spins. */
void rn_progress_wake(struct rn_progress *eng);

/* ---- timers (one-shot, owned by the caller) ------------------------------------------------- */
struct rn_progress_timer {
	/* private */
	rn_progress_timer_fn fn;
	void *arg;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC */
	uint64_t seq;         /* arm order: equal deadlines fire in arm order */
	struct rn_progress_timer *next;
	bool armed;
};
void rn_progress_timer_init(struct rn_progress_timer *t, rn_progress_timer_fn fn, void *arg);
/* Fire fn once, delay_us from now; re-arming an armed timer moves it. Any thread, also from
 * the timer's own callback. Timers fire in deadline order (ties: arm order). */
void rn_progress_timer_arm(struct rn_progress *eng, struct rn_progress_timer *t,
			   uint64_t delay_us);
/* Disarm. Afterwards fn is not running (unless called from it on the driving thread) and will
 * not run; the timer's memory may be freed. Returns true when it was armed. */
bool rn_progress_timer_cancel(struct rn_progress *eng, struct rn_progress_timer *t);

/* ---- hooks -------------------------------------------------------------------------------- */
/* Any member may be NULL. enter / leave bracket a driving thread's tenure (thread start and
 * exit; each rn_progress_poll call); iter runs once per loop iteration; block / unblock
 * bracket every blocking epoll_wait (a wait with timeout 0 is not blocking). */
struct rn_progress_hook {
	void (*enter)(void *arg);
	void (*iter)(void *arg);
	void (*block)(void *arg);
	void (*unblock)(void *arg);
	void (*leave)(void *arg);
	void *arg;
};
/* The hook object is the caller's and must live until removed. -EBUSY while driven. */
int rn_progress_hook_add(struct rn_progress *eng, struct rn_progress_hook *h);
int rn_progress_hook_del(struct rn_progress *eng, struct rn_progress_hook *h);

/* ---- driving ------------------------------------------------------------------------------ */
/* Start the engine's thread. -EBUSY when it runs already or a poll is in progress. */
int rn_progress_start(struct rn_progress *eng);
/* Stop and join the thread; from any thread except the engine's own (-EDEADLK). 0 also when
 * it was not running. Registrations stay; the engine can be started again or polled. */
int rn_progress_stop(struct rn_progress *eng);
bool rn_progress_running(const struct rn_progress *eng);
/* True on the thread driving eng right now (inside one of its callbacks or hooks). */
bool rn_progress_on_driver(const struct rn_progress *eng);

/* Inline mode: drive the engine from the calling thread until at least one callback, timer or
 * doorbell was handled, or timeout_ms passed (0: one non-blocking pass, < 0: no limit). No
 * busy-poll window: the caller chooses. Returns the number of callbacks and timers run
 * (doorbells count 1), or -EBUSY while the thread runs or another thread polls. */
int rn_progress_poll(struct rn_progress *eng, int timeout_ms);

/* ---- statistics (monotonic counters, for tests and tuning) --------------------------------- */
struct rn_progress_stats {
	uint64_t iterations;  /* loop passes */
	uint64_t blocks;      /* blocking epoll_waits entered */
	uint64_t fd_calls;    /* fd callbacks run */
	uint64_t timer_calls; /* timer callbacks run */
	uint64_t doorbells;   /* doorbells consumed (wakes may coalesce) */
	uint64_t efd_writes;  /* wakes that had to write the eventfd (driver was blocked) */
	uint64_t holds;       /* sleeps of a hold (rn_progress_hold) */
	uint64_t nospins;     /* windows turned off by a stalled yield (see the top) */
};
void rn_progress_get_stats(const struct rn_progress *eng, struct rn_progress_stats *s);

#endif
