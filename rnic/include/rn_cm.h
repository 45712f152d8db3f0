/* MPA connection establishment over any rn_transport (RFC 5044 §7.1, RFC 6581): the Request /
 * Reply exchange, private data, reject, the RTR of peer-to-peer mode, then a handoff of the
 * stream to a QP. An explicit state machine (enum rn_cm_state), fully non-blocking: the owner
 * calls rn_cm_progress() whenever the fd is ready or the deadline passed (rn_cm_fd,
 * rn_cm_poll_events, rn_cm_timeout_ms), or uses the blocking helper rn_cm_wait().
 *
 * Wire decisions (pinned by tests/rnic/test_cm*.c):
 *   - The active side sends the Request at once after TCP connect; in P2P mode it sends the
 *     RTR FPDU chosen by the Reply, then reports ESTABLISHED. A READ RTR is answered by the
 *     passive CM with a zero-length Read Response; the active CM consumes it before reporting
 *     ESTABLISHED, so the QPs start with no RTR traffic outstanding.
 *   - RTR FPDUs: WRITE = tagged, L, STag 1, TO 0, no payload (byte-identical to Linux siw);
 *     SEND = untagged QN 0, MSN 1, MO 0; READ = Read Request QN 1, MSN 1, sink STag 1 / TO 0,
 *     size 0, source STag 1 / TO 0. The passive CM accepts any STag/TO on a zero-length RTR.
 *   - Initiator negotiation failure: a Terminate (layer LLP, etype MPA, the verdict's ecode)
 *     in one FPDU, then an orderly close. Wrong RTR at the responder: Terminate 0x07.
 *   - A malformed Request with a valid key gets a Reject (rev 1 or 2, R=1) and a close; a
 *     stream that does not start with the MPA key is reset at once.
 *   - Errors (rn_cm_error): -ETIMEDOUT (a waiting state's timer fired; the stream is reset),
 *     -ECONNREFUSED (peer rejected, or TCP refused), -EPROTO (bad frame, negotiation failure
 *     or bad RTR; rn_cm_mpa_error says which), -ECONNABORTED (the peer sent a Terminate:
 *     rn_cm_peer_term), -ECONNRESET (the peer closed or reset before setup was complete),
 *     other transport errors as returned. Never a crash on peer input.
 */
#ifndef RN_CM_H
#define RN_CM_H

#if !defined(RNIC_H) && !defined(RNIC_INTERNAL)
#error "include rnic.h, the RNIC's public header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ddp.h"
#include "mpa.h"
#include "rn_transport.h"

enum rn_cm_state {
	RN_CM_CONNECTING,   /* active: TCP connect in progress */
	RN_CM_MPA_WAIT_REP, /* active: Request sent (or being sent), waiting for the Reply */
	RN_CM_SEND_RTR,     /* active: RTR queued, waiting until the transport took it */
	RN_CM_WAIT_RTR_RESP,/* active: READ RTR sent, waiting for its zero-length Read Response */
	RN_CM_MPA_WAIT_REQ, /* passive: waiting for the Request */
	RN_CM_WAIT_ACCEPT,  /* passive: Request acceptable, the consumer decides (accept/reject) */
	RN_CM_SEND_REP,     /* passive: accepting Reply queued */
	RN_CM_WAIT_RTR,     /* passive: P2P, waiting for the initiator's RTR FPDU */
	RN_CM_SEND_RTR_RESP,/* passive: READ RTR's Read Response queued */
	RN_CM_SEND_REJECT,  /* either: Reject (R=1) or Terminate queued, then close */
	RN_CM_ESTABLISHED,  /* Full Operation Phase: rn_cm_handoff() */
	RN_CM_REJECTED,     /* connection refused by a peer's or our Reject; closed */
	RN_CM_FAILED,       /* rn_cm_error() says why; closed */
};

/* Configuration. Timeouts are in milliseconds; 0 means "wait forever" for that state. */
struct rn_cm_cfg {
	struct mpa_policy policy; /* mpa_policy_default() unless the caller overrides */
	unsigned connect_ms;      /* CONNECTING */
	unsigned mpa_ms;          /* MPA_WAIT_REP, MPA_WAIT_REQ (and sending any frame) */
	unsigned accept_ms;       /* WAIT_ACCEPT: the consumer's decision */
	unsigned rtr_ms;          /* WAIT_RTR, WAIT_RTR_RESP, SEND_RTR*, SEND_REP */
};

#define RN_CM_DEFAULT_TIMEOUT_MS 10000u

/* Policy mpa_policy_default(), every timeout RN_CM_DEFAULT_TIMEOUT_MS. */
void rn_cm_cfg_default(struct rn_cm_cfg *cfg);

struct rn_cm;

/* Active side: connect to addr over t and send the MPA Request carrying pd[0..pd_len) of ULP
 * private data (at most MPA_PD_MAX_RFC, less 4 when enhanced). Returns 0 and *out, or
 * -EINVAL / -ENOMEM / the transport's immediate connect error. */
int rn_cm_connect(const struct rn_transport *t, const struct sockaddr *addr, socklen_t len,
		  const struct rn_cm_cfg *cfg, const void *pd, size_t pd_len, struct rn_cm **out);

/* Passive side: run the responder on conn, a stream just accepted from a listener. The CM
 * owns conn from here (even when this fails: -ENOMEM closes it). */
int rn_cm_passive(struct rn_conn *conn, const struct rn_cm_cfg *cfg, struct rn_cm **out);

/* Do every step possible without blocking: send queued octets, read and parse what arrived,
 * enforce the deadline. Returns the state afterwards. */
enum rn_cm_state rn_cm_progress(struct rn_cm *cm);

/* Blocking helper: poll the fd and progress until the state leaves the waiting states
 * (i.e. is WAIT_ACCEPT, ESTABLISHED, REJECTED or FAILED) or max_ms passed (< 0: no limit
 * other than the state timeouts). Returns the state. */
enum rn_cm_state rn_cm_wait(struct rn_cm *cm, int max_ms);

enum rn_cm_state rn_cm_state(const struct rn_cm *cm);
const char *rn_cm_state_name(enum rn_cm_state s);

/* True in WAIT_ACCEPT, ESTABLISHED, REJECTED, FAILED: nothing happens without the owner. */
bool rn_cm_settled(const struct rn_cm *cm);

/* What to wait for: the fd (-1 when closed), POLLIN/POLLOUT bits, and ms until the current
 * state's deadline (-1: none). */
int rn_cm_fd(const struct rn_cm *cm);
short rn_cm_poll_events(const struct rn_cm *cm);
int rn_cm_timeout_ms(const struct rn_cm *cm);

/* Passive, in WAIT_ACCEPT: the peer's Request (pd points into the CM, valid until destroy)
 * and the parameters an accept would establish. */
const struct mpa_frame *rn_cm_request(const struct rn_cm *cm);
const struct mpa_conn_params *rn_cm_params(const struct rn_cm *cm);

/* Passive, in WAIT_ACCEPT: accept with (or reject with, R=1) private data. -EINVAL when not
 * in WAIT_ACCEPT or pd too long for the frame. Progress goes on in rn_cm_progress. */
int rn_cm_accept(struct rn_cm *cm, const void *pd, size_t pd_len);
int rn_cm_reject(struct rn_cm *cm, const void *pd, size_t pd_len);

/* Passive, in WAIT_ACCEPT: accept with our IRD / ORD set to ird / ord instead of the
 * policy's (0 keeps the policy's value; at most MPA_V2_NO_VALUE - 1). The Request is
 * negotiated again with them under the rules of mpa_negotiate_request (mpa_negotiate.c D7:
 * Reply ORD = min(ord, initiator IRD), Reply IRD = min(ird, initiator ORD); a READ RTR keeps
 * IRD >= 1), so the Reply's RFC 6581 block and rn_cm_params() follow. -EINVAL as
 * rn_cm_accept, or when the values are out of range or the new negotiation would reject
 * (strict IRD check); nothing changes then. rn_cm_accept(cm, pd, len) is
 * rn_cm_accept_ird_ord(cm, pd, len, 0, 0). */
int rn_cm_accept_ird_ord(struct rn_cm *cm, const void *pd, size_t pd_len, uint16_t ird,
			 uint16_t ord);

/* The private data the peer sent: its Request (passive) or its Reply / Reject (active),
 * without the RFC 6581 block. NULL with *len 0 before one arrived. */
const uint8_t *rn_cm_peer_pd(const struct rn_cm *cm, size_t *len);

/* FAILED / REJECTED: negative errno (0 otherwise); the MPA-level cause when there is one
 * (ecode MPA_ECODE_NONE otherwise); the Terminate the peer sent (valid iff
 * rn_cm_error() == -ECONNABORTED). */
int rn_cm_error(const struct rn_cm *cm);
const struct mpa_error *rn_cm_mpa_error(const struct rn_cm *cm);
struct iwarp_err rn_cm_peer_term(const struct rn_cm *cm);

/* What a QP needs to take over an ESTABLISHED connection. */
struct rn_cm_handoff {
	struct rn_conn *conn;          /* now the caller's */
	struct mpa_conn_params params; /* negotiated (crc, markers, p2p, rtr, IRD/ORD) */
	uint8_t *rx;                   /* Full Operation octets already received after the
	                                * MPA frames / RTR exchange: the QP's receive path must
	                                * process them before reading the transport. malloc'ed,
	                                * the caller frees; NULL when rx_len == 0 */
	size_t rx_len;
	uint32_t tx_pos, rx_pos;       /* Full Operation octets already sent / consumed by the
	                                * CM (RTR traffic): mpa_tx.pos / mpa_rx_cfg.pos */
	uint32_t tx_msn[3], rx_msn[3]; /* next DDP MSN per RDMAP queue (QN 0 Send, 1 Read
	                                * Request, 2 Terminate) after the RTR: 1 unless the RTR
	                                * used that queue (then 2) */
	uint32_t emss;                 /* the stream's MSS at handoff (rn_conn_mss); 0 when the
	                                * transport cannot tell. The QP's MULPDU comes from it */
};

/* ESTABLISHED only: move the connection out (-EINVAL otherwise). The CM no longer refers to
 * it; destroy the CM afterwards. */
int rn_cm_handoff(struct rn_cm *cm, struct rn_cm_handoff *h);

/* Release the CM; a connection still owned is reset (abortive close) unless setup finished
 * normally or a queued Reject / Terminate could be sent now (then closed). */
void rn_cm_destroy(struct rn_cm *cm);

#endif
