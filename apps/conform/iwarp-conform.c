/* iwarp-conform: verbs conformance checks of two RDMA devices against each other
 * (docs/conform.md, iwarp-conform(1)).
 *
 *   iwarp-conform --server [ADDR]       the side that listens (ADDR: every address if none)
 *   iwarp-conform --client ADDR         the side that connects to the server at ADDR
 *   iwarp-conform --wire-target [ADDR]  the device under test of the wire checks, which a
 *                                       scripted peer drives (iwarp-conform-wire, wt_target.c)
 *
 * Each side uses whatever device its libibverbs gives it; a TCP control channel keeps the
 * two in step and carries each side's verdict, so both print and report the same rows.
 * Exit status: 0 when no check FAILed, 1 when one did (or the run broke), 2 for bad usage. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ic.h"
#include "wt.h"

struct opts {
	bool server, wire, list;
	const char *addr, *port, *ctl_addr, *ctl_port, *md, *junit, *fault;
	char ctl_port_buf[16];
};

static void usage(FILE *f)
{
	fprintf(f, "usage: iwarp-conform --server [ADDR] [options]\n"
		   "       iwarp-conform --client ADDR [options]\n"
		   "       iwarp-conform --wire-target [ADDR] [--port PORT] [--ctl-port PORT]\n"
		   "       iwarp-conform --list\n"
		   "options: --port PORT (7471)  --ctl-port PORT (PORT + 1)  --ctl-addr ADDR\n"
		   "         --report-md FILE  --junit FILE  --peer-fault dereg-mr (server)\n"
		   "         --peer-fault writable-r (wire target)\n");
}

/* Each fault belongs to one role: dereg-mr to the server, writable-r to the wire target. */
static bool fault_fits(const struct opts *o)
{
	return (o->server && !strcmp(o->fault, "dereg-mr")) ||
	       (o->wire && !strcmp(o->fault, "writable-r"));
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "server", no_argument, NULL, 's' }, { "client", required_argument, NULL, 'c' },
		{ "wire-target", no_argument, NULL, 'w' },
		{ "port", required_argument, NULL, 'p' }, { "ctl-port", required_argument, NULL, 'P' },
		{ "ctl-addr", required_argument, NULL, 'A' },
		{ "report-md", required_argument, NULL, 'm' },
		{ "junit", required_argument, NULL, 'j' },
		{ "peer-fault", required_argument, NULL, 'f' }, { "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	int c, roles = 0;
	memset(o, 0, sizeof(*o));
	o->port = "7471";
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->server = true; roles++; break;
		case 'w': o->wire = true; roles++; break;
		case 'c': o->addr = optarg; roles++; break;
		case 'p': o->port = optarg; break;
		case 'P': o->ctl_port = optarg; break;
		case 'A': o->ctl_addr = optarg; break;
		case 'm': o->md = optarg; break;
		case 'j': o->junit = optarg; break;
		case 'f': o->fault = optarg; break;
		case 'l': o->list = true; break;
		case 'h': usage(stdout); exit(0);
		default: return -1;
		}
	}
	if (o->list)
		return optind == argc && roles == 0 ? 0 : -1;
	if ((o->server || o->wire) && optind < argc)
		o->addr = argv[optind++];
	char *end;
	long port = strtol(o->port, &end, 10);
	if (roles != 1 || optind != argc || *end || port < 1 || port > 65534 ||
	    (o->fault && !fault_fits(o)))
		return -1;
	if (!o->ctl_port) {
		snprintf(o->ctl_port_buf, sizeof(o->ctl_port_buf), "%ld", port + 1);
		o->ctl_port = o->ctl_port_buf;
	}
	if (!o->ctl_addr && (!o->server || o->wire))
		o->ctl_addr = o->addr;
	return 0;
}

/* Both sides' device names and the largest message both ports take. */
static int hello(struct ic *ic)
{
	struct ic_msg m;
	memset(&m, 0, sizeof(m));
	m.type = M_HELLO;
	m.check = (uint32_t)ic_nchecks;
	m.max_msg = ic->port.max_msg_sz;
	snprintf(m.text, sizeof(m.text), "%s", ic->dev_name);
	if (ic_ctl_send(ic, &m) != 0 || ic_ctl_recv(ic, &m, 4 * IC_WAIT_MS) != 0 ||
	    m.type != M_HELLO) {
		fprintf(stderr, "iwarp-conform: no greeting from the peer\n");
		return -1;
	}
	if (m.check != (uint32_t)ic_nchecks) {
		fprintf(stderr, "iwarp-conform: the peer has %u checks, this side %d: run the same "
				"version on both\n", m.check, ic_nchecks);
		return -1;
	}
	snprintf(ic->peer_name, sizeof(ic->peer_name), "%.*s", IC_NAME - 1, m.text);
	ic->max_msg = m.max_msg < ic->port.max_msg_sz ? m.max_msg : ic->port.max_msg_sz;
	return 0;
}

/* Check i begins on both sides: the client names it, the server runs the check's `prep`
 * and confirms with its verdict. Sets *skip when the check cannot run (a side found it not
 * applicable or failed before any connection). */
static int begin(struct ic *ic, int i, bool *skip)
{
	const struct ic_check *k = &ic_checks[i];
	struct ic_msg m;
	memset(&m, 0, sizeof(m));
	if (!ic->server) {
		m.type = M_BEGIN;
		m.check = (uint32_t)i;
		snprintf(m.text, sizeof(m.text), "%s", k->id);
		if (ic_ctl_send(ic, &m) != 0 || ic_ctl_recv(ic, &m, 4 * IC_WAIT_MS) != 0 ||
		    m.type != M_READY || m.check != (uint32_t)i)
			return -1;
		*skip = m.verdict != IC_PASS;
		return 0;
	}
	if (ic_ctl_recv(ic, &m, 4 * IC_WAIT_MS) != 0 || m.type != M_BEGIN ||
	    m.check != (uint32_t)i || strcmp(m.text, k->id) != 0)
		return -1;
	if (k->prep && ic->res.v == IC_PASS)
		k->prep(ic);
	*skip = ic->res.v != IC_PASS;
	m.type = M_READY;
	m.verdict = ic->res.v;
	return ic_ctl_send(ic, &m);
}

static void run_half(struct ic *ic, int i)
{
	const struct ic_check *k = &ic_checks[i];
	if (k->local)
		k->local(ic);
	else if ((ic->server ? ic_cm_accept(ic, (uint32_t)i) : ic_cm_connect(ic, (uint32_t)i)) == 0)
		(ic->server ? k->srv : k->cli)(ic);
}

/* Everything a check made, in the order that frees it: the window and the connection before
 * the S-RQ and the buffers, the PDs last. */
static void free_check(struct ic *ic)
{
	if (ic->mw)
		ibv_dealloc_mw(ic->mw);
	ic_conn_free(ic);
	if (ic->srq && ibv_destroy_srq(ic->srq) != 0)
		ic_fail(ic, "ibv_destroy_srq at the end of the check failed");
	ic_bufs_free(ic);
	if (ic->pd2 && ibv_dealloc_pd(ic->pd2) != 0)
		ic_fail(ic, "ibv_dealloc_pd of the second PD at the end of the check failed");
	if (ic->pd && ibv_dealloc_pd(ic->pd) != 0)
		ic_fail(ic, "ibv_dealloc_pd at the end of the check failed");
	ic->mw = NULL;
	ic->srq = NULL;
	ic->pd = ic->pd2 = NULL;
}

/* Both verdicts make the row: FAIL if either side failed, NOT APPLICABLE if either found
 * it so, else PASS. A half that stopped because the peer's verdict came has none of its
 * own (run_check). */
static void combine(struct ic *ic, struct ic_row *row)
{
	const struct ic_msg *p = &ic->peer_res;
	enum ic_verdict mine = ic->res.v, theirs = (enum ic_verdict)p->verdict;
	row->v = mine == IC_FAIL || theirs == IC_FAIL ? IC_FAIL :
		 mine == IC_NA || theirs == IC_NA ? IC_NA : IC_PASS;
	row->why[0] = 0;
	/* the server's reason first, so both sides write the same text */
	const char *first = ic->server ? ic->res.why : p->text;
	const char *second = ic->server ? p->text : ic->res.why;
	enum ic_verdict v1 = ic->server ? mine : theirs, v2 = ic->server ? theirs : mine;
	if (v1 != IC_PASS && v2 != IC_PASS)
		snprintf(row->why, sizeof(row->why), "server: %s; client: %s", first, second);
	else if (v1 != IC_PASS)
		snprintf(row->why, sizeof(row->why), "server: %s", first);
	else if (v2 != IC_PASS)
		snprintf(row->why, sizeof(row->why), "client: %s", second);
}

/* Send this side's verdict and take the peer's (steps the peer sent for a half that ended
 * here are skipped). */
static int exchange(struct ic *ic)
{
	struct ic_msg m;
	memset(&m, 0, sizeof(m));
	m.type = M_RESULT;
	m.verdict = ic->res.v;
	snprintf(m.text, sizeof(m.text), "%s", ic->res.why);
	if (ic_ctl_send(ic, &m) != 0)
		return -1;
	while (!ic->peer_done) {
		if (ic_ctl_recv(ic, &ic->peer_res, 6 * IC_WAIT_MS) != 0)
			return -1;
		ic->peer_done = ic->peer_res.type == M_RESULT;
	}
	if (ic->peer_res.verdict > IC_NA) { /* never trust the peer's numbers */
		snprintf(ic->peer_res.text, sizeof(ic->peer_res.text), "unknown verdict %u",
			 ic->peer_res.verdict);
		ic->peer_res.verdict = IC_FAIL;
	}
	return 0;
}

static int run_check(struct ic *ic, int i, struct ic_row *row)
{
	memset(&ic->res, 0, sizeof(ic->res));
	ic->peer_done = false;
	memset(&ic->peer_res, 0, sizeof(ic->peer_res));
	row->check = &ic_checks[i];
	ic->check = i;
	ic_drain_async(ic);
	ic->pd = ibv_alloc_pd(ic->ctx);
	if (!ic->pd)
		ic_fail(ic, "ibv_alloc_pd failed: %s", strerror(errno));
	bool skip = false;
	if (begin(ic, i, &skip) != 0) {
		fprintf(stderr, "iwarp-conform: the sides disagree on check %d (%s)\n", i,
			ic_checks[i].id);
		free_check(ic);
		return -1;
	}
	if (!skip && ic->pd)
		run_half(ic, i);
	free_check(ic);
	/* a half stops early only for the peer's FAIL or NOT APPLICABLE: a PASS there means the
	 * two halves did not follow the same steps, which this side reports, so both rows say */
	if (ic->peer_done && ic->peer_res.verdict == IC_PASS)
		ic_fail(ic, "the sides' halves went out of step");
	if (exchange(ic) != 0) {
		fprintf(stderr, "iwarp-conform: the control channel broke in check %s\n",
			ic_checks[i].id);
		return -1;
	}
	combine(ic, row);
	printf("%-22s %-36s %s%s%s\n", row->check->id, row->check->clause,
	       ic_verdict_str(row->v), row->why[0] ? ": " : "", row->why);
	fflush(stdout);
	return 0;
}

static int setup(struct ic *ic, const struct opts *o)
{
	ic->ech = rdma_create_event_channel();
	if (!ic->ech) {
		fprintf(stderr, "iwarp-conform: rdma_create_event_channel: %s\n", strerror(errno));
		return -1;
	}
	if ((ic->server ? ic_cm_listen(ic, o->addr, o->port) :
			  ic_cm_resolve(ic, o->addr, o->port)) != 0)
		return -1;
	if (ibv_query_device(ic->ctx, &ic->dev) != 0 || ibv_query_port(ic->ctx, 1, &ic->port)) {
		fprintf(stderr, "iwarp-conform: cannot query device %s\n",
			ibv_get_device_name(ic->ctx->device));
		return -1;
	}
	snprintf(ic->dev_name, sizeof(ic->dev_name), "%s", ibv_get_device_name(ic->ctx->device));
	if (ic->server) {
		int lfd = ic_ctl_listen(o->ctl_addr ? o->ctl_addr : o->addr, o->ctl_port);
		if (lfd < 0)
			return -1;
		printf("iwarp-conform: server on %s, device %s, waiting for the client\n",
		       o->addr ? o->addr : "every address", ic->dev_name);
		fflush(stdout);
		ic->ctl = ic_ctl_accept(lfd);
		close(lfd);
	} else {
		ic->ctl = ic_ctl_connect(o->ctl_addr, o->ctl_port);
	}
	return ic->ctl >= 0 ? hello(ic) : -1;
}

static int write_reports(const struct ic *ic, const struct opts *o, const struct ic_row *rows,
			 int n)
{
	int rc = 0;
	if (o->md && ic_report_md(o->md, ic, rows, n) != 0)
		rc = -1;
	if (o->junit && ic_report_junit(o->junit, ic, rows, n) != 0)
		rc = -1;
	return rc;
}

static void list_checks(void)
{
	for (int i = 0; i < ic_nchecks; i++)
		printf("%-22s %-36s %s\n", ic_checks[i].id, ic_checks[i].clause, ic_checks[i].what);
}

int main(int argc, char **argv)
{
	struct opts o;
	if (parse(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	if (o.list) {
		list_checks();
		return 0;
	}
	if (o.wire)
		return wt_serve(o.addr, o.port, o.ctl_addr, o.ctl_port, o.fault != NULL);
	static struct ic ic;
	static struct ic_row rows[64];
	ic.server = o.server;
	ic.ctl = -1;
	ic.fault = o.fault ? F_DEREG_MR : F_NONE;
	int rc = setup(&ic, &o), n = 0, fails = 0;
	if (rc == 0) {
		printf("iwarp-conform: %s (server) / %s (client)\n", ic.server ? ic.dev_name :
		       ic.peer_name, ic.server ? ic.peer_name : ic.dev_name);
		for (; n < ic_nchecks && rc == 0; n++) {
			rc = run_check(&ic, n, &rows[n]);
			fails += rc == 0 && rows[n].v == IC_FAIL;
		}
		if (rc != 0)
			n--;
		printf("iwarp-conform: %d checks, %d FAIL%s\n", n, fails,
		       rc ? " (the run broke off)" : "");
		if (write_reports(&ic, &o, rows, n) != 0)
			rc = -1;
	}
	if (ic.ctl >= 0)
		close(ic.ctl);
	if (ic.listen_id)
		rdma_destroy_id(ic.listen_id);
	if (ic.ech)
		rdma_destroy_event_channel(ic.ech);
	return rc != 0 || fails ? 1 : 0;
}
