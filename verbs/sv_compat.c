/* The libibverbs calls that have no meaning on an iWARP RNIC, or need a kernel uverbs device
 * we do not have, with the errors libibverbs gives when a device lacks them
 * (docs/dropin.md "Gaps"):
 *   - address handles and multicast: UD / IB only; iWARP is reliable connected over TCP;
 *   - ECE (enhanced connection establishment): an IB CM / RoCE option, not in MPA;
 *   - import of a context, PD, MR or DM: shares kernel objects through a uverbs fd;
 *   - ibv_qp_to_qp_ex: our QPs are never created with the new send API (send_ops_flags);
 *   - ibv_dontfork_range / ibv_dofork_range: nothing is pinned for DMA (ibv_fork_init). */
#include <errno.h>
#include <stddef.h>

#include "verbs_int.h"
#include "sv_compat.h"

/* A valid PD makes the request well formed; the feature is missing, not the argument. */
static int sv_unsupported_on(bool valid)
{
	return valid ? EOPNOTSUPP : EINVAL;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	errno = sv_unsupported_on(sv_pd(pd) && attr);
	return NULL;
}

/* No address handle can exist, so any handle passed here is not one of ours. */
int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return EINVAL;
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	(void)port_num, (void)grh;
	errno = sv_unsupported_on(sv_ctx(context) && wc && ah_attr);
	return -1;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	(void)grh, (void)port_num;
	errno = sv_unsupported_on(sv_pd(pd) && wc);
	return NULL;
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				uint8_t eth_mac[6], uint16_t *vid)
{
	(void)eth_mac, (void)vid;
	return sv_unsupported_on(sv_ctx(context) && attr);
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)lid;
	return sv_unsupported_on(sv_qp(qp) && gid);
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)lid;
	return sv_unsupported_on(sv_qp(qp) && gid);
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return sv_unsupported_on(sv_qp(qp) && ece);
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return sv_unsupported_on(sv_qp(qp) && ece);
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	errno = sv_unsupported_on(sv_qp(qp) != NULL);
	return NULL;
}

/* ---- import: objects of another process's uverbs context ---------------------------------- */
struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)pd_handle;
	errno = sv_unsupported_on(sv_ctx(context) != NULL);
	return NULL;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)mr_handle;
	errno = sv_unsupported_on(sv_pd(pd) != NULL);
	return NULL;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)dm_handle;
	errno = sv_unsupported_on(sv_ctx(context) != NULL);
	return NULL;
}

/* Nothing can have been imported, so there is nothing to release. */
void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/* ---- fork ------------------------------------------------------------------------------------ */
/* libibverbs marks registered ranges MADV_DONTFORK only after ibv_fork_init on kernels that
 * need it; ibv_is_fork_initialized says IBV_FORK_UNNEEDED here, so, as there, nothing to do. */
int ibv_dontfork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}
