/* VI/TCP in the NIC thread: the listening socket and every connection's socket join the
 * thread's poll(2) set; readable sockets are read into their connection's segment buffer and
 * whole segments handled (vitcp_rx.c), writable ones drained (vitcp_tx.c); connections that
 * wait (Incoming, Closing) have deadlines (vt_timers). Closed connections are freed here,
 * before the poll set is built, so the set never names freed memory. NIC lock held. */
#include "vitcp.h"

#include <errno.h>
#include <stdlib.h>

#define VT_READS_PER_WAKE 16     /* recv calls per socket per wake-up: others get their turn */

void vt_dead_free(struct vipl_nic *nic)
{
	while (nic->vt_dead != NULL) {
		struct vt_conn *c = nic->vt_dead;
		nic->vt_dead = c->next;
		free(c->out);
		free(c);
	}
}

int vt_fds(struct vipl_nic *nic, struct pollfd *p, int max)
{
	vt_dead_free(nic);
	if (nic->vt_cap < (unsigned)max) {
		struct vt_conn **n = realloc(nic->vt_polled, (size_t)max * sizeof(*n));
		if (n == NULL)
			return 0;
		nic->vt_polled = n;
		nic->vt_cap = (unsigned)max;
	}
	int k = 0;
	if (nic->vt_listen_fd >= 0 && k < max) {
		p[k] = (struct pollfd){ nic->vt_listen_fd, POLLIN, 0 };
		nic->vt_polled[k++] = NULL;
	}
	if (nic->vt_rdv_fd >= 0 && k < max) {
		p[k] = (struct pollfd){ nic->vt_rdv_fd, POLLIN, 0 };
		nic->vt_polled[k++] = NULL;
	}
	for (struct vt_conn *c = nic->vt_conns; c != NULL && k < max; c = c->next) {
		short ev = POLLIN;
		/* a user-space engine's stream signals every change as readable */
		if ((c->state == VT_CONNECTING || c->out_off < c->out_len) &&
		    !rn_conn_ready_as_readable(c->rc))
			ev |= POLLOUT;
		p[k] = (struct pollfd){ c->fd, ev, 0 };
		nic->vt_polled[k++] = c;
	}
	nic->vt_npolled = (unsigned)k;
	return k;
}

/* Read what the socket has; handle whole segments. -1: the connection ended. */
static int readable(struct vipl_nic *nic, struct vt_conn *c)
{
	for (int i = 0; i < VT_READS_PER_WAKE; i++) {
		ssize_t n = rn_conn_recv(c->rc, c->in + c->in_len, sizeof(c->in) - c->in_len);
		if (n == -EAGAIN)
			return 0;
		if (n <= 0)
			return -1; /* FIN or reset */
		if (c->state == VT_CLOSING) {
			c->in_len = 0; /* what comes after our last word is not looked at */
			continue;
		}
		c->in_len += (size_t)n;
		if (vt_rx_segments(nic, c) != 0)
			return 1;
	}
	return 0;
}

/* The peer ended the stream (FIN, reset) before we did. */
static void ended(struct vt_conn *c)
{
	struct vipl_vi *vi = c->vi;
	switch (c->state) {
	case VT_CONNECTED:
		vt_fail(vi, VIP_ERROR_CONN_LOST, VIP_STATUS_TRANSPORT_ERROR, true);
		vt_conn_close(c);
		return;
	case VT_PENDING_ACCEPT:
		vt_on_tcp_connected(c); /* as a refused connect: NO_MATCH */
		return;
	case VT_MATCHING:
		c->req->dead = true; /* the requester gave up; vipl_cm_timers frees it */
		vt_conn_close(c);
		vipl_nic_wake(c->nic);
		return;
	default:
		vt_conn_close(c);
		return;
	}
}

void vt_closing(struct vt_conn *c)
{
	if (vt_flush(c) != 0) {
		vt_conn_close(c);
		return;
	}
	if (c->out_off == c->out_len && !c->shut) {
		rn_conn_shutdown_write(c->rc); /* our FIN; the peer's ends it (or the deadline) */
		c->shut = true;
	}
}

static void one(struct vipl_nic *nic, struct vt_conn *c, short rev)
{
	if (c->state == VT_CONNECTING) {
		vt_on_tcp_connected(c);
		return;
	}
	if (c->state == VT_CLOSING)
		vt_closing(c);
	else if (c->out_off < c->out_len && vt_flush(c) != 0)
		rev |= POLLHUP;
	if (c->fd < 0)
		return;
	struct vipl_vi *vi = c->vi;
	if (rev & (POLLIN | POLLHUP | POLLERR)) {
		int rc = readable(nic, c);
		if (rc < 0 && c->fd >= 0) {
			ended(c);
			return;
		}
	}
	if (vi != NULL && vi->vt == c) {
		vt_tx_progress(vi);
		vt_sq_pump(vi); /* room in TCP, the peer's receives (DFC), the Read window */
		vt_tell(vi);    /* acknowledgements and receive counts the peer waits for */
		vipl_wq_complete_ready(vi, &vi->rq);
	}
}

void vt_io(struct vipl_nic *nic, const struct pollfd *p, int n)
{
	for (int i = 0; i < n && i < (int)nic->vt_npolled; i++) {
		if (p[i].revents == 0)
			continue;
		struct vt_conn *c = nic->vt_polled[i];
		if (c == NULL) {
			if (p[i].fd == nic->vt_listen_fd)
				vt_on_listen(nic, nic->vt_listener, false);
			else if (p[i].fd == nic->vt_rdv_fd)
				vt_on_listen(nic, nic->vt_rdv, true);
			continue;
		}
		if (c->fd == p[i].fd) /* else closed since the poll set was built */
			one(nic, c, p[i].revents);
	}
}

void vt_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next)
{
	vt_rdv_timers(nic, now, next);
	for (struct vt_conn *c = nic->vt_conns, *n; c != NULL; c = n) {
		n = c->next;
		if (c->state != VT_INCOMING && c->state != VT_CLOSING)
			continue;
		if (now >= c->deadline_ms) {
			vt_conn_close(c);
			continue;
		}
		if (*next == 0 || c->deadline_ms < *next)
			*next = c->deadline_ms;
	}
}
