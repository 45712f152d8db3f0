/* One softrnic.conf file's text over a configuration: "key = value" lines, '#' to the end of
 * a line a comment, blanks around key and value ignored, one pair of double quotes around a
 * value allowed. A key given twice in one file is an error (which one was meant?); a later
 * file overrides an earlier one. Every error names FILE:LINE and what is allowed. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_int.h"
#include "softrnic_conf.h"

char *softrnic_conf_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	if (e - s >= 2 && s[0] == '"' && e[-1] == '"') {
		e[-1] = '\0';
		s++;
	}
	return s;
}

static int known_keys(char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < SC_NKEYS && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", i ? " " : "", sc_keys[i].name);
	return 0;
}

/* One line (comment already cut). seen[] marks the keys this file set, with their line. */
static int parse_line(struct sc_conf *c, const char *path, unsigned no, char *line,
		      unsigned seen[SC_NKEYS])
{
	char why[300], *eq, *key, *val;
	int k;

	line = softrnic_conf_trim(line);
	if (*line == '\0')
		return 0;
	eq = strchr(line, '=');
	if (eq == NULL) {
		snprintf(c->err, sizeof(c->err), "%s:%u: '%s' is not 'key = value'", path, no, line);
		return -EINVAL;
	}
	*eq = '\0';
	key = softrnic_conf_trim(line);
	val = softrnic_conf_trim(eq + 1);
	k = sc_key_find(key);
	if (k < 0) {
		char known[400];

		known_keys(known, sizeof(known));
		snprintf(c->err, sizeof(c->err), "%s:%u: unknown key '%s' (known: %s)", path, no,
			 key, known);
		return -EINVAL;
	}
	if (seen[k] != 0) {
		snprintf(c->err, sizeof(c->err), "%s:%u: key '%s' given again (first at line %u)",
			 path, no, key, seen[k]);
		return -EINVAL;
	}
	seen[k] = no;
	if (sc_keys[k].check != NULL && sc_keys[k].check(val, why, sizeof(why)) != 0) {
		snprintf(c->err, sizeof(c->err), "%s:%u: key '%s': %s", path, no, key, why);
		return -EINVAL;
	}
	free(c->v[k].text);
	c->v[k].text = strdup(val);
	if (c->v[k].text == NULL) {
		snprintf(c->err, sizeof(c->err), "%s: out of memory", path);
		return -ENOMEM;
	}
	snprintf(c->v[k].where, sizeof(c->v[k].where), "%s:%u (%s)", path, no, key);
	return 0;
}

int sc_parse(struct sc_conf *c, const char *path, const char *text)
{
	unsigned seen[SC_NKEYS] = { 0 };
	unsigned no = 0;

	while (text != NULL && *text != '\0') {
		const char *nl = strchr(text, '\n');
		size_t len = nl != NULL ? (size_t)(nl - text) : strlen(text);
		char line[2048], *hash;
		int rc;

		no++;
		if (len >= sizeof(line)) {
			snprintf(c->err, sizeof(c->err), "%s:%u: longer than %zu characters", path, no,
				 sizeof(line) - 1);
			return -EINVAL;
		}
		memcpy(line, text, len);
		line[len] = '\0';
		hash = strchr(line, '#');
		if (hash != NULL)
			*hash = '\0';
		rc = parse_line(c, path, no, line, seen);
		if (rc != 0)
			return rc;
		text = nl != NULL ? nl + 1 : NULL;
	}
	return 0;
}
