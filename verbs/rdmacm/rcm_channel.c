/* Event channels and events: rdma_create_event_channel, rdma_get_cm_event, rdma_ack_cm_event.
 *
 * The channel fd is one end of a socketpair that holds one octet while events are pending,
 * so the fd is readable exactly then (poll / epoll / select all work), and
 * rdma_get_cm_event blocks or fails with EAGAIN as the consumer set O_NONBLOCK on it. A
 * getter takes the octet, then an event, and puts the octet back when more are pending.
 * One octet per event would stop at the socket's buffer: every octet is an skb of about
 * 768 octets of truesize, so a server with some 280 events pending (connection requests,
 * disconnects) would lose the wake-ups of the rest. An event dropped before it was taken
 * (its id was destroyed) takes the octet back when it was the last one, unless a getter
 * holds the octet already (that getter then finds no event and reads again). */
#include "rcm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Destroyed channels are kept (fd -1) and reused instead of freed: programs call
 * rdma_get_cm_event on a channel another thread has just destroyed (rping's CM thread, when
 * its main thread tears down right after the DISCONNECTED event). librdmacm then reads freed
 * memory and a closed fd; here the getter finds fd -1 and waits like one that was already
 * blocked (rcm_destroyed_while_waiting). At most as many as were ever open at once. */
static struct rcm_channel *rcm_dead_channels; /* rcm_lock */

struct rcm_channel *rcm_channel_new(void)
{
	int sv[2];
	struct rcm_channel *ch;

	pthread_mutex_lock(&rcm_lock);
	ch = rcm_dead_channels;
	if (ch != NULL)
		rcm_dead_channels = ch->next_dead;
	pthread_mutex_unlock(&rcm_lock);
	if (ch == NULL && (ch = calloc(1, sizeof(*ch))) == NULL)
		return NULL;
	*ch = (struct rcm_channel){ .pub.fd = -1, .wfd = -1 };
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		int e = errno;
		rcm_channel_free(ch);
		errno = e;
		return NULL;
	}
	ch->pub.fd = sv[0];
	ch->wfd = sv[1];
	return ch;
}

void rcm_channel_free(struct rcm_channel *ch)
{
	struct rcm_event *e = ch->head;

	while (e != NULL) {
		struct rcm_event *next = e->next;
		free(e);
		e = next;
	}
	if (ch->pub.fd >= 0)
		close(ch->pub.fd);
	if (ch->wfd >= 0)
		close(ch->wfd);
	*ch = (struct rcm_channel){ .pub.fd = -1, .wfd = -1 };
	pthread_mutex_lock(&rcm_lock);
	ch->next_dead = rcm_dead_channels;
	rcm_dead_channels = ch;
	pthread_mutex_unlock(&rcm_lock);
}

RCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	int rc = rcm_engine_get();

	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	struct rcm_channel *ch = rcm_channel_new();
	if (ch == NULL) {
		int e = errno ? errno : ENOMEM;
		rcm_engine_put();
		errno = e;
		return NULL;
	}
	return &ch->pub;
}

RCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (channel == NULL)
		return;
	rcm_channel_free(rcm_ch_of(channel));
	rcm_engine_put();
}

/* ---- queue ---------------------------------------------------------------------------- */

/* rcm_lock held: the octet goes in when events are pending and it is not there yet. */
static void signal_pending(struct rcm_channel *ch)
{
	static const uint8_t one = 1;

	if (ch->head != NULL && !ch->signalled &&
	    send(ch->wfd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		ch->signalled = true;
}

static void enqueue(struct rcm_channel *ch, struct rcm_event *e)
{
	e->next = NULL;
	if (ch->tail != NULL)
		ch->tail->next = e;
	else
		ch->head = e;
	ch->tail = e;
	signal_pending(ch);
}

/* Unlink e (prev is its predecessor or NULL); the octet comes back out with the last event. */
static void unqueue(struct rcm_channel *ch, struct rcm_event *prev, struct rcm_event *e)
{
	uint8_t b;

	if (prev != NULL)
		prev->next = e->next;
	else
		ch->head = e->next;
	if (ch->tail == e)
		ch->tail = prev;
	e->next = NULL;
	if (ch->head == NULL && ch->signalled && recv(ch->pub.fd, &b, 1, MSG_DONTWAIT) == 1)
		ch->signalled = false;
}

static uint8_t clamp_u8(uint16_t v)
{
	return v > 0xFF ? 0xFF : (uint8_t)v;
}

int rcm_post(struct rcm_id *id, enum rdma_cm_event_type type, int status, const void *pd,
	     size_t pd_len, const struct mpa_conn_params *params)
{
	struct rcm_event *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return -ENOMEM;
	e->ev.id = &id->pub;
	e->ev.event = type;
	e->ev.status = status;
	e->owner = id;
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		e->ev.listen_id = &id->listener->pub;
		e->owner = id->listener;
	}
	if (pd_len > RCM_PD_MAX)
		pd_len = RCM_PD_MAX;
	if (pd_len > 0) {
		memcpy(e->pd, pd, pd_len);
		e->ev.param.conn.private_data = e->pd;
		e->ev.param.conn.private_data_len = (uint8_t)pd_len;
	}
	if (params != NULL) {
		e->ev.param.conn.responder_resources = clamp_u8(params->local_ird);
		e->ev.param.conn.initiator_depth = clamp_u8(params->local_ord);
	}
	enqueue(id->ch, e);
	return 0;
}

void rcm_drop_events(struct rcm_id *id, void (*child)(struct rcm_id *c))
{
	struct rcm_channel *ch = id->ch;
	struct rcm_event *prev = NULL, *e = ch->head;

	while (e != NULL) {
		struct rcm_event *next = e->next;
		if (e->ev.id == &id->pub || e->owner == id) {
			unqueue(ch, prev, e);
			if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && e->ev.id != &id->pub &&
			    child != NULL)
				child(rcm_id_of(e->ev.id));
			free(e);
		} else {
			prev = e;
		}
		e = next;
	}
}

void rcm_move_events(struct rcm_id *id, struct rcm_channel *to)
{
	struct rcm_channel *ch = id->ch;
	struct rcm_event *prev = NULL, *e = ch->head;

	while (e != NULL) {
		struct rcm_event *next = e->next;
		if (e->ev.id == &id->pub && e->ev.event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			unqueue(ch, prev, e);
			enqueue(to, e);
		} else {
			prev = e;
		}
		e = next;
	}
}

/* ---- consumer side -------------------------------------------------------------------- */

/* Pop the head after the octet was read (NULL: the events it stood for were dropped), and
 * put the octet back while more are pending. */
static struct rcm_event *take(struct rcm_channel *ch)
{
	struct rcm_event *e = ch->head;

	ch->signalled = false;
	if (e != NULL) {
		ch->head = e->next;
		if (ch->tail == e)
			ch->tail = NULL;
		e->next = NULL;
		e->delivered = true;
		e->owner->events_out++;
	}
	signal_pending(ch);
	return e;
}

/* Another thread destroyed the channel while this one waited in read() (end of stream: the
 * writing end was closed). With librdmacm the reader of the kernel's rdma_cm fd stays blocked
 * in that case until the process ends, and programs rely on it: rping's main thread destroys
 * the channel and exits while its CM thread still waits, and must exit 0 (docs/dropin.md).
 * Returning an error here would make such a thread report a failure and exit(-1) first. So
 * wait the same way, as a cancellation point (pthread_cancel still ends the thread); the
 * channel's memory is never touched again. */
static _Noreturn void rcm_destroyed_while_waiting(void)
{
	for (;;)
		pause();
}

RCM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				 struct rdma_cm_event **event)
{
	if (channel == NULL || event == NULL)
		return rcm_err(EINVAL);
	struct rcm_channel *ch = rcm_ch_of(channel);
	for (;;) {
		uint8_t b;
		if (ch->pub.fd < 0) /* destroyed (rcm_dead_channels) */
			rcm_destroyed_while_waiting();
		ssize_t n = read(ch->pub.fd, &b, 1); /* blocks unless the consumer set O_NONBLOCK */
		if (n < 0)
			return -1; /* errno from read: EAGAIN, EINTR */
		if (n == 0)
			rcm_destroyed_while_waiting();
		pthread_mutex_lock(&rcm_lock);
		struct rcm_event *e = take(ch);
		pthread_mutex_unlock(&rcm_lock);
		if (e != NULL) {
			*event = &e->ev;
			return 0;
		}
	}
}

RCM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (event == NULL)
		return rcm_err(EINVAL);
	struct rcm_event *e = (struct rcm_event *)event;
	pthread_mutex_lock(&rcm_lock);
	if (e->delivered && e->owner->events_out > 0)
		e->owner->events_out--;
	pthread_cond_broadcast(&rcm_cond);
	pthread_mutex_unlock(&rcm_lock);
	free(e);
	return 0;
}

static int event_errno(const struct rdma_cm_event *ev)
{
	if (ev->status < 0)
		return -ev->status;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return ECONNREFUSED;
	return ev->status > 0 ? EPROTO : EINVAL;
}

int rcm_sync_wait(struct rcm_id *id, enum rdma_cm_event_type want, struct rdma_cm_event **keep)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(&id->ch->pub, &ev) != 0)
		return -1;
	if (ev->event == want && ev->status == 0) {
		if (keep != NULL)
			*keep = ev;
		else
			rdma_ack_cm_event(ev);
		return 0;
	}
	int err = event_errno(ev);
	rdma_ack_cm_event(ev);
	return rcm_err(err);
}
