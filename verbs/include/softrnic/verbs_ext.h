/* softrnic extensions to libibverbs: what the RDMA Verbs specification has and
 * <infiniband/verbs.h> lacks, published the way providers publish their direct-verbs headers
 * (mlx5dv.h, efadv.h). Include after <infiniband/verbs.h>; link with softrnic's libibverbs.
 *
 *   - Fast-Register a physical page list into an MR allocated for it (the kernel's
 *     ib_alloc_mr + IB_WR_REG_MR, which user space libibverbs does not offer).
 *   - RDMA Read with Invalidate Local STag (RDMAP opcode 0x7 semantics on the local side:
 *     the sink STag is invalidated when the Read completes), as an ibv_post_send opcode.
 *   - The RNIC's own completion status behind ibv_wc.vendor_err.
 *   - Tolerant QPs (VIA's Unreliable service): per-message receive errors do not end the stream.
 *   - The Terminate a QP sent or received, for upper layers that map it (VIPL).
 *   RFC 7306 Immediate Data rides on the standard opcodes IBV_WR_SEND_WITH_IMM and
 *   IBV_WR_RDMA_WRITE_WITH_IMM (docs/verbs.md); RFC 7306 atomics are not offered.
 *
 * Every name is prefixed softrnic_ / SOFTRNIC_. */
#ifndef SOFTRNIC_VERBS_EXT_H
#define SOFTRNIC_VERBS_EXT_H

#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ibv_wc.opcode of a completed Fast-Register. */
#define SOFTRNIC_WC_FAST_REG ((enum ibv_wc_opcode)IBV_WC_DRIVER1)

/* ibv_send_wr.opcode for RDMA Read with Invalidate Local STag: as IBV_WR_RDMA_READ (sg_list is
 * the local sink, exactly one SGE; wr.rdma the remote source); the sink's STag
 * (sg_list[0].lkey, typically a fast-registered MR) is invalidated when the Read completed,
 * before its completion is reported (IBV_WC_RDMA_READ). invalidate_rkey is ignored. */
#define SOFTRNIC_WR_RDMA_READ_WITH_INV ((enum ibv_wr_opcode)IBV_WR_DRIVER1)

/* ibv_create_qp with the QP attributes of the RDMA Verbs that libibverbs cannot express.
 * Default (flags 0, and plain ibv_create_qp): the peer may RDMA Read and Write (as iw_cm sets
 * up every iWARP QP), Bind MW allowed, not privileged. A privileged QP may post Fast-Register
 * and use lkey 0 (STag 0: process addresses) in local SGEs. NULL + errno as ibv_create_qp. */
enum softrnic_qp_flags {
	SOFTRNIC_QP_PRIVILEGED = 1u << 0,
	SOFTRNIC_QP_NO_REMOTE_READ = 1u << 1,   /* refuse inbound RDMA Read Requests */
	SOFTRNIC_QP_NO_REMOTE_WRITE = 1u << 2,  /* refuse inbound RDMA Writes (and so Read
	                                         * Responses: this QP cannot issue Reads) */
	/* Tolerant receive (VIA Unreliable service, docs/vipl.md): an incoming Send or
	 * Immediate Data with no receive posted is dropped (async IBV_EVENT_QP_REQ_ERR, QP stays
	 * RTS); one longer than its receive completes that receive with IBV_WC_LOC_LEN_ERR
	 * (byte_len 0) and the rest of the message is dropped; a tagged message or Read Request
	 * that fails its STag checks is dropped without a Terminate (async IBV_EVENT_QP_ACCESS_ERR,
	 * QP stays RTS; a Read Request over the IRD: IBV_EVENT_QP_REQ_ERR). Errors that lose the
	 * framing (MPA CRC, markers, malformed headers, DDP / RDMAP version, QN / MSN / MO,
	 * unexpected opcodes) and bad Read Responses still end the stream as usual: after those
	 * the octets that follow can no longer be parsed. */
	SOFTRNIC_QP_TOLERANT = 1u << 3,
	SOFTRNIC_QP_FLAGS_ALL = (1u << 4) - 1
};
struct ibv_qp *softrnic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr,
				  unsigned int flags);
/* From now on the peer's RDMA Writes (read 0) or RDMA Read Requests (read non-zero) are taken
 * only when they name rkey: any other is refused as on a QP without that remote access
 * (Terminate: RDMAP protection error; the QP goes to Error). For a library that lets its peer
 * write or read one region of its own on a connection whose user allows no other remote
 * access. 0, or EINVAL. */
int softrnic_qp_limit_inbound(struct ibv_qp *qp, int read, uint32_t rkey);

/* An MR with no memory yet (Invalid STag) and room for max_pages pages, for Fast-Register.
 * remote_access: non-zero allows Fast-Register to grant remote rights (the spec's Remote
 * Access Flag). NULL + errno on failure (EINVAL, ENOMEM). Free with ibv_dereg_mr. */
struct ibv_mr *softrnic_alloc_mr(struct ibv_pd *pd, uint32_t max_pages, int remote_access);

/* Fast-Register work request. */
struct softrnic_fast_reg_wr {
	uint64_t wr_id;
	unsigned int send_flags;  /* IBV_SEND_SIGNALED, IBV_SEND_FENCE */
	struct ibv_mr *mr;        /* from softrnic_alloc_mr */
	uint8_t key;              /* new 8-bit key: lkey/rkey become (index << 8) | key */
	unsigned int access;      /* IBV_ACCESS_LOCAL_WRITE / REMOTE_READ / REMOTE_WRITE /
	                           * MW_BIND / ZERO_BASED */
	uint64_t iova;            /* VA-based: address of the first byte (iova % page == fbo) */
	uint64_t length;          /* bytes, <= npages * page size - fbo */
	uint32_t fbo;             /* first byte offset in pages[0] */
	uint8_t page_shift;       /* 12 .. 30 */
	uint32_t npages;
	const uint64_t *pages;    /* page-aligned process addresses, in order */
};

/* Post one Fast-Register on qp's send queue. On success mr->lkey and mr->rkey already carry the
 * new key (as the kernel's ib_update_fast_reg_key does); the registration takes effect when the
 * WR executes, in order with the other send WRs. 0 or an errno value (EINVAL, ENOMEM when the SQ
 * is full). A failed execution completes as IBV_WC_LOC_PROT_ERR / IBV_WC_LOC_QP_OP_ERR with the
 * RNIC status in vendor_err. */
int softrnic_post_fast_reg(struct ibv_qp *qp, const struct softrnic_fast_reg_wr *wr);

/* The Terminate message of a QP in Terminate or Error state (RFC 5040 §4.8): who sent it and
 * its layer / error type / error code. 0 when one is known, ENOENT when none was sent or
 * received, EINVAL for a NULL argument. */
struct softrnic_qp_term {
	int local;          /* 1: this QP sent it (it detected the error); 0: the peer sent it */
	uint8_t layer;      /* 0 RDMAP, 1 DDP, 2 LLP (MPA) */
	uint8_t etype;
	uint8_t ecode;
};
int softrnic_query_qp_term(struct ibv_qp *qp, struct softrnic_qp_term *term);

/* What MPA negotiated for a connected QP (RFC 5044 / RFC 6581): the options softrnic's
 * rdma_cm takes from SOFTRNIC_MPA (docs/rdmacm.md) and the peer's answer. 0 when the QP has
 * a connection, ENOENT when it never had one (Idle), EINVAL for a NULL argument. */
struct softrnic_qp_mpa {
	uint8_t rev;            /* 1 or 2 */
	uint8_t enhanced;       /* the RFC 6581 IRD/ORD block was exchanged */
	uint8_t crc;            /* CRC32c on both directions */
	uint8_t markers_tx;     /* we put markers into what we send */
	uint8_t markers_rx;     /* the peer puts markers into what we receive */
	uint8_t p2p;            /* an RTR message opened the connection */
	uint8_t rtr;            /* which: 1 zero-length Send, 2 Write, 4 Read (0: none) */
	uint16_t local_ird, local_ord, peer_ird, peer_ord; /* 0x3FFF: the peer did not say */
};
int softrnic_query_qp_mpa(struct ibv_qp *qp, struct softrnic_qp_mpa *mpa);

/* The RNIC's completion status text for ibv_wc.vendor_err of a failed completion (RDMA Verbs
 * Fig. 36 wording, e.g. "Base and bounds violation"). */
const char *softrnic_wc_vendor_str(uint32_t vendor_err);

/* The transport this process's RNIC carries connections on: kernel TCP sockets (the
 * default), or softrnic's TCP engine on a DPDK port when SOFTRNIC_TRANSPORT=dpdk or a DPDK
 * configuration is in the environment (SOFTRNIC_DPDK_CONF, SOFTRNIC_DPDK_IP or
 * SOFTRNIC_DPDK_EAL); SOFTRNIC_TRANSPORT=sock forces kernel sockets. Reads the environment
 * only: nothing is opened. */
enum softrnic_transport { SOFTRNIC_TRANSPORT_SOCK, SOFTRNIC_TRANSPORT_DPDK };
enum softrnic_transport softrnic_transport_selected(void);
/* On the DPDK transport: the port's IPv4 address (network order), the only one connections
 * can use; the port is opened on first use. 0, -ENOTSUP on kernel sockets (any local address
 * serves) or in a build without DPDK, or the port's error (said once on stderr). */
int softrnic_transport_ipv4(uint32_t *addr);

#ifdef __cplusplus
}
#endif

#endif
