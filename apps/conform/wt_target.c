/* The wire target (iwarp-conform --wire-target): the device-under-test side of the wire
 * checks, which a scripted iWARP peer with no RNIC under it drives (apps/conform/wire:
 * iwarp-conform-wire; tests/adversary/hostile.py). It serves many connections at once from
 * one event loop (so a peer that stalls one stream cannot hide whether the others are still
 * served), tells each peer its regions in the MPA Reply (wt_proto.h), echoes every Send it
 * receives, and when a connection ends checks that nothing was written outside the regions a
 * peer may write:
 *   - every region sits between guard pages filled with a pattern;
 *   - the read-only, local-only and foreign-PD regions keep their content.
 * Then it reports one line per connection, on stdout and to every peer connected to its
 * control port (a peer on another host reads it there):
 *   conn N peer PORT dev DEVICE: guards ok|VIOLATION (...), W same|changed, recv N,
 *     echo drops N, events [..], wc [..]
 * Events and completion statuses are named as libibverbs' enums are, without their prefix
 * (QP_ACCESS_ERR, recv:LOC_LEN_ERR), so a peer compares them exactly.
 *
 * Runs until SIGTERM or SIGINT, then frees everything and returns 0. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ic.h"
#include "wt.h"
#include "wt_proto.h"

#define MAX_CONNS 64
#define SQ_DEPTH 16
#define GUARD_LEN 4096u
#define GUARD_FILL 0xa5
#define NOTE_LEN 240
#define MAX_CTL 8
#define LINE_LEN 1024

/* A registered buffer between two guard pages. */
struct guarded {
	uint8_t *map;       /* guard | buf | guard */
	uint8_t *buf;
	size_t len;
	uint8_t fill;       /* the content it starts with */
	struct ibv_mr *mr;
};

struct conn {
	struct rdma_cm_id *id;
	unsigned n;
	uint16_t peer_port;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct guarded region[WT_NREGIONS - 1];  /* W, R, L (F is shared: struct target) */
	struct guarded recv;                      /* WT_RECV_COUNT slots */
	struct guarded send;                      /* echo copies, SQ_DEPTH slots */
	uint32_t stale_stag;
	unsigned outstanding;                     /* posted WRs not yet completed */
	unsigned sends;                           /* echo Sends posted so far */
	unsigned recvs, echo_drops;
	bool disconnecting;
	char events[NOTE_LEN];
	char wcs[NOTE_LEN];
};

struct target {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;
	struct ibv_pd *foreign_pd;
	struct guarded foreign;                   /* WT_F */
	struct conn *conn[MAX_CONNS];
	unsigned conns_seen;
	bool writable_r;                          /* fault: R takes remote writes */
	int ctl_listen;                           /* the control port, -1 without */
	int ctl[MAX_CTL];                         /* peers reading the reports, -1 free */
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* One line of the report: on stdout and to every peer on the control port (one that cannot
 * take it is dropped: a report must never stall the target). */
__attribute__((format(printf, 2, 3))) static void say(struct target *t, const char *fmt, ...)
{
	char line[LINE_LEN];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = n < (int)sizeof line - 2 ? n : (int)sizeof line - 2;
	line[n++] = '\n';
	line[n] = 0;
	fputs(line, stdout);
	fflush(stdout);
	for (unsigned i = 0; i < MAX_CTL; i++) {
		if (t->ctl[i] < 0 ||
		    send(t->ctl[i], line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n)
			continue;
		close(t->ctl[i]);
		t->ctl[i] = -1;
	}
}

static void note(char *list, const char *what)
{
	size_t used = strlen(list);
	if (used + strlen(what) + 3 < NOTE_LEN)
		snprintf(list + used, NOTE_LEN - used, "%s%s", used ? "; " : "", what);
}

static int guarded_reg(struct guarded *g, struct ibv_pd *pd, size_t len, uint8_t fill,
		       int access)
{
	g->len = len;
	g->fill = fill;
	g->map = mmap(NULL, len + 2 * GUARD_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED) {
		g->map = NULL;
		return -1;
	}
	memset(g->map, GUARD_FILL, len + 2 * GUARD_LEN);
	g->buf = g->map + GUARD_LEN;
	memset(g->buf, fill, len);
	g->mr = ibv_reg_mr(pd, g->buf, len, access);
	return g->mr ? 0 : -1;
}

static void guarded_free(struct guarded *g)
{
	if (g->mr)
		ibv_dereg_mr(g->mr);
	if (g->map)
		munmap(g->map, g->len + 2 * GUARD_LEN);
	memset(g, 0, sizeof *g);
}

/* Offset of the first octet that differs from fill in [p, p + len), or -1. */
static long first_other(const uint8_t *p, size_t len, uint8_t fill)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != fill)
			return (long)i;
	return -1;
}

/* Appends to why what changed outside the buffer, or in the buffer itself when keep; true if
 * nothing did. A changed buffer is put back, so that a shared one cannot fail later checks. */
static bool guarded_check(struct guarded *g, const char *name, bool keep, char *why)
{
	long before = first_other(g->map, GUARD_LEN, GUARD_FILL);
	long after = first_other(g->buf + g->len, GUARD_LEN, GUARD_FILL);
	long inside = keep ? first_other(g->buf, g->len, g->fill) : -1;

	if (before < 0 && after < 0 && inside < 0)
		return true;
	char what[96];
	snprintf(what, sizeof what, "region %s: guard before %ld, guard after %ld, content %ld",
		 name, before, after, inside);
	note(why, what);
	memset(g->map, GUARD_FILL, GUARD_LEN);
	memset(g->buf + g->len, GUARD_FILL, GUARD_LEN);
	if (keep)
		memset(g->buf, g->fill, g->len);
	return false;
}

static struct wt_region region_of(const struct guarded *g)
{
	return (struct wt_region){ .addr = htobe64((uint64_t)(uintptr_t)g->buf),
				   .stag = htobe32(g->mr->rkey),
				   .len = htobe32((uint32_t)g->len) };
}

static int post_recv(struct conn *c, unsigned slot)
{
	struct ibv_sge sge = { (uintptr_t)(c->recv.buf + slot * WT_RECV_LEN), WT_RECV_LEN,
			       c->recv.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;
	if (ibv_post_recv(c->id->qp, &wr, &bad))
		return -1;
	c->outstanding++;
	return 0;
}

/* Sends the received octets back (a real client checks the echo). */
static void echo(struct conn *c, unsigned slot, uint32_t len)
{
	unsigned s = c->sends % SQ_DEPTH;
	uint8_t *dst = c->send.buf + s * WT_RECV_LEN;
	struct ibv_sge sge = { (uintptr_t)dst, len, c->send.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1000 + s, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	memcpy(dst, c->recv.buf + slot * WT_RECV_LEN, len);
	if (c->outstanding >= WT_RECV_COUNT + SQ_DEPTH || ibv_post_send(c->id->qp, &wr, &bad)) {
		c->echo_drops++;
		return;
	}
	c->sends++;
	c->outstanding++;
}

/* libibverbs' enum names without their prefix: what a peer compares (ibv_wc_status_str and
 * ibv_event_type_str are prose, and differ between versions). */
static const char *wc_status_name(enum ibv_wc_status st)
{
#define WC(x) [IBV_WC_##x] = #x
	static const char *const names[] = {
		WC(SUCCESS), WC(LOC_LEN_ERR), WC(LOC_QP_OP_ERR), WC(LOC_EEC_OP_ERR),
		WC(LOC_PROT_ERR), WC(WR_FLUSH_ERR), WC(MW_BIND_ERR), WC(BAD_RESP_ERR),
		WC(LOC_ACCESS_ERR), WC(REM_INV_REQ_ERR), WC(REM_ACCESS_ERR), WC(REM_OP_ERR),
		WC(RETRY_EXC_ERR), WC(RNR_RETRY_EXC_ERR), WC(LOC_RDD_VIOL_ERR),
		WC(REM_INV_RD_REQ_ERR), WC(REM_ABORT_ERR), WC(INV_EECN_ERR),
		WC(INV_EEC_STATE_ERR), WC(FATAL_ERR), WC(RESP_TIMEOUT_ERR), WC(GENERAL_ERR),
	};
#undef WC
	unsigned i = (unsigned)st;
	return i < sizeof names / sizeof names[0] && names[i] ? names[i] : "UNKNOWN_STATUS";
}

static const char *event_name(enum ibv_event_type e)
{
#define EV(x) [IBV_EVENT_##x] = #x
	static const char *const names[] = {
		EV(CQ_ERR), EV(QP_FATAL), EV(QP_REQ_ERR), EV(QP_ACCESS_ERR), EV(COMM_EST),
		EV(SQ_DRAINED), EV(PATH_MIG), EV(PATH_MIG_ERR), EV(DEVICE_FATAL),
		EV(PORT_ACTIVE), EV(PORT_ERR), EV(LID_CHANGE), EV(PKEY_CHANGE), EV(SM_CHANGE),
		EV(SRQ_ERR), EV(SRQ_LIMIT_REACHED), EV(QP_LAST_WQE_REACHED),
		EV(CLIENT_REREGISTER), EV(GID_CHANGE), EV(WQ_FATAL),
	};
#undef EV
	unsigned i = (unsigned)e;
	return i < sizeof names / sizeof names[0] && names[i] ? names[i] : "UNKNOWN_EVENT";
}

static void on_wc(struct conn *c, const struct ibv_wc *wc)
{
	c->outstanding--;
	if (wc->status != IBV_WC_SUCCESS) {
		char w[48];
		snprintf(w, sizeof w, "%s:%s", wc->wr_id < 1000 ? "recv" : "send",
			 wc_status_name(wc->status));
		if (!strstr(c->wcs, w))
			note(c->wcs, w);
		return;
	}
	if (wc->opcode != IBV_WC_RECV)
		return;
	c->recvs++;
	echo(c, (unsigned)wc->wr_id, wc->byte_len);
	if (!c->disconnecting && post_recv(c, (unsigned)wc->wr_id))
		note(c->events, "repost-failed");
}

static void poll_cq(struct conn *c)
{
	struct ibv_wc wc[8];
	int n;
	while ((n = ibv_poll_cq(c->cq, 8, wc)) > 0)
		for (int i = 0; i < n; i++)
			on_wc(c, &wc[i]);
}

static void on_cq_event(struct conn *c)
{
	struct ibv_cq *cq;
	void *ctx;
	if (ibv_get_cq_event(c->ch, &cq, &ctx))
		return;
	ibv_ack_cq_events(cq, 1);
	ibv_req_notify_cq(cq, 0);
	poll_cq(c);
}

static int conn_regions(struct conn *c, const struct target *t, struct wt_info *info)
{
	static const int access[] = {
		[WT_W] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		[WT_R] = IBV_ACCESS_REMOTE_READ,
		[WT_L] = IBV_ACCESS_LOCAL_WRITE,
	};
	for (unsigned r = 0; r < WT_F; r++) {
		int acc = access[r];
		if (r == WT_R && t->writable_r)
			acc |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
		if (guarded_reg(&c->region[r], c->pd, WT_REGION_LEN, (uint8_t)(0x10 + r), acc))
			return -1;
	}
	if (guarded_reg(&c->recv, c->pd, WT_RECV_COUNT * WT_RECV_LEN, 0x20,
			IBV_ACCESS_LOCAL_WRITE) ||
	    guarded_reg(&c->send, c->pd, SQ_DEPTH * WT_RECV_LEN, 0x30, IBV_ACCESS_LOCAL_WRITE))
		return -1;
	struct ibv_mr *stale = ibv_reg_mr(c->pd, c->send.buf, 64, IBV_ACCESS_LOCAL_WRITE |
					  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!stale)
		return -1;
	c->stale_stag = stale->rkey;
	ibv_dereg_mr(stale);
	*info = (struct wt_info){ .magic = htobe32(WT_MAGIC), .stale_stag = htobe32(c->stale_stag),
				   .recv_count = htobe32(WT_RECV_COUNT),
				   .recv_len = htobe32(WT_RECV_LEN), .ird = htobe32(WT_IRD) };
	for (unsigned r = 0; r < WT_F; r++)
		info->region[r] = region_of(&c->region[r]);
	info->region[WT_F] = region_of(&t->foreign);
	return 0;
}

static int conn_qp(struct conn *c)
{
	c->ch = ibv_create_comp_channel(c->id->verbs);
	if (!c->ch)
		return -1;
	fcntl(c->ch->fd, F_SETFL, fcntl(c->ch->fd, F_GETFL) | O_NONBLOCK);
	c->cq = ibv_create_cq(c->id->verbs, 2 * (WT_RECV_COUNT + SQ_DEPTH), c, c->ch, 0);
	if (!c->cq || ibv_req_notify_cq(c->cq, 0))
		return -1;
	struct ibv_qp_init_attr qa = {
		.qp_context = c, .send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = WT_RECV_COUNT,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	if (rdma_create_qp(c->id, c->pd, &qa))
		return -1;
	for (unsigned i = 0; i < WT_RECV_COUNT; i++)
		if (post_recv(c, i))
			return -1;
	return 0;
}

static void conn_free(struct target *t, struct conn *c)
{
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (t->conn[i] == c)
			t->conn[i] = NULL;
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	for (unsigned r = 0; r < WT_F; r++)
		guarded_free(&c->region[r]);
	guarded_free(&c->recv);
	guarded_free(&c->send);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	free(c);
}

static uint16_t peer_port_of(struct rdma_cm_id *id)
{
	const struct sockaddr *sa = rdma_get_peer_addr(id);
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
}

/* The device is known once the first connection arrives (a listener on loopback or the
 * wildcard has none): then the other PD with region F, and the asynchronous events. */
static int device_ready(struct target *t, struct ibv_context *ctx)
{
	if (t->ctx)
		return t->ctx == ctx ? 0 : -1;
	t->foreign_pd = ibv_alloc_pd(ctx);
	if (!t->foreign_pd || guarded_reg(&t->foreign, t->foreign_pd, WT_REGION_LEN, 0x13,
					  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						  IBV_ACCESS_REMOTE_READ))
		return -1;
	t->ctx = ctx;
	fcntl(t->ctx->async_fd, F_SETFL, fcntl(t->ctx->async_fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static void on_connect_request(struct target *t, struct rdma_cm_id *id)
{
	struct conn *c = calloc(1, sizeof *c);
	struct wt_info info;
	int slot = -1;

	for (int i = 0; i < MAX_CONNS && slot < 0; i++)
		if (!t->conn[i])
			slot = i;
	if (!c || slot < 0) {
		free(c);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	c->id = id;
	c->n = ++t->conns_seen;
	c->peer_port = peer_port_of(id);
	id->context = c;
	t->conn[slot] = c;
	struct rdma_conn_param p = { .private_data = &info, .private_data_len = sizeof info,
				     .responder_resources = WT_IRD, .initiator_depth = WT_IRD };
	c->pd = device_ready(t, id->verbs) ? NULL : ibv_alloc_pd(id->verbs);
	if (!c->pd || conn_regions(c, t, &info) || conn_qp(c) || rdma_accept(id, &p)) {
		fprintf(stderr, "iwarp-conform: wire target: conn %u: setup failed: %s\n", c->n,
			strerror(errno));
		rdma_reject(id, NULL, 0);
		conn_free(t, c);
	}
}

/* Flushes what is still posted, reports and frees. */
static void conn_end(struct target *t, struct conn *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	static const char *const name[] = { "W", "R", "L" };
	char why[NOTE_LEN] = "";
	bool ok = true;

	c->disconnecting = true;
	if (c->id->qp)
		ibv_modify_qp(c->id->qp, &a, IBV_QP_STATE);
	for (int tries = 0; c->outstanding > 0 && tries < 200; tries++) {
		poll_cq(c);
		if (c->outstanding > 0)
			usleep(5000);
	}
	if (c->outstanding > 0)
		note(c->events, "unflushed");
	bool w_same = first_other(c->region[WT_W].buf, WT_REGION_LEN, c->region[WT_W].fill) < 0;
	for (unsigned r = 0; r < WT_F; r++)
		ok &= guarded_check(&c->region[r], name[r], r != WT_W, why);
	ok &= guarded_check(&c->recv, "recv", false, why);
	ok &= guarded_check(&c->send, "send", false, why);
	if (t->foreign.map)
		ok &= guarded_check(&t->foreign, "F", true, why);
	say(t, "conn %u peer %u dev %s: %s%s%s, W %s, recv %u, echo drops %u, events [%s], wc [%s]",
	    c->n, c->peer_port, ibv_get_device_name(c->id->verbs->device),
	    ok ? "guards ok" : "VIOLATION (", why, ok ? "" : ")", w_same ? "same" : "changed",
	    c->recvs, c->echo_drops, c->events, c->wcs);
	conn_free(t, c);
}

static void on_cm_event(struct target *t)
{
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(t->ec, &ev))
		return;
	enum rdma_cm_event_type type = ev->event;
	struct rdma_cm_id *id = ev->id;
	struct conn *c = id->context;
	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		on_connect_request(t, id);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (c) {
			note(c->events, rdma_event_str(type));
			conn_end(t, c);
		}
		break;
	default:
		break;
	}
}

/* A QP's asynchronous error: noted, and the connection closed (its DISCONNECTED ends it). */
static void on_async_event(struct target *t)
{
	struct ibv_async_event ev;
	if (ibv_get_async_event(t->ctx, &ev))
		return;
	for (unsigned i = 0; i < MAX_CONNS; i++) {
		struct conn *c = t->conn[i];
		if (!c || !c->id->qp || ev.element.qp != c->id->qp)
			continue;
		note(c->events, event_name(ev.event_type));
		if (ev.event_type != IBV_EVENT_COMM_EST && ev.event_type != IBV_EVENT_SQ_DRAINED &&
		    ev.event_type != IBV_EVENT_QP_LAST_WQE_REACHED)
			rdma_disconnect(c->id);
	}
	ibv_ack_async_event(&ev);
}

static void ctl_accept(struct target *t)
{
	int fd = accept4(t->ctl_listen, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (unsigned i = 0; i < MAX_CTL; i++)
		if (t->ctl[i] < 0) {
			t->ctl[i] = fd;
			static const char hello[] = "iwarp-conform wire target ready\n";
			ssize_t n = (ssize_t)sizeof hello - 1;
			if (send(fd, hello, (size_t)n, MSG_NOSIGNAL) == n)
				return;
			t->ctl[i] = -1;
			break;
		}
	close(fd);
}

/* A control peer sends nothing; its readable socket means it closed. */
static void ctl_gone(struct target *t, unsigned i)
{
	char b[64];
	if (recv(t->ctl[i], b, sizeof b, MSG_DONTWAIT) > 0)
		return;
	close(t->ctl[i]);
	t->ctl[i] = -1;
}

static int listen_on(struct target *t, const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *ai;
	if (getaddrinfo(addr, port, &hints, &ai))
		return -1;
	t->ec = rdma_create_event_channel();
	int rc = !t->ec || rdma_create_id(t->ec, &t->listen, NULL, RDMA_PS_TCP) ||
		 rdma_bind_addr(t->listen, ai->ai_addr) || rdma_listen(t->listen, MAX_CONNS);
	freeaddrinfo(ai);
	if (rc)
		return -1;
	fcntl(t->ec->fd, F_SETFL, fcntl(t->ec->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static void serve(struct target *t)
{
	enum { FIXED = 3 };
	while (!stop) {
		struct pollfd p[FIXED + MAX_CTL + MAX_CONNS];
		struct conn *who[FIXED + MAX_CTL + MAX_CONNS];
		unsigned ctl_of[FIXED + MAX_CTL + MAX_CONNS];
		nfds_t n = 0;
		p[n++] = (struct pollfd){ t->ec->fd, POLLIN, 0 };
		p[n++] = (struct pollfd){ t->ctx ? t->ctx->async_fd : -1, POLLIN, 0 };
		p[n++] = (struct pollfd){ t->ctl_listen, POLLIN, 0 };
		for (unsigned i = 0; i < MAX_CTL; i++)
			if (t->ctl[i] >= 0) {
				who[n] = NULL;
				ctl_of[n] = i;
				p[n++] = (struct pollfd){ t->ctl[i], POLLIN, 0 };
			}
		for (unsigned i = 0; i < MAX_CONNS; i++)
			if (t->conn[i] && t->conn[i]->ch) {
				who[n] = t->conn[i];
				p[n++] = (struct pollfd){ t->conn[i]->ch->fd, POLLIN, 0 };
			}
		if (poll(p, n, 200) <= 0)
			continue;
		for (nfds_t i = FIXED; i < n; i++)
			if (p[i].revents && who[i])
				on_cq_event(who[i]);
			else if (p[i].revents)
				ctl_gone(t, ctl_of[i]);
		if (p[1].revents)
			on_async_event(t);
		if (p[2].revents)
			ctl_accept(t);
		if (p[0].revents)
			on_cm_event(t);
	}
}

static void target_free(struct target *t)
{
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (t->conn[i])
			conn_free(t, t->conn[i]);
	guarded_free(&t->foreign);
	if (t->foreign_pd)
		ibv_dealloc_pd(t->foreign_pd);
	for (unsigned i = 0; i < MAX_CTL; i++)
		if (t->ctl[i] >= 0)
			close(t->ctl[i]);
	if (t->ctl_listen >= 0)
		close(t->ctl_listen);
	if (t->listen)
		rdma_destroy_id(t->listen);
	if (t->ec)
		rdma_destroy_event_channel(t->ec);
}

int wt_serve(const char *addr, const char *port, const char *ctl_addr, const char *ctl_port,
	     bool writable_r)
{
	static struct target t;
	struct sigaction sa = { .sa_handler = on_term };

	t.writable_r = writable_r;
	t.ctl_listen = -1;
	for (unsigned i = 0; i < MAX_CTL; i++)
		t.ctl[i] = -1;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (listen_on(&t, addr, port)) {
		fprintf(stderr, "iwarp-conform: wire target: cannot listen on %s port %s: %s\n",
			addr ? addr : "every address", port, strerror(errno));
		target_free(&t);
		return 1;
	}
	t.ctl_listen = ic_ctl_listen(ctl_addr, ctl_port);
	if (t.ctl_listen < 0) {
		target_free(&t);
		return 1;
	}
	printf("iwarp-conform: wire target on %s port %s, reports on control port %s\n",
	       addr ? addr : "every address", port, ctl_port);
	fflush(stdout);
	serve(&t);
	target_free(&t);
	return 0;
}
