/* adv_client: the real client that must still be served after every attack on the wire
 * target (iwarp-conform --wire-target).
 * It connects, reads the regions from the MPA Reply, writes a pattern into W and reads it
 * back, reads R and checks its fill, sends a message and checks the echo, then disconnects.
 *
 *   adv_client ADDR PORT [TAG]
 *
 * Exit 0 when all of it worked ("client ok TAG"), 1 otherwise. */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wt_proto.h"
#include "vx.h"

#define BUF (2 * WT_REGION_LEN + WT_RECV_LEN)

static int wait_ok(struct vx_conn *c, const char *what)
{
	struct ibv_wc wc;
	if (vx_wait_ok(c, &wc, VX_EVENT) == 0)
		return 0;
	fprintf(stderr, "adv_client: %s did not complete\n", what);
	return -1;
}

static int check_w(struct vx_conn *c, struct ibv_mr *mr, const struct wt_region *w)
{
	uint8_t *out = mr->addr, *back = out + WT_REGION_LEN;
	for (unsigned i = 0; i < WT_REGION_LEN; i++)
		out[i] = (uint8_t)(i * 7 + 1);
	memset(back, 0, WT_REGION_LEN);
	if (vx_post(c, IBV_WR_RDMA_WRITE, 1, out, WT_REGION_LEN, mr, be64toh(w->addr),
		    be32toh(w->stag), true) || wait_ok(c, "RDMA Write to W") ||
	    vx_post(c, IBV_WR_RDMA_READ, 2, back, WT_REGION_LEN, mr, be64toh(w->addr),
		    be32toh(w->stag), true) || wait_ok(c, "RDMA Read of W"))
		return -1;
	if (memcmp(out, back, WT_REGION_LEN) == 0)
		return 0;
	fputs("adv_client: W read back differs from what was written\n", stderr);
	return -1;
}

static int check_r(struct vx_conn *c, struct ibv_mr *mr, const struct wt_region *r)
{
	uint8_t *back = mr->addr;
	if (vx_post(c, IBV_WR_RDMA_READ, 3, back, WT_REGION_LEN, mr, be64toh(r->addr),
		    be32toh(r->stag), true) || wait_ok(c, "RDMA Read of R"))
		return -1;
	for (unsigned i = 0; i < WT_REGION_LEN; i++)
		if (back[i] != 0x10 + WT_R) {
			fprintf(stderr, "adv_client: R[%u] is 0x%02x\n", i, back[i]);
			return -1;
		}
	return 0;
}

static int check_echo(struct vx_conn *c, struct ibv_mr *mr)
{
	uint8_t *msg = mr->addr, *echo = msg + 2 * WT_REGION_LEN;
	struct ibv_wc wc;
	snprintf((char *)msg, WT_RECV_LEN, "adv_client echo check");
	if (vx_post(c, IBV_WR_SEND, 4, msg, 64, mr, 0, 0, true) || wait_ok(c, "Send"))
		return -1;
	if (vx_wait_ok(c, &wc, VX_EVENT) || wc.opcode != IBV_WC_RECV || wc.byte_len != 64 ||
	    memcmp(msg, echo, 64)) {
		fputs("adv_client: no echo of the Send\n", stderr);
		return -1;
	}
	return 0;
}

static int run(struct vx_conn *c)
{
	struct ibv_mr *mr = vx_reg(c, BUF, IBV_ACCESS_LOCAL_WRITE);
	struct wt_info info;
	int rc = -1;

	if (!mr || vx_post_recv(c, 9, (uint8_t *)mr->addr + 2 * WT_REGION_LEN, WT_RECV_LEN, mr) ||
	    vx_establish(c))
		goto out;
	if (c->peer_data_len < sizeof info) {
		fprintf(stderr, "adv_client: %u octets of private data\n", c->peer_data_len);
		goto out;
	}
	memcpy(&info, c->peer_data, sizeof info);
	if (be32toh(info.magic) != WT_MAGIC) {
		fputs("adv_client: not a wire target\n", stderr);
		goto out;
	}
	rc = check_w(c, mr, &info.region[WT_W]) || check_r(c, mr, &info.region[WT_R]) ||
	     check_echo(c, mr) ? -1 : 0;
out:
	vx_disconnect(c);
	vx_unreg(mr);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fputs("usage: adv_client ADDR PORT [TAG]\n", stderr);
		return 2;
	}
	struct vx_opts o = { .addr = argv[1], .port = argv[2], .send_depth = 4, .recv_depth = 2,
			     .rd_atom = 2, .channel = true, .timeout_ms = 10000 };
	struct vx_conn c;
	int rc = vx_setup(&c, &o) ? -1 : run(&c);
	vx_destroy(&c);
	if (rc)
		return 1;
	printf("client ok %s\n", argc == 4 ? argv[3] : "");
	return 0;
}
