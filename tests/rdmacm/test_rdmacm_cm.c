/* librdmacm API over rn_cm, connection management only (no QPs): event channel fd, id
 * lifecycle, address and route resolution, listen / connect / accept / reject with private
 * data, refused connections, disconnect on both sides, options, migrate, the synchronous
 * (NULL channel) calls rdma_create_ep / rdma_get_request use. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "rcm_test_util.h"

/* ---- channel and ids ------------------------------------------------------------------- */

static void test_event_str(void **state)
{
	(void)state;
	assert_string_equal(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED),
			    "RDMA_CM_EVENT_ESTABLISHED");
	assert_string_equal(rdma_event_str(RDMA_CM_EVENT_REJECTED), "RDMA_CM_EVENT_REJECTED");
	assert_string_equal(rdma_event_str((enum rdma_cm_event_type)99), "UNKNOWN EVENT");
}

static void test_channel_fd(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct sockaddr_in dst = t_addr4("127.0.0.1", 7174);

	(void)state;
	assert_non_null(ch);
	assert_true(ch->fd >= 0);
	assert_true(t_quiet(ch, 0));
	/* non-blocking through the fd flag, as librdmacm documents */
	assert_int_equal(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	assert_int_equal(rdma_get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(rdma_create_id(ch, &id, (void *)0x1234, RDMA_PS_TCP), 0);
	assert_ptr_equal(id->channel, ch);
	assert_ptr_equal(id->context, (void *)0x1234);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_false(t_quiet(ch, T_WAIT_MS)); /* readable while an event is pending */
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_ptr_equal(ev->id, id);
	assert_int_equal(ev->status, 0);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_true(t_quiet(ch, 0));
	assert_int_equal(rdma_get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

/* Many events pending at once (a server's burst of requests or disconnects): the fd stays
 * readable until the last is taken. One octet per event in the socketpair stopped at its
 * buffer (some 280 events) and the rest never woke the consumer. Also: events dropped with
 * their ids leave the fd quiet once none is left. */
#define MANY_EVENTS 1000
static void test_many_pending_events(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	static struct rdma_cm_id *id[MANY_EVENTS];
	struct sockaddr_in dst = t_addr4("127.0.0.1", 7174);
	struct rdma_cm_event *ev;
	unsigned got = 0;

	(void)state;
	assert_non_null(ch);
	assert_int_equal(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	for (unsigned i = 0; i < MANY_EVENTS; i++) {
		assert_int_equal(rdma_create_id(ch, &id[i], NULL, RDMA_PS_TCP), 0);
		assert_int_equal(rdma_resolve_addr(id[i], NULL, (struct sockaddr *)&dst, 1000), 0);
	}
	while (got < MANY_EVENTS - 10) {
		assert_false(t_quiet(ch, T_WAIT_MS));
		assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
		assert_int_equal(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
		assert_int_equal(rdma_ack_cm_event(ev), 0);
		got++;
	}
	for (unsigned i = 0; i < MANY_EVENTS; i++)
		assert_int_equal(rdma_destroy_id(id[i]), 0);  /* drops the 10 still pending */
	assert_true(t_quiet(ch, 0));
	assert_int_equal(rdma_get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	rdma_destroy_event_channel(ch);
}

static void test_id_lifecycle(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id, *id2;
	struct sockaddr_in lo = t_addr4("127.0.0.1", 0), far = t_addr4("192.0.2.1", 0);

	(void)state;
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP), -1);
	assert_int_equal(errno, EPROTONOSUPPORT);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(id->ps, RDMA_PS_TCP);
	assert_int_equal(id->qp_type, IBV_QPT_RC);
	assert_null(id->qp);
	/* not a local address */
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&far), -1);
	assert_int_equal(errno, EADDRNOTAVAIL);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&lo), 0);
	assert_int_equal(rdma_get_local_addr(id)->sa_family, AF_INET);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&lo), -1); /* bound already */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rdma_resolve_route(id, 100), -1);                 /* no address yet */
	/* an id destroyed with an event still queued: the event goes with it */
	struct sockaddr_in dst = t_addr4("127.0.0.1", 1);
	assert_int_equal(rdma_create_id(ch, &id2, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id2, NULL, (struct sockaddr *)&dst, 100), 0);
	assert_false(t_quiet(ch, T_WAIT_MS));
	assert_int_equal(rdma_destroy_id(id2), 0);
	assert_true(t_quiet(ch, 0));
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

static void check_resolved(const char *ip, int family)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	struct sockaddr_storage dst;
	char buf[64];

	memset(&dst, 0, sizeof(dst));
	if (family == AF_INET) {
		*(struct sockaddr_in *)&dst = t_addr4(ip, 7174);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&dst;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(7174);
		inet_pton(AF_INET6, ip, &s6->sin6_addr);
	}
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_int_equal(t_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED), 0);
	assert_non_null(id->verbs); /* bound to the softrnic device */
	assert_int_equal(rdma_get_local_addr(id)->sa_family, family);
	void *src = family == AF_INET ? (void *)&id->route.addr.src_sin.sin_addr
				      : (void *)&id->route.addr.src_sin6.sin6_addr;
	assert_non_null(inet_ntop(family, src, buf, sizeof(buf)));
	assert_string_equal(buf, ip); /* loopback routes from loopback */
	assert_int_equal(rdma_get_dst_port(id), htons(7174));
	assert_int_equal(rdma_resolve_route(id, 1000), 0);
	assert_int_equal(t_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED), 0);
	assert_int_equal(rdma_resolve_route(id, 1000), -1); /* only once */
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

static void test_resolve_loopback(void **state)
{
	(void)state;
	check_resolved("127.0.0.1", AF_INET);
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);
	struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	bool have6 = fd >= 0 && bind(fd, (struct sockaddr *)&lo6, sizeof(lo6)) == 0;
	if (fd >= 0)
		close(fd);
	if (have6)
		check_resolved("::1", AF_INET6);
	else
		fprintf(stderr, "note: no IPv6 loopback here, ::1 not checked\n");
}

static void test_resolve_sync(void **state)
{
	struct rdma_cm_id *id;
	struct sockaddr_in dst = t_addr4("127.0.0.1", 7174);

	(void)state;
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	assert_non_null(id->channel);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_int_equal(rdma_resolve_route(id, 1000), 0); /* both returned after their event */
	assert_true(t_quiet(id->channel, 0));
	assert_int_equal(rdma_destroy_id(id), 0);
}

static void test_options(void **state)
{
	struct rdma_cm_id *id;
	uint8_t tos = 0x10, ack = 14;
	int one = 1;

	(void)state;
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1), 0);
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one,
					 sizeof(one)), 0);
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one,
					 sizeof(one)), 0);
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, 1),
			 0);
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one,
					 sizeof(one)), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &one,
					 sizeof(one)), -1);
	assert_int_equal(errno, ENOSYS);
	assert_int_equal(rdma_set_option(id, RDMA_OPTION_ID, 77, &one, sizeof(one)), -1);
	assert_int_equal(errno, ENOSYS);
	assert_int_equal(rdma_destroy_id(id), 0);
}

/* ---- connections ----------------------------------------------------------------------- */

struct pair {
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *lis, *child, *cli;
	uint16_t port;
};

static void listen_backlog(struct pair *p, int backlog);

static void listen_on(struct pair *p)
{
	listen_backlog(p, 8);
}

static void listen_backlog(struct pair *p, int backlog)
{
	struct sockaddr_in any = t_addr4("127.0.0.1", 0);

	p->sch = rdma_create_event_channel();
	p->cch = rdma_create_event_channel();
	assert_non_null(p->sch);
	assert_non_null(p->cch);
	assert_int_equal(rdma_create_id(p->sch, &p->lis, (void *)0x515, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(p->lis, (struct sockaddr *)&any), 0);
	assert_int_equal(rdma_listen(p->lis, backlog), 0);
	p->port = ntohs(rdma_get_src_port(p->lis));
	assert_true(p->port != 0);
}

/* Client: resolve, route, connect with pd (NUL-terminated string or NULL). */
static void connect_to(struct pair *p, uint16_t port, const char *pd)
{
	struct sockaddr_in dst = t_addr4("127.0.0.1", port);
	struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4,
				      .retry_count = 7 };

	assert_int_equal(rdma_create_id(p->cch, &p->cli, (void *)0xc11, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(p->cli, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_int_equal(t_expect_ack(p->cch, RDMA_CM_EVENT_ADDR_RESOLVED), 0);
	assert_int_equal(rdma_resolve_route(p->cli, 1000), 0);
	assert_int_equal(t_expect_ack(p->cch, RDMA_CM_EVENT_ROUTE_RESOLVED), 0);
	if (pd != NULL) {
		cp.private_data = pd;
		cp.private_data_len = (uint8_t)(strlen(pd) + 1);
	}
	assert_int_equal(rdma_connect(p->cli, &cp), 0);
}

/* Server: the CONNECT_REQUEST, checked against the client's private data. */
static void take_request(struct pair *p, const char *pd)
{
	struct rdma_cm_event *ev = t_expect(p->sch, RDMA_CM_EVENT_CONNECT_REQUEST);

	assert_non_null(ev);
	assert_ptr_equal(ev->listen_id, p->lis);
	assert_ptr_not_equal(ev->id, p->lis);
	assert_int_equal(ev->status, 0);
	p->child = ev->id;
	assert_ptr_equal(p->child->context, (void *)0x515); /* inherited from the listener */
	assert_ptr_equal(p->child->channel, p->sch);
	assert_non_null(p->child->verbs);
	assert_int_equal(ev->param.conn.private_data_len, pd ? strlen(pd) + 1 : 0);
	if (pd != NULL)
		assert_string_equal((const char *)ev->param.conn.private_data, pd);
	/* the initiator asked for IRD = ORD = 4: what we would grant mirrors it */
	assert_int_equal(ev->param.conn.responder_resources, 4);
	assert_int_equal(ev->param.conn.initiator_depth, 4);
	assert_int_equal(ntohs(rdma_get_src_port(p->child)), p->port);
	rdma_ack_cm_event(ev);
}

static void teardown_pair(struct pair *p)
{
	if (p->child)
		assert_int_equal(rdma_destroy_id(p->child), 0);
	if (p->cli)
		assert_int_equal(rdma_destroy_id(p->cli), 0);
	assert_int_equal(rdma_destroy_id(p->lis), 0);
	rdma_destroy_event_channel(p->sch);
	rdma_destroy_event_channel(p->cch);
}

static void test_connect_accept_disconnect(void **state)
{
	struct pair p = { 0 };
	const char *spd = "accepted, welcome";
	struct rdma_conn_param ap = { .private_data = spd, .private_data_len = 18,
				      .responder_resources = 4, .initiator_depth = 4 };

	(void)state;
	listen_on(&p);
	connect_to(&p, p.port, "hello from the client");
	take_request(&p, "hello from the client");
	assert_int_equal(rdma_accept(p.child, &ap), 0);
	struct rdma_cm_event *ev = t_expect(p.cch, RDMA_CM_EVENT_ESTABLISHED);
	assert_non_null(ev);
	assert_ptr_equal(ev->id, p.cli);
	assert_int_equal(ev->param.conn.private_data_len, 18);
	assert_string_equal((const char *)ev->param.conn.private_data, spd);
	rdma_ack_cm_event(ev);
	ev = t_expect(p.sch, RDMA_CM_EVENT_ESTABLISHED);
	assert_non_null(ev);
	assert_ptr_equal(ev->id, p.child);
	rdma_ack_cm_event(ev);
	/* addresses and ports agree across the connection */
	assert_int_equal(rdma_get_dst_port(p.cli), htons(p.port));
	assert_int_equal(rdma_get_src_port(p.child), htons(p.port));
	assert_int_equal(rdma_get_dst_port(p.child), rdma_get_src_port(p.cli));
	assert_int_equal(rdma_get_peer_addr(p.child)->sa_family, AF_INET);
	/* the client disconnects: both sides see DISCONNECTED */
	assert_int_equal(rdma_disconnect(p.cli), 0);
	assert_int_equal(t_expect_ack(p.cch, RDMA_CM_EVENT_DISCONNECTED), 0);
	assert_int_equal(t_expect_ack(p.sch, RDMA_CM_EVENT_DISCONNECTED), 0);
	assert_int_equal(rdma_disconnect(p.child), 0); /* closed already: nothing more */
	assert_int_equal(rdma_disconnect(p.cli), 0);
	assert_true(t_quiet(p.cch, 100));
	assert_true(t_quiet(p.sch, 0));
	teardown_pair(&p);
}

static void test_server_disconnects_first(void **state)
{
	struct pair p = { 0 };

	(void)state;
	listen_on(&p);
	connect_to(&p, p.port, NULL);
	take_request(&p, NULL);
	assert_int_equal(rdma_accept(p.child, NULL), 0);
	assert_int_equal(t_expect_ack(p.cch, RDMA_CM_EVENT_ESTABLISHED), 0);
	assert_int_equal(t_expect_ack(p.sch, RDMA_CM_EVENT_ESTABLISHED), 0);
	assert_int_equal(rdma_disconnect(p.child), 0);
	assert_int_equal(t_expect_ack(p.sch, RDMA_CM_EVENT_DISCONNECTED), 0);
	assert_int_equal(t_expect_ack(p.cch, RDMA_CM_EVENT_DISCONNECTED), 0);
	teardown_pair(&p);
}

static void test_reject_with_private_data(void **state)
{
	struct pair p = { 0 };
	const char *why = "server is full";

	(void)state;
	listen_on(&p);
	connect_to(&p, p.port, "may I?");
	take_request(&p, "may I?");
	assert_int_equal(rdma_reject(p.child, why, (uint8_t)(strlen(why) + 1)), 0);
	assert_int_equal(rdma_accept(p.child, NULL), -1); /* decided already */
	struct rdma_cm_event *ev = t_expect(p.cch, RDMA_CM_EVENT_REJECTED);
	assert_non_null(ev);
	assert_int_equal(ev->status, -ECONNREFUSED);
	assert_int_equal(ev->param.conn.private_data_len, strlen(why) + 1);
	assert_string_equal((const char *)ev->param.conn.private_data, why);
	rdma_ack_cm_event(ev);
	assert_true(t_quiet(p.sch, 200)); /* the rejecting side gets no event */
	teardown_pair(&p);
}

static void test_no_listener(void **state)
{
	struct pair p = { 0 };

	(void)state;
	listen_on(&p);
	uint16_t port = p.port;
	assert_int_equal(rdma_destroy_id(p.lis), 0); /* nothing listens there any more */
	assert_int_equal(rdma_create_id(p.sch, &p.lis, NULL, RDMA_PS_TCP), 0);
	connect_to(&p, port, NULL);
	struct rdma_cm_event *ev = t_expect(p.cch, RDMA_CM_EVENT_REJECTED);
	assert_non_null(ev);
	assert_int_equal(ev->status, -ECONNREFUSED); /* what iw_cm reports for a TCP RST */
	assert_int_equal(ev->param.conn.private_data_len, 0);
	rdma_ack_cm_event(ev);
	teardown_pair(&p);
}

static void test_listener_destroyed_with_request(void **state)
{
	struct pair p = { 0 };

	(void)state;
	listen_on(&p);
	connect_to(&p, p.port, NULL);
	/* the request is queued, never taken: destroying the listener drops it and the child;
	 * the client's connection fails */
	assert_false(t_quiet(p.sch, T_WAIT_MS));
	assert_int_equal(rdma_destroy_id(p.lis), 0);
	assert_true(t_quiet(p.sch, 0));
	struct rdma_cm_event *ev = t_next_event(p.cch, T_WAIT_MS);
	assert_non_null(ev);
	assert_true(ev->event == RDMA_CM_EVENT_REJECTED ||
		    ev->event == RDMA_CM_EVENT_CONNECT_ERROR);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_create_id(p.sch, &p.lis, NULL, RDMA_PS_TCP), 0);
	teardown_pair(&p);
}

/* More silent TCP connections than a listener keeps before their MPA Request (256: the
 * oldest go first), none of which may count against the application's backlog. */
#define SILENT_SOCKETS 300

static int silent_connect(uint16_t port)
{
	struct sockaddr_in a = t_addr4("127.0.0.1", port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* How many of fds the server has closed (end of stream or reset), waiting up to ms. */
static int silent_closed(const int *fds, int n, int want, int ms)
{
	int closed = 0;

	for (int waited = 0; waited <= ms; waited += 20) {
		closed = 0;
		for (int i = 0; i < n; i++) {
			char b;
			ssize_t r = recv(fds[i], &b, 1, MSG_DONTWAIT | MSG_PEEK);
			closed += r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
		}
		if (closed >= want)
			break;
		usleep(20000);
	}
	return closed;
}

/* An attacker's silent connections neither fill the backlog nor shut out real clients: with
 * backlog 1 and 300 connections that never send an MPA Request, a client still gets through;
 * a second one while the first request is unanswered is rejected (the backlog is the
 * application's requests); the listener dropped the oldest silent ones past its bound. */
static void test_silent_connections(void **state)
{
	struct pair p = { 0 };
	int fds[SILENT_SOCKETS];

	(void)state;
	listen_backlog(&p, 1);
	for (int i = 0; i < SILENT_SOCKETS; i++) {
		fds[i] = silent_connect(p.port);
		assert_true(fds[i] >= 0);
	}
	connect_to(&p, p.port, "a real client");
	take_request(&p, "a real client");
	struct pair q = p;
	q.cli = NULL;
	connect_to(&q, p.port, "one too many");
	struct rdma_cm_event *ev = t_expect(p.cch, RDMA_CM_EVENT_REJECTED);
	assert_non_null(ev);
	assert_ptr_equal(ev->id, q.cli);
	assert_int_equal(ev->status, -ECONNREFUSED);
	rdma_ack_cm_event(ev);
	assert_int_equal(rdma_accept(p.child, NULL), 0);
	assert_int_equal(t_expect_ack(p.cch, RDMA_CM_EVENT_ESTABLISHED), 0);
	assert_int_equal(t_expect_ack(p.sch, RDMA_CM_EVENT_ESTABLISHED), 0);
	int want = SILENT_SOCKETS - 256;
	assert_true(silent_closed(fds, SILENT_SOCKETS, want, T_WAIT_MS) >= want);
	for (int i = 0; i < SILENT_SOCKETS; i++)
		close(fds[i]);
	assert_int_equal(rdma_destroy_id(q.cli), 0);
	teardown_pair(&p);
}

/* SOFTRNIC_KEEPALIVE (kernel sockets): a bad value fails the bind that opens the transport
 * with EINVAL; good ones and off are taken. The default is set back at the end. */
static void test_keepalive_env(void **state)
{
	static const char *const bad[] = { "bad", "0,1,5", "5,0,5", "5,1,0", "5,1,101",
					   "99999,1,5", "5,1,5x", "5,1", "-1,1,5", "on" };
	static const char *const good[] = { "off", "3,1,2", "86400,3600,100", "5,1,5" };
	struct sockaddr_in any = t_addr4("127.0.0.1", 0);
	struct rdma_cm_id *id;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("SOFTRNIC_KEEPALIVE", bad[i], 1);
		assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
		errno = 0;
		if (rdma_bind_addr(id, (struct sockaddr *)&any) != -1 || errno != EINVAL)
			fail_msg("SOFTRNIC_KEEPALIVE=%s taken (errno %d)", bad[i], errno);
		assert_int_equal(rdma_destroy_id(id), 0);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		setenv("SOFTRNIC_KEEPALIVE", good[i], 1);
		assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
		if (rdma_bind_addr(id, (struct sockaddr *)&any) != 0)
			fail_msg("SOFTRNIC_KEEPALIVE=%s refused (errno %d)", good[i], errno);
		assert_int_equal(rdma_destroy_id(id), 0);
	}
	unsetenv("SOFTRNIC_KEEPALIVE");
}

static void test_migrate(void **state)
{
	struct rdma_event_channel *a = rdma_create_event_channel(), *b = rdma_create_event_channel();
	struct rdma_cm_id *id;
	struct sockaddr_in dst = t_addr4("127.0.0.1", 7174);

	(void)state;
	assert_int_equal(rdma_create_id(a, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_false(t_quiet(a, T_WAIT_MS));
	assert_int_equal(rdma_migrate_id(id, b), 0); /* the queued event moves along */
	assert_ptr_equal(id->channel, b);
	assert_true(t_quiet(a, 0));
	assert_int_equal(t_expect_ack(b, RDMA_CM_EVENT_ADDR_RESOLVED), 0);
	assert_int_equal(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(a);
	rdma_destroy_event_channel(b);
}

/* ---- synchronous ids: rdma_getaddrinfo / rdma_create_ep / rdma_get_request ------------- */

struct ep_srv {
	struct rdma_cm_id *lis;
	char got[64];
	int rc;
};

static void *ep_server(void *arg)
{
	struct ep_srv *s = arg;
	struct rdma_cm_id *id;
	const char *pd = "ep-accept";
	struct rdma_conn_param cp = { .private_data = pd, .private_data_len = 10 };

	s->rc = -1;
	if (rdma_get_request(s->lis, &id) != 0)
		return NULL;
	if (id->event != NULL && id->event->param.conn.private_data_len > 0)
		memcpy(s->got, id->event->param.conn.private_data,
		       id->event->param.conn.private_data_len);
	if (rdma_accept(id, &cp) == 0) /* synchronous: returns once ESTABLISHED */
		s->rc = 0;
	struct rdma_cm_event *ev;
	if (s->rc == 0 && rdma_get_cm_event(id->channel, &ev) == 0) { /* peer's disconnect */
		s->rc = ev->event == RDMA_CM_EVENT_DISCONNECTED ? 0 : -2;
		rdma_ack_cm_event(ev);
	}
	rdma_disconnect(id);
	rdma_destroy_ep(id);
	return NULL;
}

static void test_sync_endpoints(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res;
	struct ep_srv s = { 0 };
	pthread_t thr;
	char port[8];

	(void)state;
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "0", &hints, &res), 0);
	assert_non_null(res->ai_src_addr);
	assert_null(res->ai_dst_addr);
	assert_int_equal(rdma_create_ep(&s.lis, res, NULL, NULL), 0);
	rdma_freeaddrinfo(res);
	assert_int_equal(rdma_listen(s.lis, 4), 0);
	snprintf(port, sizeof(port), "%u", ntohs(rdma_get_src_port(s.lis)));
	assert_int_equal(pthread_create(&thr, NULL, ep_server, &s), 0);

	struct rdma_cm_id *cli;
	struct rdma_addrinfo chints = { .ai_port_space = RDMA_PS_TCP };
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", port, &chints, &res), 0);
	assert_non_null(res->ai_dst_addr);
	assert_int_equal(rdma_create_ep(&cli, res, NULL, NULL), 0);
	rdma_freeaddrinfo(res);
	assert_non_null(cli->verbs);
	const char *pd = "ep-connect";
	struct rdma_conn_param cp = { .private_data = pd, .private_data_len = 11 };
	assert_int_equal(rdma_connect(cli, &cp), 0); /* synchronous: ESTABLISHED */
	assert_int_equal(rdma_disconnect(cli), 0);
	pthread_join(thr, NULL);
	assert_int_equal(s.rc, 0);
	assert_string_equal(s.got, "ep-connect");
	rdma_destroy_ep(cli);
	rdma_destroy_ep(s.lis);
	/* a name that does not resolve: the getaddrinfo code, as librdmacm returns it */
	struct rdma_addrinfo nh = { .ai_flags = RAI_NUMERICHOST };
	assert_int_not_equal(rdma_getaddrinfo("not-an-address", "1", &nh, &res), 0);
}

static void test_sync_connect_refused(void **state)
{
	struct rdma_cm_id *lis, *cli;
	struct sockaddr_in a = t_addr4("127.0.0.1", 0);
	struct rdma_conn_param cp = { 0 };

	(void)state;
	assert_int_equal(rdma_create_id(NULL, &lis, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(lis, (struct sockaddr *)&a), 0);
	assert_int_equal(rdma_listen(lis, 1), 0);
	struct sockaddr_in dst = t_addr4("127.0.0.1", ntohs(rdma_get_src_port(lis)));
	assert_int_equal(rdma_destroy_id(lis), 0);
	assert_int_equal(rdma_create_id(NULL, &cli, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(cli, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_int_equal(rdma_resolve_route(cli, 1000), 0);
	assert_int_equal(rdma_connect(cli, &cp), -1);
	assert_int_equal(errno, ECONNREFUSED);
	assert_int_equal(rdma_destroy_id(cli), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_str),
		cmocka_unit_test(test_channel_fd),
		cmocka_unit_test(test_many_pending_events),
		cmocka_unit_test(test_id_lifecycle),
		cmocka_unit_test(test_resolve_loopback),
		cmocka_unit_test(test_resolve_sync),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_connect_accept_disconnect),
		cmocka_unit_test(test_server_disconnects_first),
		cmocka_unit_test(test_reject_with_private_data),
		cmocka_unit_test(test_no_listener),
		cmocka_unit_test(test_listener_destroyed_with_request),
		cmocka_unit_test(test_silent_connections),
		cmocka_unit_test(test_keepalive_env),
		cmocka_unit_test(test_migrate),
		cmocka_unit_test(test_sync_endpoints),
		cmocka_unit_test(test_sync_connect_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
