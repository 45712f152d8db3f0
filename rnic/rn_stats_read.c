/* Reading a statistics file (rn_stats_shm.h) of any process, trusting nothing in it: the
 * header's sizes must be this build's and every table must lie inside the file before a
 * record is copied. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rn_stats.h"

/* The header's layout against this build's; 0 or -EPROTO with why. */
static int layout_check(const struct rn_stats_hdr *h, size_t len, char *err, size_t el)
{
	uint64_t magic = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);

	if (magic != RN_STATS_MAGIC) {
		snprintf(err, el, "not a softrnic statistics file (magic %016llx)",
			 (unsigned long long)magic);
		return -EPROTO;
	}
	if (h->version != RN_STATS_VERSION || h->hdr_size != sizeof(*h) ||
	    h->ctrs_size != sizeof(struct rn_stats_ctrs) ||
	    h->dev_size != sizeof(struct rn_stats_dev) ||
	    h->port_size != sizeof(struct rn_stats_port) ||
	    h->qp_size != sizeof(struct rn_stats_qp)) {
		snprintf(err, el, "layout version %u (records %u/%u/%u/%u octets); this reader "
			 "knows version %u (%zu/%zu/%zu/%zu): use the softrnic-stat of the same build",
			 h->version, h->ctrs_size, h->dev_size, h->port_size, h->qp_size,
			 RN_STATS_VERSION, sizeof(struct rn_stats_ctrs), sizeof(struct rn_stats_dev),
			 sizeof(struct rn_stats_port), sizeof(struct rn_stats_qp));
		return -EPROTO;
	}
	if (h->file_size != len || h->ndev > 1024 || h->nport > 1024 ||
	    h->nqp > RN_STATS_QPS_MAX ||
	    h->dev_off + (uint64_t)h->ndev * h->dev_size > len ||
	    h->port_off + (uint64_t)h->nport * h->port_size > len ||
	    h->qp_off + (uint64_t)h->nqp * h->qp_size > len ||
	    h->dev_off < sizeof(*h) || h->port_off < sizeof(*h) || h->qp_off < sizeof(*h)) {
		snprintf(err, el, "tables outside the file (%zu octets; header says %llu)", len,
			 (unsigned long long)h->file_size);
		return -EPROTO;
	}
	return 0;
}

int rn_stats_view_mem(const void *base, size_t len, struct rn_stats_view *v, char *err,
		      size_t errlen)
{
	const struct rn_stats_hdr *h = base;

	memset(v, 0, sizeof(*v));
	v->fd = -1;
	if (!base || len < sizeof(*h)) {
		snprintf(err, errlen, "too short for a statistics header (%zu octets)", len);
		return -EPROTO;
	}
	int rc = layout_check(h, len, err, errlen);
	if (rc)
		return rc;
	v->hdr = h;
	v->len = len;
	v->pid = h->pid;
	return 0;
}

int rn_stats_open(const char *path, struct rn_stats_view *v, char *err, size_t errlen)
{
	struct stat sb;
	void *m;
	int fd, rc;

	memset(v, 0, sizeof(*v));
	v->fd = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	/* the owner holds LOCK_SH while it lives: taking it exclusively means it is gone */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		unlink(path);   /* may fail (another user's folder): then it stays, ignored */
		close(fd);
		snprintf(err, errlen, "%s: its process is gone", path);
		return -ESRCH;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0) {
		close(fd);
		snprintf(err, errlen, "%s: not a regular file with content", path);
		return -EPROTO;
	}
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		rc = -errno;
		close(fd);
		snprintf(err, errlen, "%s: mmap: %s", path, strerror(-rc));
		return rc;
	}
	char why[240];
	rc = rn_stats_view_mem(m, (size_t)sb.st_size, v, why, sizeof(why));
	if (rc) {
		munmap(m, (size_t)sb.st_size);
		close(fd);
		snprintf(err, errlen, "%s: %s", path, why);
		return rc;
	}
	v->fd = fd;
	return 0;
}

void rn_stats_close(struct rn_stats_view *v)
{
	if (v->fd >= 0) {
		munmap((void *)v->hdr, v->len);
		close(v->fd);
	}
	memset(v, 0, sizeof(*v));
	v->fd = -1;
}

/* Copy a record between two looks at its gen (rn_stats_shm.h). */
static bool copy_rec(const struct rn_stats_view *v, uint64_t off, uint32_t size, uint32_t i,
		     uint32_t n, void *out)
{
	if (!v->hdr || i >= n)
		return false;
	const char *r = (const char *)v->hdr + off + (size_t)i * size;
	const uint32_t *gen = (const uint32_t *)(const void *)r;
	uint32_t g1 = __atomic_load_n(gen, __ATOMIC_ACQUIRE);

	if (!(g1 & 1u))
		return false;
	/* word by word: each counter is read whole, as it was written */
	for (size_t w = 0; w < size / sizeof(uint64_t); w++) {
		uint64_t x = __atomic_load_n((const uint64_t *)(const void *)r + w, __ATOMIC_RELAXED);
		memcpy((char *)out + w * sizeof(x), &x, sizeof(x));
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(gen, __ATOMIC_RELAXED) == g1;
}

bool rn_stats_get_dev(const struct rn_stats_view *v, uint32_t i, struct rn_stats_dev *out)
{
	return copy_rec(v, v->hdr->dev_off, v->hdr->dev_size, i, v->hdr->ndev, out);
}

bool rn_stats_get_qp(const struct rn_stats_view *v, uint32_t i, struct rn_stats_qp *out)
{
	if (!copy_rec(v, v->hdr->qp_off, v->hdr->qp_size, i, v->hdr->nqp, out))
		return false;
	out->peer[sizeof(out->peer) - 1] = '\0';
	return true;
}

bool rn_stats_get_port(const struct rn_stats_view *v, uint32_t i, struct rn_stats_port *out)
{
	return copy_rec(v, v->hdr->port_off, v->hdr->port_size, i, v->hdr->nport, out);
}

pid_t rn_stats_name_pid(const char *name)
{
	size_t pl = strlen(RN_STATS_FILE_PREFIX), sl = strlen(RN_STATS_FILE_SUFFIX);
	size_t n = strlen(name);
	long pid = 0;

	if (n <= pl + sl || strncmp(name, RN_STATS_FILE_PREFIX, pl) != 0 ||
	    strcmp(name + n - sl, RN_STATS_FILE_SUFFIX) != 0 || n - pl - sl > 9)
		return -1;
	for (const char *c = name + pl; c < name + n - sl; c++) {
		if (*c < '0' || *c > '9')
			return -1;
		pid = pid * 10 + (*c - '0');
	}
	return pid > 0 ? (pid_t)pid : -1;
}

const char *rn_stats_op_name(enum rn_stats_op op)
{
	static const char *const names[RN_STATS_NOPS] = {
		"send", "write", "read_req", "read_resp", "imm",
	};
	return (unsigned)op < RN_STATS_NOPS ? names[op] : "?";
}

const char *rn_stats_qp_state_name(uint32_t state)
{
	static const char *const names[] = { "IDLE", "RTS", "CLOSING", "TERMINATE", "ERROR" };
	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

const char *rn_stats_layer_name(unsigned layer)
{
	static const char *const names[RN_STATS_TERM_LAYERS] = { "rdmap", "ddp", "llp" };
	return layer < RN_STATS_TERM_LAYERS ? names[layer] : "?";
}
