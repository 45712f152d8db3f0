/* Connection machinery on rdma_cm (VIA 1.0 §4, §9.4; docs/vipl.md): each VI
 * connection is one rdma_cm id (one TCP connection, MPA v2 with RTR) with its own verbs CQ
 * and RC QP, created when the connection is made and destroyed when it ends. The listener of
 * a NIC binds the NIC's address; incoming requests carry the VI attributes and discriminators
 * in the MPA private data (vipl_wire.c). Everything here runs with the NIC lock held; the NIC
 * thread calls vipl_cm_event for every rdma_cm event (already acknowledged). */
#include "vipl_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <softrnic/verbs_ext.h>

/* QP and CQ of a connection on id (Idle QP: the receives held in VIPL are posted at once, so
 * they are there before the peer can send). Unreliable VIs get a tolerant QP
 * (SOFTRNIC_QP_TOLERANT); the VI's RDMA enables become the QP's remote access rights (Reliable
 * Reception also needs remote Read and Write for the peer's acknowledgements, vipl_rr.c). */
int vipl_conn_setup(struct vipl_vi *vi, struct rdma_cm_id *id)
{
	struct vipl_nic *nic = vi->o.nic;
	struct vipl_conn *c = &vi->c;
	bool rr = vi->attr.ReliabilityLevel == VIP_SERVICE_RELIABLE_RECEPTION;
	bool written = rr || vi->dfc; /* the peer writes acknowledgements or credits here */

	memset(c, 0, sizeof(*c));
	c->id = id;
	c->cq = ibv_create_cq(nic->ctx, 2 * VIPL_QP_DEPTH + VIPL_OWN_WRS + 8, NULL, nic->cch, 0);
	if (c->cq == NULL || ibv_req_notify_cq(c->cq, 0) != 0)
		goto fail;
	struct ibv_qp_init_attr qa = { .send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = VIPL_QP_DEPTH + VIPL_OWN_WRS,
			 .max_recv_wr = VIPL_QP_DEPTH,
			 .max_send_sge = 16, .max_recv_sge = 16 } };
	if (qa.cap.max_send_sge > (uint32_t)nic->dattr.max_sge)
		qa.cap.max_send_sge = qa.cap.max_recv_sge = (uint32_t)nic->dattr.max_sge;
	unsigned flags = vi->attr.ReliabilityLevel == VIP_SERVICE_UNRELIABLE ? SOFTRNIC_QP_TOLERANT : 0;
	c->qp = softrnic_create_qp(vi->ptag->pd, &qa, flags);
	if (c->qp == NULL)
		goto fail;
	id->qp = c->qp;
	id->pd = vi->ptag->pd;
	vi->sge_max = qa.cap.max_send_sge;
	vi->rsge_max = qa.cap.max_recv_sge;
	struct ibv_qp_attr at = { .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	if (vi->attr.EnableRdmaWrite || written)
		at.qp_access_flags |= IBV_ACCESS_REMOTE_WRITE;
	if (vi->attr.EnableRdmaRead || rr)
		at.qp_access_flags |= IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(c->qp, &at, IBV_QP_ACCESS_FLAGS) != 0)
		goto fail;
	{ /* every connection: RR and DFC use it, and a DFC peer writes credits into it */
		c->ack = aligned_alloc(64, 64);
		if (c->ack == NULL)
			goto fail;
		memset(c->ack, 0, 64);
		c->ack_mr = ibv_reg_mr(vi->ptag->pd, c->ack, 64, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
		if (c->ack_mr == NULL)
			goto fail;
	}
	/* RR and DFC need the peer to write (and RR to read) the acknowledgement block even on
	 * a VI that allows no RDMA Write or Read: the connection takes those at that block
	 * only, and refuses the application's as VIA says (a protection error) */
	if ((written && !vi->attr.EnableRdmaWrite &&
	     softrnic_qp_limit_inbound(c->qp, 0, c->ack_mr->rkey) != 0) ||
	    (rr && !vi->attr.EnableRdmaRead &&
	     softrnic_qp_limit_inbound(c->qp, 1, c->ack_mr->rkey) != 0))
		goto fail;
	vipl_rq_pump(vi);
	return 0;
fail:
	c->id = NULL; /* the caller owns id on failure */
	if (c->qp != NULL) {
		id->qp = NULL;
		ibv_destroy_qp(c->qp);
	}
	if (c->cq != NULL)
		ibv_destroy_cq(c->cq);
	if (c->ack_mr != NULL)
		ibv_dereg_mr(c->ack_mr);
	free(c->ack);
	memset(c, 0, sizeof(*c));
	return -1;
}

/* Abort: the stream is reset (VIA Disconnect is an abort, §4.2), the QP and CQ go with every
 * completion still queued; the caller flushes the VIPL queues. */
static void conn_destroy(struct vipl_conn *c)
{
	if (c->id != NULL) {
		if (c->id->qp != NULL)
			rdma_destroy_qp(c->id);
		rdma_destroy_id(c->id);
	} else if (c->qp != NULL) {
		ibv_destroy_qp(c->qp);
	}
	if (c->cq != NULL)
		ibv_destroy_cq(c->cq);
	if (c->ack_mr != NULL)
		ibv_dereg_mr(c->ack_mr);
	free(c->ack);
	memset(c, 0, sizeof(*c));
}

/* Abort the connection now (the NIC thread, or an API call that must not wait). */
void vipl_conn_teardown(struct vipl_vi *vi)
{
	if (vi->o.nic->wire != &vipl_wire_iwarp) {
		vi->o.nic->wire->conn_end(vi, 0);
		return;
	}
	vipl_arm_forget(vi);
	conn_destroy(&vi->c);
	vi->sq.inflight = vi->rq.inflight = 0;
}

/* Hand the connection to the NIC thread to destroy after_ms from now: an API call that gives
 * up (timeout, Disconnect) returns at once instead of waiting for the stream's teardown.
 * Completions still in its CQ are never looked at (no VI names the CQ any more). */
void vipl_iwarp_bury_after(struct vipl_vi *vi, uint64_t after_ms)
{
	struct vipl_nic *nic = vi->o.nic;
	struct vipl_grave *g = calloc(1, sizeof(*g));
	if (g == NULL || vi->c.id == NULL) {
		free(g);
		vipl_conn_teardown(vi);
		return;
	}
	vipl_arm_forget(vi);
	g->c = vi->c;
	g->at_ms = after_ms ? vipl_now_ms() + after_ms : 0;
	g->next = nic->graves;
	nic->graves = g;
	memset(&vi->c, 0, sizeof(vi->c));
	vi->sq.inflight = vi->rq.inflight = 0;
	vipl_nic_wake(nic);
}

void vipl_iwarp_req_release(struct vipl_req *r)
{
	if (r->id != NULL)
		rdma_destroy_id(r->id);
	r->id = NULL;
}

void vipl_req_free(struct vipl_req *r)
{
	struct vipl_nic *nic = r->o.nic;
	nic->wire->req_release(r);
	if (r->o.handle != NULL) {
		vipl_handle_remove(&r->o); /* frees it with the last reference */
	} else {
		free(r);
		vipl_handle_put(&nic->o);
	}
}

static void req_unlink(struct vipl_nic *nic, struct vipl_req *r)
{
	for (struct vipl_req **pp = &nic->reqs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			nic->nreqs--;
			return;
		}
}

/* What the server is told of the requester's wait: the time left (ms), so it can answer
 * NO_MATCH before the requester gives up (vipl_hold_ms). */
uint32_t vipl_requester_timeout(const struct vipl_vi *vi)
{
	uint64_t now = vipl_now_ms();
	if (vi->deadline_ms == 0)
		return PD_TIMEOUT_INFINITE;
	if (vi->deadline_ms <= now)
		return 0;
	uint64_t left = vi->deadline_ms - now;
	return left < PD_TIMEOUT_INFINITE ? (uint32_t)left : PD_TIMEOUT_INFINITE - 1;
}

/* How long an unmatched request is held for a ConnectWait to come: half the requester's
 * remaining wait, at most VIPL_BACKLOG_MS; so the requester hears NO_MATCH (VIPL 1.0) while it
 * still waits, in time to try again. */
uint64_t vipl_hold_ms(uint32_t timeout_ms)
{
	uint64_t half = timeout_ms == PD_TIMEOUT_INFINITE ? VIPL_BACKLOG_MS : timeout_ms / 2;
	return half < VIPL_BACKLOG_MS ? half : VIPL_BACKLOG_MS;
}

/* Private data of this side for a request / accept / reject. */
size_t vipl_pdata_for(struct vipl_vi *vi, uint8_t kind, uint8_t *buf, size_t cap);
size_t vipl_pdata_for(struct vipl_vi *vi, uint8_t kind, uint8_t *buf, size_t cap)
{
	struct vipl_pdata p = { .kind = kind };
	if (vi != NULL) {
		p.rel = (uint8_t)vi->attr.ReliabilityLevel;
		p.flags = (vi->attr.EnableRdmaWrite ? PD_F_RDMAW : 0) |
			  (vi->attr.EnableRdmaRead ? PD_F_RDMAR : 0) | (vi->dfc ? PD_F_DFC : 0);
		p.mtu = (uint32_t)vi->granted_mtu;
		if (vi->c.ack_mr != NULL) {
			p.ack_va = (uintptr_t)vi->c.ack;
			p.ack_stag = vi->c.ack_mr->rkey;
		}
		memcpy(p.host, vi->o.nic->addr, VIPL_ADDR_LEN);
		p.timeout_ms = vipl_requester_timeout(vi);
		p.calling_len = (uint8_t)vi->local_disc_len;
		memcpy(p.calling, vi->local_disc, vi->local_disc_len);
		p.called_len = (uint8_t)vi->remote_disc_len;
		memcpy(p.called, vi->remote_disc, vi->remote_disc_len);
	}
	return vipl_pdata_encode(&p, buf, cap);
}

static void bury_id(struct vipl_nic *nic, struct rdma_cm_id *id);

/* Reject and retire id: destroying it at once could reset the stream before the MPA Reject
 * left, and the requester would see a refused connection instead of the reason. */
void vipl_reject(struct vipl_nic *nic, struct rdma_cm_id *id, uint8_t kind)
{
	uint8_t buf[64];
	size_t n = vipl_pdata_for(NULL, kind, buf, sizeof(buf));
	rdma_reject(id, buf, (uint8_t)n);
	bury_id(nic, id);
}

/* A rejected id goes once its Reject had time to leave. */
static void bury_id(struct vipl_nic *nic, struct rdma_cm_id *id)
{
	struct vipl_grave *g = calloc(1, sizeof(*g));
	if (g == NULL) {
		rdma_destroy_id(id);
		return;
	}
	g->id = id;
	g->at_ms = vipl_now_ms() + VIPL_GRAVE_MS;
	g->next = nic->graves;
	nic->graves = g;
	vipl_nic_wake(nic);
}

void vipl_iwarp_reject(struct vipl_nic *nic, struct vipl_req *r, uint8_t kind)
{
	if (r->id == NULL)
		return;
	vipl_reject(nic, r->id, kind);
	r->id = NULL;
}

void vipl_redirect(struct vipl_nic *nic, struct rdma_cm_id *id, const uint8_t *host)
{
	uint8_t buf[64];
	struct vipl_pdata p = { .kind = PD_REDIRECT };
	memcpy(p.host, host, VIPL_ADDR_LEN);
	size_t n = vipl_pdata_encode(&p, buf, sizeof(buf));
	rdma_reject(id, buf, (uint8_t)n);
	bury_id(nic, id);
}

/* Detach the graves that are due (all: every one); NIC lock held. */
struct vipl_grave *vipl_graves_take(struct vipl_nic *nic, bool all)
{
	uint64_t now = vipl_now_ms();
	struct vipl_grave *due = NULL;
	for (struct vipl_grave **pp = &nic->graves; *pp != NULL;) {
		struct vipl_grave *g = *pp;
		if (all || now >= g->at_ms) {
			*pp = g->next;
			g->next = due;
			due = g;
		} else {
			pp = &g->next;
		}
	}
	return due;
}

/* Destroy detached graves; no NIC lock needed (they belong to nobody any more). */
void vipl_graves_destroy(struct vipl_grave *g)
{
	while (g != NULL) {
		struct vipl_grave *n = g->next;
		if (g->id != NULL)
			rdma_destroy_id(g->id);
		conn_destroy(&g->c);
		free(g);
		g = n;
	}
}

void vipl_graves_free(struct vipl_nic *nic, bool all)
{
	vipl_graves_destroy(vipl_graves_take(nic, all));
}

/* A connect that failed gave the held receives to a QP that is gone: they wait in VIPL again
 * for the next connection (VIA §5.1: held until Connected or Disconnect). */
void vipl_rq_requeue(struct vipl_vi *vi)
{
	struct vipl_wq *q = &vi->rq;
	q->issue = NULL;
	for (struct vipl_wqe *e = q->head; e != NULL; e = e->next) {
		if (e->state == WQE_ISSUED) {
			e->state = WQE_WAIT;
			e->pending = 0;
			if (e->bounce_mr != NULL)
				ibv_dereg_mr(e->bounce_mr);
			free(e->bounce);
			e->bounce_mr = NULL;
			e->bounce = NULL;
		}
		if (e->state == WQE_WAIT && q->issue == NULL)
			q->issue = e;
	}
	q->inflight = 0;
}

void vipl_connect_done(struct vipl_vi *vi, VIP_RETURN rc)
{
	if (rc != VIP_SUCCESS) {
		vipl_conn_bury(vi);
		vipl_rq_requeue(vi);
		vi->state = VIP_STATE_IDLE;
	}
	if (vi->mode == CM_PEER_ACTIVE || vi->mode == CM_PEER_PASSIVE)
		vi->o.nic->npeer--;
	if (vi->mode == CM_PEER_PASSIVE)
		vipl_reg_del(vi->o.nic, vi->local_disc, vi->local_disc_len);
	vi->mode = CM_NONE;
	vi->result = rc;
	vi->deadline_ms = vi->retry_ms = 0;
	pthread_cond_broadcast(&vi->o.nic->cv);
}

/* Remote attributes as the peer's private data states them. */
static void remote_from(struct vipl_vi *vi, const struct vipl_pdata *p)
{
	memset(&vi->remote, 0, sizeof(vi->remote));
	vi->remote.ReliabilityLevel = p->rel;
	vi->remote.MaxTransferSize = p->mtu;
	vi->remote.EnableRdmaWrite = (p->flags & PD_F_RDMAW) != 0;
	vi->remote.EnableRdmaRead = (p->flags & PD_F_RDMAR) != 0;
	vi->c.peer_dfc = (p->flags & PD_F_DFC) != 0;
	if (vi->c.peer_dfc)
		vi->remote.ReliabilityLevel |= VIP_SERVICE_DFC;
	vi->c.peer_ack_va = p->ack_va;
	vi->c.peer_ack_stag = p->ack_stag;
}

/* Accept id for vi (ConnectAccept, or a matching peer request): QP, private data, rdma_accept.
 * The granted MTU is the smaller request. */
int vipl_accept_on(struct vipl_vi *vi, struct rdma_cm_id *id, const struct vipl_pdata *p);
int vipl_accept_on(struct vipl_vi *vi, struct rdma_cm_id *id, const struct vipl_pdata *p)
{
	uint8_t buf[256];
	vi->granted_mtu = p->mtu < vi->attr.MaxTransferSize ? p->mtu : vi->attr.MaxTransferSize;
	if (vipl_conn_setup(vi, id) != 0)
		return -1;
	remote_from(vi, p);
	vi->remote.MaxTransferSize = vi->granted_mtu;
	vi->remote_disc_len = p->calling_len;
	memcpy(vi->remote_disc, p->calling, p->calling_len);
	size_t n = vipl_pdata_for(vi, PD_ACCEPT, buf, sizeof(buf));
	struct rdma_conn_param cp = { .private_data = buf, .private_data_len = (uint8_t)n,
				      .responder_resources = 0xFF, .initiator_depth = 0xFF };
	if (rdma_accept(id, &cp) != 0) {
		vi->c.id = NULL; /* the caller still owns id */
		if (vi->c.qp) {
			id->qp = NULL;
			ibv_destroy_qp(vi->c.qp);
			vi->c.qp = NULL;
		}
		vipl_conn_teardown(vi);
		vipl_rq_requeue(vi);
		return -1;
	}
	vi->state = VIP_STATE_CONNECT_PENDING;
	return 0;
}

/* VipConnectAccept of a claimed request r on the iWARP wire. */
int vipl_iwarp_accept(struct vipl_vi *vi, struct vipl_req *r)
{
	struct vipl_pdata p = { .rel = r->rel, .flags = r->flags, .mtu = r->mtu,
		.ack_va = r->ack_va, .ack_stag = r->ack_stag, .calling_len = r->calling_len };
	memcpy(p.calling, r->calling, r->calling_len);
	memcpy(p.host, r->host, VIPL_ADDR_LEN);
	if (vipl_accept_on(vi, r->id, &p) != 0)
		return -1;
	r->id = NULL; /* the VI's connection now */
	return 0;
}

/* Resolve and connect to vi->conn_host; the rest follows from the id's events (on_active). */
static int connect_to(struct vipl_vi *vi)
{
	struct vipl_nic *nic = vi->o.nic;
	struct rdma_cm_id *id;
	struct sockaddr_in dst;
	/* the request's kind (client / peer) follows vi->mode at ROUTE_RESOLVED */
	if (rdma_create_id(nic->ech, &id, NULL, RDMA_PS_TCP) != 0)
		return -1;
	vipl_addr_sin(vi->conn_host, &dst);
	memset(&vi->c, 0, sizeof(vi->c));
	vi->c.id = id;
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) != 0) {
		rdma_destroy_id(id);
		vi->c.id = NULL;
		return -1;
	}
	return 0;
}

/* A new attempt at the address the application named. */
int vipl_iwarp_connect(struct vipl_vi *vi)
{
	return connect_to(vi);
}

static struct vipl_vi *vi_of_id(struct vipl_nic *nic, struct rdma_cm_id *id)
{
	for (struct vipl_vi *vi = nic->vis; vi != NULL; vi = vi->next)
		if (vi->c.id == id)
			return vi;
	return NULL;
}

static struct vipl_req *req_of_id(struct vipl_nic *nic, struct rdma_cm_id *id)
{
	for (struct vipl_req *r = nic->reqs; r != NULL; r = r->next)
		if (r->id == id)
			return r;
	return NULL;
}

static struct vipl_vi *peer_waiter(struct vipl_nic *nic, const struct vipl_pdata *p)
{
	for (struct vipl_vi *vi = nic->vis; vi != NULL; vi = vi->next)
		if (vi->mode == CM_PEER_PASSIVE && vi->c.id == NULL &&
		    vipl_disc_cmp(vi->local_disc, vi->local_disc_len, p->called, p->called_len) == 0 &&
		    vipl_disc_cmp(vi->remote_disc, vi->remote_disc_len, p->calling, p->calling_len) == 0 &&
		    (memcmp(vi->remote_host, p->host, VIPL_ADDR_LEN) == 0 ||
		     vipl_rdv_named(nic, vi->remote_host)))
			return vi;
	return NULL;
}

/* At the host's well-known port (rdv), a request for a discriminator another process of the
 * host waits for goes on to that process: 0 when it was redirected. */
static int forward(struct vipl_nic *nic, struct rdma_cm_id *id, bool rdv, const uint8_t *called,
		   size_t called_len)
{
	uint8_t host[VIPL_ADDR_LEN];
	if (!rdv || vipl_reg_local(nic, called, called_len) ||
	    vipl_reg_lookup(nic, called, called_len, host) != 0)
		return -1;
	vipl_redirect(nic, id, host);
	return 0;
}

int vipl_iwarp_redirect(struct vipl_nic *nic, struct vipl_req *r)
{
	if (forward(nic, r->id, true, r->called, r->called_len) != 0)
		return -1;
	r->id = NULL;
	return 0;
}

static void on_peer_request(struct vipl_nic *nic, struct rdma_cm_id *id, bool rdv,
			    const struct vipl_pdata *p)
{
	struct vipl_vi *vi = peer_waiter(nic, p);
	if (vi == NULL) {
		if (forward(nic, id, rdv, p->called, p->called_len) != 0)
			vipl_reject(nic, id, PD_NO_MATCH); /* VITCP §4: the active side retries */
	} else if (p->rel != vi->attr.ReliabilityLevel) {
		vipl_reject(nic, id, PD_REJECT);
		vipl_connect_done(vi, VIP_INVALID_RELIABILITY_LEVEL);
	} else if (vipl_accept_on(vi, id, p) != 0) {
		vipl_reject(nic, id, PD_REJECT);
		vipl_connect_done(vi, VIP_ERROR_RESOURCE);
	}
}

/* A client request waits here for a ConnectWait (D121), at most hold_ms. One that came to the
 * well-known port for nobody of this NIC looks for its process again every
 * VIPL_RDV_RECHECK_MS (vipl_cm_timers): that process may call ConnectWait later. */
static void on_client_request(struct vipl_nic *nic, struct rdma_cm_id *id, bool rdv,
			      const struct vipl_pdata *p)
{
	if (forward(nic, id, rdv, p->called, p->called_len) == 0)
		return;
	struct vipl_req *r = nic->nreqs < VIPL_BACKLOG_MAX ? calloc(1, sizeof(*r)) : NULL;
	if (r == NULL) {
		vipl_reject(nic, id, PD_NO_MATCH);
		return;
	}
	r->o.kind = VK_CONN;
	r->o.nic = nic;
	atomic_fetch_add(&nic->o.refs, 1);
	r->id = id;
	uint64_t now = vipl_now_ms();
	r->expires_ms = now + vipl_hold_ms(p->timeout_ms);
	if (rdv && !vipl_reg_local(nic, p->called, p->called_len))
		r->recheck_ms = now + VIPL_RDV_RECHECK_MS;
	r->rel = p->rel;
	r->flags = p->flags;
	r->mtu = p->mtu;
	r->ack_va = p->ack_va;
	r->ack_stag = p->ack_stag;
	memcpy(r->host, p->host, VIPL_ADDR_LEN);
	r->calling_len = p->calling_len;
	r->called_len = p->called_len;
	memcpy(r->calling, p->calling, p->calling_len);
	memcpy(r->called, p->called, p->called_len);
	struct vipl_req **tail = &nic->reqs; /* FIFO: ConnectWait takes the oldest match */
	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = r;
	nic->nreqs++;
	pthread_cond_broadcast(&nic->cv);
	vipl_nic_wake(nic); /* its expiry is a timer */
}

static void on_request(struct vipl_nic *nic, struct rdma_cm_event *ev)
{
	struct vipl_pdata p;
	bool rdv = vipl_rdv_is(nic, ev->listen_id);
	if (vipl_pdata_decode(ev->param.conn.private_data, ev->param.conn.private_data_len, &p) != 0)
		vipl_reject(nic, ev->id, PD_NO_MATCH); /* not a VIPL peer */
	else if (p.kind == PD_PEER)
		on_peer_request(nic, ev->id, rdv, &p);
	else if (p.kind == PD_REQUEST)
		on_client_request(nic, ev->id, rdv, &p);
	else
		vipl_reject(nic, ev->id, PD_NO_MATCH);
}

/* The host's well-known port sent this connect on to the process that waits for it: connect
 * there instead (the same ConnectRequest, its time running on). 0 when under way. */
static int follow_redirect(struct vipl_vi *vi, const uint8_t *host)
{
	if (vi->redirects >= VIPL_MAX_REDIRECTS)
		return -1;
	vi->redirects++;
	vipl_conn_teardown(vi);
	vipl_rq_requeue(vi);
	memcpy(vi->conn_host, host, VIPL_ADDR_LEN);
	return connect_to(vi);
}

/* Events of the active side before ESTABLISHED. */
static void on_active(struct vipl_vi *vi, struct rdma_cm_event *ev)
{
	struct vipl_nic *nic = vi->o.nic;
	struct vipl_pdata p;
	uint8_t buf[256];
	VIP_RETURN rc = VIP_NO_MATCH;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(vi->c.id, 2000) == 0)
			return;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		struct rdma_cm_id *id = vi->c.id;
		if (vipl_conn_setup(vi, id) != 0) {
			vi->c.id = id;
			rc = VIP_ERROR_RESOURCE;
			break;
		}
		size_t n = vipl_pdata_for(vi, vi->mode == CM_CLIENT ? PD_REQUEST : PD_PEER, buf,
					  sizeof(buf));
		struct rdma_conn_param cp = { .private_data = buf, .private_data_len = (uint8_t)n,
					      .responder_resources = 0xFF, .initiator_depth = 0xFF };
		if (rdma_connect(id, &cp) == 0)
			return;
		rc = VIP_ERROR_RESOURCE;
		break;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		if (vipl_pdata_decode(ev->param.conn.private_data, ev->param.conn.private_data_len,
				      &p) != 0 || p.kind != PD_ACCEPT) {
			rc = VIP_ERROR_RESOURCE;
			break;
		}
		remote_from(vi, &p);
		vi->granted_mtu = p.mtu; /* the accepter granted the minimum */
		vi->c.up = true;
		vi->state = VIP_STATE_CONNECTED;
		vipl_dfc_credit(vi);
		vipl_sq_pump(vi);
		vipl_connect_done(vi, VIP_SUCCESS);
		return;
	case RDMA_CM_EVENT_REJECTED:
		if (vipl_pdata_decode(ev->param.conn.private_data, ev->param.conn.private_data_len,
				      &p) != 0)
			break; /* refused: no VIPL listener there */
		if (p.kind == PD_REJECT)
			rc = VIP_REJECT;
		else if (p.kind == PD_REDIRECT && follow_redirect(vi, p.host) == 0)
			return;
		break; /* NO_MATCH */
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		/* no route, or the host did not answer (cLAN's code; a peer connect keeps
		 * trying as on NO_MATCH) */
		rc = vi->mode == CM_PEER_ACTIVE ? VIP_NO_MATCH : VIP_NOT_REACHABLE;
		break;
	default:
		break; /* CONNECT_ERROR: nobody to match */
	}
	if (vi->mode == CM_PEER_ACTIVE && rc == VIP_NO_MATCH &&
	    (vi->deadline_ms == 0 || vipl_now_ms() + VIPL_PEER_RETRY_MS < vi->deadline_ms)) {
		vipl_conn_teardown(vi); /* VITCP §4: retry until the timeout */
		vipl_rq_requeue(vi);
		vi->retry_ms = vipl_now_ms() + VIPL_PEER_RETRY_MS;
		vipl_nic_wake(nic);
		return;
	}
	vipl_connect_done(vi, vi->mode == CM_PEER_ACTIVE && rc == VIP_NO_MATCH ? VIP_TIMEOUT : rc);
}

static void on_vi_event(struct vipl_vi *vi, struct rdma_cm_event *ev)
{
	if (vi->state == VIP_STATE_CONNECTED) {
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			vipl_poll_cq(vi); /* what arrived before the end counts */
			vipl_vi_fail(vi, VIP_ERROR_CONN_LOST, true,
				     ev->event == RDMA_CM_EVENT_DISCONNECTED);
		}
		return;
	}
	if (vi->mode == CM_CLIENT || vi->mode == CM_PEER_ACTIVE) {
		on_active(vi, ev);
		return;
	}
	/* passive side (Accept, peer passive) waiting for ESTABLISHED */
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
		vi->c.up = true;
		vi->state = VIP_STATE_CONNECTED;
		vipl_dfc_credit(vi);
		vipl_sq_pump(vi);
		vipl_connect_done(vi, VIP_SUCCESS);
	} else if (vi->mode != CM_NONE) {
		vipl_connect_done(vi, VIP_ERROR_RESOURCE);
	}
}

void vipl_cm_event(struct vipl_nic *nic, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (ev->listen_id != NULL &&
		    (ev->listen_id == nic->listener || ev->listen_id == nic->rdv))
			on_request(nic, ev);
		else
			rdma_destroy_id(ev->id);
		return;
	}
	struct vipl_vi *vi = vi_of_id(nic, ev->id);
	if (vi != NULL) {
		on_vi_event(vi, ev);
		return;
	}
	struct vipl_req *r = req_of_id(nic, ev->id);
	if (r != NULL && (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
			  ev->event == RDMA_CM_EVENT_CONNECT_ERROR)) {
		r->dead = true; /* the requester gave up */
		if (!r->claimed) {
			req_unlink(nic, r);
			vipl_req_free(r);
		}
	}
}

static void upd(uint64_t *next, uint64_t t)
{
	if (t != 0 && (*next == 0 || t < *next))
		*next = t;
}

/* A request held at the well-known port: redirected (0) when its process is found now; a
 * ConnectWait of this NIC for it makes it ours to serve. */
static int recheck(struct vipl_nic *nic, struct vipl_req *r, uint64_t now)
{
	r->recheck_ms = 0;
	if (r->dead || vipl_reg_local(nic, r->called, r->called_len))
		return -1;
	if (nic->wire->redirect(nic, r) == 0)
		return 0;
	r->recheck_ms = now + VIPL_RDV_RECHECK_MS;
	return -1;
}

/* ConnectWait backlog expiry, the peer connects' retries and deadlines, the rendezvous. */
void vipl_cm_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next)
{
	for (struct vipl_grave *g = nic->graves; g != NULL; g = g->next)
		upd(next, g->at_ms);
	for (struct vipl_req **pp = &nic->reqs; *pp != NULL;) {
		struct vipl_req *r = *pp;
		if (!r->claimed && (r->dead || now >= r->expires_ms)) {
			*pp = r->next;
			nic->nreqs--;
			if (!r->dead)
				nic->wire->reject(nic, r, PD_NO_MATCH);
			vipl_req_free(r);
			continue;
		}
		if (!r->claimed && r->recheck_ms != 0 && now >= r->recheck_ms &&
		    recheck(nic, r, now) == 0) {
			*pp = r->next;
			nic->nreqs--;
			vipl_req_free(r);
			continue;
		}
		if (!r->claimed) {
			upd(next, r->expires_ms);
			upd(next, r->recheck_ms);
		}
		pp = &r->next;
	}
	vipl_rdv_timers(nic, now, next);
	vipl_dfc_timers(nic, now, next);
	if (nic->wire->timers != NULL)
		nic->wire->timers(nic, now, next);
	if (nic->npeer == 0)
		return; /* no peer connect in progress: nothing to scan */
	unsigned seen = 0, total = nic->npeer;
	for (struct vipl_vi *vi = nic->vis; vi != NULL && seen < total; vi = vi->next) {
		if (vi->mode != CM_PEER_ACTIVE && vi->mode != CM_PEER_PASSIVE)
			continue;
		seen++;
		if (vi->deadline_ms != 0 && now >= vi->deadline_ms && vi->state != VIP_STATE_CONNECTED) {
			vipl_connect_done(vi, VIP_TIMEOUT);
			continue;
		}
		if (vi->retry_ms != 0 && now >= vi->retry_ms) {
			vi->retry_ms = 0;
			if (vipl_start_connect(vi) != 0)
				vi->retry_ms = now + VIPL_PEER_RETRY_MS;
		}
		upd(next, vi->deadline_ms);
		upd(next, vi->retry_ms);
	}
}
