/* vx_conn: rdma_cm connection setup and teardown (see vx.h). */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "vx.h"

const char *vx_event_name(enum rdma_cm_event_type t)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "DEVICE_REMOVAL",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "TIMEWAIT_EXIT",
	};
	if ((unsigned)t < sizeof names / sizeof names[0] && names[t])
		return names[t];
	return "UNKNOWN";
}

/* Waits until the event channel fd is readable; 1 ready, 0 timeout, -1 error. */
static int ec_ready(struct vx_conn *c, int ms)
{
	struct pollfd p = { .fd = c->ec->fd, .events = POLLIN };
	int n;
	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		perror("poll(rdma event channel)");
	return n;
}

int vx_cm_wait(struct vx_conn *c, enum rdma_cm_event_type want, int ms, struct rdma_cm_id **idp)
{
	struct rdma_cm_event *ev;
	int ready = ec_ready(c, ms < -1 ? c->timeout_ms : ms);
	if (ready <= 0) {
		if (ready == 0)
			fprintf(stderr, "timed out waiting for %s\n", vx_event_name(want));
		return -1;
	}
	if (rdma_get_cm_event(c->ec, &ev)) {
		perror("rdma_get_cm_event");
		return -1;
	}
	enum rdma_cm_event_type got = ev->event;
	int status = ev->status;
	if (got == RDMA_CM_EVENT_CONNECT_REQUEST && idp)
		*idp = ev->id;
	if (got == RDMA_CM_EVENT_DISCONNECTED)
		c->disconnected = true;
	c->peer_data_len = ev->param.conn.private_data ? ev->param.conn.private_data_len : 0;
	if (c->peer_data_len)
		memcpy(c->peer_data, ev->param.conn.private_data, c->peer_data_len);
	rdma_ack_cm_event(ev);
	if (got != want) {
		fprintf(stderr, "rdma_cm: expected %s, got %s (status %d)\n", vx_event_name(want),
		        vx_event_name(got), status);
		return -1;
	}
	return 0;
}

static struct addrinfo *lookup(const char *addr, const char *port, bool passive)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	if (addr && strchr(addr, ':'))
		hints.ai_family = AF_INET6;
	if (passive)
		hints.ai_flags = AI_PASSIVE;
	int rc = getaddrinfo(addr, port, &hints, &res);
	if (rc) {
		fprintf(stderr, "cannot resolve %s port %s: %s\n", addr ? addr : "*", port,
		        gai_strerror(rc));
		return NULL;
	}
	return res;
}

static uint32_t cap_rd_atom(struct ibv_context *ctx, uint32_t want)
{
	struct ibv_device_attr a;
	if (want == 0 || ibv_query_device(ctx, &a))
		return want;
	uint32_t cap = (uint32_t)(a.max_qp_rd_atom < a.max_qp_init_rd_atom ? a.max_qp_rd_atom
	                                                                    : a.max_qp_init_rd_atom);
	return want < cap ? want : cap;
}

static int make_qp(struct vx_conn *c, const struct vx_opts *o)
{
	struct ibv_context *ctx = c->id->verbs;
	c->pd = ibv_alloc_pd(ctx);
	if (!c->pd)
		return perror("ibv_alloc_pd"), -1;
	if (o->channel && !(c->ch = ibv_create_comp_channel(ctx)))
		return perror("ibv_create_comp_channel"), -1;
	c->cq = ibv_create_cq(ctx, (int)(o->send_depth + o->recv_depth), NULL, c->ch, 0);
	if (!c->cq)
		return perror("ibv_create_cq"), -1;
	struct ibv_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = o->send_depth, .max_recv_wr = o->recv_depth,
		         .max_send_sge = 1, .max_recv_sge = 1 },
	};
	if (rdma_create_qp(c->id, c->pd, &qa))
		return perror("rdma_create_qp"), -1;
	c->qp = c->id->qp;
	c->rd_atom = cap_rd_atom(ctx, o->rd_atom);
	return 0;
}

static int setup_server(struct vx_conn *c, const struct vx_opts *o)
{
	struct addrinfo *ai = lookup(o->addr, o->port, true);
	if (!ai)
		return -1;
	int rc = rdma_bind_addr(c->listen_id, ai->ai_addr);
	freeaddrinfo(ai);
	if (rc)
		return perror("rdma_bind_addr"), -1;
	if (rdma_listen(c->listen_id, 1))
		return perror("rdma_listen"), -1;
	if (vx_cm_wait(c, RDMA_CM_EVENT_CONNECT_REQUEST, o->accept_timeout_ms, &c->id))
		return -1;
	return 0;
}

static int setup_client(struct vx_conn *c, const struct vx_opts *o)
{
	struct addrinfo *ai = lookup(o->addr, o->port, false);
	if (!ai)
		return -1;
	int rc = rdma_resolve_addr(c->id, NULL, ai->ai_addr, 2000);
	freeaddrinfo(ai);
	if (rc)
		return perror("rdma_resolve_addr"), -1;
	if (vx_cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED, -2, NULL))
		return -1;
	if (rdma_resolve_route(c->id, 2000))
		return perror("rdma_resolve_route"), -1;
	return vx_cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED, -2, NULL);
}

int vx_setup(struct vx_conn *c, const struct vx_opts *o)
{
	memset(c, 0, sizeof *c);
	c->server = o->server;
	c->timeout_ms = o->timeout_ms;
	c->ec = rdma_create_event_channel();
	if (!c->ec)
		return perror("rdma_create_event_channel"), -1;
	struct rdma_cm_id **idp = o->server ? &c->listen_id : &c->id;
	if (rdma_create_id(c->ec, idp, NULL, RDMA_PS_TCP))
		return perror("rdma_create_id"), -1;
	if ((o->server ? setup_server(c, o) : setup_client(c, o)) != 0)
		return -1;
	return make_qp(c, o);
}

int vx_accept_next(struct vx_conn *c, struct vx_conn *listener, const struct vx_opts *o)
{
	memset(c, 0, sizeof *c);
	c->server = true;
	c->timeout_ms = o->timeout_ms;
	c->ec = rdma_create_event_channel();
	if (!c->ec)
		return perror("rdma_create_event_channel"), -1;
	if (vx_cm_wait(listener, RDMA_CM_EVENT_CONNECT_REQUEST, o->accept_timeout_ms, &c->id))
		return -1;
	/* The new id's events (ESTABLISHED, DISCONNECTED) would otherwise arrive on the
	 * listener's channel, where the listener's own connection waits for its events. */
	if (rdma_migrate_id(c->id, c->ec))
		return perror("rdma_migrate_id"), -1;
	return make_qp(c, o);
}

int vx_establish(struct vx_conn *c)
{
	struct rdma_conn_param p = {
		.initiator_depth = (uint8_t)c->rd_atom, .responder_resources = (uint8_t)c->rd_atom,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	if (c->server ? rdma_accept(c->id, &p) : rdma_connect(c->id, &p)) {
		perror(c->server ? "rdma_accept" : "rdma_connect");
		return -1;
	}
	if (vx_cm_wait(c, RDMA_CM_EVENT_ESTABLISHED, -2, NULL))
		return -1;
	c->established = true;
	return 0;
}

void vx_disconnect(struct vx_conn *c)
{
	if (!c->id || !c->established)
		return;
	/* EINVAL: the peer's disconnect got there first (its event may still be queued). */
	if (rdma_disconnect(c->id) && !c->disconnected && errno != EINVAL)
		perror("rdma_disconnect");
	/* The peer may have been first: then DISCONNECTED is already queued or seen. */
	if (!c->disconnected)
		(void)vx_cm_wait(c, RDMA_CM_EVENT_DISCONNECTED, 3000, NULL);
	c->established = false;
}

void vx_destroy(struct vx_conn *c)
{
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->cq && ibv_destroy_cq(c->cq))
		perror("ibv_destroy_cq");
	if (c->ch && ibv_destroy_comp_channel(c->ch))
		perror("ibv_destroy_comp_channel");
	if (c->pd && ibv_dealloc_pd(c->pd))
		perror("ibv_dealloc_pd");
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->listen_id)
		rdma_destroy_id(c->listen_id);
	if (c->ec)
		rdma_destroy_event_channel(c->ec);
	memset(c, 0, sizeof *c);
}
