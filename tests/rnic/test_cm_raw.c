/* rn_cm against a raw (hand-driven) peer: rev 1 peers, malformed and hostile input, closes
 * mid-frame, timeouts, wrong RTR, Terminates. Single thread: the raw side is written and read
 * directly, the CM is progressed in between. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <unistd.h>

#include "rn_cm_fpdu.h"
#include "test_cm_peer.h"

struct raw {
	struct rn_conn *lis;
	struct rn_conn *peer; /* the raw side */
	struct rn_cm *cm;
	struct rn_cm_cfg cfg;
};

static void raw_cfg(struct raw *r)
{
	memset(r, 0, sizeof(*r));
	rn_cm_cfg_default(&r->cfg);
	r->cfg.mpa_ms = r->cfg.rtr_ms = r->cfg.accept_ms = T_WAIT_MS;
}

/* Passive CM, raw initiator. */
static void raw_passive(struct raw *r)
{
	const struct rn_transport *t = rn_sock_transport();
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);
	struct rn_conn *c;

	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 4, &r->lis), 0);
	struct sockaddr_in ca = t_addr4("127.0.0.1", t_port_of(r->lis));
	assert_int_equal(rn_tp_connect(t, (struct sockaddr *)&ca, sizeof(ca), &r->peer), 0);
	assert_int_equal(t_accept(r->lis, &c), 0);
	assert_int_equal(t_connected(r->peer), 0);
	assert_int_equal(rn_cm_passive(c, &r->cfg, &r->cm), 0);
}

/* Active CM, raw responder; the CM has sent its Request, read into *req. */
static void raw_active(struct raw *r, struct mpa_frame *req, uint8_t *buf, size_t cap)
{
	const struct rn_transport *t = rn_sock_transport();
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);

	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 4, &r->lis), 0);
	struct sockaddr_in ca = t_addr4("127.0.0.1", t_port_of(r->lis));
	assert_int_equal(rn_cm_connect(t, (struct sockaddr *)&ca, sizeof(ca), &r->cfg, "rq", 2,
				       &r->cm), 0);
	assert_int_equal(t_accept(r->lis, &r->peer), 0);
	for (int i = 0; i < 100 && rn_cm_state(r->cm) == RN_CM_CONNECTING; i++) {
		rn_cm_progress(r->cm);
		poll(NULL, 0, 10);
	}
	assert_int_equal(rn_cm_progress(r->cm), RN_CM_MPA_WAIT_REP);
	assert_true(t_recv_frame(r->peer, buf, cap, req) > 0);
	assert_int_equal(req->type, MPA_FRAME_REQUEST);
}

static void raw_done(struct raw *r)
{
	rn_cm_destroy(r->cm);
	if (r->peer)
		rn_conn_close(r->peer);
	if (r->lis)
		rn_conn_close(r->lis);
}

static void send_frame(struct rn_conn *c, const struct mpa_frame *f)
{
	uint8_t buf[600];
	ssize_t n = mpa_frame_encode(f, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(t_send_all(c, buf, (size_t)n), 0);
}

/* A Reply of revision rev, all else zero. */
static struct mpa_frame reply_frame(uint8_t rev)
{
	struct mpa_frame rep;
	memset(&rep, 0, sizeof(rep));
	rep.type = MPA_FRAME_REPLY;
	rep.rev = rev;
	return rep;
}

/* The CM fails on an MPA protocol error (-EPROTO) with this MPA error code. */
static void expect_mpa_failed(struct raw *r, unsigned ecode)
{
	assert_int_equal(rn_cm_wait(r->cm, T_WAIT_MS), RN_CM_FAILED);
	assert_int_equal(rn_cm_error(r->cm), -EPROTO);
	assert_int_equal(rn_cm_mpa_error(r->cm)->ecode, ecode);
}

/* The CM fails on the peer's Terminate (-ECONNABORTED) with this error code. */
static void expect_peer_term(struct raw *r, unsigned ecode)
{
	assert_int_equal(rn_cm_wait(r->cm, T_WAIT_MS), RN_CM_FAILED);
	assert_int_equal(rn_cm_error(r->cm), -ECONNABORTED);
	assert_int_equal(rn_cm_peer_term(r->cm).ecode, ecode);
}

/* The next FPDU the raw peer receives (with or without CRC) is a Terminate: its error. */
static struct iwarp_err recv_term(struct raw *r, bool crc)
{
	struct t_fpdu_sink s;
	assert_int_equal(t_recv_fpdu(r->peer, crc, false, 0, NULL, 0, &s), 0);
	return t_term_of(s.buf, s.len);
}

/* Send a default (P2P) Request from the raw side, accept it, read the Reply. */
static void p2p_until_wait_rtr(struct raw *r, bool crc, struct mpa_frame *rep, uint8_t *buf)
{
	struct mpa_policy pol;
	struct mpa_frame req;

	mpa_policy_default(&pol);
	pol.crc_required = crc;
	mpa_build_request(&pol, &req);
	send_frame(r->peer, &req);
	assert_int_equal(rn_cm_wait(r->cm, T_WAIT_MS), RN_CM_WAIT_ACCEPT);
	assert_int_equal(rn_cm_accept(r->cm, NULL, 0), 0);
	rn_cm_progress(r->cm);
	assert_true(t_recv_frame(r->peer, buf, 600, rep) > 0);
	assert_false(rep->reject);
	assert_int_equal(rn_cm_progress(r->cm), RN_CM_WAIT_RTR);
}

/* ---- passive CM ---------------------------------------------------------------------- */

static void test_passive_garbage(void **state)
{
	(void)state;
	struct raw r;
	raw_cfg(&r);
	raw_passive(&r);
	const char *g = "GET / HTTP/1.1\r\nHost: example\r\n\r\n";
	assert_int_equal(t_send_all(r.peer, g, strlen(g)), 0);
	expect_mpa_failed(&r, MPA_ECODE_INVALID_REQ_REP);
	assert_int_equal(t_wait_end(r.peer, NULL), -ECONNRESET); /* not MPA: reset */
	raw_done(&r);
}

static void test_passive_pd_over_limit(void **state)
{
	(void)state;
	struct raw r;
	uint8_t hdr[MPA_FRAME_HDR_LEN], buf[600];
	struct mpa_frame rep;
	raw_cfg(&r);
	raw_passive(&r);
	memcpy(hdr, MPA_KEY_REQ, MPA_KEY_LEN);
	hdr[16] = MPA_FLAG_S;
	hdr[17] = 2;
	hdr[18] = 0x02; /* PD_Length 600 > 512 */
	hdr[19] = 0x58;
	assert_int_equal(t_send_all(r.peer, hdr, sizeof(hdr)), 0);
	expect_mpa_failed(&r, MPA_ECODE_INVALID_REQ_REP);
	assert_int_equal(t_recv_frame(r.peer, buf, sizeof(buf), &rep), 20);
	assert_int_equal(rep.type, MPA_FRAME_REPLY);
	assert_true(rep.reject);
	assert_int_equal(rep.rev, 2);
	assert_int_equal(t_wait_end(r.peer, NULL), 0); /* orderly close after the Reject */
	raw_done(&r);
}

static void test_passive_closed_mid_frame(void **state)
{
	(void)state;
	struct raw r;
	raw_cfg(&r);
	raw_passive(&r);
	assert_int_equal(t_send_all(r.peer, "MPA ID Req", 10), 0);
	assert_int_equal(rn_conn_shutdown_write(r.peer), 0);
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_FAILED);
	assert_int_equal(rn_cm_error(r.cm), -ECONNRESET);
	raw_done(&r);
}

static void test_passive_request_timeout(void **state)
{
	(void)state;
	struct raw r;
	raw_cfg(&r);
	r.cfg.mpa_ms = 150;
	raw_passive(&r);
	long long t0 = t_now_ms();
	assert_int_equal(rn_cm_wait(r.cm, -1), RN_CM_FAILED);
	long long dt = t_now_ms() - t0;
	assert_true(dt >= 100 && dt < 2000);
	assert_int_equal(rn_cm_error(r.cm), -ETIMEDOUT);
	assert_int_equal(t_wait_end(r.peer, NULL), -ECONNRESET);
	raw_done(&r);
}

static void test_passive_rev1_peer(void **state)
{
	(void)state;
	struct raw r;
	uint8_t buf[600];
	raw_cfg(&r);
	raw_passive(&r);
	static const uint8_t req1[] = { 'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F',
					'r', 'a', 'm', 'e', 0x00, 0x01, 0x00, 0x03, 'a', 'b', 'c' };
	assert_int_equal(t_send_all(r.peer, req1, sizeof(req1)), 0);
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_WAIT_ACCEPT);
	assert_int_equal(rn_cm_request(r.cm)->rev, 1);
	assert_false(rn_cm_request(r.cm)->enhanced);
	size_t n;
	const uint8_t *pd = rn_cm_peer_pd(r.cm, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(pd, "abc", 3);
	assert_int_equal(rn_cm_accept(r.cm, "xyz", 3), 0);
	assert_int_equal(rn_cm_accept(r.cm, "xyz", 3), -EINVAL); /* only once */
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_ESTABLISHED);
	static const uint8_t rep1[] = { 'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'p', ' ', 'F',
					'r', 'a', 'm', 'e', 0x00, 0x01, 0x00, 0x03, 'x', 'y', 'z' };
	assert_int_equal(t_recv_all(r.peer, buf, sizeof(rep1)), sizeof(rep1));
	assert_memory_equal(buf, rep1, sizeof(rep1));
	struct rn_cm_handoff h;
	assert_int_equal(rn_cm_handoff(r.cm, &h), 0);
	assert_int_equal(rn_cm_handoff(r.cm, &h), -EINVAL);
	assert_false(h.params.p2p);
	assert_int_equal(h.params.rev, 1);
	/* the rev 1 initiator sends first */
	assert_int_equal(t_send_fpdu(r.peer, false, false, 0, "first", 5), 0);
	struct t_fpdu_sink s;
	assert_int_equal(t_recv_fpdu(h.conn, false, false, h.rx_pos, h.rx, h.rx_len, &s), 0);
	assert_memory_equal(s.buf, "first", 5);
	rn_conn_close(h.conn);
	free(h.rx);
	raw_done(&r);
}

/* rn_cm_accept_ird_ord: the Reply's RFC 6581 block carries ours under mpa_negotiate.c's D7 (ORD =
 * min(our ORD, initiator IRD), IRD = min(our IRD, initiator ORD)); params follow. */
static void accept_ird_ord_case(uint16_t ird, uint16_t ord, uint16_t want_ird, uint16_t want_ord)
{
	struct raw r;
	struct mpa_policy pol;
	struct mpa_frame req, rep;
	uint8_t buf[600];

	raw_cfg(&r);
	raw_passive(&r);
	mpa_policy_default(&pol);
	pol.p2p = false; /* a plain block: the bytes are the values */
	pol.ird = 10;
	pol.ord = 12;
	mpa_build_request(&pol, &req);
	send_frame(r.peer, &req);
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_WAIT_ACCEPT);
	assert_int_equal(rn_cm_accept_ird_ord(r.cm, "ok", 2, MPA_V2_NO_VALUE, 1), -EINVAL);
	assert_int_equal(rn_cm_accept_ird_ord(r.cm, "ok", 2, 1, MPA_V2_NO_VALUE), -EINVAL);
	assert_int_equal(rn_cm_accept_ird_ord(r.cm, "ok", 2, ird, ord), 0);
	assert_int_equal(rn_cm_accept_ird_ord(r.cm, "ok", 2, ird, ord), -EINVAL); /* only once */
	assert_int_equal(rn_cm_params(r.cm)->local_ird, want_ird);
	assert_int_equal(rn_cm_params(r.cm)->local_ord, want_ord);
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_ESTABLISHED);
	ssize_t n = t_recv_frame(r.peer, buf, sizeof(buf), &rep);
	assert_int_equal(n, MPA_FRAME_HDR_LEN + 4 + 2);
	assert_true(rep.enhanced);
	assert_false(rep.reject);
	const uint8_t block[4] = { (uint8_t)(want_ird >> 8), (uint8_t)want_ird,
				   (uint8_t)(want_ord >> 8), (uint8_t)want_ord };
	assert_memory_equal(buf + MPA_FRAME_HDR_LEN, block, 4);
	assert_memory_equal(buf + MPA_FRAME_HDR_LEN + 4, "ok", 2);
	struct rn_cm_handoff h;
	assert_int_equal(rn_cm_handoff(r.cm, &h), 0);
	assert_int_equal(h.params.local_ird, want_ird);
	assert_int_equal(h.params.local_ord, want_ord);
	assert_int_equal(h.params.peer_ird, 10);
	assert_int_equal(h.params.peer_ord, 12);
	rn_conn_close(h.conn);
	free(h.rx);
	raw_done(&r);
}

/* Write p to the raw side one octet every gap_ms while the CM has not failed; the octets
 * written. Each phase's timer runs from the phase's start: octets arriving keep nothing
 * alive (docs/rdmacm.md). */
static size_t trickle(struct raw *r, const uint8_t *p, size_t n, int gap_ms)
{
	size_t i;

	for (i = 0; i < n && rn_cm_state(r->cm) != RN_CM_FAILED; i++) {
		if (t_send_all(r->peer, p + i, 1) != 0)
			break;
		long long next = t_now_ms() + gap_ms;
		while (t_now_ms() < next && rn_cm_state(r->cm) != RN_CM_FAILED)
			rn_cm_wait(r->cm, (int)(next - t_now_ms()));
	}
	return i;
}

/* A peer that dies of its own timer although octets keep coming. */
static void expect_trickle_timeout(struct raw *r, const uint8_t *p, size_t n, long long t0)
{
	size_t sent = trickle(r, p, n, 100);
	long long dt = t_now_ms() - t0;

	assert_int_equal(rn_cm_state(r->cm), RN_CM_FAILED);
	assert_int_equal(rn_cm_error(r->cm), -ETIMEDOUT);
	assert_true(sent < n);
	assert_true(dt >= 250 && dt < 2000);
}

/* The Request an octet at a time; with pd_len octets of private data, the header goes at
 * once (announcing them) and only the private data trickles. */
static void request_trickled(size_t pd_len)
{
	struct raw r;
	struct mpa_policy pol;
	struct mpa_frame req;
	uint8_t buf[600], pd[200];
	size_t start = pd_len ? MPA_FRAME_HDR_LEN : 0;
	raw_cfg(&r);
	r.cfg.mpa_ms = 300;
	raw_passive(&r);
	long long t0 = t_now_ms();
	mpa_policy_default(&pol);
	mpa_build_request(&pol, &req);
	assert_true(pd_len <= sizeof(pd));
	memset(pd, 0x5a, sizeof(pd));
	req.pd = pd_len ? pd : NULL;
	req.pd_len = (uint16_t)pd_len;
	ssize_t n = mpa_frame_encode(&req, buf, sizeof(buf));
	assert_true(n > (ssize_t)start);
	assert_int_equal(t_send_all(r.peer, buf, start), 0);
	expect_trickle_timeout(&r, buf + start, (size_t)n - start, t0); /* 100 ms an octet */
	raw_done(&r);
}

static void test_passive_request_trickled(void **state)
{
	(void)state;
	request_trickled(0);
}

static void test_passive_private_data_trickled(void **state)
{
	(void)state;
	request_trickled(200);
}

static void test_passive_rtr_trickled(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame rep;
	uint8_t buf[600];
	struct mpa_tx tx;
	raw_cfg(&r);
	r.cfg.rtr_ms = 300;
	raw_passive(&r);
	p2p_until_wait_rtr(&r, false, &rep, buf);
	long long t0 = t_now_ms();
	mpa_tx_init(&tx, false, false);
	ssize_t n = rn_rtr_encode(rep.v2.rtr == MPA_RTR_WRITE ? MPA_RTR_WRITE : MPA_RTR_SEND, &tx,
				  buf, sizeof(buf));
	assert_true(n > 4);
	expect_trickle_timeout(&r, buf, (size_t)n, t0);
	raw_done(&r);
}

static void test_passive_accept_ird_ord(void **state)
{
	(void)state;
	accept_ird_ord_case(6, 20, 6, 10);  /* IRD ours (6 < 12), ORD the initiator's IRD */
	accept_ird_ord_case(3, 2, 3, 2);    /* both ours */
	accept_ird_ord_case(0, 0, 12, 10);  /* 0: the policy's (16), lowered to the initiator's */
	accept_ird_ord_case(0, 5, 12, 5);
}

static void test_passive_rtr_timeout(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame rep;
	uint8_t buf[600];
	raw_cfg(&r);
	r.cfg.rtr_ms = 150;
	raw_passive(&r);
	p2p_until_wait_rtr(&r, false, &rep, buf);
	assert_int_equal(rn_cm_wait(r.cm, -1), RN_CM_FAILED);
	assert_int_equal(rn_cm_error(r.cm), -ETIMEDOUT);
	raw_done(&r);
}

static void test_passive_wrong_rtr(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame rep;
	uint8_t buf[600];
	struct mpa_tx tx;
	raw_cfg(&r);
	raw_passive(&r);
	p2p_until_wait_rtr(&r, false, &rep, buf);
	assert_int_equal(rep.v2.rtr, MPA_RTR_WRITE);
	mpa_tx_init(&tx, false, false);
	ssize_t n = rn_rtr_encode(MPA_RTR_SEND, &tx, buf, sizeof(buf)); /* not the chosen one */
	assert_int_equal(t_send_all(r.peer, buf, (size_t)n), 0);
	expect_mpa_failed(&r, MPA_ECODE_NO_MATCHING_RTR);
	struct iwarp_err e = recv_term(&r, false);
	assert_int_equal(e.layer, IWARP_LAYER_LLP);
	assert_int_equal(e.etype, MPA_TERM_ETYPE_MPA);
	assert_int_equal(e.ecode, MPA_ECODE_NO_MATCHING_RTR);
	raw_done(&r);
}

static void test_passive_peer_terminates(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame rep;
	uint8_t buf[600];
	struct mpa_tx tx;
	raw_cfg(&r);
	raw_passive(&r);
	p2p_until_wait_rtr(&r, false, &rep, buf);
	mpa_tx_init(&tx, false, false);
	ssize_t n = rn_term_encode(MPA_ECODE_INSUFFICIENT_IRD, &tx, buf, sizeof(buf));
	assert_int_equal(t_send_all(r.peer, buf, (size_t)n), 0);
	expect_peer_term(&r, MPA_ECODE_INSUFFICIENT_IRD);
	assert_int_equal(rn_cm_peer_term(r.cm).layer, IWARP_LAYER_LLP);
	raw_done(&r);
}

static void test_passive_rtr_bad_crc(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame rep;
	uint8_t buf[600];
	struct mpa_tx tx;
	raw_cfg(&r);
	raw_passive(&r);
	p2p_until_wait_rtr(&r, true, &rep, buf);
	assert_true(rep.crc);
	mpa_tx_init(&tx, true, false);
	ssize_t n = rn_rtr_encode(MPA_RTR_WRITE, &tx, buf, sizeof(buf));
	buf[n - 1] ^= 0x5a;
	assert_int_equal(t_send_all(r.peer, buf, (size_t)n), 0);
	expect_mpa_failed(&r, MPA_ECODE_CRC);
	assert_int_equal(recv_term(&r, true).ecode, MPA_ECODE_CRC);
	raw_done(&r);
}

static void test_passive_rtr_too_long(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame rep;
	uint8_t buf[600], big[400];
	raw_cfg(&r);
	raw_passive(&r);
	p2p_until_wait_rtr(&r, false, &rep, buf);
	memset(big, 0x41, sizeof(big)); /* 400-octet ULPDU: no RTR is that long */
	assert_int_equal(t_send_fpdu(r.peer, false, false, 0, big, sizeof(big)), 0);
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_FAILED);
	assert_int_equal(rn_cm_mpa_error(r.cm)->ecode, MPA_ECODE_NO_MATCHING_RTR);
	raw_done(&r);
}

/* ---- active CM ----------------------------------------------------------------------- */

static void test_active_garbage_reply(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame req;
	uint8_t buf[600];
	raw_cfg(&r);
	raw_active(&r, &req, buf, sizeof(buf));
	const char *g = "HTTP/1.1 400 Bad Request\r\n\r\n";
	assert_int_equal(t_send_all(r.peer, g, strlen(g)), 0);
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_FAILED);
	assert_int_equal(rn_cm_error(r.cm), -EPROTO);
	assert_int_equal(t_wait_end(r.peer, NULL), -ECONNRESET);
	raw_done(&r);
}

static void test_active_rev1_responder(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame req, rep;
	uint8_t buf[600];
	raw_cfg(&r);
	raw_active(&r, &req, buf, sizeof(buf));
	assert_int_equal(req.rev, 2);
	assert_int_equal(req.pd_len, 2);
	assert_memory_equal(req.pd, "rq", 2);
	rep = reply_frame(1);
	send_frame(r.peer, &rep);
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_ESTABLISHED);
	struct rn_cm_handoff h;
	assert_int_equal(rn_cm_handoff(r.cm, &h), 0);
	assert_int_equal(h.params.rev, 1);
	assert_false(h.params.p2p);
	assert_int_equal(h.tx_pos, 0);
	assert_int_equal(h.rx_len, 0);
	rn_conn_close(h.conn);
	raw_done(&r);
}

static void test_active_rtr_not_offered(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame req, rep;
	uint8_t buf[600];
	raw_cfg(&r);
	raw_active(&r, &req, buf, sizeof(buf));
	assert_true(req.v2.p2p);
	assert_int_equal(req.v2.rtr, MPA_RTR_WRITE | MPA_RTR_READ);
	rep = reply_frame(2);
	rep.enhanced = true;
	rep.v2 = (struct mpa_v2_block){ .p2p = true, .rtr = MPA_RTR_SEND, .ird = 4, .ord = 4 };
	send_frame(r.peer, &rep);
	expect_mpa_failed(&r, MPA_ECODE_NO_MATCHING_RTR);
	struct iwarp_err e = recv_term(&r, false);
	assert_int_equal(e.layer, IWARP_LAYER_LLP);
	assert_int_equal(e.ecode, MPA_ECODE_NO_MATCHING_RTR);
	assert_int_equal(t_wait_end(r.peer, NULL), 0); /* then an orderly close */
	raw_done(&r);
}

static void test_active_reply_drops_crc(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame req, rep;
	uint8_t buf[600];
	raw_cfg(&r);
	r.cfg.policy.crc_required = true;
	raw_active(&r, &req, buf, sizeof(buf));
	assert_true(req.crc);
	rep = reply_frame(2);
	send_frame(r.peer, &rep);
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_FAILED);
	assert_int_equal(rn_cm_mpa_error(r.cm)->ecode, MPA_ECODE_INVALID_REQ_REP);
	/* the Terminate carries a good CRC */
	assert_int_equal(recv_term(&r, true).ecode, MPA_ECODE_INVALID_REQ_REP);
	raw_done(&r);
}

static void test_active_closed_mid_reply(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame req;
	uint8_t buf[600];
	raw_cfg(&r);
	raw_active(&r, &req, buf, sizeof(buf));
	static const uint8_t half[] = { 'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'p', ' ', 'F',
					'r', 'a', 'm', 'e', 0x10, 0x02, 0x00, 0x10, 0x80 };
	assert_int_equal(t_send_all(r.peer, half, sizeof(half)), 0);
	rn_conn_close(r.peer);
	r.peer = NULL;
	assert_int_equal(rn_cm_wait(r.cm, T_WAIT_MS), RN_CM_FAILED);
	assert_int_equal(rn_cm_error(r.cm), -ECONNRESET);
	raw_done(&r);
}

static void test_active_reply_timeout(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame req;
	uint8_t buf[600];
	raw_cfg(&r);
	r.cfg.mpa_ms = 150;
	raw_active(&r, &req, buf, sizeof(buf));
	long long t0 = t_now_ms();
	assert_int_equal(rn_cm_wait(r.cm, -1), RN_CM_FAILED);
	assert_true(t_now_ms() - t0 < 2000);
	assert_int_equal(rn_cm_error(r.cm), -ETIMEDOUT);
	raw_done(&r);
}

static void test_active_read_rtr_answered_by_terminate(void **state)
{
	(void)state;
	struct raw r;
	struct mpa_frame req, rep;
	uint8_t buf[600];
	struct mpa_tx tx;
	raw_cfg(&r);
	raw_active(&r, &req, buf, sizeof(buf));
	rep = reply_frame(2);
	rep.enhanced = true;
	rep.v2 = (struct mpa_v2_block){ .p2p = true, .rtr = MPA_RTR_READ, .ird = 4, .ord = 4 };
	send_frame(r.peer, &rep);
	assert_int_equal(rn_cm_wait(r.cm, 300), RN_CM_WAIT_RTR_RESP);
	/* the READ RTR arrived */
	struct t_fpdu_sink s;
	assert_int_equal(t_recv_fpdu(r.peer, false, false, 0, NULL, 0, &s), 0);
	struct rdmap_msg m;
	struct iwarp_err e;
	assert_int_equal(rdmap_msg_decode(s.buf, s.len, &m, &e), 0);
	assert_int_equal(m.opcode, RDMAP_OP_READ_REQ);
	assert_int_equal(m.u.read_req.size, 0);
	assert_int_equal(m.ddp.msn, 1);
	mpa_tx_init(&tx, false, false);
	ssize_t n = rn_term_encode(MPA_ECODE_LOCAL_CATASTROPHIC, &tx, buf, sizeof(buf));
	assert_int_equal(t_send_all(r.peer, buf, (size_t)n), 0);
	expect_peer_term(&r, MPA_ECODE_LOCAL_CATASTROPHIC);
	raw_done(&r);
}

int main(void)
{
	signal(SIGPIPE, SIG_DFL);
	alarm(120);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passive_garbage),
		cmocka_unit_test(test_passive_pd_over_limit),
		cmocka_unit_test(test_passive_closed_mid_frame),
		cmocka_unit_test(test_passive_request_timeout),
		cmocka_unit_test(test_passive_request_trickled),
		cmocka_unit_test(test_passive_private_data_trickled),
		cmocka_unit_test(test_passive_rtr_trickled),
		cmocka_unit_test(test_passive_rev1_peer),
		cmocka_unit_test(test_passive_accept_ird_ord),
		cmocka_unit_test(test_passive_rtr_timeout),
		cmocka_unit_test(test_passive_wrong_rtr),
		cmocka_unit_test(test_passive_peer_terminates),
		cmocka_unit_test(test_passive_rtr_bad_crc),
		cmocka_unit_test(test_passive_rtr_too_long),
		cmocka_unit_test(test_active_garbage_reply),
		cmocka_unit_test(test_active_rev1_responder),
		cmocka_unit_test(test_active_rtr_not_offered),
		cmocka_unit_test(test_active_reply_drops_crc),
		cmocka_unit_test(test_active_closed_mid_reply),
		cmocka_unit_test(test_active_reply_timeout),
		cmocka_unit_test(test_active_read_rtr_answered_by_terminate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
