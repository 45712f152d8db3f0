/* struct rn_cqe -> struct ibv_wc (docs/verbs.md "Work completions"). Two tables: opcode and
 * status, plus the few rows where the libibverbs status depends on the operation. */
#include <string.h>

#include "verbs_int.h"

/* RNIC operation -> ibv_wc_opcode. */
static const enum ibv_wc_opcode sv_wc_op[RN_WC_OP_COUNT] = {
	[RN_WC_OP_SEND] = IBV_WC_SEND,
	[RN_WC_OP_SEND_SE] = IBV_WC_SEND,            /* solicited flag is not reported */
	[RN_WC_OP_SEND_INV] = IBV_WC_SEND,
	[RN_WC_OP_SEND_SE_INV] = IBV_WC_SEND,
	[RN_WC_OP_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[RN_WC_OP_RDMA_READ] = IBV_WC_RDMA_READ,
	[RN_WC_OP_RDMA_READ_INV] = IBV_WC_RDMA_READ, /* Read with Invalidate (verbs_ext.h) */
	[RN_WC_OP_BIND_MW] = IBV_WC_BIND_MW,
	[RN_WC_OP_FAST_REG] = SOFTRNIC_WC_FAST_REG,  /* no libibverbs opcode: verbs_ext.h */
	[RN_WC_OP_LOCAL_INV] = IBV_WC_LOCAL_INV,
	[RN_WC_OP_RECV] = IBV_WC_RECV,
	[RN_WC_OP_RECV_IMM] = IBV_WC_RECV,            /* Immediate Data alone: byte_len 0, WITH_IMM */
	[RN_WC_OP_RECV_RDMA_IMM] = IBV_WC_RECV_RDMA_WITH_IMM, /* Write with immediate */
};

/* RNIC completion status (Fig. 36) -> ibv_wc_status; rn_wc.h gives the reason per row. */
static const enum ibv_wc_status sv_wc_st[RN_WC_STATUS_COUNT] = {
	[RN_WC_SUCCESS] = IBV_WC_SUCCESS,
	[RN_WC_FLUSHED] = IBV_WC_WR_FLUSH_ERR,          /* QP in Error: every WQE flushed */
	[RN_WC_INVALID_WQE] = IBV_WC_LOC_QP_OP_ERR,     /* malformed WQE */
	[RN_WC_LOC_QP_CATASTROPHIC] = IBV_WC_FATAL_ERR,
	[RN_WC_REM_TERMINATION] = IBV_WC_REM_OP_ERR,    /* Read/Write: REM_ACCESS_ERR, below */
	[RN_WC_INVALID_STAG] = IBV_WC_LOC_PROT_ERR,     /* lkey does not name a usable MR */
	[RN_WC_BASE_BOUNDS] = IBV_WC_LOC_PROT_ERR,      /* Receive: LOC_LEN_ERR, below */
	[RN_WC_ACCESS_VIOLATION] = IBV_WC_LOC_PROT_ERR, /* Bind: MW_BIND_ERR, below */
	[RN_WC_INVALID_PD] = IBV_WC_LOC_PROT_ERR,
	[RN_WC_WRAP] = IBV_WC_LOC_PROT_ERR,
	[RN_WC_REM_INV_REQ] = IBV_WC_REM_INV_REQ_ERR,   /* Send with Invalidate refused locally */
	[RN_WC_ZERO_ORD] = IBV_WC_LOC_QP_OP_ERR,        /* Read on a QP with ORD 0 */
	[RN_WC_QP_NOT_PRIVILEGED] = IBV_WC_LOC_QP_OP_ERR,
	[RN_WC_STAG_NOT_INVALID] = IBV_WC_LOC_PROT_ERR, /* Bind: MW_BIND_ERR, below */
	[RN_WC_INVALID_PAGE_SIZE] = IBV_WC_LOC_PROT_ERR,
	[RN_WC_INVALID_PBL_ENTRY] = IBV_WC_LOC_PROT_ERR,
	[RN_WC_INVALID_FBO] = IBV_WC_LOC_PROT_ERR,
	[RN_WC_INVALID_LENGTH] = IBV_WC_LOC_LEN_ERR,    /* message longer than allowed */
	[RN_WC_INVALID_ACCESS] = IBV_WC_LOC_PROT_ERR,
	[RN_WC_PBL_TOO_LONG] = IBV_WC_LOC_PROT_ERR,
	[RN_WC_INVALID_VA] = IBV_WC_LOC_PROT_ERR,
	[RN_WC_INVALID_REGION] = IBV_WC_MW_BIND_ERR,    /* Bind / Fast-Register: bad MR */
	[RN_WC_INVALID_WINDOW] = IBV_WC_MW_BIND_ERR,    /* Bind: bad MW */
	[RN_WC_MW_STILL_BOUND] = IBV_WC_LOC_PROT_ERR,   /* Local Invalidate of an MR with MWs */
};

static enum ibv_wc_status sv_wc_status(const struct rn_cqe *e)
{
	if (e->status >= RN_WC_STATUS_COUNT)
		return IBV_WC_GENERAL_ERR;
	switch (e->status) {
	case RN_WC_REM_TERMINATION:   /* the peer refused access to its memory */
		if (e->opcode == RN_WC_OP_RDMA_READ || e->opcode == RN_WC_OP_RDMA_READ_INV ||
		    e->opcode == RN_WC_OP_RDMA_WRITE)
			return IBV_WC_REM_ACCESS_ERR;
		break;
	case RN_WC_BASE_BOUNDS:       /* Receive: the message does not fit the buffers */
		if (e->opcode == RN_WC_OP_RECV || e->opcode == RN_WC_OP_RECV_IMM ||
		    e->opcode == RN_WC_OP_RECV_RDMA_IMM)
			return IBV_WC_LOC_LEN_ERR;
		break;
	case RN_WC_ACCESS_VIOLATION:  /* Bind: window rights the MR cannot give */
	case RN_WC_STAG_NOT_INVALID:
		if (e->opcode == RN_WC_OP_BIND_MW)
			return IBV_WC_MW_BIND_ERR;
		break;
	default:
		break;
	}
	return sv_wc_st[e->status];
}

void sv_wc_from_cqe(const struct rn_cqe *e, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = e->wr_id;
	wc->qp_num = e->qp_id;
	wc->status = sv_wc_status(e);
	/* The opcode is set whenever the RNIC knows it (libibverbs leaves it undefined on
	 * error, so applications may not rely on it then). */
	wc->opcode = e->opcode < RN_WC_OP_COUNT ? sv_wc_op[e->opcode] : IBV_WC_SEND;
	if (wc->status != IBV_WC_SUCCESS) {
		wc->vendor_err = e->status;  /* the RNIC's own status: rn_wc_status_str() */
		return;
	}
	wc->byte_len = e->byte_len;
	wc->src_qp = e->src_qp;
	if (e->flags & RN_CQE_F_INVALIDATED) {
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = e->inv_stag;
	} else if (e->flags & RN_CQE_F_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = e->imm_data;
	}
}
