/* vp_run: the measured exchanges of the VIPL example programs, as blocks a caller repeats:
 * vipl-pingpong's round trip and vipl-bw's credit-paced stream, also run interleaved with
 * their raw-verbs twins by bench/vipl/vipl_mix. */
#include <stdio.h>
#include <stdlib.h>

#include "vp.h"

/* One exchange: client sends then receives, server receives then sends. */
int vp_pp_exchange(struct vp *v, struct vp_pp *p, uint32_t size, uint32_t seq)
{
	if (v->o.server) {
		VIP_DESCRIPTOR *d = vp_wait_recv(v);
		if (!d || d->CS.Length != size || (v->o.verify && !vp_check(p->rbuf, size, seq)))
			return d ? fprintf(stderr, "server: got %u bytes, expected %u\n",
					   d->CS.Length, size), -1 : -1;
		if (vp_post_recv(v, p->rd))
			return -1;
		if (v->o.verify)
			vp_fill(p->sbuf, size, seq ^ 0x5555);
		if (vp_post_send(v, p->sd, size) || !vp_wait_send(v))
			return -1;
		return 0;
	}
	if (v->o.verify)
		vp_fill(p->sbuf, size, seq);
	if (vp_post_send(v, p->sd, size))
		return -1;
	VIP_DESCRIPTOR *d = vp_wait_recv(v);
	if (!d || d->CS.Length != size || (v->o.verify && !vp_check(p->rbuf, size, seq ^ 0x5555)))
		return d ? fprintf(stderr, "client: got %u bytes, expected %u\n", d->CS.Length,
				   size), -1 : -1;
	if (vp_post_recv(v, p->rd) || !vp_wait_send(v))
		return -1;
	return 0;
}

int vp_pp_setup(struct vp *v, struct vp_pp *p)
{
	p->sbuf = vp_alloc(v, VP_MAX_MSG);
	p->rbuf = vp_alloc(v, VP_MAX_MSG);
	p->sd = vp_desc(v, p->sbuf, 0);
	p->rd = vp_desc(v, p->rbuf, VP_MAX_MSG);
	/* the receive is posted before the connection exists (allowed in Idle, VIA §5.1) */
	return p->rd ? vp_post_recv(v, p->rd) : -1;
}

int vp_bw_setup(struct vp *v, struct vp_bw *b)
{
	b->w = v->o.window;
	b->nrecv = 2 * b->w;
	b->batch = b->w / 2 ? b->w / 2 : 1;
	unsigned nbuf = v->o.server ? b->nrecv : b->w;
	b->buf = calloc(nbuf, sizeof *b->buf);
	b->d = calloc(nbuf, sizeof *b->d);
	if (!b->buf || !b->d)
		return -1;
	for (unsigned i = 0; i < nbuf; i++) {
		b->buf[i] = vp_alloc(v, VP_MAX_MSG);
		b->d[i] = vp_desc(v, b->buf[i], VP_MAX_MSG);
		if (!b->d[i])
			return fprintf(stderr, "vipl-bw: registered buffer too small\n"), -1;
	}
	for (unsigned i = 0; i < VP_CREDIT_RECVS; i++) {
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
			if (vp_post_recv(v, b->d[i]))
				return -1;
	} else {
		for (unsigned i = 0; i < VP_CREDIT_RECVS; i++)
			if (vp_post_recv(v, b->cd[i]))
				return -1;
	}
	return 0;
}

int vp_bw_grant(struct vp *v, struct vp_bw *b)
{
	if (v->o.server) {
		*b->csbuf = b->nrecv;
		return vp_post_send(v, b->csend, 4) || !vp_wait_send(v) ? -1 : 0;
	}
	VIP_DESCRIPTOR *d = vp_wait_recv(v);
	if (!d)
		return -1;
	uint32_t c = *(uint32_t *)d->DS[0].Local.Data.Address;
	if (d->CS.Length != 4 || c == 0)
		return fprintf(stderr, "vipl-bw: the server granted no receives\n"), -1;
	b->credits = c;
	return vp_post_recv(v, d);
}

void vp_bw_free(struct vp_bw *b)
{
	free(b->buf);
	free(b->d);
	b->buf = NULL;
	b->d = NULL;
}

/* Every receive is posted again and every credit returned by the end: the next block starts
 * where this one did. */
int vp_bw_server(struct vp *v, struct vp_bw *b, uint32_t size, unsigned long n)
{
	unsigned since = 0;
	for (unsigned long i = 0; i < n; i++) {
		VIP_DESCRIPTOR *d = vp_wait_recv(v);
		if (!d)
			return -1;
		uint8_t *buf = d->DS[0].Local.Data.Address;
		if (d->CS.Length != size || (v->o.verify && !vp_check(buf, size, (uint32_t)i)))
			return fprintf(stderr, "message %lu: %u bytes, expected %u\n", i,
				       d->CS.Length, size), -1;
		d->CS.Length = VP_MAX_MSG;
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

int vp_bw_client(struct vp *v, struct vp_bw *b, uint32_t size, unsigned long n, uint64_t *ns)
{
	unsigned long credits = b->credits, acked = 0;
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
				vp_fill(b->buf[k], size, (uint32_t)i);
			if (vp_post_send(v, b->d[k], size))
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
	b->credits = credits; /* every one back: the grant again */
	*ns = vp_now_ns() - t0;
	return 0;
}
