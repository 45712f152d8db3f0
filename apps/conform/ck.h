/* The halves of the checks (ck_*.c), listed in ck_table.c. */
#ifndef CK_H
#define CK_H

#include "ic.h"

int ck_device_attrs(struct ic *ic);
int ck_pd_mr(struct ic *ic);
int ck_cq(struct ic *ic);
int ck_qp_create(struct ic *ic);
int ck_qp_states(struct ic *ic);
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
int ck_write_oob_srv(struct ic *ic);
int ck_write_oob_cli(struct ic *ic);
int ck_disconnect_srv(struct ic *ic);
int ck_disconnect_cli(struct ic *ic);
int ck_send_inv_srv(struct ic *ic);
int ck_send_inv_cli(struct ic *ic);
int ck_send_imm_srv(struct ic *ic);
int ck_send_imm_cli(struct ic *ic);
int ck_write_imm_srv(struct ic *ic);
int ck_write_imm_cli(struct ic *ic);

#endif
