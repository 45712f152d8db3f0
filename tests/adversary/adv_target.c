/* adv_target: the softrnic server that tests/adversary/hostile.py attacks. It serves many
 * connections at once from one event loop (so a peer that stalls one stream cannot hide
 * whether the others are still served), tells each peer its regions in the MPA Reply
 * (adv_proto.h), echoes every Send it receives, and when a connection ends checks that
 * nothing was written outside the regions a peer may write:
 *   - every region sits between guard pages filled with a pattern;
 *   - the read-only, local-only and foreign-PD regions keep their content.
 * Then it prints one line per connection, which the attacker reads:
 *   conn N peer PORT: guards ok, W same|changed, recv N, events [..], wc [..]
 * A guard or content violation prints "VIOLATION ..." and exits 3: the attack wrote where it
 * must not.
 *
 *   adv_target ADDR PORT
 *
 * Runs until killed (SIGTERM ends it cleanly with status 0). */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "adv_proto.h"

#define MAX_CONNS 64
#define SQ_DEPTH 16
#define GUARD_LEN 4096u
#define GUARD_FILL 0xa5
#define NOTE_LEN 240

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
	struct guarded region[ADV_NREGIONS - 1];  /* W, R, L (F is shared: struct target) */
	struct guarded recv;                      /* ADV_RECV_COUNT slots */
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
	struct guarded foreign;                   /* ADV_F */
	struct conn *conn[MAX_CONNS];
	unsigned conns_seen;
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
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

/* Exits 3 if anything outside the buffer changed, or the buffer itself when keep. */
static void guarded_check(const struct guarded *g, const char *name, unsigned conn, bool keep)
{
	long before = first_other(g->map, GUARD_LEN, GUARD_FILL);
	long after = first_other(g->buf + g->len, GUARD_LEN, GUARD_FILL);
	long inside = keep ? first_other(g->buf, g->len, g->fill) : -1;

	if (before < 0 && after < 0 && inside < 0)
		return;
	printf("VIOLATION conn %u region %s: guard before %ld, guard after %ld, content %ld\n",
	       conn, name, before, after, inside);
	fflush(stdout);
	exit(3);
}

static struct adv_region region_of(const struct guarded *g)
{
	return (struct adv_region){ .addr = htobe64((uint64_t)(uintptr_t)g->buf),
				    .stag = htobe32(g->mr->rkey), .len = htobe32((uint32_t)g->len) };
}

static int post_recv(struct conn *c, unsigned slot)
{
	struct ibv_sge sge = { (uintptr_t)(c->recv.buf + slot * ADV_RECV_LEN), ADV_RECV_LEN,
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
	uint8_t *dst = c->send.buf + s * ADV_RECV_LEN;
	struct ibv_sge sge = { (uintptr_t)dst, len, c->send.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1000 + s, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	memcpy(dst, c->recv.buf + slot * ADV_RECV_LEN, len);
	if (c->outstanding >= ADV_RECV_COUNT + SQ_DEPTH || ibv_post_send(c->id->qp, &wr, &bad)) {
		c->echo_drops++;
		return;
	}
	c->sends++;
	c->outstanding++;
}

static void on_wc(struct conn *c, const struct ibv_wc *wc)
{
	c->outstanding--;
	if (wc->status != IBV_WC_SUCCESS) {
		char w[48];
		snprintf(w, sizeof w, "%s:%s", wc->wr_id < 1000 ? "recv" : "send",
			 ibv_wc_status_str(wc->status));
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

static int conn_regions(struct conn *c, const struct target *t, struct adv_info *info)
{
	static const int access[] = {
		[ADV_W] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		[ADV_R] = IBV_ACCESS_REMOTE_READ,
		[ADV_L] = IBV_ACCESS_LOCAL_WRITE,
	};
	for (unsigned r = 0; r < ADV_F; r++)
		if (guarded_reg(&c->region[r], c->pd, ADV_REGION_LEN, (uint8_t)(0x10 + r), access[r]))
			return -1;
	if (guarded_reg(&c->recv, c->pd, ADV_RECV_COUNT * ADV_RECV_LEN, 0x20, IBV_ACCESS_LOCAL_WRITE) ||
	    guarded_reg(&c->send, c->pd, SQ_DEPTH * ADV_RECV_LEN, 0x30, IBV_ACCESS_LOCAL_WRITE))
		return -1;
	struct ibv_mr *stale = ibv_reg_mr(c->pd, c->send.buf, 64, IBV_ACCESS_LOCAL_WRITE |
					  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!stale)
		return -1;
	c->stale_stag = stale->rkey;
	ibv_dereg_mr(stale);
	*info = (struct adv_info){ .magic = htobe32(ADV_MAGIC), .stale_stag = htobe32(c->stale_stag),
				   .recv_count = htobe32(ADV_RECV_COUNT),
				   .recv_len = htobe32(ADV_RECV_LEN), .ird = htobe32(ADV_IRD) };
	for (unsigned r = 0; r < ADV_F; r++)
		info->region[r] = region_of(&c->region[r]);
	info->region[ADV_F] = region_of(&t->foreign);
	return 0;
}

static int conn_qp(struct conn *c)
{
	c->ch = ibv_create_comp_channel(c->id->verbs);
	if (!c->ch)
		return -1;
	fcntl(c->ch->fd, F_SETFL, fcntl(c->ch->fd, F_GETFL) | O_NONBLOCK);
	c->cq = ibv_create_cq(c->id->verbs, 2 * (ADV_RECV_COUNT + SQ_DEPTH), c, c->ch, 0);
	if (!c->cq || ibv_req_notify_cq(c->cq, 0))
		return -1;
	struct ibv_qp_init_attr qa = {
		.qp_context = c, .send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = ADV_RECV_COUNT,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	if (rdma_create_qp(c->id, c->pd, &qa))
		return -1;
	for (unsigned i = 0; i < ADV_RECV_COUNT; i++)
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
	for (unsigned r = 0; r < ADV_F; r++)
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
	if (!t->foreign_pd || guarded_reg(&t->foreign, t->foreign_pd, ADV_REGION_LEN, 0x13,
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
	struct adv_info info;
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
				     .responder_resources = ADV_IRD, .initiator_depth = ADV_IRD };
	c->pd = device_ready(t, id->verbs) ? NULL : ibv_alloc_pd(id->verbs);
	if (!c->pd || conn_regions(c, t, &info) || conn_qp(c) || rdma_accept(id, &p)) {
		fprintf(stderr, "adv_target: conn %u: setup failed: %s\n", c->n, strerror(errno));
		rdma_reject(id, NULL, 0);
		conn_free(t, c);
	}
}

/* Flushes what is still posted, reports and frees. */
static void conn_end(struct target *t, struct conn *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

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
	for (unsigned r = 0; r < ADV_F; r++)
		guarded_check(&c->region[r], (const char *[]){ "W", "R", "L" }[r], c->n, r != ADV_W);
	guarded_check(&c->recv, "recv", c->n, false);
	guarded_check(&c->send, "send", c->n, false);
	if (t->foreign.map)
		guarded_check(&t->foreign, "F", c->n, true);
	bool w_same = first_other(c->region[ADV_W].buf, ADV_REGION_LEN, c->region[ADV_W].fill) < 0;
	printf("conn %u peer %u: guards ok, W %s, recv %u, echo drops %u, events [%s], wc [%s]\n",
	       c->n, c->peer_port, w_same ? "same" : "changed", c->recvs, c->echo_drops, c->events,
	       c->wcs);
	fflush(stdout);
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
		note(c->events, ibv_event_type_str(ev.event_type));
		if (ev.event_type != IBV_EVENT_COMM_EST && ev.event_type != IBV_EVENT_SQ_DRAINED &&
		    ev.event_type != IBV_EVENT_QP_LAST_WQE_REACHED)
			rdma_disconnect(c->id);
	}
	ibv_ack_async_event(&ev);
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
	while (!stop) {
		struct pollfd p[2 + MAX_CONNS];
		struct conn *who[2 + MAX_CONNS];
		nfds_t n = 0;
		p[n++] = (struct pollfd){ t->ec->fd, POLLIN, 0 };
		p[n++] = (struct pollfd){ t->ctx ? t->ctx->async_fd : -1, POLLIN, 0 };
		for (unsigned i = 0; i < MAX_CONNS; i++)
			if (t->conn[i] && t->conn[i]->ch) {
				who[n] = t->conn[i];
				p[n++] = (struct pollfd){ t->conn[i]->ch->fd, POLLIN, 0 };
			}
		if (poll(p, n, 200) <= 0)
			continue;
		for (nfds_t i = 2; i < n; i++)
			if (p[i].revents)
				on_cq_event(who[i]);
		if (p[1].revents)
			on_async_event(t);
		if (p[0].revents)
			on_cm_event(t);
	}
}

int main(int argc, char **argv)
{
	struct target t = { 0 };

	if (argc != 3) {
		fputs("usage: adv_target ADDR PORT\n", stderr);
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (listen_on(&t, argv[1], argv[2])) {
		fprintf(stderr, "adv_target: cannot listen on %s port %s: %s\n", argv[1], argv[2],
			strerror(errno));
		return 1;
	}
	printf("listening on %s port %s\n", argv[1], argv[2]);
	fflush(stdout);
	serve(&t);
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (t.conn[i])
			conn_free(&t, t.conn[i]);
	guarded_free(&t.foreign);
	if (t.foreign_pd)
		ibv_dealloc_pd(t.foreign_pd);
	rdma_destroy_id(t.listen);
	rdma_destroy_event_channel(t.ec);
	return 0;
}
