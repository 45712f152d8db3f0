/* MPA negotiation: replay of Linux siw connection setups, and every decision in
 * mpa/mpa_negotiate.c (D1..D11). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mpa.h"
#include "mpa_test_util.h"

/* Request/Reply payloads of Linux siw captures (frames 4 and 6). */
struct capture {
	const char *name, *req, *rep;
};
static const struct capture caps[] = {
	{ "rping-stock", KEYREQ "1002000400010001", KEYREP "1002000400010001" },
	{ "rping-crc", KEYREQ "5002000400010001", KEYREP "5002000400010001" },
	{ "rping-crc-to-stock", KEYREQ "5002000400010001", KEYREP "5002000400010001" },
	{ "rping-stock-to-crc", KEYREQ "1002000400010001", KEYREP "1002000400010001" },
	{ "rping-p2p", KEYREQ "100200048001c001", KEYREP "1002000480018001" },
	{ "ib_write_bw-p2p", KEYREQ "100200048000c001", KEYREP "1002000480018000" },
	{ "host-mpa-probe-stock", KEYREQ "1002000400010001", KEYREP "1002000400010001" },
};
enum { STOCK, CRC, CRC_TO_STOCK, STOCK_TO_CRC, P2P, WBW_P2P, PROBE, NCAPS };

static void parse_hex(const char *hex, uint8_t *buf, size_t cap, struct mpa_frame *f)
{
	size_t n = unhex(hex, buf, cap);
	struct mpa_error err = { 0 };
	assert_int_equal(mpa_frame_parse(buf, n, NULL, f, &err), (ssize_t)n);
}

static void encode_equals_hex(const struct mpa_frame *f, const char *hex)
{
	uint8_t want[64], got[64];
	size_t n = unhex(hex, want, sizeof(want));
	assert_int_equal(mpa_frame_encode(f, got, sizeof(got)), (ssize_t)n);
	assert_memory_equal(got, want, n);
}

/* The siw endpoint configuration that produced a capture, as our policy. */
static void siw_policy(struct mpa_policy *p, bool crc, bool p2p, uint16_t ird, uint16_t ord)
{
	mpa_policy_default(p);
	p->crc_required = crc;
	p->p2p = p2p;
	p->ird = ird;
	p->ord = ord;
}

/* Our responder (default policy, as crc_required per the capture's server) answers each
 * captured request with exactly siw's bytes; the one documented exception is
 * rping-stock-to-crc (D5). */
static void test_responder_matches_siw(void **state)
{
	(void)state;
	for (int i = 0; i < NCAPS; i++) {
		uint8_t buf[64];
		struct mpa_frame req, reply;
		struct mpa_policy p;
		struct mpa_conn_params res;
		struct mpa_error why;

		mpa_policy_default(&p);
		p.crc_required = (i == CRC || i == STOCK_TO_CRC);
		parse_hex(caps[i].req, buf, sizeof(buf), &req);
		assert_int_equal(mpa_negotiate_request(&p, &req, &reply, &res, &why), MPA_REQ_ACCEPT);
		assert_int_equal(why.ecode, MPA_ECODE_NONE);
		if (i == STOCK_TO_CRC) {
			/* D5: RFC 5044 behaviour: we set C; Linux did not (flags 0x50 vs 0x10). */
			encode_equals_hex(&reply, KEYREP "5002000400010001");
			assert_true(res.crc);
			continue;
		}
		encode_equals_hex(&reply, caps[i].rep);
		assert_int_equal(res.crc, i == CRC || i == CRC_TO_STOCK);
		assert_int_equal(res.p2p, i == P2P || i == WBW_P2P);
		assert_int_equal(res.rtr, res.p2p ? MPA_RTR_WRITE : MPA_RTR_NONE);
	}
}

/* Our initiator, configured like the capture's client, sends siw's bytes and accepts siw's
 * reply with the parameters siw used. */
static void test_initiator_matches_siw(void **state)
{
	(void)state;
	struct {
		int cap;
		bool crc, p2p;
		uint16_t ird, ord;
	} clients[] = {
		{ STOCK, false, false, 1, 1 },  { CRC, true, false, 1, 1 },
		{ CRC_TO_STOCK, true, false, 1, 1 }, { STOCK_TO_CRC, false, false, 1, 1 },
		{ P2P, false, true, 1, 1 },
		{ WBW_P2P, false, true, 0, 0 }, /* ORD 0 forced to 1 by the READ RTR offer (D9) */
	};
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		const struct capture *c = &caps[clients[i].cap];
		struct mpa_policy p;
		struct mpa_frame req, reply;
		struct mpa_conn_params res;
		struct mpa_error err;
		uint8_t buf[64];

		siw_policy(&p, clients[i].crc, clients[i].p2p, clients[i].ird, clients[i].ord);
		mpa_build_request(&p, &req);
		encode_equals_hex(&req, c->req);
		parse_hex(c->rep, buf, sizeof(buf), &reply);
		assert_int_equal(mpa_negotiate_reply(&p, &req, &reply, &res, &err),
				 MPA_REPLY_CONNECTED);
		assert_int_equal(err.ecode, MPA_ECODE_NONE);
		assert_int_equal(res.rev, 2);
		assert_true(res.enhanced);
		assert_int_equal(res.crc, clients[i].crc);
		assert_int_equal(res.p2p, clients[i].p2p);
		assert_int_equal(res.rtr, clients[i].p2p ? MPA_RTR_WRITE : MPA_RTR_NONE);
		assert_false(res.markers_tx);
		assert_false(res.markers_rx);
		assert_int_equal(res.local_ird, req.v2.ird);
		assert_int_equal(res.local_ord, req.v2.ord);
		assert_int_equal(res.peer_ird, reply.v2.ird);
		assert_int_equal(res.peer_ord, reply.v2.ord);
	}
}

/* Our default initiator against our default responder, through the wire codec. */
static void test_end_to_end_defaults(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame req, req_rx, reply, reply_rx;
	struct mpa_conn_params r_res, i_res;
	struct mpa_parse_opts o;
	uint8_t wire[64];
	ssize_t n;

	mpa_policy_default(&p);
	mpa_build_request(&p, &req);
	n = mpa_frame_encode(&req, wire, sizeof(wire));
	encode_equals_hex(&req, KEYREQ "100200048010c010"); /* P2P, IRD 16, WRITE|READ, ORD 16 */
	mpa_parse_opts_init(&o, MPA_EXPECT_REQUEST);
	assert_int_equal(mpa_frame_parse(wire, (size_t)n, &o, &req_rx, NULL), n);
	assert_int_equal(mpa_negotiate_request(&p, &req_rx, &reply, &r_res, NULL), MPA_REQ_ACCEPT);
	n = mpa_frame_encode(&reply, wire, sizeof(wire));
	encode_equals_hex(&reply, KEYREP "1002000480108010");
	mpa_parse_opts_init(&o, MPA_EXPECT_REPLY);
	assert_int_equal(mpa_frame_parse(wire, (size_t)n, &o, &reply_rx, NULL), n);
	assert_int_equal(mpa_negotiate_reply(&p, &req, &reply_rx, &i_res, NULL), MPA_REPLY_CONNECTED);

	assert_int_equal(i_res.rtr, MPA_RTR_WRITE);
	assert_int_equal(r_res.rtr, MPA_RTR_WRITE);
	assert_true(i_res.p2p && r_res.p2p);
	assert_int_equal(i_res.local_ord, r_res.peer_ord);
	assert_int_equal(i_res.local_ird, r_res.peer_ird);
	assert_int_equal(r_res.local_ird, i_res.peer_ird);
	assert_int_equal(r_res.local_ord, i_res.peer_ord);
	assert_false(i_res.crc || r_res.crc);
}

static struct mpa_frame request(uint8_t rev, bool enhanced, bool p2p, unsigned rtr,
				uint16_t ird, uint16_t ord)
{
	struct mpa_frame f = {
		.type = MPA_FRAME_REQUEST, .rev = rev, .enhanced = enhanced,
		.v2 = { .p2p = p2p, .rtr = rtr, .ird = ird, .ord = ord },
	};
	return f;
}

static void respond(const struct mpa_policy *p, const struct mpa_frame *req,
		    enum mpa_req_verdict want, struct mpa_frame *reply,
		    struct mpa_conn_params *res, struct mpa_error *why)
{
	assert_int_equal(mpa_negotiate_request(p, req, reply, res, why), want);
	assert_int_equal(reply->type, MPA_FRAME_REPLY);
	assert_int_equal(reply->reject, want == MPA_REQ_REJECT);
	uint8_t out[64];
	assert_true(mpa_frame_encode(reply, out, sizeof(out)) >= 20); /* always sendable */
}

static void test_rev1_peer(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame req = request(1, false, false, 0, 0, 0), reply;
	struct mpa_conn_params res;
	struct mpa_error why;
	mpa_policy_default(&p);
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, &why);
	assert_int_equal(reply.rev, 1);
	assert_false(reply.enhanced);
	encode_equals_hex(&reply, KEYREP "00010000");
	assert_int_equal(res.rev, 1);
	assert_false(res.enhanced || res.p2p);
	assert_int_equal(res.rtr, MPA_RTR_NONE);
	assert_int_equal(res.peer_ird, MPA_V2_NO_VALUE);
	assert_int_equal(res.local_ird, MPA_DEFAULT_IRD_ORD);

	/* We as a rev 1 initiator; and a rev 2 initiator downgraded by a rev 1 reply (D10). */
	struct mpa_frame sent, rep1 = { .type = MPA_FRAME_REPLY, .rev = 1 };
	p.rev = 1;
	mpa_build_request(&p, &sent);
	encode_equals_hex(&sent, KEYREQ "00010000");
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep1, &res, NULL), MPA_REPLY_CONNECTED);
	mpa_policy_default(&p);
	mpa_build_request(&p, &sent);
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep1, &res, NULL), MPA_REPLY_CONNECTED);
	assert_int_equal(res.rev, 1);
	assert_false(res.p2p);
	assert_int_equal(res.peer_ord, MPA_V2_NO_VALUE);
}

static void test_rev2_plain(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame req = request(2, false, false, 0, 0, 0), reply;
	struct mpa_conn_params res;
	mpa_policy_default(&p);
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, NULL);
	encode_equals_hex(&reply, KEYREP "00020000");
	assert_int_equal(res.rev, 2);
	assert_false(res.enhanced);

	/* enhanced request, plain rev 2 reply: accepted downgrade (D10) */
	struct mpa_frame sent;
	mpa_build_request(&p, &sent);
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &reply, &res, NULL), MPA_REPLY_CONNECTED);
	assert_false(res.p2p);
	assert_int_equal(res.rtr, MPA_RTR_NONE);

	/* a rev 1-only responder answers a rev 2 enhanced request with rev 1 (D1) */
	p.rev = 1;
	req = request(2, true, true, MPA_RTR_WRITE, 4, 4);
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, NULL);
	encode_equals_hex(&reply, KEYREP "00010000");
	assert_false(res.p2p);
}

static void test_markers(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame req = request(2, true, false, 0, 1, 1), reply, sent;
	struct mpa_conn_params res;
	struct mpa_error why;
	req.markers = true;

	mpa_policy_default(&p); /* D6: accept */
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, &why);
	assert_false(reply.markers);
	assert_true(res.markers_tx);
	assert_false(res.markers_rx);

	p.markers_wanted = true;
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, &why);
	assert_true(reply.markers);
	assert_true(res.markers_rx);

	p.markers = MPA_MARKERS_REJECT; /* siw-like */
	respond(&p, &req, MPA_REQ_REJECT, &reply, &res, &why);
	assert_int_equal(why.ecode, MPA_ECODE_INVALID_REQ_REP);

	/* initiator: the responder wants markers */
	mpa_policy_default(&p);
	mpa_build_request(&p, &sent);
	struct mpa_frame rep = { .type = MPA_FRAME_REPLY, .rev = 2, .markers = true };
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep, &res, NULL), MPA_REPLY_CONNECTED);
	assert_true(res.markers_tx);
	p.markers = MPA_MARKERS_REJECT;
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep, &res, &why), MPA_REPLY_TERMINATE);
	assert_int_equal(why.ecode, MPA_ECODE_INVALID_REQ_REP);
}

static void test_crc(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame req = request(2, true, false, 0, 1, 1), reply, sent;
	struct mpa_conn_params res;
	struct mpa_error err;

	mpa_policy_default(&p);
	req.crc = true; /* initiator asks; stock responder follows (rping-crc-to-stock) */
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, NULL);
	assert_true(reply.crc && res.crc);
	req.crc = false; /* nobody asks */
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, NULL);
	assert_false(reply.crc || res.crc);
	p.crc_required = true; /* D5: responder asks -> C in reply, CRC both ways */
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, NULL);
	assert_true(reply.crc && res.crc);

	/* initiator side */
	mpa_policy_default(&p);
	mpa_build_request(&p, &sent);
	struct mpa_frame rep = { .type = MPA_FRAME_REPLY, .rev = 2, .crc = true };
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep, &res, NULL), MPA_REPLY_CONNECTED);
	assert_true(res.crc);
	p.crc_required = true;
	mpa_build_request(&p, &sent);
	assert_true(sent.crc);
	rep.crc = false; /* responder dropped our C */
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep, &res, &err), MPA_REPLY_TERMINATE);
	assert_int_equal(err.ecode, MPA_ECODE_INVALID_REQ_REP);
}

static enum mpa_rtr chosen(unsigned offered, unsigned accepted, uint16_t our_ird)
{
	struct mpa_policy p;
	struct mpa_frame req = request(2, true, true, offered, 4, 4), reply;
	struct mpa_conn_params res;
	struct mpa_error why;
	mpa_policy_default(&p);
	p.rtr_types = accepted;
	p.ird = our_ird;
	if (mpa_negotiate_request(&p, &req, &reply, &res, &why) != MPA_REQ_ACCEPT) {
		assert_int_equal(why.ecode, MPA_ECODE_NO_MATCHING_RTR);
		assert_true(reply.reject);
		return MPA_RTR_NONE;
	}
	assert_true(reply.v2.p2p); /* P2P echoed */
	assert_int_equal(reply.v2.rtr, res.rtr);
	return res.rtr;
}

static void test_p2p_rtr_choice(void **state)
{
	(void)state;
	assert_int_equal(chosen(MPA_RTR_ALL, MPA_RTR_ALL, 4), MPA_RTR_WRITE);
	assert_int_equal(chosen(MPA_RTR_READ | MPA_RTR_SEND, MPA_RTR_ALL, 4), MPA_RTR_READ);
	assert_int_equal(chosen(MPA_RTR_SEND, MPA_RTR_ALL, 4), MPA_RTR_SEND);
	assert_int_equal(chosen(MPA_RTR_READ, MPA_RTR_ALL, 4), MPA_RTR_READ);
	assert_int_equal(chosen(MPA_RTR_WRITE | MPA_RTR_READ, MPA_RTR_READ, 4), MPA_RTR_READ);
	assert_int_equal(chosen(MPA_RTR_SEND, MPA_RTR_WRITE | MPA_RTR_READ, 4), MPA_RTR_NONE);
	assert_int_equal(chosen(0, MPA_RTR_ALL, 4), MPA_RTR_NONE);        /* P2P, no type */
	assert_int_equal(chosen(MPA_RTR_READ, MPA_RTR_ALL, 0), MPA_RTR_NONE); /* no IRD for it */
	assert_int_equal(chosen(MPA_RTR_READ | MPA_RTR_SEND, MPA_RTR_ALL, 0), MPA_RTR_SEND);
}

/* A READ RTR needs one inbound read on the responder even if the initiator's ORD is 0. */
static void test_read_rtr_ird_floor(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame req = request(2, true, true, MPA_RTR_READ, 4, 0), reply;
	struct mpa_conn_params res;
	mpa_policy_default(&p);
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, NULL);
	assert_int_equal(reply.v2.rtr, MPA_RTR_READ);
	assert_int_equal(reply.v2.ird, 1);
	encode_equals_hex(&reply, KEYREP "1002000480014004");
}

static struct mpa_frame reply_v2(bool p2p, unsigned rtr, uint16_t ird, uint16_t ord)
{
	struct mpa_frame f = {
		.type = MPA_FRAME_REPLY, .rev = 2, .enhanced = true,
		.v2 = { .p2p = p2p, .rtr = rtr, .ird = ird, .ord = ord },
	};
	return f;
}

static void expect_terminate(const struct mpa_policy *p, const struct mpa_frame *sent,
			     const struct mpa_frame *rep, enum mpa_ecode ecode)
{
	struct mpa_conn_params res;
	struct mpa_error err = { MPA_ECODE_NONE, NULL };
	assert_int_equal(mpa_negotiate_reply(p, sent, rep, &res, &err), MPA_REPLY_TERMINATE);
	assert_int_equal(err.ecode, ecode);
	assert_non_null(err.reason);
}

static void test_initiator_rtr(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame sent, rep;
	struct mpa_conn_params res;
	mpa_policy_default(&p); /* offers WRITE|READ */
	mpa_build_request(&p, &sent);

	rep = reply_v2(true, MPA_RTR_READ, 16, 16); /* D4: type from the reply */
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep, &res, NULL), MPA_REPLY_CONNECTED);
	assert_int_equal(res.rtr, MPA_RTR_READ);
	assert_true(res.p2p);

	rep = reply_v2(true, MPA_RTR_SEND, 16, 16); /* not offered */
	expect_terminate(&p, &sent, &rep, MPA_ECODE_NO_MATCHING_RTR);
	rep = reply_v2(true, MPA_RTR_WRITE | MPA_RTR_READ, 16, 16); /* not a choice */
	expect_terminate(&p, &sent, &rep, MPA_ECODE_NO_MATCHING_RTR);
	rep = reply_v2(true, MPA_RTR_NONE, 16, 16);
	expect_terminate(&p, &sent, &rep, MPA_ECODE_NO_MATCHING_RTR);

	rep = reply_v2(false, MPA_RTR_NONE, 16, 16); /* responder without P2P: no RTR */
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep, &res, NULL), MPA_REPLY_CONNECTED);
	assert_false(res.p2p);
	assert_int_equal(res.rtr, MPA_RTR_NONE);

	p.p2p = false; /* we did not offer P2P, the reply claims it */
	mpa_build_request(&p, &sent);
	assert_false(sent.v2.p2p);
	assert_int_equal(sent.v2.rtr, 0);
	rep = reply_v2(true, MPA_RTR_WRITE, 16, 16);
	expect_terminate(&p, &sent, &rep, MPA_ECODE_NO_MATCHING_RTR);
}

static void test_ird_ord_responder(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame req = request(2, true, false, 0, 8, 20), reply;
	struct mpa_conn_params res;
	struct mpa_error why;

	mpa_policy_default(&p); /* IRD = ORD = 16 */
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, &why); /* relaxed */
	assert_int_equal(reply.v2.ird, 16);                     /* ours, below peer ORD 20 */
	assert_int_equal(reply.v2.ord, 8);                      /* never above peer IRD */
	assert_int_equal(res.local_ord, 8);
	assert_int_equal(res.peer_ord, 20);

	p.ird_check = MPA_IRD_STRICT;
	respond(&p, &req, MPA_REQ_REJECT, &reply, &res, &why);
	assert_int_equal(why.ecode, MPA_ECODE_INSUFFICIENT_IRD);
	encode_equals_hex(&reply, KEYREP "3002000400100010"); /* D11: reject with our IRD/ORD */

	req.v2.ord = 16; /* exactly enough */
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, &why);
	assert_int_equal(reply.v2.ird, 16);

	/* 0x3FFF: no value from the peer never constrains */
	req = request(2, true, false, 0, MPA_V2_NO_VALUE, MPA_V2_NO_VALUE);
	respond(&p, &req, MPA_REQ_ACCEPT, &reply, &res, &why);
	assert_int_equal(reply.v2.ird, 16);
	assert_int_equal(reply.v2.ord, 16);
	assert_int_equal(res.peer_ird, MPA_V2_NO_VALUE);
}

static void test_ird_ord_initiator(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame sent, rep;
	struct mpa_conn_params res;
	mpa_policy_default(&p);
	p.p2p = false;
	mpa_build_request(&p, &sent); /* IRD 16, ORD 16 */

	rep = reply_v2(false, 0, 4, 2); /* responder IRD 4 < our ORD 16 */
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep, &res, NULL), MPA_REPLY_CONNECTED);
	assert_int_equal(res.local_ord, 4); /* relaxed: lowered */
	assert_int_equal(res.local_ird, 16);
	p.ird_check = MPA_IRD_STRICT;
	expect_terminate(&p, &sent, &rep, MPA_ECODE_INSUFFICIENT_IRD);

	p.ird_check = MPA_IRD_RELAXED;
	rep = reply_v2(false, 0, 16, 17); /* responder ORD above our IRD */
	expect_terminate(&p, &sent, &rep, MPA_ECODE_INSUFFICIENT_IRD);

	rep = reply_v2(false, 0, MPA_V2_NO_VALUE, MPA_V2_NO_VALUE);
	p.ird_check = MPA_IRD_STRICT;
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep, &res, NULL), MPA_REPLY_CONNECTED);
	assert_int_equal(res.local_ord, 16);
	assert_int_equal(res.peer_ird, MPA_V2_NO_VALUE);

	/* we gave ORD "no value": the responder's IRD becomes our ORD, even when strict */
	p.ord = MPA_V2_NO_VALUE;
	mpa_build_request(&p, &sent);
	rep = reply_v2(false, 0, 5, 2);
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rep, &res, NULL), MPA_REPLY_CONNECTED);
	assert_int_equal(res.local_ord, 5);

	/* READ RTR chosen by a responder that has no IRD for it */
	mpa_policy_default(&p);
	mpa_build_request(&p, &sent);
	rep = reply_v2(true, MPA_RTR_READ, 0, 0);
	expect_terminate(&p, &sent, &rep, MPA_ECODE_INSUFFICIENT_IRD);
}

static void test_rejects(void **state)
{
	(void)state;
	static const uint8_t busy[] = { 'b', 'u', 's', 'y' };
	struct mpa_policy p;
	struct mpa_frame req, reply, rx, sent;
	struct mpa_conn_params res;
	struct mpa_error why;
	uint8_t wire[64];

	/* ULP-level reject with private data, through the codec to the initiator. */
	mpa_policy_default(&p);
	mpa_build_request(&p, &sent);
	mpa_build_reject(&p, &sent, &reply);
	reply.pd = busy;
	reply.pd_len = sizeof(busy);
	ssize_t n = mpa_frame_encode(&reply, wire, sizeof(wire));
	encode_equals_hex(&reply, KEYREP "300200080010001062757379");
	assert_int_equal(mpa_frame_parse(wire, (size_t)n, NULL, &rx, NULL), n);
	assert_int_equal(mpa_negotiate_reply(&p, &sent, &rx, &res, &why), MPA_REPLY_REJECTED);
	assert_int_equal(why.ecode, MPA_ECODE_NONE);
	assert_memory_equal(rx.pd, busy, sizeof(busy));

	/* rev 1 reject */
	req = request(1, false, false, 0, 0, 0);
	mpa_build_reject(&p, &req, &reply);
	encode_equals_hex(&reply, KEYREP "20010000");

	/* hand-built invalid requests are rejected with 0x04 */
	req = request(3, true, false, 0, 1, 1);
	respond(&p, &req, MPA_REQ_REJECT, &reply, NULL, &why);
	assert_int_equal(why.ecode, MPA_ECODE_INVALID_REQ_REP);
	assert_int_equal(reply.rev, 2);
	req = request(1, true, false, 0, 1, 1);
	respond(&p, &req, MPA_REQ_REJECT, &reply, NULL, &why);
	assert_int_equal(why.ecode, MPA_ECODE_INVALID_REQ_REP);
	req = request(2, true, false, 0, 1, 1);
	req.type = MPA_FRAME_REPLY;
	respond(&p, &req, MPA_REQ_REJECT, &reply, NULL, &why);
	assert_int_equal(why.ecode, MPA_ECODE_INVALID_REQ_REP);
}

static void test_invalid_replies(void **state)
{
	(void)state;
	struct mpa_policy p;
	struct mpa_frame sent, rep;
	mpa_policy_default(&p);

	p.rev = 1; /* we sent rev 1, reply claims rev 2 */
	mpa_build_request(&p, &sent);
	rep = (struct mpa_frame){ .type = MPA_FRAME_REPLY, .rev = 2 };
	expect_terminate(&p, &sent, &rep, MPA_ECODE_INVALID_REQ_REP);

	mpa_policy_default(&p);
	p.enhanced = false; /* plain rev 2 request, enhanced reply */
	mpa_build_request(&p, &sent);
	assert_false(sent.enhanced);
	encode_equals_hex(&sent, KEYREQ "00020000");
	rep = reply_v2(false, 0, 1, 1);
	expect_terminate(&p, &sent, &rep, MPA_ECODE_INVALID_REQ_REP);

	/* a Request where the Reply should be */
	rep = (struct mpa_frame){ .type = MPA_FRAME_REQUEST, .rev = 2 };
	expect_terminate(&p, &sent, &rep, MPA_ECODE_INVALID_REQ_REP);
}

static void test_rtr_names(void **state)
{
	(void)state;
	assert_string_equal(mpa_rtr_name(MPA_RTR_NONE), "none");
	assert_string_equal(mpa_rtr_name(MPA_RTR_WRITE), "write");
	assert_string_equal(mpa_rtr_name(MPA_RTR_READ), "read");
	assert_string_equal(mpa_rtr_name(MPA_RTR_SEND), "send");
	assert_string_equal(mpa_rtr_name((enum mpa_rtr)6), "invalid");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_responder_matches_siw),
		cmocka_unit_test(test_initiator_matches_siw),
		cmocka_unit_test(test_end_to_end_defaults),
		cmocka_unit_test(test_rev1_peer),
		cmocka_unit_test(test_rev2_plain),
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_crc),
		cmocka_unit_test(test_p2p_rtr_choice),
		cmocka_unit_test(test_read_rtr_ird_floor),
		cmocka_unit_test(test_initiator_rtr),
		cmocka_unit_test(test_ird_ord_responder),
		cmocka_unit_test(test_ird_ord_initiator),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_invalid_replies),
		cmocka_unit_test(test_rtr_names),
	};
	return cmocka_run_group_tests_name("mpa_negotiate", tests, NULL, NULL);
}
