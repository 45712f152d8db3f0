/* The IBVERBS_1.0 twins of the calls whose structures changed in libibverbs 1.1 (sv_compat10.h;
 * docs/dropin.md). A program linked against libibverbs 1.0 binds NAME@IBVERBS_1.0:
 * these wrap each current object in its 1.0 layout, call the current function, and point the
 * current object's user context (cq_context, qp_context, srq_context) at the wrapper so events
 * find their way back (sv_compat10_wr.c). The wrapper keeps the application's own context. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sv_compat10.h"
#include "sv_compat10_int.h"

/* Allocation failure of a wrapper: ENOMEM, like every create. */
static void *sv10_alloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		errno = ENOMEM;
	return p;
}

/* ---- devices and contexts ------------------------------------------------------------- */
/* The 1.0 list: wrappers, NULL-terminated; the slot before the first holds the current list
 * so that free can release both. */
struct ibv_device_1_0 **sv10_get_device_list(int *num);
struct ibv_device_1_0 **sv10_get_device_list(int *num)
{
	int n = 0;
	struct ibv_device **real = ibv_get_device_list(&n);
	struct ibv_device_1_0 **l;

	if (!real)
		return NULL;
	l = sv10_alloc((size_t)(n + 2) * sizeof(*l));
	if (!l) {
		ibv_free_device_list(real);
		return NULL;
	}
	l[0] = (struct ibv_device_1_0 *)(void *)real;
	for (int i = 0; i < n; i++) {
		l[i + 1] = sv10_alloc(sizeof(**l));
		if (!l[i + 1]) {
			for (int j = 1; j <= i; j++)
				free(l[j]);
			free(l);
			ibv_free_device_list(real);
			return NULL;
		}
		l[i + 1]->real_device = real[i];
	}
	if (num)
		*num = n;
	return l + 1;
}
SV10_SYMVER(sv10_get_device_list, ibv_get_device_list);

void sv10_free_device_list(struct ibv_device_1_0 **list);
void sv10_free_device_list(struct ibv_device_1_0 **list)
{
	if (!list)
		return;
	for (struct ibv_device_1_0 **d = list; *d; d++)
		free(*d);
	ibv_free_device_list((struct ibv_device **)(void *)list[-1]);
	free(list - 1);
}
SV10_SYMVER(sv10_free_device_list, ibv_free_device_list);

const char *sv10_get_device_name(struct ibv_device_1_0 *device);
const char *sv10_get_device_name(struct ibv_device_1_0 *device)
{
	return device ? ibv_get_device_name(device->real_device) : NULL;
}
SV10_SYMVER(sv10_get_device_name, ibv_get_device_name);

__be64 sv10_get_device_guid(struct ibv_device_1_0 *device);
__be64 sv10_get_device_guid(struct ibv_device_1_0 *device)
{
	return device ? ibv_get_device_guid(device->real_device) : 0;
}
SV10_SYMVER(sv10_get_device_guid, ibv_get_device_guid);

struct ibv_context_1_0 *sv10_open_device(struct ibv_device_1_0 *device);
struct ibv_context_1_0 *sv10_open_device(struct ibv_device_1_0 *device)
{
	struct ibv_context_1_0 *c;

	if (!device) {
		errno = ENODEV;
		return NULL;
	}
	c = sv10_alloc(sizeof(*c));
	if (!c)
		return NULL;
	c->real_context = ibv_open_device(device->real_device);
	if (!c->real_context) {
		free(c);
		return NULL;
	}
	c->device = device;
	c->cmd_fd = c->real_context->cmd_fd;
	c->async_fd = c->real_context->async_fd;
	c->num_comp_vectors = c->real_context->num_comp_vectors;
	c->ops.poll_cq = sv10_poll_cq;
	c->ops.req_notify_cq = sv10_req_notify_cq;
	c->ops.post_send = sv10_post_send;
	c->ops.post_recv = sv10_post_recv;
	c->ops.post_srq_recv = sv10_post_srq_recv;
	return c;
}
SV10_SYMVER(sv10_open_device, ibv_open_device);

int sv10_close_device(struct ibv_context_1_0 *context);
int sv10_close_device(struct ibv_context_1_0 *context)
{
	int rc = context ? ibv_close_device(context->real_context) : EINVAL;

	if (!rc)
		free(context);
	return rc;
}
SV10_SYMVER(sv10_close_device, ibv_close_device);

int sv10_query_device(struct ibv_context_1_0 *context, struct ibv_device_attr *attr);
int sv10_query_device(struct ibv_context_1_0 *context, struct ibv_device_attr *attr)
{
	return ibv_query_device(context->real_context, attr);
}
SV10_SYMVER(sv10_query_device, ibv_query_device);

int sv10_query_port(struct ibv_context_1_0 *context, uint8_t port, struct ibv_port_attr *attr);
int sv10_query_port(struct ibv_context_1_0 *context, uint8_t port, struct ibv_port_attr *attr)
{
	return ibv_query_port(context->real_context, port, attr);
}
SV10_SYMVER(sv10_query_port, ibv_query_port);

int sv10_query_gid(struct ibv_context_1_0 *context, uint8_t port, int index, union ibv_gid *gid);
int sv10_query_gid(struct ibv_context_1_0 *context, uint8_t port, int index, union ibv_gid *gid)
{
	return ibv_query_gid(context->real_context, port, index, gid);
}
SV10_SYMVER(sv10_query_gid, ibv_query_gid);

int sv10_query_pkey(struct ibv_context_1_0 *context, uint8_t port, int index, __be16 *pkey);
int sv10_query_pkey(struct ibv_context_1_0 *context, uint8_t port, int index, __be16 *pkey)
{
	return ibv_query_pkey(context->real_context, port, index, pkey);
}
SV10_SYMVER(sv10_query_pkey, ibv_query_pkey);

/* ---- PDs, MRs, AHs -------------------------------------------------------------------- */
struct ibv_pd_1_0 *sv10_alloc_pd(struct ibv_context_1_0 *context);
struct ibv_pd_1_0 *sv10_alloc_pd(struct ibv_context_1_0 *context)
{
	struct ibv_pd_1_0 *pd = sv10_alloc(sizeof(*pd));

	if (!pd)
		return NULL;
	pd->real_pd = ibv_alloc_pd(context->real_context);
	if (!pd->real_pd) {
		free(pd);
		return NULL;
	}
	pd->context = context;
	pd->handle = pd->real_pd->handle;
	return pd;
}
SV10_SYMVER(sv10_alloc_pd, ibv_alloc_pd);

int sv10_dealloc_pd(struct ibv_pd_1_0 *pd);
int sv10_dealloc_pd(struct ibv_pd_1_0 *pd)
{
	int rc = ibv_dealloc_pd(pd->real_pd);

	if (!rc)
		free(pd);
	return rc;
}
SV10_SYMVER(sv10_dealloc_pd, ibv_dealloc_pd);

struct ibv_mr_1_0 *sv10_reg_mr(struct ibv_pd_1_0 *pd, void *addr, size_t length, int access);
struct ibv_mr_1_0 *sv10_reg_mr(struct ibv_pd_1_0 *pd, void *addr, size_t length, int access)
{
	struct ibv_mr_1_0 *mr = sv10_alloc(sizeof(*mr));

	if (!mr)
		return NULL;
	mr->real_mr = ibv_reg_mr(pd->real_pd, addr, length, access);
	if (!mr->real_mr) {
		free(mr);
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->handle = mr->real_mr->handle;
	mr->lkey = mr->real_mr->lkey;
	mr->rkey = mr->real_mr->rkey;
	return mr;
}
SV10_SYMVER(sv10_reg_mr, ibv_reg_mr);

int sv10_dereg_mr(struct ibv_mr_1_0 *mr);
int sv10_dereg_mr(struct ibv_mr_1_0 *mr)
{
	int rc = ibv_dereg_mr(mr->real_mr);

	if (!rc)
		free(mr);
	return rc;
}
SV10_SYMVER(sv10_dereg_mr, ibv_dereg_mr);

struct ibv_ah_1_0 *sv10_create_ah(struct ibv_pd_1_0 *pd, struct ibv_ah_attr *attr);
struct ibv_ah_1_0 *sv10_create_ah(struct ibv_pd_1_0 *pd, struct ibv_ah_attr *attr)
{
	struct ibv_ah_1_0 *ah = sv10_alloc(sizeof(*ah));

	if (!ah)
		return NULL;
	ah->real_ah = ibv_create_ah(pd->real_pd, attr);
	if (!ah->real_ah) {
		int e = errno;
		free(ah);
		errno = e;
		return NULL;
	}
	ah->context = pd->context;
	ah->pd = pd;
	ah->handle = ah->real_ah->handle;
	return ah;
}
SV10_SYMVER(sv10_create_ah, ibv_create_ah);

int sv10_destroy_ah(struct ibv_ah_1_0 *ah);
int sv10_destroy_ah(struct ibv_ah_1_0 *ah)
{
	int rc = ibv_destroy_ah(ah->real_ah);

	if (!rc)
		free(ah);
	return rc;
}
SV10_SYMVER(sv10_destroy_ah, ibv_destroy_ah);
