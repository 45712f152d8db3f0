/* softrnic-demo output: what was generated, the decoded FPDUs, the verdict, the TSV. */
#include "demo.h"

#include <stdio.h>

static const char *on_off(bool b)
{
	return b ? "on" : "off";
}

void report_session(const struct sess *s)
{
	const struct wt_endpoint *cl = &s->tcp.ep[WT_CLIENT], *sv = &s->tcp.ep[WT_SERVER];
	const struct mpa_conn_params *p = &s->cp;
	printf("  conn %zu: %u.%u.%u.%u:%u -> :%u  MPA rev %u%s, CRC %s, markers %s, IRD/ORD "
	       "%u/%u, RTR %s, MULPDU %u\n", s->conn, cl->ip[0], cl->ip[1], cl->ip[2], cl->ip[3],
	       cl->port, sv->port, p->rev, p->enhanced ? " enhanced" : "", on_off(p->crc),
	       on_off(p->markers_tx), p->local_ird, p->local_ord,
	       p->p2p ? mpa_rtr_name(p->rtr) : "none", s->mulpdu);
}

/* " Write 10, Read Request 2, ..." over the encoded FPDUs. */
static void print_opcode_counts(const struct demo_expect *expect)
{
	size_t per_op[16] = { 0 };
	for (size_t i = 0; i < expect->n; i++)
		per_op[expect->seg[i].opcode & 15]++;
	const char *sep = "";
	for (unsigned op = 0; op < 16; op++)
		if (per_op[op]) {
			printf("%s%s %zu", sep, iwd_opcode_name((uint8_t)op), per_op[op]);
			sep = ", ";
		}
}

void report_written(const struct demo_opts *o, unsigned frames, const struct demo_expect *expect)
{
	printf("wrote %s: %u frames, %zu FPDUs (", o->out, frames, expect->n);
	print_opcode_counts(expect);
	printf(")\n\nreading %s back with softrnic's own decoder, one line per FPDU:\n", o->out);
}

void report_fpdus(const struct demo_result *r)
{
	printf("%s\n", IWD_SEG_TITLE);
	for (size_t i = 0; i < r->segs.n; i++) {
		char line[256];
		iwd_seg_format(&r->segs.v[i], line, sizeof(line));
		printf("%s\n", line);
	}
}

void report_summary(const struct demo_opts *o, const struct demo_expect *expect,
		    const struct demo_result *r)
{
	printf("%s: %zu FPDUs encoded, %zu decoded back, ", o->out, expect->n, r->decoded);
	if (r->mismatches)
		printf("%d MISMATCHES\n", r->mismatches);
	else
		printf("every field as encoded\n");
}

void report_write_expect(const char *path, const struct demo_expect *expect,
			 const struct wt_capture *cap)
{
	FILE *f = fopen(path, "w");
	if (!f)
		demo_die("cannot write the expectation file");
	for (size_t i = 0; i < cap->nconns; i++) {
		char a[32], b[32];
		fprintf(f, "#conn\t%zu\t%s\t%s\n", i,
			wt_endpoint_str(&cap->conns[i].dir[0].src, a, sizeof(a)),
			wt_endpoint_str(&cap->conns[i].dir[1].src, b, sizeof(b)));
	}
	iwd_tsv_title(f, false);
	for (size_t i = 0; i < expect->n; i++)
		iwd_seg_tsv(f, &expect->seg[i], false);
	if (fclose(f))
		demo_die("cannot write the expectation file");
}
