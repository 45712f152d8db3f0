/* The CM engine: one thread per process that drives every connection being set up (rn_cm),
 * every listener and every QP-less stream, with poll(2) over their fds plus a doorbell
 * eventfd, and the rn_cm deadlines as the poll timeout. It lives while an event channel
 * exists (rdma_create_event_channel takes a reference).
 *
 * Once a connection is ESTABLISHED the stream goes to the QP (softrnic_qp_connect) and the
 * device's progress engine (rn_device) carries its traffic; this thread then only reports
 * DISCONNECTED when the verbs layer's LLP close callback (softrnic_qp_set_close_cb, rcm_qp.c)
 * marked the id and rang the doorbell: no polling of the QP's state. Setup stays here rather than on rn_device_attach_cm because
 * listeners and QP-less ids need driving too, a wildcard listener has no device before a
 * request arrives, and the device is reachable from an ibv_context only through verbs
 * internals (docs/rdmacm.md, "Decisions"). */
#include "rcm_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

static struct {
	pthread_mutex_t mtx; /* lifecycle only (get / put / join); never taken by the thread */
	unsigned refs;
	pthread_t thr;
	int bell;
	bool stop; /* under rcm_lock */
} eng = { .mtx = PTHREAD_MUTEX_INITIALIZER, .bell = -1 };

void rcm_engine_kick(void)
{
	uint64_t one = 1;

	if (eng.bell >= 0)
		(void)!write(eng.bell, &one, sizeof(one));
}

static int min_ms(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

struct waitset {
	struct pollfd *pfd;
	size_t n, cap;
	int timeout;
};

static int waitset_add(struct waitset *w, int fd, short events)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct pollfd *p = realloc(w->pfd, cap * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		w->pfd = p;
		w->cap = cap;
	}
	w->pfd[w->n++] = (struct pollfd){ .fd = fd, .events = events };
	return 0;
}

/* Build the wait set from the ids (rcm_lock held). */
static void collect(struct waitset *w)
{
	w->n = 0;
	w->timeout = -1;
	(void)waitset_add(w, eng.bell, POLLIN);
	for (struct rcm_id *id = rcm_busy; id != NULL; id = id->bnext) {
		short ev = 0;
		int t = -1;
		int fd = rcm_conn_wait(id, &ev, &t);
		if (fd >= 0 && waitset_add(w, fd, ev) != 0)
			w->timeout = min_ms(w->timeout, 10); /* out of memory: fall back to polling */
		w->timeout = min_ms(w->timeout, t);
	}
}

/* Progress every id that waits on something, and set aside the ones that have nothing left
 * to wait for (rcm_lock held). An id may free itself. */
static void drive(void)
{
	struct rcm_id *id = rcm_busy;

	while (id != NULL) {
		struct rcm_id *next = id->bnext;
		short ev = 0;
		int t = -1;
		if (rcm_conn_wait(id, &ev, &t) >= 0 || t >= 0)
			rcm_conn_progress(id);
		else if (rcm_conn_quiet(id))
			rcm_busy_unlink(id);
		id = next;
	}
}

static void *engine_main(void *arg)
{
	struct waitset w = { 0 };
	uint64_t v;

	(void)arg;
	pthread_mutex_lock(&rcm_lock);
	while (!eng.stop) {
		rcm_down_take();
		collect(&w);
		pthread_mutex_unlock(&rcm_lock);
		(void)poll(w.pfd, (nfds_t)w.n, w.timeout);
		(void)!read(eng.bell, &v, sizeof(v));
		pthread_mutex_lock(&rcm_lock);
		rcm_down_take();
		drive();
	}
	pthread_mutex_unlock(&rcm_lock);
	free(w.pfd);
	return NULL;
}

int rcm_engine_get(void)
{
	int rc = 0;

	pthread_mutex_lock(&eng.mtx);
	if (eng.refs == 0) {
		eng.bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		eng.stop = false;
		if (eng.bell < 0)
			rc = -errno;
		else if ((rc = -pthread_create(&eng.thr, NULL, engine_main, NULL)) != 0) {
			close(eng.bell);
			eng.bell = -1;
		} else {
			pthread_setname_np(eng.thr, "srn-cma");
		}
	}
	if (rc == 0)
		eng.refs++;
	pthread_mutex_unlock(&eng.mtx);
	return rc;
}

void rcm_engine_put(void)
{
	pthread_mutex_lock(&eng.mtx);
	if (eng.refs > 0 && --eng.refs == 0) {
		pthread_mutex_lock(&rcm_lock);
		eng.stop = true;
		pthread_mutex_unlock(&rcm_lock);
		rcm_engine_kick();
		pthread_join(eng.thr, NULL);
		close(eng.bell);
		eng.bell = -1;
	}
	pthread_mutex_unlock(&eng.mtx);
}
