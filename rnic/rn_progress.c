/* The progress engine: epoll loop, doorbell, timers, hooks, busy-poll window (rn_progress.h).
 *
 * Locking. One mutex (eng->lock) guards the fd table, the timer list and the "running" markers;
 * callbacks run without it. A registration removed while the driver is inside an iteration may
 * still sit in the batch epoll_wait returned, so its entry goes to a graveyard freed at the end
 * of the iteration; waiters for a running callback compare the running marker with the pointer
 * they removed and never dereference it, so the driver may free it at any time.
 *
 * Doorbell. `pending` has two bits: WAKE (a user rn_progress_wake, counts as activity) and
 * KICK (internal: a timer moved to the head, or stop). A waker writes the eventfd only when it
 * sets the first bit and the driver has announced it is going to sleep; the driver announces
 * (`sleeping` = 1) and then re-checks `pending` before it blocks. Both sides use seq_cst, so
 * either the waker sees `sleeping` or the driver sees `pending` (no lost wake-up). A pass that
 * takes any bit, KICK included, does not block: a kick asks the loop to look at its state
 * (`stop`, the hold) again, and that look comes after the pass. */
#include "rn_progress.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "rn_sync.h"

#define PEND_WAKE 1
#define PEND_KICK 2
#define MAX_HOOKS 8

enum mode { MODE_IDLE = 0, MODE_THREAD, MODE_INLINE };

struct fd_ent {
	int fd;
	uint32_t events;
	rn_progress_fd_fn fn;
	void *arg;
	bool dead;
	struct fd_ent *next_dead;
};

struct rn_progress {
	int epfd, efd;
	pthread_mutex_t lock;          /* table, timers, graveyard, running markers */
	pthread_cond_t idle_cond;      /* a running callback finished */
	unsigned waiters;
	struct fd_ent **byfd;
	int nbyfd;
	struct fd_ent *grave;
	bool in_iter;                  /* the driver may hold entry pointers */
	const void *running_ent;       /* fd entry whose callback runs now */
	const void *running_timer;
	struct rn_progress_timer *timers; /* sorted by (deadline, seq) */
	uint64_t tseq;

	struct rn_progress_hook *hooks[MAX_HOOKS];
	unsigned nhooks;

	pthread_mutex_t ctl;           /* serialises start / stop */
	atomic_int mode;
	atomic_uintptr_t driver;       /* thread marker of the driving thread, 0 if none */
	pthread_t thread;
	atomic_bool stop;
	atomic_int sleeping, pending;
	atomic_uint spin_us;
	_Atomic uint64_t hold_until;   /* CLOCK_MONOTONIC ns; see rn_progress_hold */
	_Atomic uint64_t consumer_ns;  /* last rn_progress_consumer_polled */
	atomic_bool holding;           /* the thread sleeps in a hold now */
	bool hold_pass;                /* the driver's pass right after a hold's sleep */
	unsigned max_events;
	struct epoll_event *evs;

	_Atomic uint64_t st_iter, st_blocks, st_fd, st_timer, st_bell, st_efd, st_hold,
		st_nospin;
};

static _Thread_local char tl_marker;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Counters written by the driver only: a plain relaxed increment, no locked instruction. */
static void bump(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

void rn_progress_cfg_default(struct rn_progress_cfg *cfg)
{
	cfg->spin_us = RN_PROGRESS_SPIN_DEFAULT_US;
	cfg->max_events = 64;
}

bool rn_progress_on_driver(const struct rn_progress *eng)
{
	return atomic_load(&eng->driver) == (uintptr_t)&tl_marker;
}

static void free_eng(struct rn_progress *eng)
{
	if (eng->epfd >= 0)
		close(eng->epfd);
	if (eng->efd >= 0)
		close(eng->efd);
	free(eng->evs);
	free(eng->byfd);
	free(eng);
}

static int init_fds(struct rn_progress *eng)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	eng->epfd = epoll_create1(EPOLL_CLOEXEC);
	eng->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (eng->epfd < 0 || eng->efd < 0)
		return -errno;
	/* data.ptr NULL marks the doorbell */
	if (epoll_ctl(eng->epfd, EPOLL_CTL_ADD, eng->efd, &ev))
		return -errno;
	return 0;
}

int rn_progress_create(const struct rn_progress_cfg *cfg, struct rn_progress **out)
{
	struct rn_progress_cfg def;
	struct rn_progress *eng = calloc(1, sizeof(*eng));
	int rc;

	*out = NULL;
	if (!eng)
		return -ENOMEM;
	if (!cfg) {
		rn_progress_cfg_default(&def);
		cfg = &def;
	}
	eng->epfd = eng->efd = -1;
	eng->max_events = cfg->max_events ? cfg->max_events : 64;
	atomic_init(&eng->spin_us, cfg->spin_us);
	eng->evs = calloc(eng->max_events, sizeof(*eng->evs));
	rc = eng->evs ? init_fds(eng) : -ENOMEM;
	if (!rc && (pthread_mutex_init(&eng->lock, NULL) || pthread_mutex_init(&eng->ctl, NULL)))
		rc = -ENOMEM;
	if (!rc && rn_cond_init(&eng->idle_cond))
		rc = -ENOMEM;
	if (rc) {
		free_eng(eng);
		return rc;
	}
	*out = eng;
	return 0;
}

void rn_progress_destroy(struct rn_progress *eng)
{
	if (!eng)
		return;
	rn_progress_stop(eng);
	for (int fd = 0; fd < eng->nbyfd; fd++)
		free(eng->byfd[fd]);
	while (eng->grave) {
		struct fd_ent *e = eng->grave;
		eng->grave = e->next_dead;
		free(e);
	}
	pthread_cond_destroy(&eng->idle_cond);
	pthread_mutex_destroy(&eng->lock);
	pthread_mutex_destroy(&eng->ctl);
	free_eng(eng);
}

void rn_progress_set_spin_us(struct rn_progress *eng, unsigned us)
{
	atomic_store(&eng->spin_us, us);
}

unsigned rn_progress_spin_us(const struct rn_progress *eng)
{
	return atomic_load(&((struct rn_progress *)eng)->spin_us);
}

uint64_t rn_progress_now_ns(void)
{
	return now_ns();
}

/* Only moves the deadline forward, and only by a useful step: a consumer calls this on every
 * empty poll, and a store per call would bounce the cache line with the engine's reads. */
void rn_progress_hold(struct rn_progress *eng, uint64_t now, unsigned us)
{
	uint64_t until = now + (uint64_t)us * 1000u;
	uint64_t cur = atomic_load_explicit(&eng->hold_until, memory_order_relaxed);

	if (until > cur + (uint64_t)us * 250u)
		atomic_store_explicit(&eng->hold_until, until, memory_order_relaxed);
}

/* Same cache-line care as hold: a store at most every 10 us. */
void rn_progress_consumer_polled(struct rn_progress *eng, uint64_t now)
{
	if (now > atomic_load_explicit(&eng->consumer_ns, memory_order_relaxed) + 10000u)
		atomic_store_explicit(&eng->consumer_ns, now, memory_order_relaxed);
}

/* ---- doorbell ------------------------------------------------------------------------------ */

static void ring(struct rn_progress *eng, int bit)
{
	if (atomic_fetch_or(&eng->pending, bit) == 0 && atomic_load(&eng->sleeping)) {
		rn_efd_raise(eng->efd);
		atomic_fetch_add_explicit(&eng->st_efd, 1, memory_order_relaxed);
	}
}

void rn_progress_wake(struct rn_progress *eng)
{
	ring(eng, PEND_WAKE);
}

bool rn_progress_hold_pass(const struct rn_progress *eng)
{
	return eng->hold_pass;
}

void rn_progress_unhold(struct rn_progress *eng)
{
	if (!atomic_load_explicit(&eng->hold_until, memory_order_relaxed))
		return;
	atomic_store(&eng->hold_until, 0);
	if (atomic_load(&eng->holding))
		ring(eng, PEND_KICK);
}

/* Driver: consume the doorbell; the bits that were pending (PEND_WAKE counts as activity,
 * PEND_KICK only asks the driver to look at its state again). */
static int take_doorbell(struct rn_progress *eng)
{
	int bits;

	if (!atomic_load_explicit(&eng->pending, memory_order_relaxed))
		return 0;
	bits = atomic_exchange(&eng->pending, 0);
	if (bits & PEND_WAKE)
		bump(&eng->st_bell, 1);
	return bits;
}

/* ---- fds ----------------------------------------------------------------------------------- */

static int grow_table(struct rn_progress *eng, int fd)
{
	int n = eng->nbyfd ? eng->nbyfd : 64;
	struct fd_ent **t;

	if (fd < eng->nbyfd)
		return 0;
	while (n <= fd)
		n *= 2;
	t = realloc(eng->byfd, (size_t)n * sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(t + eng->nbyfd, 0, (size_t)(n - eng->nbyfd) * sizeof(*t));
	eng->byfd = t;
	eng->nbyfd = n;
	return 0;
}

static struct fd_ent *lookup(struct rn_progress *eng, int fd)
{
	return fd >= 0 && fd < eng->nbyfd ? eng->byfd[fd] : NULL;
}

static int add_locked(struct rn_progress *eng, struct fd_ent *e)
{
	struct epoll_event ev = { .events = e->events, .data.ptr = e };
	int rc = grow_table(eng, e->fd);

	if (rc)
		return rc;
	if (eng->byfd[e->fd])
		return -EEXIST;
	if (epoll_ctl(eng->epfd, EPOLL_CTL_ADD, e->fd, &ev))
		return errno == EBADF || errno == EPERM ? -EINVAL : -errno;
	eng->byfd[e->fd] = e;
	return 0;
}

int rn_progress_add(struct rn_progress *eng, int fd, uint32_t events, rn_progress_fd_fn fn,
		    void *arg)
{
	struct fd_ent *e;
	int rc;

	if (fd < 0 || !fn)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->fd = fd;
	e->events = events;
	e->fn = fn;
	e->arg = arg;
	pthread_mutex_lock(&eng->lock);
	rc = add_locked(eng, e);
	pthread_mutex_unlock(&eng->lock);
	if (rc)
		free(e);
	return rc;
}

int rn_progress_mod(struct rn_progress *eng, int fd, uint32_t events)
{
	struct fd_ent *e;
	int rc = 0;

	pthread_mutex_lock(&eng->lock);
	e = lookup(eng, fd);
	if (!e) {
		rc = -ENOENT;
	} else if (e->events != events) {
		struct epoll_event ev = { .events = events, .data.ptr = e };

		if (epoll_ctl(eng->epfd, EPOLL_CTL_MOD, fd, &ev))
			rc = -errno;
		else
			e->events = events;
	}
	pthread_mutex_unlock(&eng->lock);
	return rc;
}

/* Lock held: until the callback of `p` (already unlinked) has returned. */
static void wait_not_running(struct rn_progress *eng, const void *p, const void *const *marker)
{
	if (rn_progress_on_driver(eng))
		return;
	eng->waiters++;
	while (*marker == p)
		pthread_cond_wait(&eng->idle_cond, &eng->lock);
	eng->waiters--;
}

int rn_progress_del(struct rn_progress *eng, int fd)
{
	struct fd_ent *e;

	pthread_mutex_lock(&eng->lock);
	e = lookup(eng, fd);
	if (!e) {
		pthread_mutex_unlock(&eng->lock);
		return -ENOENT;
	}
	eng->byfd[fd] = NULL;
	/* fails harmlessly when the fd was closed already (epoll dropped it) */
	epoll_ctl(eng->epfd, EPOLL_CTL_DEL, fd, NULL);
	e->dead = true;
	if (eng->in_iter) {
		e->next_dead = eng->grave;
		eng->grave = e;
	} else {
		free(e);
	}
	wait_not_running(eng, e, &eng->running_ent);
	pthread_mutex_unlock(&eng->lock);
	return 0;
}

static void callback_done(struct rn_progress *eng, const void **marker)
{
	pthread_mutex_lock(&eng->lock);
	*marker = NULL;
	if (eng->waiters)
		pthread_cond_broadcast(&eng->idle_cond);
	pthread_mutex_unlock(&eng->lock);
}

static int dispatch(struct rn_progress *eng, const struct epoll_event *ev)
{
	struct fd_ent *e = ev->data.ptr;
	rn_progress_fd_fn fn;
	void *arg;
	int fd;

	if (!e) { /* the doorbell: take_doorbell() reads `pending` */
		rn_efd_clear(eng->efd);
		return 0;
	}
	pthread_mutex_lock(&eng->lock);
	if (e->dead) {
		pthread_mutex_unlock(&eng->lock);
		return 0;
	}
	eng->running_ent = e;
	fn = e->fn;
	arg = e->arg;
	fd = e->fd;
	pthread_mutex_unlock(&eng->lock);
	fn(arg, fd, ev->events);
	callback_done(eng, &eng->running_ent);
	bump(&eng->st_fd, 1);
	return 1;
}

/* ---- timers -------------------------------------------------------------------------------- */

void rn_progress_timer_init(struct rn_progress_timer *t, rn_progress_timer_fn fn, void *arg)
{
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
}

static void timer_unlink(struct rn_progress *eng, struct rn_progress_timer *t)
{
	struct rn_progress_timer **pp = &eng->timers;

	while (*pp && *pp != t)
		pp = &(*pp)->next;
	if (*pp)
		*pp = t->next;
	t->next = NULL;
	t->armed = false;
}

static bool timer_before(const struct rn_progress_timer *a, const struct rn_progress_timer *b)
{
	return a->deadline_ns < b->deadline_ns ||
	       (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

void rn_progress_timer_arm(struct rn_progress *eng, struct rn_progress_timer *t,
			   uint64_t delay_us)
{
	struct rn_progress_timer **pp = &eng->timers;
	bool head;

	pthread_mutex_lock(&eng->lock);
	if (t->armed)
		timer_unlink(eng, t);
	t->deadline_ns = now_ns() + delay_us * 1000u;
	t->seq = ++eng->tseq;
	while (*pp && timer_before(*pp, t))
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
	t->armed = true;
	head = eng->timers == t;
	pthread_mutex_unlock(&eng->lock);
	/* a new earliest deadline shortens the driver's sleep */
	if (head && !rn_progress_on_driver(eng))
		ring(eng, PEND_KICK);
}

bool rn_progress_timer_cancel(struct rn_progress *eng, struct rn_progress_timer *t)
{
	bool was;

	pthread_mutex_lock(&eng->lock);
	was = t->armed;
	if (was)
		timer_unlink(eng, t);
	wait_not_running(eng, t, &eng->running_timer);
	pthread_mutex_unlock(&eng->lock);
	return was;
}

/* Fire due timers. Timers armed while this runs (a callback re-arming itself with delay 0)
 * wait for the next iteration, so the loop always ends. */
static int run_timers(struct rn_progress *eng)
{
	uint64_t now = now_ns(), seq_limit;
	int n = 0;

	pthread_mutex_lock(&eng->lock);
	seq_limit = eng->tseq;
	for (;;) {
		struct rn_progress_timer *t = eng->timers;
		rn_progress_timer_fn fn;
		void *arg;

		if (!t || t->deadline_ns > now || t->seq > seq_limit)
			break;
		eng->timers = t->next;
		t->next = NULL;
		t->armed = false;
		eng->running_timer = t;
		fn = t->fn;
		arg = t->arg;
		pthread_mutex_unlock(&eng->lock);
		fn(arg);
		callback_done(eng, &eng->running_timer);
		n++;
		pthread_mutex_lock(&eng->lock);
	}
	pthread_mutex_unlock(&eng->lock);
	bump(&eng->st_timer, (uint64_t)n);
	return n;
}

/* The epoll timeout bounded by the earliest deadline (rounded up to whole ms). */
static int timer_bound(struct rn_progress *eng, int timeout_ms)
{
	uint64_t now, d;
	int ms;

	pthread_mutex_lock(&eng->lock);
	if (!eng->timers) {
		pthread_mutex_unlock(&eng->lock);
		return timeout_ms;
	}
	d = eng->timers->deadline_ns;
	pthread_mutex_unlock(&eng->lock);
	now = now_ns();
	if (d <= now)
		return 0;
	d = (d - now + 999999u) / 1000000u;
	ms = d > 3600000u ? 3600000 : (int)d;
	return timeout_ms < 0 || ms < timeout_ms ? ms : timeout_ms;
}

/* ---- hooks --------------------------------------------------------------------------------- */

#define RUN_HOOKS(eng, member)                                                          \
	do {                                                                            \
		for (unsigned i_ = 0; i_ < (eng)->nhooks; i_++)                         \
			if ((eng)->hooks[i_]->member)                                  \
				(eng)->hooks[i_]->member((eng)->hooks[i_]->arg);       \
	} while (0)

/* The hook list is read by the driver without a lock: changing it claims the engine as if
 * for an inline poll, so no one can start driving meanwhile. */
static bool claim_idle(struct rn_progress *eng)
{
	int expect = MODE_IDLE;

	return !rn_progress_on_driver(eng) &&
	       atomic_compare_exchange_strong(&eng->mode, &expect, MODE_INLINE);
}

int rn_progress_hook_add(struct rn_progress *eng, struct rn_progress_hook *h)
{
	int rc = 0;

	if (!claim_idle(eng))
		return -EBUSY;
	if (eng->nhooks == MAX_HOOKS)
		rc = -ENOMEM;
	else
		eng->hooks[eng->nhooks++] = h;
	atomic_store(&eng->mode, MODE_IDLE);
	return rc;
}

int rn_progress_hook_del(struct rn_progress *eng, struct rn_progress_hook *h)
{
	int rc = -ENOENT;

	if (!claim_idle(eng))
		return -EBUSY;
	for (unsigned i = 0; i < eng->nhooks; i++) {
		if (eng->hooks[i] != h)
			continue;
		memmove(&eng->hooks[i], &eng->hooks[i + 1],
			(eng->nhooks - i - 1) * sizeof(eng->hooks[0]));
		eng->nhooks--;
		rc = 0;
		break;
	}
	atomic_store(&eng->mode, MODE_IDLE);
	return rc;
}

/* ---- the loop ------------------------------------------------------------------------------ */

static void set_in_iter(struct rn_progress *eng, bool on)
{
	pthread_mutex_lock(&eng->lock);
	eng->in_iter = on;
	if (!on) {
		while (eng->grave) {
			struct fd_ent *e = eng->grave;
			eng->grave = e->next_dead;
			free(e);
		}
	}
	pthread_mutex_unlock(&eng->lock);
}

/* Announce sleep, then re-check the doorbell: true when the driver may block. */
static bool prepare_block(struct rn_progress *eng)
{
	atomic_store(&eng->sleeping, 1);
	if (atomic_load(&eng->pending)) {
		atomic_store(&eng->sleeping, 0);
		return false;
	}
	RUN_HOOKS(eng, block);
	bump(&eng->st_blocks, 1);
	return true;
}

/* One pass: hooks, wait (timeout_ms: 0 poll, < 0 forever, > 0 ms), callbacks, timers.
 * Returns the activity seen (callbacks + timers + user doorbells). */
static int run_once(struct rn_progress *eng, int timeout_ms)
{
	int act, bell, n, tmo;
	bool blocking;

	bump(&eng->st_iter, 1);
	RUN_HOOKS(eng, iter);
	bell = take_doorbell(eng);
	act = (bell & PEND_WAKE) != 0;
	/* any bell, a kick too, means no blocking in this pass: the kick of rn_progress_stop
	 * comes after its `stop`, which the loop read before this pass; consumed here, the
	 * driver would otherwise block with no one left to wake it */
	tmo = bell ? 0 : timer_bound(eng, timeout_ms);
	blocking = tmo != 0 && prepare_block(eng);
	set_in_iter(eng, true);
	n = epoll_wait(eng->epfd, eng->evs, (int)eng->max_events, blocking ? tmo : 0);
	if (blocking) {
		atomic_store(&eng->sleeping, 0);
		RUN_HOOKS(eng, unblock);
	}
	for (int i = 0; i < n; i++)
		act += dispatch(eng, &eng->evs[i]);
	set_in_iter(eng, false);
	act += run_timers(eng);
	act += (take_doorbell(eng) & PEND_WAKE) != 0; /* a kick here: the loop looks next */
	return act;
}

static void become_driver(struct rn_progress *eng)
{
	atomic_store(&eng->driver, (uintptr_t)&tl_marker);
	RUN_HOOKS(eng, enter);
}

static void leave_driver(struct rn_progress *eng)
{
	RUN_HOOKS(eng, leave);
	atomic_store(&eng->driver, 0);
}

/* The sleep of a hold: until `until`, the first timer deadline or a doorbell, watching only
 * the doorbell's eventfd (ppoll for sub-millisecond resolution). */
static void hold_sleep(struct rn_progress *eng, uint64_t until)
{
	struct pollfd pfd = { .fd = eng->efd, .events = POLLIN };
	struct timespec ts;
	uint64_t now;

	pthread_mutex_lock(&eng->lock);
	if (eng->timers && eng->timers->deadline_ns < until)
		until = eng->timers->deadline_ns;
	pthread_mutex_unlock(&eng->lock);
	now = now_ns();
	if (until <= now || !prepare_block(eng))
		return;
	atomic_store(&eng->holding, true);
	ts.tv_sec = (time_t)((until - now) / 1000000000u);
	ts.tv_nsec = (long)((until - now) % 1000000000u);
	if (atomic_load(&eng->hold_until) && ppoll(&pfd, 1, &ts, NULL) > 0)
		rn_efd_clear(eng->efd);
	atomic_store(&eng->holding, false);
	atomic_store(&eng->sleeping, 0);
	RUN_HOOKS(eng, unblock);
	bump(&eng->st_hold, 1);
}

/* A yield that returns this late means the core went to a thread that does not yield (an
 * application spinning on memory, ib_write_lat's target): a runnable engine then waits out
 * that thread's whole time slice for every message, while a blocked engine that
 * is woken preempts it within microseconds (the scheduler favours a waking sleeper). So the
 * engine stops spinning for RN_PROGRESS_NOSPIN_NS and blocks right after each piece of work;
 * then it tries the window again. A consumer that yields, or a free core, keeps the window,
 * and so does one that polls its CQ while it spins (rn_progress_consumer_polled during the
 * stall): it receives by itself (consumer-side progress), a woken engine would only add a
 * context switch per message.
 * (A short custom slice, sched_attr.sched_runtime, is not used: it does not help the spinning
 * target and slows a yielding one.) */
#define RN_PROGRESS_YIELD_STALL_NS 300000u
#define RN_PROGRESS_NOSPIN_NS 50000000u

static void engine_yield(struct rn_progress *eng, uint64_t *nospin_until)
{
	uint64_t t0 = now_ns(), t1;

	sched_yield();
	t1 = now_ns();
	if (t1 - t0 > RN_PROGRESS_YIELD_STALL_NS &&
	    atomic_load_explicit(&eng->consumer_ns, memory_order_relaxed) < t0) {
		*nospin_until = t1 + RN_PROGRESS_NOSPIN_NS;
		bump(&eng->st_nospin, 1);
	}
}

/* Spin (timeout 0) while the last activity is younger than the window, then block. While
 * spinning, yield: on a core shared with the application (the 2-core model) a spinning
 * engine would otherwise keep the consumer of what it just placed off the CPU until the
 * window ends. During a hold (a consumer polls its CQ and progresses inline) sleep instead,
 * with one pass over the fds per hold period for everything the consumer does not cover. */
static void *engine_main(void *p)
{
	struct rn_progress *eng = p;
	uint64_t last = now_ns(), nospin_until = 0;

	become_driver(eng);
	while (!atomic_load(&eng->stop)) {
		uint64_t now = now_ns();
		uint64_t win = (uint64_t)atomic_load_explicit(&eng->spin_us,
							      memory_order_relaxed) * 1000u;
		uint64_t hold = atomic_load_explicit(&eng->hold_until, memory_order_relaxed);
		int tmo = now - last < win && now >= nospin_until ? 0 : -1, act;

		eng->hold_pass = now < hold;
		if (eng->hold_pass) {
			hold_sleep(eng, hold);
			tmo = 0;
		}
		act = run_once(eng, tmo);
		eng->hold_pass = false;
		if (act > 0)
			last = now_ns();
		else if (tmo == 0)
			engine_yield(eng, &nospin_until);
	}
	leave_driver(eng);
	return NULL;
}

int rn_progress_start(struct rn_progress *eng)
{
	int expect = MODE_IDLE, rc;

	if (rn_progress_on_driver(eng))
		return -EBUSY;
	pthread_mutex_lock(&eng->ctl);
	if (!atomic_compare_exchange_strong(&eng->mode, &expect, MODE_THREAD)) {
		pthread_mutex_unlock(&eng->ctl);
		return -EBUSY;
	}
	atomic_store(&eng->stop, false);
	rc = pthread_create(&eng->thread, NULL, engine_main, eng);
	if (rc)
		atomic_store(&eng->mode, MODE_IDLE);
	else
		pthread_setname_np(eng->thread, "srn-progress");
	pthread_mutex_unlock(&eng->ctl);
	return -rc;
}

int rn_progress_stop(struct rn_progress *eng)
{
	if (rn_progress_on_driver(eng))
		return -EDEADLK;
	pthread_mutex_lock(&eng->ctl);
	if (atomic_load(&eng->mode) != MODE_THREAD) {
		pthread_mutex_unlock(&eng->ctl);
		return 0;
	}
	atomic_store(&eng->stop, true);
	ring(eng, PEND_KICK);
	pthread_join(eng->thread, NULL);
	atomic_store(&eng->mode, MODE_IDLE);
	pthread_mutex_unlock(&eng->ctl);
	return 0;
}

bool rn_progress_running(const struct rn_progress *eng)
{
	return atomic_load(&((struct rn_progress *)eng)->mode) == MODE_THREAD;
}

static int poll_loop(struct rn_progress *eng, int timeout_ms)
{
	uint64_t end = timeout_ms > 0 ? now_ns() + (uint64_t)timeout_ms * 1000000u : 0;
	int act;

	for (;;) {
		int left = timeout_ms;

		if (timeout_ms > 0) {
			uint64_t now = now_ns();
			left = now >= end ? 0 : (int)((end - now + 999999u) / 1000000u);
		}
		act = run_once(eng, left);
		if (act || timeout_ms == 0 || (timeout_ms > 0 && now_ns() >= end))
			return act;
	}
}

int rn_progress_poll(struct rn_progress *eng, int timeout_ms)
{
	int act;

	if (!claim_idle(eng))
		return -EBUSY;
	become_driver(eng);
	act = poll_loop(eng, timeout_ms);
	leave_driver(eng);
	atomic_store(&eng->mode, MODE_IDLE);
	return act;
}

void rn_progress_get_stats(const struct rn_progress *eng, struct rn_progress_stats *s)
{
	struct rn_progress *e = (struct rn_progress *)eng;

	s->iterations = atomic_load(&e->st_iter);
	s->blocks = atomic_load(&e->st_blocks);
	s->fd_calls = atomic_load(&e->st_fd);
	s->timer_calls = atomic_load(&e->st_timer);
	s->doorbells = atomic_load(&e->st_bell);
	s->efd_writes = atomic_load(&e->st_efd);
	s->holds = atomic_load(&e->st_hold);
	s->nospins = atomic_load(&e->st_nospin);
}
