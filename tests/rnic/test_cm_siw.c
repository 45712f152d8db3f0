/* rn_cm against the exact bytes Linux siw (peer_to_peer=1) put on the wire in
 * a capture of rping with peer_to_peer=1 (extracted with tshark -T fields -e tcp.payload):
 *   frame 4  client -> server  MPA Request  rev 2, S, PD 4: P2P, IRD 1, WRITE|READ RTR, ORD 1
 *   frame 6  server -> client  MPA Reply    rev 2, S, PD 4: P2P, IRD 1, WRITE RTR, ORD 1
 *   frame 8  client -> server  RTR: zero-length RDMA Write, STag 1, TO 0, CRC field 0
 *   frame 9  client -> server  the first Send (QN 0, MSN 1): rping's 16-octet rkey/addr info */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <unistd.h>

#include "test_cm_peer.h"

static const uint8_t siw_request[] = { /* frame 4 */
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, 0x65, 0x71, 0x20, 0x46,
	0x72, 0x61, 0x6d, 0x65, 0x10, 0x02, 0x00, 0x04, 0x80, 0x01, 0xc0, 0x01,
};
static const uint8_t siw_reply[] = { /* frame 6 */
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, 0x65, 0x70, 0x20, 0x46,
	0x72, 0x61, 0x6d, 0x65, 0x10, 0x02, 0x00, 0x04, 0x80, 0x01, 0x80, 0x01,
};
static const uint8_t siw_rtr[] = { /* frame 8 */
	0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t siw_send[] = { /* frame 9 */
	0x00, 0x22, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x55, 0xf1,
	0x61, 0xb9, 0x2e, 0x20, 0x13, 0x98, 0xce, 0x00, 0x00, 0x00, 0x00, 0x40,
	0x00, 0x00, 0x00, 0x00,
};

/* siw as initiator, us as responder with default policy: our Reply must be siw's byte for
 * byte; the RTR and the Send after it arrive in one segment, the Send must be handed over. */
static void test_siw_initiator(void **state)
{
	(void)state;
	const struct rn_transport *t = rn_sock_transport();
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);
	struct rn_conn *lis, *raw, *c;
	struct rn_cm_cfg cfg;
	struct rn_cm *cm;
	uint8_t buf[64];

	rn_cm_cfg_default(&cfg);
	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 4, &lis), 0);
	struct sockaddr_in ca = t_addr4("127.0.0.1", t_port_of(lis));
	assert_int_equal(rn_tp_connect(t, (struct sockaddr *)&ca, sizeof(ca), &raw), 0);
	assert_int_equal(t_accept(lis, &c), 0);
	assert_int_equal(t_connected(raw), 0);
	assert_int_equal(rn_cm_passive(c, &cfg, &cm), 0);

	/* the Request in two pieces: the parser must wait for the rest */
	assert_int_equal(t_send_all(raw, siw_request, 9), 0);
	assert_int_equal(rn_cm_wait(cm, 100), RN_CM_MPA_WAIT_REQ);
	assert_int_equal(t_send_all(raw, siw_request + 9, sizeof(siw_request) - 9), 0);
	assert_int_equal(rn_cm_wait(cm, T_WAIT_MS), RN_CM_WAIT_ACCEPT);
	assert_int_equal(rn_cm_request(cm)->v2.ird, 1);
	assert_int_equal(rn_cm_accept(cm, NULL, 0), 0); /* rping accepts with no PD */
	assert_int_equal(rn_cm_wait(cm, 100), RN_CM_WAIT_RTR);
	assert_int_equal(t_recv_all(raw, buf, sizeof(siw_reply)), sizeof(siw_reply));
	assert_memory_equal(buf, siw_reply, sizeof(siw_reply));

	uint8_t both[sizeof(siw_rtr) + sizeof(siw_send)];
	memcpy(both, siw_rtr, sizeof(siw_rtr));
	memcpy(both + sizeof(siw_rtr), siw_send, sizeof(siw_send));
	assert_int_equal(t_send_all(raw, both, sizeof(both)), 0);
	assert_int_equal(rn_cm_wait(cm, T_WAIT_MS), RN_CM_ESTABLISHED);

	struct rn_cm_handoff h;
	assert_int_equal(rn_cm_handoff(cm, &h), 0);
	assert_int_equal(h.params.rtr, MPA_RTR_WRITE);
	assert_true(h.params.p2p);
	assert_int_equal(h.params.local_ird, 1);
	assert_int_equal(h.params.local_ord, 1);
	assert_int_equal(h.rx_pos, sizeof(siw_rtr));
	assert_int_equal(h.rx_msn[0], 1); /* a WRITE RTR uses no MSN: siw's first Send is MSN 1 */
	/* loopback delivers the one write in one piece, so all of the Send was read with the RTR */
	assert_int_equal(h.rx_len, sizeof(siw_send));
	assert_memory_equal(h.rx, siw_send, sizeof(siw_send));
	struct t_fpdu_sink s;
	assert_int_equal(t_recv_fpdu(h.conn, false, false, h.rx_pos, h.rx, h.rx_len, &s), 0);
	assert_int_equal(s.len, 0x22);
	struct rdmap_msg m;
	struct iwarp_err e;
	assert_int_equal(rdmap_msg_decode(s.buf, s.len, &m, &e), 0);
	assert_int_equal(m.opcode, RDMAP_OP_SEND);
	assert_int_equal(m.ddp.msn, h.rx_msn[0]);
	free(h.rx);
	rn_conn_close(h.conn);
	rn_cm_destroy(cm);
	rn_conn_close(raw);
	rn_conn_close(lis);
}

/* siw as responder, us as initiator with IRD = ORD = 1 (rping's values): our Request and our
 * RTR must be siw's bytes. */
static void test_siw_responder(void **state)
{
	(void)state;
	const struct rn_transport *t = rn_sock_transport();
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);
	struct rn_conn *lis, *raw;
	struct rn_cm_cfg cfg;
	struct rn_cm *cm;
	uint8_t buf[64];

	rn_cm_cfg_default(&cfg);
	cfg.policy.ird = cfg.policy.ord = 1;
	cfg.policy.pd_max = MPA_PD_MAX_LINUX;
	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 4, &lis), 0);
	struct sockaddr_in ca = t_addr4("127.0.0.1", t_port_of(lis));
	assert_int_equal(rn_cm_connect(t, (struct sockaddr *)&ca, sizeof(ca), &cfg, NULL, 0, &cm),
			 0);
	assert_int_equal(t_accept(lis, &raw), 0);
	assert_int_equal(rn_cm_wait(cm, 200), RN_CM_MPA_WAIT_REP);
	assert_int_equal(t_recv_all(raw, buf, sizeof(siw_request)), sizeof(siw_request));
	assert_memory_equal(buf, siw_request, sizeof(siw_request));
	/* the Reply in three pieces */
	assert_int_equal(t_send_all(raw, siw_reply, 3), 0);
	assert_int_equal(rn_cm_wait(cm, 50), RN_CM_MPA_WAIT_REP);
	assert_int_equal(t_send_all(raw, siw_reply + 3, 18), 0);
	assert_int_equal(rn_cm_wait(cm, 50), RN_CM_MPA_WAIT_REP);
	assert_int_equal(t_send_all(raw, siw_reply + 21, sizeof(siw_reply) - 21), 0);
	assert_int_equal(rn_cm_wait(cm, T_WAIT_MS), RN_CM_ESTABLISHED);
	assert_int_equal(t_recv_all(raw, buf, sizeof(siw_rtr)), sizeof(siw_rtr));
	assert_memory_equal(buf, siw_rtr, sizeof(siw_rtr));
	struct rn_cm_handoff h;
	assert_int_equal(rn_cm_handoff(cm, &h), 0);
	assert_int_equal(h.tx_pos, sizeof(siw_rtr));
	assert_int_equal(h.params.peer_ird, 1);
	rn_conn_close(h.conn);
	rn_cm_destroy(cm);
	rn_conn_close(raw);
	rn_conn_close(lis);
}

int main(void)
{
	signal(SIGPIPE, SIG_DFL);
	alarm(60);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siw_initiator),
		cmocka_unit_test(test_siw_responder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
