/* RDMAP (RFC 5040, with room for the RFC 7306 extensions): wire codec over DDP. Pure C, no I/O.
 *
 * RDMAP's control field is the ULP-owned octet 1 of every DDP header:
 *   RV (0xc0, version, must be 1) | Rsvd (0x30) | OpCode (0x0f)
 * so Write = 0x40, Read Request = 0x41, ..., Terminate = 0x47 on the wire.
 * The untagged 32-bit RsvdULP word carries the Invalidate STag of Send with Invalidate
 * (opcodes 4 and 6) and is zero otherwise. Messages with an RDMAP header of their own carry it
 * at the start of the DDP payload (MO 0): Read Request (28 octets), Terminate (4 + copies),
 * RFC 7306 Atomic Request (52) and Atomic Response (12).
 *
 * This library decodes one ULPDU (DDP header + RDMAP part + payload) into struct rdmap_msg,
 * checks the opcode/DDP combination, and builds/parses Terminate messages. It uses ddp/ for the
 * DDP header and the shared struct iwarp_err.
 */
#ifndef RDMAP_H
#define RDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ddp.h"

#define RDMAP_VERSION 1u
#define RDMAP_CTRL_RV_MASK 0xc0u
#define RDMAP_CTRL_RV_SHIFT 6
#define RDMAP_CTRL_RSVD_MASK 0x30u
#define RDMAP_CTRL_OPCODE_MASK 0x0fu

/* The control octet (DDP RsvdULP octet) for an opcode, RV = 1, reserved zero. */
#define RDMAP_CTRL(op) ((uint8_t)((RDMAP_VERSION << RDMAP_CTRL_RV_SHIFT) | ((op) & 0x0fu)))

enum rdmap_opcode {
	RDMAP_OP_WRITE = 0x0,
	RDMAP_OP_READ_REQ = 0x1,
	RDMAP_OP_READ_RESP = 0x2,
	RDMAP_OP_SEND = 0x3,
	RDMAP_OP_SEND_INV = 0x4,
	RDMAP_OP_SEND_SE = 0x5,
	RDMAP_OP_SEND_SE_INV = 0x6,
	RDMAP_OP_TERMINATE = 0x7,
	/* 0x8 and 0x9 stay reserved. RFC 7306 values: Atomic Request/Response 0xa/0xb (Wireshark's
	 * RFC 7306 dissector agrees), Immediate Data 0xc/0xd (from the RFC 7306 opcode table; not
	 * cross-checked against a second source here, see docs). */
	RDMAP_OP_ATOMIC_REQ = 0xa,
	RDMAP_OP_ATOMIC_RESP = 0xb,
	RDMAP_OP_IMM_DATA = 0xc,
	RDMAP_OP_IMM_DATA_SE = 0xd,
};
#define RDMAP_NUM_OPCODES 16u

/* Untagged queues (RFC 5040 §5.1). RFC 7306 puts Atomic Requests on QN 1 with the Read
 * Requests (they share the responder's IRD resources and MSN space) and adds QN 3 for Atomic
 * Responses; Immediate Data uses QN 0 like Send. */
enum rdmap_qn {
	RDMAP_QN_SEND = 0,          /* Send*, Immediate Data* */
	RDMAP_QN_READ_REQ = 1,      /* Read Request, Atomic Request */
	RDMAP_QN_TERMINATE = 2,     /* Terminate */
	RDMAP_QN_ATOMIC_RESP = 3,   /* RFC 7306 Atomic Response */
};
#define RDMAP_NQUEUES 3u        /* RFC 5040 only: pass to ddp_rx_init() */
#define RDMAP_NQUEUES_EXT 4u    /* with RFC 7306 */

/* Fixed header/body sizes */
#define RDMAP_READ_REQ_LEN 28u      /* sink STag, sink TO, size, source STag, source TO */
#define RDMAP_TERM_CTRL_LEN 4u      /* layer/etype/ecode/hdrct/rsvd */
#define RDMAP_IMM_DATA_LEN 8u       /* RFC 7306 Immediate Data payload */
#define RDMAP_ATOMIC_REQ_LEN 52u    /* RFC 7306 Atomic Request header */
#define RDMAP_ATOMIC_RESP_LEN 12u   /* RFC 7306 Atomic Response header */

/* Per-opcode facts: one row per opcode value, see rdmap_opinfo(). */
struct rdmap_opinfo {
	const char *name;
	bool defined;        /* false: reserved opcode value ("unexpected opcode") */
	bool ext;            /* defined by RFC 7306, only valid when the extensions are enabled */
	bool tagged;         /* DDP buffer model the opcode must use */
	uint8_t qn;          /* untagged: the queue it must use */
	bool inv_stag;       /* the untagged RsvdULP word is an Invalidate STag */
	bool solicited;      /* carries a Solicited Event */
	uint8_t hdr_len;     /* RDMAP header octets at the start of the DDP payload (MO 0) */
	bool exact_len;      /* the whole message is exactly hdr_len octets, one segment */
};

/* Row for an opcode (0..15). Never NULL: reserved values get a row with defined = false. */
const struct rdmap_opinfo *rdmap_opinfo(unsigned opcode);

/* ---- RDMAP error codes (RFC 5040 §7.1; layer IWARP_LAYER_RDMAP) --------------------------- */
enum rdmap_etype {
	RDMAP_ETYPE_CATASTROPHIC = 0x0,   /* local catastrophic error */
	RDMAP_ETYPE_PROTECTION = 0x1,     /* remote protection error */
	RDMAP_ETYPE_OPERATION = 0x2,      /* remote operation error */
};

enum rdmap_ecode {
	/* with RDMAP_ETYPE_PROTECTION */
	RDMAP_ECODE_INVALID_STAG = 0x00,
	RDMAP_ECODE_BASE_BOUNDS = 0x01,
	RDMAP_ECODE_ACCESS = 0x02,         /* access rights violation */
	RDMAP_ECODE_STAG_NOT_ASSOC = 0x03, /* STag not associated with RDMAP stream */
	RDMAP_ECODE_TO_WRAP = 0x04,
	/* with RDMAP_ETYPE_OPERATION */
	RDMAP_ECODE_VERSION = 0x05,        /* invalid RDMAP version */
	RDMAP_ECODE_OPCODE = 0x06,         /* unexpected opcode */
	RDMAP_ECODE_CATA_STREAM = 0x07,    /* catastrophic error, localized to RDMAP stream */
	RDMAP_ECODE_CATA_GLOBAL = 0x08,    /* catastrophic error, global */
	/* with PROTECTION or OPERATION */
	RDMAP_ECODE_CANNOT_INVALIDATE = 0x09, /* STag cannot be invalidated */
	RDMAP_ECODE_UNSPECIFIED = 0xff,
	/* with RDMAP_ETYPE_CATASTROPHIC */
	RDMAP_ECODE_CATASTROPHIC = 0x00,
};

/* LLP (MPA) coordinates, RFC 5044 §8 and RFC 6581 §9. Same values as mpa/mpa.h enum mpa_ecode
 * (the tests check it); repeated here because rdmap does not depend on mpa. */
#define RDMAP_LLP_ETYPE_MPA 0x0
enum rdmap_llp_ecode {
	RDMAP_LLP_ECODE_TCP_LOST = 0x01,
	RDMAP_LLP_ECODE_CRC = 0x02,
	RDMAP_LLP_ECODE_MARKER = 0x03,
	RDMAP_LLP_ECODE_INVALID_REQ_REP = 0x04,
	RDMAP_LLP_ECODE_LOCAL_CATASTROPHIC = 0x05,
	RDMAP_LLP_ECODE_INSUFFICIENT_IRD = 0x06,
	RDMAP_LLP_ECODE_NO_MATCHING_RTR = 0x07,
};

static inline struct iwarp_err rdmap_err(enum rdmap_etype t, enum rdmap_ecode c)
{
	return (struct iwarp_err){ IWARP_LAYER_RDMAP, (uint8_t)t, (uint8_t)c };
}

static inline struct iwarp_err rdmap_err_llp(enum rdmap_llp_ecode c)
{
	return (struct iwarp_err){ IWARP_LAYER_LLP, RDMAP_LLP_ETYPE_MPA, (uint8_t)c };
}

/* Name of any layer's error ("Unexpected OpCode", "Invalid QN", "MPA CRC Error", ...). */
const char *rdmap_err_str(struct iwarp_err e);

/* ---- Message bodies ----------------------------------------------------------------------- */
struct rdmap_read_req {          /* RFC 5040 §4.4, 28 octets */
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;           /* RDMA Read Message Size */
	uint32_t src_stag;
	uint64_t src_to;
};

struct rdmap_atomic_req {        /* RFC 7306 Atomic Request header, 52 octets */
	uint32_t rsvd;           /* upper 28 bits of the first word, zero on transmit */
	uint8_t atomic_op;       /* low 4 bits: 0 FetchAdd, 2 CmpSwap */
	uint32_t req_id;
	uint32_t stag;
	uint64_t to;
	uint64_t add_swap;       /* add or swap data */
	uint64_t add_swap_mask;
	uint64_t compare;
	uint64_t compare_mask;
};

struct rdmap_atomic_resp {       /* RFC 7306 Atomic Response header, 12 octets */
	uint32_t req_id;
	uint64_t orig_value;
};

/* Terminate header (RFC 5040 §4.8):
 *   octet 0   : Layer (high nibble) | EType (low nibble)
 *   octet 1   : Error Code
 *   octets 2-3: Hdrct M(0x8000) D(0x4000) R(0x2000) | Rsvd (13 bits)
 *   then, if M or D: DDP Segment Length (16 bits)
 *   then, if D: the offending segment's DDP header as received (14 or 18 octets, by its T bit)
 *   then, if R: the offending message's RDMAP header (Read Request: 28 octets; Atomic Request:
 *         52; none for Send/Write/Read Response, whose RDMAP control is inside the DDP copy). */
#define RDMAP_TERM_HDRCT_M 0x8000u
#define RDMAP_TERM_HDRCT_D 0x4000u
#define RDMAP_TERM_HDRCT_R 0x2000u
#define RDMAP_TERM_RSVD_MASK 0x1fffu
#define RDMAP_TERM_RDMA_HDR_MAX RDMAP_ATOMIC_REQ_LEN
#define RDMAP_TERM_MAX_LEN (RDMAP_TERM_CTRL_LEN + 2u + DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_RDMA_HDR_MAX)

struct rdmap_term {
	struct iwarp_err err;
	bool m;                  /* DDP Segment Length valid */
	bool d;                  /* DDP header included */
	bool r;                  /* RDMAP header included */
	uint16_t rsvd;           /* 13 reserved bits, as received; zero on transmit */
	uint16_t ddp_seg_len;    /* meaningful when m */
	uint8_t ddp_hdr[DDP_UNTAGGED_HDR_LEN]; /* raw copy when d */
	uint8_t ddp_hdr_len;     /* 14 or 18 when d, else 0 */
	uint8_t rdma_hdr[RDMAP_TERM_RDMA_HDR_MAX]; /* raw copy when r */
	uint8_t rdma_hdr_len;    /* 0..RDMAP_TERM_RDMA_HDR_MAX */
};

/* ---- Decoded ULPDU ------------------------------------------------------------------------ */
struct rdmap_msg {
	struct ddp_hdr ddp;      /* the DDP header, as decoded */
	uint8_t rv;              /* RDMAP version from the control octet */
	uint8_t ctrl_rsvd;       /* the 2 reserved control bits */
	uint8_t opcode;          /* enum rdmap_opcode */
	uint32_t inv_stag;       /* Send with Invalidate: the STag to invalidate */
	union {                  /* by opcode; only on the segment with MO 0 */
		struct rdmap_read_req read_req;
		struct rdmap_term term;
		struct rdmap_atomic_req atomic_req;
		struct rdmap_atomic_resp atomic_resp;
	} u;
	size_t body_len;         /* RDMAP header octets parsed into u (0: none in this segment) */
	size_t hdr_len;          /* DDP header + body_len */
	const uint8_t *payload;  /* data after the headers, inside the caller's buffer */
	size_t payload_len;
};

/* Decode one ULPDU of exactly len octets (never reads beyond). Only the framing fails here:
 * -1 with *err = DDP local catastrophic (1/0/0x00) when len is too short for the DDP header.
 * The opcode's RDMAP header (Read Request, Terminate, atomics) is parsed into m->u only when
 * this segment is untagged, has MO 0 and holds all of it (body_len says whether it did);
 * everything after it is the payload. Nothing is judged: call rdmap_msg_validate(). */
int rdmap_msg_decode(const uint8_t *buf, size_t len, struct rdmap_msg *m, struct iwarp_err *err);

/* Receive checks of a decoded message, in this order (the first failure wins):
 *   DDP: DV == 1 (else tagged 1/1/0x04, untagged 1/2/0x06); untagged QN < nqueues (1/2/0x01);
 *   RDMAP: RV == 1 (0/2/0x05); opcode defined, RFC 7306 ones only if ext (0/2/0x06);
 *   buffer model of the opcode, e.g. an untagged Write (0/2/0x06);
 *   queue of the opcode, e.g. a Send on QN 1 (1/2/0x01, as Linux siw reports it);
 *   Read Request / Atomic Request / Atomic Response / Immediate Data: one segment, L set, MO 0,
 *   exactly 28 / 52 / 12 / 8 octets; Terminate: whole Terminate header at MO 0
 *   (0/2/0xff Unspecified: RFC 5040 names no code for a malformed RDMAP header).
 * Reserved bits (DDP control, RDMAP control, untagged RsvdULP of non-invalidate opcodes) are not
 * checked: the RFCs say "set to zero on transmit, not checked on receive".
 * A zero-size Read Request is legal. nqueues: RDMAP_NQUEUES, or RDMAP_NQUEUES_EXT with ext. */
int rdmap_msg_validate(const struct rdmap_msg *m, uint32_t nqueues, bool ext, struct iwarp_err *err);

/* ---- Encoding ----------------------------------------------------------------------------- */
void rdmap_read_req_encode(const struct rdmap_read_req *rr, uint8_t out[RDMAP_READ_REQ_LEN]);
void rdmap_read_req_decode(const uint8_t in[RDMAP_READ_REQ_LEN], struct rdmap_read_req *rr);
void rdmap_atomic_req_encode(const struct rdmap_atomic_req *a, uint8_t out[RDMAP_ATOMIC_REQ_LEN]);
void rdmap_atomic_req_decode(const uint8_t in[RDMAP_ATOMIC_REQ_LEN], struct rdmap_atomic_req *a);
void rdmap_atomic_resp_encode(const struct rdmap_atomic_resp *a, uint8_t out[RDMAP_ATOMIC_RESP_LEN]);
void rdmap_atomic_resp_decode(const uint8_t in[RDMAP_ATOMIC_RESP_LEN], struct rdmap_atomic_resp *a);

/* DDP header template for the first segment of a message with this opcode (feed it to
 * ddp_seg_init()): tagged ops get stag/to; untagged ops get their QN, the given msn, MO 0 and
 * inv_stag in the RsvdULP word when the opcode carries one (else 0). */
struct ddp_hdr rdmap_ddp_tmpl(enum rdmap_opcode op, uint32_t stag, uint64_t to, uint32_t msn,
			      uint32_t inv_stag);

/* ---- Terminate ---------------------------------------------------------------------------- */

/* Fill *t for error e raised by the offending ULPDU (its bytes as received, ulpdu_len octets;
 * NULL/0 when there is none, e.g. a local error). Header copies follow RFC 5040 §7 as Linux
 * siw implements it (see rdmap_terminate.c for the table):
 *   RDMAP local catastrophic, or no offending ULPDU: Hdrct 000, nothing copied;
 *   RDMAP remote protection: M D R (DDP header + RDMAP header if the opcode has one);
 *   RDMAP remote operation: M D, except invalid version / unexpected opcode: nothing;
 *   DDP: M D, except invalid DDP version: nothing;
 *   LLP: nothing.
 * The DDP Segment Length is the offending segment's ULPDU length (DDP header + RDMAP header +
 * payload). Copies never read past ulpdu_len; a too short ULPDU drops the copies it cannot
 * supply (and the bits announcing them). */
void rdmap_term_build(struct iwarp_err e, const uint8_t *ulpdu, size_t ulpdu_len,
		      struct rdmap_term *t);

/* Terminate header octets that encode() will write for t. */
size_t rdmap_term_len(const struct rdmap_term *t);

/* Write the Terminate header (not the DDP header). Returns octets written or 0 if cap is short. */
size_t rdmap_term_encode(const struct rdmap_term *t, uint8_t *buf, size_t cap);

/* Parse a Terminate header from the first len octets of buf (the Terminate message's DDP
 * payload). Returns octets consumed, or 0 if truncated (fewer octets than the Hdrct bits
 * announce). */
size_t rdmap_term_decode(const uint8_t *buf, size_t len, struct rdmap_term *t);

/* The complete Terminate ULPDU: untagged DDP header (L=1, QN 2, MSN msn — 1 for the one
 * Terminate of a stream — MO 0, control 0x47) followed by the Terminate header. Returns octets
 * written or 0 if cap is short. */
size_t rdmap_term_ulpdu_encode(const struct rdmap_term *t, uint32_t msn, uint8_t *buf, size_t cap);

#endif
