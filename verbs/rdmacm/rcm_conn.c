/* Connections: rdma_listen, rdma_connect, rdma_accept, rdma_reject, rdma_disconnect,
 * rdma_get_request, and the per-state progress the engine thread runs (rcm_conn_*).
 *
 * Event mapping (what librdmacm reports for iWARP, where iw_cm's CONNECT_REPLY status picks
 * the event): Reply accepted -> ESTABLISHED; MPA Reject or TCP refused / reset during setup
 * -> REJECTED (status -ECONNREFUSED / -ECONNRESET, the Reject's private data); a setup timer
 * or unreachable network -> UNREACHABLE (-ETIMEDOUT / -ENETUNREACH / -EHOSTUNREACH); anything
 * else (negotiation failure -EPROTO, peer Terminate -ECONNABORTED) -> CONNECT_ERROR. */
#include "rcm_int.h"
#include "verbs_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

static socklen_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in);
}

/* The MPA policy: defaults, SOFTRNIC_MPA (rcm_mpa_env.c), the IRD / ORD asked for; -EINVAL
 * when SOFTRNIC_MPA names an option we do not know. */
static int cfg_for(struct rn_cm_cfg *cfg, uint8_t ird, uint8_t ord)
{
	rn_cm_cfg_default(cfg);
	if (rcm_mpa_env(&cfg->policy) != 0)
		return -EINVAL;
	cfg->policy.ird = ird;
	cfg->policy.ord = ord;
	return 0;
}

/* ---- engine side ---------------------------------------------------------------------- */

static bool cm_state(enum rcm_state s)
{
	return s == RCM_CONNECTING || s == RCM_REQ_RECV || s == RCM_REQ_PENDING ||
	       s == RCM_ACCEPTING || s == RCM_REJECTING;
}

bool rcm_conn_quiet(const struct rcm_id *id)
{
	if (id->conn != NULL || id->cm != NULL || id->evicted)
		return false;
	if (id->state == RCM_DISCONNECTED)
		return true; /* reported: only the application's calls remain */
	return id->state == RCM_CONNECTED && id->qp_linked && !atomic_load(&id->llp_down);
}

int rcm_conn_wait(const struct rcm_id *id, short *events, int *timeout_ms)
{
	*timeout_ms = -1;
	if (id->evicted) {
		*timeout_ms = 0; /* freed by its own progress (make_room) */
		return -1;
	}
	if (cm_state(id->state) && id->cm != NULL) {
		*events = rn_cm_poll_events(id->cm);
		*timeout_ms = rn_cm_timeout_ms(id->cm);
		return rn_cm_fd(id->cm);
	}
	if ((id->state == RCM_LISTEN || id->state == RCM_CONNECTED) && id->conn != NULL) {
		*events = POLLIN;
		return rn_conn_fd(id->conn);
	}
	if (id->state == RCM_CONNECTED && id->qp_linked && atomic_load(&id->llp_down))
		*timeout_ms = 0; /* the QP's stream ended (qp_llp_closed): report it now */
	return -1;
}

static void addrs_from(struct rcm_id *id, const struct rn_conn *c)
{
	socklen_t len = sizeof(id->pub.route.addr.src_storage);
	(void)rn_conn_local_addr(c, &id->pub.route.addr.src_addr, &len);
	len = sizeof(id->pub.route.addr.dst_storage);
	(void)rn_conn_peer_addr(c, &id->pub.route.addr.dst_addr, &len);
	id->bound = true;
}

/* ESTABLISHED: the QP (or, QP-less, the id) takes the stream, then report. */
static void established(struct rcm_id *id)
{
	struct rn_cm_handoff h;
	size_t pd_len = 0;
	const uint8_t *pd = rn_cm_peer_pd(id->cm, &pd_len);
	struct mpa_conn_params params = *rn_cm_params(id->cm);
	bool active = id->state == RCM_CONNECTING;

	int rc = rn_cm_handoff(id->cm, &h);
	if (rc == 0) {
		addrs_from(id, h.conn);
		if (id->pub.qp != NULL) {
			rc = rcm_qp_start(id, &h);
			id->qp_linked = rc == 0;
		} else {
			id->conn = h.conn;
			free(h.rx);
		}
	}
	if (rc == 0) {
		id->state = RCM_CONNECTED;
		rcm_post(id, RDMA_CM_EVENT_ESTABLISHED, 0, active ? pd : NULL,
			 active ? pd_len : 0, &params);
	} else {
		id->state = RCM_FAILED;
		rcm_post(id, RDMA_CM_EVENT_CONNECT_ERROR, rc, NULL, 0, NULL);
	}
	rn_cm_destroy(id->cm);
	id->cm = NULL;
}

static enum rdma_cm_event_type active_failure(int err)
{
	switch (err) {
	case -ECONNREFUSED:
	case -ECONNRESET:
		return RDMA_CM_EVENT_REJECTED;
	case -ETIMEDOUT:
	case -ENETUNREACH:
	case -EHOSTUNREACH:
		return RDMA_CM_EVENT_UNREACHABLE;
	}
	return RDMA_CM_EVENT_CONNECT_ERROR;
}

/* The attempt ended without a connection: report and drop the CM. */
static void failed(struct rcm_id *id, enum rdma_cm_event_type type, int status)
{
	size_t pd_len = 0;
	const uint8_t *pd = id->cm != NULL ? rn_cm_peer_pd(id->cm, &pd_len) : NULL;

	id->state = RCM_FAILED;
	if (type != RDMA_CM_EVENT_REJECTED)
		pd_len = 0;
	rcm_post(id, type, status, pd, pd_len, NULL);
	rn_cm_destroy(id->cm);
	id->cm = NULL;
}

static void progress_active(struct rcm_id *id)
{
	switch (rn_cm_progress(id->cm)) {
	case RN_CM_ESTABLISHED:
		established(id);
		break;
	case RN_CM_REJECTED:
		failed(id, RDMA_CM_EVENT_REJECTED, -ECONNREFUSED);
		break;
	case RN_CM_FAILED:
		failed(id, active_failure(rn_cm_error(id->cm)), rn_cm_error(id->cm));
		break;
	default:
		break;
	}
}

static void free_hidden(struct rcm_id *c)
{
	rn_cm_destroy(c->cm);
	rcm_id_unlink(c);
	c->ch->ids--;
	free(c);
}

static bool backlog_full(const struct rcm_id *lis);

/* A child whose MPA Request is complete becomes visible with CONNECT_REQUEST, or is
 * rejected (MPA Reject) when the application has its backlog of requests unanswered. */
static void progress_req_recv(struct rcm_id *c)
{
	if (c->evicted) {
		free_hidden(c); /* its connection is aborted with it */
		return;
	}
	enum rn_cm_state s = rn_cm_progress(c->cm);

	if (s == RN_CM_WAIT_ACCEPT && c->listener != NULL && backlog_full(c->listener)) {
		if (rn_cm_reject(c->cm, NULL, 0) == 0)
			return; /* settles once the Reject is out, then goes below */
	} else if (s == RN_CM_WAIT_ACCEPT && c->listener != NULL) {
		const struct mpa_frame *req = rn_cm_request(c->cm);
		c->state = RCM_REQ_PENDING;
		if (rcm_post(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, req->pd, req->pd_len,
			     rn_cm_params(c->cm)) == 0)
			return;
	}
	if (rn_cm_settled(c->cm))
		free_hidden(c); /* a bad Request (already rejected by rn_cm) or no listener */
}

static void progress_passive(struct rcm_id *id)
{
	enum rn_cm_state s = rn_cm_progress(id->cm);

	if (s == RN_CM_ESTABLISHED && id->state == RCM_ACCEPTING) {
		established(id);
	} else if (s == RN_CM_FAILED || s == RN_CM_REJECTED) {
		if (id->state == RCM_REJECTING) {
			id->state = RCM_FAILED; /* our own reject: no event on this side */
			rn_cm_destroy(id->cm);
			id->cm = NULL;
		} else {
			failed(id, RDMA_CM_EVENT_CONNECT_ERROR, rn_cm_error(id->cm));
		}
	}
}

/* The application's backlog: connection requests it was shown and has not answered. */
static bool backlog_full(const struct rcm_id *lis)
{
	int n = 0;

	for (const struct rcm_id *c = rcm_ids; c != NULL; c = c->next)
		if (c->listener == lis && c->state == RCM_REQ_PENDING)
			n++;
	return lis->backlog > 0 && n >= lis->backlog;
}

/* Room for one more connection before its MPA Request: at RCM_EMBRYONIC_MAX the oldest is
 * marked, and freed by its own progress (the engine's walk may hold a pointer to it). Ids
 * are linked at the head, so the last one found is the oldest. */
static void make_room(const struct rcm_id *lis)
{
	struct rcm_id *oldest = NULL;
	unsigned n = 0;

	for (struct rcm_id *c = rcm_ids; c != NULL; c = c->next)
		if (c->listener == lis && c->state == RCM_REQ_RECV && !c->evicted) {
			n++;
			oldest = c;
		}
	if (n >= RCM_EMBRYONIC_MAX)
		oldest->evicted = true;
}

static void new_child(struct rcm_id *lis, struct rn_conn *conn)
{
	struct rcm_id *c = calloc(1, sizeof(*c));
	struct rn_cm_cfg cfg;
	uint8_t ird, ord;

	if (c == NULL) {
		rn_conn_abort(conn);
		return;
	}
	make_room(lis);
	c->pub = (struct rdma_cm_id){ .verbs = lis->pub.verbs ? lis->pub.verbs : rcm_dev_context(),
				      .channel = lis->pub.channel, .context = lis->pub.context,
				      .ps = lis->pub.ps, .port_num = 1, .qp_type = IBV_QPT_RC };
	c->pub.pd = rcm_dev_pd(c->pub.verbs); /* the device's default PD, not the listener's */
	c->ch = lis->ch;
	c->listener = lis;
	c->state = RCM_REQ_RECV;
	c->ird = c->ord = 0xFF;
	addrs_from(c, conn);
	rcm_dev_max_rd(c->pub.verbs, &ird, &ord);
	if (cfg_for(&cfg, ird, ord) != 0) { /* SOFTRNIC_MPA changed after rdma_listen */
		free(c);
		rn_conn_abort(conn);
		return;
	}
	if (rn_cm_passive(conn, &cfg, &c->cm) != 0) { /* conn is gone either way */
		free(c);
		return;
	}
	c->ch->ids++;
	rcm_id_link(c);
}

/* A few connections a pass: a child make_room drops is freed only by its own progress, in
 * the engine's next walk, so a flood taken in one go would hold all of it at once. The
 * listener's fd stays readable and the engine comes straight back for the rest. */
static void progress_listen(struct rcm_id *lis)
{
	struct rn_conn *conn;

	for (unsigned n = 0; n < RCM_ACCEPT_BURST && rn_conn_accept(lis->conn, &conn) == 0; n++)
		new_child(lis, conn);
}

/* QP-less stream: the peer's FIN or reset ends it. */
static void progress_stream(struct rcm_id *id)
{
	uint8_t buf[512];
	ssize_t n;

	while ((n = rn_conn_recv(id->conn, buf, sizeof(buf))) > 0)
		;
	if (n == -EAGAIN)
		return;
	rn_conn_close(id->conn);
	id->conn = NULL;
	id->state = RCM_DISCONNECTED;
	rcm_post(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL);
}

/* QP-owned stream: the verbs layer reported the end of the QP's stream (the peer closed,
 * reset or terminated, or a local error or close). */
static void watch_qp(struct rcm_id *id)
{
	if (!atomic_load(&id->llp_down))
		return;
	id->state = RCM_DISCONNECTED;
	rcm_post(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL);
}

void rcm_conn_progress(struct rcm_id *id)
{
	switch (id->state) {
	case RCM_LISTEN:
		progress_listen(id);
		break;
	case RCM_CONNECTING:
		progress_active(id);
		break;
	case RCM_REQ_RECV:
		progress_req_recv(id);
		break;
	case RCM_REQ_PENDING:
	case RCM_ACCEPTING:
	case RCM_REJECTING:
		progress_passive(id);
		break;
	case RCM_CONNECTED:
		if (id->conn != NULL)
			progress_stream(id);
		else if (id->qp_linked)
			watch_qp(id);
		break;
	default:
		break;
	}
}

void rcm_id_teardown(struct rcm_id *id)
{
	rn_cm_destroy(id->cm);
	id->cm = NULL;
	if (id->conn != NULL)
		rn_conn_close(id->conn);
	id->conn = NULL;
	/* The application may have destroyed the QP itself (ibv_destroy_qp on a QP made by
	 * rdma_create_qp: rping does, and librdmacm's rdma_destroy_id never touches id->qp).
	 * Destroying it released its stream, which ran the close callback (llp_down) for the
	 * last time, so then the QP is neither read nor unregistered from. */
	if (id->qp_linked && !atomic_load(&id->llp_down)) {
		if (id->state == RCM_CONNECTED)
			(void)rcm_qp_disconnect(id);
		rcm_qp_unwatch(id); /* the id goes: no callback may name it any more */
	}
	id->qp_linked = false;
}

/* ---- API ------------------------------------------------------------------------------ */

RCM_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	if (id == NULL)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	if (r->state == RCM_IDLE) { /* unbound: IPv4 wildcard, any port */
		struct sockaddr_in any = { .sin_family = AF_INET };
		if (rdma_bind_addr(id, (struct sockaddr *)&any) != 0)
			return -1;
	}
	if (r->state != RCM_BOUND)
		return rcm_err(EINVAL);
	struct sockaddr *src = &id->route.addr.src_addr;
	struct rn_cm_cfg cfg;
	if (cfg_for(&cfg, 0, 0) != 0) /* a SOFTRNIC_MPA we do not know: say so now */
		return rcm_err(EINVAL);
	/* the listener rdma_bind_addr opened (rcm_id.c take_port): kernel sockets, or DPDK;
	 * its backlog is RCM_BIND_BACKLOG, ours is kept below */
	struct rn_conn *l = r->conn;
	if (l == NULL) /* bound to loopback on DPDK (rcm_id.c loopback_on_dpdk) */
		return rcm_err(EADDRNOTAVAIL);
	socklen_t len = sizeof(id->route.addr.src_storage);
	(void)rn_conn_local_addr(l, src, &len); /* as the transport reports it */
	pthread_mutex_lock(&rcm_lock);
	r->backlog = backlog;
	r->state = RCM_LISTEN;
	rcm_engine_kick();
	pthread_mutex_unlock(&rcm_lock);
	return 0;
}

/* 0xFF (RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH) means the device maximum; above it, EINVAL. */
static int pick_depth(uint8_t asked, uint8_t max, uint8_t *out)
{
	if (asked == 0xFF)
		asked = max;
	if (asked > max)
		return -EINVAL;
	*out = asked;
	return 0;
}

static int conn_param_check(struct rcm_id *r, const struct rdma_conn_param *p)
{
	uint8_t ird_max, ord_max;

	rcm_dev_max_rd(r->pub.verbs, &ird_max, &ord_max);
	if (p == NULL) {
		r->ird = ird_max;
		r->ord = ord_max;
		return 0;
	}
	if (p->private_data_len > 0 && p->private_data == NULL)
		return -EINVAL;
	int rc = pick_depth(p->responder_resources, ird_max, &r->ird);
	return rc != 0 ? rc : pick_depth(p->initiator_depth, ord_max, &r->ord);
}

static int start_connect(struct rcm_id *r, const struct rdma_conn_param *p)
{
	struct rn_cm_cfg cfg;
	const struct sockaddr *dst = &r->pub.route.addr.dst_addr;

	const struct rn_transport *tp;
	int rc = cfg_for(&cfg, r->ird, r->ord);
	if (rc == 0)
		rc = softrnic_transport_default(&tp);
	if (rc == 0)
		rc = rn_cm_connect(tp, dst, sa_len(dst), &cfg, p ? p->private_data : NULL,
				   p ? p->private_data_len : 0, &r->cm);
	if (rc == -ECONNREFUSED) { /* refused at once: reported like a refusal seen later */
		r->state = RCM_FAILED;
		return rcm_post(r, RDMA_CM_EVENT_REJECTED, rc, NULL, 0, NULL);
	}
	if (rc == 0) {
		r->state = RCM_CONNECTING;
		rcm_engine_kick();
	}
	return rc;
}

RCM_EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	if (id == NULL)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	int rc = conn_param_check(r, conn_param);
	pthread_mutex_lock(&rcm_lock);
	if (rc == 0)
		rc = r->state == RCM_ROUTE_RESOLVED ? start_connect(r, conn_param) : -EINVAL;
	bool sync = r->sync; /* read under the lock: see rdma_accept */
	pthread_mutex_unlock(&rcm_lock);
	if (rc != 0)
		return rcm_err(-rc);
	return sync ? rcm_sync_wait(r, RDMA_CM_EVENT_ESTABLISHED, NULL) : 0;
}

RCM_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	(void)id; /* IB only (a consumer-driven RTU); iWARP connections establish in rdma_connect */
	return rcm_err(ENOSYS);
}

RCM_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	if (id == NULL)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	/* responder_resources / initiator_depth (0xFF: device maximum) are our IRD / ORD in the
	 * Reply, lowered to the initiator's ORD / IRD (mpa_negotiate.c D7); 0, or no conn_param,
	 * keeps what was negotiated when the Request arrived (device maxima, lowered alike). */
	int rc = conn_param_check(r, conn_param);
	pthread_mutex_lock(&rcm_lock);
	if (rc == 0)
		rc = r->state == RCM_REQ_PENDING ? 0 : -EINVAL;
	if (rc == 0)
		rc = rn_cm_accept_ird_ord(r->cm, conn_param ? conn_param->private_data : NULL,
					  conn_param ? conn_param->private_data_len : 0,
					  conn_param ? r->ird : 0, conn_param ? r->ord : 0);
	if (rc == 0) {
		r->state = RCM_ACCEPTING;
		rcm_engine_kick();
	}
	/* Once the lock is let go the id may already be gone: the engine can establish and
	 * report, the peer disconnect, and another application thread destroy the id on its
	 * DISCONNECTED (cmtime's server does) before this thread runs again. An id on a
	 * channel is not touched after the unlock; a synchronous one is only destroyed by the
	 * thread that waits here. */
	bool sync = r->sync;
	pthread_mutex_unlock(&rcm_lock);
	if (rc != 0)
		return rcm_err(-rc);
	return sync ? rcm_sync_wait(r, RDMA_CM_EVENT_ESTABLISHED, NULL) : 0;
}

RCM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			   uint8_t private_data_len)
{
	if (id == NULL || (private_data == NULL && private_data_len > 0))
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	pthread_mutex_lock(&rcm_lock);
	int rc = r->state == RCM_REQ_PENDING ? rn_cm_reject(r->cm, private_data, private_data_len)
					     : -EINVAL;
	if (rc == 0) {
		r->state = RCM_REJECTING;
		rcm_engine_kick();
	}
	pthread_mutex_unlock(&rcm_lock);
	return rc != 0 ? rcm_err(-rc) : 0;
}

RCM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
			       uint8_t private_data_len)
{
	return rdma_reject(id, private_data, private_data_len); /* no ECE on iWARP */
}

/* Graceful: the stream (ours or the QP's) closes after what is queued; DISCONNECTED is
 * reported here at once, as iw_cm does when the local close completes; the peer reports it
 * when the FIN arrives. After DISCONNECTED (either side) this is a no-op returning 0. */
RCM_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	if (id == NULL)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	int rc = 0;
	pthread_mutex_lock(&rcm_lock);
	if (r->state == RCM_CONNECTED) {
		if (r->qp_linked)
			rc = rcm_qp_disconnect(r);
		else if (r->conn != NULL)
			rn_conn_close(r->conn);
		r->conn = NULL;
		r->state = RCM_DISCONNECTED;
		rcm_post(r, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL);
		rcm_engine_kick(); /* its poll holds the closed socket until it wakes */
	} else if (r->state == RCM_DISCONNECTED && r->qp_linked) {
		rc = rcm_qp_disconnect(r); /* the peer closed first: close our half too */
	} else if (r->state != RCM_DISCONNECTED && r->state != RCM_FAILED) {
		rc = -EINVAL;
	}
	pthread_mutex_unlock(&rcm_lock);
	return rc != 0 ? rcm_err(-rc) : 0;
}

RCM_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;

	if (listen == NULL || id == NULL || !rcm_id_of(listen)->sync)
		return rcm_err(EINVAL);
	struct rcm_id *lis = rcm_id_of(listen);
	if (rcm_sync_wait(lis, RDMA_CM_EVENT_CONNECT_REQUEST, &ev) != 0)
		return -1;
	struct rcm_id *c = rcm_id_of(ev->id);
	struct rcm_event *copy = malloc(sizeof(*copy));
	if (copy != NULL) {
		memcpy(copy, ev, sizeof(*copy));
		copy->delivered = false;
		copy->ev.param.conn.private_data = copy->ev.param.conn.private_data_len ? copy->pd
											: NULL;
	}
	rdma_ack_cm_event(ev);
	int rc = copy != NULL ? rdma_migrate_id(&c->pub, NULL) : rcm_err(ENOMEM);
	c->req_event = copy;
	c->pub.event = copy != NULL ? &copy->ev : NULL;
	if (rc == 0 && lis->ep_attr != NULL)
		rc = rdma_create_qp(&c->pub, lis->pub.pd, lis->ep_attr);
	if (rc != 0) {
		int e = errno;
		rdma_reject(&c->pub, NULL, 0);
		rdma_destroy_id(&c->pub);
		return rcm_err(e);
	}
	*id = &c->pub;
	return 0;
}
