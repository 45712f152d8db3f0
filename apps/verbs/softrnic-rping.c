/* softrnic-rping: an rping-style ping over rdma_cm and verbs.
 *
 *   softrnic-rping -s [-a ADDR] [-p PORT] [-C COUNT] [-S SIZE] [-M MAX] [-v] [-V] [-P] [-q]
 *                     [-t SEC]
 *   softrnic-rping -c  -a ADDR  [-p PORT] [-C COUNT] [-S SIZE] [-v] [-V] [-P] [-q] [-t SEC]
 *
 * One ping (rping's wire protocol; every message is a 16-byte Send of struct ping_info):
 *   client: Send {start buffer addr, rkey, size}
 *   server: RDMA Read of the client's start buffer; Send "go" (its own buffer info)
 *   client: Send {destination buffer addr, rkey, size}
 *   server: RDMA Write of what it read into the client's destination; Send "done"
 *   client: checks destination == start (-V), prints it (-v)
 * COUNT pings (default: until interrupted; the server runs until the client disconnects
 * unless -C is given), then the client disconnects. The server's buffer grows to the
 * client's size when that is larger than its own -S, up to -M (default
 * RPING_PEER_MAX_DEFAULT, 16 MiB): the size is the peer's word, so a larger one is refused
 * (message, exit 1) before anything is allocated. Waiting is event driven (completion
 * channel, ibv_req_notify_cq / ibv_get_cq_event) unless -P (busy-poll the CQ).
 * -p default 7174, -S default 64, -t per-wait timeout in seconds (default 30).
 * Exit status 0 on success, 1 on any failure, 2 on bad usage.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vx.h"

struct ping_info {        /* rping's struct rping_rdma_info, big-endian on the wire */
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
};

enum { WR_RECV = 1, WR_SEND, WR_RDMA };

/* Largest buffer the server allocates on a client's word (-M overrides, up to 1 GiB). */
#define RPING_PEER_MAX_DEFAULT (16u << 20)

struct rping_opts {
	bool server, client, verbose, verify, quiet;
	const char *addr, *port;
	long count;               /* <0: no limit */
	uint32_t size;
	uint32_t peer_max;        /* server: largest client size it grows its buffer to (-M) */
	enum vx_poll mode;
	int timeout_ms;
};

struct rping {
	struct rping_opts o;
	struct vx_conn c;
	struct ibv_mr *rx_mr, *tx_mr;   /* one ping_info each */
	struct ibv_mr *start_mr;        /* client: source of the ping */
	struct ibv_mr *rdma_mr;         /* client: destination; server: Read sink / Write source */
	unsigned recv_ready, send_done, rdma_done;
};

static const char usage_text[] =
	"usage: softrnic-rping -s|-c [-a ADDR] [-p PORT] [-C COUNT] [-S SIZE] [-M MAX] [-v] [-V]"
	" [-P] [-q] [-t SEC]\n"
	"  -s server, -c client (needs -a), -C pings (default: no limit), -S buffer bytes"
	" (default 64),\n  -M server: largest client buffer it allocates for (default 16 MiB,"
	" at most 1 GiB;\n     a larger request from a client is refused),\n"
	"  -v print data, -V verify, -P busy-poll instead of completion events,"
	" -q quiet, -t wait timeout (s, default 30)\n";

static long num(const char *s, const char *what, long min, long max)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max) {
		fprintf(stderr, "softrnic-rping: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static void parse(struct rping_opts *o, int argc, char **argv)
{
	*o = (struct rping_opts){ .port = "7174", .count = -1, .size = 64, .mode = VX_EVENT,
	                          .timeout_ms = 30000, .peer_max = RPING_PEER_MAX_DEFAULT };
	int opt;
	while ((opt = getopt(argc, argv, "sca:p:C:S:M:vVPqt:h")) != -1) {
		switch (opt) {
		case 's': o->server = true; break;
		case 'c': o->client = true; break;
		case 'a': o->addr = optarg; break;
		case 'p': num(optarg, "port", 1, 65535); o->port = optarg; break;
		case 'C': o->count = num(optarg, "count", 0, 1L << 40); break;
		case 'S': o->size = (uint32_t)num(optarg, "size", 1, 1L << 30); break;
		case 'M': o->peer_max = (uint32_t)num(optarg, "max size", 1, 1L << 30); break;
		case 'v': o->verbose = true; break;
		case 'V': o->verify = true; break;
		case 'P': o->mode = VX_BUSY; break;
		case 'q': o->quiet = true; break;
		case 't': o->timeout_ms = (int)num(optarg, "timeout", 1, 86400) * 1000; break;
		default: fputs(usage_text, stderr); exit(opt == 'h' ? 0 : 2);
		}
	}
	if (o->server == o->client || (o->client && !o->addr) || optind != argc) {
		fputs(usage_text, stderr);
		exit(2);
	}
}

/* Waits until a completion of the kind wanted (WR_RECV, WR_SEND, WR_RDMA) is available,
 * keeping others for later. 0 ok, 1 the peer disconnected (queue flushed), -1 error. */
static int wait_kind(struct rping *r, int kind)
{
	unsigned *have[] = { [WR_RECV] = &r->recv_ready, [WR_SEND] = &r->send_done,
	                     [WR_RDMA] = &r->rdma_done };
	while (*have[kind] == 0) {
		struct ibv_wc wc;
		int rc = vx_wait_wc(&r->c, &wc, r->o.mode);
		if (rc <= 0)
			return rc == 0 ? 1 : -1;
		if (wc.status == IBV_WC_WR_FLUSH_ERR &&
		    (r->c.disconnected ||
		     vx_cm_wait(&r->c, RDMA_CM_EVENT_DISCONNECTED, 2000, NULL) == 0))
			return 1;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id < WR_RECV || wc.wr_id > WR_RDMA) {
			fprintf(stderr, "softrnic-rping: completion error: %s (wr_id %llu)\n",
			        ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
			return -1;
		}
		(*have[wc.wr_id])++;
	}
	(*have[kind])--;
	return 0;
}

/* Takes the next received ping_info (host order) and posts the receive again. */
static int take_info(struct rping *r, struct ping_info *info)
{
	int rc = wait_kind(r, WR_RECV);
	if (rc)
		return rc;
	const struct ping_info *rx = r->rx_mr->addr;
	info->buf = be64toh(rx->buf);
	info->rkey = be32toh(rx->rkey);
	info->size = be32toh(rx->size);
	return vx_post_recv(&r->c, WR_RECV, r->rx_mr->addr, sizeof *rx, r->rx_mr);
}

/* Sends the info of buffer mr (first len bytes) and waits for the send completion. */
static int send_info(struct rping *r, const struct ibv_mr *mr, uint32_t len)
{
	struct ping_info *tx = r->tx_mr->addr;
	tx->buf = htobe64((uintptr_t)mr->addr);
	tx->rkey = htobe32(mr->rkey);
	tx->size = htobe32(len);
	if (vx_post(&r->c, IBV_WR_SEND, WR_SEND, tx, sizeof *tx, r->tx_mr, 0, 0, true))
		return -1;
	return wait_kind(r, WR_SEND) ? -1 : 0;
}

/* Server: grows the Read sink / Write source when the client's buffer is larger, never
 * beyond -M: the size comes from the peer. */
static int fit_rdma_buf(struct rping *r, uint32_t size)
{
	if (size <= r->o.size)
		return 0;
	if (r->o.client) {
		fprintf(stderr, "softrnic-rping: peer buffer of %u bytes does not fit (%u, -S)\n",
		        size, r->o.size);
		return -1;
	}
	if (size > r->o.peer_max) {
		fprintf(stderr, "softrnic-rping: client asked for a %u-byte buffer, over the server's"
		        " limit of %u bytes (-M); refused\n", size, r->o.peer_max);
		return -1;
	}
	vx_unreg(r->rdma_mr);
	r->rdma_mr = vx_reg(&r->c, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	                                 IBV_ACCESS_REMOTE_READ);
	r->o.size = size;
	return r->rdma_mr ? 0 : -1;
}

static int rdma_op(struct rping *r, enum ibv_wr_opcode op, const struct ping_info *peer)
{
	if (fit_rdma_buf(r, peer->size))
		return -1;
	if (vx_post(&r->c, op, WR_RDMA, r->rdma_mr->addr, peer->size, r->rdma_mr, peer->buf,
	            peer->rkey, true))
		return -1;
	return wait_kind(r, WR_RDMA) ? -1 : 0;
}

/* One ping on the server; 1 when the client has gone away cleanly before it started. */
static int server_ping(struct rping *r)
{
	struct ping_info peer;
	int rc = take_info(r, &peer);
	if (rc)
		return rc;
	if (rdma_op(r, IBV_WR_RDMA_READ, &peer))
		return -1;
	if (r->o.verbose)
		printf("server ping data: %.*s\n", (int)strnlen(r->rdma_mr->addr, peer.size),
		       (char *)r->rdma_mr->addr);
	if (send_info(r, r->rdma_mr, r->o.size))
		return -1;
	if (take_info(r, &peer) || rdma_op(r, IBV_WR_RDMA_WRITE, &peer))
		return -1;
	return send_info(r, r->rdma_mr, r->o.size);
}

static void fill_ping(char *buf, uint32_t size, long i)
{
	int n = snprintf(buf, size, "softrnic-ping-%ld: ", i);
	for (uint32_t k = n < 0 ? 0 : (uint32_t)n; k < size; k++)
		buf[k] = (char)(33 + (uint32_t)(i + k) % 94);
	buf[size - 1] = '\0';
}

static int client_ping(struct rping *r, long i)
{
	struct ping_info ignored;
	fill_ping(r->start_mr->addr, r->o.size, i);
	memset(r->rdma_mr->addr, 0, r->o.size);
	if (send_info(r, r->start_mr, r->o.size) || take_info(r, &ignored))
		return -1;
	if (send_info(r, r->rdma_mr, r->o.size) || take_info(r, &ignored))
		return -1;
	if (r->o.verify && memcmp(r->start_mr->addr, r->rdma_mr->addr, r->o.size) != 0) {
		fprintf(stderr, "softrnic-rping: ping %ld: data mismatch\n  sent: %.60s\n  got:  %.60s\n",
		        i, (char *)r->start_mr->addr, (char *)r->rdma_mr->addr);
		return -1;
	}
	if (r->o.verbose)
		printf("ping data: %s\n", (char *)r->rdma_mr->addr);
	return 0;
}

static int register_buffers(struct rping *r)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	r->rx_mr = vx_reg(&r->c, sizeof(struct ping_info), IBV_ACCESS_LOCAL_WRITE);
	r->tx_mr = vx_reg(&r->c, sizeof(struct ping_info), 0);
	r->rdma_mr = vx_reg(&r->c, r->o.size, rw);
	if (r->o.client)
		r->start_mr = vx_reg(&r->c, r->o.size,
		                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!r->rx_mr || !r->tx_mr || !r->rdma_mr || (r->o.client && !r->start_mr))
		return -1;
	return vx_post_recv(&r->c, WR_RECV, r->rx_mr->addr, sizeof(struct ping_info), r->rx_mr);
}

static int run_pings(struct rping *r, long *done)
{
	for (*done = 0; r->o.count < 0 || *done < r->o.count; (*done)++) {
		int rc = r->o.server ? server_ping(r) : client_ping(r, *done);
		if (rc == 1 && r->o.server)
			return 0;   /* the client finished and disconnected */
		if (rc)
			return -1;
	}
	return 0;
}

static void teardown(struct rping *r)
{
	vx_disconnect(&r->c);
	vx_unreg(r->rx_mr);
	vx_unreg(r->tx_mr);
	vx_unreg(r->rdma_mr);
	vx_unreg(r->start_mr);
	vx_destroy(&r->c);
}

int main(int argc, char **argv)
{
	static struct rping r;
	parse(&r.o, argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct vx_opts vo = {
		.addr = r.o.addr, .port = r.o.port, .server = r.o.server, .send_depth = 4,
		.recv_depth = 4, .rd_atom = 1, .channel = r.o.mode == VX_EVENT,
		.timeout_ms = r.o.timeout_ms, .accept_timeout_ms = -1,
	};
	long done = 0;
	int rc = vx_setup(&r.c, &vo);
	if (rc == 0)
		rc = register_buffers(&r);
	if (rc == 0)
		rc = vx_establish(&r.c);
	if (rc == 0)
		rc = run_pings(&r, &done);
	/* The client ends the connection, as with Debian's rping: a server that stops at -C N
	 * waits for it (2 s at most), or the client could lose its last ping's completion to
	 * our disconnect (docs/interop.md). */
	if (rc == 0 && r.o.server && !r.c.disconnected)
		(void)vx_cm_wait(&r.c, RDMA_CM_EVENT_DISCONNECTED, 2000, NULL);
	teardown(&r);
	if (rc == 0 && !r.o.quiet)
		printf("softrnic-rping %s: %ld pings of %u bytes%s (%s)\n",
		       r.o.server ? "server" : "client", done, r.o.size,
		       r.o.verify && r.o.client ? ", verified" : "",
		       r.o.mode == VX_EVENT ? "completion events" : "busy poll");
	if (rc)
		fprintf(stderr, "softrnic-rping %s: FAILED after %ld pings\n",
		        r.o.server ? "server" : "client", done);
	return rc ? 1 : 0;
}
