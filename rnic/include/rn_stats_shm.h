/* The layout of a process's statistics file (docs/stats.md, D250-D254): what softrnic-stat
 * and the DPDK telemetry commands read while the process runs.
 *
 * One file per process, <dir>/softrnic-<pid>.stats (dir: SOFTRNIC_STATS_DIR, default
 * /dev/shm), mapped shared by the process that writes it. The header says where each table
 * starts and how large its records are, so a reader checks the layout before it reads a
 * counter; a different magic, version or record size is refused, never guessed at.
 *
 * Writers. A QP's record is written by the thread that holds the QP's lock (single writer:
 * plain relaxed stores); a device's counters by every QP of it (relaxed atomic adds); a
 * port's figures by the thread that drives the port, copied from the port every
 * RN_STATS_PORT_PERIOD_MS. Each counter is a naturally aligned 64-bit word, so a reader never
 * sees half of one; a record as a whole is not a snapshot of one instant.
 *
 * Slots. Every record starts with gen: even = free, odd = in use. The writer zeroes a record,
 * then makes gen odd (release); freeing makes it even. A reader copies the record between two
 * reads of gen and keeps the copy only when both are the same odd value.
 *
 * Standalone: only <stdint.h>, so a reader needs nothing else of the RNIC. */
#ifndef RN_STATS_SHM_H
#define RN_STATS_SHM_H

#include <stdint.h>

#define RN_STATS_MAGIC 0x5441545343494e52ull   /* "RNICSTAT", little-endian */
#define RN_STATS_VERSION 1u
#define RN_STATS_NDEV 8u           /* softrnic0 .. softrnic7 open at once (rn_device.h) */
#define RN_STATS_NPORT 4u          /* DPDK ports of one process */
#define RN_STATS_QPS_DEFAULT 1024u /* QP records unless stats_qps says otherwise */
#define RN_STATS_QPS_MAX 65536u    /* max_qp (D77) */
#define RN_STATS_PORT_PERIOD_MS 100u
#define RN_STATS_FILE_PREFIX "softrnic-"
#define RN_STATS_FILE_SUFFIX ".stats"

/* RDMAP messages, by what a verbs consumer calls them. A Read is a Read Request one way and
 * its Read Response the other way. */
enum rn_stats_op {
	RN_STATS_OP_SEND,       /* Send, Send with SE / Invalidate */
	RN_STATS_OP_WRITE,      /* RDMA Write (and the Write of Write with Immediate) */
	RN_STATS_OP_READ_REQ,   /* RDMA Read Request */
	RN_STATS_OP_READ_RESP,  /* RDMA Read Response */
	RN_STATS_OP_IMM,        /* RFC 7306 Immediate Data */
	RN_STATS_NOPS
};

/* Terminate layers (RFC 5040 §7.2: RDMAP 0, DDP 1, LLP 2) and error types (0..3 used; any
 * higher type counts in 3). */
#define RN_STATS_TERM_LAYERS 3u
#define RN_STATS_TERM_ETYPES 4u

/* The counters of the data path, kept per QP and, summed, per device. FPDU octets are the
 * MPA length field, the ULPDU, the pad and the CRC field (markers are not counted); message
 * octets are the DDP payload. A message counts once, at its last segment. */
struct rn_stats_ctrs {
	uint64_t tx_fpdus, tx_octets, rx_fpdus, rx_octets;
	uint64_t tx_msgs[RN_STATS_NOPS], tx_msg_octets[RN_STATS_NOPS];
	uint64_t rx_msgs[RN_STATS_NOPS], rx_msg_octets[RN_STATS_NOPS];
	uint64_t crc_errors;       /* FPDUs received with a CRC that did not match */
	uint64_t marker_errors;    /* marker and FPDU length disagreed (RFC 5044 §8) */
	uint64_t term_tx[RN_STATS_TERM_LAYERS][RN_STATS_TERM_ETYPES];
	uint64_t term_rx[RN_STATS_TERM_LAYERS][RN_STATS_TERM_ETYPES];
};

struct rn_stats_dev {
	uint32_t gen;
	uint32_t unit;                /* N of softrnicN */
	char name[16];
	struct rn_stats_ctrs c;       /* every QP of the device, with or without a record */
	uint64_t qps_created, qps_destroyed;
	uint64_t qps_untracked;       /* created while the QP table was full */
	uint64_t conn_setup_fails;    /* MPA exchanges that did not end in a connected QP */
	uint64_t cq_overruns;         /* CQs that overflowed (the CQ Error event) */
};

struct rn_stats_qp {
	uint32_t gen;
	uint32_t dev;                 /* index into the device table */
	uint32_t qp_num;
	uint32_t state;               /* the QP's state: Idle, RTS, Closing, Terminate, Error
	                               * (0..4, as rn_qp_state.h numbers them) */
	char peer[48];                /* "address:port" of the stream's peer, "" before one;
	                               * written once per stream, so a reader may catch it
	                               * half written: it ends it with a NUL itself */
	struct rn_stats_ctrs c;
};

/* A DPDK port's figures: the port (dpdk_port_stats), its pools and its TCP engine
 * (tcp_stack_stats), as of updated_ns (CLOCK_MONOTONIC of the writer). */
struct rn_stats_port {
	uint32_t gen;
	uint32_t port_id;             /* DPDK's ethdev port id */
	char name[32];                /* the ethdev's name */
	uint64_t updated_ns;
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes, tx_full_drops;
	uint64_t eth_ierrors, eth_oerrors, eth_imissed;
	uint64_t rx_pool_size, rx_pool_free, tx_pool_size, tx_pool_free;
	uint64_t link_up, link_restarts;
	uint64_t tcp_active_opens, tcp_passive_opens, tcp_attempt_fails, tcp_estab_resets;
	uint64_t tcp_in_segs, tcp_out_segs, tcp_retrans_segs, tcp_fast_retrans, tcp_rto_expiries;
	uint64_t tcp_in_errs, tcp_in_csum_errs, tcp_cur_conns;
};

struct rn_stats_hdr {
	uint64_t magic;               /* written last: a file without it is still being made */
	uint32_t version;
	uint32_t hdr_size;
	uint64_t file_size;
	uint32_t ndev, nport, nqp;
	uint32_t ctrs_size, dev_size, port_size, qp_size;
	uint32_t pad;
	uint64_t dev_off, port_off, qp_off;
	int32_t pid;
	char comm[20];                /* the process's name (/proc/self/comm) */
	uint64_t start_unix_ns;       /* when the file was made (CLOCK_REALTIME) */
};

#endif
