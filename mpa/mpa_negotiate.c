/* MPA connection negotiation (RFC 5044 §7.1, RFC 6581 §§8-9) as pure functions.
 *
 * Decisions (each one is also exercised by tests/mpa/test_negotiate.c):
 *  D1 Revision: the Reply carries min(request rev, our rev). A rev 1 peer is accepted (no
 *     IRD/ORD block, no RTR). A rev 2 frame without S is a plain frame (no block).
 *  D2 Enhanced/P2P as responder: honoured whenever the request asks and rev 2 is in use; the
 *     policy's enhanced/p2p flags only steer what we offer as initiator. rtr_types is the set
 *     of RTR messages we accept as responder.
 *  D3 RTR choice (responder): WRITE, else READ, else SEND, among (offered ∩ accepted). WRITE
 *     first as siw does: it needs no receive WQE (SEND does) and no IRD slot (READ does). READ
 *     is only eligible if we can serve one inbound read (policy ird ≥ 1). No common type ⇒
 *     Reject (why = NO_MATCHING_RTR) rather than siw's "propose WRITE anyway", which only
 *     moves the failure to a Terminate after the connection is half up.
 *  D4 RTR (initiator): the type to send is the single type set in the *Reply*; it must be one
 *     we offered, else Terminate 0x07. A Reply without P2P means the responder does not do
 *     P2P: we connect without RTR (RFC 5044 rule: the initiator sends first).
 *  D5 CRC: C from either side ⇒ CRC on both ways (RFC 5044). A CRC-requiring responder sets C
 *     in its Reply even if the request had C=0 (Linux siw does NOT: rping-stock-to-crc shows
 *     its Reply without C). A Reply with C=0 to a request with C=1 violates RFC 5044 and is
 *     refused (Terminate 0x04) instead of failing later on the first FPDU's CRC.
 *  D6 Markers: M in a frame means "its sender wants markers in the stream it receives". Our
 *     FPDU codec supports markers, so by default (MPA_MARKERS_ACCEPT) a peer's M=1 is
 *     honoured (markers_tx). MPA_MARKERS_REJECT behaves like siw (Reject / Terminate 0x04).
 *     We set M only if policy markers_wanted (default off).
 *  D7 IRD/ORD (responder): reply ORD = min(our ORD, initiator IRD) (RFC 6581: must not exceed
 *     it); reply IRD = min(our IRD, initiator ORD), i.e. mirror the peer like siw so the bytes
 *     match siw's. Initiator ORD > our IRD: strict ⇒ Reject (why = INSUFFICIENT_IRD); relaxed
 *     ⇒ reply our smaller IRD and let the initiator lower its ORD. 0x3FFF ("no value") never
 *     constrains: min() with 0x3FFF keeps our own value.
 *  D8 IRD/ORD (initiator): responder IRD < our ORD: relaxed ⇒ lower our ORD; strict ⇒
 *     Terminate 0x06 (if our request gave ORD "no value", we adopt the responder's IRD).
 *     Responder ORD > our IRD ⇒ always Terminate 0x06 (we cannot serve the
 *     reads it will issue). READ RTR chosen but responder IRD 0 ⇒ Terminate 0x06.
 *  D9 A READ RTR needs one ORD slot: when we offer READ RTR our request's ORD is at least 1
 *     (as siw does).
 *  D10 A Reply that is enhanced when our request was not, or has a higher revision, is an
 *     invalid Reply (0x04). A plain rev 2 or rev 1 Reply to an enhanced request is accepted
 *     as a downgrade (peer IRD/ORD unknown, no RTR).
 *  D11 Reject frames (ours) mirror the negotiated revision and, if enhanced, carry a block
 *     with our IRD/ORD and no P2P, so the initiator can see what we can offer.
 */
#include "mpa_frame.h"

#include <string.h>

void mpa_policy_default(struct mpa_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->rev = MPA_REV_2;
	p->enhanced = true;
	p->crc_required = false;
	p->markers_wanted = false;
	p->markers = MPA_MARKERS_ACCEPT;
	p->p2p = true;
	p->rtr_types = MPA_RTR_WRITE | MPA_RTR_READ;
	p->ird = MPA_DEFAULT_IRD_ORD;
	p->ord = MPA_DEFAULT_IRD_ORD;
	p->ird_check = MPA_IRD_RELAXED;
	p->pd_max = MPA_PD_MAX_RFC;
}

const char *mpa_rtr_name(enum mpa_rtr r)
{
	switch (r) {
	case MPA_RTR_NONE:
		return "none";
	case MPA_RTR_SEND:
		return "send";
	case MPA_RTR_WRITE:
		return "write";
	case MPA_RTR_READ:
		return "read";
	}
	return "invalid";
}

static uint8_t policy_rev(const struct mpa_policy *p)
{
	return p->rev >= MPA_REV_2 ? MPA_REV_2 : MPA_REV_1;
}

static uint16_t min16(uint16_t a, uint16_t b)
{
	return a < b ? a : b;
}

static uint16_t v2_value(uint16_t v)
{
	return v > MPA_V2_VALUE_MASK ? MPA_V2_VALUE_MASK : v;
}

static void set_error(struct mpa_error *e, enum mpa_ecode ecode, const char *reason)
{
	if (e != NULL) {
		e->ecode = ecode;
		e->reason = reason;
	}
}

/* ---- initiator: request --------------------------------------------------------------- */

void mpa_build_request(const struct mpa_policy *p, struct mpa_frame *req)
{
	memset(req, 0, sizeof(*req));
	req->type = MPA_FRAME_REQUEST;
	req->rev = policy_rev(p);
	req->crc = p->crc_required;
	req->markers = p->markers_wanted;
	req->enhanced = p->enhanced && req->rev == MPA_REV_2;
	if (!req->enhanced)
		return;
	req->v2.ird = v2_value(p->ird);
	req->v2.ord = v2_value(p->ord);
	unsigned rtr = p->rtr_types & MPA_RTR_ALL;
	req->v2.p2p = p->p2p && rtr != 0;
	if (!req->v2.p2p)
		return;
	req->v2.rtr = rtr;
	if ((rtr & MPA_RTR_READ) && req->v2.ord == 0)
		req->v2.ord = 1; /* D9 */
}

/* ---- responder ------------------------------------------------------------------------ */

/* The Reply fields that do not depend on the verdict (D1, D2, D5, D6). */
static void reply_skeleton(const struct mpa_policy *p, const struct mpa_frame *req,
			   struct mpa_frame *reply)
{
	memset(reply, 0, sizeof(*reply));
	reply->type = MPA_FRAME_REPLY;
	reply->rev = req->rev < policy_rev(p) ? req->rev : policy_rev(p);
	if (reply->rev < MPA_REV_1)
		reply->rev = MPA_REV_1;
	reply->crc = req->crc || p->crc_required;
	reply->markers = p->markers_wanted;
	reply->enhanced = req->enhanced && reply->rev == MPA_REV_2;
}

static void make_reject(const struct mpa_policy *p, const struct mpa_frame *req,
			struct mpa_frame *reply)
{
	reply_skeleton(p, req, reply);
	reply->reject = true;
	if (reply->enhanced) { /* D11 */
		reply->v2.ird = v2_value(p->ird);
		reply->v2.ord = v2_value(p->ord);
	}
}

void mpa_build_reject(const struct mpa_policy *p, const struct mpa_frame *req,
		      struct mpa_frame *reply)
{
	make_reject(p, req, reply);
}

static enum mpa_req_verdict reject(const struct mpa_policy *p, const struct mpa_frame *req,
				   struct mpa_frame *reply, struct mpa_error *why,
				   enum mpa_ecode ecode, const char *reason)
{
	make_reject(p, req, reply);
	set_error(why, ecode, reason);
	return MPA_REQ_REJECT;
}

/* D3: the RTR type we pick from the initiator's offer, or MPA_RTR_NONE. */
static enum mpa_rtr choose_rtr(const struct mpa_policy *p, unsigned offered)
{
	unsigned ok = offered & p->rtr_types & MPA_RTR_ALL;

	if (p->ird == 0)
		ok &= ~(unsigned)MPA_RTR_READ;
	if (ok & MPA_RTR_WRITE)
		return MPA_RTR_WRITE;
	if (ok & MPA_RTR_READ)
		return MPA_RTR_READ;
	if (ok & MPA_RTR_SEND)
		return MPA_RTR_SEND;
	return MPA_RTR_NONE;
}

/* Fill reply->v2 for an enhanced request (D3, D7). Returns NULL or the reject reason, with
 * *ecode set. */
static const char *responder_v2(const struct mpa_policy *p, const struct mpa_v2_block *peer,
				struct mpa_v2_block *mine, enum mpa_ecode *ecode)
{
	*ecode = MPA_ECODE_NONE;
	mine->ord = min16(v2_value(p->ord), peer->ird);
	mine->ird = min16(v2_value(p->ird), peer->ord);
	if (peer->ord != MPA_V2_NO_VALUE && peer->ord > mine->ird &&
	    p->ird_check == MPA_IRD_STRICT) {
		*ecode = MPA_ECODE_INSUFFICIENT_IRD;
		return "initiator ORD exceeds our IRD (strict IRD check)";
	}
	if (!peer->p2p)
		return NULL;
	enum mpa_rtr rtr = choose_rtr(p, peer->rtr);
	if (rtr == MPA_RTR_NONE) {
		*ecode = MPA_ECODE_NO_MATCHING_RTR;
		return "no offered RTR type is acceptable";
	}
	mine->p2p = true; /* RFC 6581: the responder echoes P2P */
	mine->rtr = rtr;
	if (rtr == MPA_RTR_READ && mine->ird == 0)
		mine->ird = 1; /* the RTR itself is one inbound read */
	return NULL;
}

static void responder_result(const struct mpa_policy *p, const struct mpa_frame *req,
			     const struct mpa_frame *reply, struct mpa_conn_params *r)
{
	memset(r, 0, sizeof(*r));
	r->rev = reply->rev;
	r->enhanced = reply->enhanced;
	r->crc = reply->crc;
	r->markers_tx = req->markers;
	r->markers_rx = reply->markers;
	r->local_ird = v2_value(p->ird);
	r->local_ord = v2_value(p->ord);
	r->peer_ird = MPA_V2_NO_VALUE;
	r->peer_ord = MPA_V2_NO_VALUE;
	if (!reply->enhanced)
		return;
	r->local_ird = reply->v2.ird;
	r->local_ord = reply->v2.ord;
	r->peer_ird = req->v2.ird;
	r->peer_ord = req->v2.ord;
	r->p2p = reply->v2.p2p;
	r->rtr = (enum mpa_rtr)reply->v2.rtr;
}

/* Structural checks a hand-built (not parsed) request could fail. */
static const char *request_error(const struct mpa_frame *req)
{
	if (req->type != MPA_FRAME_REQUEST)
		return "frame is not an MPA Request";
	if (req->reject)
		return "R (reject) flag set in an MPA Request";
	if (req->rev != MPA_REV_1 && req->rev != MPA_REV_2)
		return "unsupported MPA revision";
	if (req->enhanced && req->rev != MPA_REV_2)
		return "enhanced (S) flag in a rev 1 request";
	return NULL;
}

enum mpa_req_verdict mpa_negotiate_request(const struct mpa_policy *p,
					   const struct mpa_frame *req,
					   struct mpa_frame *reply,
					   struct mpa_conn_params *res,
					   struct mpa_error *why)
{
	const char *bad = request_error(req);
	if (bad != NULL)
		return reject(p, req, reply, why, MPA_ECODE_INVALID_REQ_REP, bad);
	if (req->markers && p->markers == MPA_MARKERS_REJECT) /* D6 */
		return reject(p, req, reply, why, MPA_ECODE_INVALID_REQ_REP,
			      "peer requires markers, policy refuses them");
	reply_skeleton(p, req, reply);
	if (reply->enhanced) {
		enum mpa_ecode ecode;
		bad = responder_v2(p, &req->v2, &reply->v2, &ecode);
		if (bad != NULL)
			return reject(p, req, reply, why, ecode, bad);
	}
	if (res != NULL)
		responder_result(p, req, reply, res);
	set_error(why, MPA_ECODE_NONE, "accepted");
	return MPA_REQ_ACCEPT;
}

/* ---- initiator: reply ----------------------------------------------------------------- */

/* D4: the RTR the reply selected. Returns NULL or the reason for Terminate 0x07. */
static const char *initiator_rtr(const struct mpa_v2_block *sent, const struct mpa_v2_block *rep,
				 enum mpa_rtr *rtr)
{
	*rtr = MPA_RTR_NONE;
	if (!rep->p2p)
		return NULL;
	if (!sent->p2p)
		return "reply sets P2P that the request did not offer";
	unsigned r = rep->rtr;
	if (r != MPA_RTR_WRITE && r != MPA_RTR_READ && r != MPA_RTR_SEND)
		return "reply does not choose exactly one RTR type";
	if ((sent->rtr & r) == 0)
		return "reply chose an RTR type the request did not offer";
	*rtr = (enum mpa_rtr)r;
	return NULL;
}

/* D8: settle IRD/ORD against the reply. Returns NULL or the reason for Terminate 0x06. */
static const char *initiator_ird_ord(const struct mpa_policy *p, const struct mpa_v2_block *sent,
				     const struct mpa_v2_block *rep, enum mpa_rtr rtr,
				     struct mpa_conn_params *r)
{
	r->local_ird = sent->ird;
	r->local_ord = sent->ord;
	r->peer_ird = rep->ird;
	r->peer_ord = rep->ord;
	if (rep->ord != MPA_V2_NO_VALUE && sent->ird != MPA_V2_NO_VALUE && rep->ord > sent->ird)
		return "responder ORD exceeds our IRD";
	if (rtr == MPA_RTR_READ && rep->ird == 0)
		return "READ RTR chosen but responder IRD is 0";
	if (rep->ird == MPA_V2_NO_VALUE || rep->ird >= sent->ord)
		return NULL;
	if (p->ird_check == MPA_IRD_STRICT && sent->ord != MPA_V2_NO_VALUE)
		return "responder IRD below our ORD (strict IRD check)";
	r->local_ord = rep->ird; /* relaxed, or we gave no value: take the peer's IRD */
	return NULL;
}

/* Flag and revision consistency of reply vs. request (D5, D6, D10). */
static const char *reply_error(const struct mpa_policy *p, const struct mpa_frame *sent,
			       const struct mpa_frame *rep)
{
	if (rep->type != MPA_FRAME_REPLY)
		return "frame is not an MPA Reply";
	if (rep->rev < MPA_REV_1 || rep->rev > sent->rev)
		return "reply revision above the requested one";
	if (rep->enhanced && (!sent->enhanced || rep->rev != MPA_REV_2))
		return "enhanced reply to a non-enhanced request";
	if (sent->crc && !rep->crc)
		return "reply drops the CRC our request required";
	if (rep->markers && p->markers == MPA_MARKERS_REJECT)
		return "peer requires markers, policy refuses them";
	return NULL;
}

static enum mpa_reply_verdict terminate(struct mpa_error *err, enum mpa_ecode ecode,
					const char *reason)
{
	set_error(err, ecode, reason);
	return MPA_REPLY_TERMINATE;
}

enum mpa_reply_verdict mpa_negotiate_reply(const struct mpa_policy *p,
					   const struct mpa_frame *request_sent,
					   const struct mpa_frame *reply,
					   struct mpa_conn_params *res,
					   struct mpa_error *err)
{
	struct mpa_conn_params r;
	const char *bad;

	if (reply->type == MPA_FRAME_REPLY && reply->reject) {
		set_error(err, MPA_ECODE_NONE, "rejected by peer");
		return MPA_REPLY_REJECTED;
	}
	bad = reply_error(p, request_sent, reply);
	if (bad != NULL)
		return terminate(err, MPA_ECODE_INVALID_REQ_REP, bad);

	memset(&r, 0, sizeof(r));
	r.rev = reply->rev;
	r.enhanced = reply->enhanced;
	r.crc = request_sent->crc || reply->crc;
	r.markers_tx = reply->markers;
	r.markers_rx = request_sent->markers;
	r.local_ird = request_sent->enhanced ? request_sent->v2.ird : v2_value(p->ird);
	r.local_ord = request_sent->enhanced ? request_sent->v2.ord : v2_value(p->ord);
	r.peer_ird = r.peer_ord = MPA_V2_NO_VALUE;
	if (reply->enhanced) {
		bad = initiator_rtr(&request_sent->v2, &reply->v2, &r.rtr);
		if (bad != NULL)
			return terminate(err, MPA_ECODE_NO_MATCHING_RTR, bad);
		r.p2p = r.rtr != MPA_RTR_NONE;
		bad = initiator_ird_ord(p, &request_sent->v2, &reply->v2, r.rtr, &r);
		if (bad != NULL)
			return terminate(err, MPA_ECODE_INSUFFICIENT_IRD, bad);
	}
	if (res != NULL)
		*res = r;
	set_error(err, MPA_ECODE_NONE, "connected");
	return MPA_REPLY_CONNECTED;
}
