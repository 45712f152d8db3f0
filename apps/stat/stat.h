/* softrnic-stat's parts: samples of every process's file (stat_sample.c), text and JSON
 * output with rates (stat_print.c). Records become named counters in rn_stats_flat.c. */
#ifndef STAT_H
#define STAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rnic.h"

/* ---- stat_sample.c ------------------------------------------------------------------------ */
enum stat_kind { STAT_DEV, STAT_PORT, STAT_QP };

struct stat_rec {
	enum stat_kind kind;
	uint32_t index, gen;          /* the record's slot and owner: rates need both the same */
	char label[112];              /* "softrnic0", "5 softrnic0 RTS peer 127.0.0.1:18515",
	                               * "0 net_memif0" */
	struct rn_stats_flat f;
};

struct stat_proc {
	pid_t pid;
	char comm[20];
	uint64_t start_unix_ns;
	uint32_t nqp;                 /* QP table size */
	int err;                      /* 0, or why this file was not read (-EPROTO ...) */
	char why[320];
	unsigned nrec;
	struct stat_rec *rec;
};

struct stat_sample {
	uint64_t mono_ns;
	unsigned nproc;
	struct stat_proc *proc;
};

/* Read every statistics file in dir (only pids[0..npids) when npids > 0). Files of dead
 * processes are removed and skipped; a file that cannot be read is kept as a process with
 * err set. 0, or -errno when dir cannot be read. */
int stat_sample_take(const char *dir, const pid_t *pids, unsigned npids, struct stat_sample *s);
void stat_sample_free(struct stat_sample *s);

/* ---- stat_print.c ------------------------------------------------------------------------- */
/* list: one line per process. Otherwise every record; with prev, rates per second too. */
void stat_print_list(const struct stat_sample *s, bool json);
void stat_print(const struct stat_sample *s, const struct stat_sample *prev, bool json);

#endif
