/* The listeners of a NIC (docs/vipl.md "Several processes per host"). Every process that opens
 * a NIC is a NIC of its own, listening at its own address: port P + unit (P = the host's
 * well-known VIPL port, 7447 or SOFTRNIC_VIPL_ADDR's), or any free port when another process
 * has that one. One NIC of the host also holds P itself, the rendezvous: a request that
 * arrives there for a discriminator another process waits for is redirected to that process
 * (vipl_cm.c, vipl_registry.c), so a host name with port P reaches every VIA process of the
 * host. Whoever has P apart from its own port gives it up only by closing; the others try to
 * take it every VIPL_RDV_RETAKE_MS, so the rendezvous outlives the process that had it. */
#include "vipl_int.h"

#include <arpa/inet.h>
#include <string.h>

static struct rdma_cm_id *listen_on(struct vipl_nic *nic, uint16_t port)
{
	struct rdma_cm_id *id;
	struct sockaddr_in sin = nic->bind_sin;
	sin.sin_port = port;
	if (rdma_create_id(nic->ech, &id, NULL, RDMA_PS_TCP) != 0)
		return NULL;
	if (rdma_bind_addr(id, (struct sockaddr *)&sin) != 0 ||
	    rdma_listen(id, VIPL_BACKLOG_MAX) != 0) {
		rdma_destroy_id(id);
		return NULL;
	}
	return id;
}

/* The NIC's own listener: its port, else any free one (the NIC's address follows). */
int vipl_listen(struct vipl_nic *nic)
{
	if (nic->listener != NULL)
		return 0;
	nic->listener = listen_on(nic, nic->sin.sin_port);
	if (nic->listener == NULL)
		nic->listener = listen_on(nic, 0);
	if (nic->listener == NULL)
		return -1;
	nic->sin.sin_port = rdma_get_src_port(nic->listener);
	memcpy(nic->addr + 4, &nic->sin.sin_port, 2);
	return 0;
}

static bool own_is_rdv(const struct vipl_nic *nic)
{
	return nic->listener != NULL && nic->sin.sin_port == nic->rdv_port;
}

static void rdv_take(struct vipl_nic *nic, uint64_t now)
{
	nic->rdv_retry_ms = 0;
	if (own_is_rdv(nic) || nic->rdv != NULL)
		return;
	nic->rdv = listen_on(nic, nic->rdv_port);
	if (nic->rdv == NULL) {
		nic->rdv_retry_ms = now + VIPL_RDV_RETAKE_MS;
		vipl_nic_wake(nic); /* a new timer for the NIC thread */
	}
}

int vipl_nic_listen_all(struct vipl_nic *nic)
{
	int rc = vipl_listen(nic);
	rdv_take(nic, vipl_now_ms());
	return rc;
}

bool vipl_rdv_is(const struct vipl_nic *nic, const struct rdma_cm_id *listen_id)
{
	return listen_id != NULL &&
	       (listen_id == nic->rdv || (listen_id == nic->listener && own_is_rdv(nic)));
}

void vipl_rdv_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next)
{
	if (nic->rdv_retry_ms != 0 && now >= nic->rdv_retry_ms)
		rdv_take(nic, now);
	if (nic->rdv_retry_ms != 0 && (*next == 0 || nic->rdv_retry_ms < *next))
		*next = nic->rdv_retry_ms;
}

/* host names a NIC by the host's well-known port: which process serves it is found by
 * discriminator, not by address. */
bool vipl_rdv_named(const struct vipl_nic *nic, const uint8_t *host)
{
	return memcmp(host + 4, &nic->rdv_port, 2) == 0;
}
