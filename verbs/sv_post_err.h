/* The context's post ops with libibverbs' rule for a QP in Error (sv_post_err.c). */
#ifndef SV_V_POST_ERR_H
#define SV_V_POST_ERR_H

#include <infiniband/verbs.h>

#include "verbs_int.h"

int sv_post_send_ib(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) SV_HIDDEN;
int sv_post_recv_ib(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) SV_HIDDEN;

#endif
