/* qp_scale's client: the round trip on QP 0 alone, then nqp - 1 more connections (at most
 * inflight being set up at once), the round trip on QP 0 again with all open, one round
 * trip on every QP, and the disconnect of all. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scale.h"

#define STEP_MS 30000

struct client {
	struct rdma_event_channel *ec;
	struct addrinfo *ai;
	struct scale_dev dev;
	struct rdma_cm_id **id;
	bool *down;               /* by QP: DISCONNECTED seen */
	unsigned nqp, established, failed, disconnected;
};

static int start(struct client *c, unsigned i)
{
	if (rdma_create_id(c->ec, &c->id[i], (void *)(uintptr_t)(i + 1), RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->id[i], NULL, c->ai->ai_addr, 5000)) {
		perror("qp_scale client: resolve");
		return -1;
	}
	return 0;
}

static int step(struct client *c, struct rdma_cm_id *id, enum rdma_cm_event_type t)
{
	unsigned i = (unsigned)(uintptr_t)id->context - 1;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1 };

	switch (t) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		return rdma_resolve_route(id, 5000);
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (!c->dev.pd && scale_dev_open(&c->dev, id->verbs, c->nqp)) {
			perror("qp_scale client: PD, CQs, buffers");
			return -1;
		}
		if (scale_qp_create(&c->dev, id, i) || rdma_connect(id, &p)) {
			fprintf(stderr, "qp_scale client: QP %u: %s\n", i, strerror(errno));
			return -1;
		}
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		c->established++;
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		c->down[i] = true;
		c->disconnected++;
		return 0;
	default:
		fprintf(stderr, "qp_scale client: QP %u: %s\n", i, rdma_event_str(t));
		c->failed++;
		return 0;
	}
}

/* One CM event (waiting at most STEP_MS); -1 on a failure. */
static int next_event(struct client *c)
{
	struct pollfd p = { c->ec->fd, POLLIN, 0 };
	struct rdma_cm_event *ev;
	if (poll(&p, 1, STEP_MS) <= 0 || rdma_get_cm_event(c->ec, &ev)) {
		fprintf(stderr, "qp_scale client: no CM event in time (%u established, %u disconnected)\n", c->established, c->disconnected);
		return -1;
	}
	struct rdma_cm_id *id = ev->id;
	enum rdma_cm_event_type t = ev->event;
	rdma_ack_cm_event(ev);
	return step(c, id, t) || c->failed ? -1 : 0;
}

/* Connects QPs [from, to), with at most inflight under way. */
static int connect_range(struct client *c, unsigned from, unsigned to, unsigned inflight)
{
	unsigned next = from;
	while (c->established < to) {
		while (next < to && next - c->established < inflight)
			if (start(c, next++))
				return -1;
		if (next_event(c))
			return -1;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One Send to QP i and the answer to it; the round trip in ns, or 0 on a failure. */
static uint64_t round_trip(struct client *c, unsigned i)
{
	unsigned cq = i / SCALE_QPS_PER_CQ;
	bool sent = false, answered = false;
	struct ibv_wc wc;
	uint64_t t0 = vx_now_ns();

	if (scale_post_send(&c->dev, c->id[i]->qp, i))
		return 0;
	while (!sent || !answered) {
		if (scale_wait_wc(&c->dev, cq, &wc, STEP_MS) != 1) {
			fprintf(stderr, "qp_scale client: QP %u: no answer\n", i);
			return 0;
		}
		if (wc.wr_id != i)
			continue;   /* a flushed receive of a QP disconnected before */
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "qp_scale client: QP %u: %s\n", i, ibv_wc_status_str(wc.status));
			return 0;
		}
		sent |= wc.opcode == IBV_WC_SEND;
		answered |= wc.opcode == IBV_WC_RECV;
	}
	uint64_t rtt = vx_now_ns() - t0;
	return scale_post_recv(&c->dev, c->id[i]->qp, i) ? 0 : rtt;
}

/* The median round trip on QP i over iters, in ns (0 on a failure). */
static uint64_t median_rtt(struct client *c, unsigned i, unsigned iters)
{
	uint64_t *s = calloc(iters, sizeof *s), med = 0;
	unsigned k = 0;
	while (s && k < iters && (s[k] = round_trip(c, i)) != 0)
		k++;
	if (s && k == iters) {
		qsort(s, iters, sizeof *s, cmp_u64);
		med = s[iters / 2];
	}
	free(s);
	return med;
}

/* Disconnects QPs [from, nqp) and waits for their DISCONNECTED events. */
static int disconnect_range(struct client *c, unsigned from)
{
	unsigned want = c->disconnected;
	for (unsigned i = from; i < c->nqp; i++)
		if (c->id[i] && c->id[i]->qp && !c->down[i] && rdma_disconnect(c->id[i]) == 0)
			want++;
	while (c->disconnected < want)
		if (next_event(c))
			return -1;
	return 0;
}

static void teardown(struct client *c)
{
	(void)disconnect_range(c, 0);
	for (unsigned i = 0; i < c->nqp; i++)
		if (c->id[i]) {
			if (c->id[i]->qp)
				rdma_destroy_qp(c->id[i]);
			rdma_destroy_id(c->id[i]);
		}
	scale_dev_close(&c->dev);
}

/* The round trip on QP 0 alone, then with all open; the setup rate, the memory per QP, one
 * round trip on every QP, and the disconnect of all but QP 0. */
static int measure(struct client *c, unsigned iters, unsigned inflight)
{
	if (connect_range(c, 0, 1, 1))
		return -1;
	long rss1 = vx_rss_kib();
	uint64_t lat1 = median_rtt(c, 0, iters);
	uint64_t t0 = vx_now_ns();
	if (!lat1 || connect_range(c, 1, c->nqp, inflight))
		return -1;
	double setup_s = (double)(vx_now_ns() - t0) / 1e9;
	long rssn = vx_rss_kib();
	uint64_t latn = median_rtt(c, 0, iters);
	t0 = vx_now_ns();
	for (unsigned i = 0; i < c->nqp; i++)
		if (!round_trip(c, i))
			return -1;
	double all_s = (double)(vx_now_ns() - t0) / 1e9;
	t0 = vx_now_ns();
	if (!latn || disconnect_range(c, 1))
		return -1;
	double down_s = (double)(vx_now_ns() - t0) / 1e9;
	printf("qp_scale: %u QPs; setup of %u in %.2f s (%.0f/s); RSS %ld KiB with 1, %ld KiB "
	       "with all: %.1f KiB per QP; round trip on QP 0: %.1f us alone, %.1f us with all "
	       "open (ratio %.3f); one round trip on each QP: %.2f s; disconnect of %u: %.2f s\n",
	       c->nqp, c->nqp - 1, setup_s, (c->nqp - 1) / (setup_s > 0 ? setup_s : 1e-9), rss1,
	       rssn, c->nqp > 1 ? (double)(rssn - rss1) / (c->nqp - 1) : 0.0, (double)lat1 / 1e3,
	       (double)latn / 1e3, (double)latn / (double)lat1, all_s, c->nqp - 1, down_s);
	return 0;
}

int scale_client(const char *addr, const char *port, unsigned nqp, unsigned iters,
		 unsigned inflight)
{
	struct client c = { .nqp = nqp };
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };

	c.id = calloc(nqp, sizeof *c.id);
	c.down = calloc(nqp, sizeof *c.down);
	if (!c.id || !c.down || scale_nofile(nqp + 2 * (nqp / SCALE_QPS_PER_CQ) + 256) || getaddrinfo(addr, port, &hints, &c.ai))
		return 1;
	c.ec = rdma_create_event_channel();
	int rc = c.ec ? measure(&c, iters, inflight) : -1;
	teardown(&c);
	freeaddrinfo(c.ai);
	if (c.ec)
		rdma_destroy_event_channel(c.ec);
	free(c.id);
	free(c.down);
	return rc ? 1 : 0;
}
