/* One sample: every statistics file of the folder (or of the pids asked for), read once.
 * A file whose process is gone is removed by rn_stats_open and left out; one that cannot be
 * read stays in the sample with its reason, so the caller can say it. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stat.h"

static bool wanted(pid_t pid, const pid_t *pids, unsigned npids)
{
	if (!npids)
		return true;
	for (unsigned i = 0; i < npids; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static struct stat_rec *rec_add(struct stat_proc *p, enum stat_kind k, uint32_t i, uint32_t gen)
{
	struct stat_rec *r = realloc(p->rec, (p->nrec + 1) * sizeof(*r));

	if (!r)
		return NULL;
	p->rec = r;
	r += p->nrec++;
	memset(r, 0, sizeof(*r));
	r->kind = k;
	r->index = i;
	r->gen = gen;
	return r;
}

/* 0, or -ENOMEM. */
static int read_records(const struct rn_stats_view *v, struct stat_proc *p)
{
	const struct rn_stats_hdr *h = v->hdr;
	char devname[RN_STATS_NDEV][16] = { { 0 } };
	struct stat_rec *r;

	for (uint32_t i = 0; i < h->ndev; i++) {
		struct rn_stats_dev d;
		if (!rn_stats_get_dev(v, i, &d))
			continue;
		if (!(r = rec_add(p, STAT_DEV, i, d.gen)))
			return -ENOMEM;
		d.name[sizeof(d.name) - 1] = '\0';
		if (i < RN_STATS_NDEV)
			snprintf(devname[i], sizeof(devname[i]), "%s", d.name);
		snprintf(r->label, sizeof(r->label), "%s", d.name);
		rn_stats_flat_dev(&d, &r->f);
	}
	for (uint32_t i = 0; i < h->nport; i++) {
		struct rn_stats_port pt;
		if (!rn_stats_get_port(v, i, &pt))
			continue;
		if (!(r = rec_add(p, STAT_PORT, i, pt.gen)))
			return -ENOMEM;
		pt.name[sizeof(pt.name) - 1] = '\0';
		snprintf(r->label, sizeof(r->label), "%u %s", pt.port_id, pt.name);
		rn_stats_flat_port(&pt, &r->f);
	}
	for (uint32_t i = 0; i < h->nqp; i++) {
		struct rn_stats_qp q;
		if (!rn_stats_get_qp(v, i, &q))
			continue;
		if (!(r = rec_add(p, STAT_QP, i, q.gen)))
			return -ENOMEM;
		snprintf(r->label, sizeof(r->label), "%u %s %s%s%.47s", q.qp_num,
			 q.dev < RN_STATS_NDEV && devname[q.dev][0] ? devname[q.dev] : "?",
			 rn_stats_qp_state_name(q.state), q.peer[0] ? " peer " : "", q.peer);
		rn_stats_flat_qp(&q, &r->f);
	}
	return 0;
}

/* Views kept open between the samples of -i: mapping a file again for every sample faults
 * its pages in again, most of a short interval's cost. A kept view is used while its file
 * (the same inode) is still listed and its owner still holds the lock. */
#define STAT_KEEP 256

static struct kept {
	pid_t pid;
	ino_t ino;
	bool seen;
	struct rn_stats_view v;
} kept[STAT_KEEP];
static unsigned nkept;

static void kept_drop(unsigned i)
{
	rn_stats_close(&kept[i].v);
	kept[i] = kept[--nkept];
}

/* The view of path (pid's file): a kept one, or a new one kept when there is room (*owned
 * false), or a new one the caller closes (*owned true). 0, or rn_stats_open's error. */
static int view_get(const char *path, pid_t pid, struct rn_stats_view *v, bool *owned,
		    char *why, size_t wl)
{
	struct stat sb;
	int rc;

	*owned = false;
	if (stat(path, &sb) != 0)
		return -errno;
	for (unsigned i = 0; i < nkept; i++) {
		struct stat kb;

		if (kept[i].pid != pid || kept[i].ino != sb.st_ino)
			continue;
		if (fstat(kept[i].v.fd, &kb) != 0 || kb.st_nlink == 0) {
			kept_drop(i);   /* the kept file was removed; a new one reuses its inode */
			break;
		}
		if (flock(kept[i].v.fd, LOCK_EX | LOCK_NB) == 0) {   /* its owner is gone */
			unlink(path);
			kept_drop(i);
			return -ESRCH;
		}
		kept[i].seen = true;
		*v = kept[i].v;
		return 0;
	}
	rc = rn_stats_open(path, v, why, wl);
	if (rc)
		return rc;
	if (nkept < STAT_KEEP)
		kept[nkept++] = (struct kept){ pid, sb.st_ino, true, *v };
	else
		*owned = true;
	return 0;
}

static int proc_add(struct stat_sample *s, const char *dir, const char *name, pid_t pid)
{
	char path[PATH_MAX];
	struct rn_stats_view v;
	struct stat_proc *p;
	bool owned;
	char why[320];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = view_get(path, pid, &v, &owned, why, sizeof(why));
	if (rc == -ESRCH || rc == -ENOENT)
		return 0;   /* gone (and its file removed), or gone between readdir and open */
	p = realloc(s->proc, (s->nproc + 1) * sizeof(*p));
	if (!p) {
		if (!rc && owned)
			rn_stats_close(&v);
		return -ENOMEM;
	}
	s->proc = p;
	p += s->nproc++;
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->err = rc;
	if (rc) {
		snprintf(p->why, sizeof(p->why), "%s", why);
		return 0;
	}
	memcpy(p->comm, v.hdr->comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = '\0';
	p->start_unix_ns = v.hdr->start_unix_ns;
	p->nqp = v.hdr->nqp;
	if (v.hdr->pid != pid) {
		p->err = -EPROTO;
		snprintf(p->why, sizeof(p->why), "%.200s: made by pid %d, not %d", name,
			 (int)v.hdr->pid, (int)pid);
		if (owned)
			rn_stats_close(&v);
		return 0;
	}
	rc = read_records(&v, p);
	if (owned)
		rn_stats_close(&v);
	return rc;
}

static int by_pid(const void *a, const void *b)
{
	const struct stat_proc *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

int stat_sample_take(const char *dir, const pid_t *pids, unsigned npids, struct stat_sample *s)
{
	struct timespec now;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	clock_gettime(CLOCK_MONOTONIC, &now);
	s->mono_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	d = opendir(dir);
	if (!d)
		return -errno;
	for (unsigned i = 0; i < nkept; i++)
		kept[i].seen = false;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		pid_t pid = rn_stats_name_pid(e->d_name);
		if (pid > 0 && wanted(pid, pids, npids))
			rc = proc_add(s, dir, e->d_name, pid);
	}
	closedir(d);
	for (unsigned i = nkept; i-- > 0;)
		if (!kept[i].seen)
			kept_drop(i);   /* removed or replaced since the last sample */
	if (s->nproc > 1)
		qsort(s->proc, s->nproc, sizeof(*s->proc), by_pid);
	return rc;
}

void stat_sample_free(struct stat_sample *s)
{
	for (unsigned i = 0; i < s->nproc; i++)
		free(s->proc[i].rec);
	free(s->proc);
	memset(s, 0, sizeof(*s));
}
