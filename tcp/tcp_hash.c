/* Connection lookup: an rte_hash on the 4-tuple (TIME_WAIT entries included), listener lookup
 * by port, and the ephemeral port choice (RFC 6056 algorithm 3). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>

#include "tcp_int.h"

#define EPH_LO 49152u
#define EPH_HI 65535u

/* 16 octets, not 12: rte_hash compares keys of 16 with one vector compare and others with
 * memcmp, which took 5-10 % of an RDMA Write target's core at MTU 1500 (a lookup per
 * segment). */
struct tcp_key {
	uint32_t laddr, raddr;
	uint16_t lport, rport;
	uint32_t zero;
};
_Static_assert(sizeof(struct tcp_key) == 16, "tcp_key: 16 octets, no padding");

static struct tcp_key make_key(uint32_t laddr, uint16_t lport, uint32_t raddr, uint16_t rport)
{
	struct tcp_key k;

	memset(&k, 0, sizeof(k));
	k.laddr = laddr;
	k.raddr = raddr;
	k.lport = lport;
	k.rport = rport;
	return k;
}

int tcp_hash_create(struct tcp_stack *s)
{
	struct rte_hash_parameters p;

	memset(&p, 0, sizeof(p));
	/* rte_hash names are process-global: the stack's address makes them unique. */
	snprintf(s->hash_name, sizeof(s->hash_name), "tcp%p", (void *)s);
	p.name = s->hash_name;
	p.entries = s->cfg.max_conns < 64 ? 64 : s->cfg.max_conns;
	p.key_len = sizeof(struct tcp_key);
	p.hash_func = rte_jhash;
	p.socket_id = (int)rte_socket_id();
	s->hash = rte_hash_create(&p);
	return s->hash ? 0 : -ENOMEM;
}

void tcp_hash_destroy(struct tcp_stack *s)
{
	rte_hash_free(s->hash);
	s->hash = NULL;
}

struct tcp_conn *tcp_hash_lookup(struct tcp_stack *s, uint32_t laddr, uint16_t lport,
				 uint32_t raddr, uint16_t rport)
{
	struct tcp_conn *c = s->hash_last;
	struct tcp_key k;
	void *data;

	/* A connection's segments come in runs; jhash and the bucket walk cost far more per
	 * segment than the compare below. */
	if (c && c->lport == lport && c->rport == rport && c->raddr == raddr && c->laddr == laddr)
		return c;
	k = make_key(laddr, lport, raddr, rport);
	if (rte_hash_lookup_data(s->hash, &k, &data) < 0)
		return NULL;
	s->hash_last = data;
	return data;
}

int tcp_hash_add(struct tcp_conn *c)
{
	struct tcp_key k = make_key(c->laddr, c->lport, c->raddr, c->rport);
	int rc;

	if (c->s->nconns >= c->s->cfg.max_conns)
		return -ENOMEM;
	rc = rte_hash_add_key_data(c->s->hash, &k, c);
	if (rc < 0)
		return rc == -ENOSPC ? -ENOMEM : rc;
	c->in_hash = true;
	c->s->nconns++;
	return 0;
}

void tcp_hash_del(struct tcp_conn *c)
{
	struct tcp_key k = make_key(c->laddr, c->lport, c->raddr, c->rport);

	if (!c->in_hash)
		return;
	rte_hash_del_key(c->s->hash, &k);
	if (c->s->hash_last == c)
		c->s->hash_last = NULL;
	c->in_hash = false;
	c->s->nconns--;
}

struct tcp_listener *tcp_listener_find(struct tcp_stack *s, uint16_t port)
{
	struct tcp_link *l;

	/* Few listeners per stack (an RNIC listens on a handful of ports): a list is enough. */
	for (l = s->listeners.next; l != &s->listeners; l = l->next) {
		struct tcp_listener *x = TCP_CONTAINER(l, struct tcp_listener, link);

		if (x->port == port)
			return x;
	}
	return NULL;
}

int tcp_port_pick(struct tcp_stack *s, uint32_t raddr, uint16_t rport, uint16_t *out)
{
	uint32_t laddr = net_if_ip(s->nif);
	uint32_t n = EPH_HI - EPH_LO + 1;
	uint32_t off = tcp_isn_port_offset(&s->isn, laddr, raddr, rte_cpu_to_be_16(rport));
	uint32_t i;

	/* RFC 6056 3.3.3: a per-destination offset plus a global counter. */
	for (i = 0; i < n; i++) {
		uint16_t p = (uint16_t)(EPH_LO + (off + s->next_port + i) % n);

		if (tcp_listener_find(s, p) || tcp_hash_lookup(s, laddr, p, raddr, rport))
			continue;
		s->next_port = (uint16_t)(s->next_port + i + 1);
		*out = p;
		return 0;
	}
	return -EADDRINUSE;
}
