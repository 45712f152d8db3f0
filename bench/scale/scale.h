/* qp_scale: many connected QPs between two processes (issue 27, scale). The server accepts
 * every connection with one receive posted and answers each 64-octet Send with one; the
 * client measures the round trip on one QP alone, opens the others (the setup rate), the
 * round trip on the same QP again with all of them open, and one round trip on each QP.
 * Both print their resident memory per QP. */
#ifndef QP_SCALE_H
#define QP_SCALE_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "vx.h"

#define SCALE_MSG 64u
#define SCALE_QPS_PER_CQ 1024u  /* each QP has at most one Send and one Receive outstanding */

/* What both ends share: the device, one PD, the CQs (each with its channel), the buffers. */
struct scale_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel **ch;
	struct ibv_cq **cq;
	unsigned ncq;
	uint8_t *buf;                  /* SCALE_MSG octets per QP: receive, then send */
	struct ibv_mr *mr;
	unsigned nqp;
};

int scale_dev_open(struct scale_dev *d, struct ibv_context *ctx, unsigned nqp);
void scale_dev_close(struct scale_dev *d);
/* An RC QP on the CQ of slot i, with one receive posted into slot i's buffer. */
int scale_qp_create(struct scale_dev *d, struct rdma_cm_id *id, unsigned i);
int scale_post_recv(struct scale_dev *d, struct ibv_qp *qp, unsigned i);
int scale_post_send(struct scale_dev *d, struct ibv_qp *qp, unsigned i);
/* Waits (completion channel) for one completion on CQ c; 1 when wc is filled, -1 after
 * timeout_ms or on error. */
int scale_wait_wc(struct scale_dev *d, unsigned c, struct ibv_wc *wc, int timeout_ms);

/* Raises the open-file limit to at least want (a kernel-socket QP holds its socket and the
 * engine's copy of it). */
int scale_nofile(unsigned want);

int scale_server(const char *addr, const char *port, unsigned nqp);
int scale_client(const char *addr, const char *port, unsigned nqp, unsigned iters,
		 unsigned inflight);

#endif
