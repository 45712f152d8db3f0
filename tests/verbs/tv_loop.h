/* Two QPs of this process connected to each other over loopback: the MPA exchange of rn_cm,
 * both ends driven from the calling thread, then each ESTABLISHED stream handed to its QP
 * (softrnic_qp_connect), as our librdmacm does. Shared by the verbs tests that need a
 * connected pair. */
#ifndef TV_LOOP_H
#define TV_LOOP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "tv_util.h"
#include "rnic.h"
#include "rn_transport.h"
#include "verbs_int.h"

#define TV_LOOP_WAIT_MS 5000

static inline long long tv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void tv_connect_qps(struct ibv_qp *qa, struct ibv_qp *qb)
{
	const struct rn_transport *t = rn_sock_transport();
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct rn_conn *lis, *c = NULL;
	struct rn_cm *acm, *pcm = NULL;
	struct rn_cm_handoff ha, hb;
	struct rn_cm_cfg cfg;
	long long end = tv_now_ms() + TV_LOOP_WAIT_MS;

	rn_cm_cfg_default(&cfg);
	assert_int_equal(rn_tp_listen(t, (struct sockaddr *)&la, sizeof(la), 4, &lis), 0);
	assert_int_equal(rn_conn_local_addr(lis, (struct sockaddr *)&ss, &len), 0);
	la.sin_port = ((struct sockaddr_in *)&ss)->sin_port;
	assert_int_equal(rn_cm_connect(t, (struct sockaddr *)&la, sizeof(la), &cfg, "hi", 2, &acm),
			 0);
	while (tv_now_ms() < end) {
		if (!pcm && rn_conn_accept(lis, &c) == 0)
			assert_int_equal(rn_cm_passive(c, &cfg, &pcm), 0);
		rn_cm_progress(acm);
		if (pcm && rn_cm_progress(pcm) == RN_CM_WAIT_ACCEPT)
			assert_int_equal(rn_cm_accept(pcm, NULL, 0), 0);
		if (pcm && rn_cm_state(acm) == RN_CM_ESTABLISHED &&
		    rn_cm_state(pcm) == RN_CM_ESTABLISHED)
			break;
		usleep(500);
	}
	assert_int_equal(rn_cm_state(acm), RN_CM_ESTABLISHED);
	assert_int_equal(rn_cm_state(pcm), RN_CM_ESTABLISHED);
	assert_int_equal(rn_cm_handoff(acm, &ha), 0);
	assert_int_equal(rn_cm_handoff(pcm, &hb), 0);
	assert_int_equal(softrnic_qp_connect(qa, &ha), 0);
	assert_int_equal(softrnic_qp_connect(qb, &hb), 0);
	assert_null(ha.conn);
	assert_int_equal(softrnic_qp_connect(qa, &hb), EINVAL);   /* no conn, not Idle */
	rn_cm_destroy(acm);
	rn_cm_destroy(pcm);
	rn_conn_close(lis);
}

#endif
