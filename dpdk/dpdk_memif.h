/* dpdk_memif: what the port must know about DPDK's memif PMD from its --vdev arguments.
 *
 * memif carries a frame in buffers of `bsize` octets (default 2048) and chains buffers for a
 * longer one. DPDK 22.11's chained transmit leaves a stale "next" flag on a chain's first
 * descriptor when that slot once held the middle of a chain, and its receive then reads past
 * what the peer published: old frames come back by the thousand (PAWS drops, duplicate
 * segments, headers of garbage) whenever a frame of the MTU needs more than one buffer. So
 * softrnic never lets memif chain: a frame of the port's MTU must fit one buffer.
 * Pure string work, no DPDK calls, so tests need no EAL. */
#ifndef DPDK_MEMIF_H
#define DPDK_MEMIF_H

#include <stdbool.h>
#include <stddef.h>

#define DPDK_MEMIF_BSIZE_DEFAULT 2048u /* DPDK's default pkt_buffer_size */
#define DPDK_MEMIF_BSIZE_MAX 65535u    /* memif descriptors hold 16-bit lengths here */

/* The octets of one memif buffer that a frame of this MTU needs (Ethernet header, no FCS). */
unsigned dpdk_memif_frame(unsigned mtu);

/* Whether a --vdev value names a memif device ("net_memif0,...", alias "eth_memif"). */
bool dpdk_memif_is_vdev(const char *vdev);

/* The buffer size memif devargs ("socket=...,role=...,bsize=N") ask for; the default when they
 * do not say; 0 when bsize's value is not a number in 1..DPDK_MEMIF_BSIZE_MAX. */
unsigned dpdk_memif_bsize(const char *args);

/* Whether memif devargs make this end the client (role=client, or the older role=slave). */
bool dpdk_memif_is_client(const char *args);

/* The socket path memif devargs name (DPDK's default when they do not) into out; its length,
 * or 0 when out is too small. */
#define DPDK_MEMIF_SOCKET_DEFAULT "/run/memif.sock"
size_t dpdk_memif_socket(const char *args, char *out, size_t outlen);

/* For a memif --vdev value without bsize whose default buffers cannot hold a frame of mtu:
 * writes the value with ",bsize=N" appended (N the frame rounded up to 128) into out and
 * returns 1. 0: nothing to add (not memif, bsize given, or the default fits). -E2BIG: out is
 * too small, or the frame exceeds DPDK_MEMIF_BSIZE_MAX. */
int dpdk_memif_fit(const char *vdev, unsigned mtu, char *out, size_t outlen);

#endif
