/* softrnic's configuration file (softrnic.conf(5), docs/config.md): "key = value" lines, '#'
 * comments, one pair of double quotes around a value allowed. Each key stands for the
 * environment variable SOFTRNIC_<KEY> (transport = SOFTRNIC_TRANSPORT, dpdk_eal =
 * SOFTRNIC_DPDK_EAL ...), and the environment overrides the file key by key.
 *
 * The files: SOFTRNIC_CONF=path names the only one (empty: none); otherwise
 * $sysconfdir/softrnic/softrnic.conf, then $XDG_CONFIG_HOME/softrnic/softrnic.conf (default
 * ~/.config/softrnic/softrnic.conf) over it. A missing file is no error. They are read once
 * per process, at the first call of any function here. */
#ifndef SOFTRNIC_CONF_H
#define SOFTRNIC_CONF_H

#include <stddef.h>

/* 0 when the files were read and every key and every value checked at reading (transport,
 * the numbers) is good; -EINVAL with the first error in err ("FILE:LINE: ..." and what is
 * allowed). Nothing of a file with an error counts. */
int softrnic_conf_check(char *err, size_t errlen);

/* The value of environment variable env (e.g. "SOFTRNIC_MPA"): the environment's if set,
 * else the files', else NULL. where (may be NULL) receives where it came from, for an error
 * message about the value: the variable's name or "FILE:LINE (key)". */
const char *softrnic_conf_get(const char *env, char *where, size_t wl);

/* The files' value only, for a layer that puts a file of its own between the two
 * (SOFTRNIC_DPDK_CONF: softrnic.conf, then that file, then the environment). */
const char *softrnic_conf_file(const char *env, char *where, size_t wl);

/* The format's rule for one key or value: blanks at both ends cut, then one pair of double
 * quotes around it. Works in place on s; returns the start. The DPDK port file (dpdk_cfg.c)
 * follows it too. */
char *softrnic_conf_trim(char *s);

#endif
