/* rn_qp bound to the device: creation with the device's parts and limits, attachment to the
 * progress engine, destroy, and the forced destroy of close (rn_device.h). */
#include "rn_device_int.h"
#include "rn_qp.h"

static int qp_fd(void *o) { return rn_qp_fd(o); }
static int qp_readable(void *o) { return rn_qp_on_readable(o); }
static int qp_writable(void *o) { return rn_qp_on_writable(o); }
static bool qp_wants_write(void *o) { return rn_qp_wants_write(o); }
static void qp_cqs(void *o, const struct rn_cq *out[2]) { rn_qp_cqs(o, out); }
static int qp_try_progress(void *o) { return rn_qp_try_progress(o); }
static int qp_fd_hold(void *o) { return rn_qp_fd_hold(o); }

/* Close of the device: type-2 windows still bound to the QP would refuse Destroy QP, and
 * close must not fail; deallocate them (the whole device goes anyway). */
static void qp_destroy_forced(struct rn_device *dev, void *o)
{
	struct rn_mem *mem = rn_device_mem(dev);
	uint32_t id = rn_qp_id(o);

	if (rn_qp_destroy(o) != RN_ERR_MW_BOUND_TO_QP)
		return;
	for (uint32_t i = 1; i < rn_mem_tpt_size(mem); i++) {
		struct rn_mem_info info;
		rn_stag_t s = RN_STAG(i, 0);

		if (rn_mem_query_mw(mem, s, &info) == RN_OK && info.mw_type == RN_MW_TYPE2 &&
		    info.state == RN_MEM_VALID && info.qp_id == id)
			rn_mem_dereg(mem, s);
	}
	rn_qp_destroy(o);
}

static const struct rn_dev_conn_ops qp_ops = {
	qp_fd, qp_readable, qp_writable, qp_wants_write, qp_destroy_forced, qp_cqs,
	qp_try_progress, qp_fd_hold,
};

static void fill_attr(struct rn_device *dev, struct rn_qp_init_attr *attr, struct rn_dev_conn *c)
{
	struct rn_device_attr da;

	rn_device_query(dev, &da);
	attr->mem = rn_device_mem(dev);
	attr->evq = rn_device_evq(dev);
	attr->qp_id = rn_device_next_id(dev);
	attr->stats = dev->stats;
	attr->limits = (struct rn_qp_limits){
		.max_sq_wr = da.max_qp_wr,
		.max_rq_wr = da.max_qp_wr,
		.max_sge = da.max_send_sge < da.max_write_sge ? da.max_write_sge : da.max_send_sge,
		.max_recv_sge = da.max_recv_sge,
		.max_inline = da.max_inline,
		.max_ord = da.max_ord,
		.max_ird = da.max_ird,
	};
	attr->wake = rn_device_conn_wake;
	attr->wake_arg = c;
}

enum rn_status rn_device_qp_create(struct rn_device *dev, struct rn_qp_init_attr *attr,
				   struct rn_qp **out, struct rn_qp_alloc *alloc)
{
	struct rn_dev_conn *c;
	enum rn_status rc;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (!attr || !out)
		return RN_ERR_INVALID_MODIFIER;
	rc = rn_device_qp_reserve(dev);
	if (rc)
		return rc;
	rc = rn_device_conn_alloc(dev, &qp_ops, &c);
	if (rc) {
		rn_device_qp_release(dev);
		return rc;
	}
	rn_device_conn_set_counted(c); /* from here conn_free returns the reservation */
	fill_attr(dev, attr, c);
	rc = rn_qp_create(attr, out, alloc);
	if (rc) {
		rn_device_conn_free(c);
		return rc;
	}
	return rn_device_conn_attach(c, *out);
}

enum rn_status rn_device_qp_destroy(struct rn_device *dev, struct rn_qp *qp)
{
	struct rn_dev_conn *c;
	enum rn_status rc;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	c = qp ? rn_device_conn_find(dev, qp, rn_qp_wake_arg(qp)) : NULL;
	if (!c)
		return RN_ERR_INVALID_QP;
	/* checked first so that a refused destroy leaves the QP attached */
	rc = rn_mem_qp_check_unbound(rn_device_mem(dev), rn_qp_id(qp));
	if (rc)
		return rc;
	rn_device_conn_detach(c);
	rc = rn_qp_destroy(qp);
	rn_device_conn_free(c); /* the QP may wake c until rn_qp_destroy returned */
	return rc;
}
