/* This process's statistics file (rn_stats_shm.h, docs/stats.md): made at the first device
 * open, removed at exit, its records handed out to devices, QPs and ports.
 *
 * The file is made under a temporary name, locked (flock LOCK_SH, held while the process
 * lives), filled, and only then renamed to softrnic-<pid>.stats: a reader that can take the
 * lock exclusively knows the owner is gone, and never meets a file whose owner has not locked
 * it yet. The lock also tells a reused pid's file from a dead one's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rn_stats_int.h"
#include "rn_transport.h"
#include "softrnic_conf.h"

#define ALIGN64(x) (((x) + 63u) & ~(size_t)63u)

static pthread_mutex_t st_lock = PTHREAD_MUTEX_INITIALIZER;
static bool st_tried;
static struct rn_stats_hdr *st_hdr;   /* NULL: no file */
static size_t st_len;
static char st_path[PATH_MAX];
static uint32_t st_qp_next;          /* where the next QP record search starts */

const char *rn_stats_dir(void)
{
	const char *d = softrnic_conf_get("SOFTRNIC_STATS_DIR", NULL, 0);

	return d && *d ? d : "/dev/shm";
}

/* The QP table's size: stats_qps, checked when softrnic.conf is read; a bad environment
 * value is said once and the default taken, as a bad file never gets this far. */
static uint32_t table_qps(void)
{
	char where[128];
	const char *v = softrnic_conf_get("SOFTRNIC_STATS_QPS", where, sizeof(where));
	char *end;
	unsigned long n;

	if (!v)
		return RN_STATS_QPS_DEFAULT;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (*v < '0' || *v > '9' || *end || errno || n > RN_STATS_QPS_MAX) {
		fprintf(stderr, "softrnic: %s: '%s' is not a number in 0..%u; %u QP records\n",
			where, v, RN_STATS_QPS_MAX, RN_STATS_QPS_DEFAULT);
		return RN_STATS_QPS_DEFAULT;
	}
	return (uint32_t)n;
}

static void self_comm(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/comm", "re");

	out[0] = '\0';
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

static void layout(struct rn_stats_hdr *h, uint32_t nqp)
{
	h->version = RN_STATS_VERSION;
	h->hdr_size = sizeof(*h);
	h->ndev = RN_STATS_NDEV;
	h->nport = RN_STATS_NPORT;
	h->nqp = nqp;
	h->ctrs_size = sizeof(struct rn_stats_ctrs);
	h->dev_size = sizeof(struct rn_stats_dev);
	h->port_size = sizeof(struct rn_stats_port);
	h->qp_size = sizeof(struct rn_stats_qp);
	h->dev_off = ALIGN64(sizeof(*h));
	h->port_off = ALIGN64(h->dev_off + (size_t)h->ndev * h->dev_size);
	h->qp_off = ALIGN64(h->port_off + (size_t)h->nport * h->port_size);
	h->file_size = ALIGN64(h->qp_off + (size_t)nqp * h->qp_size);
}

static void unlink_at_exit(void)
{
	if (st_hdr)
		unlink(st_path);
}

/* Files of processes that died by a signal stay behind (no exit ran); each new process
 * removes those it may, so a folder of many short-lived killed processes does not fill up.
 * A file whose lock can be taken exclusively has no owner (D250). */
static void sweep_dead(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		pid_t pid = rn_stats_name_pid(e->d_name);
		int fd;

		if (pid <= 0 || pid == getpid())
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			unlinkat(dirfd(d), e->d_name, 0);
		close(fd);
	}
	closedir(d);
}

/* Make, lock, fill and publish the file. 0, or -errno with nothing left behind. */
static int file_make(void)
{
	const char *dir = rn_stats_dir();
	char tmp[PATH_MAX];
	struct rn_stats_hdr h = { 0 };
	struct timespec now;
	void *m;
	int fd, rc;

	layout(&h, table_qps());
	if (snprintf(st_path, sizeof(st_path), "%s/" RN_STATS_FILE_PREFIX "%d" RN_STATS_FILE_SUFFIX,
		     dir, (int)getpid()) >= (int)sizeof(st_path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.softrnic-%d.tmp", dir, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* a file of this pid is left from an earlier process that had it (killed): ours now */
	unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_SH) != 0 || ftruncate(fd, (off_t)h.file_size) != 0)
		goto fail;
	m = mmap(NULL, h.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	h.pid = (int32_t)getpid();
	self_comm(h.comm, sizeof(h.comm));
	clock_gettime(CLOCK_REALTIME, &now);
	h.start_unix_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	memcpy(m, &h, sizeof(h));   /* magic still 0: not a file to read yet */
	__atomic_store_n(&((struct rn_stats_hdr *)m)->magic, RN_STATS_MAGIC, __ATOMIC_RELEASE);
	if (rename(tmp, st_path) != 0) {
		munmap(m, h.file_size);
		goto fail;
	}
	/* the fd stays open for the lock, for the life of the process */
	st_hdr = m;
	st_len = h.file_size;
	atexit(unlink_at_exit);
	sweep_dead(dir);
	return 0;
fail:
	rc = -errno;
	close(fd);
	unlink(tmp);
	return rc;
}

/* Lock held. The file, made on first use; a failure is said once and counters stay in the
 * process. */
static struct rn_stats_hdr *file_get(void)
{
	if (!st_tried) {
		int rc;

		st_tried = true;
		rc = file_make();
		if (rc)
			fprintf(stderr, "softrnic: no statistics file in %s (%s): softrnic-stat "
				"will not see this process\n", rn_stats_dir(), strerror(-rc));
	}
	return st_hdr;
}

static void *record(const struct rn_stats_hdr *h, uint64_t off, uint32_t size, uint32_t i)
{
	return (char *)h + off + (size_t)i * size;
}

static bool in_file(const void *p)
{
	return st_hdr && (const char *)p >= (const char *)st_hdr &&
	       (const char *)p < (const char *)st_hdr + st_len;
}

/* Zero a free record and mark it in use (gen even -> odd), publishing the zeroes first. */
static void rec_open(uint32_t *gen, size_t size)
{
	uint32_t g = __atomic_load_n(gen, __ATOMIC_RELAXED);

	memset(gen + 1, 0, size - sizeof(*gen));
	__atomic_store_n(gen, g + 1, __ATOMIC_RELEASE);
}

static void rec_close(uint32_t *gen)
{
	__atomic_store_n(gen, __atomic_load_n(gen, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

static bool rec_free(const uint32_t *gen)
{
	return (__atomic_load_n(gen, __ATOMIC_RELAXED) & 1u) == 0;
}

/* Lock held. The first free record of a table of the file, or NULL. */
static void *first_free(uint64_t off, uint32_t size, uint32_t n)
{
	struct rn_stats_hdr *h = file_get();

	for (uint32_t i = 0; h && i < n; i++) {
		uint32_t *gen = record(h, off, size, i);
		if (rec_free(gen))
			return gen;
	}
	return NULL;
}

struct rn_stats_dev *rn_stats_dev_take(unsigned unit, const char *name)
{
	struct rn_stats_dev *d;

	pthread_mutex_lock(&st_lock);
	d = file_get() ? first_free(st_hdr->dev_off, st_hdr->dev_size, st_hdr->ndev) : NULL;
	if (!d)
		d = calloc(1, sizeof(*d));   /* seen by no one, counted all the same */
	if (d) {
		rec_open(&d->gen, sizeof(*d));
		d->unit = unit;
		snprintf(d->name, sizeof(d->name), "%s", name);
	}
	pthread_mutex_unlock(&st_lock);
	if (!d)
		abort();   /* a few hundred octets at device open: the device's own calloc failed too */
	return d;
}

void rn_stats_dev_put(struct rn_stats_dev *d)
{
	pthread_mutex_lock(&st_lock);
	if (in_file(d))
		rec_close(&d->gen);
	else
		free(d);
	pthread_mutex_unlock(&st_lock);
}

struct rn_stats_qp *rn_stats_qp_take(struct rn_stats_dev *d, uint32_t qp_num)
{
	struct rn_stats_qp *q = NULL;
	struct rn_stats_hdr *h;

	pthread_mutex_lock(&st_lock);
	h = in_file(d) ? st_hdr : NULL;
	for (uint32_t n = 0; h && n < h->nqp && !q; n++) {
		uint32_t i = (st_qp_next + n) % h->nqp;
		struct rn_stats_qp *r = record(h, h->qp_off, h->qp_size, i);
		if (rec_free(&r->gen)) {
			q = r;
			st_qp_next = i + 1;
		}
	}
	if (q) {
		rec_open(&q->gen, sizeof(*q));
		q->dev = (uint32_t)(((char *)d - ((char *)h + h->dev_off)) / h->dev_size);
		q->qp_num = qp_num;
	}
	pthread_mutex_unlock(&st_lock);
	if (!q)
		rn_stat_shared_add(&d->qps_untracked, 1);
	return q;
}

void rn_stats_qp_put(struct rn_stats_qp *q)
{
	pthread_mutex_lock(&st_lock);
	rec_close(&q->gen);
	pthread_mutex_unlock(&st_lock);
}

void rn_stats_qp_peer(struct rn_stats_qp *q, const struct rn_conn *conn)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[NI_MAXHOST], port[NI_MAXSERV], s[sizeof(q->peer)] = "";

	/* a test's stand-in transport may have no peer_addr: the peer then stays unnamed */
	if (conn->ops->peer_addr && rn_conn_peer_addr(conn, (struct sockaddr *)&ss, &len) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(s, sizeof(s), ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
	memcpy(q->peer, s, sizeof(q->peer));
}

void rn_stats_qp_local(struct rn_stats_qp *q, uint32_t qp_num)
{
	rec_open(&q->gen, sizeof(*q));
	q->qp_num = qp_num;
}

struct rn_stats_port *rn_stats_port_take(uint32_t port_id, const char *name)
{
	struct rn_stats_port *p;

	pthread_mutex_lock(&st_lock);
	p = file_get() ? first_free(st_hdr->port_off, st_hdr->port_size, st_hdr->nport) : NULL;
	if (p) {
		rec_open(&p->gen, sizeof(*p));
		p->port_id = port_id;
		snprintf(p->name, sizeof(p->name), "%s", name);
	}
	pthread_mutex_unlock(&st_lock);
	return p;
}

void rn_stats_port_put(struct rn_stats_port *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&st_lock);
	rec_close(&p->gen);
	pthread_mutex_unlock(&st_lock);
}

const struct rn_stats_hdr *rn_stats_self(size_t *len)
{
	pthread_mutex_lock(&st_lock);
	*len = st_len;
	const struct rn_stats_hdr *h = st_hdr;
	pthread_mutex_unlock(&st_lock);
	return h;
}
