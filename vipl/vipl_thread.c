/* The NIC thread (completion progress): blocks in poll(2) on the completion channel, the
 * rdma_cm event channel and a wake eventfd, with the earliest connection timer as timeout. It
 * drains the verbs CQ that signalled, handles connection events, and runs deferred callbacks
 * (notify handlers, async errors) with no lock held. Every verbs / cm event is acknowledged
 * before the NIC lock is taken (see vipl_int.h). */
#include "vipl_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static void drain_cq_events(struct vipl_nic *nic)
{
	struct ibv_cq *cq;
	void *ctx;
	while (ibv_get_cq_event(nic->cch, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		pthread_mutex_lock(&nic->lock);
		struct vipl_vi *vi = vipl_vi_by_cq(nic, cq); /* NULL: torn down meanwhile */
		if (vi != NULL)
			vipl_cq_event(vi);
		pthread_mutex_unlock(&nic->lock);
	}
}

static void drain_cm_events(struct vipl_nic *nic)
{
	struct rdma_cm_event *ev;
	while (rdma_get_cm_event(nic->ech, &ev) == 0) {
		struct rdma_cm_event copy = *ev;
		uint8_t pd[256];
		size_t n = ev->param.conn.private_data_len;
		if (ev->param.conn.private_data != NULL && n > 0) {
			memcpy(pd, ev->param.conn.private_data, n);
			copy.param.conn.private_data = pd;
		} else {
			copy.param.conn.private_data = NULL;
			copy.param.conn.private_data_len = 0;
		}
		rdma_ack_cm_event(ev);
		pthread_mutex_lock(&nic->lock);
		vipl_cm_event(nic, &copy);
		pthread_mutex_unlock(&nic->lock);
	}
}

static void run_calls(struct vipl_nic *nic)
{
	pthread_mutex_lock(&nic->lock);
	while (nic->calls != NULL) {
		struct vipl_call *c = nic->calls;
		nic->calls = c->next;
		if (nic->calls == NULL)
			nic->calls_tail = &nic->calls;
		nic->cb_vi = c->kind == CALL_VI ? c->vi : NULL;
		nic->cb_cq = c->kind == CALL_CQ ? c->cq : NULL;
		pthread_mutex_unlock(&nic->lock);
		vipl_call_run(nic, c);
		free(c);
		pthread_mutex_lock(&nic->lock);
		nic->cb_vi = NULL;
		nic->cb_cq = NULL;
		pthread_cond_broadcast(&nic->cv);
	}
	pthread_mutex_unlock(&nic->lock);
}

/* Called with the NIC lock held, returns with it released: due timers and graves; the
 * wait's timeout until the next timer (-1: none). *stop: the NIC is closing. */
static int timers_locked(struct vipl_nic *nic, bool *stop)
{
	uint64_t now = vipl_now_ms(), next = 0;
	*stop = nic->stopping;
	struct vipl_grave *due = vipl_graves_take(nic, false);
	if (due != NULL)
		nic->burying++;
	if (!*stop) {
		vipl_cm_timers(nic, now, &next);
		vipl_rearm_due(nic, &next);
	}
	pthread_mutex_unlock(&nic->lock);
	if (due != NULL) { /* may take a while: not under the NIC lock */
		vipl_graves_destroy(due);
		pthread_mutex_lock(&nic->lock);
		nic->burying--;
		pthread_cond_broadcast(&nic->cv); /* VipDestroyPtag waits for its PD's QPs */
		pthread_mutex_unlock(&nic->lock);
	}
	return next == 0 ? -1 : next <= now ? 0 : (int)(next - now);
}

static void *thread_main(void *arg)
{
	struct vipl_nic *nic = arg;
	bool quiet = false; /* the last wait timed out: only timers are due */
	/* the three fds, then a wire's (VI/TCP: its listener and every stream) */
	struct pollfd *p = malloc((3 + VIPL_WIRE_FDS) * sizeof(*p));
	if (p == NULL)
		return NULL;
	int backoff = 1;    /* ms */
	for (;;) {
		bool stop = false;
		int tmo;
		if (quiet && pthread_mutex_trylock(&nic->lock) != 0) {
			/* the application is inside the library (posting or polling holds the NIC
			 * lock): the timers (re-arming a polled CQ, connection deadlines) can wait,
			 * 1, 2, 4, then 8 ms as it stays there. Queued for the lock instead, this
			 * thread would wake at each of its unlocks, mostly to lose the lock to it
			 * again, and take its core each time */
			tmo = backoff;
			backoff = backoff < 8 ? backoff * 2 : 8;
		} else {
			backoff = 1;
			if (!quiet)
				pthread_mutex_lock(&nic->lock);
			tmo = timers_locked(nic, &stop);
			if (stop)
				break;
			run_calls(nic);
		}
		p[0] = (struct pollfd){ nic->cch->fd, POLLIN, 0 };
		p[1] = (struct pollfd){ nic->ech->fd, POLLIN, 0 };
		p[2] = (struct pollfd){ nic->wake_fd, POLLIN, 0 };
		int nw = 0;
		if (nic->wire->fds != NULL) { /* the wire's sockets (VI/TCP) */
			pthread_mutex_lock(&nic->lock);
			nw = nic->wire->fds(nic, p + 3, VIPL_WIRE_FDS);
			pthread_mutex_unlock(&nic->lock);
		}
		int n = poll(p, 3 + (nfds_t)nw, tmo);
		if (n < 0 && errno != EINTR)
			break;
		quiet = n == 0;
		if (p[2].revents & POLLIN) {
			uint64_t v;
			if (read(nic->wake_fd, &v, sizeof(v)) < 0) {
				/* EAGAIN: another wake already consumed it */
			}
		}
		if (p[0].revents & POLLIN)
			drain_cq_events(nic);
		if (p[1].revents & POLLIN)
			drain_cm_events(nic);
		if (nw > 0 && n > 0) {
			pthread_mutex_lock(&nic->lock);
			nic->wire->io(nic, p + 3, nw);
			pthread_mutex_unlock(&nic->lock);
		}
	}
	free(p);
	return NULL;
}

int vipl_thread_start(struct vipl_nic *nic)
{
	if (fcntl(nic->cch->fd, F_SETFL, fcntl(nic->cch->fd, F_GETFL) | O_NONBLOCK) != 0 ||
	    fcntl(nic->ech->fd, F_SETFL, fcntl(nic->ech->fd, F_GETFL) | O_NONBLOCK) != 0)
		return -1;
	if (pthread_create(&nic->thread, NULL, thread_main, nic) != 0)
		return -1;
	pthread_setname_np(nic->thread, "vipl-nic");
	nic->thread_started = true;
	return 0;
}

void vipl_thread_stop(struct vipl_nic *nic)
{
	if (!nic->thread_started)
		return;
	pthread_mutex_lock(&nic->lock);
	nic->stopping = true;
	pthread_mutex_unlock(&nic->lock);
	vipl_nic_wake(nic);
	pthread_join(nic->thread, NULL);
	nic->thread_started = false;
}
