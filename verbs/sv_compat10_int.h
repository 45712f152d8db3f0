/* Shared by sv_compat10.c and sv_compat10_wr.c: the 1.0 ops and the symbol-version binding. */
#ifndef SV_V_COMPAT10_INT_H
#define SV_V_COMPAT10_INT_H

#include "sv_compat10.h"
#include "sv_symver.h"

/* Binds our function to NAME@IBVERBS_1.0 (the non-default, old version; NAME@@IBVERBS_1.1
 * is the current function). */
#define SV10_SYMVER(fn, name) SV_SYMVER(fn, #name "@IBVERBS_1.0")

int sv10_poll_cq(struct ibv_cq_1_0 *cq, int num_entries, struct ibv_wc *wc);
int sv10_req_notify_cq(struct ibv_cq_1_0 *cq, int solicited_only);
int sv10_post_send(struct ibv_qp_1_0 *qp, struct ibv_send_wr_1_0 *wr,
		   struct ibv_send_wr_1_0 **bad_wr);
int sv10_post_recv(struct ibv_qp_1_0 *qp, struct ibv_recv_wr_1_0 *wr,
		   struct ibv_recv_wr_1_0 **bad_wr);
int sv10_post_srq_recv(struct ibv_srq_1_0 *srq, struct ibv_recv_wr_1_0 *wr,
		       struct ibv_recv_wr_1_0 **bad_wr);

#endif
