/* The library lock, the list of ids, the errno convention and rdma_event_str. */
#include "rcm_int.h"

#include <errno.h>

pthread_mutex_t rcm_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t rcm_cond = PTHREAD_COND_INITIALIZER;
struct rcm_id *rcm_ids;
struct rcm_id *rcm_busy;
static pthread_mutex_t rcm_down_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rcm_id *rcm_down;   /* rcm_down_lock */

void rcm_busy_link(struct rcm_id *id)
{
	if (id->busy)
		return;
	id->bprev = NULL;
	id->bnext = rcm_busy;
	if (rcm_busy != NULL)
		rcm_busy->bprev = id;
	rcm_busy = id;
	id->busy = true;
}

void rcm_busy_unlink(struct rcm_id *id)
{
	if (!id->busy)
		return;
	if (id->bprev != NULL)
		id->bprev->bnext = id->bnext;
	else
		rcm_busy = id->bnext;
	if (id->bnext != NULL)
		id->bnext->bprev = id->bprev;
	id->bnext = id->bprev = NULL;
	id->busy = false;
}

void rcm_down_queue(struct rcm_id *id)
{
	pthread_mutex_lock(&rcm_down_lock);
	/* set under the lock rcm_id_unlink takes: a destroy that sees it set finds the id queued */
	atomic_store(&id->llp_down, true);
	if (!id->down_queued) {
		id->dprev = NULL;
		id->dnext = rcm_down;
		if (rcm_down != NULL)
			rcm_down->dprev = id;
		rcm_down = id;
		id->down_queued = true;
	}
	pthread_mutex_unlock(&rcm_down_lock);
}

static void down_unlink(struct rcm_id *id)
{
	if (!id->down_queued)
		return;
	if (id->dprev != NULL)
		id->dprev->dnext = id->dnext;
	else
		rcm_down = id->dnext;
	if (id->dnext != NULL)
		id->dnext->dprev = id->dprev;
	id->dnext = id->dprev = NULL;
	id->down_queued = false;
}

void rcm_down_take(void)
{
	pthread_mutex_lock(&rcm_down_lock);
	while (rcm_down != NULL) {
		struct rcm_id *id = rcm_down;
		down_unlink(id);
		rcm_busy_link(id);
	}
	pthread_mutex_unlock(&rcm_down_lock);
}

void rcm_id_link(struct rcm_id *id)
{
	id->prev = NULL;
	id->next = rcm_ids;
	if (rcm_ids != NULL)
		rcm_ids->prev = id;
	rcm_ids = id;
	rcm_busy_link(id);
}

void rcm_id_unlink(struct rcm_id *id)
{
	if (id->prev != NULL)
		id->prev->next = id->next;
	else
		rcm_ids = id->next;
	if (id->next != NULL)
		id->next->prev = id->prev;
	id->next = id->prev = NULL;
	rcm_busy_unlink(id);
	pthread_mutex_lock(&rcm_down_lock);
	down_unlink(id);
	pthread_mutex_unlock(&rcm_down_lock);
}

int rcm_err(int err)
{
	errno = err;
	return -1;
}

RCM_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	switch (event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED: return "RDMA_CM_EVENT_ADDR_RESOLVED";
	case RDMA_CM_EVENT_ADDR_ERROR: return "RDMA_CM_EVENT_ADDR_ERROR";
	case RDMA_CM_EVENT_ROUTE_RESOLVED: return "RDMA_CM_EVENT_ROUTE_RESOLVED";
	case RDMA_CM_EVENT_ROUTE_ERROR: return "RDMA_CM_EVENT_ROUTE_ERROR";
	case RDMA_CM_EVENT_CONNECT_REQUEST: return "RDMA_CM_EVENT_CONNECT_REQUEST";
	case RDMA_CM_EVENT_CONNECT_RESPONSE: return "RDMA_CM_EVENT_CONNECT_RESPONSE";
	case RDMA_CM_EVENT_CONNECT_ERROR: return "RDMA_CM_EVENT_CONNECT_ERROR";
	case RDMA_CM_EVENT_UNREACHABLE: return "RDMA_CM_EVENT_UNREACHABLE";
	case RDMA_CM_EVENT_REJECTED: return "RDMA_CM_EVENT_REJECTED";
	case RDMA_CM_EVENT_ESTABLISHED: return "RDMA_CM_EVENT_ESTABLISHED";
	case RDMA_CM_EVENT_DISCONNECTED: return "RDMA_CM_EVENT_DISCONNECTED";
	case RDMA_CM_EVENT_DEVICE_REMOVAL: return "RDMA_CM_EVENT_DEVICE_REMOVAL";
	case RDMA_CM_EVENT_MULTICAST_JOIN: return "RDMA_CM_EVENT_MULTICAST_JOIN";
	case RDMA_CM_EVENT_MULTICAST_ERROR: return "RDMA_CM_EVENT_MULTICAST_ERROR";
	case RDMA_CM_EVENT_ADDR_CHANGE: return "RDMA_CM_EVENT_ADDR_CHANGE";
	case RDMA_CM_EVENT_TIMEWAIT_EXIT: return "RDMA_CM_EVENT_TIMEWAIT_EXIT";
	}
	return "UNKNOWN EVENT";
}
