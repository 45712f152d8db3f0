/* rdma_cm: the server listens once; every connected check gets a fresh connection (the
 * check's index travels in the private data, so a stray client is refused), with its own
 * CQs and QP on the check's PD; a check may open a second one the same way. */
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "ic.h"

#define IC_CQE 64
#define IC_RD_ATOM 4

/* Wait for event t on id (any id for a CONNECT_REQUEST); the caller acks *out. Other
 * events are acked and dropped, other connection requests refused; a DISCONNECTED of this
 * check's connections is noted. */
static int cm_wait(struct ic *ic, enum rdma_cm_event_type t, struct rdma_cm_id *id,
		   struct rdma_cm_event **out, int ms)
{
	long long end = ic_now_ms() + ms;
	struct pollfd pfd = { ic->ech->fd, POLLIN, 0 };
	while (ic_now_ms() < end) {
		struct rdma_cm_event *ev;
		if (poll(&pfd, 1, 50) != 1 || rdma_get_cm_event(ic->ech, &ev) != 0)
			continue;
		if (ev->event == t && (!id || ev->id == id)) {
			*out = ev;
			return 0;
		}
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			/* not the one awaited: refused, never left pending (siw's kernel BUG()s in
			 * iw_cm when the peer of a request nobody answered closes) */
			struct rdma_cm_id *stray = ev->id;
			rdma_ack_cm_event(ev);
			rdma_reject(stray, NULL, 0);
			rdma_destroy_id(stray);
			continue;
		}
		struct ic_conn *c = ev->id == ic->conn2.id && ic->conn2.id ? &ic->conn2 : &ic->conn;
		bool mine = ev->id == c->id && c->id;
		if (mine && ev->event == RDMA_CM_EVENT_DISCONNECTED)
			c->disc = true;
		enum rdma_cm_event_type got = ev->event;
		int st = ev->status;
		rdma_ack_cm_event(ev);
		if (mine && t != RDMA_CM_EVENT_DISCONNECTED)
			return ic_fail(ic, "rdma_cm: expected %s, saw %s (status %d)",
				       rdma_event_str(t), rdma_event_str(got), st);
	}
	return ic_fail(ic, "rdma_cm: expected %s, saw nothing in %d ms", rdma_event_str(t), ms);
}

static int cm_expect(struct ic *ic, enum rdma_cm_event_type t, struct rdma_cm_id *id)
{
	struct rdma_cm_event *ev;
	if (cm_wait(ic, t, id, &ev, IC_WAIT_MS) != 0)
		return -1;
	rdma_ack_cm_event(ev);
	return 0;
}

/* The device behind an id bound to a wildcard address is not known before a request comes:
 * then the first device rdma_cm knows stands for this side. */
static int set_ctx(struct ic *ic, struct ibv_context *ctx)
{
	if (!ctx) {
		int n = 0;
		struct ibv_context **l = rdma_get_devices(&n);
		if (!l || n < 1) {
			fprintf(stderr, "iwarp-conform: no RDMA device\n");
			if (l)
				rdma_free_devices(l);
			return -1;
		}
		ctx = l[0];
		rdma_free_devices(l);
	}
	ic->ctx = ctx;
	return 0;
}

int ic_cm_listen(struct ic *ic, const char *addr, const char *port)
{
	struct addrinfo *ai = ic_lookup(addr, port, true);
	if (!ai)
		return -1;
	int rc = rdma_create_id(ic->ech, &ic->listen_id, NULL, RDMA_PS_TCP);
	if (rc == 0)
		rc = rdma_bind_addr(ic->listen_id, ai->ai_addr);
	if (rc == 0)
		rc = rdma_listen(ic->listen_id, 4);
	freeaddrinfo(ai);
	if (rc != 0) {
		fprintf(stderr, "iwarp-conform: rdma_cm listen on %s port %s: %s\n",
			addr ? addr : "*", port, strerror(errno));
		return -1;
	}
	return set_ctx(ic, ic->listen_id->verbs);
}

/* Client: the server's address, resolved once to learn this side's device. */
int ic_cm_resolve(struct ic *ic, const char *addr, const char *port)
{
	struct addrinfo *ai = ic_lookup(addr, port, false);
	if (!ai)
		return -1;
	memcpy(&ic->dst, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	if (rdma_create_id(ic->ech, &id, NULL, RDMA_PS_TCP) != 0)
		return -1;
	int rc = rdma_resolve_addr(id, NULL, (struct sockaddr *)&ic->dst, 2000);
	if (rc == 0)
		rc = cm_wait(ic, RDMA_CM_EVENT_ADDR_RESOLVED, id, &ev, IC_WAIT_MS);
	if (rc == 0) {
		rdma_ack_cm_event(ev);
		rc = set_ctx(ic, id->verbs);
	} else {
		fprintf(stderr, "iwarp-conform: cannot resolve %s: %s\n", addr, ic->res.why);
	}
	rdma_destroy_id(id);
	ic->res.v = IC_PASS;
	return rc;
}

/* SGEs per WR: IC_SGES (the scatter/gather check's), or all the device has if fewer. */
static uint32_t sges(const struct ic *ic)
{
	return ic->dev.max_sge < IC_SGES ? (uint32_t)ic->dev.max_sge : IC_SGES;
}

/* The check's QP: with `inl` inline octets asked for, and without when the device refuses
 * that (the cap it reports then says what it has). */
static int conn_setup(struct ic *ic, struct ic_conn *c, struct rdma_cm_id *id)
{
	c->id = id;
	c->ch = ibv_create_comp_channel(id->verbs);
	EXPECT(ic, c->ch, "ibv_create_comp_channel failed: %s", strerror(errno));
	c->scq = ibv_create_cq(id->verbs, IC_CQE, NULL, NULL, 0);
	c->rcq = ibv_create_cq(id->verbs, IC_CQE, NULL, c->ch, 0);
	EXPECT(ic, c->scq && c->rcq, "ibv_create_cq(%d) failed: %s", IC_CQE, strerror(errno));
	struct ibv_qp_init_attr qa = { .send_cq = c->scq, .recv_cq = c->rcq,
		.srq = ic->srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = sges(ic),
			 .max_recv_sge = sges(ic),
			 .max_inline_data = ic_checks[ic->check].inl } };
	struct ibv_qp_init_attr keep = qa;
	int rc = rdma_create_qp(id, ic->pd, &qa);
	if (rc != 0 && keep.cap.max_inline_data) {
		qa = keep;
		qa.cap.max_inline_data = 0;
		rc = rdma_create_qp(id, ic->pd, &qa);
	}
	EXPECT(ic, rc == 0, "rdma_create_qp failed: %s", strerror(errno));
	c->qp = id->qp;
	c->cap = qa.cap;
	return 0;
}

/* ORD or IRD: the check's, else IC_RD_ATOM; never above the device's maximum. */
static int rd_atom(const struct ic *ic, int dev_max)
{
	int want = ic_checks[ic->check].rd ? ic_checks[ic->check].rd : IC_RD_ATOM;
	return dev_max < want ? dev_max : want;
}

static int accept_on(struct ic *ic, struct ic_conn *c, uint32_t check)
{
	struct rdma_cm_event *ev;
	if (cm_wait(ic, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &ev, 2 * IC_WAIT_MS) != 0)
		return -1;
	struct rdma_cm_id *id = ev->id;
	uint32_t want = htobe32(check), got = 0;
	if (ev->param.conn.private_data_len >= sizeof(got))
		memcpy(&got, ev->param.conn.private_data, sizeof(got));
	rdma_ack_cm_event(ev);
	if (got != want) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return ic_fail(ic, "connection request for check %u, expected %u", be32toh(got),
			       check);
	}
	if (conn_setup(ic, c, id) != 0)
		return -1;
	struct rdma_conn_param cp = { .responder_resources = rd_atom(ic, ic->dev.max_qp_rd_atom),
				      .initiator_depth = rd_atom(ic, ic->dev.max_qp_init_rd_atom) };
	EXPECT(ic, rdma_accept(id, &cp) == 0, "rdma_accept failed: %s", strerror(errno));
	return cm_expect(ic, RDMA_CM_EVENT_ESTABLISHED, id);
}

int ic_cm_accept(struct ic *ic, uint32_t check)
{
	return accept_on(ic, &ic->conn, check);
}

/* The check's second connection, from the same client. */
int ic_cm_accept2(struct ic *ic)
{
	return accept_on(ic, &ic->conn2, (uint32_t)ic->check);
}

static int connect_on(struct ic *ic, struct ic_conn *c, uint32_t check)
{
	struct rdma_cm_id *id;
	EXPECT(ic, rdma_create_id(ic->ech, &id, NULL, RDMA_PS_TCP) == 0,
	       "rdma_create_id failed: %s", strerror(errno));
	c->id = id;
	EXPECT(ic, rdma_resolve_addr(id, NULL, (struct sockaddr *)&ic->dst, 2000) == 0,
	       "rdma_resolve_addr failed: %s", strerror(errno));
	if (cm_expect(ic, RDMA_CM_EVENT_ADDR_RESOLVED, id) != 0)
		return -1;
	EXPECT(ic, rdma_resolve_route(id, 2000) == 0, "rdma_resolve_route failed: %s",
	       strerror(errno));
	if (cm_expect(ic, RDMA_CM_EVENT_ROUTE_RESOLVED, id) != 0 || conn_setup(ic, c, id) != 0)
		return -1;
	uint32_t pd = htobe32(check);
	struct rdma_conn_param cp = { .private_data = &pd, .private_data_len = sizeof(pd),
				      .responder_resources = rd_atom(ic, ic->dev.max_qp_rd_atom),
				      .initiator_depth = rd_atom(ic, ic->dev.max_qp_init_rd_atom) };
	EXPECT(ic, rdma_connect(id, &cp) == 0, "rdma_connect failed: %s", strerror(errno));
	return cm_expect(ic, RDMA_CM_EVENT_ESTABLISHED, id);
}

int ic_cm_connect(struct ic *ic, uint32_t check)
{
	return connect_on(ic, &ic->conn, check);
}

int ic_cm_connect2(struct ic *ic)
{
	return connect_on(ic, &ic->conn2, (uint32_t)ic->check);
}

static int wait_disconnect(struct ic *ic, struct ic_conn *c, int ms)
{
	struct rdma_cm_event *ev;
	if (c->disc)
		return 0;
	if (cm_wait(ic, RDMA_CM_EVENT_DISCONNECTED, c->id, &ev, ms) != 0)
		return -1;
	if (!c->disc)
		rdma_ack_cm_event(ev);
	c->disc = true;
	return 0;
}

int ic_cm_wait_disconnect(struct ic *ic, int ms)
{
	return wait_disconnect(ic, &ic->conn, ms);
}

static void conn_free(struct ic *ic, struct ic_conn *c)
{
	if (c->id && c->qp && !c->disc) {
		rdma_disconnect(c->id);
		struct ic_res keep = ic->res;
		wait_disconnect(ic, c, 1000);
		ic->res = keep; /* a peer that already left is no failure of the check */
	}
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->scq)
		ibv_destroy_cq(c->scq);
	if (c->rcq)
		ibv_destroy_cq(c->rcq);
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	if (c->id)
		rdma_destroy_id(c->id);
	memset(c, 0, sizeof(*c));
}

/* The check's connections, the second first. */
void ic_conn_free(struct ic *ic)
{
	conn_free(ic, &ic->conn2);
	conn_free(ic, &ic->conn);
}
