/* vp: shared parts of the VIPL example programs (vipl-pingpong, vipl-bw): options, opening
 * the NIC, one registered buffer, connecting a VI as server or client, pattern checks and
 * perftest-style statistics. Only <vipl.h> is used. */
#ifndef VP_H
#define VP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vipl.h"

struct vp_opts {
	bool server;
	const char *peer;          /* client: server host[:port] */
	const char *local;         /* -l ip[:port]: this process's NIC address */
	const char *disc;          /* -d discriminator */
	unsigned long iters;       /* -n */
	uint32_t size;             /* -S */
	bool all_sizes;            /* -a: 2 B .. 64 KiB */
	VIP_RELIABILITY_LEVEL rel; /* -r ur|rd|rr */
	bool poll;                 /* -p: spin on Vip*Done instead of Vip*Wait */
	bool yield;                /* -y: as -p, with sched_yield() after each empty poll */
	bool verify;               /* -v */
	unsigned window;           /* -w (vipl-bw) */
	unsigned long timeout_ms;  /* -t: connection and completion waits */
};

struct vp {
	struct vp_opts o;
	VIP_NIC_HANDLE nic;
	VIP_NIC_ATTRIBUTES attr;
	VIP_PROTECTION_HANDLE ptag;
	VIP_VI_HANDLE vi;
	uint8_t *mem;
	size_t mem_len, used;
	VIP_MEM_HANDLE mh;
	uint8_t *pbuf;             /* server: the test parameters' receive (vp_params.c) */
	VIP_DESCRIPTOR *pd;
};

int vp_parse(struct vp_opts *o, int argc, char **argv, const char *prog, bool bw);
int vp_open(struct vp *v, size_t mem_len);
void *vp_alloc(struct vp *v, size_t len);
VIP_DESCRIPTOR *vp_desc(struct vp *v, void *buf, uint32_t len);
int vp_connect(struct vp *v);
void vp_close(struct vp *v);
int vp_post_send(struct vp *v, VIP_DESCRIPTOR *d, uint32_t len);
int vp_post_recv(struct vp *v, VIP_DESCRIPTOR *d);
VIP_DESCRIPTOR *vp_wait_recv(struct vp *v);
VIP_DESCRIPTOR *vp_wait_send(struct vp *v);
const char *vp_rc(VIP_RETURN rc);
/* The test's parameters from the client (vp_params.c): the server posts their receive before
 * any other, and after vp_connect the client sends them and the server takes them. */
int vp_params_post(struct vp *v);
int vp_params_exchange(struct vp *v);
uint64_t vp_now_ns(void);
void vp_fill(uint8_t *p, uint32_t len, uint32_t seed);
bool vp_check(const uint8_t *p, uint32_t len, uint32_t seed);
/* Sizes to run: opts' single size, or powers of two 2..65536 (capped by the MTU). */
unsigned vp_sizes(const struct vp *v, uint32_t *out, unsigned max);

/* The measured exchanges (vp_run.c), repeatable in blocks on one connection. */
#define VP_MAX_MSG 65536
#define VP_CREDIT_RECVS 8

/* Ping-pong (vipl-pingpong): setup before vp_connect posts the receive. */
struct vp_pp {
	uint8_t *sbuf, *rbuf;
	VIP_DESCRIPTOR *sd, *rd;
};
int vp_pp_setup(struct vp *v, struct vp_pp *p);
int vp_pp_exchange(struct vp *v, struct vp_pp *p, uint32_t size, uint32_t seq);

/* One-way stream (vipl-bw): the client keeps up to its o.window sends posted; the server
 * keeps 2 x its own window receives posted, grants them to the client in one credit message
 * once the test's parameters arrived, and returns a 4-byte credit message for every window /
 * 2 it re-posted, so no send finds an empty receive queue (RD/RR would break the connection,
 * VIA §2.5) and neither side needs the other's -w. Setup before vp_connect posts the
 * receives; each call moves n messages and ends with every credit returned. */
struct vp_bw {
	unsigned w, nrecv, batch;
	unsigned long credits;       /* client: receives the server has granted, unused */
	uint8_t **buf;               /* client: w send buffers; server: 2 x w receive buffers */
	VIP_DESCRIPTOR **d, *cd[VP_CREDIT_RECVS], *csend;
	uint32_t *cbuf[VP_CREDIT_RECVS], *csbuf;
};
int vp_bw_setup(struct vp *v, struct vp_bw *b);
/* After the parameters: the server grants its receives, the client takes the grant. */
int vp_bw_grant(struct vp *v, struct vp_bw *b);
int vp_bw_server(struct vp *v, struct vp_bw *b, uint32_t size, unsigned long n);
int vp_bw_client(struct vp *v, struct vp_bw *b, uint32_t size, unsigned long n, uint64_t *ns);
void vp_bw_free(struct vp_bw *b);

/* Latency report (one-way = RTT/2, microseconds): prints and returns 0. */
void vp_lat_header(void);
void vp_lat_report(uint32_t size, double *us, unsigned long n);
void vp_bw_header(void);
void vp_bw_report(uint32_t size, unsigned long n, uint64_t ns);

#endif
