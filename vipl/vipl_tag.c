/* Tag demultiplexing of a VIPL CQ (cLAN's VipAddTagCQ / VipRemoveTagCQ; docs/vipl.md "One
 * header for three stacks"). Several threads share one CQ and each wants to hear of the
 * completions of its own VIs: a VI's tag is its user data (VipSetUserData, the value cLAN
 * programs keep a peer's index in), and an event registered on the CQ for a tag is signalled
 * once for every entry the CQ takes of a VI with that tag; of several registrations of one
 * tag, the one of the highest priority (the first added among equals). The entries themselves
 * stay in the CQ for VipCQDone / VipCQWait.
 *
 * An event (VIP_EVENT_HANDLE) is a handle of the library's table (never an address) for an
 * eventfd in semaphore mode: poll() sees it readable while signals are pending,
 * VipEventWait takes one, VipEventFd gives the descriptor, VipEventClose ends it once no CQ
 * holds it. */
#include "vipl_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct vipl_event {
	struct vipl_obj o;
	int fd;
	unsigned uses;               /* registrations on CQs */
};

static struct vipl_event *event_get(void *h)
{
	return (struct vipl_event *)vipl_handle_get(h, VK_EVENT);
}

void vipl_event_free(struct vipl_obj *o)
{
	struct vipl_event *ev = (struct vipl_event *)o;
	if (ev->fd >= 0)
		close(ev->fd);
	free(ev);
}

static struct vipl_event *event_new(struct vipl_nic *nic)
{
	struct vipl_event *ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		return NULL;
	ev->o.kind = VK_EVENT;
	ev->o.nic = nic;
	ev->fd = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
	atomic_fetch_add(&nic->o.refs, 1);
	if (ev->fd < 0 || vipl_handle_add(&ev->o) == NULL) {
		vipl_event_free(&ev->o);
		vipl_handle_put(&nic->o);
		return NULL;
	}
	atomic_fetch_add(&ev->o.refs, 1); /* the caller's, as vipl_handle_get gives one */
	return ev;
}

/* The CQ took an entry of vi (NIC lock held). */
void vipl_tags_signal(struct vipl_cq *cq, const struct vipl_vi *vi)
{
	VIP_ULONG tag = (VIP_ULONG)(uintptr_t)vi->user_data;
	for (struct vipl_tag *t = cq->tags; t != NULL; t = t->next)
		if (t->tag == tag) {
			uint64_t one = 1;
			if (write(((struct vipl_event *)t->ev)->fd, &one, sizeof(one)) < 0) {
				/* the counter is saturated: the event is signalled anyway */
			}
			return;
		}
}

static void tag_unlink(struct vipl_tag **pp)
{
	struct vipl_tag *t = *pp;
	*pp = t->next;
	((struct vipl_event *)t->ev)->uses--;
	vipl_handle_put(&((struct vipl_event *)t->ev)->o);
	free(t);
}

void vipl_tags_free(struct vipl_cq *cq)
{
	while (cq->tags != NULL)
		tag_unlink(&cq->tags);
}

VIPL_EXPORT VIP_RETURN VipAddTagCQ(VIP_CQ_HANDLE CQHandle, VIP_EVENT_HANDLE *Event, VIP_ULONG Tag,
				   VIP_ULONG Priority)
{
	struct vipl_cq *cq = (struct vipl_cq *)vipl_handle_get(CQHandle, VK_CQ);
	struct vipl_event *ev = NULL;
	struct vipl_tag *t = calloc(1, sizeof(*t));
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (cq == NULL || Event == NULL || t == NULL) {
		rc = t == NULL ? VIP_ERROR_RESOURCE : rc;
		goto out;
	}
	ev = *Event != NULL ? event_get(*Event) : event_new(cq->o.nic);
	if (ev == NULL || ev->o.nic != cq->o.nic) {
		rc = ev == NULL && *Event == NULL ? VIP_ERROR_RESOURCE : VIP_INVALID_PARAMETER;
		goto out;
	}
	struct vipl_nic *nic = cq->o.nic;
	pthread_mutex_lock(&nic->lock);
	t->tag = Tag;
	t->priority = Priority;
	t->ev = ev;
	ev->uses++;
	struct vipl_tag **pp = &cq->tags; /* highest priority first, in order of addition */
	while (*pp != NULL && (*pp)->priority >= Priority)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
	pthread_mutex_unlock(&nic->lock);
	*Event = ev->o.handle;
	t = NULL;
	ev = NULL; /* the registration keeps the reference */
	rc = VIP_SUCCESS;
out:
	free(t);
	vipl_handle_put(ev ? &ev->o : NULL);
	vipl_handle_put(cq ? &cq->o : NULL);
	return rc;
}

VIPL_EXPORT VIP_RETURN VipRemoveTagCQ(VIP_CQ_HANDLE CQHandle, VIP_EVENT_HANDLE Event, VIP_ULONG Tag)
{
	struct vipl_cq *cq = (struct vipl_cq *)vipl_handle_get(CQHandle, VK_CQ);
	struct vipl_event *ev = event_get(Event);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (cq != NULL && ev != NULL) {
		pthread_mutex_lock(&cq->o.nic->lock);
		for (struct vipl_tag **pp = &cq->tags; *pp != NULL; pp = &(*pp)->next)
			if ((*pp)->ev == ev && (*pp)->tag == Tag) {
				tag_unlink(pp);
				rc = VIP_SUCCESS;
				break;
			}
		pthread_mutex_unlock(&cq->o.nic->lock);
	}
	vipl_handle_put(ev ? &ev->o : NULL);
	vipl_handle_put(cq ? &cq->o : NULL);
	return rc;
}

/* One signal of Event, waiting up to Timeout ms (VIP_INFINITE: forever). */
VIPL_EXPORT VIP_RETURN VipEventWait(VIP_EVENT_HANDLE Event, VIP_ULONG Timeout)
{
	struct vipl_event *ev = event_get(Event);
	if (ev == NULL)
		return VIP_INVALID_PARAMETER;
	uint64_t dl = vipl_deadline(Timeout);
	VIP_RETURN rc = VIP_TIMEOUT;
	for (;;) {
		uint64_t v;
		if (read(ev->fd, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
			rc = VIP_SUCCESS;
			break;
		}
		uint64_t now = vipl_now_ms();
		if (Timeout == 0 || (dl != 0 && now >= dl))
			break;
		struct pollfd p = { ev->fd, POLLIN, 0 };
		if (poll(&p, 1, dl == 0 ? -1 : (int)(dl - now)) < 0 && errno != EINTR) {
			rc = VIP_ERROR_RESOURCE;
			break;
		}
	}
	vipl_handle_put(&ev->o);
	return rc;
}

VIPL_EXPORT int VipEventFd(VIP_EVENT_HANDLE Event)
{
	struct vipl_event *ev = event_get(Event);
	int fd = ev != NULL ? ev->fd : -1;
	vipl_handle_put(ev ? &ev->o : NULL);
	return fd;
}

/* Refused (VIP_ERROR_RESOURCE) while a CQ holds the event. */
VIPL_EXPORT VIP_RETURN VipEventClose(VIP_EVENT_HANDLE Event)
{
	struct vipl_event *ev = event_get(Event);
	if (ev == NULL)
		return VIP_INVALID_PARAMETER;
	struct vipl_nic *nic = ev->o.nic;
	pthread_mutex_lock(&nic->lock);
	bool held = ev->uses > 0;
	pthread_mutex_unlock(&nic->lock);
	if (!held)
		vipl_handle_remove(&ev->o);
	vipl_handle_put(&ev->o);
	return held ? VIP_ERROR_RESOURCE : VIP_SUCCESS;
}
