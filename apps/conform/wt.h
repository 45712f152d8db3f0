/* The wire target (wt_target.c): the device-under-test side of the wire checks. */
#ifndef WT_H
#define WT_H

#include <stdbool.h>

/* Serves the wire checks on rdma_cm port `port` of addr (NULL: every address) and reports
 * each connection's end to the peers on the control port, until SIGTERM or SIGINT; 0 then,
 * 1 if it could not start. writable_r is a fault on purpose: the read-only region also
 * takes remote writes, as a device that ignored access rights would (the proof that the
 * scripted peer's checks can fail). */
int wt_serve(const char *addr, const char *port, const char *ctl_addr, const char *ctl_port,
	     bool writable_r);

#endif
