/* An in-memory rn_conn for driving a QP without a socket: recv hands out a fixed byte
 * stream in chunks whose sizes follow a seed (so FPDUs split anywhere), stopping at
 * "barriers" where it reports -EAGAIN once (the harness acts between two reads), then the end
 * of stream or -EAGAIN forever; sendv captures everything the QP sends. The wire state lives
 * in struct mem_wire, owned by the caller, so what was sent stays readable after the QP
 * closed or reset the handle. Optionally lends its octets (recv_lend) as a user-space engine
 * does, each run a separate heap block of exactly its size. */
#ifndef MEM_CONN_H
#define MEM_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "growbuf.h"
#include "rn_transport.h"

#define MEM_WIRE_BARRIERS 16u

struct mem_wire {
	/* what the peer sends: the stream and where the harness wants a pause */
	const uint8_t *rx;
	size_t rx_len, rx_off;
	size_t barrier[MEM_WIRE_BARRIERS]; /* stream offsets, increasing */
	unsigned nbarrier, next_barrier;
	bool barrier_hit;                  /* recv stopped at a barrier since the last check */
	bool fin;                          /* end of stream after rx_len octets (else -EAGAIN) */
	uint32_t rng;                      /* chunk sizes */
	/* what the QP sends */
	struct growbuf tx;
	bool tx_shut;                      /* shutdown_write was called */
	bool tx_tight;                     /* sendv takes a few octets a call (a full window) */
	bool closed, aborted;              /* the handle was released, and how */
};

/* A stream handle over w (which must outlive it); lend selects the recv_lend variant. */
struct rn_conn *mem_conn_new(struct mem_wire *w, bool lend);
/* Frees what the wire allocated (the captured octets). */
void mem_wire_fini(struct mem_wire *w);

#endif
