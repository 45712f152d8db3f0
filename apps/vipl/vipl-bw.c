/* vipl-bw: one-way VIPL send bandwidth. The client keeps up to -w sends posted; the server
 * keeps 2*w receives posted and returns a 4-byte credit message for every w/2 receives it
 * has re-posted, so no send ever finds an empty receive queue (RD/RR would break the
 * connection, VIA §2.5). MB/s = 10^6 bytes per second; -v checks every message's pattern. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vp.h"

#define MAX_MSG 65536
#define CREDIT_RECVS 8

struct bw {
	struct vp v;
	unsigned w, nrecv, batch;
	uint8_t **sbuf, **rbuf;
	VIP_DESCRIPTOR **sd, **rd, *cd[CREDIT_RECVS], *csend;
	uint32_t *cbuf[CREDIT_RECVS], *csbuf;
};

static int setup(struct bw *b)
{
	struct vp *v = &b->v;
	b->w = v->o.window;
	b->nrecv = 2 * b->w;
	b->batch = b->w / 2 ? b->w / 2 : 1;
	unsigned nbuf = v->o.server ? b->nrecv : b->w;
	b->sbuf = calloc(nbuf, sizeof *b->sbuf);
	b->sd = calloc(nbuf, sizeof *b->sd);
	if (!b->sbuf || !b->sd)
		return -1;
	b->rbuf = b->sbuf, b->rd = b->sd;
	for (unsigned i = 0; i < nbuf; i++) {
		b->sbuf[i] = vp_alloc(v, MAX_MSG);
		b->sd[i] = vp_desc(v, b->sbuf[i], MAX_MSG);
		if (!b->sd[i])
			return fprintf(stderr, "vipl-bw: registered buffer too small\n"), -1;
	}
	for (unsigned i = 0; i < CREDIT_RECVS; i++) {
		b->cbuf[i] = vp_alloc(v, 64);
		b->cd[i] = vp_desc(v, b->cbuf[i], 4);
	}
	b->csbuf = vp_alloc(v, 64);
	b->csend = vp_desc(v, b->csbuf, 4);
	if (!b->csend)
		return -1;
	/* receives go up before the connection (client: credit messages; server: data) */
	if (v->o.server) {
		for (unsigned i = 0; i < b->nrecv; i++)
			if (vp_post_recv(v, b->rd[i]))
				return -1;
	} else {
		for (unsigned i = 0; i < CREDIT_RECVS; i++)
			if (vp_post_recv(v, b->cd[i]))
				return -1;
	}
	return 0;
}

static int server_size(struct bw *b, uint32_t size, unsigned long n)
{
	struct vp *v = &b->v;
	unsigned since = 0;
	for (unsigned long i = 0; i < n; i++) {
		VIP_DESCRIPTOR *d = vp_wait_recv(v);
		if (!d)
			return -1;
		uint8_t *buf = d->DS[0].Local.Data.Address;
		if (d->CS.Length != size || (v->o.verify && !vp_check(buf, size, (uint32_t)i)))
			return fprintf(stderr, "message %lu: %u bytes, expected %u\n", i,
				       d->CS.Length, size), -1;
		d->CS.Length = MAX_MSG;
		if (vp_post_recv(v, d))
			return -1;
		if (++since == b->batch || i + 1 == n) {
			*b->csbuf = since;
			since = 0;
			if (vp_post_send(v, b->csend, 4) || !vp_wait_send(v))
				return -1;
		}
	}
	return 0;
}

static int client_size(struct bw *b, uint32_t size, unsigned long n, uint64_t *ns)
{
	struct vp *v = &b->v;
	unsigned long credits = b->nrecv, acked = 0;
	unsigned outstanding = 0, head = 0;
	uint64_t t0 = vp_now_ns();
	for (unsigned long i = 0; i < n || outstanding || acked < n;) {
		/* reap a completed send when the window is full or everything is posted */
		if (outstanding && (outstanding == b->w || i == n)) {
			if (!vp_wait_send(v))
				return -1;
			head = (head + 1) % b->w;
			outstanding--;
			continue;
		}
		if (i < n && credits > 0) {
			unsigned k = (head + outstanding) % b->w;
			if (v->o.verify)
				vp_fill(b->sbuf[k], size, (uint32_t)i);
			if (vp_post_send(v, b->sd[k], size))
				return -1;
			outstanding++, credits--, i++;
			continue;
		}
		/* out of credits, or all sent: wait for the server's credit message */
		VIP_DESCRIPTOR *d = vp_wait_recv(v);
		if (!d)
			return -1;
		uint32_t c = *(uint32_t *)d->DS[0].Local.Data.Address;
		credits += c, acked += c;
		if (vp_post_recv(v, d))
			return -1;
	}
	*ns = vp_now_ns() - t0;
	return 0;
}

int main(int argc, char **argv)
{
	struct bw b;
	memset(&b, 0, sizeof b);
	if (vp_parse(&b.v.o, argc, argv, "vipl-bw", true))
		return 2;
	if (b.v.o.size > MAX_MSG || b.v.o.size == 0)
		return fprintf(stderr, "vipl-bw: -S between 1 and %d\n", MAX_MSG), 2;
	unsigned nbuf = b.v.o.server ? 2 * b.v.o.window : b.v.o.window;
	int rc = 1;
	if (vp_open(&b.v, (size_t)nbuf * (MAX_MSG + 128) + 64 * 1024) || setup(&b) ||
	    vp_connect(&b.v))
		goto out;
	uint32_t sizes[32];
	unsigned nsz = vp_sizes(&b.v, sizes, 32);
	if (!b.v.o.server) {
		printf("VIPL send bandwidth: window %u, %lu messages per size%s\n", b.w,
		       b.v.o.iters, b.v.o.verify ? ", verified" : "");
		vp_bw_header();
	}
	for (unsigned i = 0; i < nsz; i++) {
		uint64_t ns = 0;
		if (b.v.o.server ? server_size(&b, sizes[i], b.v.o.iters)
				 : client_size(&b, sizes[i], b.v.o.iters, &ns))
			goto out;
		if (!b.v.o.server)
			vp_bw_report(sizes[i], b.v.o.iters, ns);
	}
	rc = 0;
out:
	vp_close(&b.v);
	free(b.sbuf);
	free(b.sd);
	return rc;
}
