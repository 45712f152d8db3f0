/* Capture of a DPDK port's frames into a libpcap file (Ethernet link type), for Wireshark /
 * tshark. Private to the port; called with the port lock held (no locking of its own). */
#ifndef DPDK_PCAP_H
#define DPDK_PCAP_H

#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;
struct dpdk_pcap;

/* 0, or -EIO with the reason (naming the file) in err. */
int dpdk_pcap_open(const char *path, struct dpdk_pcap **out, char *err, size_t errlen);
/* One frame (a chain is written whole, up to the snap length), stamped now. */
void dpdk_pcap_frame(struct dpdk_pcap *pc, const struct rte_mbuf *m);
uint64_t dpdk_pcap_count(const struct dpdk_pcap *pc);
/* Flush and close; NULL is ignored. */
void dpdk_pcap_close(struct dpdk_pcap *pc);

#endif
