/* memif_rtt: the floor under every memif number of scripts/bench-tcp.sh - one frame sent
 * with rte_eth_tx_burst, returned by the peer's rx/tx burst loop, received with
 * rte_eth_rx_burst; no TCP, no IP, nothing else.
 *   memif_rtt EAL-ARGS -- server ITER         echo ITER frames (port 0), then exit
 *   memif_rtt EAL-ARGS -- client ITER SIZE    ITER round trips of SIZE-octet frames
 * Both give up after 30 s (exit 2). The client prints a "latency:" line like softrnic-tcp. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#define WARMUP 1000u
#define LIMIT_S 30u

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int port_up(struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_count_avail() < 1) {
		fprintf(stderr, "memif_rtt: no port (give --vdev=net_memif0,...)\n");
		return -1;
	}
	if (rte_eth_dev_configure(0, 1, 1, &conf) || rte_eth_rx_queue_setup(0, 0, 512, 0, NULL, mp) ||
	    rte_eth_tx_queue_setup(0, 0, 512, 0, NULL) || rte_eth_dev_start(0)) {
		fprintf(stderr, "memif_rtt: port setup failed\n");
		return -1;
	}
	struct rte_eth_link link;
	uint64_t end = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	do {
		rte_eth_link_get_nowait(0, &link);
		if (link.link_status)
			return 0;
		rte_delay_ms(10);
	} while (rte_get_tsc_cycles() < end);
	fprintf(stderr, "memif_rtt: link did not come up in 10 s\n");
	return -1;
}

static int serve(uint64_t iter)
{
	struct rte_mbuf *b[32];
	uint64_t done = 0, end = rte_get_tsc_cycles() + LIMIT_S * rte_get_tsc_hz();
	while (done < iter) {
		uint16_t n = rte_eth_rx_burst(0, 0, b, 32);
		if (!n) {
			if (rte_get_tsc_cycles() > end)
				return 2;
			continue;
		}
		uint16_t s = 0;
		while (s < n)
			s += rte_eth_tx_burst(0, 0, b + s, n - s);
		done += n;
	}
	rte_delay_ms(100);  /* let the client take the last frame */
	return 0;
}

static int client(struct rte_mempool *mp, uint64_t iter, uint32_t size)
{
	uint64_t *lat = calloc(iter, sizeof(*lat));
	uint64_t hz = rte_get_tsc_hz(), end = rte_get_tsc_cycles() + LIMIT_S * hz;
	if (!lat)
		return 1;
	for (uint64_t i = 0; i < iter + WARMUP; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp), *r;
		char *p = m ? rte_pktmbuf_append(m, (uint16_t)size) : NULL;
		if (!p) {
			fprintf(stderr, "memif_rtt: no mbuf\n");
			return 1;
		}
		memset(p, 0xff, 12);  /* broadcast destination, some source: a valid-looking frame */
		memset(p + 12, 0x88, size - 12);
		uint64_t t0 = rte_get_tsc_cycles();
		while (rte_eth_tx_burst(0, 0, &m, 1) == 0)
			;
		while (rte_eth_rx_burst(0, 0, &r, 1) == 0) {
			if (rte_get_tsc_cycles() > end) {
				fprintf(stderr, "memif_rtt: no echo after %llu frames\n",
					(unsigned long long)i);
				return 2;
			}
		}
		uint64_t t1 = rte_get_tsc_cycles();
		rte_pktmbuf_free(r);
		if (i >= WARMUP)
			lat[i - WARMUP] = (t1 - t0) * 1000000000ull / hz;
	}
	qsort(lat, iter, sizeof(*lat), cmp_u64);
	printf("latency: n=%llu size=%u min_us=%.2f p50_us=%.2f p99_us=%.2f max_us=%.2f\n",
	       (unsigned long long)iter, size, lat[0] / 1e3, lat[iter / 2] / 1e3,
	       lat[iter * 99 / 100] / 1e3, lat[iter - 1] / 1e3);
	free(lat);
	return 0;
}

int main(int argc, char **argv)
{
	int n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "memif_rtt: EAL init failed\n");
		return 3;
	}
	argc -= n;
	argv += n;
	uint64_t iter = argc >= 3 ? strtoull(argv[2], NULL, 10) : 0;
	uint32_t size = argc >= 4 ? (uint32_t)strtoul(argv[3], NULL, 10) : 64;
	bool is_server = argc >= 3 && strcmp(argv[1], "server") == 0;
	if (!iter || iter > 100000000 || (!is_server && (argc < 4 || strcmp(argv[1], "client") ||
							 size < 60 || size > 1500))) {
		fprintf(stderr, "usage: memif_rtt EAL-ARGS -- server ITER | client ITER SIZE\n");
		return 64;
	}
	struct rte_mempool *mp =
		rte_pktmbuf_pool_create("memif_rtt", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (!mp || port_up(mp))
		return 3;
	int rc = is_server ? serve(iter + WARMUP) : client(mp, iter, size);
	rte_eth_dev_stop(0);
	rte_eth_dev_close(0);
	rte_eal_cleanup();
	return rc;
}
