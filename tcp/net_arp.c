/* ARP (RFC 826) for IPv4 over Ethernet: a fixed table of neighbours (net_int.h), requests
 * with retries, replies for our address, expiry, and a few IP packets held per neighbour
 * while its request is out. Entry life: FREE -> INCOMPLETE (request sent) -> REACHABLE
 * (reply or any ARP from it) -> FREE (expired unused, or in use and re-validation got no
 * answer); INCOMPLETE -> FREE after the last retry (held packets dropped, the upper layer
 * told through the unreach callback). */
#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "net_int.h"

static const uint8_t net_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static unsigned net_arp_bucket(uint32_t ip)
{
	/* Fibonacci hashing: neighbours on one subnet differ in the low octet. */
	return (unsigned)((ip * 2654435769u) >> 27) % NET_ARP_BUCKETS;
}

/* Index of ip's entry, or -1. */
static int net_arp_index(const struct net_if *nif, uint32_t ip)
{
	unsigned base = net_arp_bucket(ip) * NET_ARP_WAYS;

	for (unsigned i = base; i < base + NET_ARP_WAYS; i++)
		if (nif->arp[i].state != NET_ARP_FREE && nif->arp[i].ip == ip)
			return (int)i;
	return -1;
}

static struct net_arp_entry *net_arp_find(struct net_if *nif, uint32_t ip)
{
	int i = net_arp_index(nif, ip);

	return i < 0 ? NULL : &nif->arp[i];
}

static void net_arp_drop_held(struct net_if *nif, struct net_arp_entry *e)
{
	for (unsigned i = 0; i < e->nhold; i++)
		rte_pktmbuf_free(e->hold[i]);
	nif->st.arp_unresolved_drops += e->nhold;
	nif->arp_held -= e->nhold;
	e->nhold = 0;
}

/* A free slot in ip's bucket, else the dynamic reachable entry that expires first. */
static struct net_arp_entry *net_arp_slot(struct net_if *nif, uint32_t ip)
{
	struct net_arp_entry *b = &nif->arp[net_arp_bucket(ip) * NET_ARP_WAYS], *victim = NULL;

	for (unsigned i = 0; i < NET_ARP_WAYS; i++) {
		if (b[i].state == NET_ARP_FREE)
			return &b[i];
		if (b[i].state == NET_ARP_REACHABLE && !b[i].is_static &&
		    (victim == NULL || b[i].deadline_ns < victim->deadline_ns))
			victim = &b[i];
	}
	if (victim != NULL)
		memset(victim, 0, sizeof(*victim));
	return victim;
}

static void net_arp_arm(struct net_if *nif, uint64_t deadline)
{
	if (deadline < nif->next_arp_ns)
		nif->next_arp_ns = deadline;
}

static int net_arp_send(struct net_if *nif, uint16_t op, const uint8_t tha[6], uint32_t tip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(nif->cfg.pool);
	struct rte_arp_hdr *a;

	if (m == NULL) {
		nif->st.tx_drops++;
		return -ENOBUFS;
	}
	a = (struct rte_arp_hdr *)rte_pktmbuf_append(m, sizeof(*a));
	if (a == NULL) {
		rte_pktmbuf_free(m);
		nif->st.tx_drops++;
		return -ENOBUFS;
	}
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(op);
	memcpy(a->arp_data.arp_sha.addr_bytes, nif->cfg.mac, 6);
	a->arp_data.arp_sip = nif->cfg.ip;
	memcpy(a->arp_data.arp_tha.addr_bytes, tha, 6);
	a->arp_data.arp_tip = tip;
	if (op == RTE_ARP_OP_REQUEST)
		nif->st.arp_requests_out++;
	else
		nif->st.arp_replies_out++;
	/* Requests go to everyone; replies straight back to the asker. */
	return net_eth_output(nif, m, op == RTE_ARP_OP_REQUEST ? net_bcast : tha,
			      RTE_ETHER_TYPE_ARP);
}

static void net_arp_send_held(struct net_if *nif, struct net_arp_entry *e)
{
	for (unsigned i = 0; i < e->nhold; i++)
		net_eth_output(nif, e->hold[i], e->mac, RTE_ETHER_TYPE_IPV4);
	nif->arp_held -= e->nhold;
	e->nhold = 0;
}

/* RFC 826 merge: learn or refresh sender -> mac. create: also when unknown (we are the
 * target). */
static void net_arp_learn(struct net_if *nif, uint32_t ip, const uint8_t mac[6], bool create)
{
	struct net_arp_entry *e = net_arp_find(nif, ip);

	if (e == NULL) {
		if (!create || (e = net_arp_slot(nif, ip)) == NULL)
			return;
		e->ip = ip;
	}
	if (e->is_static)
		return;
	memcpy(e->mac, mac, 6);
	e->state = NET_ARP_REACHABLE;
	e->tries = 0;
	e->used = e->nhold > 0; /* a flow was waiting for it */
	e->deadline_ns = net_now(nif) + (uint64_t)nif->cfg.arp_timeout_ms * 1000000ull;
	net_arp_arm(nif, e->deadline_ns);
	net_arp_send_held(nif, e);
}

static bool net_arp_valid(const struct net_if *nif, const struct rte_arp_hdr *a)
{
	if (a->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    a->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || a->arp_hlen != 6 ||
	    a->arp_plen != 4)
		return false;
	/* A group sender MAC is forged; our own MAC looped back is nothing to learn. */
	if ((a->arp_data.arp_sha.addr_bytes[0] & 1u) != 0 ||
	    memcmp(a->arp_data.arp_sha.addr_bytes, nif->cfg.mac, 6) == 0)
		return false;
	return true;
}

void net_arp_input(struct net_if *nif, struct rte_mbuf *m)
{
	const struct rte_arp_hdr *a;
	uint16_t op;
	uint32_t sip, tip;
	uint8_t sha[6];

	if (rte_pktmbuf_data_len(m) < NET_ETH_HLEN + NET_ARP_PLEN) {
		nif->st.rx_bad_eth++;
		goto out;
	}
	a = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, NET_ETH_HLEN);
	op = rte_be_to_cpu_16(a->arp_opcode);
	if (!net_arp_valid(nif, a) || (op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY)) {
		nif->st.rx_bad_eth++;
		goto out;
	}
	if (op == RTE_ARP_OP_REQUEST)
		nif->st.arp_requests_in++;
	else
		nif->st.arp_replies_in++;
	sip = a->arp_data.arp_sip;
	tip = a->arp_data.arp_tip;
	memcpy(sha, a->arp_data.arp_sha.addr_bytes, 6);
	/* Sender 0.0.0.0 is a probe (RFC 5227): nothing to learn. Our own address as sender
	 * is a conflict: never learn it. */
	if (sip != 0 && sip != nif->cfg.ip)
		net_arp_learn(nif, sip, sha, tip == nif->cfg.ip);
	if (op == RTE_ARP_OP_REQUEST && tip == nif->cfg.ip)
		net_arp_send(nif, RTE_ARP_OP_REPLY, sha, sip);
out:
	rte_pktmbuf_free(m);
}

static int net_arp_hold(struct net_if *nif, struct net_arp_entry *e, struct rte_mbuf *m)
{
	if (e->nhold == NET_ARP_HOLD || nif->arp_held == NET_ARP_HOLD_ALL) {
		nif->st.arp_unresolved_drops++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	e->hold[e->nhold++] = m;
	nif->arp_held++;
	return 0;
}

int net_arp_output(struct net_if *nif, struct rte_mbuf *m, uint32_t nh)
{
	struct net_arp_entry *e = net_arp_find(nif, nh);

	if (nh == 0xffffffffu || nh == (nif->cfg.ip | ~nif->mask))
		return net_eth_output(nif, m, net_bcast, RTE_ETHER_TYPE_IPV4);
	if (e != NULL && e->state == NET_ARP_REACHABLE) {
		e->used = 1;
		return net_eth_output(nif, m, e->mac, RTE_ETHER_TYPE_IPV4);
	}
	if (e != NULL)
		return net_arp_hold(nif, e, m);
	e = net_arp_slot(nif, nh);
	if (e == NULL) {
		/* Every way of the bucket is static or waiting: no room to ask. */
		nif->st.arp_unresolved_drops++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	e->ip = nh;
	e->state = NET_ARP_INCOMPLETE;
	e->tries = 1;
	e->deadline_ns = net_now(nif) + (uint64_t)nif->cfg.arp_retry_ms * 1000000ull;
	net_arp_arm(nif, e->deadline_ns);
	net_arp_hold(nif, e, m);
	net_arp_send(nif, RTE_ARP_OP_REQUEST, (const uint8_t[6]){ 0 }, nh);
	return 0;
}

/* One entry's deadline passed: retry, give up, or expire. */
static void net_arp_due(struct net_if *nif, struct net_arp_entry *e, uint64_t now)
{
	uint32_t ip = e->ip;

	if (e->state == NET_ARP_REACHABLE) {
		/* In use: ask again while still sending to the known MAC, so that a busy flow
		 * never waits in the hold queue; unused or unanswered: forget it. */
		if (e->used && e->tries < nif->cfg.arp_retries) {
			e->tries++;
			e->deadline_ns = now + (uint64_t)nif->cfg.arp_retry_ms * 1000000ull;
			net_arp_send(nif, RTE_ARP_OP_REQUEST, (const uint8_t[6]){ 0 }, ip);
		} else {
			memset(e, 0, sizeof(*e));
		}
		return;
	}
	if (e->tries < nif->cfg.arp_retries) {
		e->tries++;
		e->deadline_ns = now + (uint64_t)nif->cfg.arp_retry_ms * 1000000ull;
		net_arp_send(nif, RTE_ARP_OP_REQUEST, (const uint8_t[6]){ 0 }, ip);
		return;
	}
	net_arp_drop_held(nif, e);
	memset(e, 0, sizeof(*e));
	if (nif->unreach != NULL)
		nif->unreach(nif->unreach_arg, ip);
}

uint64_t net_arp_poll(struct net_if *nif, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (unsigned i = 0; i < NET_ARP_SIZE; i++) {
		struct net_arp_entry *e = &nif->arp[i];

		if (e->state == NET_ARP_FREE || e->is_static)
			continue;
		if (e->deadline_ns <= now)
			net_arp_due(nif, e, now);
		if (e->state != NET_ARP_FREE && e->deadline_ns < next)
			next = e->deadline_ns;
	}
	return next;
}

void net_arp_flush_all(struct net_if *nif)
{
	for (unsigned i = 0; i < NET_ARP_SIZE; i++) {
		for (unsigned j = 0; j < nif->arp[i].nhold; j++)
			rte_pktmbuf_free(nif->arp[i].hold[j]);
		nif->arp[i].nhold = 0;
	}
	nif->arp_held = 0;
}

unsigned net_arp_count(const struct net_if *nif)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NET_ARP_SIZE; i++)
		n += nif->arp[i].state != NET_ARP_FREE;
	return n;
}

int net_arp_add(struct net_if *nif, uint32_t ip, const uint8_t mac[6])
{
	struct net_arp_entry *e;

	if (ip == 0 || ip == nif->cfg.ip || (mac[0] & 1u) != 0)
		return -EINVAL;
	e = net_arp_find(nif, ip);
	if (e == NULL) {
		e = net_arp_slot(nif, ip);
		if (e == NULL)
			return -ENOSPC;
		e->ip = ip;
	}
	memcpy(e->mac, mac, 6);
	e->state = NET_ARP_REACHABLE;
	e->is_static = 1;
	e->tries = 0;
	e->deadline_ns = UINT64_MAX;
	net_arp_send_held(nif, e);
	return 0;
}

bool net_arp_lookup(const struct net_if *nif, uint32_t ip, uint8_t mac[6])
{
	int i = net_arp_index(nif, ip);
	const struct net_arp_entry *e;

	if (i < 0 || nif->arp[i].state != NET_ARP_REACHABLE)
		return false;
	e = &nif->arp[i];
	if (mac != NULL)
		memcpy(mac, e->mac, 6);
	return true;
}
