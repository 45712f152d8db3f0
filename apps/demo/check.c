/* softrnic-demo self-check: decodes the pcap it wrote with iwdecode and compares every FPDU
 * with what was encoded. */
#include "demo.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Matching decoded FPDUs, which arrive per connection and direction, with the encoded ones,
 * recorded in sending order. */
struct matcher {
	struct demo_expect *expect;
	struct demo_result *r;
	size_t *map[DEMO_MAX_CONNS][2];  /* expect indexes per conn/dir, in order */
	size_t nmap[DEMO_MAX_CONNS][2];
	size_t next[DEMO_MAX_CONNS][2];  /* next map entry to match */
};

static void mismatch(struct demo_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void mismatch(struct demo_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("MISMATCH");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	r->mismatches++;
}

#define CMP(field, fmt)                                                                      \
	do {                                                                                 \
		if (e->field != g->field)                                                    \
			mismatch(r, " conn %zu %s FPDU %zu: " #field " encoded " fmt            \
				 " decoded " fmt, g->conn, g->dir ? "s>c" : "c>s", g->index,     \
				 e->field, g->field);                                        \
	} while (0)

static void compare_fields(struct demo_result *r, const struct iwd_seg *e,
			   const struct iwd_seg *g)
{
	CMP(index, "%zu");
	CMP(ulpdu_len, "%zu");
	CMP(tagged, "%d");
	CMP(last, "%d");
	CMP(opcode, "%u");
	CMP(stag, "0x%x");
	CMP(to, "0x%" PRIx64);
	CMP(qn, "%u");
	CMP(msn, "%u");
	CMP(mo, "%u");
	CMP(inval_stag, "0x%x");
	CMP(sink_stag, "0x%x");
	CMP(sink_to, "0x%" PRIx64);
	CMP(rd_size, "%u");
	CMP(src_stag, "0x%x");
	CMP(src_to, "0x%" PRIx64);
	CMP(crc, "%d");
	CMP(payload_len, "%u");
	if (e->opcode == RDMAP_OP_TERMINATE) {
		CMP(term_layer, "%u");
		CMP(term_etype, "%u");
		CMP(term_ecode, "%u");
	}
}

/* iwd_seg_cb: keeps g for printing and compares it with the next FPDU encoded in its
 * connection and direction. */
static void match_fpdu(void *arg, const struct iwd_conn *c, const struct iwd_seg *g)
{
	struct matcher *m = arg;
	struct demo_result *r = m->r;
	iwd_seglist_add(&r->segs, c, g);
	if (g->conn >= DEMO_MAX_CONNS || m->next[g->conn][g->dir] >= m->nmap[g->conn][g->dir]) {
		mismatch(r, ": decoded an FPDU that was never encoded (conn %zu dir %d)", g->conn,
			 g->dir);
		return;
	}
	struct iwd_seg *e = &m->expect->seg[m->map[g->conn][g->dir][m->next[g->conn][g->dir]++]];
	r->decoded++;
	if (g->error)
		mismatch(r, " conn %zu FPDU %zu: decoder error %s", g->conn, g->index, g->error);
	compare_fields(r, e, g);
	/* what only the decoder knows, for the TSV */
	e->frame = g->frame;
	e->mpa_pos = g->mpa_pos;
	e->wire_len = g->wire_len;
	e->first_frame = g->first_frame;
	e->seq = g->seq;
}

static void matcher_init(struct matcher *m, struct demo_expect *expect, struct demo_result *r)
{
	memset(m, 0, sizeof(*m));
	m->expect = expect;
	m->r = r;
	for (size_t i = 0; i < expect->n; i++) {
		size_t c = expect->seg[i].conn;
		int d = expect->seg[i].dir;
		size_t *p = realloc(m->map[c][d], (m->nmap[c][d] + 1) * sizeof(*p));
		if (!p)
			demo_die("out of memory");
		p[m->nmap[c][d]++] = i;
		m->map[c][d] = p;
	}
}

static void matcher_free(struct matcher *m)
{
	for (size_t c = 0; c < DEMO_MAX_CONNS; c++)
		for (int d = 0; d < 2; d++)
			free(m->map[c][d]);
}

/* Decodes connection i and checks what was negotiated and that nothing is left over. */
static void check_conn(struct matcher *m, const struct wt_capture *cap, size_t i,
		       const struct demo_plan *plan)
{
	struct demo_result *r = m->r;
	struct iwd_conn ic;
	int rc = iwd_decode_conn(cap, i, &ic, match_fpdu, m);
	if (rc != 0) {
		mismatch(r, ": conn %zu does not decode: %s", i, rc > 0 ? "not MPA" : ic.error);
		return;
	}
	if (ic.crc != plan->crc[i] || ic.markers[0] != plan->markers[i] ||
	    ic.markers[1] != plan->markers[i])
		mismatch(r, ": conn %zu negotiated CRC %d markers %d/%d", i, ic.crc, ic.markers[0],
			 ic.markers[1]);
	if (ic.trailing[0] || ic.trailing[1])
		mismatch(r, ": conn %zu has %zu/%zu undecoded trailing octets", i, ic.trailing[0],
			 ic.trailing[1]);
	for (int d = 0; d < 2; d++)
		if (m->next[i][d] != m->nmap[i][d])
			mismatch(r, ": conn %zu dir %d: %zu FPDUs encoded, %zu decoded", i, d,
				 m->nmap[i][d], m->next[i][d]);
}

void demo_check_capture(const struct wt_capture *cap, struct demo_expect *expect,
			const struct demo_plan *plan, struct demo_result *r)
{
	memset(r, 0, sizeof(*r));
	r->frames = cap->nframes;
	r->conns = cap->nconns;
	if (cap->bad_ip_csum || cap->bad_tcp_csum)
		mismatch(r, ": %zu bad IPv4 / %zu bad TCP checksums in our own pcap",
			 cap->bad_ip_csum, cap->bad_tcp_csum);
	if (cap->nconns != plan->nconns)
		mismatch(r, ": %zu connections written, %zu read back", plan->nconns, cap->nconns);
	static struct matcher m;
	matcher_init(&m, expect, r);
	for (size_t i = 0; i < cap->nconns && i < DEMO_MAX_CONNS; i++)
		check_conn(&m, cap, i, plan);
	matcher_free(&m);
	if (r->segs.oom)
		demo_die("out of memory");
	iwd_seglist_sort(&r->segs);
}

void demo_result_free(struct demo_result *r)
{
	iwd_seglist_free(&r->segs);
}
