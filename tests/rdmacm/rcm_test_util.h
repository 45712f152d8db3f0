/* Helpers for the librdmacm tests (header-only, static). Every wait is bounded. */
#ifndef RCM_TEST_UTIL_H
#define RCM_TEST_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rdma/rdma_cma.h>

#include "../lib/t_util.h"

#define T_WAIT_MS 5000

/* The next event on ch within ms (NULL on timeout or error). */
static inline struct rdma_cm_event *t_next_event(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;

	if (poll(&p, 1, ms) != 1)
		return NULL;
	if (rdma_get_cm_event(ch, &ev) != 0)
		return NULL;
	return ev;
}

/* The next event, which must be `type` (printed otherwise); NULL when it is not. */
static inline struct rdma_cm_event *t_expect(struct rdma_event_channel *ch,
					     enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev = t_next_event(ch, T_WAIT_MS);

	if (ev == NULL) {
		fprintf(stderr, "no event (wanted %s)\n", rdma_event_str(type));
		return NULL;
	}
	if (ev->event != type) {
		fprintf(stderr, "got %s status %d, wanted %s\n", rdma_event_str(ev->event),
			ev->status, rdma_event_str(type));
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

/* Expect `type` and ack it at once; 0 on success. */
static inline int t_expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev = t_expect(ch, type);
	if (ev == NULL)
		return -1;
	rdma_ack_cm_event(ev);
	return 0;
}

/* True when ch has no event pending within ms. */
static inline int t_quiet(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	return poll(&p, 1, ms) == 0;
}

#endif
