/* DDP (RFC 5041): Direct Data Placement wire codec. Pure C, no I/O, no memory placement.
 *
 * What this library does:
 *   - encode / decode / validate the tagged (14 octets) and untagged (18 octets) DDP headers;
 *   - split a message into DDP segments that fit the LLP's MULPDU (an iterator, no copies);
 *   - decide where an incoming segment goes (STag/TO or QN/MSN/MO) and check it against the
 *     receiver state DDP owns (queues, MSN sequence, posted-buffer count), returning the exact
 *     DDP Terminate error (RFC 5041 §7.2) when it is invalid.
 * What it does not do: STag lookup, access rights, bounds against a memory region. The RNIC
 * does those and reports them with the constructors below (ddp_err_tagged(), ...).
 *
 * DDP knows nothing of RDMAP: the octet after the control byte ("RsvdULP", RDMAP's control
 * field) and, untagged, the 32-bit RsvdULP word are plain fields owned by the caller.
 *
 * Wire layout (network byte order), RFC 5041 §4:
 *   octet 0      : T(0x80) L(0x40) Rsvd(0x3c) DV(0x03)
 *   octet 1      : RsvdULP (8 bits, owned by the ULP)
 *   tagged   2..5: STag            6..13: TO (64 bits)                         = 14 octets
 *   untagged 2..5: RsvdULP (32)    6..9 : QN   10..13: MSN   14..17: MO         = 18 octets
 */
#ifndef DDP_H
#define DDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DDP_VERSION 1u           /* RFC 5041 §4.2: DV = 01b */
#define DDP_TAGGED_HDR_LEN 14u
#define DDP_UNTAGGED_HDR_LEN 18u

/* Control octet (octet 0) */
#define DDP_CTRL_T 0x80u         /* tagged buffer model */
#define DDP_CTRL_L 0x40u         /* last segment of the DDP message */
#define DDP_CTRL_RSVD 0x3cu      /* reserved, sent as zero */
#define DDP_CTRL_DV 0x03u        /* DDP version */

/* MSN of the first untagged message on every queue (RFC 5041 §4.3; the siw traces agree: the
 * first Send on QN 0 and the first Read Request on QN 1 both carry MSN 1). It then increments by
 * one per message, modulo 2^32. */
#define DDP_MSN_INITIAL 1u

/* Most queues a ULP may define. RDMAP uses 3 (RFC 5040 §5.1), 5 with RFC 7306 atomics. */
#define DDP_MAX_QUEUES 8u

/* ---- Terminate coordinates (shared with RDMAP) ------------------------------------------
 * RFC 5040 §4.8 Terminate Control: Layer (4 bits), EType (4 bits), Error Code (8 bits).
 * The type lives here, in the lowest layer whose errors travel in a Terminate payload that
 * DDP and RDMAP both build, so both layers speak one type. MPA (layer LLP) has its own enum. */
enum iwarp_layer {
	IWARP_LAYER_RDMAP = 0x0,
	IWARP_LAYER_DDP = 0x1,
	IWARP_LAYER_LLP = 0x2,
};

struct iwarp_err {
	uint8_t layer;  /* enum iwarp_layer, 4 bits */
	uint8_t etype;  /* 4 bits, meaning depends on layer */
	uint8_t ecode;  /* 8 bits, meaning depends on layer and etype */
};

/* The 16-bit "0xLEcc" form used by the verbs spec and in logs. */
static inline uint16_t iwarp_err_u16(struct iwarp_err e)
{
	return (uint16_t)(((e.layer & 0xfu) << 12) | ((e.etype & 0xfu) << 8) | e.ecode);
}

/* DDP error types and codes, RFC 5041 §7.2 */
enum ddp_etype {
	DDP_ETYPE_CATASTROPHIC = 0x0,   /* local catastrophic, ecode 0x00 */
	DDP_ETYPE_TAGGED = 0x1,         /* tagged buffer error */
	DDP_ETYPE_UNTAGGED = 0x2,       /* untagged buffer error */
	DDP_ETYPE_RSVD_LLP = 0x3,       /* reserved for use by the LLP */
};

enum ddp_ecode_tagged {
	DDP_ECODE_T_INVALID_STAG = 0x00,
	DDP_ECODE_T_BASE_BOUNDS = 0x01,
	DDP_ECODE_T_STAG_NOT_ASSOC = 0x02, /* STag not associated with the DDP stream */
	DDP_ECODE_T_TO_WRAP = 0x03,
	DDP_ECODE_T_VERSION = 0x04,        /* invalid DDP version (tagged segment) */
};

enum ddp_ecode_untagged {
	DDP_ECODE_U_INVALID_QN = 0x01,
	DDP_ECODE_U_MSN_NO_BUF = 0x02,     /* invalid MSN - no buffer available */
	DDP_ECODE_U_MSN_RANGE = 0x03,      /* invalid MSN - MSN range is not valid */
	DDP_ECODE_U_INVALID_MO = 0x04,
	DDP_ECODE_U_TOO_LONG = 0x05,       /* DDP message too long for available buffer */
	DDP_ECODE_U_VERSION = 0x06,        /* invalid DDP version (untagged segment) */
};

#define DDP_ECODE_CATASTROPHIC 0x00

static inline struct iwarp_err ddp_err_tagged(enum ddp_ecode_tagged c)
{
	return (struct iwarp_err){ IWARP_LAYER_DDP, DDP_ETYPE_TAGGED, (uint8_t)c };
}

static inline struct iwarp_err ddp_err_untagged(enum ddp_ecode_untagged c)
{
	return (struct iwarp_err){ IWARP_LAYER_DDP, DDP_ETYPE_UNTAGGED, (uint8_t)c };
}

static inline struct iwarp_err ddp_err_catastrophic(void)
{
	return (struct iwarp_err){ IWARP_LAYER_DDP, DDP_ETYPE_CATASTROPHIC, DDP_ECODE_CATASTROPHIC };
}

/* Name of a DDP-layer error ("Invalid QN", ...); "unknown" for a code RFC 5041 does not define.
 * Only meaningful when e.layer == IWARP_LAYER_DDP. */
const char *ddp_err_str(struct iwarp_err e);

/* ---- Header ------------------------------------------------------------------------------ */

/* One decoded DDP header. Fields of the other buffer model are ignored by encode and left zero
 * by decode. encode writes rsvd and dv exactly as given (so tests and fuzzers can build bad
 * headers); use ddp_hdr_tagged()/ddp_hdr_untagged() to get a correct one. */
struct ddp_hdr {
	bool tagged;         /* T */
	bool last;           /* L */
	uint8_t rsvd;        /* the 4 reserved control bits (0..15), right-aligned */
	uint8_t dv;          /* DDP version (0..3); DDP_VERSION */
	uint8_t rsvdulp;     /* octet 1, ULP-owned (RDMAP: RV and opcode) */
	/* tagged buffer model */
	uint32_t stag;
	uint64_t to;
	/* untagged buffer model */
	uint32_t rsvdulp32;  /* ULP-owned word (RDMAP: Invalidate STag, else 0) */
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
};

/* Correct headers with DV = 1, reserved bits zero, L clear. */
struct ddp_hdr ddp_hdr_tagged(uint8_t rsvdulp, uint32_t stag, uint64_t to);
struct ddp_hdr ddp_hdr_untagged(uint8_t rsvdulp, uint32_t rsvdulp32, uint32_t qn, uint32_t msn,
				uint32_t mo);

/* 14 or 18. */
static inline size_t ddp_hdr_len(bool tagged)
{
	return tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
}

/* Write the header into buf. Returns the octets written (14/18), or 0 if cap is too small
 * (nothing written). */
size_t ddp_hdr_encode(const struct ddp_hdr *h, uint8_t *buf, size_t cap);

/* Read a header from the first len octets of buf (never beyond). Returns the header length
 * consumed (14/18), or 0 if len is too short for the header the T bit announces (0 octets
 * included). Decoding does not validate: call ddp_hdr_validate(). */
size_t ddp_hdr_decode(const uint8_t *buf, size_t len, struct ddp_hdr *h);

/* Stateless receive checks: DV must be 1 (tagged: 1/1/0x04, untagged: 1/2/0x06); untagged QN
 * must be < nqueues (1/2/0x01). Reserved bits are NOT checked: RFC 5041 §4.2 says they are set
 * to zero on transmit and not checked on receive. Returns 0, or -1 with *err set. */
int ddp_hdr_validate(const struct ddp_hdr *h, uint32_t nqueues, struct iwarp_err *err);

/* ---- Segmentation (transmit) --------------------------------------------------------------
 * A message of msg_len payload octets becomes segments whose ULPDU (DDP header + ulp_hdr_len +
 * payload) is at most MULPDU. Every segment but the last carries the maximum payload; the last
 * has L set; a zero-length message is one segment with L set and no payload.
 * Tagged: TO = base TO + payload offset. Untagged: MO = base MO + payload offset; QN/MSN fixed.
 * RsvdULP fields of the template are copied into every segment. */
struct ddp_seg_iter {
	struct ddp_hdr tmpl;     /* the message's header: tagged STag+TO / untagged QN+MSN+MO */
	uint64_t msg_len;        /* payload octets of the whole message */
	uint32_t max_payload;    /* payload octets per full segment */
	uint64_t off;            /* payload offset of the next segment */
	bool done;
};

struct ddp_seg {
	struct ddp_hdr hdr;      /* ready to encode */
	uint64_t payload_off;    /* offset of this segment's payload in the message */
	uint32_t payload_len;
};

/* Prepare to segment. Errors (return -1, *err set): MULPDU leaves no room for one payload
 * octet while msg_len > 0 (DDP catastrophic 1/0/0); tagged TO + msg_len wraps past 2^64
 * (1/1/0x03 TO wrap); untagged MO + msg_len exceeds 2^32, MO being 32 bits (1/2/0x04). */
int ddp_seg_init(struct ddp_seg_iter *it, const struct ddp_hdr *tmpl, uint64_t msg_len,
		 uint32_t mulpdu, uint32_t ulp_hdr_len, struct iwarp_err *err);

/* Yield the next segment; false when the message is exhausted. */
bool ddp_seg_next(struct ddp_seg_iter *it, struct ddp_seg *seg);
/* The same, with at most max (>= 1) payload octets in this segment: a shorter segment is
 * as valid (RFC 5041 5.2 leaves the sizes to the sender), for a sender whose LLP takes
 * only so much now. ddp_seg_count then no longer holds. */
bool ddp_seg_next_max(struct ddp_seg_iter *it, struct ddp_seg *seg, uint32_t max);

/* Number of segments ddp_seg_next() will yield (>= 1). */
uint64_t ddp_seg_count(const struct ddp_seg_iter *it);

/* ---- Placement (receive) ------------------------------------------------------------------
 * Per-queue receive state that DDP owns. Our LLP is TCP (via MPA), which delivers segments in
 * order, so on each queue exactly one message is in progress: `msn`, whose next segment must
 * start at `mo`. Buffers are consumed in MSN order, one per message (as Linux siw does). */
struct ddp_rx_queue {
	uint32_t msn;            /* MSN of the message in progress / next (starts at DDP_MSN_INITIAL) */
	uint64_t mo;             /* MO the next segment of that message must carry (2^32: none can) */
	uint32_t posted;         /* buffers posted by the ULP and not yet completed */
};

struct ddp_rx_state {
	uint32_t nqueues;        /* queues defined by the ULP; QN >= nqueues is "Invalid QN" */
	struct ddp_rx_queue q[DDP_MAX_QUEUES];
};

/* nqueues is clamped to DDP_MAX_QUEUES. Every queue starts at MSN 1, MO 0, nothing posted. */
void ddp_rx_init(struct ddp_rx_state *rx, uint32_t nqueues);

/* The ULP made n more buffers available on qn (RDMAP: receive WQEs on QN 0, free IRD slots on
 * QN 1, one Terminate buffer on QN 2). Returns -1 if qn is not a queue or the count would
 * overflow. */
int ddp_rx_post(struct ddp_rx_state *rx, uint32_t qn, uint32_t n);

/* Where an incoming segment goes. */
struct ddp_place {
	bool tagged;
	bool last;               /* L: the segment completes its message */
	uint32_t len;            /* payload octets to place */
	/* tagged */
	uint32_t stag;
	uint64_t to;
	/* untagged */
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
};

/* Decide placement of a segment: header h, payload_len octets of payload after the DDP header
 * (everything after the DDP header is placed by DDP; RDMAP headers are the start of the
 * message at MO 0). Checks, in order, the first failure wins:
 *   DV != 1 (tagged 1/1/0x04, untagged 1/2/0x06);
 *   tagged: TO + len wraps past 2^64 (1/1/0x03);
 *   untagged: QN >= nqueues (1/2/0x01); MSN != the queue's (behind it: replay; ahead: a gap)
 *   (1/2/0x03 MSN range); no buffer posted (1/2/0x02); MO != the expected MO, or MO + len past
 *   2^32 (1/2/0x04 invalid MO).
 * Returns 0 with *pl filled, or -1 with *err set. rx is not modified. */
int ddp_place_decide(const struct ddp_rx_state *rx, const struct ddp_hdr *h, uint32_t payload_len,
		     struct ddp_place *pl, struct iwarp_err *err);

/* Untagged only: the oldest posted buffer of pl->qn holds buf_len octets. MO + len beyond it is
 * "DDP message too long for available buffer" (1/2/0x05). Returns 0 or -1 with *err set. */
int ddp_place_check_len(const struct ddp_place *pl, uint64_t buf_len, struct iwarp_err *err);

/* The segment was placed and delivered (call only after ddp_place_decide() accepted it): the
 * queue's expected MO advances by its length; with L set the message is complete, its buffer is
 * consumed, the expected MSN advances (mod 2^32) and MO restarts at 0. No-op when tagged. */
void ddp_rx_deliver(struct ddp_rx_state *rx, const struct ddp_place *pl);

#endif
