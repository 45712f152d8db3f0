/* softrnic-demo internals: the session script (scenarios.c) drives the encoding plumbing
 * (session.c) which records what it encodes; check.c reads the pcap back and compares;
 * report.c prints. */
#ifndef DEMO_H
#define DEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iwdecode.h"
#include "mpa.h"
#include "rdmap.h"
#include "wiretrace.h"

#define DEMO_MAX_FPDUS 4096
#define DEMO_MAX_CONNS 4

struct demo_opts {
	const char *out, *expect, *scenario;
	int crc, markers;       /* -1: the scenario's default */
	unsigned mss, mulpdu, coalesce, port, seed;
	bool quiet;
};

/* Every FPDU encoded, in encoding order, with the fields the decoder must find. */
struct demo_expect {
	struct iwd_seg seg[DEMO_MAX_FPDUS];
	size_t n;
};

/* What a scenario set up, to check the pcap against. */
struct demo_plan {
	size_t nconns;
	bool crc[DEMO_MAX_CONNS], markers[DEMO_MAX_CONNS];
};

/* One connection being generated: the TCP model plus each side's MPA/DDP sender state. */
struct sess {
	struct wt_tcp tcp;
	size_t conn;                  /* index in the capture (order of SYNs) */
	struct demo_expect *expect;
	struct mpa_tx tx[2];
	uint32_t msn[2][RDMAP_NQUEUES];
	size_t nfpdu[2];
	uint32_t mulpdu;
	unsigned coalesce;            /* FPDUs per TCP send */
	uint8_t pend[2 * 65536 + 4096];
	size_t pend_len;
	unsigned pend_n;
	int pend_side;
	struct mpa_conn_params cp, sp; /* client's and server's view */
	uint8_t last_ulpdu[2][65536]; /* the latest untagged ULPDU each side sent: the
				       * "offending" segment a Terminate reports */
	size_t last_ulpdu_len[2];
};

/* Negotiation each connection of a scenario asks for. */
struct sess_params {
	uint16_t client_port;
	bool crc, markers;
	uint16_t ird, ord;
};

/* ---- session.c: encoding plumbing ---------------------------------------------------- */

_Noreturn void demo_die(const char *what);
void demo_check(bool ok, const char *what);

/* TCP handshake, MPA Request/Reply through the real negotiation, RTR if P2P. */
void sess_open(struct sess *s, struct wt_writer *w, size_t conn, const struct demo_opts *o,
	       const struct sess_params *p, struct demo_expect *expect);
/* Sends what is queued, ACKs, FIN from the client. */
void sess_close(struct sess *s);
/* Sends the FPDUs queued for coalescing. */
void sess_flush(struct sess *s);
/* Segments and sends one RDMAP message. body/len is the DDP payload. Returns the message's
 * MSN (untagged) or 0. */
uint32_t sess_send_msg(struct sess *s, int side, enum rdmap_opcode op, uint32_t stag,
		       uint64_t to, uint32_t inv, const uint8_t *body, size_t len);
void sess_send_read_req(struct sess *s, int side, uint32_t sink_stag, uint64_t sink_to,
			uint32_t size, uint32_t src_stag, uint64_t src_to);
/* A Terminate reporting e about the last untagged ULPDU the peer sent. */
void sess_send_terminate(struct sess *s, int side, struct iwarp_err e);

/* ---- scenarios.c: the session scripts ---------------------------------------------------- */

/* Writes the scenario o->scenario ("demo" or "sweep") with w; dies on an unknown name. */
void demo_run_scenario(struct wt_writer *w, const struct demo_opts *o,
		       struct demo_expect *expect, struct demo_plan *plan);

/* ---- check.c: reading the pcap back --------------------------------------------------- */

struct demo_result {
	size_t frames, conns;
	size_t decoded;              /* FPDUs decoded and matched with an encoded one */
	int mismatches;
	struct iwd_seglist segs;     /* every decoded FPDU, in frame order */
};

/* Decodes cap (the pcap read back) with iwdecode and compares it with expect and plan,
 * printing a MISMATCH line per difference (counted in r->mismatches). Fills in expect the
 * fields only the decoder knows (frames, stream positions). */
void demo_check_capture(const struct wt_capture *cap, struct demo_expect *expect,
			const struct demo_plan *plan, struct demo_result *r);
void demo_result_free(struct demo_result *r);

/* ---- report.c: printing ---------------------------------------------------------------- */

/* One line on what connection s negotiated. */
void report_session(const struct sess *s);
/* The pcap is written: its size and what it carries. */
void report_written(const struct demo_opts *o, unsigned frames, const struct demo_expect *expect);
void report_fpdus(const struct demo_result *r);
void report_summary(const struct demo_opts *o, const struct demo_expect *expect,
		    const struct demo_result *r);
/* The TSV of encoded fields that tests/wire/iwarp_check.py compares with tshark. */
void report_write_expect(const char *path, const struct demo_expect *expect,
			 const struct wt_capture *cap);

#endif
