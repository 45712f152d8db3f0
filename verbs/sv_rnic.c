/* The device behind a context: a shared open of rn_device (rn_device.h), which owns rn_mem,
 * the async event queue and the progress engine that runs connected QPs, and counts every
 * resource against its limits. Here: open / close and Query RNIC -> ibv_device_attr. */
#include <errno.h>
#include <string.h>

#include "verbs_int.h"

void sv_dev_limits(struct rn_device *d, struct ibv_device_attr *a)
{
	struct rn_device_attr r;

	memset(&r, 0, sizeof(r));
	rn_device_query(d, &r);
	a->vendor_id = r.vendor_id;
	a->vendor_part_id = r.vendor_part_id;
	a->hw_ver = r.hw_ver;
	a->max_mr_size = r.max_mr_size;
	a->page_size_cap = r.page_size_cap;
	a->max_qp = (int)r.max_qp;
	a->max_qp_wr = (int)r.max_qp_wr;
	/* one number for SQ and RQ WRs in libibverbs: the smallest of the RNIC's */
	a->max_sge = (int)(r.max_send_sge < r.max_write_sge ? r.max_send_sge : r.max_write_sge);
	if ((uint32_t)a->max_sge > r.max_recv_sge)
		a->max_sge = (int)r.max_recv_sge;
	a->max_sge_rd = 1;                         /* an RDMA Read has one sink SGE */
	a->max_cq = (int)r.max_cq;
	a->max_cqe = (int)r.max_cqe;
	a->max_mr = (int)r.max_mr;
	a->max_pd = (int)r.max_pd;
	a->max_mw = (int)r.max_mw;
	a->max_qp_rd_atom = (int)r.max_ird;        /* inbound Reads in progress per QP */
	a->max_qp_init_rd_atom = (int)r.max_ord;   /* outbound Reads in flight per QP */
	a->max_res_rd_atom = (int)(r.ird_total ? r.ird_total : r.max_qp * r.max_ird);
	a->max_srq = (int)r.max_srq;
	a->max_srq_wr = (int)r.max_srq_wr;
	a->max_srq_sge = (int)r.max_recv_sge;
	a->device_cap_flags = (r.srq_supported ? IBV_DEVICE_SRQ_RESIZE : 0) |
			      (r.can_resize_qp ? IBV_DEVICE_RESIZE_MAX_WR : 0);
}

int sv_dev_open(struct sv_context *c)
{
	struct rn_device_open_attr a;
	enum rn_status st;

	rn_device_open_attr_default(&a);   /* shared: each context its own instance */
	st = rn_device_open(&a, &c->dev);
	if (st)
		return sv_errno(st);
	c->mem = rn_device_mem(c->dev);
	return 0;
}

void sv_dev_close(struct sv_context *c)
{
	rn_device_close(c->dev);
}
