/* The few Full Operation Phase FPDUs connection setup itself sends and receives (internal to
 * rn_cm): the RFC 6581 RTR of each type, the zero-length Read Response a READ RTR asks for,
 * the MPA-error Terminate, and a reader that extracts exactly one FPDU from the stream. Built
 * with the rdmap/ddp/mpa codecs; no I/O. */
#ifndef RN_CM_FPDU_H
#define RN_CM_FPDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mpa.h"
#include "rdmap.h"

/* STag and TO the RTR carries (siw sends STag 1, TO 0 on its zero-length WRITE RTR). */
#define RN_RTR_STAG 0x00000001u
#define RN_RTR_TO 0u

/* Largest FPDU these encoders produce: Terminate ULPDU + header + pad + marker + CRC. */
#define RN_CM_FPDU_MAX 96u

/* Encode the FPDU of the RTR of type rtr (exactly one of SEND/WRITE/READ) at tx's stream
 * position. Returns octets written or a negative errno (-EINVAL for another rtr value). */
ssize_t rn_rtr_encode(enum mpa_rtr rtr, struct mpa_tx *tx, uint8_t *out, size_t cap);

/* The zero-length Read Response answering the READ RTR rr. */
ssize_t rn_rtr_resp_encode(const struct rdmap_read_req *rr, struct mpa_tx *tx, uint8_t *out,
			   size_t cap);

/* A Terminate (layer LLP, etype MPA, ecode), no header copies, MSN 1. */
ssize_t rn_term_encode(enum mpa_ecode ecode, struct mpa_tx *tx, uint8_t *out, size_t cap);

/* One-FPDU reader: keeps the first MPA_RX_HEAD_MAX ULPDU octets, which is all an RTR, a Read
 * Response to it or a Terminate can hold. */
struct rn_fpdu_reader {
	struct mpa_rx rx;
	uint8_t ulpdu[MPA_RX_HEAD_MAX];
	size_t ulpdu_len; /* ULPDU_Length of the FPDU */
	size_t have;      /* octets of it in ulpdu[] (all of it unless ulpdu_len is larger) */
};

enum rn_fpdu_rd {
	RN_FPDU_MORE,  /* input consumed, FPDU incomplete */
	RN_FPDU_DONE,  /* one FPDU complete (CRC checked when on); input after it untouched */
	RN_FPDU_ERROR, /* framing error: mpa_rx_error(&r->rx) */
};

void rn_fpdu_reader_init(struct rn_fpdu_reader *r, bool crc, bool markers);

/* Consume octets of in[0..len) up to the end of one FPDU; *used says how many. */
enum rn_fpdu_rd rn_fpdu_read(struct rn_fpdu_reader *r, const uint8_t *in, size_t len,
			     size_t *used);

/* What the first FPDU a side waits for turned out to be. */
enum rn_rtr_verdict {
	RN_RTR_OK,        /* the expected message */
	RN_RTR_TERMINATE, /* the peer sent a Terminate: *term is its error */
	RN_RTR_BAD,       /* anything else */
};

/* Responder: is the FPDU the RTR of type expect? A READ RTR's request goes to *rr. */
enum rn_rtr_verdict rn_rtr_check(enum mpa_rtr expect, const struct rn_fpdu_reader *r,
				 struct rdmap_read_req *rr, struct iwarp_err *term);

/* Initiator after a READ RTR: is the FPDU the zero-length Read Response to sink_stag? */
enum rn_rtr_verdict rn_rtr_resp_check(uint32_t sink_stag, const struct rn_fpdu_reader *r,
				      struct iwarp_err *term);

#endif
