/* rn_device: open / query / close / reopen (T01), "RNIC in use", limits enforced, async
 * handler replacement and loss (T40), CM setups driven purely by the engine (establish,
 * reject, timeout through timers), attached connection objects (a fake one through the
 * rn_dev_conn interface, then real QPs exchanging a Send). Every wait is bounded. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rn_device.h"
#include "rn_device_int.h"
#include "rn_fdlease.h"
#include "rn_progress.h"
#include "rn_qp.h"
#include "test_cm_util.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static bool wait_for(atomic_int *v, int want)
{
	for (int i = 0; i < T_WAIT_MS && atomic_load(v) < want; i++)
		sleep_ms(1);
	return atomic_load(v) >= want;
}

static struct rn_device *open_dev(bool exclusive, const struct rn_device_attr *lim)
{
	struct rn_device_open_attr a;
	struct rn_device *dev;

	rn_device_open_attr_default(&a);
	a.exclusive = exclusive;
	a.limits = lim;
	assert_int_equal(rn_device_open(&a, &dev), RN_OK);
	return dev;
}

/* ---- T01 ----------------------------------------------------------------------------- */
static void test_open_query(void **state)
{
	(void)state;
	struct rn_device_open_attr a;
	struct rn_device *d1, *d2, *d3;
	struct rn_device_attr at;

	rn_device_open_attr_default(&a);
	a.name = "mlx5_0";
	assert_int_equal(rn_device_open(&a, &d2), RN_ERR_INVALID_MODIFIER);
	a.name = "softrnic9";
	assert_int_equal(rn_device_open(&a, &d2), RN_ERR_INVALID_MODIFIER);
	a.name = "softrnic1";
	a.pbl_mode = RN_PBL_BLOCK_LIST;
	assert_int_equal(rn_device_open(&a, &d2), RN_ERR_BLOCK_LIST_UNSUPPORTED);

	d1 = open_dev(true, NULL);
	assert_string_equal(rn_device_name(d1), "softrnic0");
	rn_device_open_attr_default(&a);
	a.exclusive = true;
	assert_int_equal(rn_device_open(&a, &d2), RN_ERR_RNIC_IN_USE);
	a.exclusive = false;
	assert_int_equal(rn_device_open(&a, &d2), RN_ERR_RNIC_IN_USE);
	a.name = "softrnic1"; /* another unit is free */
	assert_int_equal(rn_device_open(&a, &d2), RN_OK);
	assert_int_equal(rn_device_open(&a, &d3), RN_OK); /* shared: independent instances */
	assert_ptr_not_equal(d2, d3);
	a.exclusive = true;
	struct rn_device *dx;
	assert_int_equal(rn_device_open(&a, &dx), RN_ERR_RNIC_IN_USE);

	assert_int_equal(rn_device_query(d1, &at), RN_OK);
	assert_true(at.srq_supported);
	assert_true(at.max_srq > 0 && at.max_srq_wr > 0);
	assert_true(at.max_send_sge >= 4);
	assert_true(at.max_qp && at.max_qp_wr && at.max_cq && at.max_cqe && at.max_mr &&
		    at.max_pd && at.max_mw && at.max_ird && at.max_ord && at.max_ceh &&
		    at.max_pbl && at.max_write_sge && at.max_recv_sge);
	assert_int_equal(at.pbl_mode, RN_PBL_PAGE_LIST);
	assert_true(at.page_size_cap & (1u << 12));
	assert_true(at.cq_overflow_detection);
	assert_int_equal(at.spin_us, RN_PROGRESS_SPIN_DEFAULT_US);
	assert_int_equal(rn_device_query(NULL, &at), RN_ERR_INVALID_RNIC);

	assert_int_equal(rn_device_close(d2), RN_OK);
	assert_int_equal(rn_device_close(d3), RN_OK);
	assert_int_equal(rn_device_close(d1), RN_OK);
	assert_int_equal(rn_device_close(NULL), RN_ERR_INVALID_RNIC);
	d1 = open_dev(true, NULL); /* free again */
	assert_int_equal(rn_device_close(d1), RN_OK);
}

/* Allocate n of everything; returns how many of each succeeded. */
struct objs {
	uint32_t pd[8];
	rn_stag_t mr[8], mw[8];
	struct rn_cq *cq[8];
	struct rn_comp_channel *ch[8];
	struct rn_srq *srq[8];
	struct rn_qp *qp[8];
};

static int mk_qp(struct rn_device *dev, uint32_t pd, struct rn_cq *cq, struct rn_qp **qp)
{
	struct rn_qp_init_attr qa = { .pd = pd, .send_cq = cq, .recv_cq = cq, .sq_depth = 4,
				      .rq_depth = 4, .max_send_sge = 1, .max_write_sge = 1,
				      .max_recv_sge = 1, .ord = 1, .ird = 1, .inbound_write = true };
	return rn_device_qp_create(dev, &qa, qp, NULL);
}

static void alloc_all(struct rn_device *dev, struct objs *o, unsigned n, char *buf,
		      enum rn_status want)
{
	struct rn_mem *mem = rn_device_mem(dev);
	struct rn_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	uint32_t got;

	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(rn_mem_pd_alloc(mem, &o->pd[i]), want);
		assert_int_equal(rn_device_channel_create(dev, &o->ch[i]), want);
		assert_int_equal(rn_device_cq_create(dev, 8, want ? NULL : o->ch[i], NULL,
						     &o->cq[i], &got), want);
		if (want)
			continue;
		assert_int_equal(rn_mem_reg_mr(mem, o->pd[i], buf, 4096, (uintptr_t)buf,
					       RN_ACC_LOCAL_WRITE, &o->mr[i]), RN_OK);
		assert_int_equal(rn_mem_alloc_mw(mem, o->pd[i], RN_MW_TYPE1, &o->mw[i]), RN_OK);
		sa.pd = o->pd[i];
		assert_int_equal(rn_device_srq_create(dev, &sa, &o->srq[i], NULL, NULL), RN_OK);
		assert_int_equal(mk_qp(dev, o->pd[i], o->cq[i], &o->qp[i]), RN_OK);
	}
}

static void test_close_live_reopen(void **state)
{
	(void)state;
	static char buf[4096];
	struct rn_device_attr lim = { .max_pd = 3, .max_cq = 3, .max_ceh = 3, .max_srq = 3,
				      .max_qp = 3, .max_mr = 3, .max_mw = 3 };
	struct objs o;
	struct rn_device_counts c;
	struct rn_device *dev = open_dev(true, &lim);

	alloc_all(dev, &o, 3, buf, RN_OK);
	rn_device_counts(dev, &c);
	assert_int_equal(c.qp, 3);
	assert_int_equal(c.cq, 3);
	assert_int_equal(c.srq, 3);
	assert_int_equal(c.channel, 3);
	/* an async event taken and never acked must not hang close */
	assert_int_equal(rn_device_post_event(dev, RN_AE_RNIC_CATASTROPHIC), RN_OK);
	struct rn_async_event ev;
	assert_int_equal(rn_device_async_get(dev, &ev, 0), 0);
	assert_int_equal(ev.id, RN_AE_RNIC_CATASTROPHIC);
	assert_ptr_equal(ev.handle, dev);
	assert_int_equal(rn_device_close(dev), RN_OK);

	dev = open_dev(true, &lim);
	alloc_all(dev, &o, 3, buf, RN_OK); /* up to the previous counts */
	assert_int_equal(rn_device_close(dev), RN_OK);
}

/* ---- limits ---------------------------------------------------------------------------- */
static void test_limits(void **state)
{
	(void)state;
	static char buf[4096];
	struct rn_device_attr lim = { .max_pd = 2, .max_cq = 2, .max_ceh = 2, .max_srq = 2,
				      .max_qp = 2, .max_mr = 2, .max_mw = 2, .max_cqe = 64 };
	struct objs o;
	struct rn_device *dev = open_dev(false, &lim);
	struct rn_mem *mem = rn_device_mem(dev);
	struct rn_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	struct rn_cq *cq;
	struct rn_srq *srq;
	struct rn_qp *qp;
	rn_stag_t s;
	uint32_t pd, got;

	alloc_all(dev, &o, 2, buf, RN_OK);
	assert_int_equal(rn_mem_pd_alloc(mem, &pd), RN_ERR_NO_RESOURCES);
	assert_int_equal(rn_device_cq_create(dev, 8, NULL, NULL, &cq, &got), RN_ERR_NO_RESOURCES);
	struct rn_comp_channel *ch;
	assert_int_equal(rn_device_channel_create(dev, &ch), RN_ERR_NO_RESOURCES);
	sa.pd = o.pd[0];
	assert_int_equal(rn_device_srq_create(dev, &sa, &srq, NULL, NULL), RN_ERR_NO_RESOURCES);
	assert_int_equal(mk_qp(dev, o.pd[0], o.cq[0], &qp), RN_ERR_NO_RESOURCES);
	assert_int_equal(rn_mem_reg_mr(mem, o.pd[0], buf, 64, (uintptr_t)buf, RN_ACC_LOCAL_WRITE,
				       &s), RN_ERR_NO_RESOURCES);
	assert_int_equal(rn_mem_alloc_mw(mem, o.pd[0], RN_MW_TYPE1, &s), RN_ERR_NO_RESOURCES);
	/* a failed QP create (bad PD) does not count */
	assert_int_equal(rn_device_qp_destroy(dev, o.qp[1]), RN_OK);
	assert_int_equal(mk_qp(dev, 999, o.cq[0], &qp), RN_ERR_INVALID_PD);
	assert_int_equal(mk_qp(dev, o.pd[0], o.cq[0], &qp), RN_OK);
	assert_int_equal(rn_device_qp_destroy(dev, NULL), RN_ERR_INVALID_QP);
	/* CQ in use by a QP; destroy the QP first, then a CQ slot is free again */
	assert_int_equal(rn_device_srq_destroy(dev, o.srq[1]), RN_OK);
	assert_int_equal(rn_device_srq_destroy(dev, o.srq[1]), RN_ERR_INVALID_SRQ);
	assert_int_equal(rn_device_srq_create(dev, &sa, &srq, NULL, NULL), RN_OK);
	assert_int_equal(rn_device_channel_destroy(dev, o.ch[0]), RN_ERR_CQ_IN_USE);
	assert_int_equal(rn_device_cq_destroy(dev, o.cq[0]), RN_ERR_CQ_IN_USE);
	/* CQ size over max_cqe */
	assert_int_equal(rn_device_qp_destroy(dev, qp), RN_OK);
	assert_int_equal(rn_device_qp_destroy(dev, o.qp[0]), RN_OK);
	assert_int_equal(rn_device_cq_destroy(dev, o.cq[1]), RN_OK);
	assert_int_equal(rn_device_cq_create(dev, 65, NULL, NULL, &cq, &got), RN_ERR_CQ_TOO_BIG);
	assert_int_equal(rn_device_cq_create(dev, 64, NULL, NULL, &cq, &got), RN_OK);
	assert_int_equal(got, 64);
	assert_int_equal(rn_device_close(dev), RN_OK);
}

/* ---- async events: handler replacement, loss with no handler (T40) --------------------- */
struct ah {
	atomic_int calls;
	enum rn_event_id last;
};

static void ah_fn(struct rn_device *dev, const struct rn_async_event *ev, void *arg)
{
	struct ah *h = arg;
	(void)dev;
	h->last = ev->id;
	atomic_fetch_add(&h->calls, 1);
}

static void test_T40_async_handler(void **state)
{
	(void)state;
	struct rn_device *dev = open_dev(false, NULL);
	struct ah h1 = { 0 }, h2 = { 0 }, h3 = { 0 };
	struct rn_async_event ev;

	/* queue mode: kept until someone looks */
	assert_int_equal(rn_device_async_get(dev, &ev, 0), EAGAIN);
	assert_int_equal(rn_device_post_event(dev, RN_AE_RNIC_CATASTROPHIC), RN_OK);
	assert_int_equal(rn_device_post_event(dev, RN_AE_RNIC_CATASTROPHIC), RN_OK);
	assert_int_equal(rn_device_async_get(dev, &ev, 0), 0);
	rn_device_async_ack(dev, &ev);
	/* the first handler receives what is still queued */
	assert_int_equal(rn_device_set_async_handler(dev, ah_fn, &h1), RN_OK);
	assert_true(wait_for(&h1.calls, 1));
	assert_int_equal(rn_device_async_get(dev, &ev, 0), EINVAL);
	/* replaced: only the new one is called */
	assert_int_equal(rn_device_set_async_handler(dev, ah_fn, &h2), RN_OK);
	assert_int_equal(rn_device_post_event(dev, RN_AE_RNIC_CATASTROPHIC), RN_OK);
	assert_true(wait_for(&h2.calls, 1));
	assert_int_equal(h2.last, RN_AE_RNIC_CATASTROPHIC);
	/* no handler: events are lost, also for a handler set later */
	assert_int_equal(rn_device_set_async_handler(dev, NULL, NULL), RN_OK);
	assert_int_equal(rn_device_post_event(dev, RN_AE_RNIC_CATASTROPHIC), RN_OK);
	for (int i = 0; i < 1000 && rn_evq_pending(rn_device_evq(dev)); i++)
		sleep_ms(1);
	assert_int_equal(rn_evq_pending(rn_device_evq(dev)), 0);
	assert_int_equal(rn_device_set_async_handler(dev, ah_fn, &h3), RN_OK);
	sleep_ms(30);
	assert_int_equal(atomic_load(&h3.calls), 0);
	assert_int_equal(atomic_load(&h1.calls), 1);
	assert_int_equal(atomic_load(&h2.calls), 1);
	assert_int_equal(rn_device_close(dev), RN_OK);
}

/* ---- a fake connection object through rn_dev_conn_ops --------------------------------- */
struct fake {
	int fd;               /* what fd() reports */
	atomic_int reads, writes;
	atomic_bool want_w;
};

static int f_fd(void *o) { return ((struct fake *)o)->fd; }
static int f_readable(void *o)
{
	struct fake *f = o;
	char b[64];
	atomic_fetch_add(&f->reads, 1);
	return read(f->fd, b, sizeof(b)) > 0;
}
static int f_writable(void *o)
{
	atomic_fetch_add(&((struct fake *)o)->writes, 1);
	return 1;
}
static bool f_wants(void *o) { return atomic_load(&((struct fake *)o)->want_w); }
static const struct rn_dev_conn_ops fake_ops = { f_fd, f_readable, f_writable, f_wants, NULL };

/* A fake on one end of a fresh socketpair sp, attached to dev; sp2 is a second fresh pair the
 * test may switch the fake to. */
static struct rn_dev_conn *fake_conn(struct rn_device *dev, struct fake *f, int sp[2], int sp2[2])
{
	struct rn_dev_conn *c;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp2), 0);
	f->fd = sp[0];
	assert_int_equal(rn_device_conn_alloc(dev, &fake_ops, &c), RN_OK);
	assert_int_equal(rn_device_conn_attach(c, f), RN_OK);
	return c;
}

static void test_conn_fake(void **state)
{
	(void)state;
	struct rn_device *dev = open_dev(false, NULL);
	struct fake f = { 0 };
	int sp[2], sp2[2];
	struct rn_dev_conn *c = fake_conn(dev, &f, sp, sp2);

	assert_true(rn_progress_running(rn_device_engine(dev))); /* started lazily */
	assert_int_equal(write(sp[1], "a", 1), 1);
	assert_true(wait_for(&f.reads, 1));
	assert_int_equal(atomic_load(&f.writes), 0); /* no EPOLLOUT interest */
	/* wants_write: the next callback re-arms with EPOLLOUT (a wake gets it looked at) */
	atomic_store(&f.want_w, true);
	rn_device_conn_wake(c);
	assert_true(wait_for(&f.writes, 3));
	atomic_store(&f.want_w, false);
	sleep_ms(10); /* the running callbacks re-arm without EPOLLOUT */
	int w = atomic_load(&f.writes);
	sleep_ms(30);
	assert_true(atomic_load(&f.writes) <= w + 1);
	/* the object switches streams: the engine follows after a wake */
	f.fd = sp2[0];
	rn_device_conn_wake(c);
	sleep_ms(20);
	int r = atomic_load(&f.reads);
	assert_int_equal(write(sp2[1], "b", 1), 1);
	assert_true(wait_for(&f.reads, r + 1));
	/* detach: no callback afterwards */
	rn_device_conn_detach(c);
	r = atomic_load(&f.reads);
	assert_int_equal(write(sp2[1], "c", 1), 1);
	rn_device_conn_wake(c); /* a no-op now */
	sleep_ms(30);
	assert_int_equal(atomic_load(&f.reads), r);
	rn_device_conn_free(c);
	assert_int_equal(rn_device_close(dev), RN_OK);
	close(sp[0]);
	close(sp[1]);
	close(sp2[0]);
	close(sp2[1]);
}

/* ---- the engine under a busy-polling consumer (rn_device_cq_progress) ----------------------- */
struct busy_fake {
	struct fake f;        /* first: the fake ops take the same pointer */
	atomic_bool busy;     /* try_progress finds the object locked */
	atomic_int tries, busy_tries, try_reads;
	pthread_t consumer;   /* the test's thread: its tries are the consumer's polls */
	atomic_int consumer_tries;
};

static int bf_try(void *o)
{
	struct busy_fake *b = o;
	atomic_fetch_add(&b->tries, 1);
	if (pthread_equal(pthread_self(), b->consumer))
		atomic_fetch_add(&b->consumer_tries, 1);
	if (atomic_load(&b->busy)) {
		atomic_fetch_add(&b->busy_tries, 1);
		return -EBUSY;
	}
	int r = f_readable(o);
	if (r > 0)
		atomic_fetch_add(&b->try_reads, 1);
	return r;
}
static void bf_cqs(void *o, const struct rn_cq *out[2])
{
	(void)o;
	out[0] = out[1] = NULL; /* feeds no CQ */
}
static const struct rn_dev_conn_ops busy_ops = { f_fd, f_readable, f_writable, f_wants, NULL,
						 bf_cqs, bf_try };

/* A busy_fake on one end of a fresh socketpair, attached to dev; and its end (the device
 * closed with it). */
static struct rn_dev_conn *busy_conn(struct rn_device *dev, struct busy_fake *b, int sp[2])
{
	struct rn_dev_conn *c;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp), 0);
	b->f.fd = sp[0];
	b->consumer = pthread_self();
	assert_int_equal(rn_device_conn_alloc(dev, &busy_ops, &c), RN_OK);
	assert_int_equal(rn_device_conn_attach(c, b), RN_OK);
	return c;
}

static void busy_conn_end(struct rn_device *dev, struct rn_dev_conn *c, const int sp[2])
{
	rn_device_consumer_blocks(dev);
	rn_device_conn_detach(c);
	rn_device_conn_free(c);
	assert_int_equal(rn_device_close(dev), RN_OK);
	close(sp[0]);
	close(sp[1]);
}

/* A consumer that busy-polls: polls that reap, back to back, hold the engine. */
static void consumer_polls(struct rn_device *dev)
{
	for (int i = 0; i < 8; i++)
		rn_device_cq_reaped(dev);
}

/* Tries of the object that did not come from the test's own thread: the engine's. */
static int engine_tries(struct busy_fake *b)
{
	return atomic_load(&b->tries) - atomic_load(&b->consumer_tries);
}

/* Keep the engine held for up to ms, until *v > old. */
static bool held_until(struct rn_device *dev, atomic_int *v, int old, unsigned ms)
{
	struct timespec ts = { 0, 200000 };
	for (unsigned i = 0; i < ms * 5 && atomic_load(v) <= old; i++) {
		consumer_polls(dev);
		nanosleep(&ts, NULL);
	}
	return atomic_load(v) > old;
}

/* In a hold the engine makes one pass over its fds per period. It runs an object's work
 * with try_progress there; one that is busy (a consumer thread holds it) is skipped once,
 * then served as usual: never starved, never queued for at once. Attempts repeat because a
 * preempted test thread can let the hold lapse (then on_readable reads directly). */
static void test_conn_hold_pass(void **state)
{
	(void)state;
	struct rn_device *dev = open_dev(false, NULL);
	struct busy_fake b = { 0 };
	int sp[2];
	struct rn_dev_conn *c = busy_conn(dev, &b, sp);
	bool tried = false, skipped = false;

	for (int i = 0; i < 20 && !tried; i++) {
		int tr = atomic_load(&b.try_reads), r = atomic_load(&b.f.reads);
		assert_int_equal(write(sp[1], "a", 1), 1);
		tried = held_until(dev, &b.try_reads, tr, 50);
		assert_true(wait_for(&b.f.reads, r + 1));
	}
	assert_true(tried);
	atomic_store(&b.busy, true);
	for (int i = 0; i < 20 && !skipped; i++) {
		int bt = atomic_load(&b.busy_tries), r = atomic_load(&b.f.reads);
		assert_int_equal(write(sp[1], "b", 1), 1);
		held_until(dev, &b.f.reads, r, 50);
		assert_true(wait_for(&b.f.reads, r + 1)); /* busy or not, the byte is read */
		skipped = atomic_load(&b.busy_tries) > bt;
	}
	assert_true(skipped);
	busy_conn_end(dev, c, sp);
}

/* A QP whose work a consumer's poll ran within the hold period is left to it by the hold's
 * pass: the engine does not even try it. Counted as the engine's tries between two of its
 * hold sleeps while the test thread polls every 200 us; a phase in which the test thread was
 * preempted long enough for the engine to step in is run again. */
static void test_conn_hold_leaves_served(void **state)
{
	(void)state;
	struct rn_device *dev = open_dev(false, NULL);
	struct rn_progress *eng = rn_device_engine(dev);
	struct busy_fake b = { 0 };
	int sp[2];
	struct rn_dev_conn *c = busy_conn(dev, &b, sp);
	struct rn_cq *cq;
	struct rn_progress_stats st;
	struct timespec ts = { 0, 200000 };
	uint32_t got;
	bool left = false;
	static char junk[4096];

	assert_int_equal(rn_device_cq_create(dev, 8, NULL, NULL, &cq, &got), RN_OK);
	for (int i = 0; i < 10 && !left; i++) {
		int et = engine_tries(&b);
		int r = atomic_load(&b.f.reads);
		rn_progress_get_stats(eng, &st);
		uint64_t h = st.holds;
		/* 4 KiB: 64 octets a read keep the fd readable through the phase */
		assert_int_equal(write(sp[1], junk, sizeof(junk)), (ssize_t)sizeof(junk));
		for (int k = 0; k < 100; k++) {  /* ~20 ms, ~10 hold periods */
			consumer_polls(dev);
			rn_device_cq_progress(dev, cq); /* empty: runs the fake's work here */
			nanosleep(&ts, NULL);
		}
		while (read(sp[0], junk, sizeof(junk)) > 0) /* what is left */
			;
		rn_progress_get_stats(eng, &st);
		left = st.holds >= h + 3 && atomic_load(&b.f.reads) > r &&
		       engine_tries(&b) == et;
	}
	assert_true(left);
	busy_conn_end(dev, c, sp);
}

/* The busy-poll run counts the time the consumer spends outside the device between calls: a
 * post right behind a poll keeps the run going however long the post takes (a streaming
 * sender, whose polls are a long post apart), a post that comes late ends it (a consumer
 * spinning on memory between its calls never holds the engine). Seen through the engine's
 * hold sleeps (rn_progress stats). */
static void test_hold_counts_posts(void **state)
{
	(void)state;
	struct rn_device *dev = open_dev(false, NULL);
	struct rn_progress *eng = rn_device_engine(dev);
	struct rn_progress_stats st;
	struct timespec gap = { 0, 50000 };
	bool held = false;

	/* late posts: a poll, 50 us outside, a post, a poll right behind it, ... never a run */
	rn_progress_get_stats(eng, &st);
	uint64_t h0 = st.holds;
	for (int i = 0; i < 40; i++) {
		rn_device_cq_reaped(dev);
		nanosleep(&gap, NULL);
		rn_device_consumer_posted(dev, rn_progress_now_ns());
		rn_device_cq_reaped(dev);
		nanosleep(&gap, NULL);
	}
	rn_progress_wake(eng); /* the engine loops once: a hold would put it to sleep */
	sleep_ms(10);
	rn_progress_get_stats(eng, &st);
	assert_int_equal(st.holds, h0);
	/* long posts right behind polls: the post's 50 us are the device's, a run it is */
	for (int i = 0; i < 20 && !held; i++) {
		for (int k = 0; k < 6; k++) {
			uint64_t start = rn_progress_now_ns();
			nanosleep(&gap, NULL);
			rn_device_consumer_posted(dev, start);
			rn_device_cq_reaped(dev);
		}
		rn_progress_wake(eng);
		sleep_ms(5);
		rn_progress_get_stats(eng, &st);
		held = st.holds > h0;
	}
	assert_true(held);
	rn_device_consumer_blocks(dev);
	assert_int_equal(rn_device_close(dev), RN_OK);
}

/* A stream newly handed to an object may come with input already read off its socket (the
 * CM's handoff rx): the engine calls on_readable once for a new fd, readable or not. */
static void test_conn_fresh_fd_read(void **state)
{
	(void)state;
	struct rn_device *dev = open_dev(false, NULL);
	struct fake f = { 0 };
	int sp[2], sp2[2];
	struct rn_dev_conn *c = fake_conn(dev, &f, sp, sp2);

	assert_true(wait_for(&f.reads, 1));   /* nothing was written */
	sleep_ms(20);
	assert_int_equal(atomic_load(&f.reads), 1);   /* once, not in a loop */
	f.fd = sp2[0];   /* Idle -> RTS: a new stream */
	rn_device_conn_wake(c);
	assert_true(wait_for(&f.reads, 2));
	rn_device_conn_detach(c);
	rn_device_conn_free(c);
	assert_int_equal(rn_device_close(dev), RN_OK);
	close(sp[0]);
	close(sp[1]);
	close(sp2[0]);
	close(sp2[1]);
}

/* ---- CM setups driven by the engine --------------------------------------------------- */
enum srv_mode { SRV_ACCEPT, SRV_REJECT };

struct side {
	struct rn_device *dev;
	atomic_int done;         /* a settled state was reported */
	enum rn_cm_state state;
	int err;
	struct rn_cm_handoff h;
	bool have_h;
	bool saw_wait_accept;
	enum srv_mode mode;
	bool on_driver;
};

static void settle(struct side *s, struct rn_dev_cm *att, enum rn_cm_state st)
{
	struct rn_cm *cm = rn_device_detach_cm(att); /* from the callback: no wait */

	s->state = st;
	s->err = rn_cm_error(cm);
	if (st == RN_CM_ESTABLISHED && rn_cm_handoff(cm, &s->h) == 0)
		s->have_h = true;
	rn_cm_destroy(cm);
	atomic_store(&s->done, 1);
}

static void cm_cb(void *arg, struct rn_dev_cm *att, enum rn_cm_state st)
{
	struct side *s = arg;

	s->on_driver = rn_progress_on_driver(rn_device_engine(s->dev));
	if (st == RN_CM_WAIT_ACCEPT) {
		s->saw_wait_accept = true;
		if (s->mode == SRV_ACCEPT)
			assert_int_equal(rn_device_cm_accept(att, "srv", 3), 0);
		else
			assert_int_equal(rn_device_cm_reject(att, "no", 2), 0);
		return;
	}
	if (st == RN_CM_ESTABLISHED || st == RN_CM_REJECTED || st == RN_CM_FAILED)
		settle(s, att, st);
}

struct listener {
	struct rn_conn *lis;
	struct side *srv;
	struct rn_cm_cfg cfg;
	bool raw;             /* accept the stream and never speak MPA (timeouts) */
	struct rn_conn *raw_conn;
};

/* The listener's fd on the engine: each pending stream becomes a passive CM. */
static void lis_cb(void *arg, int fd, uint32_t ev)
{
	struct listener *l = arg;
	struct rn_conn *c;
	struct rn_cm *cm;
	struct rn_dev_cm *att;
	(void)fd;
	(void)ev;

	while (rn_conn_accept(l->lis, &c) == 0) {
		if (l->raw) {
			l->raw_conn = c;
			continue;
		}
		assert_int_equal(rn_cm_passive(c, &l->cfg, &cm), 0);
		assert_int_equal(rn_device_attach_cm(l->srv->dev, cm, cm_cb, l->srv, &att), RN_OK);
	}
}

static struct rn_conn *listen_on(struct rn_device *dev, struct listener *l)
{
	struct sockaddr_in a = t_addr4("127.0.0.1", 0);

	assert_int_equal(rn_tp_listen(rn_sock_transport(), (struct sockaddr *)&a, sizeof(a), 8,
				      &l->lis), 0);
	assert_int_equal(rn_progress_add(rn_device_engine(dev), rn_conn_fd(l->lis), EPOLLIN,
					 lis_cb, l), 0);
	return l->lis;
}

static void connect_to(struct side *cli, struct listener *l, const struct rn_cm_cfg *cfg)
{
	struct sockaddr_in a = t_addr4("127.0.0.1", t_port_of(l->lis));
	struct rn_cm *cm;
	struct rn_dev_cm *att;

	assert_int_equal(rn_cm_connect(rn_sock_transport(), (struct sockaddr *)&a, sizeof(a), cfg,
				       "cli", 3, &cm), 0);
	assert_int_equal(rn_device_attach_cm(cli->dev, cm, cm_cb, cli, &att), RN_OK);
}

static void unlisten(struct rn_device *dev, struct listener *l)
{
	rn_progress_del(rn_device_engine(dev), rn_conn_fd(l->lis));
	rn_conn_close(l->lis);
	if (l->raw_conn)
		rn_conn_close(l->raw_conn);
}

static void free_handoff(struct side *s)
{
	if (!s->have_h)
		return;
	rn_conn_close(s->h.conn);
	free(s->h.rx);
	s->have_h = false;
}

static void test_cm_engine(void **state)
{
	(void)state;
	struct rn_device *da = open_dev(false, NULL), *db = open_dev(false, NULL);
	struct side cli = { .dev = da }, srv = { .dev = db, .mode = SRV_ACCEPT };
	struct listener l = { .srv = &srv };
	struct rn_device_counts c;

	rn_cm_cfg_default(&l.cfg);
	listen_on(db, &l);
	connect_to(&cli, &l, &l.cfg);
	assert_true(wait_for(&cli.done, 1));
	assert_true(wait_for(&srv.done, 1));
	assert_int_equal(cli.state, RN_CM_ESTABLISHED);
	assert_int_equal(srv.state, RN_CM_ESTABLISHED);
	assert_true(srv.saw_wait_accept);
	assert_true(cli.on_driver && srv.on_driver);
	assert_true(cli.have_h && srv.have_h);
	rn_device_counts(da, &c);
	assert_int_equal(c.cm, 0);
	assert_int_equal(da->stats->conn_setup_fails, 0);   /* softrnic-stat's count */
	free_handoff(&cli);
	free_handoff(&srv);

	/* reject */
	struct side cli2 = { .dev = da };
	srv = (struct side){ .dev = db, .mode = SRV_REJECT };
	connect_to(&cli2, &l, &l.cfg);
	assert_true(wait_for(&cli2.done, 1));
	assert_int_equal(cli2.state, RN_CM_REJECTED);
	assert_true(wait_for(&srv.done, 1));
	/* a rejected setup counts as failed on both devices */
	assert_int_equal(da->stats->conn_setup_fails, 1);
	assert_int_equal(db->stats->conn_setup_fails, 1);
	unlisten(db, &l);
	assert_int_equal(rn_device_close(da), RN_OK);
	assert_int_equal(rn_device_close(db), RN_OK);
}

/* A peer that accepts TCP and never answers the MPA Request: the engine's timer fires the
 * CM's deadline. Also: close with a CM still attached. */
static void test_cm_timeout(void **state)
{
	(void)state;
	struct rn_device *dev = open_dev(false, NULL);
	struct side cli = { .dev = dev };
	struct listener l = { .raw = true };
	struct rn_cm_cfg cfg;
	struct rn_device_counts c;

	rn_cm_cfg_default(&cfg);
	cfg.mpa_ms = 100;
	listen_on(dev, &l);
	long long t0 = t_now_ms();
	connect_to(&cli, &l, &cfg);
	assert_true(wait_for(&cli.done, 1));
	assert_int_equal(cli.state, RN_CM_FAILED);
	assert_int_equal(cli.err, -ETIMEDOUT);
	assert_true(t_now_ms() - t0 >= 100);
	assert_int_equal(dev->stats->conn_setup_fails, 1);
	/* one more, left attached at close (the silent peer stays open until after close) */
	struct side cli2 = { .dev = dev };
	struct rn_conn *first = l.raw_conn;
	cfg.mpa_ms = 0;
	connect_to(&cli2, &l, &cfg);
	rn_device_counts(dev, &c);
	assert_int_equal(c.cm, 1);
	for (int i = 0; i < T_WAIT_MS && l.raw_conn == first; i++)
		sleep_ms(1);
	assert_ptr_not_equal(l.raw_conn, first);
	assert_int_equal(rn_device_close(dev), RN_OK);
	assert_int_equal(atomic_load(&cli2.done), 0);
	rn_conn_close(first);
	rn_conn_close(l.raw_conn);
	rn_conn_close(l.lis);
}

/* ---- real QPs: established by the engine, data moved by the engine --------------------- */
struct qpside {
	struct rn_device *dev;
	uint32_t pd;
	struct rn_cq *cq;
	struct rn_qp *qp;
	char buf[256];
	rn_stag_t stag;
};

static void qp_setup(struct qpside *q, struct side *s)
{
	struct rn_mem *mem = rn_device_mem(q->dev);
	struct rn_qp_mod m = { .next = RN_QPS_RTS, .mask = RN_QPM_LLP_HANDLE, .llp = &s->h };
	uint32_t got;

	assert_int_equal(rn_mem_pd_alloc(mem, &q->pd), RN_OK);
	assert_int_equal(rn_mem_reg_mr(mem, q->pd, q->buf, sizeof(q->buf), (uintptr_t)q->buf,
				       RN_ACC_LOCAL_WRITE, &q->stag), RN_OK);
	assert_int_equal(rn_device_cq_create(q->dev, 16, NULL, NULL, &q->cq, &got), RN_OK);
	assert_int_equal(mk_qp(q->dev, q->pd, q->cq, &q->qp), RN_OK);
	assert_int_equal(rn_qp_modify_qp(q->qp, &m, NULL), RN_OK);
	s->have_h = false; /* the QP owns the stream now */
}

static bool poll_one(struct rn_cq *cq, struct rn_cqe *e)
{
	uint32_t got;
	for (int i = 0; i < T_WAIT_MS; i++) {
		if (rn_cq_poll(cq, e, 1, &got) == RN_OK)
			return true;
		sleep_ms(1);
	}
	return false;
}

/* Whether any socket of the process is open under two descriptors. */
static bool socket_opened_twice(void)
{
	char seen[512][64], link[64], path[300];
	unsigned n = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	bool twice = false;

	assert_non_null(dir);
	while ((d = readdir(dir)) != NULL && !twice) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		ssize_t l = readlink(path, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (strncmp(link, "socket:", 7) != 0)
			continue;
		for (unsigned i = 0; i < n && !twice; i++)
			twice = strcmp(seen[i], link) == 0;
		if (n < 512)
			strcpy(seen[n++], link);
	}
	closedir(dir);
	return twice;
}

/* Descriptor leases: an owner's close while the engine holds the number waits for the last
 * release; without a hold it closes at once. */
static void test_fd_lease(void **state)
{
	(void)state;
	int p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(rn_fd_hold(p[0]), 0);
	assert_int_equal(rn_fd_hold(p[0]), 0);
	rn_fd_close(p[0]);
	assert_true(rn_fd_close_pending(p[0]));
	assert_true(fcntl(p[0], F_GETFD) >= 0);  /* still open: held twice */
	rn_fd_release(p[0]);
	assert_true(fcntl(p[0], F_GETFD) >= 0);
	rn_fd_release(p[0]);
	assert_int_equal(fcntl(p[0], F_GETFD), -1);
	assert_false(rn_fd_close_pending(p[0]));
	/* a release without a close leaves the descriptor to its owner */
	assert_int_equal(rn_fd_hold(p[1]), 0);
	rn_fd_release(p[1]);
	assert_true(fcntl(p[1], F_GETFD) >= 0);
	rn_fd_close(p[1]);
	assert_int_equal(fcntl(p[1], F_GETFD), -1);
	assert_int_equal(rn_fd_hold(-1), -EBADF);
}

static void test_qp_attach(void **state)
{
	(void)state;
	struct rn_device *da = open_dev(false, NULL), *db = open_dev(false, NULL);
	struct side cli = { .dev = da }, srv = { .dev = db, .mode = SRV_ACCEPT };
	struct listener l = { .srv = &srv };
	struct qpside qa = { .dev = da }, qb = { .dev = db };
	struct rn_cqe e;

	rn_cm_cfg_default(&l.cfg);
	listen_on(db, &l);
	connect_to(&cli, &l, &l.cfg);
	assert_true(wait_for(&cli.done, 1) && wait_for(&srv.done, 1));
	assert_true(cli.have_h && srv.have_h);
	qp_setup(&qa, &cli);
	qp_setup(&qb, &srv);
	/* B receives, A sends: placement and completion happen on B's engine thread */
	struct rn_rq_sge rs = { (uintptr_t)qb.buf, sizeof(qb.buf), qb.stag };
	struct rn_recv_wr rw = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 };
	assert_int_equal(rn_qp_post_recv(qb.qp, &rw, NULL, NULL), RN_OK);
	strcpy(qa.buf, "hello over the engine");
	struct rn_rq_sge ss = { (uintptr_t)qa.buf, 22, qa.stag };
	struct rn_send_wr sw = { .wr_id = 9, .sg_list = &ss, .num_sge = 1,
				 .opcode = RN_WR_SEND, .flags = RN_SEND_SIGNALED };
	assert_int_equal(rn_cq_feed_hint(qa.cq), 0);
	rn_device_qp_posted(qa.qp); /* as the verbs post calls do: the only feeder, index 0 */
	assert_int_equal(rn_cq_feed_hint(qa.cq), 1);
	assert_int_equal(rn_qp_post_send(qa.qp, &sw, NULL, NULL), RN_OK);
	assert_true(poll_one(qb.cq, &e));
	assert_int_equal(e.status, RN_WC_SUCCESS);
	assert_int_equal(e.wr_id, 7);
	assert_int_equal(e.byte_len, 22);
	assert_string_equal(qb.buf, "hello over the engine");
	assert_true(poll_one(qa.cq, &e));
	assert_int_equal(e.wr_id, 9);
	/* the engines watch the QPs' own descriptors: no copy of either socket is open */
	assert_false(socket_opened_twice());
	/* A's stream goes while A's engine watches it: the close waits for the engine to let go
	 * (the number is never reused under its registration), then really happens */
	int fd = rn_qp_fd(qa.qp);
	struct rn_qp_mod err = { .next = RN_QPS_ERROR };
	assert_true(fd >= 0);
	assert_int_equal(rn_qp_modify_qp(qa.qp, &err, NULL), RN_OK);
	assert_int_equal(rn_qp_fd(qa.qp), -1);
	for (int i = 0; i < T_WAIT_MS && fcntl(fd, F_GETFD) >= 0; i++)
		sleep_ms(1);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_false(rn_fd_close_pending(fd));
	/* destroy one QP explicitly, leave the other to close */
	assert_int_equal(rn_device_qp_destroy(da, qa.qp), RN_OK);
	unlisten(db, &l);
	assert_int_equal(rn_device_close(da), RN_OK);
	assert_int_equal(rn_device_close(db), RN_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_query),
		cmocka_unit_test(test_close_live_reopen),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_T40_async_handler),
		cmocka_unit_test(test_conn_fake),
		cmocka_unit_test(test_conn_fresh_fd_read),
		cmocka_unit_test(test_conn_hold_pass),
		cmocka_unit_test(test_conn_hold_leaves_served),
		cmocka_unit_test(test_hold_counts_posts),
		cmocka_unit_test(test_cm_engine),
		cmocka_unit_test(test_cm_timeout),
		cmocka_unit_test(test_fd_lease),
		cmocka_unit_test(test_qp_attach),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
