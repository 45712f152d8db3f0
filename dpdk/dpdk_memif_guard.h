/* dpdk_memif_guard: keeps a memif server alive when a client closes its connection before the
 * server has greeted it.
 *
 * DPDK 22.11's memif_listener_handler accepts a connection in EAL's interrupt thread,
 * registers the new fd with EAL, then sends hello; when the client has closed by then the send
 * fails ("memif: sendmsg fail: Broken pipe") and the handler closes the fd without
 * unregistering it. EAL's interrupt thread then rebuilds its epoll set, finds the closed fd
 * and panics ("Error adding fd N epoll_ctl, Bad file descriptor"): any local process that
 * connects to the socket and quits, or a client that restarts or exits while the server is
 * slow to accept, kills the server. The guard is a callback behind memif's on the listener:
 * it finds a closed fd that EAL still has a source for and puts a never-readable eventfd in
 * its place, so the rebuild succeeds and the stale callback never runs (the fd and EAL's
 * source are kept for good: a few octets per such connection). */
#ifndef DPDK_MEMIF_GUARD_H
#define DPDK_MEMIF_GUARD_H

struct dpdk_memif_guard;

/* For a memif server whose listening socket is bound to path (abstract or not): finds that
 * socket among the process's fds and registers the guard behind memif's callback. NULL when it
 * cannot (no such socket, no memory): the port runs without it. */
struct dpdk_memif_guard *dpdk_memif_guard_arm(const char *path);
/* Unregisters (before the device closes its listener) and frees. NULL is ignored. */
void dpdk_memif_guard_disarm(struct dpdk_memif_guard *g);

#endif
