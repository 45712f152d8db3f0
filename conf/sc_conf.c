/* The configuration of this process: which files, read once, and the lookups that put the
 * environment over them (softrnic_conf.h). The table is written once under pthread_once and
 * only read after, so any thread may look up at any time. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softrnic_conf.h"
#include "sc_int.h"

/* A configuration file is a few lines; more than this is not one. */
#define SC_FILE_MAX 65536

/* 0 and *out (NUL-terminated, caller frees); 1 when the file does not exist; -EINVAL with
 * c->err otherwise. */
static int read_file(struct sc_conf *c, const char *path, char **out)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (f == NULL) {
		if (errno == ENOENT)
			return 1;
		snprintf(c->err, sizeof(c->err), "%s: cannot read: %s", path, strerror(errno));
		return -EINVAL;
	}
	buf = malloc(SC_FILE_MAX + 1);
	n = buf != NULL ? fread(buf, 1, SC_FILE_MAX + 1, f) : 0;
	if (buf == NULL || ferror(f) || n > SC_FILE_MAX) {
		snprintf(c->err, sizeof(c->err), "%s: not a readable file of at most %d octets", path,
			 SC_FILE_MAX);
		fclose(f);
		free(buf);
		return -EINVAL;
	}
	fclose(f);
	buf[n] = '\0';
	*out = buf;
	return 0;
}

/* missing_ok: the default files may be absent; a file named by SOFTRNIC_CONF may not. */
static int load_file(struct sc_conf *c, const char *path, int missing_ok)
{
	char *text = NULL;
	int rc = read_file(c, path, &text);

	if (rc == 1) {
		if (missing_ok)
			return 0;
		snprintf(c->err, sizeof(c->err), "SOFTRNIC_CONF: no file '%s'", path);
		return -EINVAL;
	}
	if (rc != 0)
		return rc;
	rc = sc_parse(c, path, text);
	free(text);
	return rc;
}

void sc_free(struct sc_conf *c)
{
	for (int i = 0; i < SC_NKEYS; i++) {
		free(c->v[i].text);
		c->v[i].text = NULL;
	}
}

void sc_load(struct sc_conf *c, const char *sysconf_path)
{
	const char *only = getenv("SOFTRNIC_CONF");
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	char user[4096];

	memset(c, 0, sizeof(*c));
	if (only != NULL) {
		c->rc = *only != '\0' ? load_file(c, only, 0) : 0;
	} else {
		c->rc = load_file(c, sysconf_path, 1);
		if (xdg != NULL && *xdg == '/')
			snprintf(user, sizeof(user), "%s/softrnic/softrnic.conf", xdg);
		else if (home != NULL && *home != '\0')
			snprintf(user, sizeof(user), "%s/.config/softrnic/softrnic.conf", home);
		else
			user[0] = '\0';
		if (c->rc == 0 && user[0] != '\0')
			c->rc = load_file(c, user, 1);
	}
	if (c->rc != 0)
		sc_free(c); /* nothing of a bad file counts */
}

static struct sc_conf g_conf;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void load_once(void)
{
	sc_load(&g_conf, SOFTRNIC_SYSCONFDIR "/softrnic/softrnic.conf");
}

int softrnic_conf_check(char *err, size_t errlen)
{
	pthread_once(&g_once, load_once);
	if (g_conf.rc != 0 && err != NULL)
		snprintf(err, errlen, "%s", g_conf.err);
	return g_conf.rc;
}

const char *softrnic_conf_file(const char *env, char *where, size_t wl)
{
	int k = sc_key_of_env(env);

	pthread_once(&g_once, load_once);
	if (k < 0 || g_conf.v[k].text == NULL)
		return NULL;
	if (where != NULL)
		snprintf(where, wl, "%s", g_conf.v[k].where);
	return g_conf.v[k].text;
}

const char *softrnic_conf_get(const char *env, char *where, size_t wl)
{
	const char *v = getenv(env);

	if (v == NULL)
		return softrnic_conf_file(env, where, wl);
	if (where != NULL)
		snprintf(where, wl, "%s", env);
	return v;
}
