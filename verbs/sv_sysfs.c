/* libibverbs' sysfs helpers: programs (perftest) read device attributes through them. Our
 * device has no sysfs directory (ibdev_path is empty), so such reads fail as for a missing
 * file; other paths are read as libibverbs reads them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "sv_sysfs.h"

/* $SYSFS_PATH when set (trailing slashes dropped), else /sys. */
const char *ibv_get_sysfs_path(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("SYSFS_PATH");
	size_t n;

	if (!env || !*env)
		return "/sys";
	n = strnlen(env, sizeof(path) - 1);
	memcpy(path, env, n);
	while (n > 1 && path[n - 1] == '/')
		n--;
	path[n] = '\0';
	return path;
}

/* dir/file into buf (NUL-terminated, one trailing newline dropped): its length, or -1. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t len;
	int fd;

	if (!dir || !file || !buf || !size) {
		errno = EINVAL;
		return -1;
	}
	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len < 0)
		return -1;
	if ((size_t)len == size)
		len--;                     /* room for the terminator */
	buf[len] = '\0';
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return (int)len;
}
