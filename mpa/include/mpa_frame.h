/* MPA Request / Reply / Reject frames (RFC 5044 §7.1, RFC 6581 enhanced connection setup)
 * and the connection negotiation that follows from them. Pure functions, no I/O.
 *
 * Wire layout (network byte order):
 *   off 0..15  Key "MPA ID Req Frame" (Request) / "MPA ID Rep Frame" (Reply, also Reject)
 *   off 16     flags: M 0x80 | C 0x40 | R 0x20 | S 0x10 (RFC 6581, rev 2 only) | 0x0F reserved
 *   off 17     Rev (1 = RFC 5044, 2 = RFC 6581)
 *   off 18..19 PD_Length
 *   off 20..   private data; when S=1 its first 4 octets are the RFC 6581 IRD/ORD block:
 *              BE16 |P2P 0x8000|SEND-RTR 0x4000| IRD:14 |
 *              BE16 |WRITE-RTR 0x8000|READ-RTR 0x4000| ORD:14 |
 */
#ifndef MPA_FRAME_H
#define MPA_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* ssize_t */

#include "mpa.h"

/* ---- wire constants ------------------------------------------------------------------- */

#define MPA_KEY_LEN 16
#define MPA_KEY_REQ "MPA ID Req Frame"
#define MPA_KEY_REP "MPA ID Rep Frame"
#define MPA_FRAME_HDR_LEN 20 /* key + flags + rev + PD_Length */

#define MPA_FLAG_M 0x80        /* sender wants markers in the stream it receives */
#define MPA_FLAG_C 0x40        /* CRC */
#define MPA_FLAG_R 0x20        /* reject (Reply only) */
#define MPA_FLAG_S 0x10        /* RFC 6581 enhanced: IRD/ORD block leads the PD (rev 2 only) */
#define MPA_FLAG_RES_V2 0x0F   /* reserved bits in a rev 2 frame */
#define MPA_FLAG_RES_V1 0x1F   /* reserved bits in a rev 1 frame (S is not defined in rev 1) */
#define MPA_FLAG_SIW_GSO 0x08  /* Linux siw-private "GSO_EXP" bit; one of the reserved bits */

#define MPA_REV_1 1 /* RFC 5044 */
#define MPA_REV_2 2 /* RFC 6581 */

#define MPA_V2_BLOCK_LEN 4           /* RFC 6581 IRD/ORD block */
#define MPA_V2_IRD_P2P 0x8000u       /* in IRD word: peer-to-peer (RTR) mode */
#define MPA_V2_IRD_SEND_RTR 0x4000u  /* in IRD word: zero-length SEND RTR */
#define MPA_V2_ORD_WRITE_RTR 0x8000u /* in ORD word: zero-length RDMA WRITE RTR */
#define MPA_V2_ORD_READ_RTR 0x4000u  /* in ORD word: zero-length RDMA READ RTR */
#define MPA_V2_VALUE_MASK 0x3FFFu    /* 14-bit IRD / ORD value */
#define MPA_V2_NO_VALUE 0x3FFFu      /* "no value" for IRD or ORD */

#define MPA_PD_MAX_RFC 512   /* RFC 5044 upper bound on PD_Length */
#define MPA_PD_MAX_LINUX 256 /* RDMA_MAX_PRIVATE_DATA of Linux peers (siw, irdma, cxgb4) */

/* ---- frame ---------------------------------------------------------------------------- */

enum mpa_frame_type {
	MPA_FRAME_REQUEST = 1, /* key "MPA ID Req Frame" */
	MPA_FRAME_REPLY = 2,   /* key "MPA ID Rep Frame" (accept, or reject with R=1) */
};

/* Ready-to-Receive message types (RFC 6581 §9). Used as a bit set for "offered" and as a
 * single value for "chosen". */
enum mpa_rtr {
	MPA_RTR_NONE = 0,
	MPA_RTR_SEND = 1u << 0,  /* zero-length SEND */
	MPA_RTR_WRITE = 1u << 1, /* zero-length RDMA WRITE */
	MPA_RTR_READ = 1u << 2,  /* zero-length RDMA READ */
};
#define MPA_RTR_ALL (MPA_RTR_SEND | MPA_RTR_WRITE | MPA_RTR_READ)

/* Decoded RFC 6581 IRD/ORD block. ird/ord are 14-bit (MPA_V2_NO_VALUE = none). */
struct mpa_v2_block {
	bool p2p;
	unsigned rtr; /* bit set of enum mpa_rtr */
	uint16_t ird;
	uint16_t ord;
};

struct mpa_frame {
	enum mpa_frame_type type;
	uint8_t rev;            /* 1 or 2 */
	bool markers;           /* M */
	bool crc;               /* C */
	bool reject;            /* R (Reply only) */
	bool enhanced;          /* S (rev 2 only); v2 is valid and occupies the first 4 PD octets */
	uint8_t reserved;       /* reserved flag bits as received; the encoder refuses non-zero */
	struct mpa_v2_block v2; /* valid iff enhanced */
	const uint8_t *pd;      /* ULP private data AFTER the v2 block (points into the parsed buffer) */
	uint16_t pd_len;        /* ULP private data length (PD_Length minus 4 when enhanced) */
};

/* Encoded length of f: MPA_FRAME_HDR_LEN + (enhanced ? 4 : 0) + pd_len. */
size_t mpa_frame_wire_len(const struct mpa_frame *f);

/* Encode f into out. Returns the number of octets written, -EINVAL if f is not a valid frame
 * (rev not 1/2, S with rev 1, R on a Request, reserved bits, IRD/ORD > 14 bits, PD_Length >
 * MPA_PD_MAX_RFC, pd NULL with pd_len > 0), or -ENOSPC if cap is too small. */
ssize_t mpa_frame_encode(const struct mpa_frame *f, uint8_t *out, size_t cap);

/* What the parser accepts. */
enum mpa_frame_expect {
	MPA_EXPECT_REQUEST = 1, /* responder side: only "MPA ID Req Frame" */
	MPA_EXPECT_REPLY = 2,   /* initiator side: only "MPA ID Rep Frame" */
	MPA_EXPECT_ANY = 3,     /* either key (tools, fuzzing) */
};

/* RFC 5044: reserved bits "MUST be set to zero when sending, and MUST NOT be checked on
 * reception". IGNORE follows the RFC (and tolerates siw's private 0x08); REJECT is strict. */
enum mpa_reserved_check {
	MPA_RESERVED_IGNORE = 0,
	MPA_RESERVED_REJECT = 1,
};

struct mpa_parse_opts {
	enum mpa_frame_expect expect;
	uint16_t pd_max;                  /* limit on PD_Length (incl. v2 block); 0 = MPA_PD_MAX_RFC */
	enum mpa_reserved_check reserved; /* see above */
};

/* Default options: expect, pd_max = MPA_PD_MAX_RFC, reserved bits ignored. */
void mpa_parse_opts_init(struct mpa_parse_opts *o, enum mpa_frame_expect expect);

/* Parse one MPA Request/Reply from the start of a (possibly partial) byte stream.
 * Returns  > 0  whole frame (header + all private data) present: octets consumed; *out filled,
 *               out->pd points into buf;
 *            0  need more bytes (nothing wrong so far: the key prefix, and once present the
 *               header, are validated as soon as they arrive);
 *           -1  invalid frame: *err = { MPA_ECODE_INVALID_REQ_REP, reason }.
 * Rejected: wrong key, rev not 1/2, PD_Length > limit, S with PD_Length < 4, R on a Request,
 * reserved bits when opts->reserved == MPA_RESERVED_REJECT. In a rev 1 frame the 0x10 bit is
 * reserved (not S). opts may be NULL (= MPA_EXPECT_ANY defaults). */
ssize_t mpa_frame_parse(const uint8_t *buf, size_t len, const struct mpa_parse_opts *opts,
			struct mpa_frame *out, struct mpa_error *err);

/* ---- negotiation ---------------------------------------------------------------------- */

/* How a peer that asks for markers is treated. Our FPDU codec supports markers. */
enum mpa_markers_policy {
	MPA_MARKERS_ACCEPT = 0, /* honour the peer's M (RFC 5044 behaviour; default) */
	MPA_MARKERS_REJECT = 1, /* reject / terminate like Linux siw does */
};

/* Initiator's check of the responder's IRD against our ORD (RFC 6581 §9.1). */
enum mpa_ird_check {
	MPA_IRD_RELAXED = 0, /* lower our ORD to the peer's IRD and go on (siw's default) */
	MPA_IRD_STRICT = 1,  /* insufficient IRD is an error: Terminate 0x06 / reject */
};

struct mpa_policy {
	uint8_t rev;              /* revision we offer (initiator) / highest we accept: 1 or 2 */
	bool enhanced;            /* RFC 6581 IRD/ORD block (needs rev 2) */
	bool crc_required;        /* we set C; C from either side means CRC both ways */
	bool markers_wanted;      /* we set M: the peer must put markers in what it sends us */
	enum mpa_markers_policy markers;
	bool p2p;                 /* peer-to-peer RTR mode (needs enhanced) */
	unsigned rtr_types;       /* enum mpa_rtr set: initiator offers, responder accepts */
	uint16_t ird;             /* our inbound RDMA READ queue depth (≤ 0x3FFE) */
	uint16_t ord;             /* our outbound RDMA READ queue depth (≤ 0x3FFE) */
	enum mpa_ird_check ird_check;
	uint16_t pd_max;          /* PD_Length limit for frames we receive (≤ MPA_PD_MAX_RFC) */
};

/* Defaults (anchors §4.3): rev 2, enhanced, P2P offering WRITE|READ RTR, no CRC required, no
 * markers wanted, markers accepted, IRD = ORD = MPA_DEFAULT_IRD_ORD, relaxed IRD check,
 * pd_max = MPA_PD_MAX_RFC. */
#define MPA_DEFAULT_IRD_ORD 16
void mpa_policy_default(struct mpa_policy *p);

/* Parameters of the established connection. Directions are from our point of view. */
struct mpa_conn_params {
	uint8_t rev;          /* revision in use (lower of the two) */
	bool enhanced;        /* RFC 6581 block exchanged */
	bool crc;             /* CRC on, both directions */
	bool markers_tx;      /* we put markers into the stream we send */
	bool markers_rx;      /* the peer puts markers into the stream we receive */
	bool p2p;             /* RTR exchange required before the first ULP message */
	enum mpa_rtr rtr;     /* the RTR the initiator sends and the responder waits for */
	uint16_t local_ird, local_ord;
	uint16_t peer_ird, peer_ord; /* MPA_V2_NO_VALUE if the peer did not say */
};

/* Initiator: build the MPA Request that policy p asks for (no ULP PD: set req->pd/pd_len
 * afterwards). */
void mpa_build_request(const struct mpa_policy *p, struct mpa_frame *req);

enum mpa_req_verdict {
	MPA_REQ_ACCEPT = 0, /* *reply is an accepting Reply, *res the connection parameters */
	MPA_REQ_REJECT = 1, /* *reply is a Reject (R=1), *why says why (ecode + reason) */
};

/* Responder: decide on a parsed Request. *reply is always filled (without ULP PD: set
 * reply->pd/pd_len before encoding, for an accept or a reject alike). res and why may be
 * NULL. */
enum mpa_req_verdict mpa_negotiate_request(const struct mpa_policy *p,
					   const struct mpa_frame *req,
					   struct mpa_frame *reply,
					   struct mpa_conn_params *res,
					   struct mpa_error *why);

/* Responder: build a Reject for req when the ULP (not MPA) refuses the connection. */
void mpa_build_reject(const struct mpa_policy *p, const struct mpa_frame *req,
		      struct mpa_frame *reply);

enum mpa_reply_verdict {
	MPA_REPLY_CONNECTED = 0, /* *res filled; if res->p2p, send the res->rtr RTR first */
	MPA_REPLY_REJECTED = 1,  /* peer set R: close, no Terminate; err->ecode = NONE */
	MPA_REPLY_TERMINATE = 2, /* send a Terminate (LLP, MPA) with err->ecode, then close */
};

/* Initiator: decide on the parsed Reply to the Request we sent. res and err may be NULL. */
enum mpa_reply_verdict mpa_negotiate_reply(const struct mpa_policy *p,
					   const struct mpa_frame *request_sent,
					   const struct mpa_frame *reply,
					   struct mpa_conn_params *res,
					   struct mpa_error *err);

/* Short names for logs: "none", "send", "write", "read" ("invalid" otherwise). */
const char *mpa_rtr_name(enum mpa_rtr r);

#endif
