/* qp_scale's server: accepts nqp connections, each with one receive posted, answers every
 * Send with one, and exits once all nqp have come and gone. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scale.h"

struct server {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen;
	struct scale_dev dev;
	struct rdma_cm_id **id;   /* by slot */
	unsigned nqp, accepted, open, gone;
	long rss_base, rss_peak;
};

static void on_request(struct server *s, struct rdma_cm_id *id)
{
	unsigned i = s->accepted;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1 };

	if (i == 0 && scale_dev_open(&s->dev, id->verbs, s->nqp))
		perror("qp_scale server: PD, CQs, buffers");
	if (i == 0)
		s->rss_base = vx_rss_kib();
	if (i >= s->nqp || !s->dev.pd || scale_qp_create(&s->dev, id, i) || rdma_accept(id, &p)) {
		fprintf(stderr, "qp_scale server: connection %u refused: %s\n", i, strerror(errno));
		rdma_reject(id, NULL, 0);
		if (id->qp)
			rdma_destroy_qp(id);
		rdma_destroy_id(id);
		return;
	}
	id->context = (void *)(uintptr_t)(i + 1);
	s->id[i] = id;
	s->accepted++;
}

static void on_cm(struct server *s)
{
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(s->ec, &ev))
		return;
	struct rdma_cm_id *id = ev->id;
	enum rdma_cm_event_type t = ev->event;
	rdma_ack_cm_event(ev);
	if (t == RDMA_CM_EVENT_CONNECT_REQUEST) {
		on_request(s, id);
	} else if (t == RDMA_CM_EVENT_ESTABLISHED) {
		if (++s->open == s->nqp)
			s->rss_peak = vx_rss_kib();
	} else if ((t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_CONNECT_ERROR) &&
		   id->context) {
		unsigned i = (unsigned)(uintptr_t)id->context - 1;
		if (t == RDMA_CM_EVENT_DISCONNECTED)
			s->open--;
		s->gone++;
		s->id[i] = NULL;
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
}

/* Answers every Send on CQ c with one (the receive reposted first). */
static void on_cq(struct server *s, unsigned c)
{
	struct ibv_cq *cq;
	void *ctx;
	struct ibv_wc wc[16];
	int n;

	if (ibv_get_cq_event(s->dev.ch[c], &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
	}
	while ((n = ibv_poll_cq(s->dev.cq[c], 16, wc)) > 0)
		for (int k = 0; k < n; k++) {
			unsigned i = (unsigned)wc[k].wr_id;
			if (wc[k].status != IBV_WC_SUCCESS || wc[k].opcode != IBV_WC_RECV || !s->id[i])
				continue;
			if (scale_post_recv(&s->dev, s->id[i]->qp, i) ||
			    scale_post_send(&s->dev, s->id[i]->qp, i))
				fprintf(stderr, "qp_scale server: QP %u: post failed\n", i);
		}
}

static void serve(struct server *s)
{
	struct pollfd *p = calloc(1 + (s->nqp + SCALE_QPS_PER_CQ - 1) / SCALE_QPS_PER_CQ, sizeof *p);
	while (p && s->gone < s->nqp) {
		nfds_t n = 0;
		p[n++] = (struct pollfd){ s->ec->fd, POLLIN, 0 };
		for (unsigned c = 0; c < s->dev.ncq; c++)
			p[n++] = (struct pollfd){ s->dev.ch[c]->fd, POLLIN, 0 };
		if (poll(p, n, 1000) <= 0)
			continue;
		for (unsigned c = 0; c < s->dev.ncq; c++)
			if (p[1 + c].revents)
				on_cq(s, c);
		if (p[0].revents)
			on_cm(s);
	}
	free(p);
}

int scale_server(const char *addr, const char *port, unsigned nqp)
{
	struct server s = { .nqp = nqp };
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *ai;

	s.id = calloc(nqp, sizeof *s.id);
	if (!s.id || scale_nofile(nqp + 2 * (nqp / SCALE_QPS_PER_CQ) + 256) || getaddrinfo(addr, port, &hints, &ai))
		return 1;
	s.ec = rdma_create_event_channel();
	int rc = !s.ec || rdma_create_id(s.ec, &s.listen, NULL, RDMA_PS_TCP) ||
		 rdma_bind_addr(s.listen, ai->ai_addr) || rdma_listen(s.listen, 1024);
	freeaddrinfo(ai);
	if (rc) {
		perror("qp_scale server: listen");
		return 1;
	}
	fcntl(s.ec->fd, F_SETFL, fcntl(s.ec->fd, F_GETFL) | O_NONBLOCK);
	printf("qp_scale server: listening on %s port %s for %u QPs\n", addr, port, nqp);
	fflush(stdout);
	serve(&s);
	printf("qp_scale server: %u QPs served; RSS %ld KiB before, %ld KiB with all open: "
	       "%.1f KiB per QP\n", s.accepted, s.rss_base, s.rss_peak,
	       nqp ? (double)(s.rss_peak - s.rss_base) / nqp : 0.0);
	rdma_destroy_id(s.listen);
	scale_dev_close(&s.dev);
	rdma_destroy_event_channel(s.ec);
	free(s.id);
	return s.open == 0 && s.accepted == nqp ? 0 : 1;
}
