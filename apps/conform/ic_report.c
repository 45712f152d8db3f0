/* Reports: a Markdown table for people and JUnit XML for CI systems, one row per check and
 * device pair (server device / client device). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ic.h"

static const char *srv_dev(const struct ic *ic)
{
	return ic->server ? ic->dev_name : ic->peer_name;
}

static const char *cli_dev(const struct ic *ic)
{
	return ic->server ? ic->peer_name : ic->dev_name;
}

static void count(const struct ic_row *rows, int n, int cnt[3])
{
	cnt[IC_PASS] = cnt[IC_FAIL] = cnt[IC_NA] = 0;
	for (int i = 0; i < n; i++)
		cnt[rows[i].v]++;
}

static void md_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static int finish(FILE *f, const char *path)
{
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		fprintf(stderr, "iwarp-conform: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

static FILE *open_report(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "iwarp-conform: %s: %s\n", path, strerror(errno));
	return f;
}

int ic_report_md(const char *path, const struct ic *ic, const struct ic_row *rows, int n)
{
	FILE *f = open_report(path);
	if (!f)
		return -1;
	int cnt[3];
	count(rows, n, cnt);
	fprintf(f, "# iwarp-conform: %s (server) / %s (client)\n\n", srv_dev(ic), cli_dev(ic));
	fprintf(f, "%d checks: %d PASS, %d FAIL, %d NOT APPLICABLE.\n\n", n, cnt[IC_PASS],
		cnt[IC_FAIL], cnt[IC_NA]);
	fprintf(f, "| check | clause | server device | client device | verdict | detail |\n");
	fprintf(f, "|---|---|---|---|---|---|\n");
	for (int i = 0; i < n; i++) {
		fprintf(f, "| %s | %s | %s | %s | %s | ", rows[i].check->id, rows[i].check->clause,
			srv_dev(ic), cli_dev(ic), ic_verdict_str(rows[i].v));
		md_text(f, rows[i].v == IC_PASS ? rows[i].check->what : rows[i].why);
		fprintf(f, " |\n");
	}
	return finish(f, path);
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '&')
			fputs("&amp;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c < 0x20 && c != '\n' && c != '\t')
			fputc(' ', f); /* not allowed in XML 1.0 */
		else
			fputc(c, f);
	}
}

int ic_report_junit(const char *path, const struct ic *ic, const struct ic_row *rows, int n)
{
	FILE *f = open_report(path);
	if (!f)
		return -1;
	int cnt[3];
	count(rows, n, cnt);
	char pair[2 * IC_NAME + 8];
	snprintf(pair, sizeof(pair), "%s/%s", srv_dev(ic), cli_dev(ic));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n", n, cnt[IC_FAIL],
		cnt[IC_NA]);
	fputs("  <testsuite name=\"iwarp-conform ", f);
	xml_text(f, pair);
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n", n,
		cnt[IC_FAIL], cnt[IC_NA]);
	for (int i = 0; i < n; i++) {
		const struct ic_row *r = &rows[i];
		fputs("    <testcase classname=\"iwarp-conform.", f);
		xml_text(f, pair);
		fprintf(f, "\" name=\"%s\">\n      <properties><property name=\"clause\" value=\"",
			r->check->id);
		xml_text(f, r->check->clause);
		fputs("\"/></properties>\n", f);
		if (r->v != IC_PASS) {
			fputs(r->v == IC_FAIL ? "      <failure message=\"" : "      <skipped message=\"",
			      f);
			xml_text(f, r->why);
			fputs("\"/>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return finish(f, path);
}
