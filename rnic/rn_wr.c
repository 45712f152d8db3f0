/* Immediate validation of Send Queue WRs (RDMA Verbs 1.0 §9.3.1.1, §8.1.3.2). Pure checks on
 * the WR and the QP's allocated limits; everything that depends on memory state (STags, lengths,
 * ORD = 0) is a completion error found when the WR is processed (rn_qp_tx.c). */
#include "rn_qp_int.h"

static bool op_has_data(uint8_t op)
{
	/* Send types and Write, with or without immediate data */
	return op <= RN_WR_RDMA_WRITE || op == RN_WR_SEND_IMM || op == RN_WR_RDMA_WRITE_IMM;
}

static bool op_is_send(uint8_t op)
{
	return op <= RN_WR_SEND_SE_INV || op == RN_WR_SEND_IMM;
}

bool rn_wr_is_memory(uint8_t op)
{
	return op == RN_WR_BIND_MW || op == RN_WR_LOCAL_INV || op == RN_WR_FAST_REG;
}

/* SOLICITED turns a Send into its SE form (libibverbs has one SEND opcode and a flag). The
 * immediate-data WRs keep their opcode: the flag picks the SE opcode of one of their two wire
 * messages when they are started (rn_qp_tx.c). */
uint8_t rn_wr_effective_op(const struct rn_send_wr *wr)
{
	uint8_t op = (uint8_t)wr->opcode;

	if (!(wr->flags & RN_SEND_SOLICITED))
		return op;
	if (op == RN_WR_SEND)
		return RN_WR_SEND_SE;
	if (op == RN_WR_SEND_INV)
		return RN_WR_SEND_SE_INV;
	return op;
}

enum rn_wc_opcode rn_wr_wc_opcode(uint8_t op)
{
	static const enum rn_wc_opcode map[RN_WR_OPCODE_COUNT] = {
		[RN_WR_SEND] = RN_WC_OP_SEND,
		[RN_WR_SEND_SE] = RN_WC_OP_SEND_SE,
		[RN_WR_SEND_INV] = RN_WC_OP_SEND_INV,
		[RN_WR_SEND_SE_INV] = RN_WC_OP_SEND_SE_INV,
		[RN_WR_RDMA_WRITE] = RN_WC_OP_RDMA_WRITE,
		[RN_WR_RDMA_READ] = RN_WC_OP_RDMA_READ,
		[RN_WR_RDMA_READ_INV] = RN_WC_OP_RDMA_READ_INV,
		[RN_WR_BIND_MW] = RN_WC_OP_BIND_MW,
		[RN_WR_LOCAL_INV] = RN_WC_OP_LOCAL_INV,
		[RN_WR_FAST_REG] = RN_WC_OP_FAST_REG,
		[RN_WR_SEND_IMM] = RN_WC_OP_SEND,
		[RN_WR_RDMA_WRITE_IMM] = RN_WC_OP_RDMA_WRITE,
	};
	return op < RN_WR_OPCODE_COUNT ? map[op] : RN_WC_OP_SEND;
}

static uint32_t max_sge_for(const struct rn_qp *qp, uint8_t op)
{
	if (op_is_send(op))
		return qp->alloc.max_send_sge;
	if (op == RN_WR_RDMA_WRITE || op == RN_WR_RDMA_WRITE_IMM)
		return qp->alloc.max_write_sge;
	if (op == RN_WR_RDMA_READ || op == RN_WR_RDMA_READ_INV)
		return 1;   /* exactly one local address (§8.1.3.3); 0 = zero-length Read */
	return 0;       /* memory WRs carry no SGL */
}

static uint64_t sgl_total(const struct rn_send_wr *wr)
{
	uint64_t t = 0;

	for (int i = 0; i < wr->num_sge; i++)
		t += wr->sg_list[i].length;
	return t;
}

/* Status of one WR, in the order rn_qp.h documents (after state and SQ space). */
enum rn_status rn_wr_check_send(const struct rn_qp *qp, const struct rn_send_wr *wr)
{
	uint8_t op = (uint8_t)wr->opcode;

	if ((unsigned)wr->opcode >= RN_WR_OPCODE_COUNT)
		return RN_ERR_INVALID_OPCODE;
	if (op == RN_WR_BIND_MW && !qp->ia.bind_mw)
		return RN_ERR_INVALID_OPCODE;
	if (wr->flags & ~(unsigned)RN_SEND_FLAGS_ALL)
		return RN_ERR_INVALID_MODIFIER;
	if ((wr->flags & RN_SEND_INLINE) && !op_has_data(op))
		return RN_ERR_INVALID_MODIFIER;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge_for(qp, op)) {
		/* memory WRs ignore their SGL (ibverbs callers leave it zeroed) */
		if (op_has_data(op) || op == RN_WR_RDMA_READ || op == RN_WR_RDMA_READ_INV ||
		    wr->num_sge < 0)
			return RN_ERR_INVALID_SGL_LENGTH;
	}
	if (wr->num_sge > 0 && !wr->sg_list && max_sge_for(qp, op) > 0)
		return RN_ERR_INVALID_SGL_FORMAT;
	if ((wr->flags & RN_SEND_INLINE) && sgl_total(wr) > qp->alloc.max_inline)
		return RN_ERR_INVALID_MODIFIER;
	return RN_OK;
}
