/* Work completions: the completion status codes of RDMA Verbs 1.0 §9.5.2 Fig. 36 and the CQE
 * every rnic/ queue produces.
 *
 * Header only, no dependencies besides <stdint.h>: rn_cq, rn_mem, rn_qp_* and verbs/ all use it.
 * The first six names of Fig. 36 are illegible in the published text; they are reconstructed
 * from the rest of the spec (Success, Flushed, Invalid WQE, Local QP Catastrophic, Remote
 * Termination, Invalid STag). Each status notes the libibverbs enum ibv_wc_status verbs/ maps
 * it to.
 * Rule of Fig. 36 / §9.3.2.1: when status != RN_WC_SUCCESS only wr_id (and qp_id) are valid. */
#ifndef RN_WC_H
#define RN_WC_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdint.h>

enum rn_wc_status {
	RN_WC_SUCCESS = 0,            /* IBV_WC_SUCCESS */
	RN_WC_FLUSHED,                /* WR flushed (QP in Error)              -> IBV_WC_WR_FLUSH_ERR */
	RN_WC_INVALID_WQE,            /* Invalid WQE format                    -> IBV_WC_LOC_QP_OP_ERR */
	RN_WC_LOC_QP_CATASTROPHIC,    /* Local QP catastrophic error           -> IBV_WC_FATAL_ERR */
	RN_WC_REM_TERMINATION,        /* peer sent a Terminate for this WR     -> IBV_WC_REM_ACCESS_ERR
	                               * (Read/Write refused remotely) or IBV_WC_REM_OP_ERR */
	RN_WC_INVALID_STAG,           /* local SGE / WR STag invalid           -> IBV_WC_LOC_PROT_ERR */
	RN_WC_BASE_BOUNDS,            /* address or length outside the MR/MW; for Receive: message
	                               * longer than the buffer                -> IBV_WC_LOC_PROT_ERR
	                               * (IBV_WC_LOC_LEN_ERR for the Receive case) */
	RN_WC_ACCESS_VIOLATION,       /* SGE's MR lacks the right; Bind: MW rights incompatible with
	                               * the MR                                -> IBV_WC_LOC_PROT_ERR
	                               * (IBV_WC_MW_BIND_ERR for Bind) */
	RN_WC_INVALID_PD,             /* MR PD != QP PD, or MW bound to another QP -> IBV_WC_LOC_PROT_ERR */
	RN_WC_WRAP,                   /* TO + length wraps 2^64                -> IBV_WC_LOC_PROT_ERR */
	RN_WC_REM_INV_REQ,            /* incoming Send with Invalidate could not invalidate its STag
	                               * ("STag to Invalidate had Invalid PD or Access Rights"; we use
	                               * it for every remote-invalidate failure, the Terminate code
	                               * tells which)                          -> IBV_WC_REM_INV_REQ_ERR */
	RN_WC_ZERO_ORD,               /* RDMA Read with ORD = 0                -> IBV_WC_LOC_QP_OP_ERR */
	RN_WC_QP_NOT_PRIVILEGED,      /* Fast-Register / STag 0 on a QP without the privilege
	                               *                                       -> IBV_WC_LOC_QP_OP_ERR */
	RN_WC_STAG_NOT_INVALID,       /* Fast-Register or Bind of a Valid STag -> IBV_WC_LOC_PROT_ERR
	                               * (IBV_WC_MW_BIND_ERR for Bind) */
	RN_WC_INVALID_PAGE_SIZE,      /* Fast-Register: page size unsupported  -> IBV_WC_LOC_PROT_ERR */
	RN_WC_INVALID_PBL_ENTRY,      /* Fast-Register: page not aligned       -> IBV_WC_LOC_PROT_ERR */
	RN_WC_INVALID_FBO,            /* Fast-Register: FBO >= page size       -> IBV_WC_LOC_PROT_ERR */
	RN_WC_INVALID_LENGTH,         /* Fast-Register: length beyond the list; Send/Write/Read: sum
	                               * of SGEs too large                     -> IBV_WC_LOC_LEN_ERR */
	RN_WC_INVALID_ACCESS,         /* Fast-Register: bad rights combination, or remote rights on an
	                               * STag allocated without the Remote Access Flag
	                               *                                       -> IBV_WC_LOC_PROT_ERR */
	RN_WC_PBL_TOO_LONG,           /* Fast-Register: more pages than allocated -> IBV_WC_LOC_PROT_ERR */
	RN_WC_INVALID_VA,             /* Fast-Register: VA mod page size != FBO -> IBV_WC_LOC_PROT_ERR */
	RN_WC_INVALID_REGION,         /* Bind / Fast-Register: the MR STag is not a usable MR
	                               *                                       -> IBV_WC_MW_BIND_ERR */
	RN_WC_INVALID_WINDOW,         /* Bind: the MW STag is not a usable MW  -> IBV_WC_MW_BIND_ERR */
	RN_WC_MW_STILL_BOUND,         /* Invalidate Local STag of an MR with bound MWs (Fig. 23
	                               * "MR had bound MW"; no Fig. 36 row)    -> IBV_WC_LOC_PROT_ERR */
	RN_WC_STATUS_COUNT
};

/* Which work request a completion belongs to (Poll CQ §9.3.2.1 operation types). */
enum rn_wc_opcode {
	RN_WC_OP_SEND = 0,
	RN_WC_OP_SEND_SE,
	RN_WC_OP_SEND_INV,
	RN_WC_OP_SEND_SE_INV,
	RN_WC_OP_RDMA_WRITE,
	RN_WC_OP_RDMA_READ,
	RN_WC_OP_RDMA_READ_INV,       /* RDMA Read with Invalidate Local STag */
	RN_WC_OP_BIND_MW,
	RN_WC_OP_FAST_REG,
	RN_WC_OP_LOCAL_INV,
	RN_WC_OP_RECV,
	RN_WC_OP_RECV_IMM,            /* RFC 7306 Immediate Data (kind "plain", docs/rdmap.md)
	                               * received: it consumed one receive WQE (RQ or S-RQ),
	                               * byte_len 0, the value in imm_data -> IBV_WC_RECV +
	                               * IBV_WC_WITH_IMM */
	RN_WC_OP_RECV_RDMA_IMM,       /* Immediate Data kind "follows an RDMA Write" (Write with
	                               * immediate): likewise one WQE, byte_len 0
	                               *                       -> IBV_WC_RECV_RDMA_WITH_IMM */
	RN_WC_OP_COUNT
};

/* Flags in struct rn_cqe.flags. */
enum rn_cqe_flag {
	RN_CQE_F_INVALIDATED = 1u << 0, /* Receive of Send with Invalidate: inv_stag was invalidated */
	RN_CQE_F_IMM = 1u << 1,         /* imm_data is valid (RFC 7306 immediate data) */
	RN_CQE_F_SOLICITED = 1u << 2,   /* Receive of a Send with Solicited Event */
};

struct rn_sq_retire;   /* rn_cq.h */

/* One completion as the CQ stores it. 48 bytes; filled by the QP, copied out by poll. */
struct rn_cqe {
	uint64_t wr_id;       /* always valid */
	uint32_t qp_id;       /* always valid */
	uint8_t status;       /* enum rn_wc_status */
	uint8_t opcode;       /* enum rn_wc_opcode; valid on success */
	uint16_t flags;       /* enum rn_cqe_flag; valid on success */
	uint32_t byte_len;    /* bytes received (Receive); 0 otherwise */
	uint32_t inv_stag;    /* with RN_CQE_F_INVALIDATED */
	uint32_t imm_data;    /* with RN_CQE_F_IMM; wire byte order as received */
	uint32_t src_qp;      /* the peer's QP number when known, else 0 */
	/* rnic-internal, SQ completions only (NULL sq for Receives): polling this CQE retires
	 * SQ sequence numbers up to sq_seq in *sq (rn_cq_poll; SQ space is returned at poll
	 * time, RDMA Verbs §8.2.4). Consumers ignore both; the QP's destroy clears sq. */
	uint32_t sq_seq;
	struct rn_sq_retire *sq;
};

static inline const char *rn_wc_status_str(enum rn_wc_status s)
{
	static const char *const names[RN_WC_STATUS_COUNT] = {
		[RN_WC_SUCCESS] = "Success",
		[RN_WC_FLUSHED] = "Flushed",
		[RN_WC_INVALID_WQE] = "Invalid WQE format",
		[RN_WC_LOC_QP_CATASTROPHIC] = "Local QP catastrophic error",
		[RN_WC_REM_TERMINATION] = "Remote termination error",
		[RN_WC_INVALID_STAG] = "Invalid STag",
		[RN_WC_BASE_BOUNDS] = "Base and bounds violation",
		[RN_WC_ACCESS_VIOLATION] = "Access violation",
		[RN_WC_INVALID_PD] = "Invalid PD ID",
		[RN_WC_WRAP] = "Wrap error",
		[RN_WC_REM_INV_REQ] = "STag to invalidate had invalid PD or access rights",
		[RN_WC_ZERO_ORD] = "Zero RDMA Read resources",
		[RN_WC_QP_NOT_PRIVILEGED] = "QP not in privileged mode",
		[RN_WC_STAG_NOT_INVALID] = "STag not in Invalid state",
		[RN_WC_INVALID_PAGE_SIZE] = "Invalid page size",
		[RN_WC_INVALID_PBL_ENTRY] = "Invalid physical buffer list entry",
		[RN_WC_INVALID_FBO] = "Invalid FBO",
		[RN_WC_INVALID_LENGTH] = "Invalid length",
		[RN_WC_INVALID_ACCESS] = "Invalid access rights specified",
		[RN_WC_PBL_TOO_LONG] = "Physical buffer list too long",
		[RN_WC_INVALID_VA] = "Invalid virtual address",
		[RN_WC_INVALID_REGION] = "Invalid region",
		[RN_WC_INVALID_WINDOW] = "Invalid window",
		[RN_WC_MW_STILL_BOUND] = "MR had bound MW",
	};
	if ((unsigned)s >= RN_WC_STATUS_COUNT || !names[s])
		return "unknown completion status";
	return names[s];
}

#endif
