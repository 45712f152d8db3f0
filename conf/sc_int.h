/* Private to conf/ and its tests: the key table, the parser and one loaded configuration. */
#ifndef SC_INT_H
#define SC_INT_H

#include <stddef.h>

/* Every key the files take, in the order of sc_keys.c; the environment variable is
 * SOFTRNIC_ and the key in capitals. */
enum { SC_NKEYS = 34 };

struct sc_key {
	const char *name;
	/* NULL: checked where the value is used (that layer's message names FILE:LINE too) */
	int (*check)(const char *v, char *why, size_t wl);
};
extern const struct sc_key sc_keys[SC_NKEYS];
/* index of key name, or -1 */
int sc_key_find(const char *name);
/* index of the key of environment variable env ("SOFTRNIC_MPA" -> mpa), or -1 */
int sc_key_of_env(const char *env);

struct sc_value {
	char *text;       /* NULL: not set by any file */
	char where[300];  /* "FILE:LINE (key)" */
};

struct sc_conf {
	struct sc_value v[SC_NKEYS];
	int rc;           /* 0, or -EINVAL with err */
	char err[512];
};

/* Apply one file's text (path names it in messages) over c; 0 or -EINVAL with c->err. */
int sc_parse(struct sc_conf *c, const char *path, const char *text);
/* Read the files the environment chooses (softrnic_conf.h) into c, which starts empty. */
void sc_load(struct sc_conf *c, const char *sysconf_path);
void sc_free(struct sc_conf *c);

#endif
