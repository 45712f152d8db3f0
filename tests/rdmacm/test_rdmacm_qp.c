/* librdmacm with QPs on the ids, public APIs only (plus a raw TCP socket speaking MPA by
 * hand): rdma_accept's responder_resources / initiator_depth in the MPA Reply, in the events
 * and in the QPs' ORD / IRD; DISCONNECTED from the QP's LLP close notification on both sides,
 * bounded in time, many times over. One thread: every id is asynchronous. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <softrnic/verbs_ext.h>

#include "rcm_test_util.h"

#include <rdma/rdma_verbs.h>

/* DISCONNECTED must follow the other side's disconnect within this (the old state watch
 * polled every 20 ms; the notification is immediate, the bound leaves room for sanitizers). */
#define T_DISC_MS 1000

struct qpair {
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *lis, *cli, *child;
	uint16_t port;
};

static void qp_attr(struct ibv_qp_init_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->cap.max_send_wr = 8;
	a->cap.max_recv_wr = 8;
	a->cap.max_send_sge = 1;
	a->cap.max_recv_sge = 1;
	a->qp_type = IBV_QPT_RC;
}

static void listen_on(struct qpair *p)
{
	struct sockaddr_in any = t_addr4("127.0.0.1", 0);

	memset(p, 0, sizeof(*p));
	p->sch = rdma_create_event_channel();
	p->cch = rdma_create_event_channel();
	assert_non_null(p->sch);
	assert_non_null(p->cch);
	assert_int_equal(rdma_create_id(p->sch, &p->lis, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(p->lis, (struct sockaddr *)&any), 0);
	assert_int_equal(rdma_listen(p->lis, 8), 0);
	p->port = ntohs(rdma_get_src_port(p->lis));
	assert_true(p->port != 0);
}

static void teardown(struct qpair *p)
{
	assert_int_equal(rdma_destroy_id(p->lis), 0);
	rdma_destroy_event_channel(p->sch);
	rdma_destroy_event_channel(p->cch);
}

/* Client with a QP connects with cp; the server's child gets a QP; the request is returned
 * unacked in *req. */
static void connect_qps(struct qpair *p, struct rdma_conn_param *cp, struct rdma_cm_event **req)
{
	struct sockaddr_in dst = t_addr4("127.0.0.1", p->port);
	struct ibv_qp_init_attr a;

	assert_int_equal(rdma_create_id(p->cch, &p->cli, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(p->cli, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_int_equal(t_expect_ack(p->cch, RDMA_CM_EVENT_ADDR_RESOLVED), 0);
	assert_int_equal(rdma_resolve_route(p->cli, 1000), 0);
	assert_int_equal(t_expect_ack(p->cch, RDMA_CM_EVENT_ROUTE_RESOLVED), 0);
	qp_attr(&a);
	assert_int_equal(rdma_create_qp(p->cli, NULL, &a), 0);
	assert_int_equal(rdma_connect(p->cli, cp), 0);
	*req = t_expect(p->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_non_null(*req);
	p->child = (*req)->id;
	qp_attr(&a);
	assert_int_equal(rdma_create_qp(p->child, NULL, &a), 0);
}

static void qp_rd(struct rdma_cm_id *id, int *ord, int *ird)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;

	assert_int_equal(ibv_query_qp(id->qp, &qa, IBV_QP_MAX_QP_RD_ATOMIC |
				      IBV_QP_MAX_DEST_RD_ATOMIC, &ia), 0);
	*ord = qa.max_rd_atomic;
	*ird = qa.max_dest_rd_atomic;
}

static void destroy_side(struct rdma_cm_id **id)
{
	if (*id == NULL)
		return;
	rdma_destroy_qp(*id);
	assert_int_equal(rdma_destroy_id(*id), 0);
	*id = NULL;
}

/* The client disconnects, both see DISCONNECTED; everything is destroyed. */
static void close_pair(struct qpair *p)
{
	assert_int_equal(rdma_disconnect(p->cli), 0);
	assert_int_equal(t_expect_ack(p->cch, RDMA_CM_EVENT_DISCONNECTED), 0);
	assert_int_equal(t_expect_ack(p->sch, RDMA_CM_EVENT_DISCONNECTED), 0);
	destroy_side(&p->child);
	destroy_side(&p->cli);
	teardown(p);
}

/* ---- IRD / ORD of rdma_accept --------------------------------------------------------- */

static void test_accept_ird_ord(void **state)
{
	struct qpair p;
	struct rdma_conn_param cp = { .responder_resources = 8, .initiator_depth = 8 };
	struct rdma_conn_param ap = { .responder_resources = 3, .initiator_depth = 5,
				      .private_data = "ok", .private_data_len = 3 };
	struct rdma_cm_event *ev;
	int ord, ird;

	(void)state;
	listen_on(&p);
	connect_qps(&p, &cp, &ev);
	/* what an accept without values would give: the initiator's mirrored */
	assert_int_equal(ev->param.conn.responder_resources, 8);
	assert_int_equal(ev->param.conn.initiator_depth, 8);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_accept(p.child, &ap), 0);

	/* active: ORD lowered to the responder's IRD (3); its own IRD as asked */
	ev = t_expect(p.cch, RDMA_CM_EVENT_ESTABLISHED);
	assert_non_null(ev);
	assert_int_equal(ev->param.conn.initiator_depth, 3);
	assert_int_equal(ev->param.conn.responder_resources, 8);
	assert_int_equal(ev->param.conn.private_data_len, 3);
	assert_string_equal((const char *)ev->param.conn.private_data, "ok");
	rdma_ack_cm_event(ev);
	/* passive: IRD 3, ORD 5 (= min(5, initiator IRD 8)) */
	ev = t_expect(p.sch, RDMA_CM_EVENT_ESTABLISHED);
	assert_non_null(ev);
	assert_int_equal(ev->param.conn.responder_resources, 3);
	assert_int_equal(ev->param.conn.initiator_depth, 5);
	rdma_ack_cm_event(ev);

	/* the QPs follow */
	qp_rd(p.child, &ord, &ird);
	assert_int_equal(ord, 5);
	assert_int_equal(ird, 3);
	qp_rd(p.cli, &ord, &ird);
	assert_int_equal(ord, 3);
	assert_int_equal(ird, 8);

	close_pair(&p);
}

/* A raw initiator: the Reply's RFC 6581 block carries rdma_accept's values
 * (mpa_negotiate.c D7). */
static int raw_connect(uint16_t port)
{
	struct sockaddr_in a = t_addr4("127.0.0.1", port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int read_all(int fd, uint8_t *buf, size_t n)
{
	size_t have = 0;

	while (have < n) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, T_WAIT_MS) != 1)
			return -1;
		ssize_t r = read(fd, buf + have, n - have);
		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
	return 0;
}

static void raw_accept_case(uint8_t rr, uint8_t id, const uint8_t want_block[4])
{
	struct qpair p;
	/* rev 2, S (enhanced), no P2P; IRD 8 ORD 8; 2 octets of private data */
	static const uint8_t req[] = { 'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ',
				       'F', 'r', 'a', 'm', 'e', 0x10, 0x02, 0x00, 0x06,
				       0x00, 0x08, 0x00, 0x08, 'h', 'i' };
	static const uint8_t rep_hdr[] = { 'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'p', ' ',
					   'F', 'r', 'a', 'm', 'e', 0x10, 0x02, 0x00, 0x07 };
	struct rdma_conn_param ap = { .responder_resources = rr, .initiator_depth = id,
				      .private_data = "ack", .private_data_len = 3 };
	uint8_t rep[sizeof(rep_hdr) + 4 + 3];

	listen_on(&p);
	int fd = raw_connect(p.port);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, req, sizeof(req)), (ssize_t)sizeof(req));
	struct rdma_cm_event *ev = t_expect(p.sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_non_null(ev);
	p.child = ev->id;
	assert_int_equal(ev->param.conn.private_data_len, 2);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_accept(p.child, &ap), 0); /* QP-less */
	assert_int_equal(read_all(fd, rep, sizeof(rep)), 0);
	assert_memory_equal(rep, rep_hdr, sizeof(rep_hdr));
	assert_memory_equal(rep + sizeof(rep_hdr), want_block, 4);
	assert_memory_equal(rep + sizeof(rep_hdr) + 4, "ack", 3);
	ev = t_expect(p.sch, RDMA_CM_EVENT_ESTABLISHED);
	assert_non_null(ev);
	assert_int_equal(ev->param.conn.responder_resources, (want_block[0] << 8) | want_block[1]);
	assert_int_equal(ev->param.conn.initiator_depth, (want_block[2] << 8) | want_block[3]);
	rdma_ack_cm_event(ev);
	close(fd);
	assert_int_equal(t_expect_ack(p.sch, RDMA_CM_EVENT_DISCONNECTED), 0);
	assert_int_equal(rdma_destroy_id(p.child), 0);
	teardown(&p);
}

static void test_accept_ird_ord_reply_bytes(void **state)
{
	(void)state;
	static const uint8_t b1[4] = { 0x00, 0x03, 0x00, 0x05 }; /* both ours */
	static const uint8_t b2[4] = { 0x00, 0x08, 0x00, 0x08 }; /* ours above: the initiator's */
	static const uint8_t b3[4] = { 0x00, 0x08, 0x00, 0x02 }; /* 0: the device max, lowered */
	raw_accept_case(3, 5, b1);
	raw_accept_case(20, 30, b2);
	raw_accept_case(0, 2, b3);
}

/* ---- DISCONNECTED from the LLP close notification ---------------------------------------- */

static void expect_disc_within(struct rdma_event_channel *ch, long long since)
{
	struct rdma_cm_event *ev = t_next_event(ch, T_DISC_MS);

	assert_non_null(ev);
	assert_int_equal(ev->event, RDMA_CM_EVENT_DISCONNECTED);
	rdma_ack_cm_event(ev);
	assert_true(t_now_ms() - since <= T_DISC_MS);
}

/* Each round: connect with QPs; then one side (alternating) disconnects, or (every third
 * round) destroys its QP without disconnecting, which resets the stream. */
static void test_disconnect_50(void **state)
{
	struct qpair p;

	(void)state;
	listen_on(&p);
	for (int i = 0; i < 50; i++) {
		struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4 };
		struct rdma_cm_event *ev;

		connect_qps(&p, &cp, &ev);
		rdma_ack_cm_event(ev);
		assert_int_equal(rdma_accept(p.child, &cp), 0);
		assert_int_equal(t_expect_ack(p.cch, RDMA_CM_EVENT_ESTABLISHED), 0);
		assert_int_equal(t_expect_ack(p.sch, RDMA_CM_EVENT_ESTABLISHED), 0);

		bool cli_first = i % 2 == 0;
		struct rdma_cm_id *a = cli_first ? p.cli : p.child, *b = cli_first ? p.child : p.cli;
		struct rdma_event_channel *ach = cli_first ? p.cch : p.sch;
		struct rdma_event_channel *bch = cli_first ? p.sch : p.cch;
		long long t0 = t_now_ms();
		if (i % 3 == 2) {
			rdma_destroy_qp(a); /* reset: only the other side reports */
			expect_disc_within(bch, t0);
			assert_true(t_quiet(ach, 50));
		} else {
			assert_int_equal(rdma_disconnect(a), 0);
			expect_disc_within(ach, t0);
			expect_disc_within(bch, t0);
			assert_int_equal(rdma_disconnect(b), 0); /* after the peer's: nothing more */
		}
		assert_true(t_quiet(p.cch, 0));
		assert_true(t_quiet(p.sch, 0));
		destroy_side(&p.child);
		destroy_side(&p.cli);
	}
	teardown(&p);
}

/* ---- SOFTRNIC_MPA: MPA options for applications that cannot ask for them -------- */

/* A Send from the client lands at the server (bounded wait). */
static void send_one(struct qpair *p)
{
	char rbuf[16] = { 0 }, sbuf[16] = "mpa options";
	struct ibv_mr *mr_r = rdma_reg_msgs(p->child, rbuf, sizeof(rbuf));
	struct ibv_mr *mr_s = rdma_reg_msgs(p->cli, sbuf, sizeof(sbuf));
	struct ibv_wc wc;
	long long end = t_now_ms() + 5000;
	int n;

	assert_non_null(mr_r);
	assert_non_null(mr_s);
	assert_int_equal(rdma_post_recv(p->child, NULL, rbuf, sizeof(rbuf), mr_r), 0);
	assert_int_equal(rdma_post_send(p->cli, NULL, sbuf, sizeof(sbuf), mr_s, 0), 0);
	while ((n = ibv_poll_cq(p->child->recv_cq, 1, &wc)) == 0 && t_now_ms() < end)
		usleep(200);
	assert_int_equal(n, 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_string_equal(rbuf, "mpa options");
	assert_int_equal(rdma_dereg_mr(mr_r), 0);
	assert_int_equal(rdma_dereg_mr(mr_s), 0);
}

/* Both sides run with SOFTRNIC_MPA=env (one process); what both QPs negotiated. */
static void mpa_case(const char *env, struct softrnic_qp_mpa *cli, struct softrnic_qp_mpa *srv)
{
	struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4 };
	struct rdma_cm_event *ev;
	struct qpair p;

	if (env)
		setenv("SOFTRNIC_MPA", env, 1);
	else
		unsetenv("SOFTRNIC_MPA");
	listen_on(&p);
	assert_int_equal(softrnic_query_qp_mpa(NULL, cli), EINVAL);
	connect_qps(&p, &cp, &ev);
	assert_int_equal(softrnic_query_qp_mpa(p.child->qp, srv), ENOENT); /* not yet */
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_accept(p.child, &cp), 0);
	assert_int_equal(t_expect_ack(p.cch, RDMA_CM_EVENT_ESTABLISHED), 0);
	assert_int_equal(t_expect_ack(p.sch, RDMA_CM_EVENT_ESTABLISHED), 0);
	send_one(&p);
	assert_int_equal(softrnic_query_qp_mpa(p.cli->qp, cli), 0);
	assert_int_equal(softrnic_query_qp_mpa(p.child->qp, srv), 0);
	close_pair(&p);
	unsetenv("SOFTRNIC_MPA");
}

static void same(const struct softrnic_qp_mpa *a, const struct softrnic_qp_mpa *b)
{
	assert_int_equal(a->rev, b->rev);
	assert_int_equal(a->enhanced, b->enhanced);
	assert_int_equal(a->crc, b->crc);
	assert_int_equal(a->p2p, b->p2p);
	assert_int_equal(a->rtr, b->rtr);
}

static void test_mpa_env(void **state)
{
	struct softrnic_qp_mpa c, s;

	(void)state;
	mpa_case(NULL, &c, &s); /* defaults: rev 2, enhanced, peer-to-peer (a Write RTR), no CRC */
	same(&c, &s);
	assert_int_equal(c.rev, 2);
	assert_true(c.enhanced && c.p2p && !c.crc);
	assert_int_equal(c.rtr, 2);
	assert_int_equal(c.peer_ird, 4);
	mpa_case("crc", &c, &s);
	same(&c, &s);
	assert_true(c.crc && c.p2p);
	mpa_case("crc,rtr=read", &c, &s); /* the zero-length Read as RTR */
	same(&c, &s);
	assert_true(c.crc && c.p2p);
	assert_int_equal(c.rtr, 4);
	mpa_case("nop2p", &c, &s);
	same(&c, &s);
	assert_true(c.enhanced && !c.p2p && !c.crc);
	assert_int_equal(c.rtr, 0);
	mpa_case("noenhanced", &c, &s);
	same(&c, &s);
	assert_int_equal(c.rev, 2);
	assert_true(!c.enhanced && !c.p2p);
	assert_int_equal(c.peer_ird, 0x3FFF);
	mpa_case("rev1,crc", &c, &s);
	same(&c, &s);
	assert_int_equal(c.rev, 1);
	assert_true(!c.enhanced && !c.p2p && c.crc);
	mpa_case("markers,crc", &c, &s); /* both ask: markers in both directions */
	same(&c, &s);
	assert_true(c.markers_tx && c.markers_rx && s.markers_tx && s.markers_rx && c.crc);
}

/* An option we do not know: rdma_listen and rdma_connect say EINVAL. */
static void test_mpa_env_bad(void **state)
{
	static const char *const bad[] = { "crc,bogus", "rtr=", "rtr=write+", "rtr=fast", "CRC" };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in any = t_addr4("127.0.0.1", 0), dst = t_addr4("127.0.0.1", 9);
	struct rdma_cm_id *id;

	(void)state;
	assert_non_null(ch);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("SOFTRNIC_MPA", bad[i], 1);
		assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
		assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&any), 0);
		errno = 0;
		assert_int_equal(rdma_listen(id, 8), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(rdma_destroy_id(id), 0);
		assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
		assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
		assert_int_equal(t_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED), 0);
		assert_int_equal(rdma_resolve_route(id, 1000), 0);
		assert_int_equal(t_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED), 0);
		errno = 0;
		assert_int_equal(rdma_connect(id, NULL), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(rdma_destroy_id(id), 0);
	}
	unsetenv("SOFTRNIC_MPA");
	rdma_destroy_event_channel(ch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept_ird_ord),
		cmocka_unit_test(test_accept_ird_ord_reply_bytes),
		cmocka_unit_test(test_disconnect_50),
		cmocka_unit_test(test_mpa_env),
		cmocka_unit_test(test_mpa_env_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
