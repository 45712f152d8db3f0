/* The port's two mbuf pools (D145, D146): the room of their mbufs from the MTU, their default
 * sizes, how they are laid out in EAL's memory, and the notices when one runs short.
 *
 * A mempool initialises every mbuf's header when it is made, so each pool is resident from
 * the start: its size is the process's memory. The defaults are therefore what one port
 * needs, not what EAL's memory could hold; keys mbufs and tx_mbufs raise them. */
#include <rte_mbuf_pool_ops.h>

#include "dpdk_port_int.h"

/* Each lcore's cache holds up to 1.5x this: every thread that works the port has one
 * (dpdk_lcore.h: the poll thread, the progress thread, polling consumers), so a pool of
 * n keeps most of its mbufs shared with a sixteenth per cache (a 1023 mbuf pool: 63). */
#define DPDK_POOL_CACHE_MAX 256u

uint16_t dpdk_pool_room(uint16_t mtu)
{
	uint32_t room = RTE_MBUF_DEFAULT_DATAROOM;
	uint32_t frame = (uint32_t)mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

	/* jumbo frames in one mbuf, with slack for PMDs that want more than the frame
	 * (af_packet's framesz includes its own header) */
	if (frame > room)
		room = RTE_ALIGN_CEIL(frame + 256u, 1024u);
	return (uint16_t)(room + RTE_PKTMBUF_HEADROOM);
}

/* DPDK_POOL_FRAME_BYTES of frame room in mbufs, one less than a power of two where that
 * fits (what a ring-backed mempool sizes best), at least DPDK_MBUFS_MIN. */
uint32_t dpdk_pool_tx_default(uint16_t mtu)
{
	uint32_t n = DPDK_POOL_FRAME_BYTES / (dpdk_pool_room(mtu) - RTE_PKTMBUF_HEADROOM);

	if ((n & (n - 1)) == 0)
		n--;
	return n < DPDK_MBUFS_MIN ? DPDK_MBUFS_MIN : n;
}

/* A NIC fills its whole receive ring ahead (memif and af_packet take an mbuf per frame as
 * it arrives): the receive pool has those descriptors on top. */
uint32_t dpdk_pool_rx_default(uint16_t mtu)
{
	return dpdk_pool_tx_default(mtu) + DPDK_RING;
}

static unsigned pool_cache(uint32_t n)
{
	return n / 16u < DPDK_POOL_CACHE_MAX ? n / 16u : DPDK_POOL_CACHE_MAX;
}

/* rte_pktmbuf_pool_create, but without hugepages the mbufs are packed: such memory is not
 * IOVA-contiguous anyway (only virtual devices or an IOMMU in VA mode use it), and keeping
 * each mbuf inside one 4 KiB page, as the default layout does, gives a 2 KiB mbuf (2.3 KiB
 * with its headers) a whole page. */
struct rte_mempool *dpdk_pool_make(const char *name, uint32_t n, uint16_t room, int socket)
{
	struct rte_pktmbuf_pool_private priv = { .mbuf_data_room_size = room };
	unsigned flags = rte_eal_has_hugepages() ? 0 : RTE_MEMPOOL_F_NO_IOVA_CONTIG;
	struct rte_mempool *mp;
	int rc;

	mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) + room, pool_cache(n),
				      sizeof(priv), socket, flags);
	if (mp == NULL)
		return NULL;
	rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
	if (rc == 0) {
		rte_pktmbuf_pool_init(mp, &priv);
		rc = rte_mempool_populate_default(mp);
	}
	if (rc < 0) {
		rte_mempool_free(mp);
		rte_errno = -rc;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}

/* An empty receive pool drops frames at the PMD: TCP retransmits them, so the connections
 * slow down instead of failing. A transmit pool whose send queues reached their bound
 * (tcp_sq_mbufs_max: three quarters) refuses sends with -ENOBUFS until acknowledgements free
 * mbufs: backpressure, which many connections sending at once make slow. Neither says why
 * on its own: each is said once per port. Looked at every DPDK_POOL_LOOK_NS: counting a
 * pool's free mbufs reads every lcore's cache. */
#define DPDK_POOL_LOOK_NS 100000000ull

static bool pool_sq_full(const struct dpdk_port *p)
{
	struct tcp_stack_stats st;

	tcp_stack_get_stats(p->stack, &st);
	return st.sq_full != 0;
}

void dpdk_pool_watch(struct dpdk_port *p, uint64_t now)
{
	if (now < p->pool_look_ns || (p->rx_dry_told && p->tx_dry_told))
		return;
	p->pool_look_ns = now + DPDK_POOL_LOOK_NS;
	if (!p->rx_dry_told && rte_mempool_avail_count(p->pool) < DPDK_BURST) {
		p->rx_dry_told = true;
		fprintf(stderr, "softrnic: port %s: the receive pool's %u mbufs are all in use "
			"(data received and not yet consumed): frames are dropped and retransmitted "
			"until consumers free some; raise key 'mbufs' (docs/dpdk.md)\n", p->name,
			p->pool->size);
	}
	if (!p->tx_dry_told && pool_sq_full(p)) {
		p->tx_dry_told = true;
		fprintf(stderr, "softrnic: port %s: the transmit pool's %u mbufs are taken by data "
			"queued for sending: sends wait for acknowledgements to free some; raise key "
			"'tx_mbufs' (docs/dpdk.md)\n", p->name, p->tx_pool->size);
	}
}
