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
#include <string.h>

#include "iwdecode.h"
#include "rdmap.h"

struct collect {
	struct iwd_seg *v;
	size_t n, cap;
	int oom;
};

static void collect_cb(void *arg, const struct iwd_conn *c, const struct iwd_seg *s)
{
	(void)c;
	struct collect *col = arg;
	if (col->n == col->cap) {
		size_t ncap = col->cap ? col->cap * 2 : 256;
		struct iwd_seg *v = realloc(col->v, ncap * sizeof(*v));
		if (!v) {
			col->oom = 1;
			return;
		}
		col->v = v;
		col->cap = ncap;
	}
	col->v[col->n] = *s;
	col->v[col->n].ulpdu = NULL;
	col->n++;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct iwd_seg *x = a, *y = b;
	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	if (x->conn != y->conn)
		return x->conn < y->conn ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void print_tsv(const struct iwd_seg *s)
{
	printf("%u\t%zu\t%s\t%zu\t%zu\t%d\t%d\t%u\t0x%08x\t0x%016llx\t%u\t%u\t%u\t0x%08x\t"
	       "0x%08x\t0x%016llx\t%u\t0x%08x\t0x%016llx\t%d\t%zu\t%u\t%u\t%u\t%u\t%zu\t%s\n",
	       s->frame, s->conn, s->dir == WT_CLIENT ? "c>s" : "s>c", s->index, s->ulpdu_len,
	       s->tagged, s->last, s->opcode, s->stag, (unsigned long long)s->to, s->qn, s->msn,
	       s->mo, s->inval_stag, s->sink_stag, (unsigned long long)s->sink_to, s->rd_size,
	       s->src_stag, (unsigned long long)s->src_to, s->crc, mpa_pad_len(s->ulpdu_len),
	       s->term_layer, s->term_etype, s->term_ecode, s->mpa_pos, s->wire_len,
	       s->error ? s->error : "-");
}

static void print_conn(const struct iwd_conn *c)
{
	printf("conn %zu: %s -> %s", c->index, c->client, c->server);
	if (!c->mpa) {
		printf("  (not MPA)\n");
		return;
	}
	printf("  MPA rev %u", c->rep.rev);
	if (c->req.enhanced) {
		printf(" req IRD %u ORD %u%s%s%s", c->req.v2.ird, c->req.v2.ord,
		       c->req.v2.p2p ? " P2P" : "",
		       c->req.v2.rtr & MPA_RTR_WRITE ? " +write-RTR" : "",
		       c->req.v2.rtr & MPA_RTR_READ ? " +read-RTR" : "");
	}
	if (c->rep.enhanced) {
		printf(" | rep IRD %u ORD %u%s%s%s", c->rep.v2.ird, c->rep.v2.ord,
		       c->rep.v2.p2p ? " P2P" : "",
		       c->rep.v2.rtr & MPA_RTR_WRITE ? " write-RTR" : "",
		       c->rep.v2.rtr & MPA_RTR_READ ? " read-RTR" : "");
	}
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

int main(int argc, char **argv)
{
	int tsv = 0, quiet = 0, opt;
	while ((opt = getopt(argc, argv, "tqh")) != -1) {
		switch (opt) {
		case 't': tsv = 1; break;
		case 'q': quiet = 1; break;
		default:
			fprintf(stderr, "usage: %s [-t] [-q] FILE.pcap\n", argv[0]);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: %s [-t] [-q] FILE.pcap\n", argv[0]);
		return 2;
	}
	const char *path = argv[optind];
	struct wt_capture cap;
	char err[256];
	if (wt_capture_load(path, &cap, err, sizeof(err))) {
		fprintf(stderr, "iwarp-dump: %s\n", err);
		return 2;
	}
	struct collect col = { 0 };
	struct iwd_conn *conns = calloc(cap.nconns ? cap.nconns : 1, sizeof(*conns));
	if (!conns) {
		fprintf(stderr, "iwarp-dump: out of memory\n");
		return 2;
	}
	int status = 0;
	size_t nmpa = 0;
	for (size_t i = 0; i < cap.nconns; i++) {
		int rc = iwd_decode_conn(&cap, i, &conns[i], collect_cb, &col);
		if (rc < 0)
			status = 1;
		if (conns[i].mpa)
			nmpa++;
	}
	if (col.oom) {
		fprintf(stderr, "iwarp-dump: out of memory\n");
		return 2;
	}
	if (col.n)
		qsort(col.v, col.n, sizeof(*col.v), seg_cmp);

	if (tsv) {
		for (size_t i = 0; i < cap.nconns; i++) {
			const struct iwd_conn *c = &conns[i];
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
		printf("#frame\tconn\tdir\tidx\tulpdu_len\ttagged\tlast\topcode\tstag\tto\tqn\tmsn\t"
		       "mo\tinval\tsink_stag\tsink_to\trd_size\tsrc_stag\tsrc_to\tcrc\tpad\t"
		       "term_layer\tterm_etype\tterm_ecode\tmpa_pos\twire_len\terror\n");
		for (size_t i = 0; i < col.n; i++)
			print_tsv(&col.v[i]);
		for (size_t i = 0; i < cap.nconns; i++)
			if (conns[i].error[0])
				printf("#error\tconn %zu\t%s\n", i, conns[i].error);
	} else {
		printf("%s: %zu frames, %zu TCP connections, %zu MPA\n", path, cap.nframes,
		       cap.nconns, nmpa);
		if (cap.bad_ip_csum || cap.bad_tcp_csum)
			printf("warning: %zu bad IPv4 and %zu bad TCP checksums\n", cap.bad_ip_csum,
			       cap.bad_tcp_csum);
		for (size_t i = 0; i < cap.nconns; i++)
			print_conn(&conns[i]);
		if (!quiet) {
			char line[256];
			for (size_t i = 0; i < col.n; i++) {
				iwd_seg_format(&col.v[i], line, sizeof(line));
				printf("%s\n", line);
			}
		}
		size_t per_op[16] = { 0 }, messages[16] = { 0 }, bad = 0;
		for (size_t i = 0; i < col.n; i++) {
			if (col.v[i].error) {
				bad++;
				continue;
			}
			per_op[col.v[i].opcode & 15]++;
			if (col.v[i].last)
				messages[col.v[i].opcode & 15]++;
		}
		printf("FPDUs: %zu accepted, %zu rejected;", col.n - bad, bad);
		for (unsigned op = 0; op < 16; op++)
			if (per_op[op])
				printf(" %s %zu (%zu msgs)", iwd_opcode_name((uint8_t)op), per_op[op],
				       messages[op]);
		printf("\n");
	}
	free(col.v);
	free(conns);
	wt_capture_free(&cap);
	return status;
}
