/* The RNIC's side of its counters (rn_stats.c): device and QP records, and the two ways a
 * counter is added to. Nothing here takes a lock or makes a system call once a record is
 * held; taking and freeing one (device open/close, QP create/destroy) takes the file's
 * lock. */
#ifndef RN_STATS_INT_H
#define RN_STATS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ddp.h"
#include "mpa_fpdu.h"
#include "rdmap.h"
#include "rn_stats.h"

/* A device record, never NULL: a record of the file, else one of this process's memory that
 * no one else sees (no file, or the device table full). */
struct rn_stats_dev *rn_stats_dev_take(unsigned unit, const char *name);
void rn_stats_dev_put(struct rn_stats_dev *d);

/* A QP record of the file for a QP of device d, or NULL when the QP table is full (the
 * device counts it in qps_untracked; its QP then counts in a record of its own memory). */
struct rn_stats_qp *rn_stats_qp_take(struct rn_stats_dev *d, uint32_t qp_num);
void rn_stats_qp_put(struct rn_stats_qp *q);
/* Write the peer of the QP's new stream into its record (control path: a system call). */
struct rn_conn;
void rn_stats_qp_peer(struct rn_stats_qp *q, const struct rn_conn *conn);
/* Zero a record of the QP's own memory and mark it in use, as rn_stats_qp_take does. */
void rn_stats_qp_local(struct rn_stats_qp *q, uint32_t qp_num);

/* Single writer (the holder of the QP's lock): a plain load and store, atomic only so that
 * a reader never sees a torn word. */
static inline void rn_stat_own_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* Several writers (the QPs of a device, on whichever threads run them). */
static inline void rn_stat_shared_add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* The message kind of an RDMAP opcode; RN_STATS_NOPS for a Terminate (counted by layer and
 * type instead) and for opcodes softrnic does not carry. */
static inline enum rn_stats_op rn_stats_op_of(uint8_t opcode)
{
	switch (opcode) {
	case RDMAP_OP_WRITE:
		return RN_STATS_OP_WRITE;
	case RDMAP_OP_READ_REQ:
		return RN_STATS_OP_READ_REQ;
	case RDMAP_OP_READ_RESP:
		return RN_STATS_OP_READ_RESP;
	case RDMAP_OP_SEND:
	case RDMAP_OP_SEND_INV:
	case RDMAP_OP_SEND_SE:
	case RDMAP_OP_SEND_SE_INV:
		return RN_STATS_OP_SEND;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		return RN_STATS_OP_IMM;
	default:
		return RN_STATS_NOPS;
	}
}

/* Octets of the FPDU that carries a ULPDU of ulpdu_len: length field, ULPDU, pad, CRC. */
static inline uint64_t rn_stats_fpdu_octets(size_t ulpdu_len)
{
	return MPA_HDR_LEN + ulpdu_len + mpa_pad_len(ulpdu_len) + MPA_CRC_LEN;
}

/* A Terminate's layer and type as the counter tables index them. */
static inline unsigned rn_stats_term_layer(uint8_t layer)
{
	return layer < RN_STATS_TERM_LAYERS ? layer : RN_STATS_TERM_LAYERS - 1;
}

static inline unsigned rn_stats_term_etype(uint8_t etype)
{
	return etype < RN_STATS_TERM_ETYPES ? etype : RN_STATS_TERM_ETYPES - 1;
}

/* One event of a QP: its record and its device's. */
#define RN_QP_STAT(qp, field, n)                                                     \
	do {                                                                          \
		rn_stat_own_add(&(qp)->st_qp->c.field, (n));                          \
		rn_stat_shared_add(&(qp)->st_dev->c.field, (n));                      \
	} while (0)

#endif
