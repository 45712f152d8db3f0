/* librdmacm calls as rdma-core 44 (Debian 12) answers them for the programs that use them:
 * rdma_getaddrinfo from hints only (libfabric's verbs provider), the port assigned at bind
 * (qperf), the device's default PD on a bound id (rdma_reg_msgs), XRC endpoints failing at
 * QP creation (rdma_xserver / rdma_xclient -c x). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "rcm_test_util.h"

/* ---- rdma_getaddrinfo(NULL, NULL, hints): the result is made from the hints ------------ */

static void test_getaddrinfo_from_hints(void **state)
{
	struct sockaddr_in src = t_addr4("127.0.0.1", 7301), dst = t_addr4("127.0.0.1", 7302);
	struct rdma_addrinfo *res = NULL;

	(void)state;
	/* no node, no service, no hints: EINVAL */
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	assert_int_equal(errno, EINVAL);

	/* active: both addresses from the hints, flags / family / QP type / port space too */
	struct rdma_addrinfo h = { .ai_family = AF_INET, .ai_qp_type = IBV_QPT_RC,
				   .ai_port_space = RDMA_PS_TCP,
				   .ai_src_len = sizeof(src), .ai_src_addr = (struct sockaddr *)&src,
				   .ai_dst_len = sizeof(dst), .ai_dst_addr = (struct sockaddr *)&dst };
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &h, &res), 0);
	assert_non_null(res);
	assert_int_equal(res->ai_flags, 0);
	assert_int_equal(res->ai_family, AF_INET);
	assert_int_equal(res->ai_qp_type, IBV_QPT_RC);
	assert_int_equal(res->ai_port_space, RDMA_PS_TCP);
	assert_int_equal(res->ai_src_len, sizeof(src));
	assert_int_equal(res->ai_dst_len, sizeof(dst));
	assert_ptr_not_equal(res->ai_src_addr, &src); /* copies, freed by rdma_freeaddrinfo */
	assert_memory_equal(res->ai_src_addr, &src, sizeof(src));
	assert_memory_equal(res->ai_dst_addr, &dst, sizeof(dst));
	assert_null(res->ai_next);
	rdma_freeaddrinfo(res);

	/* passive with a source only: usable by rdma_create_ep to bind and listen */
	struct sockaddr_in any = t_addr4("127.0.0.1", 0);
	struct rdma_addrinfo ph = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP,
				    .ai_src_len = sizeof(any),
				    .ai_src_addr = (struct sockaddr *)&any };
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &ph, &res), 0);
	assert_int_equal(res->ai_flags, RAI_PASSIVE);
	assert_int_equal(res->ai_family, 0);          /* the hints' (rdma-core copies it) */
	assert_null(res->ai_dst_addr);
	assert_int_equal(res->ai_dst_len, 0);
	assert_memory_equal(res->ai_src_addr, &any, sizeof(any));
	struct rdma_cm_id *lis;
	assert_int_equal(rdma_create_ep(&lis, res, NULL, NULL), 0);
	rdma_freeaddrinfo(res);
	assert_int_equal(rdma_listen(lis, 1), 0);
	assert_int_not_equal(rdma_get_src_port(lis), 0);
	rdma_destroy_ep(lis);

	/* hints with neither address: an empty result */
	struct rdma_addrinfo eh = { .ai_port_space = RDMA_PS_TCP };
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, &eh, &res), 0);
	assert_null(res->ai_src_addr);
	assert_null(res->ai_dst_addr);
	rdma_freeaddrinfo(res);

	/* a node (active) takes the hints' source when it has none of its own */
	struct rdma_addrinfo nh = { .ai_port_space = RDMA_PS_TCP, .ai_src_len = sizeof(src),
				    .ai_src_addr = (struct sockaddr *)&src };
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "7302", &nh, &res), 0);
	assert_non_null(res->ai_dst_addr);
	assert_memory_equal(res->ai_src_addr, &src, sizeof(src));
	assert_int_equal(res->ai_qp_type, IBV_QPT_RC);
	assert_int_equal(res->ai_port_space, RDMA_PS_TCP);
	rdma_freeaddrinfo(res);

	/* a service only, passive: the wildcard source with that port */
	struct rdma_addrinfo sh = { .ai_flags = RAI_PASSIVE, .ai_family = AF_INET };
	assert_int_equal(rdma_getaddrinfo(NULL, "7303", &sh, &res), 0);
	assert_int_equal(res->ai_flags, RAI_PASSIVE);
	assert_non_null(res->ai_src_addr);
	assert_null(res->ai_dst_addr);
	assert_int_equal(ntohs(((struct sockaddr_in *)res->ai_src_addr)->sin_port), 7303);
	rdma_freeaddrinfo(res);
}

/* ---- rdma_bind_addr with port 0: the port is assigned and held at bind ---------------- */

/* 0 when a kernel socket can bind addr (SO_REUSEADDR off), else errno. */
static int kernel_bind(const struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int rc = bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 ? 0 : errno;

	close(fd);
	return rc;
}

static void test_bind_assigns_port(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lis, *other, *cli;
	struct sockaddr_in a = t_addr4("127.0.0.1", 0);

	(void)state;
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &lis, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(lis, (struct sockaddr *)&a), 0);
	/* qperf: the port is known right after bind, before rdma_listen */
	uint16_t port = ntohs(rdma_get_src_port(lis));
	assert_int_not_equal(port, 0);
	assert_int_equal(ntohs(((struct sockaddr_in *)rdma_get_local_addr(lis))->sin_port), port);
	/* and it is held: neither another id nor a kernel socket can take it */
	struct sockaddr_in same = t_addr4("127.0.0.1", port);
	assert_int_equal(kernel_bind(&same), EADDRINUSE);
	assert_int_equal(rdma_create_id(ch, &other, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(other, (struct sockaddr *)&same), -1);
	assert_int_equal(errno, EADDRINUSE);
	assert_int_equal(rdma_destroy_id(other), 0);
	/* rdma_listen listens on that port */
	assert_int_equal(rdma_listen(lis, 4), 0);
	assert_int_equal(ntohs(rdma_get_src_port(lis)), port);
	assert_int_equal(rdma_create_id(ch, &cli, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(cli, NULL, (struct sockaddr *)&same, 1000), 0);
	assert_int_equal(t_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED), 0);
	assert_int_equal(rdma_resolve_route(cli, 1000), 0);
	assert_int_equal(t_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED), 0);
	assert_int_equal(rdma_connect(cli, NULL), 0);
	struct rdma_cm_event *ev = t_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	assert_non_null(ev);
	assert_ptr_equal(ev->listen_id, lis);
	struct rdma_cm_id *child = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_reject(child, NULL, 0), 0);
	assert_int_equal(t_expect_ack(ch, RDMA_CM_EVENT_REJECTED), 0);
	assert_int_equal(rdma_destroy_id(cli), 0);
	assert_int_equal(rdma_destroy_id(child), 0);
	assert_int_equal(rdma_destroy_id(lis), 0);
	/* destroyed before listen: the port is free again */
	assert_int_equal(rdma_create_id(ch, &lis, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(lis, (struct sockaddr *)&a), 0);
	same = t_addr4("127.0.0.1", ntohs(rdma_get_src_port(lis)));
	assert_int_equal(rdma_destroy_id(lis), 0);
	assert_int_equal(kernel_bind(&same), 0);
	rdma_destroy_event_channel(ch);
}

/* ---- a bound id carries its device's default PD (rdma_reg_msgs(id, ...) works) ------- */

/* An IPv4 address of an interface of this host other than loopback, port 0 (bound locally
 * only: nothing is sent). false when the host has none. */
static bool iface_ipv4(struct sockaddr_in *out)
{
	struct ifaddrs *ifa = NULL;
	bool found = false;

	if (getifaddrs(&ifa) != 0)
		return false;
	for (struct ifaddrs *i = ifa; i != NULL && !found; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP))
			continue;
		*out = *(struct sockaddr_in *)(void *)i->ifa_addr;
		out->sin_port = 0;
		found = true;
	}
	freeifaddrs(ifa);
	return found;
}

static void test_bound_id_default_pd(void **state)
{
	struct rdma_cm_id *id, *any, *lis;
	struct rdma_addrinfo *res;
	char buf[64];

	(void)state;
	/* rdma_create_ep with no PD and no QP attributes (rdma_client style) */
	struct rdma_addrinfo h = { .ai_port_space = RDMA_PS_TCP };
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "7311", &h, &res), 0);
	assert_int_equal(rdma_create_ep(&id, res, NULL, NULL), 0);
	rdma_freeaddrinfo(res);
	assert_non_null(id->verbs);
	assert_non_null(id->pd);
	assert_ptr_equal(id->pd->context, id->verbs);
	struct ibv_mr *mr = rdma_reg_msgs(id, buf, sizeof(buf));
	assert_non_null(mr);
	assert_int_equal(rdma_dereg_mr(mr), 0);
	struct ibv_pd *dflt = id->pd;
	rdma_destroy_ep(id);

	/* bound to an interface's address: the device and its default PD (the same one every
	 * time); loopback, like the wildcard, binds to no device (test_loopback_bind) */
	struct sockaddr_in ifa, wild = t_addr4("0.0.0.0", 0);
	bool have_ifa = iface_ipv4(&ifa);
	if (have_ifa) {
		assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
		assert_null(id->pd);
		assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&ifa), 0);
		assert_ptr_equal(id->pd, dflt);
		assert_int_equal(rdma_destroy_id(id), 0);
	} else {
		print_message("no interface address besides loopback: bind check left out\n");
	}
	/* the wildcard binds to no device: no PD, as in librdmacm */
	assert_int_equal(rdma_create_id(NULL, &any, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(any, (struct sockaddr *)&wild), 0);
	assert_null(any->verbs);
	assert_null(any->pd);
	assert_int_equal(rdma_destroy_id(any), 0);
	/* rdma_resolve_addr gives it too */
	struct sockaddr_in dst = t_addr4("127.0.0.1", 7312);
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_ptr_equal(id->pd, dflt);
	assert_int_equal(rdma_destroy_id(id), 0);
	/* a passive endpoint with no PD on an interface's address keeps the default */
	if (have_ifa) {
		char host[INET_ADDRSTRLEN];
		struct rdma_addrinfo ph = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
		assert_non_null(inet_ntop(AF_INET, &ifa.sin_addr, host, sizeof(host)));
		assert_int_equal(rdma_getaddrinfo(host, "0", &ph, &res), 0);
		assert_int_equal(rdma_create_ep(&lis, res, NULL, NULL), 0);
		rdma_freeaddrinfo(res);
		assert_ptr_equal(lis->pd, dflt);
		rdma_destroy_ep(lis);
	}
}

/* libfabric's verbs provider binds an id to learn which device serves an address, and
 * publishes the bound address of an id that has a device as the endpoint's address: a
 * device behind 127.0.0.1 made every rank of an MPI job across two hosts tell its peers to
 * connect to 127.0.0.1. As on Linux, where no RNIC sits on lo, a loopback bind gives no
 * device; a connection over loopback still gets one (resolve, connection request). */
static void test_loopback_bind(void **state)
{
	struct rdma_cm_id *id;
	struct sockaddr_in lo = t_addr4("127.0.0.1", 0), dst = t_addr4("127.0.0.1", 7313);

	(void)state;
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_bind_addr(id, (struct sockaddr *)&lo), 0);
	assert_null(id->verbs);
	assert_null(id->pd);
	assert_true(rdma_get_src_port(id) != 0); /* bound all the same */
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_non_null(id->verbs);
	assert_non_null(id->pd);
	assert_int_equal(rdma_destroy_id(id), 0);
}

/* ---- XRC endpoints (rdma_xserver / rdma_xclient -c x) fail where they fail on siw ------ */

/* librdmacm takes any port space and QP type in the hints; on Linux siw the endpoint fails
 * at QP creation (siw_create_qp: only RC, EOPNOTSUPP). The passive side binds and listens
 * and fails when a request asks for its XRC receive QP; the requester is rejected. */
static void test_xrc_endpoints(void **state)
{
	struct rdma_addrinfo *res;
	struct rdma_cm_id *id, *lis, *req = NULL;

	(void)state;
	struct rdma_addrinfo xh = { .ai_port_space = RDMA_PS_IB, .ai_qp_type = IBV_QPT_XRC_SEND };
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "7321", &xh, &res), 0);
	assert_int_equal(res->ai_port_space, RDMA_PS_IB);
	assert_int_equal(res->ai_qp_type, IBV_QPT_XRC_SEND);
	assert_non_null(res->ai_dst_addr);
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 1, .max_send_sge = 1 },
				       .sq_sig_all = 1 };
	errno = 0;
	assert_int_equal(rdma_create_ep(&id, res, NULL, &qa), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	rdma_freeaddrinfo(res);

	struct rdma_addrinfo ph = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_IB,
				    .ai_qp_type = IBV_QPT_XRC_RECV };
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "0", &ph, &res), 0);
	assert_int_equal(res->ai_qp_type, IBV_QPT_XRC_RECV);
	struct ibv_qp_init_attr ra = { .cap = { .max_recv_wr = 1, .max_recv_sge = 1 } };
	assert_int_equal(rdma_create_ep(&lis, res, NULL, &ra), 0);
	rdma_freeaddrinfo(res);
	assert_int_equal(rdma_listen(lis, 1), 0);

	/* an RC requester (rdma_xclient -c r) */
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *cli;
	struct sockaddr_in dst = t_addr4("127.0.0.1", ntohs(rdma_get_src_port(lis)));
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &cli, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(cli, NULL, (struct sockaddr *)&dst, 1000), 0);
	assert_int_equal(t_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED), 0);
	assert_int_equal(rdma_resolve_route(cli, 1000), 0);
	assert_int_equal(t_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED), 0);
	struct ibv_qp_init_attr ca = { .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };
	assert_int_equal(rdma_create_qp(cli, NULL, &ca), 0);
	struct rdma_conn_param cp = { .initiator_depth = 1, .responder_resources = 1 };
	assert_int_equal(rdma_connect(cli, &cp), 0);
	errno = 0;
	assert_int_equal(rdma_get_request(lis, &req), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	assert_null(req);
	struct rdma_cm_event *ev = t_expect(ch, RDMA_CM_EVENT_REJECTED);
	assert_non_null(ev);
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(cli);
	assert_int_equal(rdma_destroy_id(cli), 0);
	rdma_destroy_event_channel(ch);
	rdma_destroy_ep(lis);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getaddrinfo_from_hints),
		cmocka_unit_test(test_bind_assigns_port),
		cmocka_unit_test(test_bound_id_default_pd),
		cmocka_unit_test(test_loopback_bind),
		cmocka_unit_test(test_xrc_endpoints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
