/* An rping-like exchange through the public librdmacm / libibverbs API only (header-only,
 * static; used by test_rdmacm_rping.c in two threads and by rping_peer.c across namespaces).
 *
 * Per iteration, as rping does: the client Sends {buf, rkey, len} of its source buffer; the
 * server RDMA Reads it, Sends "go"; the client Sends {buf, rkey, len} of its sink buffer; the
 * server RDMA Writes what it read there and Sends "done"; the client checks its sink. Then the
 * client disconnects and both sides wait for DISCONNECTED. Every wait is bounded; failures
 * return -1 after printing the step. */
#ifndef RPING_CORE_H
#define RPING_CORE_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "../lib/t_util.h"

#define RP_WAIT_MS 8000
#define RP_LEN 65536u /* over several FPDUs (MULPDU 1442) */

struct rp_info { /* rping's struct rping_rdma_info: network byte order */
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
};

struct rp_side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;   /* the connected id (server: the child) */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *send_mr, *recv_mr, *buf_mr, *sink_mr;
	struct rp_info send_info, recv_info;
	uint8_t *buf, *sink;     /* client: source / sink; server: rdma buffer */
};

static inline int rp_fail(const char *who, const char *step)
{
	fprintf(stderr, "rping %s: %s failed (errno %d: %s)\n", who, step, errno, strerror(errno));
	return -1;
}

static inline struct rdma_cm_event *rp_event(struct rdma_event_channel *ch,
					     enum rdma_cm_event_type want)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, RP_WAIT_MS) != 1 || rdma_get_cm_event(ch, &ev) != 0) {
		errno = ETIMEDOUT;
		return NULL;
	}
	if (ev->event != want) {
		fprintf(stderr, "rping: got %s (status %d), wanted %s\n", rdma_event_str(ev->event),
			ev->status, rdma_event_str(want));
		rdma_ack_cm_event(ev);
		errno = EPROTO;
		return NULL;
	}
	return ev;
}

static inline int rp_event_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = rp_event(ch, want);
	if (ev == NULL)
		return -1;
	rdma_ack_cm_event(ev);
	return 0;
}

/* One completion of opcode `op`, successful. */
static inline int rp_wc(struct rp_side *s, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;
	long long end = t_now_ms() + RP_WAIT_MS;

	for (;;) {
		int n = ibv_poll_cq(s->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n == 1)
			break;
		if (t_now_ms() > end) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op) {
		fprintf(stderr, "rping: wc status %s opcode %d (wanted %d)\n",
			ibv_wc_status_str(wc.status), wc.opcode, op);
		errno = EIO;
		return -1;
	}
	return 0;
}

static inline int rp_post_recv(struct rp_side *s)
{
	struct ibv_sge sge = { (uintptr_t)&s->recv_info, sizeof(s->recv_info), s->recv_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
	return ibv_post_recv(s->id->qp, &wr, &bad) ? -1 : 0;
}

static inline int rp_send_info(struct rp_side *s, const void *buf, uint32_t rkey, uint32_t len)
{
	s->send_info.buf = htobe64((uint64_t)(uintptr_t)buf);
	s->send_info.rkey = htobe32(rkey);
	s->send_info.size = htobe32(len);
	struct ibv_sge sge = { (uintptr_t)&s->send_info, sizeof(s->send_info), s->send_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	if (ibv_post_send(s->id->qp, &wr, &bad))
		return -1;
	return rp_wc(s, IBV_WC_SEND);
}

static inline int rp_rdma(struct rp_side *s, enum ibv_wr_opcode op, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, len, s->buf_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.rdma.remote_addr = be64toh(s->recv_info.buf);
	wr.wr.rdma.rkey = be32toh(s->recv_info.rkey);
	if (ibv_post_send(s->id->qp, &wr, &bad))
		return -1;
	return rp_wc(s, op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE);
}

/* PD, CQ, QP on s->id and the memory regions. */
static inline int rp_setup(struct rp_side *s, int client)
{
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 8, .max_recv_wr = 8,
						.max_send_sge = 1, .max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;

	if ((s->pd = ibv_alloc_pd(s->id->verbs)) == NULL)
		return -1;
	if ((s->cq = ibv_create_cq(s->id->verbs, 32, NULL, NULL, 0)) == NULL)
		return -1;
	qa.send_cq = qa.recv_cq = s->cq;
	if (rdma_create_qp(s->id, s->pd, &qa) != 0)
		return -1;
	s->buf = calloc(1, RP_LEN);
	s->sink = client ? calloc(1, RP_LEN) : NULL;
	if (s->buf == NULL || (client && s->sink == NULL))
		return -1;
	s->send_mr = ibv_reg_mr(s->pd, &s->send_info, sizeof(s->send_info), 0);
	s->recv_mr = ibv_reg_mr(s->pd, &s->recv_info, sizeof(s->recv_info), IBV_ACCESS_LOCAL_WRITE);
	s->buf_mr = ibv_reg_mr(s->pd, s->buf, RP_LEN, acc);
	s->sink_mr = client ? ibv_reg_mr(s->pd, s->sink, RP_LEN, acc) : NULL;
	if (!s->send_mr || !s->recv_mr || !s->buf_mr || (client && !s->sink_mr))
		return -1;
	return rp_post_recv(s);
}

static inline void rp_cleanup(struct rp_side *s)
{
	if (s->sink_mr)
		ibv_dereg_mr(s->sink_mr);
	if (s->buf_mr)
		ibv_dereg_mr(s->buf_mr);
	if (s->recv_mr)
		ibv_dereg_mr(s->recv_mr);
	if (s->send_mr)
		ibv_dereg_mr(s->send_mr);
	if (s->id && s->id->qp)
		rdma_destroy_qp(s->id);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	free(s->buf);
	free(s->sink);
	if (s->id)
		rdma_destroy_id(s->id);
	memset(s, 0, sizeof(*s));
}

/* ---- server ----------------------------------------------------------------------------- */

/* Listen on ip:port (0: any free port; *bound gets it). */
static inline int rp_listen(struct rdma_event_channel *ch, struct rdma_cm_id **lis,
			    const char *ip, uint16_t port, uint16_t *bound)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		return -1;
	if (rdma_create_id(ch, lis, NULL, RDMA_PS_TCP) != 0)
		return rp_fail("server", "rdma_create_id");
	if (rdma_bind_addr(*lis, (struct sockaddr *)&a) != 0)
		return rp_fail("server", "rdma_bind_addr");
	if (rdma_listen(*lis, 4) != 0)
		return rp_fail("server", "rdma_listen");
	*bound = ntohs(rdma_get_src_port(*lis));
	return 0;
}

static inline int rp_server_iter(struct rp_side *s)
{
	if (rp_wc(s, IBV_WC_RECV)) /* client's source buffer */
		return rp_fail("server", "recv source info");
	uint32_t len = be32toh(s->recv_info.size);
	if (len > RP_LEN || rp_post_recv(s))
		return rp_fail("server", "source length / post recv");
	if (rp_rdma(s, IBV_WR_RDMA_READ, len))
		return rp_fail("server", "RDMA Read");
	if (rp_send_info(s, NULL, 0, 0)) /* "go ahead" */
		return rp_fail("server", "send go");
	if (rp_wc(s, IBV_WC_RECV)) /* client's sink buffer */
		return rp_fail("server", "recv sink info");
	if (rp_post_recv(s))
		return rp_fail("server", "post recv");
	if (rp_rdma(s, IBV_WR_RDMA_WRITE, len))
		return rp_fail("server", "RDMA Write");
	if (rp_send_info(s, NULL, 0, 0)) /* "done" */
		return rp_fail("server", "send done");
	return 0;
}

/* Serve one connection of `count` iterations on listener lis. */
static inline int rp_server(struct rdma_event_channel *ch, int count)
{
	struct rp_side s = { .ch = ch };
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev = rp_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	int rc = -1;

	if (ev == NULL)
		return rp_fail("server", "CONNECT_REQUEST");
	s.id = ev->id;
	rdma_ack_cm_event(ev);
	if (rp_setup(&s, 0)) {
		rp_fail("server", "setup");
		goto out;
	}
	if (rdma_accept(s.id, &cp) || rp_event_ack(ch, RDMA_CM_EVENT_ESTABLISHED)) {
		rp_fail("server", "accept / ESTABLISHED");
		goto out;
	}
	for (int i = 0; i < count; i++)
		if (rp_server_iter(&s))
			goto out;
	if (rp_event_ack(ch, RDMA_CM_EVENT_DISCONNECTED)) {
		rp_fail("server", "DISCONNECTED");
		goto out;
	}
	rdma_disconnect(s.id);
	rc = 0;
out:
	rp_cleanup(&s);
	return rc;
}

/* ---- client ----------------------------------------------------------------------------- */

static inline int rp_client_iter(struct rp_side *s, int i)
{
	for (uint32_t k = 0; k < RP_LEN; k++)
		s->buf[k] = (uint8_t)(k * 7 + i + 1);
	memset(s->sink, 0, RP_LEN);
	if (rp_send_info(s, s->buf, s->buf_mr->rkey, RP_LEN))
		return rp_fail("client", "send source info");
	if (rp_wc(s, IBV_WC_RECV) || rp_post_recv(s)) /* "go" */
		return rp_fail("client", "recv go");
	if (rp_send_info(s, s->sink, s->sink_mr->rkey, RP_LEN))
		return rp_fail("client", "send sink info");
	if (rp_wc(s, IBV_WC_RECV) || rp_post_recv(s)) /* "done" */
		return rp_fail("client", "recv done");
	if (memcmp(s->buf, s->sink, RP_LEN) != 0) {
		fprintf(stderr, "rping client: iteration %d: data mismatch\n", i);
		return -1;
	}
	return 0;
}

static inline int rp_client(const char *ip, uint16_t port, int count)
{
	struct rp_side s = { 0 };
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7 };
	int rc = -1;

	if (inet_pton(AF_INET, ip, &dst.sin_addr) != 1 || !(s.ch = rdma_create_event_channel()))
		return rp_fail("client", "address / channel");
	if (rdma_create_id(s.ch, &s.id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(s.id, NULL, (struct sockaddr *)&dst, 2000) ||
	    rp_event_ack(s.ch, RDMA_CM_EVENT_ADDR_RESOLVED) || rdma_resolve_route(s.id, 2000) ||
	    rp_event_ack(s.ch, RDMA_CM_EVENT_ROUTE_RESOLVED)) {
		rp_fail("client", "resolve");
		goto out;
	}
	if (rp_setup(&s, 1) || rdma_connect(s.id, &cp) ||
	    rp_event_ack(s.ch, RDMA_CM_EVENT_ESTABLISHED)) {
		rp_fail("client", "setup / connect / ESTABLISHED");
		goto out;
	}
	for (int i = 0; i < count; i++)
		if (rp_client_iter(&s, i))
			goto out;
	if (rdma_disconnect(s.id) || rp_event_ack(s.ch, RDMA_CM_EVENT_DISCONNECTED)) {
		rp_fail("client", "disconnect");
		goto out;
	}
	rc = 0;
out:;
	struct rdma_event_channel *ch = s.ch;
	rp_cleanup(&s);
	rdma_destroy_event_channel(ch);
	return rc;
}

#endif
