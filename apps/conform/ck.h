/* The halves of the checks (ck_*.c), listed in ck_table.c. */
#ifndef CK_H
#define CK_H

#include "ic.h"

/* ck_local.c: each side on its own device */
int ck_device_attrs(struct ic *ic);
int ck_pd_mr(struct ic *ic);
int ck_cq(struct ic *ic);
int ck_qp_create(struct ic *ic);
int ck_qp_states(struct ic *ic);
int ck_cq_overrun(struct ic *ic);
/* ck_data.c */
int ck_send_sizes_srv(struct ic *ic);
int ck_send_sizes_cli(struct ic *ic);
int ck_write_srv(struct ic *ic);
int ck_write_cli(struct ic *ic);
int ck_read_srv(struct ic *ic);
int ck_read_cli(struct ic *ic);
int ck_zero_srv(struct ic *ic);
int ck_zero_cli(struct ic *ic);
int ck_unsignaled_srv(struct ic *ic);
int ck_unsignaled_cli(struct ic *ic);
int ck_sgl_srv(struct ic *ic);
int ck_sgl_cli(struct ic *ic);
/* ck_queue.c */
int ck_srq_prep(struct ic *ic);
int ck_srq_srv(struct ic *ic);
int ck_srq_cli(struct ic *ic);
int ck_solicited_srv(struct ic *ic);
int ck_solicited_cli(struct ic *ic);
int ck_srq_shared_srv(struct ic *ic);
int ck_srq_shared_cli(struct ic *ic);
/* ck_error.c */
int ck_prot_bounds_srv(struct ic *ic);
int ck_prot_stag_srv(struct ic *ic);
int ck_prot_key_srv(struct ic *ic);
int ck_prot_pd_srv(struct ic *ic);
int ck_prot_rights_srv(struct ic *ic);
int ck_prot_cli(struct ic *ic);
int ck_recv_small_srv(struct ic *ic);
int ck_recv_small_cli(struct ic *ic);
int ck_disconnect_srv(struct ic *ic);
int ck_disconnect_cli(struct ic *ic);
int ck_read_bounds_srv(struct ic *ic);
int ck_read_rights_srv(struct ic *ic);
int ck_read_prot_cli(struct ic *ic);
int ck_send_no_recv_srv(struct ic *ic);
int ck_send_no_recv_cli(struct ic *ic);
/* ck_ext.c */
int ck_send_inv_srv(struct ic *ic);
int ck_send_inv_cli(struct ic *ic);
int ck_send_imm_srv(struct ic *ic);
int ck_send_imm_cli(struct ic *ic);
int ck_write_imm_srv(struct ic *ic);
int ck_write_imm_cli(struct ic *ic);
int ck_send_inline_srv(struct ic *ic);
int ck_send_inline_cli(struct ic *ic);
/* ck_order.c */
int ck_ord_srv(struct ic *ic);
int ck_ord_cli(struct ic *ic);
int ck_fence_srv(struct ic *ic);
int ck_fence_cli(struct ic *ic);

#endif
