/* One side of the rping-like exchange for the network-namespace test (netns_rping.sh):
 *   rping_peer server <ip> <port> [count]
 *   rping_peer client <ip> <port> [count]
 * Public librdmacm / libibverbs API only (rping_core.h). Exit 0 on success, 1 otherwise. The
 * client retries while the server is not listening yet (REJECTED), for at most ~5 s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rping_core.h"

static int serve(const char *ip, uint16_t port, int count)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lis = NULL;
	uint16_t bound;

	if (ch == NULL || rp_listen(ch, &lis, ip, port, &bound) != 0)
		return 1;
	int rc = rp_server(ch, count);
	rdma_destroy_id(lis);
	rdma_destroy_event_channel(ch);
	return rc == 0 ? 0 : 1;
}

static int connect_retry(const char *ip, uint16_t port, int count)
{
	long long end = t_now_ms() + 5000;

	for (;;) {
		int rc = rp_client(ip, port, count);
		if (rc == 0)
			return 0;
		if (t_now_ms() > end)
			return 1;
		usleep(200000);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s server|client <ip> <port> [count]\n", argv[0]);
		return 2;
	}
	uint16_t port = (uint16_t)atoi(argv[3]);
	int count = argc > 4 ? atoi(argv[4]) : 10;
	int rc = strcmp(argv[1], "server") == 0 ? serve(argv[2], port, count)
						 : connect_retry(argv[2], port, count);
	printf("rping_peer %s: %s\n", argv[1], rc == 0 ? "ok" : "FAILED");
	return rc;
}
