/* This host's directory of waiting discriminators (docs/vipl.md "Several processes per host"):
 * while a ConnectWait or a passive peer connect waits for discriminator D, its NIC has an
 * entry in a directory every process of the host shares, SOFTRNIC_VIPL_RUNDIR or
 * /tmp/softrnic-vipl (mode 1777, like /tmp/.X11-unix). The rendezvous (vipl_rdv.c) looks up a
 * request's called discriminator there to send it on to the right process.
 *
 * An entry is an empty file whose name says it all:
 *   <network namespace>.<well-known port>.<D in hex>.<NIC IPv4 in hex>.<NIC port>.<pid>
 * (the namespace, /proc/self/ns/net's inode, and the well-known port keep apart what cannot
 * reach each other or is configured apart). A file is created
 * with the first waiter of D on a NIC and removed with the last; an entry whose pid is gone
 * (a process that died) is removed by the lookup that finds it. */
#include "softrnic_conf.h"
#include "vipl_int.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REG_DIR_DEFAULT "/tmp/softrnic-vipl"
#define REG_NAME_MAX 256

static const char *reg_dir(void)
{
	const char *d = softrnic_conf_get("SOFTRNIC_VIPL_RUNDIR", NULL, 0);
	return d != NULL && *d != '\0' ? d : REG_DIR_DEFAULT;
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static unsigned long netns_id(void)
{
	struct stat st;
	return stat("/proc/self/ns/net", &st) == 0 ? (unsigned long)st.st_ino : 0;
}

/* "<netns>.<well-known port>.<disc hex>." : what every entry of D begins with. */
static void entry_prefix(const struct vipl_nic *nic, const uint8_t *disc, size_t len, char *out)
{
	char dh[2 * VIPL_MAX_DISC + 1];
	hex(disc, len, dh);
	snprintf(out, REG_NAME_MAX, "%lu.%u.%s.", netns_id(), (unsigned)ntohs(nic->rdv_port), dh);
}

static int entry_path(const struct vipl_nic *nic, const uint8_t *disc, size_t len, char *path,
		      size_t cap)
{
	char pre[REG_NAME_MAX];
	uint32_t ip;
	memcpy(&ip, nic->addr, 4);
	entry_prefix(nic, disc, len, pre);
	int n = snprintf(path, cap, "%s/%s%08x.%u.%ld", reg_dir(), pre, (unsigned)ntohl(ip),
			 (unsigned)ntohs(nic->sin.sin_port), (long)getpid());
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

static void dir_make(void)
{
	const char *d = reg_dir();
	if (mkdir(d, 01777) == 0)
		(void)chmod(d, 01777); /* the umask took the sticky and world bits */
}

static struct vipl_reg *reg_find(const struct vipl_nic *nic, const uint8_t *disc, size_t len)
{
	for (struct vipl_reg *r = nic->regs; r != NULL; r = r->next)
		if (vipl_disc_cmp(r->disc, r->len, disc, len) == 0)
			return r;
	return NULL;
}

bool vipl_reg_local(const struct vipl_nic *nic, const uint8_t *disc, size_t len)
{
	return reg_find(nic, disc, len) != NULL;
}

/* The in-process count always works; the file is best effort (an unwritable directory only
 * costs reachability through the rendezvous, which -1 reports). */
int vipl_reg_add(struct vipl_nic *nic, const uint8_t *disc, size_t len)
{
	struct vipl_reg *r = reg_find(nic, disc, len);
	char path[1024];
	if (r != NULL) {
		r->users++;
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -1;
	memcpy(r->disc, disc, len);
	r->len = (uint8_t)len;
	r->users = 1;
	r->next = nic->regs;
	nic->regs = r;
	if (entry_path(nic, disc, len, path, sizeof(path)) != 0)
		return -1;
	dir_make();
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void reg_unlink(struct vipl_nic *nic, struct vipl_reg *r)
{
	char path[1024];
	if (entry_path(nic, r->disc, r->len, path, sizeof(path)) == 0)
		(void)unlink(path);
	for (struct vipl_reg **pp = &nic->regs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	free(r);
}

void vipl_reg_del(struct vipl_nic *nic, const uint8_t *disc, size_t len)
{
	struct vipl_reg *r = reg_find(nic, disc, len);
	if (r != NULL && --r->users == 0)
		reg_unlink(nic, r);
}

void vipl_reg_clear(struct vipl_nic *nic)
{
	while (nic->regs != NULL)
		reg_unlink(nic, nic->regs);
}

/* Only entries our own user (or root) made count: the directory is shared by every user of
 * the host, and an entry names where a connection request is sent on, so another user's file
 * could otherwise redirect our peers anywhere. */
static bool entry_trusted(DIR *d, const char *name)
{
	struct stat st;
	if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
		return false;
	return st.st_uid == geteuid() || st.st_uid == 0;
}

/* "<ip hex>.<port>.<pid>" after the prefix: the host address; -1 if malformed or the
 * process is gone (then the stale entry is removed). */
static int entry_host(const char *dir, const char *name, const char *rest, uint8_t *host)
{
	unsigned ip, port;
	long pid;
	char tail;
	if (sscanf(rest, "%8x.%u.%ld%c", &ip, &port, &pid, &tail) != 3 || port == 0 ||
	    port > 65535 || pid <= 0)
		return -1;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
		char path[1024];
		if (snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path))
			(void)unlink(path);
		return -1;
	}
	uint32_t nip = htonl(ip);
	uint16_t nport = htons((uint16_t)port);
	memcpy(host, &nip, 4);
	memcpy(host + 4, &nport, 2);
	return 0;
}

int vipl_reg_lookup(const struct vipl_nic *nic, const uint8_t *disc, size_t len,
		    uint8_t host[VIPL_ADDR_LEN])
{
	char pre[REG_NAME_MAX];
	const char *dir = reg_dir();
	DIR *d = opendir(dir);
	int rc = -1;
	if (d == NULL)
		return -1;
	entry_prefix(nic, disc, len, pre);
	size_t pl = strlen(pre);
	struct dirent *e;
	while (rc != 0 && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, pre, pl) != 0 || !entry_trusted(d, e->d_name) ||
		    entry_host(dir, e->d_name, e->d_name + pl, host) != 0)
			continue;
		if (memcmp(host + 4, nic->addr + 4, 2) != 0 || memcmp(host, nic->addr, 4) != 0)
			rc = 0; /* not this NIC */
	}
	closedir(d);
	return rc;
}
