/* MPA (RFC 5044, RFC 6581): Marker PDU Aligned framing of the TCP byte stream.
 *
 * Public interface of the mpa library: CRC32c, FPDU encode/decode, MPA Request/Reply/Reject
 * frames and their negotiation. Pure C, no I/O: callers feed and drain byte buffers.
 */
#ifndef MPA_H
#define MPA_H

#include <stdint.h>

/* Terminate message coordinates for errors detected by MPA (RFC 5040 §7.2, RFC 5044 §8,
 * RFC 6581 §9): MPA errors are reported in the LLP layer with error type MPA. */
#define MPA_TERM_LAYER_LLP 0x2
#define MPA_TERM_ETYPE_MPA 0x0

enum mpa_ecode {
	MPA_ECODE_NONE = 0x00,
	MPA_ECODE_TCP_LOST = 0x01,          /* TCP connection closed, terminated or lost */
	MPA_ECODE_CRC = 0x02,               /* received MPA CRC does not match */
	MPA_ECODE_MARKER = 0x03,            /* marker and ULPDU_Length disagree (bad FPDU start) */
	MPA_ECODE_INVALID_REQ_REP = 0x04,   /* invalid MPA Request or Reply frame */
	MPA_ECODE_LOCAL_CATASTROPHIC = 0x05,/* RFC 6581 */
	MPA_ECODE_INSUFFICIENT_IRD = 0x06,  /* RFC 6581 */
	MPA_ECODE_NO_MATCHING_RTR = 0x07,   /* RFC 6581 */
};

/* An MPA-detected error: the ecode to put in the Terminate (layer LLP, etype MPA) and a
 * short human-readable reason for logs and tests. */
struct mpa_error {
	enum mpa_ecode ecode;
	const char *reason;
};

#include "mpa_crc32c.h"
#include "mpa_fpdu.h"
#include "mpa_frame.h"

#endif
