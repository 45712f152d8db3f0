/* Immediate status codes of the RNIC verbs (RDMA Verbs 1.0 §9.5.1, the union of Figs. 28-35).
 * Every rnic/ verb returns one of these; verbs/ maps them to
 * the errno values libibverbs callers expect. RN_OK is zero so `if (rc)` reads naturally. */
#ifndef RN_STATUS_H
#define RN_STATUS_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

enum rn_status {
	RN_OK = 0,
	RN_ERR_NO_RESOURCES,          /* Insufficient resources */
	RN_ERR_INVALID_MODIFIER,      /* Invalid (Input) Modifier */
	RN_ERR_BLOCK_LIST_UNSUPPORTED,/* Block List mode not supported */
	RN_ERR_RNIC_IN_USE,           /* RNIC in use */
	RN_ERR_INVALID_RNIC,          /* Invalid RNIC handle */
	RN_ERR_INVALID_PD,            /* Invalid PD ID / Invalid Protection Domain */
	RN_ERR_PD_IN_USE,             /* Protection Domain is in use */
	RN_ERR_CQ_TOO_BIG,            /* Number of CQ entries requested exceeds RNIC capability */
	RN_ERR_SHRINK_FAILED,         /* Attempt to shrink failed: too many elements present */
	RN_ERR_INVALID_CQ,            /* Invalid CQ handle */
	RN_ERR_CQ_IN_USE,             /* CQ In Use */
	RN_ERR_CQ_EMPTY,              /* CQ empty (Poll CQ) */
	RN_ERR_INVALID_CEH,           /* Invalid Completion Event Handler Identifier */
	RN_ERR_SQ_WRS_EXCEED,         /* Max SQ WRs exceeds RNIC capability */
	RN_ERR_RQ_WRS_EXCEED,         /* Max RQ / S-RQ WRs exceeds RNIC capability */
	RN_ERR_SQ_SGES_EXCEED,        /* Max SGEs per SQ WR exceeds RNIC capability */
	RN_ERR_RQ_SGES_EXCEED,        /* Max SGEs per RQ WR exceeds RNIC capability */
	RN_ERR_SRQ_LIMIT_RANGE,       /* S-RQ Limit out of range */
	RN_ERR_INVALID_SRQ,           /* Invalid S-RQ handle */
	RN_ERR_SRQ_IN_USE,            /* QPs still associated with the S-RQ */
	RN_ERR_ORD_EXCEEDS,           /* ORD exceeds RNIC capability */
	RN_ERR_IRD_EXCEEDS,           /* IRD exceeds RNIC capability */
	RN_ERR_INVALID_QP,            /* Invalid QP handle / QP ID */
	RN_ERR_QP_ATTR_FIXED,         /* Cannot change QP attribute */
	RN_ERR_INVALID_STATE_CHANGE,  /* Invalid QP state change requested */
	RN_ERR_INVALID_LLP_HANDLE,    /* Invalid LLP Stream Handle */
	RN_ERR_STILL_FLUSHING,        /* RI still flushing WQEs */
	RN_ERR_RQ_LIMIT_RANGE,        /* QP RQ Limit Out of Range */
	RN_ERR_MW_BOUND_TO_QP,        /* Memory Windows still Bound to QP */
	RN_ERR_INVALID_VA,            /* Invalid Virtual Address */
	RN_ERR_INVALID_LENGTH,        /* Invalid Length */
	RN_ERR_INVALID_ACCESS,        /* Invalid Access Rights requested */
	RN_ERR_INVALID_PBL_ENTRY,     /* Invalid Physical Buffer List entry */
	RN_ERR_INVALID_PB_SIZE,       /* Invalid Physical Buffer size */
	RN_ERR_INVALID_STAG,          /* Invalid STag Index */
	RN_ERR_INVALID_FBO,           /* Invalid First Byte Offset */
	RN_ERR_MW_BOUND_TO_MR,        /* One or more MWs still Bound to the Region */
	RN_ERR_TOO_MANY_WRS,          /* Too many Work Requests posted */
	RN_ERR_INVALID_OPCODE,        /* Invalid Operation type */
	RN_ERR_INVALID_QP_STATE,      /* Invalid QP state (for posting) */
	RN_ERR_INVALID_SGL_FORMAT,    /* Invalid Scatter/Gather list format */
	RN_ERR_INVALID_SGL_LENGTH,    /* Invalid Scatter/Gather list length */
	RN_ERR_RQ_HAS_SRQ,            /* RQ Associated with S-RQ */
	RN_ERR_INVALID_NOTIFY_TYPE,   /* Invalid Notify Type */
	RN_ERR_BAD_ADDRESS,           /* Register: the range is not mapped in the process (no RDMA
	                               * Verbs equivalent; a kernel RNIC's EFAULT) */
	RN_STATUS_COUNT
};

/* The spec's wording for a status ("Protection Domain is in use"); "unknown status" otherwise. */
const char *rn_status_str(enum rn_status s);

#endif
