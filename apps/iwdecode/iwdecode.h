/* iwdecode: decode the iWARP traffic of captured TCP connections with softrnic's own MPA,
 * DDP and RDMAP code. Used by iwarp-dump, the demo and the wire tests.
 *
 * For each connection of a wt_capture whose client stream starts with an MPA Request and
 * whose server stream starts with an MPA Reply, the frames are parsed (mpa_frame_parse), CRC
 * and markers are derived from their flags the way both endpoints must (C from either side
 * turns CRC on both ways; M in a frame asks for markers in the stream its sender receives),
 * and each direction's remaining stream is run through the streaming FPDU decoder (mpa_rx),
 * then every ULPDU through the DDP header decoder and the RDMAP decoder.
 */
#ifndef IWDECODE_H
#define IWDECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mpa.h"
#include "wiretrace.h"

/* One FPDU = one DDP segment. */
struct iwd_seg {
	size_t conn;            /* connection index in the capture */
	int dir;                /* WT_CLIENT: client->server, WT_SERVER: server->client */
	size_t index;           /* FPDU number within this direction, from 0 */
	uint64_t off;           /* stream offset of the FPDU's first octet (a leading marker
				 * included) */
	size_t wire_len;        /* octets it occupies in the stream (markers, pad, CRC included) */
	uint32_t mpa_pos;       /* offset of its first octet from the start of Full Operation
				 * (the marker origin) */
	uint32_t frame;         /* frame that completes it (carries its last octet) */
	uint32_t first_frame;   /* frame carrying its first octet */
	uint32_t seq;           /* TCP sequence number of its first octet */
	size_t ulpdu_len;       /* MPA ULPDU_Length */
	bool crc;               /* CRC negotiated (and then verified good: a bad one is an error) */

	/* DDP */
	bool ddp_ok;            /* header decoded and valid */
	bool tagged, last;
	uint8_t dv, rsvd;
	uint32_t stag;
	uint64_t to;
	uint32_t qn, msn, mo;
	uint32_t payload_len;   /* octets after the DDP (and RDMAP) headers */

	/* RDMAP */
	bool rdmap_ok;
	uint8_t rv, opcode;
	uint32_t inval_stag;    /* Send with Invalidate / with SE and Invalidate */
	/* Read Request */
	uint32_t sink_stag, rd_size, src_stag;
	uint64_t sink_to, src_to;
	/* Terminate */
	uint8_t term_layer, term_etype, term_ecode;

	const uint8_t *ulpdu;   /* the ULPDU (valid during the callback only) */
	const char *error;      /* NULL, or why this FPDU was not accepted */
};

struct iwd_conn {
	size_t index;
	char client[32], server[32];
	bool mpa;               /* Request and Reply found */
	struct mpa_frame req, rep;
	uint32_t req_frame, rep_frame;
	bool rejected;
	bool crc;               /* CRC on, both directions */
	bool markers[2];        /* stream in direction d carries markers */
	size_t fpdus[2];        /* FPDUs accepted per direction */
	size_t trailing[2];     /* stream octets after the last complete FPDU */
	size_t errors;
	char error[160];        /* first error, "" if none */
};

/* Called for every FPDU in stream order per direction (client stream first). */
typedef void (*iwd_seg_cb)(void *arg, const struct iwd_conn *c, const struct iwd_seg *s);

/* Decodes connection idx of cap. Returns 0 if it is an MPA connection and every FPDU was
 * accepted, 1 if it is not an MPA connection (c->mpa false), -1 on any error (c->error). */
int iwd_decode_conn(const struct wt_capture *cap, size_t idx, struct iwd_conn *c,
		    iwd_seg_cb cb, void *arg);

/* ---- output (iwd_format.c) ------------------------------------------------------------- */

/* RDMAP opcode name ("Write", "Read Request", ...). */
const char *iwd_opcode_name(uint8_t opcode);

/* Column titles matching iwd_seg_format()'s lines. */
#define IWD_SEG_TITLE "frame dir opcode                T/U L  fields"

/* One-line description of s, as iwarp-dump prints it (no newline). */
void iwd_seg_format(const struct iwd_seg *s, char *buf, size_t len);

/* Tab-separated form read by tests/wire/iwarp_check.py: the "#frame ..." title line and
 * one line per FPDU. decoded (rows from a capture) adds two last columns: the decoder's error
 * or "-", and the frame carrying the FPDU's first octet (frame, the first column, is the
 * one after which the whole FPDU was in order). */
void iwd_tsv_title(FILE *f, bool decoded);
void iwd_seg_tsv(FILE *f, const struct iwd_seg *s, bool decoded);

/* ---- collecting FPDUs (iwd_seglist.c) --------------------------------------------------- */

/* A growing copy of the FPDUs iwd_decode_conn() reports (ulpdu pointers cleared). */
struct iwd_seglist {
	struct iwd_seg *v;
	size_t n, cap;
	bool oom;               /* an append failed: the list is incomplete */
};

/* An iwd_seg_cb: appends s to the struct iwd_seglist at arg. */
void iwd_seglist_add(void *arg, const struct iwd_conn *c, const struct iwd_seg *s);
/* Sorts into wire order: by frame, then connection, direction and index. */
void iwd_seglist_sort(struct iwd_seglist *l);
void iwd_seglist_free(struct iwd_seglist *l);

#endif
