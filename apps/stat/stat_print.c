/* Output: a list of processes, or every record's counters, as text (ethtool -S style, one
 * counter a line) or JSON (one object per sample, for scripts). With a previous sample,
 * counters get a rate per second over the interval; gauges (pool figures, open QPs) do not. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "stat.h"

bool stat_print_all;   /* text: zero counters too */

static bool is_gauge(const char *n)
{
	static const char *const gauges[] = {
		"qps_open", "rx_pool_size", "rx_pool_free", "tx_pool_size", "tx_pool_free",
		"link_up", "tcp_cur_conns",
	};
	for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++)
		if (strcmp(n, gauges[i]) == 0)
			return true;
	return false;
}

static const char *kind_name(enum stat_kind k)
{
	return k == STAT_DEV ? "device" : k == STAT_PORT ? "port" : "qp";
}

static const struct stat_rec *prev_rec(const struct stat_sample *prev, pid_t pid,
				       const struct stat_rec *r)
{
	for (unsigned i = 0; prev && i < prev->nproc; i++) {
		const struct stat_proc *p = &prev->proc[i];
		if (p->pid != pid)
			continue;
		for (unsigned j = 0; j < p->nrec; j++) {
			const struct stat_rec *o = &p->rec[j];
			if (o->kind == r->kind && o->index == r->index && o->gen == r->gen)
				return o;
		}
	}
	return NULL;
}

/* The rate of counter i, or false when there is none to give. */
static bool rate_of(const struct stat_rec *r, const struct stat_rec *o, double dt, unsigned i,
		    double *rate)
{
	if (!o || dt <= 0 || i >= o->f.n || is_gauge(r->f.name[i]) || r->f.val[i] < o->f.val[i])
		return false;
	*rate = (double)(r->f.val[i] - o->f.val[i]) / dt;
	return true;
}

static void start_time(uint64_t unix_ns, char *out, size_t len)
{
	time_t t = (time_t)(unix_ns / 1000000000u);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- text --------------------------------------------------------------------------------- */

static void text_rec(const struct stat_rec *r, const struct stat_rec *o, double dt)
{
	double rate;

	printf("  %s %s\n", kind_name(r->kind), r->label);
	for (unsigned i = 0; i < r->f.n; i++) {
		if (!r->f.val[i] && !stat_print_all)
			continue;
		printf("    %-26s %20llu", r->f.name[i], (unsigned long long)r->f.val[i]);
		if (rate_of(r, o, dt, i, &rate))
			printf("  %14.1f/s", rate);
		putchar('\n');
	}
}

static void text_proc_head(const struct stat_proc *p)
{
	char t[32];

	if (p->err) {
		printf("pid %d: not read: %s\n", (int)p->pid, p->why);
		return;
	}
	start_time(p->start_unix_ns, t, sizeof(t));
	printf("pid %d %s (since %s, %u QP records)\n", (int)p->pid, p->comm, t, p->nqp);
}

/* ---- JSON --------------------------------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_rec(const struct stat_rec *r, const struct stat_rec *o, double dt)
{
	double rate;
	bool first = true;

	printf("{\"kind\":\"%s\",\"label\":", kind_name(r->kind));
	json_str(r->label);
	printf(",\"counters\":{");
	for (unsigned i = 0; i < r->f.n; i++)
		printf("%s\"%s\":%llu", i ? "," : "", r->f.name[i], (unsigned long long)r->f.val[i]);
	printf("},\"rates\":{");
	for (unsigned i = 0; i < r->f.n; i++)
		if (rate_of(r, o, dt, i, &rate)) {
			printf("%s\"%s\":%.3f", first ? "" : ",", r->f.name[i], rate);
			first = false;
		}
	printf("}}");
}

static void json_proc(const struct stat_proc *p, const struct stat_sample *prev, double dt,
		      bool records)
{
	char t[32];

	printf("{\"pid\":%d,", (int)p->pid);
	if (p->err) {
		printf("\"error\":");
		json_str(p->why);
		putchar('}');
		return;
	}
	start_time(p->start_unix_ns, t, sizeof(t));
	printf("\"comm\":");
	json_str(p->comm);
	printf(",\"since\":\"%s\",\"qp_records\":%u", t, p->nqp);
	if (records) {
		printf(",\"records\":[");
		for (unsigned j = 0; j < p->nrec; j++) {
			if (j)
				putchar(',');
			json_rec(&p->rec[j], prev_rec(prev, p->pid, &p->rec[j]), dt);
		}
		putchar(']');
	} else {
		unsigned n[3] = { 0 };
		for (unsigned j = 0; j < p->nrec; j++)
			n[p->rec[j].kind]++;
		printf(",\"devices\":%u,\"ports\":%u,\"qps\":%u", n[STAT_DEV], n[STAT_PORT],
		       n[STAT_QP]);
	}
	putchar('}');
}

static void json_sample(const struct stat_sample *s, const struct stat_sample *prev, bool recs)
{
	double dt = prev ? (double)(s->mono_ns - prev->mono_ns) / 1e9 : 0;

	printf("{\"interval_s\":%.3f,\"processes\":[", dt);
	for (unsigned i = 0; i < s->nproc; i++) {
		if (i)
			putchar(',');
		json_proc(&s->proc[i], prev, dt, recs);
	}
	printf("]}\n");
}

/* ---- entry points ------------------------------------------------------------------------- */

void stat_print_list(const struct stat_sample *s, bool json)
{
	if (json) {
		json_sample(s, NULL, false);
		return;
	}
	printf("%-8s %-16s %-20s %7s %5s %5s\n", "PID", "COMMAND", "SINCE", "DEVICES", "PORTS",
	       "QPS");
	for (unsigned i = 0; i < s->nproc; i++) {
		const struct stat_proc *p = &s->proc[i];
		unsigned n[3] = { 0 };
		char t[32];

		if (p->err) {
			printf("%-8d not read: %s\n", (int)p->pid, p->why);
			continue;
		}
		for (unsigned j = 0; j < p->nrec; j++)
			n[p->rec[j].kind]++;
		start_time(p->start_unix_ns, t, sizeof(t));
		printf("%-8d %-16s %-20s %7u %5u %5u\n", (int)p->pid, p->comm, t, n[STAT_DEV],
		       n[STAT_PORT], n[STAT_QP]);
	}
}

void stat_print(const struct stat_sample *s, const struct stat_sample *prev, bool json)
{
	double dt = prev ? (double)(s->mono_ns - prev->mono_ns) / 1e9 : 0;

	if (json) {
		json_sample(s, prev, true);
		fflush(stdout);
		return;
	}
	for (unsigned i = 0; i < s->nproc; i++) {
		const struct stat_proc *p = &s->proc[i];

		text_proc_head(p);
		for (unsigned j = 0; !p->err && j < p->nrec; j++)
			text_rec(&p->rec[j], prev_rec(prev, p->pid, &p->rec[j]), dt);
	}
	fflush(stdout);
}
