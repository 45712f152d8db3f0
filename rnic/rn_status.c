#include "rn_status.h"

static const char *const rn_status_names[RN_STATUS_COUNT] = {
	[RN_OK] = "Operation completed successfully",
	[RN_ERR_NO_RESOURCES] = "Insufficient resources",
	[RN_ERR_INVALID_MODIFIER] = "Invalid Modifier",
	[RN_ERR_BLOCK_LIST_UNSUPPORTED] = "Block List mode not supported",
	[RN_ERR_RNIC_IN_USE] = "RNIC in use",
	[RN_ERR_INVALID_RNIC] = "Invalid RNIC handle",
	[RN_ERR_INVALID_PD] = "Invalid PD ID",
	[RN_ERR_PD_IN_USE] = "Protection Domain is in use",
	[RN_ERR_CQ_TOO_BIG] = "Number of CQ entries requested exceeds RNIC capability",
	[RN_ERR_SHRINK_FAILED] = "Attempt to shrink failed (too many elements present)",
	[RN_ERR_INVALID_CQ] = "Invalid CQ handle",
	[RN_ERR_CQ_IN_USE] = "CQ In Use",
	[RN_ERR_CQ_EMPTY] = "CQ empty",
	[RN_ERR_INVALID_CEH] = "Invalid Completion Event Handler Identifier",
	[RN_ERR_SQ_WRS_EXCEED] = "Max SQ WRs exceeds RNIC capability",
	[RN_ERR_RQ_WRS_EXCEED] = "Max RQ WRs exceeds RNIC capability",
	[RN_ERR_SQ_SGES_EXCEED] = "Max SGEs per SQ WR exceeds RNIC capability",
	[RN_ERR_RQ_SGES_EXCEED] = "Max SGEs per RQ WR exceeds RNIC capability",
	[RN_ERR_SRQ_LIMIT_RANGE] = "S-RQ Limit out of range",
	[RN_ERR_INVALID_SRQ] = "Invalid S-RQ handle",
	[RN_ERR_SRQ_IN_USE] = "QPs still associated with the S-RQ",
	[RN_ERR_ORD_EXCEEDS] = "ORD exceeds RNIC capability",
	[RN_ERR_IRD_EXCEEDS] = "IRD exceeds RNIC capability",
	[RN_ERR_INVALID_QP] = "Invalid QP handle",
	[RN_ERR_QP_ATTR_FIXED] = "Cannot change QP attribute",
	[RN_ERR_INVALID_STATE_CHANGE] = "Invalid QP state change requested",
	[RN_ERR_INVALID_LLP_HANDLE] = "Invalid LLP Stream Handle",
	[RN_ERR_STILL_FLUSHING] = "RI still flushing WQEs",
	[RN_ERR_RQ_LIMIT_RANGE] = "QP RQ Limit Out of Range",
	[RN_ERR_MW_BOUND_TO_QP] = "Memory Windows still Bound to QP",
	[RN_ERR_INVALID_VA] = "Invalid Virtual Address",
	[RN_ERR_INVALID_LENGTH] = "Invalid Length",
	[RN_ERR_INVALID_ACCESS] = "Invalid Access Rights requested",
	[RN_ERR_INVALID_PBL_ENTRY] = "Invalid Physical Buffer List entry",
	[RN_ERR_INVALID_PB_SIZE] = "Invalid Physical Buffer size",
	[RN_ERR_INVALID_STAG] = "Invalid STag Index",
	[RN_ERR_INVALID_FBO] = "Invalid First Byte Offset",
	[RN_ERR_MW_BOUND_TO_MR] = "One or more MWs still Bound to the Region",
	[RN_ERR_TOO_MANY_WRS] = "Too many Work Requests posted",
	[RN_ERR_INVALID_OPCODE] = "Invalid Operation type",
	[RN_ERR_INVALID_QP_STATE] = "Invalid QP state",
	[RN_ERR_INVALID_SGL_FORMAT] = "Invalid Scatter/Gather list format",
	[RN_ERR_INVALID_SGL_LENGTH] = "Invalid Scatter/Gather list length",
	[RN_ERR_RQ_HAS_SRQ] = "RQ Associated with S-RQ",
	[RN_ERR_BAD_ADDRESS] = "Memory range not mapped",
	[RN_ERR_INVALID_NOTIFY_TYPE] = "Invalid Notify Type",
};

const char *rn_status_str(enum rn_status s)
{
	if ((unsigned)s >= RN_STATUS_COUNT || !rn_status_names[s])
		return "unknown status";
	return rn_status_names[s];
}
