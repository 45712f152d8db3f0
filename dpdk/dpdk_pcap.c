/* pcap capture of a port's traffic (dpdk_pcap.h): a dead pcap handle of link type
 * EN10MB and a dump file; frames are copied out of the mbuf chain into one buffer. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#include <rte_mbuf.h>

#include "dpdk_pcap.h"

/* Jumbo frames (MTU 9000) fit whole. */
#define RN_PCAP_SNAP 9216u

struct dpdk_pcap {
	pcap_t *dead;
	pcap_dumper_t *dump;
	uint64_t frames;
	uint8_t buf[RN_PCAP_SNAP];
};

int dpdk_pcap_open(const char *path, struct dpdk_pcap **out, char *err, size_t errlen)
{
	struct dpdk_pcap *pc = calloc(1, sizeof(*pc));

	if (pc == NULL) {
		snprintf(err, errlen, "pcap '%s': out of memory", path);
		return -ENOMEM;
	}
	pc->dead = pcap_open_dead(DLT_EN10MB, (int)RN_PCAP_SNAP);
	if (pc->dead == NULL) {
		free(pc);
		snprintf(err, errlen, "pcap '%s': pcap_open_dead failed", path);
		return -EIO;
	}
	pc->dump = pcap_dump_open(pc->dead, path);
	if (pc->dump == NULL) {
		snprintf(err, errlen, "pcap: cannot write '%s': %s (key 'pcap')", path,
			 pcap_geterr(pc->dead));
		pcap_close(pc->dead);
		free(pc);
		return -EIO;
	}
	*out = pc;
	return 0;
}

void dpdk_pcap_frame(struct dpdk_pcap *pc, const struct rte_mbuf *m)
{
	struct pcap_pkthdr h;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint32_t cap = len < RN_PCAP_SNAP ? len : RN_PCAP_SNAP;
	const void *p;

	gettimeofday(&h.ts, NULL);
	h.len = len;
	h.caplen = cap;
	p = rte_pktmbuf_read(m, 0, cap, pc->buf);
	if (p == NULL)
		return;
	pcap_dump((u_char *)pc->dump, &h, p);
	pc->frames++;
}

uint64_t dpdk_pcap_count(const struct dpdk_pcap *pc)
{
	return pc != NULL ? pc->frames : 0;
}

void dpdk_pcap_close(struct dpdk_pcap *pc)
{
	if (pc == NULL)
		return;
	pcap_dump_close(pc->dump);
	pcap_close(pc->dead);
	free(pc);
}
