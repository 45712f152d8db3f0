/* The softrnic device as librdmacm sees it: one ibv_context opened through the verbs layer
 * (the first device ibv_get_device_list reports), its default PD and its IRD / ORD limits.
 * Opened on first use and kept for the life of the process, as librdmacm keeps its devices. */
#include "rcm_int.h"

#include <string.h>

static struct {
	pthread_mutex_t mtx; /* never held while taking rcm_lock */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t ird_max, ord_max;
} dev = { .mtx = PTHREAD_MUTEX_INITIALIZER };

static uint8_t clamp_depth(int v)
{
	if (v <= 0)
		return MPA_DEFAULT_IRD_ORD;
	return v > 0xFE ? 0xFE : (uint8_t)v; /* 0xFF means "device maximum" in conn_param */
}

static void open_first(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_device_attr attr;

	if (list == NULL)
		return;
	if (n > 0)
		dev.ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	memset(&attr, 0, sizeof(attr));
	if (dev.ctx != NULL && ibv_query_device(dev.ctx, &attr) != 0)
		memset(&attr, 0, sizeof(attr));
	dev.ird_max = clamp_depth(attr.max_qp_rd_atom);
	dev.ord_max = clamp_depth(attr.max_qp_init_rd_atom);
}

struct ibv_context *rcm_dev_context(void)
{
	pthread_mutex_lock(&dev.mtx);
	if (dev.ctx == NULL)
		open_first();
	struct ibv_context *c = dev.ctx;
	pthread_mutex_unlock(&dev.mtx);
	return c;
}

struct ibv_pd *rcm_dev_pd(struct ibv_context *ctx)
{
	if (ctx == NULL || ctx != rcm_dev_context())
		return NULL;
	pthread_mutex_lock(&dev.mtx);
	if (dev.pd == NULL)
		dev.pd = ibv_alloc_pd(ctx);
	struct ibv_pd *pd = dev.pd;
	pthread_mutex_unlock(&dev.mtx);
	return pd;
}

void rcm_dev_attach(struct rdma_cm_id *id)
{
	id->verbs = rcm_dev_context();
	if (id->pd == NULL)
		id->pd = rcm_dev_pd(id->verbs);
}

void rcm_dev_max_rd(struct ibv_context *ctx, uint8_t *ird_max, uint8_t *ord_max)
{
	if (ctx == NULL || ctx != rcm_dev_context()) {
		*ird_max = *ord_max = MPA_DEFAULT_IRD_ORD;
		return;
	}
	pthread_mutex_lock(&dev.mtx);
	*ird_max = dev.ird_max;
	*ord_max = dev.ord_max;
	pthread_mutex_unlock(&dev.mtx);
}
