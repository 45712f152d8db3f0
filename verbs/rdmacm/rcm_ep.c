/* The endpoint helpers of rdma_server / rdma_client style programs: rdma_getaddrinfo,
 * rdma_freeaddrinfo, rdma_create_ep, rdma_destroy_ep; and the calls of rdma_cma.h that have
 * no iWARP meaning (multicast, ECE, notify). */
#include "rcm_int.h"

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

static struct sockaddr *dup_addr(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *c = malloc(len);

	if (c != NULL)
		memcpy(c, sa, len);
	return c;
}

RCM_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}

/* Copy len octets of sa into *dst / *dst_len (0, or -1 when out of memory). */
static int copy_addr(struct sockaddr **dst, socklen_t *dst_len, const struct sockaddr *sa,
		     socklen_t len)
{
	*dst = dup_addr(sa, len);
	if (*dst == NULL)
		return -1;
	*dst_len = len;
	return 0;
}

/* The address side of one result, as librdmacm's addrinfo.c forms it: the node's address
 * is the source when passive (AI_PASSIVE asked), else the destination; the flags
 * keep RAI_PASSIVE only; QP type and port space are the hints' when given. */
static int fill(struct rdma_addrinfo *r, const struct addrinfo *ai,
		const struct rdma_addrinfo *h)
{
	r->ai_flags = h && (h->ai_flags & RAI_PASSIVE) ? RAI_PASSIVE : 0;
	r->ai_family = ai->ai_family;
	r->ai_qp_type = h && h->ai_qp_type ? h->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = h && h->ai_port_space ? h->ai_port_space : RDMA_PS_TCP;
	if (r->ai_flags & RAI_PASSIVE)
		return copy_addr(&r->ai_src_addr, &r->ai_src_len, ai->ai_addr, ai->ai_addrlen);
	return copy_addr(&r->ai_dst_addr, &r->ai_dst_len, ai->ai_addr, ai->ai_addrlen);
}

/* No node and no service: librdmacm takes the result from the hints (libfabric's verbs
 * provider passes its addresses this way). */
static int fill_from_hints(struct rdma_addrinfo *r, const struct rdma_addrinfo *h)
{
	r->ai_flags = h->ai_flags;
	r->ai_family = h->ai_family;
	r->ai_qp_type = h->ai_qp_type;
	r->ai_port_space = h->ai_port_space;
	if (h->ai_dst_len > 0 && h->ai_dst_addr != NULL)
		return copy_addr(&r->ai_dst_addr, &r->ai_dst_len, h->ai_dst_addr, h->ai_dst_len);
	return 0;
}

/* Returns 0, a getaddrinfo EAI_* code when the name does not resolve (as librdmacm does, for
 * gai_strerror), or -1 with errno. Any port space and QP type in the hints are taken and
 * passed on, as librdmacm does: what the device cannot do fails where it would on Linux siw,
 * at QP creation (rdma_xclient -c x: EOPNOTSUPP from rdma_create_ep), not here. */
RCM_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct addrinfo gh = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int rc = 0;

	if (res == NULL || (node == NULL && service == NULL && hints == NULL))
		return rcm_err(EINVAL);
	if (hints != NULL) {
		gh.ai_family = hints->ai_family;
		gh.ai_flags = ((hints->ai_flags & RAI_PASSIVE) ? AI_PASSIVE : 0) |
			      ((hints->ai_flags & RAI_NUMERICHOST) ? AI_NUMERICHOST : 0);
	}
	if (node != NULL || service != NULL) {
		rc = getaddrinfo(node, service, &gh, &ai);
		if (rc != 0)
			return rc;
	}
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	rc = r == NULL ? -1 : ai != NULL ? fill(r, ai, hints) : fill_from_hints(r, hints);
	if (ai != NULL)
		freeaddrinfo(ai);
	/* a source the node did not give comes from the hints (passive or active) */
	if (rc == 0 && r->ai_src_len == 0 && hints != NULL && hints->ai_src_len > 0 &&
	    hints->ai_src_addr != NULL)
		rc = copy_addr(&r->ai_src_addr, &r->ai_src_len, hints->ai_src_addr,
			       hints->ai_src_len);
	if (rc != 0) {
		rdma_freeaddrinfo(r);
		return rcm_err(ENOMEM);
	}
	*res = r;
	return 0;
}

static int ep_passive(struct rdma_cm_id *id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		      struct ibv_qp_init_attr *attr)
{
	struct rcm_id *r = rcm_id_of(id);

	if (rdma_bind_addr(id, res->ai_src_addr) != 0)
		return -1;
	if (pd != NULL) /* else the device's default PD when bound to a device (librdmacm) */
		id->pd = pd; /* children get their QP on this PD (rdma_get_request) */
	if (attr != NULL) {
		r->ep_attr = malloc(sizeof(*attr));
		if (r->ep_attr == NULL)
			return rcm_err(ENOMEM);
		*r->ep_attr = *attr;
		r->ep_attr->qp_type = res->ai_qp_type; /* librdmacm: the QP type is res's */
	}
	return 0;
}

static int ep_active(struct rdma_cm_id *id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		     struct ibv_qp_init_attr *attr)
{
	if (rdma_resolve_addr(id, res->ai_src_addr, res->ai_dst_addr, 2000) != 0)
		return -1;
	if (rdma_resolve_route(id, 2000) != 0)
		return -1;
	if (attr == NULL)
		return 0;
	attr->qp_type = res->ai_qp_type; /* as librdmacm: callers leave it 0 (rdma_client) */
	return rdma_create_qp(id, pd, attr);
}

RCM_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
			      struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;

	if (id == NULL || res == NULL)
		return rcm_err(EINVAL);
	/* TCP whatever res's port space (rdma_xserver -c x asks RDMA_PS_IB): the kernel takes
	 * any, and what an iWARP device lacks fails at QP creation, here as on siw. */
	if (rdma_create_id(NULL, &cm_id, NULL, RDMA_PS_TCP) != 0)
		return -1;
	int rc = (res->ai_flags & RAI_PASSIVE) ? ep_passive(cm_id, res, pd, qp_init_attr)
					       : ep_active(cm_id, res, pd, qp_init_attr);
	if (rc != 0) {
		int e = errno;
		rdma_destroy_ep(cm_id);
		return rcm_err(e);
	}
	*id = cm_id;
	return 0;
}

RCM_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	if (id->srq != NULL)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

/* ---- no iWARP meaning ------------------------------------------------------------------ */

RCM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id;
	(void)event;
	return 0; /* IB CM: communication established on first receive; iWARP has nothing to do */
}

RCM_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id;
	(void)addr;
	(void)context;
	return rcm_err(ENOSYS); /* no multicast on connected iWARP */
}

RCM_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				      struct rdma_cm_join_mc_attr_ex *mc_join_attr,
				      void *context)
{
	(void)id;
	(void)mc_join_attr;
	(void)context;
	return rcm_err(ENOSYS);
}

RCM_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id;
	(void)addr;
	return rcm_err(ENOSYS);
}

RCM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id;
	(void)ece;
	return rcm_err(EOPNOTSUPP); /* Enhanced Connection Establishment is IB CM only */
}

RCM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id;
	(void)ece;
	return rcm_err(EOPNOTSUPP);
}
