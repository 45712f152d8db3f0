/* iwarp-dump: decode the iWARP (MPA/DDP/RDMAP) traffic in a pcap with softrnic's own codecs.
 *
 *   iwarp-dump [-t] [-q] FILE.pcap
 *
 * Finds the MPA connections (TCP streams that start with an MPA Request answered by a Reply),
 * follows their negotiation (CRC, markers) and prints one line per DDP segment (FPDU), in
 * frame order: frame, direction, opcode, tagged, last, STag/TO or QN/MSN/MO, lengths, CRC.
 * -t prints tab-separated fields instead (for scripts), -q only the connection summaries.
 * Exit status: 0 all FPDUs accepted, 1 some error, 2 usage or unreadable file.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "iwdecode.h"

/* Every connection of a capture, decoded. */
struct dump {
	struct wt_capture cap;
	struct iwd_conn *conns;     /* cap.nconns of them */
	struct iwd_seglist segs;    /* all FPDUs, in frame order */
	size_t nmpa;                /* MPA connections */
	int status;                 /* exit status: 1 if some FPDU or connection was refused */
};

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-t] [-q] FILE.pcap\n", argv0);
	return 2;
}

/* Loads and decodes path; on failure prints why and returns -1. */
static int dump_load(struct dump *d, const char *path)
{
	char err[256];
	if (wt_capture_load(path, &d->cap, err, sizeof(err))) {
		fprintf(stderr, "iwarp-dump: %s\n", err);
		return -1;
	}
	d->conns = calloc(d->cap.nconns ? d->cap.nconns : 1, sizeof(*d->conns));
	if (!d->conns) {
		fprintf(stderr, "iwarp-dump: out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < d->cap.nconns; i++) {
		if (iwd_decode_conn(&d->cap, i, &d->conns[i], iwd_seglist_add, &d->segs) < 0)
			d->status = 1;
		if (d->conns[i].mpa)
			d->nmpa++;
	}
	if (d->segs.oom) {
		fprintf(stderr, "iwarp-dump: out of memory\n");
		return -1;
	}
	iwd_seglist_sort(&d->segs);
	return 0;
}

static void dump_free(struct dump *d)
{
	iwd_seglist_free(&d->segs);
	free(d->conns);
	wt_capture_free(&d->cap);
}

/* "#conn" lines, and "#req"/"#rep" with the MPA frame flags of each MPA connection. */
static void print_tsv_conns(const struct dump *d)
{
	for (size_t i = 0; i < d->cap.nconns; i++) {
		const struct iwd_conn *c = &d->conns[i];
		printf("#conn\t%zu\t%s\t%s\t%s\n", i, c->client, c->server,
		       c->mpa ? "mpa" : "other");
		if (!c->mpa || !c->rep_frame)
			continue;
		const struct mpa_frame *f[2] = { &c->req, &c->rep };
		uint32_t fr[2] = { c->req_frame, c->rep_frame };
		for (int k = 0; k < 2; k++)
			printf("#%s\t%zu\t%u\t%d\t%d\t%d\t%u\t%u\n", k ? "rep" : "req", i,
			       fr[k], f[k]->markers, f[k]->crc, f[k]->reject, f[k]->rev,
			       f[k]->pd_len + (f[k]->enhanced ? MPA_V2_BLOCK_LEN : 0));
	}
}

static void print_tsv(const struct dump *d)
{
	print_tsv_conns(d);
	iwd_tsv_title(stdout, true);
	for (size_t i = 0; i < d->segs.n; i++)
		iwd_seg_tsv(stdout, &d->segs.v[i], true);
	for (size_t i = 0; i < d->cap.nconns; i++)
		if (d->conns[i].error[0])
			printf("#error\tconn %zu\t%s\n", i, d->conns[i].error);
}

/* The MPA v2 (enhanced) block of a Request or Reply; rtr_mark prefixes the RTR types. */
static void print_mpa_v2(const char *label, const char *rtr_mark, const struct mpa_frame *f)
{
	if (!f->enhanced)
		return;
	printf("%s IRD %u ORD %u%s", label, f->v2.ird, f->v2.ord, f->v2.p2p ? " P2P" : "");
	if (f->v2.rtr & MPA_RTR_WRITE)
		printf(" %swrite-RTR", rtr_mark);
	if (f->v2.rtr & MPA_RTR_READ)
		printf(" %sread-RTR", rtr_mark);
}

static void print_conn(const struct iwd_conn *c)
{
	printf("conn %zu: %s -> %s", c->index, c->client, c->server);
	if (!c->mpa) {
		printf("  (not MPA)\n");
		return;
	}
	printf("  MPA rev %u", c->rep.rev);
	print_mpa_v2(" req", "+", &c->req);
	print_mpa_v2(" | rep", "", &c->rep);
	if (c->rejected) {
		printf("  REJECTED\n");
		return;
	}
	printf(" | CRC %s, markers c>s %s s>c %s | FPDUs c>s %zu s>c %zu", c->crc ? "on" : "off",
	       c->markers[WT_CLIENT] ? "on" : "off", c->markers[WT_SERVER] ? "on" : "off",
	       c->fpdus[WT_CLIENT], c->fpdus[WT_SERVER]);
	if (c->trailing[0] || c->trailing[1])
		printf(" | trailing octets %zu/%zu", c->trailing[0], c->trailing[1]);
	printf("\n");
	if (c->error[0])
		printf("conn %zu: ERROR %s (%zu errors)\n", c->index, c->error, c->errors);
}

/* "FPDUs: N accepted, M rejected; Write 10 (2 msgs) ..." */
static void print_opcode_counts(const struct iwd_seglist *segs)
{
	size_t per_op[16] = { 0 }, messages[16] = { 0 }, bad = 0;
	for (size_t i = 0; i < segs->n; i++) {
		const struct iwd_seg *s = &segs->v[i];
		if (s->error) {
			bad++;
			continue;
		}
		per_op[s->opcode & 15]++;
		if (s->last)
			messages[s->opcode & 15]++;
	}
	printf("FPDUs: %zu accepted, %zu rejected;", segs->n - bad, bad);
	for (unsigned op = 0; op < 16; op++)
		if (per_op[op])
			printf(" %s %zu (%zu msgs)", iwd_opcode_name((uint8_t)op), per_op[op],
			       messages[op]);
	printf("\n");
}

static void print_text(const struct dump *d, const char *path, bool quiet)
{
	printf("%s: %zu frames, %zu TCP connections, %zu MPA\n", path, d->cap.nframes,
	       d->cap.nconns, d->nmpa);
	if (d->cap.bad_ip_csum || d->cap.bad_tcp_csum)
		printf("warning: %zu bad IPv4 and %zu bad TCP checksums\n", d->cap.bad_ip_csum,
		       d->cap.bad_tcp_csum);
	for (size_t i = 0; i < d->cap.nconns; i++)
		print_conn(&d->conns[i]);
	if (!quiet) {
		char line[256];
		for (size_t i = 0; i < d->segs.n; i++) {
			iwd_seg_format(&d->segs.v[i], line, sizeof(line));
			printf("%s\n", line);
		}
	}
	print_opcode_counts(&d->segs);
}

int main(int argc, char **argv)
{
	bool tsv = false, quiet = false;
	int opt;
	while ((opt = getopt(argc, argv, "tqh")) != -1) {
		switch (opt) {
		case 't': tsv = true; break;
		case 'q': quiet = true; break;
		default: return usage(argv[0]);
		}
	}
	if (optind + 1 != argc)
		return usage(argv[0]);
	const char *path = argv[optind];
	static struct dump d;
	if (dump_load(&d, path)) {
		dump_free(&d);
		return 2;
	}
	if (tsv)
		print_tsv(&d);
	else
		print_text(&d, path, quiet);
	int status = d.status;
	dump_free(&d);
	return status;
}
