/* rn_cm active <-> passive in two threads over loopback: every negotiation outcome, then an
 * FPDU each way over the handed-off stream (checks CRC, stream positions and leftovers). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "test_cm_peer.h"

enum srv_action { SRV_ACCEPT, SRV_REJECT, SRV_REJECT_DESTROY, SRV_IGNORE };

struct side {
	/* in */
	struct rn_cm_cfg cfg;
	enum srv_action act;
	const char *pd; /* private data to send */
	/* out */
	enum rn_cm_state state;
	int err;
	struct mpa_error merr;
	char peer_pd[600];
	size_t peer_pd_len;
	struct rn_cm_handoff h;
	bool have_h;
	struct t_fpdu_sink got; /* the FPDU received after establishment */
	int got_rc;
};

struct pair {
	struct rn_conn *lis;
	struct side srv, cli;
};

static void record(struct side *s, struct rn_cm *cm)
{
	size_t n;
	const uint8_t *pd = rn_cm_peer_pd(cm, &n);

	s->state = rn_cm_state(cm);
	s->err = rn_cm_error(cm);
	s->merr = *rn_cm_mpa_error(cm);
	if (n)
		memcpy(s->peer_pd, pd, n);
	s->peer_pd_len = n;
	if (s->state == RN_CM_ESTABLISHED && rn_cm_handoff(cm, &s->h) == 0)
		s->have_h = true;
	rn_cm_destroy(cm);
}

/* After establishment: the initiator speaks first (an FPDU "ping"), the responder answers. */
static void exchange(struct side *s, bool first)
{
	const char *msg = first ? "ping from initiator" : "pong from responder";
	struct rn_cm_handoff *h = &s->h;

	if (first)
		assert_int_equal(t_send_fpdu(h->conn, h->params.crc, h->params.markers_tx,
					     h->tx_pos, msg, strlen(msg)), 0);
	s->got_rc = t_recv_fpdu(h->conn, h->params.crc, h->params.markers_rx, h->rx_pos, h->rx,
				h->rx_len, &s->got);
	if (!first && s->got_rc == 0) /* server thread: no cmocka asserts here, record it */
		s->got_rc = t_send_fpdu(h->conn, h->params.crc, h->params.markers_tx, h->tx_pos,
					msg, strlen(msg));
}

static void *server(void *arg)
{
	struct pair *p = arg;
	struct side *s = &p->srv;
	struct rn_conn *c;
	struct rn_cm *cm;

	if (t_accept(p->lis, &c) != 0 || rn_cm_passive(c, &s->cfg, &cm) != 0) {
		s->state = RN_CM_FAILED;
		return NULL;
	}
	if (rn_cm_wait(cm, T_WAIT_MS) == RN_CM_WAIT_ACCEPT) {
		const char *pd = s->pd ? s->pd : "";
		if (s->act == SRV_REJECT_DESTROY) {
			/* rdma_reject + rdma_destroy_id: no progress between the two */
			s->err = rn_cm_reject(cm, pd, strlen(pd));
			rn_cm_destroy(cm);
			s->state = RN_CM_REJECTED;
			return NULL;
		}
		if (s->act == SRV_ACCEPT)
			rn_cm_accept(cm, pd, strlen(pd));
		else if (s->act == SRV_REJECT)
			rn_cm_reject(cm, pd, strlen(pd));
		if (s->act != SRV_IGNORE)
			rn_cm_wait(cm, T_WAIT_MS);
		/* ignoring: the accept timer must end it (the owner progresses at the deadline) */
		for (int i = 0; i < 50 && rn_cm_state(cm) == RN_CM_WAIT_ACCEPT; i++) {
			poll(NULL, 0, rn_cm_timeout_ms(cm));
			rn_cm_progress(cm);
		}
	}
	record(s, cm);
	if (s->have_h)
		exchange(s, false);
	return NULL;
}

static void run(struct pair *p)
{
	const struct rn_transport *t = rn_sock_transport();
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);
	pthread_t th;
	struct rn_cm *cm;

	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 4, &p->lis), 0);
	struct sockaddr_in ca = t_addr4("127.0.0.1", t_port_of(p->lis));
	assert_int_equal(pthread_create(&th, NULL, server, p), 0);
	const char *pd = p->cli.pd ? p->cli.pd : "";
	assert_int_equal(rn_cm_connect(t, (struct sockaddr *)&ca, sizeof(ca), &p->cli.cfg, pd,
				       strlen(pd), &cm), 0);
	rn_cm_wait(cm, 2 * T_WAIT_MS);
	record(&p->cli, cm);
	if (p->cli.have_h)
		exchange(&p->cli, true);
	pthread_join(th, NULL);
	rn_conn_close(p->lis);
}

static void cleanup(struct pair *p)
{
	struct side *sides[2] = { &p->srv, &p->cli };
	for (int i = 0; i < 2; i++) {
		if (sides[i]->have_h) {
			rn_conn_close(sides[i]->h.conn);
			free(sides[i]->h.rx);
		}
	}
}

static void init_pair(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	rn_cm_cfg_default(&p->srv.cfg);
	rn_cm_cfg_default(&p->cli.cfg);
	p->srv.cfg.mpa_ms = p->cli.cfg.mpa_ms = T_WAIT_MS;
}

static void assert_established(struct pair *p)
{
	assert_int_equal(p->cli.state, RN_CM_ESTABLISHED);
	assert_int_equal(p->srv.state, RN_CM_ESTABLISHED);
	assert_true(p->cli.have_h && p->srv.have_h);
	assert_int_equal(p->srv.got_rc, 0);
	assert_int_equal(p->cli.got_rc, 0);
	assert_int_equal(p->srv.got.len, strlen("ping from initiator"));
	assert_memory_equal(p->srv.got.buf, "ping from initiator", p->srv.got.len);
	assert_memory_equal(p->cli.got.buf, "pong from responder", p->cli.got.len);
	const struct mpa_conn_params *a = &p->cli.h.params, *b = &p->srv.h.params;
	assert_int_equal(a->rev, b->rev);
	assert_int_equal(a->crc, b->crc);
	assert_int_equal(a->p2p, b->p2p);
	assert_int_equal(a->rtr, b->rtr);
	assert_int_equal(p->cli.h.tx_pos, p->srv.h.rx_pos); /* RTR octets, both views */
	assert_int_equal(p->cli.h.rx_pos, p->srv.h.tx_pos);
}

static void test_default_p2p_write(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.cli.pd = "client private data";
	p.srv.pd = "server private data";
	run(&p);
	assert_established(&p);
	struct mpa_conn_params *a = &p.cli.h.params;
	assert_int_equal(a->rev, 2);
	assert_true(a->enhanced && a->p2p);
	assert_int_equal(a->rtr, MPA_RTR_WRITE);
	assert_false(a->crc);
	assert_int_equal(p.cli.h.tx_pos, 20); /* 2 + 14 + 0 pad + 4 */
	assert_int_equal(p.srv.h.tx_pos, 0);
	assert_int_equal(a->local_ord, 16);
	assert_int_equal(a->peer_ird, 16);
	assert_int_equal(p.srv.peer_pd_len, strlen(p.cli.pd));
	assert_memory_equal(p.srv.peer_pd, p.cli.pd, p.srv.peer_pd_len);
	assert_int_equal(p.cli.peer_pd_len, strlen(p.srv.pd));
	assert_memory_equal(p.cli.peer_pd, p.srv.pd, p.cli.peer_pd_len);
	for (int q = 0; q < 3; q++)
		assert_int_equal(p.cli.h.tx_msn[q], 1);
	cleanup(&p);
}

static void test_crc_by_initiator(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.cli.cfg.policy.crc_required = true;
	run(&p);
	assert_established(&p);
	assert_true(p.cli.h.params.crc && p.srv.h.params.crc);
	cleanup(&p);
}

static void test_crc_by_responder(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.srv.cfg.policy.crc_required = true;
	run(&p);
	assert_established(&p);
	assert_true(p.cli.h.params.crc && p.srv.h.params.crc);
	cleanup(&p);
}

static void rtr_case(unsigned offered, unsigned accepted, enum mpa_rtr want)
{
	struct pair p;
	init_pair(&p);
	p.cli.cfg.policy.rtr_types = offered;
	p.srv.cfg.policy.rtr_types = accepted;
	run(&p);
	assert_established(&p);
	assert_int_equal(p.cli.h.params.rtr, want);
	unsigned qn = want == MPA_RTR_SEND ? 0 : want == MPA_RTR_READ ? 1 : 9;
	for (unsigned q = 0; q < 3; q++) {
		assert_int_equal(p.cli.h.tx_msn[q], q == qn ? 2 : 1);
		assert_int_equal(p.srv.h.rx_msn[q], q == qn ? 2 : 1);
		assert_int_equal(p.cli.h.rx_msn[q], 1);
		assert_int_equal(p.srv.h.tx_msn[q], 1);
	}
	/* READ: the responder's zero-length Read Response (20 octets) was consumed by the CM */
	assert_int_equal(p.srv.h.tx_pos, want == MPA_RTR_READ ? 20 : 0);
	assert_int_equal(p.cli.h.tx_pos, want == MPA_RTR_READ ? 52 : want == MPA_RTR_SEND ? 24 : 20);
	cleanup(&p);
}

static void test_rtr_write(void **state)
{
	(void)state;
	rtr_case(MPA_RTR_ALL, MPA_RTR_WRITE, MPA_RTR_WRITE);
}

static void test_rtr_read(void **state)
{
	(void)state;
	rtr_case(MPA_RTR_ALL, MPA_RTR_READ, MPA_RTR_READ);
}

static void test_rtr_send(void **state)
{
	(void)state;
	rtr_case(MPA_RTR_ALL, MPA_RTR_SEND, MPA_RTR_SEND);
}

static void test_rtr_read_with_crc(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.cli.cfg.policy.rtr_types = MPA_RTR_READ;
	p.srv.cfg.policy.crc_required = true;
	run(&p);
	assert_established(&p);
	assert_int_equal(p.cli.h.params.rtr, MPA_RTR_READ);
	assert_true(p.srv.h.params.crc);
	cleanup(&p);
}

static void test_no_p2p(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.cli.cfg.policy.p2p = false;
	run(&p);
	assert_established(&p);
	assert_false(p.cli.h.params.p2p);
	assert_int_equal(p.cli.h.tx_pos, 0);
	cleanup(&p);
}

static void test_rev1_both(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.cli.cfg.policy.rev = 1;
	p.cli.cfg.policy.enhanced = false;
	run(&p);
	assert_established(&p);
	assert_int_equal(p.srv.h.params.rev, 1);
	assert_false(p.srv.h.params.p2p);
	cleanup(&p);
}

static void test_markers_wanted_by_responder(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.srv.cfg.policy.markers_wanted = true;
	p.cli.cfg.policy.crc_required = true;
	run(&p);
	assert_established(&p);
	assert_true(p.cli.h.params.markers_tx);
	assert_true(p.srv.h.params.markers_rx);
	assert_int_equal(p.cli.h.tx_pos, 24); /* marker + WRITE RTR */
	cleanup(&p);
}

static void test_no_matching_rtr(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.cli.cfg.policy.rtr_types = MPA_RTR_SEND;
	p.srv.cfg.policy.rtr_types = MPA_RTR_WRITE;
	run(&p);
	assert_int_equal(p.cli.state, RN_CM_REJECTED);
	assert_int_equal(p.cli.err, -ECONNREFUSED);
	assert_int_equal(p.srv.state, RN_CM_FAILED);
	assert_int_equal(p.srv.err, -EPROTO);
	assert_int_equal(p.srv.merr.ecode, MPA_ECODE_NO_MATCHING_RTR);
}

static void test_reject_with_pd(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.srv.act = SRV_REJECT;
	p.srv.pd = "no room at the inn";
	run(&p);
	assert_int_equal(p.cli.state, RN_CM_REJECTED);
	assert_int_equal(p.cli.err, -ECONNREFUSED);
	assert_int_equal(p.srv.state, RN_CM_REJECTED);
	assert_int_equal(p.cli.peer_pd_len, strlen(p.srv.pd));
	assert_memory_equal(p.cli.peer_pd, p.srv.pd, p.cli.peer_pd_len);
}

/* Destroyed at once after the reject (cmtime, rdma_get_request's failure path): the Reject
 * and its private data still reach the initiator, which sees a refusal, not a reset. */
static void test_reject_then_destroy(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.srv.act = SRV_REJECT_DESTROY;
	p.srv.pd = "gone already";
	run(&p);
	assert_int_equal(p.srv.err, 0);
	assert_int_equal(p.cli.state, RN_CM_REJECTED);
	assert_int_equal(p.cli.err, -ECONNREFUSED);
	assert_int_equal(p.cli.peer_pd_len, strlen(p.srv.pd));
	assert_memory_equal(p.cli.peer_pd, p.srv.pd, p.cli.peer_pd_len);
}

static void test_max_pd(void **state)
{
	(void)state;
	static char big[509];
	struct pair p;
	init_pair(&p);
	memset(big, 'p', 508); /* 512 - 4 (RFC 6581 block) */
	p.cli.pd = big;
	p.srv.pd = big;
	run(&p);
	assert_established(&p);
	assert_int_equal(p.srv.peer_pd_len, 508);
	assert_int_equal(p.cli.peer_pd_len, 508);
	cleanup(&p);
}

static void test_pd_over_peer_limit(void **state)
{
	(void)state;
	static char big[301];
	struct pair p;
	init_pair(&p);
	memset(big, 'q', 300);
	p.cli.pd = big;
	p.srv.cfg.policy.pd_max = MPA_PD_MAX_LINUX; /* 256 */
	run(&p);
	assert_int_equal(p.srv.state, RN_CM_FAILED);
	assert_int_equal(p.srv.err, -EPROTO);
	assert_int_equal(p.srv.merr.ecode, MPA_ECODE_INVALID_REQ_REP);
	assert_int_equal(p.cli.state, RN_CM_REJECTED); /* it answered with a Reject */
}

static void test_accept_timeout(void **state)
{
	(void)state;
	struct pair p;
	init_pair(&p);
	p.srv.act = SRV_IGNORE;
	p.srv.cfg.accept_ms = 200;
	long long t0 = t_now_ms();
	run(&p);
	assert_true(t_now_ms() - t0 < 3000);
	assert_int_equal(p.srv.state, RN_CM_FAILED);
	assert_int_equal(p.srv.err, -ETIMEDOUT);
	assert_int_equal(p.cli.state, RN_CM_FAILED);
	assert_int_equal(p.cli.err, -ECONNRESET);
}

static void test_api_misuse(void **state)
{
	(void)state;
	const struct rn_transport *t = rn_sock_transport();
	struct rn_cm_cfg cfg;
	struct rn_cm *cm = NULL;
	static char big[600];
	struct sockaddr_in a = t_addr4("127.0.0.1", 1);

	rn_cm_cfg_default(&cfg);
	assert_int_equal(rn_cm_connect(t, (struct sockaddr *)&a, sizeof(a), &cfg, big, 509, &cm),
			 -EINVAL); /* 509 + 4 > 512 */
	assert_null(cm);
	assert_int_equal(rn_cm_connect(t, (struct sockaddr *)&a, sizeof(a), &cfg, NULL, 3, &cm),
			 -EINVAL);
	assert_string_equal(rn_cm_state_name(RN_CM_WAIT_RTR), "WAIT_RTR");
}

static void test_connect_refused(void **state)
{
	(void)state;
	const struct rn_transport *t = rn_sock_transport();
	struct rn_conn *l;
	struct rn_cm_cfg cfg;
	struct rn_cm *cm = NULL;
	struct sockaddr_in la = t_addr4("127.0.0.1", 0);

	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 1, &l), 0);
	struct sockaddr_in ca = t_addr4("127.0.0.1", t_port_of(l));
	rn_conn_close(l);
	rn_cm_cfg_default(&cfg);
	int rc = rn_cm_connect(t, (struct sockaddr *)&ca, sizeof(ca), &cfg, NULL, 0, &cm);
	if (rc == 0) {
		assert_int_equal(rn_cm_wait(cm, T_WAIT_MS), RN_CM_FAILED);
		rc = rn_cm_error(cm);
		assert_int_equal(rn_cm_fd(cm), -1);
		rn_cm_destroy(cm);
	}
	assert_int_equal(rc, -ECONNREFUSED);
}

int main(void)
{
	signal(SIGPIPE, SIG_DFL);
	alarm(120);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_p2p_write),
		cmocka_unit_test(test_crc_by_initiator),
		cmocka_unit_test(test_crc_by_responder),
		cmocka_unit_test(test_rtr_write),
		cmocka_unit_test(test_rtr_read),
		cmocka_unit_test(test_rtr_send),
		cmocka_unit_test(test_rtr_read_with_crc),
		cmocka_unit_test(test_no_p2p),
		cmocka_unit_test(test_rev1_both),
		cmocka_unit_test(test_markers_wanted_by_responder),
		cmocka_unit_test(test_no_matching_rtr),
		cmocka_unit_test(test_reject_with_pd),
		cmocka_unit_test(test_reject_then_destroy),
		cmocka_unit_test(test_max_pd),
		cmocka_unit_test(test_pd_over_peer_limit),
		cmocka_unit_test(test_accept_timeout),
		cmocka_unit_test(test_api_misuse),
		cmocka_unit_test(test_connect_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
