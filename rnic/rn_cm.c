/* MPA connection establishment as an explicit state machine over an rn_transport stream.
 * See rn_cm.h for the states, the wire decisions and the error values. */
#include "rn_cm.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rn_cm_fpdu.h"

#define CM_TX_CAP (MPA_FRAME_HDR_LEN + MPA_PD_MAX_RFC + RN_CM_FPDU_MAX)
#define CM_RX_CAP 4096u

struct rn_cm {
	enum rn_cm_state state;
	bool active;
	struct rn_cm_cfg cfg;
	struct rn_conn *conn;
	int64_t deadline; /* CLOCK_MONOTONIC ms; 0: none */
	int err;
	struct mpa_error mpa_err;
	struct iwarp_err peer_term;

	struct mpa_frame req;   /* active: sent; passive: received (pd -> peer_pd) */
	struct mpa_frame reply; /* passive: to send */
	struct mpa_conn_params params;
	uint8_t peer_pd[MPA_PD_MAX_RFC];
	size_t peer_pd_len;

	/* octets queued for the transport; when they are gone the state becomes `after` */
	uint8_t tx[CM_TX_CAP];
	size_t tx_len, tx_off;
	enum rn_cm_state after;
	int after_err;

	uint8_t rx[CM_RX_CAP];
	size_t rx_len;

	/* Full Operation Phase traffic of setup itself */
	struct mpa_tx mtx;
	struct rn_fpdu_reader rd;
	struct rdmap_read_req rtr_rr;
	uint32_t tx_msn[3], rx_msn[3];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rn_cm_cfg_default(struct rn_cm_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	mpa_policy_default(&cfg->policy);
	cfg->connect_ms = RN_CM_DEFAULT_TIMEOUT_MS;
	cfg->mpa_ms = RN_CM_DEFAULT_TIMEOUT_MS;
	cfg->accept_ms = RN_CM_DEFAULT_TIMEOUT_MS;
	cfg->rtr_ms = RN_CM_DEFAULT_TIMEOUT_MS;
}

const char *rn_cm_state_name(enum rn_cm_state s)
{
	switch (s) {
	case RN_CM_CONNECTING: return "CONNECTING";
	case RN_CM_MPA_WAIT_REP: return "MPA_WAIT_REP";
	case RN_CM_SEND_RTR: return "SEND_RTR";
	case RN_CM_WAIT_RTR_RESP: return "WAIT_RTR_RESP";
	case RN_CM_MPA_WAIT_REQ: return "MPA_WAIT_REQ";
	case RN_CM_WAIT_ACCEPT: return "WAIT_ACCEPT";
	case RN_CM_SEND_REP: return "SEND_REP";
	case RN_CM_WAIT_RTR: return "WAIT_RTR";
	case RN_CM_SEND_RTR_RESP: return "SEND_RTR_RESP";
	case RN_CM_SEND_REJECT: return "SEND_REJECT";
	case RN_CM_ESTABLISHED: return "ESTABLISHED";
	case RN_CM_REJECTED: return "REJECTED";
	case RN_CM_FAILED: return "FAILED";
	}
	return "invalid";
}

/* ---- state entry ---------------------------------------------------------------------- */

static unsigned state_timeout(const struct rn_cm *cm, enum rn_cm_state s)
{
	switch (s) {
	case RN_CM_CONNECTING:
		return cm->cfg.connect_ms;
	case RN_CM_MPA_WAIT_REP:
	case RN_CM_MPA_WAIT_REQ:
	case RN_CM_SEND_REJECT:
		return cm->cfg.mpa_ms;
	case RN_CM_WAIT_ACCEPT:
		return cm->cfg.accept_ms;
	case RN_CM_SEND_RTR:
	case RN_CM_WAIT_RTR_RESP:
	case RN_CM_SEND_REP:
	case RN_CM_WAIT_RTR:
	case RN_CM_SEND_RTR_RESP:
		return cm->cfg.rtr_ms;
	case RN_CM_ESTABLISHED:
	case RN_CM_REJECTED:
	case RN_CM_FAILED:
		break;
	}
	return 0;
}

static void enter(struct rn_cm *cm, enum rn_cm_state s)
{
	unsigned t = state_timeout(cm, s);

	cm->state = s;
	cm->deadline = t ? now_ms() + t : 0;
}

/* End in REJECTED or FAILED with error err; the stream is reset (abort) or closed. */
static void finish(struct rn_cm *cm, enum rn_cm_state s, int err, bool abortive)
{
	if (cm->conn != NULL) {
		if (abortive)
			rn_conn_abort(cm->conn);
		else
			rn_conn_close(cm->conn);
		cm->conn = NULL;
	}
	cm->err = err;
	enter(cm, s);
}

static void fail(struct rn_cm *cm, int err, bool abortive)
{
	finish(cm, RN_CM_FAILED, err, abortive);
}

static void set_mpa_err(struct rn_cm *cm, enum mpa_ecode ecode, const char *reason)
{
	cm->mpa_err.ecode = ecode;
	cm->mpa_err.reason = reason;
}

/* Queue n octets already in cm->tx; once sent, enter `after`. */
static void queue_then(struct rn_cm *cm, size_t n, enum rn_cm_state via, enum rn_cm_state after,
		       int after_err)
{
	cm->tx_len = n;
	cm->tx_off = 0;
	cm->after = after;
	cm->after_err = after_err;
	enter(cm, via);
}

/* Send a Terminate for ecode, close, and end FAILED (-EPROTO). */
static void terminate(struct rn_cm *cm, enum mpa_ecode ecode, const char *reason)
{
	set_mpa_err(cm, ecode, reason);
	ssize_t n = rn_term_encode(ecode, &cm->mtx, cm->tx, sizeof(cm->tx));
	if (n < 0) {
		fail(cm, -EPROTO, true);
		return;
	}
	queue_then(cm, (size_t)n, RN_CM_SEND_REJECT, RN_CM_FAILED, -EPROTO);
}

/* ---- I/O ------------------------------------------------------------------------------ */

/* 0 when everything queued is gone, -EAGAIN, or a transport error. */
static int flush(struct rn_cm *cm)
{
	while (cm->tx_off < cm->tx_len) {
		struct iovec iov = { cm->tx + cm->tx_off, cm->tx_len - cm->tx_off };
		ssize_t n = rn_conn_sendv(cm->conn, &iov, 1);
		if (n < 0)
			return (int)n;
		cm->tx_off += (size_t)n;
	}
	cm->tx_len = cm->tx_off = 0;
	return 0;
}

/* One read into rx: 1 got octets, 0 none yet, -ECONNRESET at end of stream, or an error. */
static int fill(struct rn_cm *cm)
{
	if (cm->rx_len == sizeof(cm->rx))
		return -ENOBUFS; /* cannot happen: frames are shorter than the buffer */
	ssize_t n = rn_conn_recv(cm->conn, cm->rx + cm->rx_len, sizeof(cm->rx) - cm->rx_len);
	if (n == -EAGAIN)
		return 0;
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return (int)n;
	cm->rx_len += (size_t)n;
	return 1;
}

static void consume(struct rn_cm *cm, size_t n)
{
	memmove(cm->rx, cm->rx + n, cm->rx_len - n);
	cm->rx_len -= n;
}

/* After a parser asked for more: read, or end the CM on end of stream / error. */
static bool need_more(struct rn_cm *cm)
{
	int r = fill(cm);

	if (r > 0)
		return true;
	if (r < 0)
		fail(cm, r, r != -ECONNRESET);
	return r < 0;
}

/* ---- active side ---------------------------------------------------------------------- */

static bool st_connecting(struct rn_cm *cm)
{
	int st = rn_conn_connect_status(cm->conn);

	if (st == -EINPROGRESS)
		return false;
	if (st != 0) {
		fail(cm, st, true);
		return true;
	}
	enter(cm, RN_CM_MPA_WAIT_REP);
	return true;
}

static void keep_peer_pd(struct rn_cm *cm, const struct mpa_frame *f)
{
	if (f->pd_len > 0)
		memcpy(cm->peer_pd, f->pd, f->pd_len);
	cm->peer_pd_len = f->pd_len;
}

static bool has_key(const struct rn_cm *cm, const char *key)
{
	return cm->rx_len >= MPA_KEY_LEN && memcmp(cm->rx, key, MPA_KEY_LEN) == 0;
}

/* The Reply says connected: RTR or established. */
static void reply_connected(struct rn_cm *cm)
{
	mpa_tx_init(&cm->mtx, cm->params.crc, cm->params.markers_tx);
	rn_fpdu_reader_init(&cm->rd, cm->params.crc, cm->params.markers_rx);
	if (!cm->params.p2p) {
		enter(cm, RN_CM_ESTABLISHED);
		return;
	}
	ssize_t n = rn_rtr_encode(cm->params.rtr, &cm->mtx, cm->tx, sizeof(cm->tx));
	if (n < 0) {
		terminate(cm, MPA_ECODE_NO_MATCHING_RTR, "cannot build the chosen RTR");
		return;
	}
	if (cm->params.rtr == MPA_RTR_SEND)
		cm->tx_msn[RDMAP_QN_SEND]++;
	if (cm->params.rtr == MPA_RTR_READ)
		cm->tx_msn[RDMAP_QN_READ_REQ]++;
	queue_then(cm, (size_t)n, RN_CM_SEND_RTR,
		   cm->params.rtr == MPA_RTR_READ ? RN_CM_WAIT_RTR_RESP : RN_CM_ESTABLISHED, 0);
}

static void on_reply(struct rn_cm *cm, const struct mpa_frame *rep)
{
	struct mpa_error e;

	keep_peer_pd(cm, rep);
	switch (mpa_negotiate_reply(&cm->cfg.policy, &cm->req, rep, &cm->params, &e)) {
	case MPA_REPLY_CONNECTED:
		reply_connected(cm);
		return;
	case MPA_REPLY_REJECTED:
		finish(cm, RN_CM_REJECTED, -ECONNREFUSED, false);
		return;
	case MPA_REPLY_TERMINATE:
		mpa_tx_init(&cm->mtx, cm->req.crc || rep->crc, rep->markers);
		terminate(cm, e.ecode, e.reason);
		return;
	}
}

static bool st_wait_rep(struct rn_cm *cm)
{
	struct mpa_parse_opts o;
	struct mpa_frame rep;
	struct mpa_error e;

	mpa_parse_opts_init(&o, MPA_EXPECT_REPLY);
	o.pd_max = cm->cfg.policy.pd_max;
	ssize_t n = mpa_frame_parse(cm->rx, cm->rx_len, &o, &rep, &e);
	if (n == 0)
		return need_more(cm);
	if (n < 0) {
		set_mpa_err(cm, e.ecode, e.reason);
		if (!has_key(cm, MPA_KEY_REP)) {
			fail(cm, -EPROTO, true); /* not MPA at all */
			return true;
		}
		mpa_tx_init(&cm->mtx, cm->req.crc, false);
		terminate(cm, e.ecode, e.reason);
		return true;
	}
	on_reply(cm, &rep); /* rep.pd points into rx: used before consume */
	consume(cm, (size_t)n);
	return true;
}

/* Shared by both sides: read toward the one FPDU the state waits for; *done once it is
 * complete in cm->rd. Returns whether anything changed. */
static bool read_fpdu(struct rn_cm *cm, bool *done)
{
	size_t used;

	*done = false;
	enum rn_fpdu_rd r = rn_fpdu_read(&cm->rd, cm->rx, cm->rx_len, &used);
	consume(cm, used);
	switch (r) {
	case RN_FPDU_MORE:
		return need_more(cm);
	case RN_FPDU_ERROR: {
		const struct mpa_error *e = mpa_rx_error(&cm->rd.rx);
		terminate(cm, e->ecode, e->reason);
		return true;
	}
	case RN_FPDU_DONE:
		*done = true;
		return true;
	}
	return false;
}

static void peer_terminated(struct rn_cm *cm, struct iwarp_err term)
{
	cm->peer_term = term;
	set_mpa_err(cm, MPA_ECODE_NONE, "peer sent a Terminate");
	fail(cm, -ECONNABORTED, false);
}

static bool st_wait_rtr_resp(struct rn_cm *cm)
{
	bool done;
	bool progressed = read_fpdu(cm, &done);
	struct iwarp_err term;

	if (!done)
		return progressed;
	switch (rn_rtr_resp_check(RN_RTR_STAG, &cm->rd, &term)) {
	case RN_RTR_OK:
		enter(cm, RN_CM_ESTABLISHED);
		break;
	case RN_RTR_TERMINATE:
		peer_terminated(cm, term);
		break;
	case RN_RTR_BAD:
		terminate(cm, MPA_ECODE_NO_MATCHING_RTR, "READ RTR not answered by its Read Response");
		break;
	}
	return true;
}

int rn_cm_connect(const struct rn_transport *t, const struct sockaddr *addr, socklen_t len,
		  const struct rn_cm_cfg *cfg, const void *pd, size_t pd_len, struct rn_cm **out)
{
	struct rn_cm *cm = calloc(1, sizeof(*cm));

	if (cm == NULL)
		return -ENOMEM;
	cm->active = true;
	cm->cfg = *cfg;
	mpa_build_request(&cfg->policy, &cm->req);
	cm->req.pd = pd;
	cm->req.pd_len = (uint16_t)pd_len;
	ssize_t n = pd_len > MPA_PD_MAX_RFC ? -EINVAL
					    : mpa_frame_encode(&cm->req, cm->tx, sizeof(cm->tx));
	cm->req.pd = NULL; /* the caller's buffer is not kept */
	cm->req.pd_len = 0;
	int rc = n < 0 ? -EINVAL : rn_tp_connect(t, addr, len, &cm->conn);
	if (rc != 0) {
		free(cm);
		return rc;
	}
	for (unsigned i = 0; i < 3; i++)
		cm->tx_msn[i] = cm->rx_msn[i] = DDP_MSN_INITIAL;
	queue_then(cm, (size_t)n, RN_CM_CONNECTING, RN_CM_MPA_WAIT_REP, 0);
	*out = cm;
	return 0;
}

/* ---- passive side --------------------------------------------------------------------- */

/* A Request with the right key that does not parse: Reject with a revision we speak. */
static void reject_malformed(struct rn_cm *cm)
{
	struct mpa_frame fake = { .type = MPA_FRAME_REQUEST };

	fake.rev = cm->rx[MPA_KEY_LEN + 1] == MPA_REV_1 ? MPA_REV_1 : MPA_REV_2;
	mpa_build_reject(&cm->cfg.policy, &fake, &cm->reply);
	ssize_t n = mpa_frame_encode(&cm->reply, cm->tx, sizeof(cm->tx));
	if (n < 0) {
		fail(cm, -EPROTO, true);
		return;
	}
	queue_then(cm, (size_t)n, RN_CM_SEND_REJECT, RN_CM_FAILED, -EPROTO);
}

static void on_request(struct rn_cm *cm, const struct mpa_frame *req)
{
	struct mpa_error why;

	keep_peer_pd(cm, req);
	cm->req = *req;
	cm->req.pd = cm->peer_pd;
	if (mpa_negotiate_request(&cm->cfg.policy, &cm->req, &cm->reply, &cm->params, &why) ==
	    MPA_REQ_ACCEPT) {
		enter(cm, RN_CM_WAIT_ACCEPT);
		return;
	}
	set_mpa_err(cm, why.ecode, why.reason);
	ssize_t n = mpa_frame_encode(&cm->reply, cm->tx, sizeof(cm->tx));
	if (n < 0) {
		fail(cm, -EPROTO, true);
		return;
	}
	queue_then(cm, (size_t)n, RN_CM_SEND_REJECT, RN_CM_FAILED, -EPROTO);
}

static bool st_wait_req(struct rn_cm *cm)
{
	struct mpa_parse_opts o;
	struct mpa_frame req;
	struct mpa_error e;

	mpa_parse_opts_init(&o, MPA_EXPECT_REQUEST);
	o.pd_max = cm->cfg.policy.pd_max;
	ssize_t n = mpa_frame_parse(cm->rx, cm->rx_len, &o, &req, &e);
	if (n == 0)
		return need_more(cm);
	if (n < 0) {
		set_mpa_err(cm, e.ecode, e.reason);
		if (has_key(cm, MPA_KEY_REQ) && cm->rx_len >= MPA_FRAME_HDR_LEN)
			reject_malformed(cm);
		else
			fail(cm, -EPROTO, true); /* not MPA at all */
		return true;
	}
	on_request(cm, &req);
	consume(cm, (size_t)n);
	return true;
}

static bool st_wait_rtr(struct rn_cm *cm)
{
	bool done;
	bool progressed = read_fpdu(cm, &done);
	struct iwarp_err term;

	if (!done)
		return progressed;
	switch (rn_rtr_check(cm->params.rtr, &cm->rd, &cm->rtr_rr, &term)) {
	case RN_RTR_OK:
		break;
	case RN_RTR_TERMINATE:
		peer_terminated(cm, term);
		return true;
	case RN_RTR_BAD:
		terminate(cm, MPA_ECODE_NO_MATCHING_RTR, "first FPDU is not the negotiated RTR");
		return true;
	}
	if (cm->params.rtr == MPA_RTR_SEND)
		cm->rx_msn[RDMAP_QN_SEND]++;
	if (cm->params.rtr != MPA_RTR_READ) {
		enter(cm, RN_CM_ESTABLISHED);
		return true;
	}
	cm->rx_msn[RDMAP_QN_READ_REQ]++;
	ssize_t n = rn_rtr_resp_encode(&cm->rtr_rr, &cm->mtx, cm->tx, sizeof(cm->tx));
	if (n < 0)
		fail(cm, -EPROTO, true);
	else
		queue_then(cm, (size_t)n, RN_CM_SEND_RTR_RESP, RN_CM_ESTABLISHED, 0);
	return true;
}

int rn_cm_passive(struct rn_conn *conn, const struct rn_cm_cfg *cfg, struct rn_cm **out)
{
	struct rn_cm *cm = calloc(1, sizeof(*cm));

	if (cm == NULL) {
		rn_conn_abort(conn);
		return -ENOMEM;
	}
	cm->cfg = *cfg;
	cm->conn = conn;
	for (unsigned i = 0; i < 3; i++)
		cm->tx_msn[i] = cm->rx_msn[i] = DDP_MSN_INITIAL;
	enter(cm, RN_CM_MPA_WAIT_REQ);
	*out = cm;
	return 0;
}

static int send_reply(struct rn_cm *cm, const void *pd, size_t pd_len, bool reject)
{
	if (cm->state != RN_CM_WAIT_ACCEPT)
		return -EINVAL;
	if (reject)
		mpa_build_reject(&cm->cfg.policy, &cm->req, &cm->reply);
	size_t room = MPA_PD_MAX_RFC - (cm->reply.enhanced ? MPA_V2_BLOCK_LEN : 0);
	if (pd_len > room || (pd == NULL && pd_len > 0))
		return -EINVAL;
	cm->reply.pd = pd;
	cm->reply.pd_len = (uint16_t)pd_len;
	ssize_t n = mpa_frame_encode(&cm->reply, cm->tx, sizeof(cm->tx));
	cm->reply.pd = NULL;
	cm->reply.pd_len = 0;
	if (n < 0)
		return (int)n;
	if (reject) {
		queue_then(cm, (size_t)n, RN_CM_SEND_REJECT, RN_CM_REJECTED, -ECONNREFUSED);
		return 0;
	}
	mpa_tx_init(&cm->mtx, cm->params.crc, cm->params.markers_tx);
	rn_fpdu_reader_init(&cm->rd, cm->params.crc, cm->params.markers_rx);
	queue_then(cm, (size_t)n, RN_CM_SEND_REP,
		   cm->params.p2p ? RN_CM_WAIT_RTR : RN_CM_ESTABLISHED, 0);
	return 0;
}

int rn_cm_accept(struct rn_cm *cm, const void *pd, size_t pd_len)
{
	return send_reply(cm, pd, pd_len, false);
}

int rn_cm_accept_ird_ord(struct rn_cm *cm, const void *pd, size_t pd_len, uint16_t ird,
			 uint16_t ord)
{
	struct mpa_policy p;
	struct mpa_frame reply;
	struct mpa_conn_params params;
	struct mpa_frame saved_reply;
	struct mpa_conn_params saved_params;
	int rc;

	if (cm == NULL || cm->state != RN_CM_WAIT_ACCEPT || ird >= MPA_V2_NO_VALUE ||
	    ord >= MPA_V2_NO_VALUE)
		return -EINVAL;
	if (ird == 0 && ord == 0)
		return send_reply(cm, pd, pd_len, false);
	p = cm->cfg.policy;
	if (ird != 0)
		p.ird = ird;
	if (ord != 0)
		p.ord = ord;
	if (mpa_negotiate_request(&p, &cm->req, &reply, &params, NULL) != MPA_REQ_ACCEPT)
		return -EINVAL;
	saved_reply = cm->reply;
	saved_params = cm->params;
	cm->reply = reply;
	cm->params = params;
	rc = send_reply(cm, pd, pd_len, false);
	if (rc != 0) { /* still in WAIT_ACCEPT: as if never called */
		cm->reply = saved_reply;
		cm->params = saved_params;
	}
	return rc;
}

int rn_cm_reject(struct rn_cm *cm, const void *pd, size_t pd_len)
{
	return send_reply(cm, pd, pd_len, true);
}

/* ---- driving -------------------------------------------------------------------------- */

/* A SEND_* state: flush; when empty go on to `after` (closing first for REJECTED/FAILED). */
static bool st_sending(struct rn_cm *cm)
{
	int rc = flush(cm);

	if (rc == -EAGAIN)
		return false;
	if (rc != 0) {
		fail(cm, rc, true);
		return true;
	}
	if (cm->after == RN_CM_FAILED || cm->after == RN_CM_REJECTED)
		finish(cm, cm->after, cm->after_err, false);
	else
		enter(cm, cm->after);
	return true;
}

bool rn_cm_settled(const struct rn_cm *cm)
{
	switch (cm->state) {
	case RN_CM_WAIT_ACCEPT:
	case RN_CM_ESTABLISHED:
	case RN_CM_REJECTED:
	case RN_CM_FAILED:
		return true;
	default:
		return false;
	}
}

/* One step; true if anything changed (the caller steps again). */
static bool step(struct rn_cm *cm)
{
	switch (cm->state) {
	case RN_CM_CONNECTING:
		return st_connecting(cm);
	case RN_CM_MPA_WAIT_REP: {
		int rc = flush(cm); /* the Request may still be partly queued */
		if (rc != 0 && rc != -EAGAIN) {
			fail(cm, rc, true);
			return true;
		}
		return st_wait_rep(cm);
	}
	case RN_CM_WAIT_RTR_RESP:
		return st_wait_rtr_resp(cm);
	case RN_CM_MPA_WAIT_REQ:
		return st_wait_req(cm);
	case RN_CM_WAIT_RTR:
		return st_wait_rtr(cm);
	case RN_CM_SEND_RTR:
	case RN_CM_SEND_REP:
	case RN_CM_SEND_RTR_RESP:
	case RN_CM_SEND_REJECT:
		return st_sending(cm);
	case RN_CM_WAIT_ACCEPT:
	case RN_CM_ESTABLISHED:
	case RN_CM_REJECTED:
	case RN_CM_FAILED:
		return false;
	}
	return false;
}

static bool deadline_passed(const struct rn_cm *cm)
{
	return cm->deadline != 0 && now_ms() >= cm->deadline;
}

enum rn_cm_state rn_cm_progress(struct rn_cm *cm)
{
	while (step(cm))
		;
	if (cm->state != RN_CM_ESTABLISHED && cm->conn != NULL && deadline_passed(cm)) {
		set_mpa_err(cm, MPA_ECODE_NONE, "timed out");
		fail(cm, -ETIMEDOUT, true);
	}
	return cm->state;
}

enum rn_cm_state rn_cm_state(const struct rn_cm *cm)
{
	return cm->state;
}

int rn_cm_fd(const struct rn_cm *cm)
{
	return cm->conn != NULL ? rn_conn_fd(cm->conn) : -1;
}

static short poll_events(const struct rn_cm *cm);

/* A transport that signals everything as readable (rn_transport.h ready_as_readable) never
 * turns writable: wait for readable instead; rn_cm_progress tries both directions. */
short rn_cm_poll_events(const struct rn_cm *cm)
{
	short ev = poll_events(cm);

	if ((ev & POLLOUT) && cm->conn != NULL && rn_conn_ready_as_readable(cm->conn))
		ev = (short)((ev & ~POLLOUT) | POLLIN);
	return ev;
}

static short poll_events(const struct rn_cm *cm)
{
	switch (cm->state) {
	case RN_CM_CONNECTING:
		return POLLOUT;
	case RN_CM_MPA_WAIT_REP:
		return cm->tx_off < cm->tx_len ? (POLLIN | POLLOUT) : POLLIN;
	case RN_CM_WAIT_RTR_RESP:
	case RN_CM_MPA_WAIT_REQ:
	case RN_CM_WAIT_RTR:
		return POLLIN;
	case RN_CM_SEND_RTR:
	case RN_CM_SEND_REP:
	case RN_CM_SEND_RTR_RESP:
	case RN_CM_SEND_REJECT:
		return POLLOUT;
	case RN_CM_WAIT_ACCEPT:
	case RN_CM_ESTABLISHED:
	case RN_CM_REJECTED:
	case RN_CM_FAILED:
		break;
	}
	return 0;
}

int rn_cm_timeout_ms(const struct rn_cm *cm)
{
	if (cm->deadline == 0)
		return -1; /* also every settled state but WAIT_ACCEPT */
	int64_t left = cm->deadline - now_ms();
	return left < 0 ? 0 : (left > 0x7fffffff ? 0x7fffffff : (int)left);
}

static int min_timeout(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

enum rn_cm_state rn_cm_wait(struct rn_cm *cm, int max_ms)
{
	int64_t end = max_ms >= 0 ? now_ms() + max_ms : 0;

	for (;;) {
		rn_cm_progress(cm);
		if (rn_cm_settled(cm))
			return cm->state;
		int left = max_ms >= 0 ? (int)(end - now_ms()) : -1;
		if (max_ms >= 0 && left <= 0)
			return cm->state;
		struct pollfd p = { .fd = rn_cm_fd(cm), .events = rn_cm_poll_events(cm) };
		(void)poll(&p, 1, min_timeout(rn_cm_timeout_ms(cm), left));
	}
}

/* ---- results -------------------------------------------------------------------------- */

const struct mpa_frame *rn_cm_request(const struct rn_cm *cm)
{
	return &cm->req;
}

const struct mpa_conn_params *rn_cm_params(const struct rn_cm *cm)
{
	return &cm->params;
}

const uint8_t *rn_cm_peer_pd(const struct rn_cm *cm, size_t *len)
{
	*len = cm->peer_pd_len;
	return cm->peer_pd_len ? cm->peer_pd : NULL;
}

int rn_cm_error(const struct rn_cm *cm)
{
	return cm->err;
}

const struct mpa_error *rn_cm_mpa_error(const struct rn_cm *cm)
{
	return &cm->mpa_err;
}

struct iwarp_err rn_cm_peer_term(const struct rn_cm *cm)
{
	return cm->peer_term;
}

int rn_cm_handoff(struct rn_cm *cm, struct rn_cm_handoff *h)
{
	if (cm->state != RN_CM_ESTABLISHED || cm->conn == NULL)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	if (cm->rx_len > 0) {
		h->rx = malloc(cm->rx_len);
		if (h->rx == NULL)
			return -ENOMEM;
		memcpy(h->rx, cm->rx, cm->rx_len);
		h->rx_len = cm->rx_len;
	}
	h->conn = cm->conn;
	h->emss = rn_conn_mss(cm->conn);
	h->params = cm->params;
	h->tx_pos = cm->mtx.pos;
	h->rx_pos = cm->rd.rx.pos;
	memcpy(h->tx_msn, cm->tx_msn, sizeof(h->tx_msn));
	memcpy(h->rx_msn, cm->rx_msn, sizeof(h->rx_msn));
	cm->conn = NULL;
	cm->rx_len = 0;
	return 0;
}

void rn_cm_destroy(struct rn_cm *cm)
{
	if (cm == NULL)
		return;
	if (cm->conn != NULL) {
		/* A Reject or Terminate still queued goes out before a graceful close, as siw's
		 * (sent before its reject call returns): consumers destroy right after rejecting
		 * (rdma_reject + rdma_destroy_id), and an abort would turn the peer's
		 * ECONNREFUSED and its private data into a bare reset. */
		if (cm->state == RN_CM_ESTABLISHED ||
		    (cm->state == RN_CM_SEND_REJECT && flush(cm) == 0))
			rn_conn_close(cm->conn);
		else
			rn_conn_abort(cm->conn);
	}
	free(cm);
}
