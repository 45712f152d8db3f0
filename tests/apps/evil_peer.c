/* evil_peer: a client that asks a softrnic-rping or softrnic-perf server for a buffer of its
 * choosing, with one 16-byte (rping) or perf_ctl-sized (perf) Send, and allocates nothing
 * itself. The server must refuse a size over its limit instead of allocating it.
 *
 *   evil_peer rping|perf ADDR PORT SIZE
 *
 * Exit 0 once the message was sent and the server went away (disconnect or flush), 1 on any
 * other failure. */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_int.h"
#include "vx.h"

struct ping_info {        /* softrnic-rping's wire format */
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
};

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[1], "rping") && strcmp(argv[1], "perf"))) {
		fputs("usage: evil_peer rping|perf ADDR PORT SIZE\n", stderr);
		return 2;
	}
	bool perf = strcmp(argv[1], "perf") == 0;
	uint32_t size = (uint32_t)strtoul(argv[4], NULL, 0);
	struct vx_opts o = { .addr = argv[2], .port = argv[3], .send_depth = 4, .recv_depth = 4,
	                     .rd_atom = 1, .channel = true, .timeout_ms = 10000,
	                     .accept_timeout_ms = -1 };
	struct vx_conn c;
	if (vx_setup(&c, &o))
		return 1;
	struct ibv_mr *mr = vx_reg(&c, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || vx_post_recv(&c, 1, (char *)mr->addr + 2048, 2048, mr) || vx_establish(&c))
		return 1;
	uint32_t len;
	if (perf) {
		struct perf_ctl *m = mr->addr;
		*m = (struct perf_ctl){ .magic = htobe32(PERF_MAGIC), .test = htobe32(PERF_WRITE),
		                        .size = htobe32(size), .iters = htobe32(1), .depth = htobe32(1) };
		len = sizeof *m;
	} else {
		struct ping_info *p = mr->addr;
		*p = (struct ping_info){ .buf = htobe64(0x1000), .rkey = htobe32(0x100),
		                         .size = htobe32(size) };
		len = sizeof *p;
	}
	if (vx_post(&c, IBV_WR_SEND, 2, mr->addr, len, mr, 0, 0, true))
		return 1;
	/* The Send completes; then the refusing server disconnects (its receive flushes). */
	struct ibv_wc wc;
	int rc = 1;
	for (int i = 0; i < 2; i++) {
		int w = vx_wait_wc(&c, &wc, VX_EVENT);
		if (w == 0 || (w == 1 && wc.status == IBV_WC_WR_FLUSH_ERR)) {
			rc = 0;
			break;
		}
		if (w < 0 || wc.wr_id != 2 || wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "evil_peer: unexpected completion (w %d, wr_id %llu)\n", w,
			        (unsigned long long)wc.wr_id);
			break;
		}
	}
	vx_disconnect(&c);
	vx_unreg(mr);
	vx_destroy(&c);
	return rc;
}
