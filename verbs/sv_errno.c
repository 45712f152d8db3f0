/* rn_status -> errno: the one table every verb of verbs/ goes through (docs/verbs.md §errno).
 * libibverbs returns errno values (EINVAL for bad arguments and handles, ENOMEM for exhausted
 * resources and full queues, EBUSY for objects still in use); the RNIC's richer statuses fold
 * into those. The reasoning for the less obvious rows is in the comments. */
#include <errno.h>

#include "verbs_int.h"

static const int sv_errno_tab[RN_STATUS_COUNT] = {
	[RN_OK] = 0,
	[RN_ERR_NO_RESOURCES] = ENOMEM,          /* allocation or table full, as providers */
	[RN_ERR_INVALID_MODIFIER] = EINVAL,      /* bad attribute or mask */
	[RN_ERR_BLOCK_LIST_UNSUPPORTED] = EOPNOTSUPP,
	[RN_ERR_RNIC_IN_USE] = EBUSY,            /* close with live resources */
	[RN_ERR_INVALID_RNIC] = EINVAL,          /* bad handles are EINVAL everywhere */
	[RN_ERR_INVALID_PD] = EINVAL,
	[RN_ERR_PD_IN_USE] = EBUSY,              /* ibv_dealloc_pd with MRs/QPs/SRQs: EBUSY */
	[RN_ERR_CQ_TOO_BIG] = EINVAL,            /* cqe > max_cqe: EINVAL like the kernel */
	[RN_ERR_SHRINK_FAILED] = EINVAL,         /* resize below the queued entries */
	[RN_ERR_INVALID_CQ] = EINVAL,
	[RN_ERR_CQ_IN_USE] = EBUSY,              /* ibv_destroy_cq with QPs attached */
	[RN_ERR_CQ_EMPTY] = EAGAIN,              /* never surfaced: ibv_poll_cq returns 0 */
	[RN_ERR_INVALID_CEH] = EINVAL,
	[RN_ERR_SQ_WRS_EXCEED] = EINVAL,         /* cap.* over the device limits */
	[RN_ERR_RQ_WRS_EXCEED] = EINVAL,
	[RN_ERR_SQ_SGES_EXCEED] = EINVAL,
	[RN_ERR_RQ_SGES_EXCEED] = EINVAL,
	[RN_ERR_SRQ_LIMIT_RANGE] = EINVAL,       /* srq_limit > max_wr */
	[RN_ERR_INVALID_SRQ] = EINVAL,
	[RN_ERR_SRQ_IN_USE] = EBUSY,             /* ibv_destroy_srq with QPs attached */
	[RN_ERR_ORD_EXCEEDS] = EINVAL,           /* max_rd_atomic > max_qp_init_rd_atom */
	[RN_ERR_IRD_EXCEEDS] = EINVAL,           /* max_dest_rd_atomic > max_qp_rd_atom */
	[RN_ERR_INVALID_QP] = EINVAL,
	[RN_ERR_QP_ATTR_FIXED] = EOPNOTSUPP,     /* a Fig. 5 change this device cannot make */
	[RN_ERR_INVALID_STATE_CHANGE] = EINVAL,  /* transition not in the table */
	[RN_ERR_INVALID_LLP_HANDLE] = EINVAL,    /* RTS without a connection (use rdma_cm) */
	[RN_ERR_STILL_FLUSHING] = EBUSY,         /* ERR -> RESET before the flush finished */
	[RN_ERR_RQ_LIMIT_RANGE] = EINVAL,
	[RN_ERR_MW_BOUND_TO_QP] = EBUSY,         /* ibv_destroy_qp with type-2 windows bound */
	[RN_ERR_INVALID_VA] = EINVAL,
	[RN_ERR_INVALID_LENGTH] = EINVAL,
	[RN_ERR_INVALID_ACCESS] = EINVAL,        /* e.g. REMOTE_WRITE without LOCAL_WRITE */
	[RN_ERR_INVALID_PBL_ENTRY] = EINVAL,
	[RN_ERR_INVALID_PB_SIZE] = EINVAL,
	[RN_ERR_INVALID_STAG] = EINVAL,
	[RN_ERR_INVALID_FBO] = EINVAL,
	[RN_ERR_MW_BOUND_TO_MR] = EBUSY,         /* ibv_dereg_mr with windows bound: EBUSY */
	[RN_ERR_TOO_MANY_WRS] = ENOMEM,          /* queue full: ENOMEM, as providers do */
	[RN_ERR_INVALID_OPCODE] = EINVAL,
	[RN_ERR_INVALID_QP_STATE] = EINVAL,      /* post in Terminate / Error */
	[RN_ERR_INVALID_SGL_FORMAT] = EINVAL,
	[RN_ERR_INVALID_SGL_LENGTH] = EINVAL,    /* num_sge over the QP's max */
	[RN_ERR_RQ_HAS_SRQ] = EINVAL,            /* ibv_post_recv on a QP with an SRQ */
	[RN_ERR_INVALID_NOTIFY_TYPE] = EINVAL,
	[RN_ERR_BAD_ADDRESS] = EFAULT,           /* reg_mr of unmapped memory: as the kernel */
};

int sv_errno(enum rn_status s)
{
	if ((unsigned)s >= RN_STATUS_COUNT)
		return EIO;
	return sv_errno_tab[s];
}
