/* vx_wait: waiting for completions (event / busy / yield), memory and WR helpers. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vx.h"

uint64_t vx_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int vx_pin_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set) ? -1 : 0;
}

/* Reads one pending CM event (the fd was readable). Returns 1 if it was DISCONNECTED. */
static int take_cm_event(struct vx_conn *c)
{
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(c->ec, &ev))
		return 0;
	int disc = ev->event == RDMA_CM_EVENT_DISCONNECTED;
	if (!disc)
		fprintf(stderr, "rdma_cm: unexpected %s while connected\n", vx_event_name(ev->event));
	rdma_ack_cm_event(ev);
	if (disc)
		c->disconnected = true;
	return disc;
}

int vx_peer_gone(struct vx_conn *c)
{
	struct pollfd p = { .fd = c->ec->fd, .events = POLLIN };
	if (c->disconnected)
		return 1;
	return poll(&p, 1, 0) == 1 && take_cm_event(c);
}

static bool expired(uint64_t deadline)
{
	return deadline && vx_now_ns() > deadline;
}

static uint64_t deadline_of(const struct vx_conn *c)
{
	return c->timeout_ms < 0 ? 0 : vx_now_ns() + (uint64_t)c->timeout_ms * 1000000u;
}

static int wait_spin(struct vx_conn *c, struct ibv_wc *wc, bool yield)
{
	uint64_t deadline = deadline_of(c);
	for (unsigned spins = 1;; spins++) {
		int n = ibv_poll_cq(c->cq, 1, wc);
		if (n)
			return n < 0 ? (fprintf(stderr, "ibv_poll_cq failed\n"), -1) : 1;
		if (yield)
			sched_yield();
		if ((spins & 1023) == 0 && (vx_peer_gone(c) || expired(deadline)))
			break;
	}
	if (ibv_poll_cq(c->cq, 1, wc) == 1)
		return 1;
	if (c->disconnected)
		return 0;
	fprintf(stderr, "timed out waiting for a completion\n");
	return -1;
}

/* Blocks on the completion channel and the CM channel; 1 CQ event, 0 peer gone, -1 error. */
static int block_once(struct vx_conn *c, uint64_t deadline)
{
	struct pollfd p[2] = { { .fd = c->ch->fd, .events = POLLIN },
	                       { .fd = c->ec->fd, .events = POLLIN } };
	int ms = -1;
	if (deadline) {
		uint64_t now = vx_now_ns();
		ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000u) + 1;
	}
	int n = poll(p, 2, ms);
	if (n < 0)
		return errno == EINTR ? 1 : (perror("poll"), -1);
	if (n == 0) {
		struct ibv_wc wc;
		/* Tell a lost notification (a bug of the provider) from a completion never made. */
		if (ibv_poll_cq(c->cq, 1, &wc) == 1)
			fprintf(stderr, "completion channel: no event for a completion (status %d,"
			        " wr_id 0x%llx) on an armed CQ\n", wc.status, (unsigned long long)wc.wr_id);
		return fprintf(stderr, "timed out waiting for a completion\n"), -1;
	}
	if ((p[1].revents & POLLIN) && take_cm_event(c))
		return 0;
	if (!(p[0].revents & POLLIN))
		return 1;
	struct ibv_cq *cq;
	void *ctx;
	if (ibv_get_cq_event(c->ch, &cq, &ctx))
		return perror("ibv_get_cq_event"), -1;
	ibv_ack_cq_events(cq, 1);
	c->armed = false;
	return 1;
}

static int wait_event(struct vx_conn *c, struct ibv_wc *wc)
{
	uint64_t deadline = deadline_of(c);
	for (;;) {
		int n = ibv_poll_cq(c->cq, 1, wc);
		if (n)
			return n < 0 ? (fprintf(stderr, "ibv_poll_cq failed\n"), -1) : 1;
		if (c->disconnected)
			return 0;
		if (!c->armed) {   /* arm, then poll again: a completion may have slipped in */
			if (ibv_req_notify_cq(c->cq, 0))
				return perror("ibv_req_notify_cq"), -1;
			c->armed = true;
			continue;
		}
		int r = block_once(c, deadline);
		if (r == 0)
			return ibv_poll_cq(c->cq, 1, wc) == 1 ? 1 : 0;
		if (r < 0)
			return -1;
	}
}

int vx_wait_wc(struct vx_conn *c, struct ibv_wc *wc, enum vx_poll mode)
{
	if (mode == VX_EVENT && c->ch)
		return wait_event(c, wc);
	return wait_spin(c, wc, mode == VX_YIELD);
}

int vx_wait_ok(struct vx_conn *c, struct ibv_wc *wc, enum vx_poll mode)
{
	int r = vx_wait_wc(c, wc, mode);
	if (r == 0)
		fprintf(stderr, "peer disconnected unexpectedly\n");
	if (r != 1)
		return -1;
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "completion error: %s (wr_id %llu, opcode %d, vendor_err 0x%x)\n",
		        ibv_wc_status_str(wc->status), (unsigned long long)wc->wr_id, wc->opcode,
		        wc->vendor_err);
		return -1;
	}
	return 0;
}

struct ibv_mr *vx_reg(struct vx_conn *c, size_t len, int access)
{
	void *buf;
	if (len == 0)
		len = 1;
	if (posix_memalign(&buf, 4096, len)) {
		fprintf(stderr, "out of memory (%zu bytes)\n", len);
		return NULL;
	}
	memset(buf, 0, len);
	struct ibv_mr *mr = ibv_reg_mr(c->pd, buf, len, access);
	if (!mr) {
		perror("ibv_reg_mr");
		free(buf);
	}
	return mr;
}

void vx_unreg(struct ibv_mr *mr)
{
	if (!mr)
		return;
	void *buf = mr->addr;
	if (ibv_dereg_mr(mr))
		perror("ibv_dereg_mr");
	free(buf);
}

int vx_post_recv(struct vx_conn *c, uint64_t wr_id, void *addr, uint32_t len, struct ibv_mr *mr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = ibv_post_recv(c->qp, &wr, &bad);
	if (rc)
		fprintf(stderr, "ibv_post_recv: %s\n", strerror(rc));
	return rc ? -1 : 0;
}

int vx_post(struct vx_conn *c, enum ibv_wr_opcode op, uint64_t wr_id, void *addr, uint32_t len,
            struct ibv_mr *mr, uint64_t raddr, uint32_t rkey, bool signaled)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = len ? 1 : 0, .opcode = op,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	int rc = ibv_post_send(c->qp, &wr, &bad);
	if (rc)
		fprintf(stderr, "ibv_post_send: %s\n", strerror(rc));
	return rc ? -1 : 0;
}
