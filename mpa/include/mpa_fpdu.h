/* MPA FPDU framing in Full Operation Phase (RFC 5044 §4, §5, §6).
 *
 * Wire format of one FPDU (network byte order, markers not shown):
 *
 *   ULPDU_Length (16) | ULPDU (ULPDU_Length octets) | PAD (0..3 zero octets) | CRC (32)
 *
 * - ULPDU_Length counts the ULPDU only: not itself, the pad, markers or the CRC (§4.1).
 * - PAD makes ULPDU_Length field + ULPDU + PAD a multiple of 4 octets (§4.1).
 * - CRC: the field is ALWAYS present (§4.1). With CRC negotiated it is CRC32c over every octet
 *   of the FPDU before it, markers included, and the 32-bit value mpa_crc32c() returns goes on
 *   the wire least significant octet first: value 0x2c4d0088 is sent as 88 00 4d 2c (pinned by
 *   golden siw capture vectors in the tests). Without CRC we send zeros (as siw does) and the
 *   receiver does not check it. So at EMSS 1448 siw sends 2 + 1442 + 0 + 4 = 1448 octets.
 * - Markers (only when negotiated, §4.3): 4 octets {Reserved(16)=0, FPDUPTR(16)} at every
 *   stream position p with p % 512 == 0, where p counts TCP octets from the first octet of
 *   Full Operation Phase (so the very first FPDU is preceded by a marker with FPDUPTR 0).
 *   FPDUPTR = octets from the first octet of the enclosing FPDU's ULPDU_Length field back to
 *   the marker; a marker that sits exactly on an FPDU boundary belongs to the FPDU that follows
 *   it and has FPDUPTR 0. Such a leading marker is part of (and CRC-covered by) that FPDU.
 *
 * Positions are uint32_t and wrap at 2^32, which is harmless: 2^32 is a multiple of 512.
 * Nothing here does I/O or allocates; all state lives in the caller-owned structs below.
 */
#ifndef MPA_FPDU_H
#define MPA_FPDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "mpa.h"

#define MPA_HDR_LEN 2            /* ULPDU_Length field */
#define MPA_CRC_LEN 4
#define MPA_MARKER_LEN 4
#define MPA_MARKER_INTERVAL 512  /* octets of TCP stream between marker starts */
#define MPA_MAX_ULPDU 65535u     /* 16-bit ULPDU_Length */
#define MPA_MAX_PAD 3
#define MPA_RX_HEAD_DEFAULT 64   /* default mpa_rx_cfg.head_len */
#define MPA_RX_HEAD_MAX 128      /* largest head_len the decoder can gather */

/* Pad octets after a ULPDU of ulpdu_len octets: (2 + ulpdu_len + pad) % 4 == 0. */
static inline size_t mpa_pad_len(size_t ulpdu_len)
{
	return (4 - ((MPA_HDR_LEN + ulpdu_len) & 3)) & 3;
}

/* Largest ULPDU that fits, with its FPDU, in one TCP segment of emss octets (RFC 5044 MULPDU,
 * formula in mpa_fpdu_tx.c). CRC space is always reserved,
 * as the RFC does, so the value does not depend on CRC negotiation.
 * E.g. emss 1448: 1442 without markers (what Linux siw sends), 1430 with markers.
 * Returns 0 if emss is too small to carry any ULPDU. */
size_t mpa_mulpdu(size_t emss, bool markers);

/* ----------------------------------------------------------------------------------------- */
/* Transmit                                                                                   */

struct mpa_tx {
	bool crc;      /* fill the CRC field with CRC32c (else zeros) */
	bool markers;  /* insert markers */
	uint32_t pos;  /* TCP stream octets sent since the start of Full Operation Phase (the
	                * marker origin). Starts at 0; a caller may set it to resume elsewhere. */
};

void mpa_tx_init(struct mpa_tx *tx, bool crc, bool markers);

/* Octets the FPDU for a ULPDU of ulpdu_len octets occupies on the wire if sent now (at
 * tx->pos): header + ULPDU + pad + markers + CRC. */
size_t mpa_tx_fpdu_len(const struct mpa_tx *tx, size_t ulpdu_len);

/* Copy encoder: frames the ULPDU gathered from iov[0..iovcnt) into out. The payload is
 * copied and CRCed in one pass (mpa_crc32c_copy). Returns the octets written (==
 * mpa_tx_fpdu_len() before the call) and advances tx->pos by it, or a negative errno with
 * nothing written and tx unchanged:
 *   -EMSGSIZE  ULPDU longer than MPA_MAX_ULPDU
 *   -ENOBUFS   cap too small for the whole FPDU
 *   -EINVAL    NULL iov with iovcnt > 0 or a NULL base with a length, or markers on and
 *              tx->pos not a multiple of 4 (FPDUs stay 4-aligned to the marker origin) */
ssize_t mpa_tx_encode(struct mpa_tx *tx, const struct iovec *iov, unsigned iovcnt,
		      uint8_t *out, size_t cap);

/* Zero-copy framing (markers off only): the caller sends
 *   hdr[0..MPA_HDR_LEN) | the ULPDU iov itself | trailer[0..trailer_len)
 * trailer = pad (zeros) followed by the 4-octet CRC field (zeros if CRC is off). */
struct mpa_tx_frame {
	uint8_t hdr[MPA_HDR_LEN];
	uint8_t trailer[MPA_MAX_PAD + MPA_CRC_LEN];
	size_t trailer_len;
	size_t fpdu_len;   /* total wire octets: MPA_HDR_LEN + ULPDU + trailer_len */
};

/* Fills *f for the ULPDU in iov[0..iovcnt) (read once to compute the CRC when enabled) and
 * advances tx->pos by f->fpdu_len. Returns 0, or with tx unchanged: -ENOTSUP if markers
 * are on (payload octets would have to be split), -EMSGSIZE, -EINVAL as mpa_tx_encode. */
int mpa_tx_frame(struct mpa_tx *tx, const struct iovec *iov, unsigned iovcnt,
		 struct mpa_tx_frame *f);

/* ----------------------------------------------------------------------------------------- */
/* Receive: streaming decoder                                                                  */

struct mpa_rx_cfg {
	bool crc;            /* verify the CRC field (it is consumed either way) */
	bool markers;        /* expect, verify and strip markers */
	uint32_t pos;        /* stream position (same origin as mpa_tx.pos) of the first octet
	                      * that will be fed; 0 at the start of Full Operation Phase. With
	                      * markers it must be an FPDU start, hence a multiple of 4. */
	size_t max_ulpdu;    /* larger ULPDU_Length is an error; 0 = MPA_MAX_ULPDU */
	size_t head_len;     /* octets gathered for MPA_RX_HEAD; 0 = MPA_RX_HEAD_DEFAULT,
	                      * at most MPA_RX_HEAD_MAX */
};

enum mpa_rx_kind {
	MPA_RX_NEED_MORE, /* all input consumed, no piece; feed more */
	MPA_RX_HEAD,      /* first min(ulpdu_len, head_len) ULPDU octets, contiguous (may be 0) */
	MPA_RX_DATA,      /* following ULPDU octets, pointing into the caller's input */
	MPA_RX_END,       /* FPDU complete, CRC verified: the ULPDU may now be delivered */
	MPA_RX_ERROR,     /* framing error; the decoder stays failed */
};

struct mpa_rx_piece {
	enum mpa_rx_kind kind;
	const uint8_t *data;  /* HEAD: internal buffer or input; DATA: input. Valid until the
	                       * next mpa_rx_next() call or the input buffer is reused. */
	size_t len;           /* octets at data */
	size_t off;           /* HEAD/DATA: offset of data[0] within the ULPDU */
	size_t ulpdu_len;     /* HEAD/DATA/END: ULPDU_Length of the current FPDU */
	struct mpa_error err; /* ERROR: the Terminate ecode (layer LLP, etype MPA) and reason */
};

/* Decoder states, in wire order. Internal, but visible for debugging and sizeof. */
enum mpa_rx_state {
	MPA_RXS_LEN,     /* reading ULPDU_Length */
	MPA_RXS_HEAD,    /* gathering the head */
	MPA_RXS_DATA,    /* passing payload through */
	MPA_RXS_PAD,     /* skipping pad */
	MPA_RXS_CRC,     /* reading the CRC */
	MPA_RXS_FAILED,  /* sticky after MPA_RX_ERROR */
};

struct mpa_rx {
	struct mpa_rx_cfg cfg;
	enum mpa_rx_state state;
	uint32_t pos;          /* stream position of the next input octet */
	uint32_t fpdu_hdr;     /* stream position of the current ULPDU_Length field */
	size_t ulpdu_len;
	size_t done;           /* LEN/HEAD/PAD/CRC: octets of the field done; DATA: ULPDU offset */
	uint32_t crc;          /* running CRC register */
	bool in_marker;        /* inside a marker */
	uint8_t marker[MPA_MARKER_LEN];
	size_t marker_got;     /* octets of the current marker read */
	uint32_t marker_expect;/* FPDUPTR the current marker must carry */
	size_t head_want;      /* min(ulpdu_len, head_len) */
	uint8_t field[MPA_CRC_LEN]; /* ULPDU_Length / CRC being gathered */
	uint8_t head[MPA_RX_HEAD_MAX];
	struct mpa_error err;
};

void mpa_rx_init(struct mpa_rx *rx, const struct mpa_rx_cfg *cfg);

/* Consumes octets from in[0..len) and returns how many, describing in *out the one piece
 * found (see enum mpa_rx_kind). Never copies payload except the head when it is split
 * across calls or markers. Call again with the rest of the input after any piece other than
 * MPA_RX_NEED_MORE. MPA_RX_END is returned by the call that consumes the last CRC octet.
 * After MPA_RX_ERROR it consumes nothing and returns the same error forever. */
size_t mpa_rx_next(struct mpa_rx *rx, const uint8_t *in, size_t len, struct mpa_rx_piece *out);

/* The error after MPA_RX_ERROR; ecode MPA_ECODE_NONE while healthy. */
const struct mpa_error *mpa_rx_error(const struct mpa_rx *rx);

/* Called by mpa_rx_feed() once per complete, verified ULPDU. Nonzero stops the feed. */
typedef int (*mpa_rx_ulpdu_cb)(void *arg, const uint8_t *ulpdu, size_t len);

/* Convenience wrapper for tests, the pcap checker and the fuzzer: assembles each ULPDU into
 * buf (cap octets, the same buffer on every call, partial ULPDUs persist in it) and calls cb
 * for it. Returns the number of ULPDUs delivered with all input consumed, or:
 *   -EPROTO   framing error, see mpa_rx_error()
 *   -ENOBUFS  a ULPDU longer than cap
 *   the callback's nonzero return value (then input may be left unconsumed). */
int mpa_rx_feed(struct mpa_rx *rx, const uint8_t *in, size_t len, uint8_t *buf, size_t cap,
		mpa_rx_ulpdu_cb cb, void *arg);

#endif
