/* The glue between connections and the progress engine (rn_device.h): attached objects (QPs)
 * and connection setups (rn_cm), both driven from engine callbacks.
 *
 * Every change of an attachment's engine registration happens on the driving thread, inside
 * a callback (fd event or the attachment's timer), under the attachment's lock; other threads
 * only arm the timer ("kick", delay 0). So registrations never race, and detach from another
 * thread only has to wait for callbacks (rn_progress_del / _timer_cancel do that).
 *
 * An attached object's fd is registered as it is, under a lease (rn_fdlease.h) taken
 * atomically with the object's own close of it (ops->fd_hold): the object may close its
 * stream at any time (the QP releases it from an application thread) and the number stays
 * open until we let go, so epoll never confuses two files and rn_progress never sees a
 * stale key, at no descriptor of our own (the open-file limit bounds the QPs a process can
 * have). The socket's final close (FIN / RST) waits until the engine lets go, which it
 * does at the next callback (the object's wake kicks it). A connection setup's fd is
 * registered as a dup (few are open at a time; its owner closes without a lease). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "rn_device_feed.h"
#include "rn_device_int.h"
#include "rn_fdlease.h"
#include "rn_qp.h"
#include "rn_transport.h"

struct rn_dev_conn {
	struct rn_device *dev;
	const struct rn_dev_conn_ops *ops;
	void *obj;
	pthread_mutex_t lock;
	bool detached, counted, parked;
	bool busy;                      /* driver: the last hold pass found obj locked */
	_Atomic uint64_t served_ns;     /* a consumer's poll last ran obj's work (try_progress) */
	atomic_bool live, gone;         /* attached / detaching: for consumer-side pins */
	atomic_uint pins;               /* consumer threads working on obj now */
	int src_fd;                     /* the object's fd, leased (-1: none) */
	bool registered;                /* src_fd is registered with the engine (not parked) */
	uint32_t events;
	struct rn_progress_timer kick;
	struct rn_dev_conn *next, *prev; /* dev->conns, under dev->lock */
	const struct rn_cq *fcq[2];     /* the CQs obj feeds (dev->feeds), NULL: none */
	atomic_uint fpos[2];            /* c's index among each one's feeders (dev->lock; read
	                                 * without it as a hint: rn_device_qp_posted) */
};

struct rn_dev_cm {
	struct rn_device *dev;
	struct rn_cm *cm;
	rn_device_cm_fn fn;
	void *arg;
	pthread_mutex_t lock;
	bool detached;
	int dfd;
	uint32_t events;
	enum rn_cm_state reported;
	struct rn_progress_timer timer; /* the CM's state deadline, and kicks */
	struct rn_dev_cm *next;         /* dev->cms, under dev->lock */
};

static int dup_fd(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

/* Lock held, on the driver: drop a connection setup's registration and our copy of its fd. */
static void drop_fd(struct rn_progress *eng, int *dfd)
{
	if (*dfd < 0)
		return;
	rn_progress_del(eng, *dfd);
	close(*dfd);
	*dfd = -1;
}

/* ---- attached objects (QPs) ------------------------------------------------------------- */
static void conn_io(void *arg, int fd, uint32_t ev);

static uint32_t conn_events(struct rn_dev_conn *c)
{
	return EPOLLIN | (c->ops->wants_write(c->obj) ? EPOLLOUT : 0);
}

/* Lock held, on the driver: drop an attached object's registration and our lease. */
static void conn_drop_fd(struct rn_dev_conn *c)
{
	if (c->src_fd < 0)
		return;
	if (c->registered)
		rn_progress_del(c->dev->eng, c->src_fd);
	c->registered = false;
	rn_fd_release(c->src_fd);
	c->src_fd = -1;
}

/* The object's fd with a lease on it, or -1. */
static int conn_fd_hold(struct rn_dev_conn *c)
{
	int fd;

	if (c->ops->fd_hold)
		return c->ops->fd_hold(c->obj);
	fd = c->ops->fd(c->obj); /* an object that closes its fd only after detach */
	return fd >= 0 && rn_fd_hold(fd) == 0 ? fd : -1;
}

/* Driver: make the registration match the object's fd and write interest. true when a new
 * stream was registered. */
static bool conn_rearm(struct rn_dev_conn *c)
{
	struct rn_progress *eng = c->dev->eng;
	bool fresh = false;
	int fd;

	pthread_mutex_lock(&c->lock);
	if (c->detached || !c->obj) {
		pthread_mutex_unlock(&c->lock);
		return false;
	}
	if (c->ops->fd(c->obj) != c->src_fd || c->src_fd < 0) {
		conn_drop_fd(c);
		c->parked = false;
		if ((fd = conn_fd_hold(c)) >= 0) {
			c->src_fd = fd;
			c->events = conn_events(c);
			c->registered = !rn_progress_add(eng, fd, c->events, conn_io, c);
			fresh = c->registered;
			if (!fresh)
				conn_drop_fd(c);
		}
	} else if (c->registered) {
		uint32_t ev = conn_events(c);
		if (ev != c->events && !rn_progress_mod(eng, c->src_fd, ev))
			c->events = ev;
	}
	pthread_mutex_unlock(&c->lock);
	return fresh;
}

/* Driver: a hung-up stream the object no longer reacts to would make a level-triggered loop;
 * stop watching it until the object wakes us with a new fd. */
static void conn_park(struct rn_dev_conn *c)
{
	pthread_mutex_lock(&c->lock);
	if (!c->detached && c->registered) {
		rn_progress_del(c->dev->eng, c->src_fd);
		c->registered = false; /* the lease stays: the number is still ours to compare */
		c->parked = true;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Driver, in a hold's pass (rn_progress_hold_pass): the consumer busy-polls and drives its
 * QPs. One that a consumer's poll ran within the hold period is left to it; one that a
 * consumer thread holds now is left once in a row (then the usual callbacks, which wait for
 * it, so none starves); others are run with try_progress. Waiting for a QP lock a consumer
 * holds wakes the engine at each of its unlocks, onto the consumer's core, often only to
 * lose the lock to it again (vipl-bw's sender: ~1600 such waits per 20000 x 64 KiB in ~300
 * passes). Left: no callback and no re-arm; level-triggered, the next pass (or the engine
 * after the hold) sees the fd again. */
enum hold_pass { HP_USUAL, HP_LEFT, HP_DONE };

static enum hold_pass conn_hold_pass(struct rn_dev_conn *c, int *did)
{
	bool was_busy = c->busy;
	int r;

	c->busy = false;
	if (!rn_progress_hold_pass(c->dev->eng) || !c->ops->try_progress)
		return HP_USUAL;
	if (rn_progress_now_ns() - atomic_load_explicit(&c->served_ns, memory_order_relaxed) <
	    RN_DEVICE_HOLD_US * 1000ull)
		return HP_LEFT;
	if (was_busy)
		return HP_USUAL;
	r = c->ops->try_progress(c->obj);
	c->busy = r < 0;
	*did = r > 0;
	return c->busy ? HP_LEFT : HP_DONE;
}

static void conn_io(void *arg, int fd, uint32_t ev)
{
	struct rn_dev_conn *c = arg;
	int did = 0;
	enum hold_pass hp = conn_hold_pass(c, &did);
	(void)fd;

	if (hp == HP_LEFT)
		return;
	/* the object released or replaced its stream: never call it for the old one */
	if (c->ops->fd(c->obj) != c->src_fd) {
		conn_rearm(c);
		return;
	}
	if (hp == HP_USUAL && (ev & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)))
		did |= c->ops->on_readable(c->obj);
	if (hp == HP_USUAL && (ev & (EPOLLOUT | EPOLLERR)))
		did |= c->ops->on_writable(c->obj);
	if (!did && (ev & (EPOLLERR | EPOLLHUP)))
		conn_park(c);
	else
		conn_rearm(c);
}

static void conn_kicked(void *arg)
{
	struct rn_dev_conn *c = arg;
	bool parked;

	pthread_mutex_lock(&c->lock);
	parked = c->parked;
	pthread_mutex_unlock(&c->lock);
	/* a wake after parking: the object has something new to say; look at it again */
	if (parked && c->ops->fd(c->obj) == c->src_fd) {
		pthread_mutex_lock(&c->lock);
		conn_drop_fd(c);
		c->parked = false;
		pthread_mutex_unlock(&c->lock);
	}
	/* A stream just handed over may come with input its connection setup already read off
	 * the socket (rn_cm_handoff rx: e.g. the peer's first Send right behind the MPA
	 * exchange). The fd will not turn readable for those octets, so read once now. */
	if (conn_rearm(c) && c->ops->on_readable(c->obj))
		conn_rearm(c);
}

enum rn_status rn_device_conn_alloc(struct rn_device *dev, const struct rn_dev_conn_ops *ops,
				    struct rn_dev_conn **out)
{
	struct rn_dev_conn *c;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (!ops || !ops->fd || !ops->on_readable || !ops->on_writable || !ops->wants_write)
		return RN_ERR_INVALID_MODIFIER;
	c = calloc(1, sizeof(*c));
	if (!c)
		return RN_ERR_NO_RESOURCES;
	c->dev = dev;
	c->ops = ops;
	c->src_fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	rn_progress_timer_init(&c->kick, conn_kicked, c);
	pthread_mutex_lock(&dev->lock);
	c->next = dev->conns;
	if (dev->conns)
		dev->conns->prev = c;
	dev->conns = c;
	dev->nconns++;
	pthread_mutex_unlock(&dev->lock);
	*out = c;
	return RN_OK;
}

/* dev->lock held: c joins the feeders of the CQs its object completes into. */
static enum rn_status feeds_add(struct rn_device *dev, struct rn_dev_conn *c)
{
	if (!c->ops->cqs || !c->ops->try_progress)
		return RN_OK;
	c->ops->cqs(c->obj, c->fcq);
	if (c->fcq[1] == c->fcq[0])
		c->fcq[1] = NULL;
	for (int k = 0; k < 2; k++) {
		if (c->fcq[k] && rn_feed_add(&dev->feeds, c->fcq[k], c, &c->fpos[k])) {
			for (int j = 0; j < k; j++)
				if (c->fcq[j])
					rn_feed_del(&dev->feeds, c->fcq[j], atomic_load(&c->fpos[j]));
			c->fcq[0] = c->fcq[1] = NULL;
			return RN_ERR_NO_RESOURCES;
		}
	}
	return RN_OK;
}

static void feeds_del(struct rn_device *dev, struct rn_dev_conn *c)
{
	for (int k = 0; k < 2; k++)
		if (c->fcq[k])
			rn_feed_del(&dev->feeds, c->fcq[k], atomic_load(&c->fpos[k]));
	c->fcq[0] = c->fcq[1] = NULL;
}

enum rn_status rn_device_conn_attach(struct rn_dev_conn *c, void *obj)
{
	if (!c || !obj)
		return RN_ERR_INVALID_MODIFIER;
	pthread_mutex_lock(&c->lock);
	c->obj = obj;
	pthread_mutex_unlock(&c->lock);
	/* out of memory for the index: the engine still serves obj, only a poll of its CQ
	 * will not run its work (consumer-side progress is an optimisation) */
	pthread_mutex_lock(&c->dev->lock);
	(void)feeds_add(c->dev, c);
	pthread_mutex_unlock(&c->dev->lock);
	atomic_store(&c->live, true);
	rn_device_engine_up(c->dev);
	rn_device_conn_wake(c);
	return RN_OK;
}

void rn_device_conn_wake(void *conn)
{
	struct rn_dev_conn *c = conn;

	pthread_mutex_lock(&c->lock);
	if (!c->detached && c->obj)
		rn_progress_timer_arm(c->dev->eng, &c->kick, 0);
	pthread_mutex_unlock(&c->lock);
}

void rn_device_conn_detach(struct rn_dev_conn *c)
{
	struct rn_progress *eng = c->dev->eng;

	pthread_mutex_lock(&c->lock);
	c->detached = true; /* from here no callback changes the registration */
	pthread_mutex_unlock(&c->lock);
	/* seq_cst pairs with conn_pin: a consumer either sees `gone` or we see its pin */
	atomic_store(&c->gone, true);
	while (atomic_load(&c->pins))
		sched_yield();
	rn_progress_timer_cancel(eng, &c->kick);
	conn_drop_fd(c); /* no callback runs any more: nobody else touches it */
}

void rn_device_conn_free(struct rn_dev_conn *c)
{
	struct rn_device *dev;

	if (!c)
		return;
	dev = c->dev;
	pthread_mutex_lock(&dev->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		dev->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	dev->nconns--;
	feeds_del(dev, c);
	if (c->counted)
		dev->nqp--;
	pthread_mutex_unlock(&dev->lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct rn_dev_conn *rn_device_conn_find(struct rn_device *dev, const void *obj, void *hint)
{
	struct rn_dev_conn *c = hint;

	pthread_mutex_lock(&dev->lock);
	if (!c || c->dev != dev || c->obj != obj)
		for (c = dev->conns; c && c->obj != obj; c = c->next)
			;
	pthread_mutex_unlock(&dev->lock);
	return c;
}

/* ---- consumer-side progress ------------------------------------------------------------ */
/* dev->lock held (c is not freed meanwhile): pin c's object against detach (and so against
 * its destroy, which follows detach). */
static bool conn_pin(struct rn_dev_conn *c)
{
	if (!c->ops->try_progress || !atomic_load(&c->live)) /* acquire: c->obj is set */
		return false;
	atomic_fetch_add(&c->pins, 1);
	if (!atomic_load(&c->gone))
		return true;
	atomic_fetch_sub(&c->pins, 1);
	return false;
}

/* The attached objects to progress from a poll of cq, pinned; at most max: those feeding cq
 * (from where the last poll of cq left off, so each gets its turn), then, on a device with
 * few attachments, the others. The others too because a busy-polling consumer holds the
 * engine's thread off (note_poll): a QP that completes elsewhere, or not at all (the
 * responder of RDMA Reads while the application polls another QP's CQ, as ib_read_lat's
 * server polls its handshake QP's CQ), would wait out every hold. Not on a device with many:
 * that walk would cost every empty poll time in the number of QPs open; there the hold's
 * passes (conn_hold_pass) serve them. */
static unsigned conns_pin_cq(struct rn_device *dev, const struct rn_cq *cq,
			     struct rn_dev_conn **out, unsigned max)
{
	void *feeders[RN_DEVICE_POLL_QPS];
	unsigned n = 0, k;

	pthread_mutex_lock(&dev->lock);
	k = rn_feed_take(&dev->feeds, cq, rn_cq_feed_hint(cq), feeders,
			 max < RN_DEVICE_POLL_QPS ? max : RN_DEVICE_POLL_QPS);
	for (unsigned i = 0; i < k; i++)
		if (conn_pin(feeders[i]))   /* first: c->obj is set only once it is live */
			out[n++] = feeders[i];
	for (struct rn_dev_conn *c = dev->conns;
	     dev->nconns <= RN_DEVICE_POLL_ALL && c && n < max; c = c->next) {
		if (c->fcq[0] == cq || c->fcq[1] == cq || !conn_pin(c))
			continue;
		out[n++] = c;
	}
	pthread_mutex_unlock(&dev->lock);
	return n;
}

/* A run of polls close together: a consumer busy-polling its CQ; hold the engine's thread.
 * One poll per round trip (ib_write_lat reaping between memory spins) is no run: that
 * consumer needs the thread to place what it spins on. Polls that found completions count
 * too: a consumer reaping a stream of them would otherwise never hold the thread, which then
 * keeps placing (and taking the socket's lock) beside it. So do polls that received what
 * they return. "Close together" is the time the consumer spent outside the device between
 * two calls: from the end of one call (a poll, or a post: rn_device_consumer_posted) to the
 * start of the next. A post does not extend the run, but a post that comes late ends it, so
 * a memory spinner (poll, spin, post, poll) never makes one. A streaming sender does: its
 * polls are a long post apart (a 64 KiB sendmsg), which from poll to poll would not look like
 * a run, and its engine would wake for every socket event only to block on the QP lock the
 * sender holds while it posts. Relaxed: a heuristic. */
static void note_call(struct rn_device *dev, uint64_t start, uint64_t end, bool poll)
{
	uint64_t prev = atomic_exchange_explicit(&dev->call_end_ns, end, memory_order_relaxed);
	/* signed: another thread's `end` may lie after this `start` */
	bool near = (int64_t)(start - prev) < RN_DEVICE_STREAK_NS;
	unsigned run;

	if (!poll) {
		if (!near)
			atomic_store_explicit(&dev->poll_run, 0, memory_order_relaxed);
		return;
	}
	run = near ? atomic_load_explicit(&dev->poll_run, memory_order_relaxed) + 1 : 0;
	atomic_store_explicit(&dev->poll_run, run, memory_order_relaxed);
	if (run >= RN_DEVICE_STREAK_RUN)
		rn_progress_hold(dev->eng, end, RN_DEVICE_HOLD_US);
}

int rn_device_cq_progress(struct rn_device *dev, const struct rn_cq *cq)
{
	struct rn_dev_conn *pinned[RN_DEVICE_POLL_QPS];
	unsigned n, reader;
	int did = 0;

	if (!rn_device_valid(dev) || !cq)
		return 0;
	uint64_t now = rn_progress_now_ns();
	/* An armed CQ's consumer waits on the channel next, for the engines to deliver: one try
	 * (a system call on kernel sockets) is worth it, eight are not, and neither engine may
	 * be held off for it, nor a user-space one driven from here (that holds its thread) */
	bool armed = rn_cq_armed(cq);
	n = conns_pin_cq(dev, cq, pinned, armed ? 1 : RN_DEVICE_POLL_QPS);
	if (n && !armed)
		rn_progress_consumer_polled(dev->eng, now);
	/* placement from this thread must hold up dereg like the engine's (rn_mem QSBR) */
	bool rd = n && rn_mem_reader_register(dev->mem, &reader) == RN_OK;
	/* a user-space engine's empty recv drives the engine from this thread (rn_transport.h) */
	rn_thread_set_cq_poller(rd && !armed);
	for (unsigned i = 0; i < n; i++) {
		int r = rd ? pinned[i]->ops->try_progress(pinned[i]->obj) : -1;

		if (r > 0)
			did++;
		if (r >= 0) /* its work ran here: a hold's pass may leave it (conn_hold_pass) */
			atomic_store_explicit(&pinned[i]->served_ns, now, memory_order_relaxed);
		atomic_fetch_sub(&pinned[i]->pins, 1);
	}
	rn_thread_set_cq_poller(false);
	if (rd)
		rn_mem_reader_unregister(dev->mem, reader);
	/* a poll that could drive nothing (no QP feeds cq, the device has too many to take the
	 * others) must not hold the engine's thread: nobody else would run their work */
	if (n && !armed)
		note_call(dev, now, did ? rn_progress_now_ns() : now, true);
	return did;
}

void rn_device_qp_posted(struct rn_qp *qp)
{
	struct rn_dev_conn *c = qp ? rn_qp_wake_arg(qp) : NULL;

	/* fcq is fixed while the QP lives; fpos may move under dev->lock (another feeder
	 * left): a stale index only makes the hint name another feeder */
	for (int k = 0; c && k < 2; k++)
		if (c->fcq[k])
			rn_cq_set_feed_hint((struct rn_cq *)c->fcq[k],
					    atomic_load_explicit(&c->fpos[k], memory_order_relaxed) + 1);
}

void rn_device_cq_reaped(struct rn_device *dev)
{
	uint64_t now = rn_progress_now_ns();

	if (rn_device_valid(dev))
		note_call(dev, now, now, true);
}

void rn_device_consumer_posted(struct rn_device *dev, uint64_t start)
{
	if (rn_device_valid(dev))
		note_call(dev, start, rn_progress_now_ns(), false);
}

void rn_device_consumer_blocks(struct rn_device *dev)
{
	if (rn_device_valid(dev)) {
		rn_progress_unhold(dev->eng);
		atomic_store_explicit(&dev->poll_run, 0, memory_order_relaxed); /* a new run */
	}
	rn_engine_consumer_blocks(); /* and the engine's hold for this consumer */
}

void rn_device_conn_set_counted(struct rn_dev_conn *c)
{
	c->counted = true;
}

/* ---- connection setup (rn_cm) --------------------------------------------------------- */
static void cm_io(void *arg, int fd, uint32_t ev);

static uint32_t cm_events(const struct rn_cm *cm)
{
	short pe = rn_cm_poll_events(cm);
	return (pe & POLLIN ? EPOLLIN : 0) | (pe & POLLOUT ? EPOLLOUT : 0);
}

/* Lock held, driver: registration and deadline after a step of the CM. */
static void cm_rearm_locked(struct rn_dev_cm *a)
{
	struct rn_progress *eng = a->dev->eng;
	int fd = rn_cm_fd(a->cm), tmo = rn_cm_timeout_ms(a->cm);
	uint32_t ev = fd >= 0 ? cm_events(a->cm) : 0;

	if (!ev) {
		drop_fd(eng, &a->dfd);
	} else if (a->dfd < 0) {
		if ((a->dfd = dup_fd(fd)) >= 0 && rn_progress_add(eng, a->dfd, ev, cm_io, a))
			drop_fd(eng, &a->dfd);
		a->events = ev;
	} else if (ev != a->events && !rn_progress_mod(eng, a->dfd, ev)) {
		a->events = ev;
	}
	if (tmo >= 0)
		rn_progress_timer_arm(eng, &a->timer, (uint64_t)tmo * 1000u);
	else
		rn_progress_timer_cancel(eng, &a->timer);
}

/* Driver: step the CM, re-arm, report a state change. The report is the last thing done:
 * the callback may detach (and so free) the attachment. */
static void cm_service(struct rn_dev_cm *a)
{
	enum rn_cm_state st;
	bool report;
	rn_device_cm_fn fn;
	void *arg;

	pthread_mutex_lock(&a->lock);
	if (a->detached) {
		pthread_mutex_unlock(&a->lock);
		return;
	}
	st = rn_cm_progress(a->cm);
	cm_rearm_locked(a);
	report = st != a->reported;
	a->reported = st;
	fn = a->fn;
	arg = a->arg;
	pthread_mutex_unlock(&a->lock);
	if (report && (st == RN_CM_FAILED || st == RN_CM_REJECTED))
		rn_stat_shared_add(&a->dev->stats->conn_setup_fails, 1);
	if (report && fn)
		fn(arg, a, st);
}

static void cm_io(void *arg, int fd, uint32_t ev)
{
	(void)fd;
	(void)ev;
	cm_service(arg);
}

static void cm_timer(void *arg)
{
	cm_service(arg);
}

enum rn_status rn_device_attach_cm(struct rn_device *dev, struct rn_cm *cm, rn_device_cm_fn fn,
				   void *arg, struct rn_dev_cm **out)
{
	struct rn_dev_cm *a;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (!cm || !out)
		return RN_ERR_INVALID_MODIFIER;
	a = calloc(1, sizeof(*a));
	if (!a)
		return RN_ERR_NO_RESOURCES;
	a->dev = dev;
	a->cm = cm;
	a->fn = fn;
	a->arg = arg;
	a->dfd = -1;
	a->reported = rn_cm_state(cm);
	pthread_mutex_init(&a->lock, NULL);
	rn_progress_timer_init(&a->timer, cm_timer, a);
	pthread_mutex_lock(&dev->lock);
	a->next = dev->cms;
	dev->cms = a;
	dev->ncm++;
	pthread_mutex_unlock(&dev->lock);
	*out = a;
	rn_device_engine_up(dev);
	/* the first step and the registration happen on the engine */
	rn_progress_timer_arm(dev->eng, &a->timer, 0);
	return RN_OK;
}

static int cm_decide(struct rn_dev_cm *a, bool accept, const void *pd, size_t len)
{
	int rc;

	pthread_mutex_lock(&a->lock);
	rc = accept ? rn_cm_accept(a->cm, pd, len) : rn_cm_reject(a->cm, pd, len);
	if (!a->detached)
		rn_progress_timer_arm(a->dev->eng, &a->timer, 0);
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int rn_device_cm_accept(struct rn_dev_cm *a, const void *pd, size_t pd_len)
{
	return cm_decide(a, true, pd, pd_len);
}

int rn_device_cm_reject(struct rn_dev_cm *a, const void *pd, size_t pd_len)
{
	return cm_decide(a, false, pd, pd_len);
}

struct rn_cm *rn_device_cm_get(struct rn_dev_cm *a)
{
	return a->cm;
}

struct rn_cm *rn_device_detach_cm(struct rn_dev_cm *a)
{
	struct rn_device *dev = a->dev;
	struct rn_cm *cm = a->cm;

	pthread_mutex_lock(&a->lock);
	a->detached = true;
	pthread_mutex_unlock(&a->lock);
	rn_progress_timer_cancel(dev->eng, &a->timer);
	if (a->dfd >= 0) {
		rn_progress_del(dev->eng, a->dfd);
		close(a->dfd);
	}
	pthread_mutex_lock(&dev->lock);
	for (struct rn_dev_cm **pp = &dev->cms; *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	dev->ncm--;
	pthread_mutex_unlock(&dev->lock);
	pthread_mutex_destroy(&a->lock);
	free(a);
	return cm;
}

/* ---- close ------------------------------------------------------------------------------ */
void rn_device_conns_close(struct rn_device *dev)
{
	while (dev->cms)
		rn_cm_destroy(rn_device_detach_cm(dev->cms));
	while (dev->conns) {
		struct rn_dev_conn *c = dev->conns;

		rn_device_conn_detach(c);
		if (c->obj && c->ops->destroy)
			c->ops->destroy(dev, c->obj);
		rn_device_conn_free(c);
	}
}
