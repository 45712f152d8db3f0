/* One end of an MPA connection for the network-namespace test (netns_cm.sh):
 *   cm_peer listen  <ip> <port> [--crc] [--count N]
 *   cm_peer connect <ip> <port> [--crc] [--count N]
 * Both sides use rn_cm with the default policy (rev 2, enhanced, P2P, WRITE|READ RTR); the
 * listener accepts. After establishment the connector sends N FPDUs and the listener echoes
 * each; both check that P2P with an RTR was negotiated and that every echo matches. Exit 0
 * on success, 1 with a message otherwise; never blocks longer than about 15 s. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "mpa.h"
#include "rn_cm.h"

#define WAIT_MS 10000

struct reader {
	struct mpa_rx rx;
	uint8_t work[4096];
	char msgs[64][128];
	size_t lens[64];
	int count;
};

static int collect(void *arg, const uint8_t *u, size_t len)
{
	struct reader *r = arg;
	if (r->count < 64 && len < sizeof(r->msgs[0])) {
		memcpy(r->msgs[r->count], u, len);
		r->lens[r->count] = len;
	}
	r->count++;
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "cm_peer: %s: %s\n", what, err ? strerror(-err) : "failed");
	return 1;
}

static int send_all(struct rn_conn *c, const uint8_t *b, size_t len)
{
	long long end = now_ms() + WAIT_MS;
	while (len > 0 && now_ms() < end) {
		struct iovec iov = { (void *)b, len };
		ssize_t n = rn_conn_sendv(c, &iov, 1);
		if (n == -EAGAIN) {
			struct pollfd p = { rn_conn_fd(c), POLLOUT, 0 };
			poll(&p, 1, 100);
			continue;
		}
		if (n < 0)
			return (int)n;
		b += n;
		len -= (size_t)n;
	}
	return len ? -ETIMEDOUT : 0;
}

static int send_fpdu(struct rn_conn *c, struct mpa_tx *tx, const char *msg)
{
	uint8_t out[256];
	struct iovec iov = { (void *)msg, strlen(msg) };
	ssize_t n = mpa_tx_encode(tx, &iov, 1, out, sizeof(out));
	return n < 0 ? (int)n : send_all(c, out, (size_t)n);
}

/* Read until r->count reaches want. */
static int recv_fpdus(struct rn_conn *c, struct reader *r, int want)
{
	long long end = now_ms() + WAIT_MS;
	uint8_t in[1024];
	while (r->count < want && now_ms() < end) {
		ssize_t n = rn_conn_recv(c, in, sizeof(in));
		if (n == -EAGAIN) {
			struct pollfd p = { rn_conn_fd(c), POLLIN, 0 };
			poll(&p, 1, 100);
			continue;
		}
		if (n <= 0)
			return n == 0 ? -ECONNRESET : (int)n;
		if (mpa_rx_feed(&r->rx, in, (size_t)n, r->work, sizeof(r->work), collect, r) < 0)
			return -EPROTO;
	}
	return r->count >= want ? 0 : -ETIMEDOUT;
}

static int get_cm(bool listen_mode, const struct sockaddr_in *a, const struct rn_cm_cfg *cfg,
		  struct rn_cm **cm)
{
	const struct rn_transport *t = rn_sock_transport();
	struct rn_conn *l, *c;
	long long end = now_ms() + WAIT_MS;
	int rc;

	if (!listen_mode) {
		/* the listener may not be up yet: retry refused connects */
		do {
			rc = rn_cm_connect(t, (const struct sockaddr *)a, sizeof(*a), cfg, "cli", 3, cm);
			if (rc == 0 && rn_cm_wait(*cm, WAIT_MS) == RN_CM_FAILED &&
			    rn_cm_error(*cm) == -ECONNREFUSED) {
				rn_cm_destroy(*cm);
				rc = -ECONNREFUSED;
			}
			if (rc == -ECONNREFUSED)
				poll(NULL, 0, 100);
		} while (rc == -ECONNREFUSED && now_ms() < end);
		return rc;
	}
	rc = rn_tp_listen(t, (const struct sockaddr *)a, sizeof(*a), 4, &l);
	if (rc)
		return rc;
	while ((rc = rn_conn_accept(l, &c)) == -EAGAIN && now_ms() < end) {
		struct pollfd p = { rn_conn_fd(l), POLLIN, 0 };
		poll(&p, 1, 100);
	}
	rn_conn_close(l);
	if (rc)
		return rc;
	rc = rn_cm_passive(c, cfg, cm);
	if (rc == 0 && rn_cm_wait(*cm, WAIT_MS) == RN_CM_WAIT_ACCEPT)
		rc = rn_cm_accept(*cm, "srv", 3);
	if (rc == 0)
		rn_cm_wait(*cm, WAIT_MS);
	return rc;
}

static int exchange(bool listen_mode, struct rn_cm_handoff *h, int count)
{
	struct reader *r = calloc(1, sizeof(*r));
	struct mpa_rx_cfg rc = { .crc = h->params.crc, .markers = h->params.markers_rx,
				 .pos = h->rx_pos };
	struct mpa_tx tx;
	char msg[64];
	int err = r ? 0 : -ENOMEM;

	if (err)
		return err;
	mpa_rx_init(&r->rx, &rc);
	mpa_tx_init(&tx, h->params.crc, h->params.markers_tx);
	tx.pos = h->tx_pos;
	if (h->rx_len && mpa_rx_feed(&r->rx, h->rx, h->rx_len, r->work, sizeof(r->work),
				     collect, r) < 0)
		err = -EPROTO;
	for (int i = 0; i < count && err == 0; i++) {
		snprintf(msg, sizeof(msg), "fpdu %d of %d", i, count);
		if (!listen_mode)
			err = send_fpdu(h->conn, &tx, msg);
		if (err == 0)
			err = recv_fpdus(h->conn, r, i + 1);
		if (err == 0 && (r->lens[i] != strlen(msg) || memcmp(r->msgs[i], msg, r->lens[i])))
			err = -EBADMSG;
		if (err == 0 && listen_mode)
			err = send_fpdu(h->conn, &tx, msg); /* echo */
	}
	free(r);
	return err;
}

int main(int argc, char **argv)
{
	struct rn_cm_cfg cfg;
	struct sockaddr_in a;
	struct rn_cm *cm = NULL;
	struct rn_cm_handoff h;
	int count = 8;

	alarm(30);
	if (argc < 4 || (strcmp(argv[1], "listen") && strcmp(argv[1], "connect"))) {
		fprintf(stderr, "usage: cm_peer listen|connect <ipv4> <port> [--crc] [--count N]\n");
		return 2;
	}
	bool listen_mode = strcmp(argv[1], "listen") == 0;
	rn_cm_cfg_default(&cfg);
	cfg.mpa_ms = cfg.rtr_ms = cfg.accept_ms = cfg.connect_ms = WAIT_MS;
	for (int i = 4; i < argc; i++) {
		if (strcmp(argv[i], "--crc") == 0)
			cfg.policy.crc_required = true;
		else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
			count = atoi(argv[++i]);
	}
	if (count < 1 || count > 64)
		return die("--count must be 1..64", 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)atoi(argv[3]));
	if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1)
		return die("bad IPv4 address", 0);

	int rc = get_cm(listen_mode, &a, &cfg, &cm);
	if (rc)
		return die("connection setup", rc);
	if (rn_cm_state(cm) != RN_CM_ESTABLISHED) {
		fprintf(stderr, "cm_peer: state %s, error %s (%s)\n", rn_cm_state_name(rn_cm_state(cm)),
			strerror(-rn_cm_error(cm)), rn_cm_mpa_error(cm)->reason ? rn_cm_mpa_error(cm)->reason : "-");
		return 1;
	}
	size_t pdl;
	const uint8_t *pd = rn_cm_peer_pd(cm, &pdl);
	if (pdl != 3 || memcmp(pd, listen_mode ? "cli" : "srv", 3))
		return die("peer private data mismatch", 0);
	rc = rn_cm_handoff(cm, &h);
	rn_cm_destroy(cm);
	if (rc)
		return die("handoff", rc);
	if (!h.params.p2p || h.params.rtr == MPA_RTR_NONE)
		return die("P2P with RTR was not negotiated", 0);
	rc = exchange(listen_mode, &h, count);
	if (rc == 0 && !listen_mode)
		rc = rn_conn_shutdown_write(h.conn);
	rn_conn_close(h.conn);
	free(h.rx);
	if (rc)
		return die("FPDU exchange", rc);
	printf("cm_peer %s: established rev %u, P2P %s RTR, CRC %s, %d FPDUs %s\n", argv[1],
	       h.params.rev, mpa_rtr_name(h.params.rtr), h.params.crc ? "on" : "off", count,
	       listen_mode ? "echoed" : "sent and echoed");
	return 0;
}
