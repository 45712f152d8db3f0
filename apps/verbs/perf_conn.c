/* perf_conn: connection, parameter exchange, completion accounting and the closing
 * handshake of the perf engine; perf_run() ties them to the tests in perf_lat.c / perf_bw.c.
 * Several QPs (perf_params.qps) are several connections to one port, set up one after the
 * other, each with its own parameter exchange and closing handshake. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf_int.h"

#define BIT(k) (1u << (k))
#define ANY_RECV (BIT(K_CTL_RECV) | BIT(K_DATA_RECV))
#define REGION(sz) (((size_t)(sz) + 63) & ~(size_t)63)

static int account(struct perf_sess *s, const struct ibv_wc *wc)
{
	unsigned kind = WR_KIND(wc->wr_id);
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "softrnic-perf: completion error: %s (kind %u, seq %llu, vendor 0x%x)\n",
		        ibv_wc_status_str(wc->status), kind,
		        (unsigned long long)WR_SEQ(wc->wr_id), wc->vendor_err);
		return -1;
	}
	if (kind == 0 || kind >= K_COUNT) {
		fprintf(stderr, "softrnic-perf: completion with unknown wr_id 0x%llx\n",
		        (unsigned long long)wc->wr_id);
		return -1;
	}
	if (kind == K_CTL_RECV || kind == K_DATA_RECV)
		s->rq_out--;
	if (kind == K_DATA && WR_SEQ(wc->wr_id) > s->data_done)
		s->data_done = WR_SEQ(wc->wr_id);
	s->have[kind]++;
	return 0;
}

int perf_reap(struct perf_sess *s)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(s->c.cq, 16, wc);
	if (n < 0)
		return fprintf(stderr, "softrnic-perf: ibv_poll_cq failed\n"), -1;
	for (int i = 0; i < n; i++)
		if (account(s, &wc[i]))
			return -1;
	return n;
}

/* Cheap: the clock is read only once a wait has lasted 4096 spins. */
void perf_arm_deadline(struct perf_sess *s)
{
	s->spins = 0;
	s->deadline = 0;
}

int perf_spin(struct perf_sess *s)
{
	if (s->p.mode == VX_YIELD)
		sched_yield();
	if ((++s->spins & 4095) != 0)
		return 0;
	if (vx_peer_gone(&s->c))
		return fprintf(stderr, "softrnic-perf: the peer disconnected\n"), -1;
	if (s->p.timeout_ms < 0)
		return 0;
	uint64_t now = vx_now_ns();
	if (s->deadline == 0)
		s->deadline = now + (uint64_t)s->p.timeout_ms * 1000000u;
	if (now > s->deadline)
		return fprintf(stderr, "softrnic-perf: timed out (%d ms)\n", s->p.timeout_ms), -1;
	return 0;
}

/* Takes one completion of a kind in mask (counted earlier or waited for now). */
static int take(struct perf_sess *s, unsigned mask)
{
	for (unsigned k = 1; k < K_COUNT; k++)
		if ((mask & BIT(k)) && s->have[k]) {
			s->have[k]--;
			return 1;
		}
	return 0;
}

static int wait_once(struct perf_sess *s, enum vx_poll mode)
{
	if (mode == VX_EVENT) {
		struct ibv_wc wc;
		int rc = vx_wait_wc(&s->c, &wc, VX_EVENT);
		if (rc == 0)
			fprintf(stderr, "softrnic-perf: the peer disconnected\n");
		return rc != 1 || account(s, &wc) ? -1 : 0;
	}
	int n = perf_reap(s);
	return n < 0 || (n == 0 && perf_spin(s)) ? -1 : 0;
}

static int wait_mask(struct perf_sess *s, unsigned mask, enum vx_poll mode)
{
	static const char *const names[K_COUNT] = { "", "control receive", "control send",
	                                            "data receive", "data WR", "credit write" };
	perf_arm_deadline(s);
	while (!take(s, mask))
		if (wait_once(s, mode)) {
			for (unsigned k = 1; k < K_COUNT; k++)
				if (mask & BIT(k))
					fprintf(stderr, "softrnic-perf: %s: was waiting for a %s completion\n",
					        s->p.server ? "server" : "client", names[k]);
			return -1;
		}
	return 0;
}

int perf_wait(struct perf_sess *s, unsigned kind, enum vx_poll mode)
{
	return wait_mask(s, BIT(kind), mode);
}

int perf_post_data_recv(struct perf_sess *s)
{
	if (vx_post_recv(&s->c, WR_ID(K_DATA_RECV, 0), s->rx, s->p.size, s->data_mr))
		return -1;
	s->rq_out++;
	return 0;
}

int perf_post(struct perf_sess *s, enum ibv_wr_opcode op, uint64_t seq, bool signaled)
{
	void *local = op == IBV_WR_RDMA_READ ? s->rx : s->tx;
	return vx_post(&s->c, op, WR_ID(K_DATA, seq), local, s->p.size, s->data_mr, s->raddr,
	               s->rkey, signaled);
}

int perf_post_list(struct perf_sess *s, enum ibv_wr_opcode op, uint64_t first, uint32_t n,
                   const bool *signaled)
{
	struct ibv_send_wr wr[PERF_MAX_POST_LIST], *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)(op == IBV_WR_RDMA_READ ? s->rx : s->tx),
	                       .length = s->p.size, .lkey = s->data_mr->lkey };

	if (n == 0 || n > PERF_MAX_POST_LIST)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		wr[i] = (struct ibv_send_wr){
			.wr_id = WR_ID(K_DATA, first + i), .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = signaled[i] ? IBV_SEND_SIGNALED : 0,
			.wr.rdma = { .remote_addr = s->raddr, .rkey = s->rkey },
			.next = i + 1 < n ? &wr[i + 1] : NULL,
		};
	int rc = ibv_post_send(s->c.qp, wr, &bad);
	if (rc)
		fprintf(stderr, "ibv_post_send (a list of %u): %s\n", n, strerror(rc));
	return rc ? -1 : 0;
}

static int post_ctl_recv(struct perf_sess *s)
{
	if (vx_post_recv(&s->c, WR_ID(K_CTL_RECV, 0), &s->ctl->rx, sizeof s->ctl->rx, s->ctl_mr))
		return -1;
	s->rq_out++;
	return 0;
}

/* Sends our parameters and regions (len 0: the closing handshake) and waits for it. */
static int send_ctl(struct perf_sess *s, uint32_t len)
{
	struct perf_ctl *t = &s->ctl->tx;
	*t = (struct perf_ctl){
		.magic = htobe32(PERF_MAGIC), .test = htobe32(s->p.test), .lat = htobe32(s->p.lat),
		.size = htobe32(s->p.size), .iters = htobe32(s->p.iters),
		.depth = htobe32(s->p.tx_depth), .credits = htobe32(s->rq_out),
		.poll_cq = htobe32(s->p.poll_cq),
		.addr = htobe64((uintptr_t)s->rx), .rkey = htobe32(s->data_mr ? s->data_mr->rkey : 0),
		.len = htobe32(s->p.size), .credit_addr = htobe64((uintptr_t)&s->ctl->credit),
		.credit_rkey = htobe32(s->ctl_mr->rkey), .qps = htobe32(s->p.qps),
	};
	if (vx_post(&s->c, IBV_WR_SEND, WR_ID(K_CTL_SEND, 0), t, len, s->ctl_mr, 0, 0, true))
		return -1;
	return perf_wait(s, K_CTL_SEND, VX_EVENT);
}

/* Reads the peer's control message; the server adopts the client's test parameters. */
static int read_ctl(struct perf_sess *s)
{
	const struct perf_ctl *m = &s->ctl->rx;
	if (be32toh(m->magic) != PERF_MAGIC)
		return fprintf(stderr, "softrnic-perf: peer is not softrnic-perf\n"), -1;
	if (s->p.server) {
		s->p.test = (enum perf_test)be32toh(m->test);
		s->p.lat = be32toh(m->lat) != 0;
		s->p.size = be32toh(m->size);
		s->p.iters = be32toh(m->iters);
		s->p.tx_depth = be32toh(m->depth);
		s->p.poll_cq = be32toh(m->poll_cq) != 0;
		s->p.qps = be32toh(m->qps);
		uint32_t max = s->p.max_size ? s->p.max_size : PERF_MAX_SIZE_DEFAULT;
		if (s->p.test > PERF_SEND || s->p.iters == 0 || s->p.qps > PERF_MAX_QPS ||
		    (s->p.qps > 1 && s->p.lat))
			return fprintf(stderr, "softrnic-perf: bad parameters from client\n"), -1;
		if (s->p.size > max)
			return fprintf(stderr, "softrnic-perf: client asked for %u-byte messages, over the"
			               " server's limit of %u bytes (-M); refused\n", s->p.size, max), -1;
	}
	s->raddr = be64toh(m->addr);
	s->rkey = be32toh(m->rkey);
	s->credit_raddr = be64toh(m->credit_addr);
	s->credit_rkey = be32toh(m->credit_rkey);
	s->credits = be32toh(m->credits);
	return 0;
}

static int register_data(struct perf_sess *s)
{
	size_t region = REGION(s->p.size ? s->p.size : 1);
	s->data_mr = vx_reg(&s->c, 2 * region, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                                         IBV_ACCESS_REMOTE_READ);
	if (!s->data_mr)
		return -1;
	s->tx = s->data_mr->addr;
	s->rx = s->tx + region;
	memset(s->tx, 'a', s->p.size);
	return 0;
}

/* listener: NULL for the first connection (vx_setup listens); the server's further ones
 * are accepted on the first one's listener. */
static int connect_side(struct perf_sess *s, struct vx_conn *listener)
{
	struct vx_opts o = {
		.addr = s->p.addr, .port = s->p.port, .server = s->p.server,
		.send_depth = 256 + 32, .recv_depth = SEND_BW_RQ + 8, .rd_atom = 16, .channel = true,
		.timeout_ms = s->p.timeout_ms, .accept_timeout_ms = -1,
	};
	if (listener ? vx_accept_next(&s->c, listener, &o) : vx_setup(&s->c, &o))
		return -1;
	s->ctl_mr = vx_reg(&s->c, sizeof *s->ctl, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->ctl_mr)
		return -1;
	s->ctl = s->ctl_mr->addr;
	return post_ctl_recv(s);
}

static int setup_client(struct perf_sess *s)
{
	if (connect_side(s, NULL) || register_data(s))
		return -1;
	if (s->p.test == PERF_SEND && s->p.lat && (perf_post_data_recv(s) || perf_post_data_recv(s)))
		return -1;
	if (vx_establish(&s->c) || send_ctl(s, sizeof(struct perf_ctl)))
		return -1;
	return perf_wait(s, K_CTL_RECV, VX_EVENT) || read_ctl(s) ? -1 : 0;
}

/* Server receives: send_bw keeps SEND_BW_RQ posted (the client has credits for them),
 * send_lat two, the others one for the closing message. */
static int post_server_recvs(struct perf_sess *s)
{
	uint32_t n = s->p.test != PERF_SEND ? 0 : s->p.lat ? 2 : SEND_BW_RQ;
	if (n > s->p.iters + 1)
		n = s->p.iters + 1;
	for (uint32_t i = 0; i < n; i++)
		if (perf_post_data_recv(s))
			return -1;
	return n ? 0 : post_ctl_recv(s);
}

static int setup_server(struct perf_sess *s, struct vx_conn *listener)
{
	if (s->p.log && !listener)
		fprintf(s->p.log, "************************************\n"
		                  "* Waiting for client to connect... *\n"
		                  "************************************\n");
	if (connect_side(s, listener) || vx_establish(&s->c))
		return -1;
	if (perf_wait(s, K_CTL_RECV, VX_EVENT) || read_ctl(s) || register_data(s))
		return -1;
	return post_server_recvs(s) || send_ctl(s, sizeof(struct perf_ctl)) ? -1 : 0;
}

/* Closing handshake: the client sends an empty message, the server answers with one. */
static int finish(struct perf_sess *s)
{
	int saved = s->c.timeout_ms;
	int rc;
	if (s->p.server) {
		s->c.timeout_ms = -1;   /* the client may measure for a long time */
		rc = wait_mask(s, ANY_RECV, VX_EVENT);
		s->c.timeout_ms = saved;
		return rc || send_ctl(s, 0) ? -1 : 0;
	}
	if (s->rq_out == 0 && post_ctl_recv(s))
		return -1;
	return send_ctl(s, 0) || wait_mask(s, ANY_RECV, VX_EVENT) ? -1 : 0;
}

static void banner(const struct perf_sess *s, uint32_t qps)
{
	FILE *f = s->p.log;
	if (!f)
		return;
	const char *tt = s->c.id->verbs->device->transport_type == IBV_TRANSPORT_IWARP ? "IW" : "IB";
	fprintf(f, "---------------------------------------------------------------------------------------\n"
	           "                    %s\n"
	           " Number of qps   : %u\t\tTransport type : %s\n"
	           " Connection type : RC\t\tUsing rdma_cm  : ON\n"
	           " Device          : %s\t\tPolling        : %s\n"
	           " local address:  QPN 0x%06x RKey 0x%08x VAddr 0x%016llx\n"
	           " remote address: RKey 0x%08x VAddr 0x%016llx\n",
	        perf_test_name(s->p.test, s->p.lat), qps, tt, ibv_get_device_name(s->c.id->verbs->device),
	        s->p.mode == VX_YIELD ? "spin + yield" : "busy", s->c.qp->qp_num, s->data_mr->rkey,
	        (unsigned long long)(uintptr_t)s->rx, s->rkey, (unsigned long long)s->raddr);
}

static int run_test(struct perf_sess *s, struct perf_result *r)
{
	if (s->p.server)
		return s->p.lat ? perf_lat_server(s) : perf_bw_server(s);
	*r = (struct perf_result){ .test = s->p.test, .lat = s->p.lat, .size = s->p.size,
	                           .iters = s->p.iters };
	return s->p.lat ? perf_lat_client(s, r) : perf_bw_client(s, r);
}

static int run_multi(struct perf_sess **s, uint32_t n, struct perf_result *r)
{
	if (s[0]->p.server)
		return perf_bw_multi_server(s, n);
	*r = (struct perf_result){ .test = s[0]->p.test, .size = s[0]->p.size,
	                           .iters = s[0]->p.iters };
	return perf_bw_multi_client(s, n, r);
}

static struct perf_sess *new_sess(const struct perf_params *p)
{
	struct perf_sess *s = calloc(1, sizeof *s);
	if (!s)
		fprintf(stderr, "softrnic-perf: out of memory\n");
	else
		s->p = *p;
	return s;
}

/* Opens the first connection, then as many more as the client asked for (the server learns
 * the count from the first parameter exchange); *n counts the sessions allocated, set up or
 * not, for close_sess. Further sessions start from the first's parameters, the client's. */
static int open_sessions(const struct perf_params *p, struct perf_sess **s, uint32_t *n)
{
	if (!(s[0] = new_sess(p)))
		return -1;
	*n = 1;
	if (p->server ? setup_server(s[0], NULL) : setup_client(s[0]))
		return -1;
	uint32_t want = s[0]->p.qps > 1 ? s[0]->p.qps : 1;
	while (*n < want) {
		struct perf_sess *t = new_sess(&s[0]->p);
		if (!t)
			return -1;
		s[(*n)++] = t;
		if (p->server ? setup_server(t, &s[0]->c) : setup_client(t))
			return -1;
	}
	return 0;
}

static void close_sess(struct perf_sess *s)
{
	if (!s)
		return;
	vx_disconnect(&s->c);
	vx_unreg(s->data_mr);
	vx_unreg(s->ctl_mr);
	vx_destroy(&s->c);
	free(s);
}

static void linger(const struct perf_params *p)
{
	if (p->linger_ms <= 0)
		return;
	if (p->log)
		fprintf(p->log, " lingering %d ms\n", p->linger_ms);
	nanosleep(&(struct timespec){ p->linger_ms / 1000, (p->linger_ms % 1000) * 1000000L }, NULL);
}

int perf_run(const struct perf_params *p, struct perf_result *res)
{
	struct perf_sess *s[PERF_MAX_QPS] = { 0 };
	uint32_t n = 0;
	if (p->qps > PERF_MAX_QPS || (p->qps > 1 && (p->lat || p->between || p->samples)))
		return fprintf(stderr, "softrnic-perf: several QPs: bandwidth tests only, at most"
		               " %u, without interleaving\n", PERF_MAX_QPS), -1;
	int rc = open_sessions(p, s, &n);
	if (rc == 0) {
		banner(s[0], n);
		rc = n == 1 ? run_test(s[0], res) : run_multi(s, n, res);
	}
	for (uint32_t i = 0; i < n && rc == 0; i++)
		rc = finish(s[i]);
	if (rc == 0)
		linger(p);
	/* the server's first session holds the listener: it goes last */
	while (n > 0)
		close_sess(s[--n]);
	return rc;
}
