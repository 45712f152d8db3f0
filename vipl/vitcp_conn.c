/* VI/TCP connection establishment (draft-dicecco-vitcp-01 §2.2.2.2.2, §4): one TCP connection
 * per VI connection. Active side: Connecting (TCP) -> Pending Accept (ConnectRequest sent) ->
 * Connected on ConnectAccept, Disconnected on ConnectReject / ConnectNoMatch / TCP failure.
 * Passive side: the NIC's listening socket accepts TCP, Incoming waits for the ConnectRequest,
 * Matching holds it for a ConnectWait (or matches a peer connect at once), then ConnectAccept
 * or ConnectReject / NoMatch and close. NIC lock held throughout. */
#include "softrnic_conf.h"
#include "vitcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

struct vt_conn *vt_conn_new(struct vipl_nic *nic, struct rn_conn *rc, enum vt_state st)
{
	struct vt_conn *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->nic = nic;
	c->rc = rc;
	c->fd = rn_conn_fd(rc);
	c->state = st;
	c->tx_msgno = 0; /* the first message is 1: Message ACK 0 then means "none yet" (D263) */
	c->rx_expect = 1;
	c->next = nic->vt_conns;
	nic->vt_conns = c;
	vipl_nic_wake(nic); /* a new socket for the thread's poll set */
	return c;
}

/* c no longer belongs to a VI or a request */
static void detach(struct vt_conn *c)
{
	if (c->vi != NULL && c->vi->vt == c)
		c->vi->vt = NULL;
	if (c->req != NULL && c->req->vt == c)
		c->req->vt = NULL;
	c->vi = NULL;
	c->req = NULL;
}

void vt_conn_close(struct vt_conn *c)
{
	struct vipl_nic *nic = c->nic;
	for (struct vt_conn **pp = &nic->vt_conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	detach(c);
	if (c->rc != NULL)
		rn_conn_close(c->rc);
	c->rc = NULL;
	c->fd = -1;
	c->next = nic->vt_dead; /* freed by the thread, which may hold it in its poll set */
	nic->vt_dead = c;
	vipl_nic_wake(nic);
}

void vt_close_after(struct vt_conn *c, uint64_t ms)
{
	detach(c);
	c->state = VT_CLOSING;
	c->deadline_ms = vipl_now_ms() + ms;
	/* now, not at the stream's next event: with nothing queued or arriving there is none,
	 * and the FIN would wait for the deadline */
	vt_closing(c);
	vipl_nic_wake(c->nic);
}

static uint16_t attrs_of(const struct vipl_vi *vi)
{
	uint16_t a = 0;
	switch (vi->attr.ReliabilityLevel) {
	case VIP_SERVICE_UNRELIABLE:
		a = VT_A_UR;
		break;
	case VIP_SERVICE_RELIABLE_DELIVERY:
		a = VT_A_RD;
		break;
	default:
		a = VT_A_RR;
		break;
	}
	if (vi->attr.EnableRdmaWrite)
		a |= VT_A_RDMAW;
	if (vi->attr.EnableRdmaRead)
		a |= VT_A_RDMAR;
	if (vi->dfc)
		a |= VT_A_DFC;
	if (vi->mode == CM_PEER_ACTIVE || vi->mode == CM_PEER_PASSIVE)
		a |= VT_A_P2P;
	return a;
}

static VIP_RELIABILITY_LEVEL level_of(uint16_t attrs)
{
	if (attrs & VT_A_RR)
		return VIP_SERVICE_RELIABLE_RECEPTION;
	if (attrs & VT_A_RD)
		return VIP_SERVICE_RELIABLE_DELIVERY;
	return VIP_SERVICE_UNRELIABLE;
}

/* Exactly one reliability bit (§3.3: the levels of the two ends must match). */
static bool attrs_valid(uint16_t attrs)
{
	unsigned rel = attrs & (VT_A_UR | VT_A_RD | VT_A_RR);
	return rel == VT_A_UR || rel == VT_A_RD || rel == VT_A_RR;
}

/* A CE segment of this side. Request and Accept carry the CE header, where each side speaks
 * as "calling" (D267); Reject and NoMatch are a bare segment header. */
int vt_send_ce(struct vt_conn *c, struct vipl_vi *vi, unsigned type)
{
	uint8_t buf[VT_HDR_LEN + VT_CE_LEN + VT_CE_OPTS_MAX + 4]; /* + the trailer */
	size_t n = VT_HDR_LEN;
	bool seal = false;
	if (type == VT_CONN_REQ || type == VT_CONN_ACCEPT) {
		struct vt_ce ce = { .attrs = attrs_of(vi), .mtu = (uint32_t)vi->granted_mtu,
				    .read_window = VT_READ_WINDOW,
				    .calling_len = (uint8_t)vi->local_disc_len,
				    .called_len = (uint8_t)vi->remote_disc_len };
		memcpy(ce.calling, vi->local_disc, vi->local_disc_len);
		memcpy(ce.called, vi->remote_disc, vi->remote_disc_len);
		ce.has_addr = true;
		memcpy(ce.addr, vi->o.nic->addr, VIPL_ADDR_LEN);
		if (type == VT_CONN_REQ) {
			ce.has_timeout = true;
			ce.timeout_ms = vipl_requester_timeout(vi);
			ce.crc = c->crc_asked = vt_crc_wanted();
		} else {
			ce.crc = c->peer_crc && vt_crc_wanted(); /* §3.6: only if the request had it */
		}
		n += vt_ce_put(buf + VT_HDR_LEN, &ce);
		seal = ce.crc; /* §3.5: a CE segment has the trailer with the option */
		n += seal ? 4 : 0;
		if (type == VT_CONN_ACCEPT)
			c->crc = ce.crc;
	}
	struct vt_hdr h;
	vt_hdr_fill(c, &h, VT_F_EOM | type, c->tx_msgno);
	h.seg_len = (uint16_t)n;
	vt_hdr_put(buf, &h);
	if (seal)
		vt_crc_seal(buf, n);
	if (vt_queue(c, buf, n) != 0)
		return -1;
	return vt_flush(c);
}

bool vt_crc_wanted(void)
{
	const char *v = softrnic_conf_get("SOFTRNIC_VITCP_CRC", NULL, 0);
	return v != NULL && strcmp(v, "1") == 0;
}

/* ---- active side ----------------------------------------------------------------------- */

/* The active connect failed with rc: a peer connect tries again until its timeout (§4). */
static void active_failed(struct vipl_vi *vi, VIP_RETURN rc)
{
	if (vi->vt != NULL)
		vt_conn_close(vi->vt);
	if (vi->mode == CM_PEER_ACTIVE && rc == VIP_NO_MATCH &&
	    (vi->deadline_ms == 0 || vipl_now_ms() + VIPL_PEER_RETRY_MS < vi->deadline_ms)) {
		vipl_rq_requeue(vi);
		vi->retry_ms = vipl_now_ms() + VIPL_PEER_RETRY_MS;
		vipl_nic_wake(vi->o.nic);
		return;
	}
	vipl_connect_done(vi, vi->mode == CM_PEER_ACTIVE && rc == VIP_NO_MATCH ? VIP_TIMEOUT : rc);
}

/* Refused: nobody listens there (a VIPL that is not up is no match, as on iWARP); no answer
 * or no route: not reachable (a peer connect keeps trying). err: a positive errno, 0 for a
 * stream that ended before the answer. */
static VIP_RETURN connect_failure(const struct vipl_vi *vi, int err)
{
	bool refused = err == ECONNREFUSED || err == 0 || err == ECONNRESET;
	return refused || vi->mode == CM_PEER_ACTIVE ? VIP_NO_MATCH : VIP_NOT_REACHABLE;
}

int vt_connect(struct vipl_vi *vi)
{
	struct sockaddr_in dst;
	struct rn_conn *rc;
	vipl_addr_sin(vi->conn_host, &dst);
	if (vi->o.nic->vt_tp == NULL && softrnic_transport_default(&vi->o.nic->vt_tp) != 0)
		return -1;
	int err = rn_tp_connect(vi->o.nic->vt_tp, (struct sockaddr *)&dst, sizeof(dst), &rc);
	if (err < 0) { /* failed at once: the caller's wait sees the outcome */
		active_failed(vi, connect_failure(vi, -err));
		return 0;
	}
	struct vt_conn *c = vt_conn_new(vi->o.nic, rc, VT_CONNECTING);
	if (c == NULL) {
		rn_conn_abort(rc);
		return -1;
	}
	c->vi = vi;
	vi->vt = c;
	return 0;
}

/* The stream of c changed while connecting: connected (ConnectRequest), failed, or not yet. */
void vt_on_tcp_connected(struct vt_conn *c)
{
	struct vipl_vi *vi = c->vi;
	int st = c->state == VT_CONNECTING ? rn_conn_connect_status(c->rc) : -ECONNRESET;
	if (st == -EINPROGRESS)
		return;
	if (st == 0) {
		c->state = VT_PENDING_ACCEPT;
		if (vt_send_ce(c, vi, VT_CONN_REQ) == 0)
			return;
	}
	active_failed(vi, connect_failure(vi, st < 0 ? -st : 0));
}

static void remote_attrs(struct vipl_vi *vi, struct vt_conn *c, const struct vt_ce *ce)
{
	memset(&vi->remote, 0, sizeof(vi->remote));
	vi->remote.ReliabilityLevel = level_of(ce->attrs);
	vi->remote.MaxTransferSize = vi->granted_mtu;
	vi->remote.EnableRdmaWrite = (ce->attrs & VT_A_RDMAW) != 0;
	vi->remote.EnableRdmaRead = (ce->attrs & VT_A_RDMAR) != 0;
	c->peer_dfc = (ce->attrs & VT_A_DFC) != 0;
	if (c->peer_dfc)
		vi->remote.ReliabilityLevel |= VIP_SERVICE_DFC;
	c->peer_window = ce->read_window;
}

/* Both sides Connected: held receives go to the connection, deferred sends out. */
static void connected(struct vipl_vi *vi, struct vt_conn *c)
{
	c->state = VT_CONNECTED;
	vi->state = VIP_STATE_CONNECTED;
	vt_rq_pump(vi);
}

static void on_answer(struct vt_conn *c, const struct vt_hdr *h, const uint8_t *body,
		      size_t len)
{
	struct vipl_vi *vi = c->vi;
	struct vt_ce ce;
	unsigned t = vt_type(h);
	if (t == VT_CONN_REJECT && vt_ce_get(body, len, &ce) == 0 && ce.has_redirect &&
	    vi->redirects < VIPL_MAX_REDIRECTS) {
		/* the host's well-known port sends us on to the process that waits (D276) */
		vi->redirects++;
		vt_conn_close(c);
		memcpy(vi->conn_host, ce.redirect, VIPL_ADDR_LEN);
		if (vt_connect(vi) != 0)
			active_failed(vi, VIP_ERROR_RESOURCE);
		return;
	}
	if (t == VT_CONN_REJECT) {
		active_failed(vi, VIP_REJECT);
		return;
	}
	if (t != VT_CONN_ACCEPT) {
		active_failed(vi, VIP_NO_MATCH); /* ConnectNoMatch, or nonsense: nobody to match */
		return;
	}
	bool p2p = vi->mode == CM_PEER_ACTIVE;
	/* §3.3, §3.6: levels and the peer bit match, the MTU is not above ours, and no CRC
	 * option unless we asked for one */
	if (vt_ce_get(body, len, &ce) != 0 || !attrs_valid(ce.attrs) || (ce.crc && !c->crc_asked) ||
	    level_of(ce.attrs) != vi->attr.ReliabilityLevel ||
	    ((ce.attrs & VT_A_P2P) != 0) != p2p || ce.mtu > vi->granted_mtu) {
		active_failed(vi, VIP_ERROR_RESOURCE);
		return;
	}
	vi->granted_mtu = ce.mtu; /* the agreed value */
	c->crc = ce.crc;
	remote_attrs(vi, c, &ce);
	c->peer_posted = h->rx_posted;
	connected(vi, c);
	vt_sq_pump(vi);
	vipl_connect_done(vi, VIP_SUCCESS);
}

/* ---- passive side ---------------------------------------------------------------------- */

/* A listener at the NIC's bind address and port (network order; 0: any), *bound its port. */
struct rn_conn *vt_listen_at(struct vipl_nic *nic, uint16_t port, uint16_t *bound)
{
	struct sockaddr_in sin = nic->bind_sin;
	struct rn_conn *l;
	socklen_t len = sizeof(sin);
	sin.sin_port = port;
	if (rn_tp_listen(nic->vt_tp, (struct sockaddr *)&sin, sizeof(sin), VIPL_BACKLOG_MAX, &l) != 0)
		return NULL;
	if (rn_conn_local_addr(l, (struct sockaddr *)&sin, &len) != 0) {
		rn_conn_close(l);
		return NULL;
	}
	*bound = sin.sin_port;
	vipl_nic_wake(nic); /* a new descriptor for the thread */
	return l;
}

int vt_listen(struct vipl_nic *nic)
{
	if (nic->vt_listener != NULL)
		return 0;
	if (nic->vt_tp == NULL && softrnic_transport_default(&nic->vt_tp) != 0)
		return -1;
	uint16_t port;
	struct rn_conn *l = vt_listen_at(nic, nic->sin.sin_port, &port);
	if (l == NULL)
		l = vt_listen_at(nic, 0, &port); /* else any free port */
	if (l == NULL)
		return -1;
	nic->vt_listener = l;
	nic->vt_listen_fd = rn_conn_fd(l);
	nic->sin.sin_port = port; /* the NIC's address follows */
	memcpy(nic->addr + 4, &port, 2);
	return 0;
}

void vt_on_listen(struct vipl_nic *nic, struct rn_conn *l, bool rdv)
{
	for (int i = 0; i < 16; i++) {
		struct rn_conn *rc;
		if (rn_conn_accept(l, &rc) != 0)
			return;
		struct vt_conn *c = vt_conn_new(nic, rc, VT_INCOMING);
		if (c == NULL) {
			rn_conn_abort(rc);
			continue;
		}
		c->deadline_ms = vipl_now_ms() + VIPL_BACKLOG_MS; /* §4.3: Incoming times out */
		c->at_rdv = rdv;
	}
}

/* A ConnectNoMatch / ConnectReject for c, then close (§4.3). */
static void refuse(struct vt_conn *c, unsigned type)
{
	(void)vt_send_ce(c, NULL, type);
	vt_close_after(c, VIPL_GRAVE_MS);
}

static struct vipl_vi *peer_waiter(struct vipl_nic *nic, const struct vt_ce *ce)
{
	for (struct vipl_vi *vi = nic->vis; vi != NULL; vi = vi->next)
		if (vi->mode == CM_PEER_PASSIVE && vi->vt == NULL &&
		    vipl_disc_cmp(vi->local_disc, vi->local_disc_len, ce->called, ce->called_len) == 0 &&
		    vipl_disc_cmp(vi->remote_disc, vi->remote_disc_len, ce->calling,
				  ce->calling_len) == 0)
			return vi;
	return NULL;
}

static uint8_t pd_flags(uint16_t attrs)
{
	return (uint8_t)(((attrs & VT_A_RDMAW) ? PD_F_RDMAW : 0) |
			 ((attrs & VT_A_RDMAR) ? PD_F_RDMAR : 0) | ((attrs & VT_A_DFC) ? PD_F_DFC : 0));
}

static void accept_as(struct vipl_vi *vi, struct vt_conn *c, const struct vt_ce *ce,
		      uint16_t peer_posted)
{
	vi->granted_mtu = ce->mtu < vi->attr.MaxTransferSize ? ce->mtu : vi->attr.MaxTransferSize;
	vi->remote_disc_len = ce->calling_len;
	memcpy(vi->remote_disc, ce->calling, ce->calling_len);
	remote_attrs(vi, c, ce);
	c->peer_posted = peer_posted;
	c->vi = vi;
	c->req = NULL;
	vi->vt = c;
	connected(vi, c); /* the receives held count in the Accept's Rx Descriptors Posted */
	if (vt_send_ce(c, vi, VT_CONN_ACCEPT) != 0) {
		vt_fail(vi, VIP_ERROR_CONN_LOST, 0, false);
		return;
	}
	vt_sq_pump(vi);
}

static void on_peer_request(struct vipl_nic *nic, struct vt_conn *c, const struct vt_ce *ce,
			    uint16_t peer_posted)
{
	struct vipl_vi *vi = peer_waiter(nic, ce);
	if (vi == NULL) {
		if (vt_forward(c, ce->called, ce->called_len) != 0)
			refuse(c, VT_CONN_NOMATCH); /* §4: the active side tries again */
	} else if (level_of(ce->attrs) != vi->attr.ReliabilityLevel) {
		refuse(c, VT_CONN_REJECT);
		vipl_connect_done(vi, VIP_INVALID_RELIABILITY_LEVEL);
	} else {
		accept_as(vi, c, ce, peer_posted);
		if (vi->state == VIP_STATE_CONNECTED)
			vipl_connect_done(vi, VIP_SUCCESS);
	}
}

/* A client's request waits for a ConnectWait (D121) at most VIPL_BACKLOG_MS. */
static void on_client_request(struct vipl_nic *nic, struct vt_conn *c, const struct vt_ce *ce,
			      uint16_t peer_posted)
{
	if (vt_forward(c, ce->called, ce->called_len) == 0)
		return;
	struct vipl_req *r = nic->nreqs < VIPL_BACKLOG_MAX ? calloc(1, sizeof(*r)) : NULL;
	if (r == NULL) {
		refuse(c, VT_CONN_NOMATCH);
		return;
	}
	struct sockaddr_in from;
	socklen_t l = sizeof(from);
	memset(&from, 0, sizeof(from));
	(void)rn_conn_peer_addr(c->rc, (struct sockaddr *)&from, &l);
	r->o.kind = VK_CONN;
	r->o.nic = nic;
	atomic_fetch_add(&nic->o.refs, 1);
	uint64_t now = vipl_now_ms();
	r->expires_ms = now + vipl_hold_ms(ce->has_timeout ? ce->timeout_ms : PD_TIMEOUT_INFINITE);
	if (vt_at_rdv(c) && !vipl_reg_local(nic, ce->called, ce->called_len))
		r->recheck_ms = now + VIPL_RDV_RECHECK_MS; /* its process may wait for it later */
	r->rel = (uint8_t)level_of(ce->attrs);
	r->flags = pd_flags(ce->attrs);
	r->mtu = ce->mtu;
	r->read_window = ce->read_window;
	r->peer_posted = peer_posted;
	/* the requester's NIC as it says, else its IP and port as TCP sees them (D269) */
	memcpy(r->host, &from.sin_addr, 4);
	memcpy(r->host + 4, &from.sin_port, 2);
	if (ce->has_addr)
		memcpy(r->host, ce->addr, VIPL_ADDR_LEN);
	r->calling_len = ce->calling_len;
	r->called_len = ce->called_len;
	memcpy(r->calling, ce->calling, ce->calling_len);
	memcpy(r->called, ce->called, ce->called_len);
	r->vt = c;
	c->req = r;
	c->state = VT_MATCHING;
	struct vipl_req **tail = &nic->reqs; /* FIFO: ConnectWait takes the oldest match */
	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = r;
	nic->nreqs++;
	pthread_cond_broadcast(&nic->cv);
	vipl_nic_wake(nic);
}

static void on_request(struct vipl_nic *nic, struct vt_conn *c, const struct vt_hdr *h,
		       const uint8_t *body, size_t len)
{
	struct vt_ce ce;
	if (vt_type(h) != VT_CONN_REQ || vt_ce_get(body, len, &ce) != 0 || !attrs_valid(ce.attrs)) {
		vt_conn_close(c); /* not a VI/TCP requester */
		return;
	}
	c->peer_crc = ce.crc;
	if (ce.attrs & VT_A_P2P)
		on_peer_request(nic, c, &ce, h->rx_posted);
	else
		on_client_request(nic, c, &ce, h->rx_posted);
}

/* A CE segment (types 5-8) on c; body is what follows the segment header, the trailer left
 * out (vitcp_rx.c). */
void vt_on_ce(struct vipl_nic *nic, struct vt_conn *c, const struct vt_hdr *h,
	      const uint8_t *body, size_t len)
{
	switch (c->state) {
	case VT_INCOMING:
		on_request(nic, c, h, body, len);
		return;
	case VT_PENDING_ACCEPT:
		on_answer(c, h, body, len);
		return;
	case VT_CONNECTED:
		vt_fail(c->vi, VIP_ERROR_CONN_LOST, VIP_STATUS_TRANSPORT_ERROR, false);
		return;
	default: /* a second request while one is held, or anything while closing */
		if (c->req != NULL)
			c->req->dead = true;
		vt_conn_close(c);
		return;
	}
}

/* ---- the wire's entry points ------------------------------------------------------------- */

static int vt_open(struct vipl_nic *nic)
{
	int rc = vt_listen(nic);
	vt_rdv_take(nic, vipl_now_ms());
	return rc;
}

static int vt_redirect(struct vipl_nic *nic, struct vipl_req *r)
{
	(void)nic;
	struct vt_conn *c = r->vt;
	if (c == NULL || vt_forward(c, r->called, r->called_len) != 0)
		return -1;
	r->vt = NULL;
	return 0;
}

static int vt_accept(struct vipl_vi *vi, struct vipl_req *r)
{
	struct vt_conn *c = r->vt;
	if (c == NULL)
		return -1; /* the requester went */
	struct vt_ce ce = { .attrs = 0, .mtu = r->mtu, .read_window = r->read_window,
			    .calling_len = r->calling_len };
	ce.attrs = (uint16_t)((r->rel == VIP_SERVICE_UNRELIABLE ? VT_A_UR :
			       r->rel == VIP_SERVICE_RELIABLE_DELIVERY ? VT_A_RD : VT_A_RR) |
			      ((r->flags & PD_F_RDMAW) ? VT_A_RDMAW : 0) |
			      ((r->flags & PD_F_RDMAR) ? VT_A_RDMAR : 0) |
			      ((r->flags & PD_F_DFC) ? VT_A_DFC : 0));
	memcpy(ce.calling, r->calling, r->calling_len);
	r->vt = NULL;
	accept_as(vi, c, &ce, r->peer_posted);
	if (vi->state != VIP_STATE_CONNECTED)
		return -1;
	vipl_connect_done(vi, VIP_SUCCESS); /* no third message: Connected once Accept went */
	return 0;
}

static void vt_reject(struct vipl_nic *nic, struct vipl_req *r, uint8_t kind)
{
	(void)nic;
	struct vt_conn *c = r->vt;
	if (c == NULL)
		return;
	r->vt = NULL;
	c->req = NULL;
	refuse(c, kind == PD_REJECT ? VT_CONN_REJECT : VT_CONN_NOMATCH);
}

static void vt_req_release(struct vipl_req *r)
{
	if (r->vt != NULL)
		vt_conn_close(r->vt);
}

/* VipDisconnect (an abort, VIA §4.2), a failed connect, the NIC's close: what is queued (an
 * acknowledgement) leaves, then the FIN; linger 0 from the NIC's close: at once. */
static void vt_conn_end(struct vipl_vi *vi, uint64_t linger_ms)
{
	struct vt_conn *c = vi->vt;
	vi->sq.inflight = vi->rq.inflight = 0;
	if (c == NULL)
		return;
	if (vi->o.nic->stopping || vi->o.dead)
		vt_conn_close(c);
	else
		vt_close_after(c, linger_ms > VIPL_GRAVE_MS ? linger_ms : VIPL_GRAVE_MS);
}

static void vt_nic_close(struct vipl_nic *nic)
{
	while (nic->vt_conns != NULL)
		vt_conn_close(nic->vt_conns);
	vt_dead_free(nic);
	if (nic->vt_listener != NULL)
		rn_conn_close(nic->vt_listener);
	if (nic->vt_rdv != NULL)
		rn_conn_close(nic->vt_rdv);
	nic->vt_listener = nic->vt_rdv = NULL;
	nic->vt_listen_fd = nic->vt_rdv_fd = -1;
	free(nic->vt_polled);
	nic->vt_polled = NULL;
	nic->vt_npolled = nic->vt_cap = 0;
}

const struct vipl_wire vipl_wire_vitcp = {
	.name = "vitcp",
	.open = vt_open,
	.listen = vt_listen,
	.connect = vt_connect,
	.accept = vt_accept,
	.reject = vt_reject,
	.req_release = vt_req_release,
	.redirect = vt_redirect,
	.conn_end = vt_conn_end,
	.sq_pump = vt_sq_pump,
	.rq_pump = vt_rq_pump,
	.fds = vt_fds,
	.io = vt_io,
	.timers = vt_timers,
	.close = vt_nic_close,
};
