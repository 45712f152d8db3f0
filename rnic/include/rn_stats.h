/* Operator-visible counters (docs/stats.md): the process's statistics file and the readers of
 * any process's file. The layout is rn_stats_shm.h.
 *
 * Writers inside the RNIC (devices, QPs) use rn_stats_int.h; a transport that owns a port
 * (dpdk/) takes a port record here and writes its figures into it. Readers (softrnic-stat,
 * the DPDK telemetry commands, tests) open a file with rn_stats_open and copy records out
 * with the rn_stats_get_* functions, which never trust the file: every offset and size is
 * checked against the file's length first. */
#ifndef RN_STATS_H
#define RN_STATS_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rn_stats_shm.h"

/* ---- rn_stats.c: this process's file ------------------------------------------------------ */

/* The folder statistics files are made in and looked for: SOFTRNIC_STATS_DIR (a key of
 * softrnic.conf), else /dev/shm. */
const char *rn_stats_dir(void);

/* A port record of this process's file for DPDK port port_id, or NULL (no file, table full).
 * The caller is its only writer; rn_stats_port_put frees it. */
struct rn_stats_port *rn_stats_port_take(uint32_t port_id, const char *name);
void rn_stats_port_put(struct rn_stats_port *p);

/* This process's mapped file (NULL when it has none): for readers in the same process. */
const struct rn_stats_hdr *rn_stats_self(size_t *len);

/* ---- rn_stats_read.c: reading any process's file ------------------------------------------ */

struct rn_stats_view {
	const struct rn_stats_hdr *hdr;  /* the mapping */
	size_t len;
	int fd;                          /* -1: a view of memory the caller owns */
	pid_t pid;
};

/* Open and check the file at path. 0; -ESRCH when its process is gone (the file is then
 * removed when the caller may remove it); -EAGAIN while the process is still making it;
 * -EPROTO when it is not a softrnic statistics file or has another layout (err says
 * which); another -errno when it cannot be opened or mapped. */
int rn_stats_open(const char *path, struct rn_stats_view *v, char *err, size_t errlen);
/* A view of memory in this process (rn_stats_self): the same checks, no liveness test. */
int rn_stats_view_mem(const void *base, size_t len, struct rn_stats_view *v, char *err,
		      size_t errlen);
void rn_stats_close(struct rn_stats_view *v);

/* Copy record i (of hdr->ndev, nport, nqp) when it is in use; false when it is free or
 * changed owner while it was copied. */
bool rn_stats_get_dev(const struct rn_stats_view *v, uint32_t i, struct rn_stats_dev *out);
bool rn_stats_get_qp(const struct rn_stats_view *v, uint32_t i, struct rn_stats_qp *out);
bool rn_stats_get_port(const struct rn_stats_view *v, uint32_t i, struct rn_stats_port *out);

/* The pid of a file name "softrnic-<pid>.stats", or -1 when name is not one. */
pid_t rn_stats_name_pid(const char *name);

/* ---- rn_stats_flat.c: records as named counters ------------------------------------------ */
#define RN_STATS_FLAT_MAX 128
#define RN_STATS_NAME_LEN 32

/* A record as named values, in a fixed order per kind (rates pair a value with the same
 * index of an earlier copy). Names are the fields': tx_write_octets, tcp_retrans_segs ... */
struct rn_stats_flat {
	unsigned n;
	char name[RN_STATS_FLAT_MAX][RN_STATS_NAME_LEN];
	uint64_t val[RN_STATS_FLAT_MAX];
};

void rn_stats_flat_dev(const struct rn_stats_dev *d, struct rn_stats_flat *f);
void rn_stats_flat_qp(const struct rn_stats_qp *q, struct rn_stats_flat *f);
void rn_stats_flat_port(const struct rn_stats_port *p, struct rn_stats_flat *f);

/* Names for printing: "send", "write", "read_req", "read_resp", "imm"; "rdmap", "ddp",
 * "llp". */
const char *rn_stats_op_name(enum rn_stats_op op);
/* "IDLE", "RTS", "CLOSING", "TERMINATE", "ERROR" for a QP record's state. */
const char *rn_stats_qp_state_name(uint32_t state);
const char *rn_stats_layer_name(unsigned layer);

#endif
