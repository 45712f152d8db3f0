/* Data through connections made by librdmacm, public APIs only: an rping-like exchange (Send
 * of {buf, rkey, len}, RDMA Read, RDMA Write, Send) between two threads, and the
 * rdma_server / rdma_client pattern (rdma_getaddrinfo, rdma_create_ep with QP attributes,
 * rdma_get_request, rdma_reg_msgs, rdma_post_recv / rdma_post_send, rdma_get_recv_comp /
 * rdma_get_send_comp from <rdma/rdma_verbs.h>). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "rping_core.h"

struct srv {
	struct rdma_event_channel *ch;
	int count, rc;
};

static void *server_main(void *arg)
{
	struct srv *s = arg;
	s->rc = rp_server(s->ch, s->count);
	return NULL;
}

static void run_rping(int count)
{
	struct srv s = { .count = count, .rc = -1 };
	struct rdma_cm_id *lis;
	uint16_t port = 0;
	pthread_t thr;

	s.ch = rdma_create_event_channel();
	assert_non_null(s.ch);
	assert_int_equal(rp_listen(s.ch, &lis, "127.0.0.1", 0, &port), 0);
	assert_int_equal(pthread_create(&thr, NULL, server_main, &s), 0);
	int crc = rp_client("127.0.0.1", port, count);
	pthread_join(thr, NULL);
	assert_int_equal(crc, 0);
	assert_int_equal(s.rc, 0);
	assert_int_equal(rdma_destroy_id(lis), 0);
	rdma_destroy_event_channel(s.ch);
}

static void test_rping_once(void **state)
{
	(void)state;
	run_rping(1);
}

static void test_rping_loop(void **state)
{
	(void)state;
	run_rping(20);
}

/* ---- rdma_server / rdma_client ------------------------------------------------------------ */

#define EP_MSG 16

/* The completion channels in non-blocking mode (O_NONBLOCK on their fds, as an application
 * may set them): the helpers then return -1 / EAGAIN until a completion is there, which a
 * bounded loop retries. */
static void nonblocking_channels(struct rdma_cm_id *id)
{
	fcntl(id->send_cq_channel->fd, F_SETFL, fcntl(id->send_cq_channel->fd, F_GETFL) | O_NONBLOCK);
	fcntl(id->recv_cq_channel->fd, F_SETFL, fcntl(id->recv_cq_channel->fd, F_GETFL) | O_NONBLOCK);
}

static int get_comp(struct rdma_cm_id *id, struct ibv_wc *wc, int send)
{
	long long end = t_now_ms() + RP_WAIT_MS;
	int rc;

	do {
		rc = send ? rdma_get_send_comp(id, wc) : rdma_get_recv_comp(id, wc);
		if (rc < 0 && errno == EAGAIN) {
			struct pollfd p = { send ? id->send_cq_channel->fd : id->recv_cq_channel->fd,
					    POLLIN, 0 };
			poll(&p, 1, 10);
		}
	} while (rc < 0 && errno == EAGAIN && t_now_ms() < end);
	return rc;
}

struct ep_srv {
	struct rdma_cm_id *lis;
	uint8_t recv[EP_MSG];
	int rc;
};

static void *ep_server(void *arg)
{
	struct ep_srv *s = arg;
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	uint8_t send[EP_MSG];
	struct ibv_mr *rmr = NULL, *smr = NULL;

	s->rc = -1;
	if (rdma_get_request(s->lis, &id) != 0)
		return NULL;
	/* rdma_create_ep stored the QP attributes: the request came with its QP */
	if (id->qp == NULL || id->pd == NULL || id->send_cq == NULL || id->recv_cq == NULL ||
	    id->send_cq_channel == NULL || id->recv_cq_channel == NULL)
		goto out;
	nonblocking_channels(id);
	rmr = rdma_reg_msgs(id, s->recv, EP_MSG);
	smr = rdma_reg_msgs(id, send, EP_MSG);
	if (rmr == NULL || smr == NULL || rdma_post_recv(id, NULL, s->recv, EP_MSG, rmr))
		goto out;
	if (rdma_accept(id, NULL))
		goto out;
	if (get_comp(id, &wc, 0) <= 0 || wc.status != IBV_WC_SUCCESS)
		goto out;
	for (int i = 0; i < EP_MSG; i++)
		send[i] = (uint8_t)(s->recv[i] + 1);
	if (rdma_post_send(id, NULL, send, EP_MSG, smr, IBV_SEND_SIGNALED))
		goto out;
	if (get_comp(id, &wc, 1) <= 0 || wc.status != IBV_WC_SUCCESS)
		goto out;
	s->rc = 0;
out:
	rdma_disconnect(id);
	if (rmr)
		rdma_dereg_mr(rmr);
	if (smr)
		rdma_dereg_mr(smr);
	rdma_destroy_ep(id);
	return NULL;
}

static void test_endpoint_helpers(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res;
	struct ibv_qp_init_attr attr = { .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						  .max_send_sge = 1, .max_recv_sge = 1 },
					 .qp_type = IBV_QPT_RC, .sq_sig_all = 0 };
	struct ep_srv s = { 0 };
	pthread_t thr;
	char port[8];

	(void)state;
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", "0", &hints, &res), 0);
	assert_int_equal(rdma_create_ep(&s.lis, res, NULL, &attr), 0);
	rdma_freeaddrinfo(res);
	assert_int_equal(rdma_listen(s.lis, 2), 0);
	snprintf(port, sizeof(port), "%u", ntohs(rdma_get_src_port(s.lis)));
	assert_int_equal(pthread_create(&thr, NULL, ep_server, &s), 0);

	struct rdma_cm_id *id;
	struct rdma_addrinfo chints = { .ai_port_space = RDMA_PS_TCP };
	uint8_t msg[EP_MSG], reply[EP_MSG];
	struct ibv_wc wc;
	assert_int_equal(rdma_getaddrinfo("127.0.0.1", port, &chints, &res), 0);
	assert_int_equal(rdma_create_ep(&id, res, NULL, &attr), 0);
	rdma_freeaddrinfo(res);
	assert_non_null(id->qp);
	assert_non_null(id->send_cq_channel);
	nonblocking_channels(id);
	struct ibv_mr *smr = rdma_reg_msgs(id, msg, EP_MSG);
	struct ibv_mr *rmr = rdma_reg_msgs(id, reply, EP_MSG);
	assert_non_null(smr);
	assert_non_null(rmr);
	assert_int_equal(rdma_post_recv(id, NULL, reply, EP_MSG, rmr), 0);
	assert_int_equal(rdma_connect(id, NULL), 0);
	for (int i = 0; i < EP_MSG; i++)
		msg[i] = (uint8_t)(i * 3);
	assert_int_equal(rdma_post_send(id, NULL, msg, EP_MSG, smr, IBV_SEND_SIGNALED), 0);
	assert_int_equal(get_comp(id, &wc, 1), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(get_comp(id, &wc, 0), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, EP_MSG);
	for (int i = 0; i < EP_MSG; i++)
		assert_int_equal(reply[i], (uint8_t)(i * 3 + 1));
	pthread_join(thr, NULL);
	assert_int_equal(s.rc, 0);
	rdma_disconnect(id);
	rdma_dereg_mr(smr);
	rdma_dereg_mr(rmr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(s.lis);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rping_once),
		cmocka_unit_test(test_rping_loop),
		cmocka_unit_test(test_endpoint_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
