/* Descriptor leases, the engine's side (rn_fdlease.c; the owner's side, rn_fd_close, is in
 * rn_transport.h). */
#ifndef RN_FDLEASE_H
#define RN_FDLEASE_H

#include <stdbool.h>

/* Keep fd's number open until the matching rn_fd_release, whatever its owner does: a
 * rn_fd_close meanwhile is carried out by the last release. The caller must know that fd
 * is its owner's open descriptor at the time of the call (it reads it under the owner's
 * lock). 0, or -EBADF / -ENOMEM. */
int rn_fd_hold(int fd);
void rn_fd_release(int fd);
/* The owner closed fd while it was held, and the last release has not come yet (tests). */
bool rn_fd_close_pending(int fd);

#endif
