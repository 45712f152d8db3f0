/* VI/TCP at the host's well-known port (D241 on this wire, D276): as on iWARP, every process's
 * NIC listens at its own port, and one NIC of the host also holds the well-known port P (the
 * draft's "one transport layer port reserved for passive connection establishment"). A
 * ConnectRequest arriving at P for a discriminator another process of the host waits for is
 * answered with a ConnectReject carrying softrnic's redirect option (the waiting NIC's
 * address); the requester connects there within the same call. Whoever has P apart from its
 * own port keeps it until it closes; the others try to take it every VIPL_RDV_RETAKE_MS.
 * NIC lock held. */
#include "vitcp.h"

#include <string.h>

static bool own_is_rdv(const struct vipl_nic *nic)
{
	return nic->vt_listener != NULL && nic->sin.sin_port == nic->rdv_port;
}

void vt_rdv_take(struct vipl_nic *nic, uint64_t now)
{
	nic->vt_rdv_retry_ms = 0;
	if (own_is_rdv(nic) || nic->vt_rdv != NULL || nic->vt_tp == NULL)
		return;
	uint16_t port;
	nic->vt_rdv = vt_listen_at(nic, nic->rdv_port, &port);
	if (nic->vt_rdv != NULL) {
		nic->vt_rdv_fd = rn_conn_fd(nic->vt_rdv);
		return;
	}
	nic->vt_rdv_retry_ms = now + VIPL_RDV_RETAKE_MS;
	vipl_nic_wake(nic); /* a new timer for the NIC thread */
}

void vt_rdv_timers(struct vipl_nic *nic, uint64_t now, uint64_t *next)
{
	if (nic->vt_rdv_retry_ms != 0 && now >= nic->vt_rdv_retry_ms)
		vt_rdv_take(nic, now);
	if (nic->vt_rdv_retry_ms != 0 && (*next == 0 || nic->vt_rdv_retry_ms < *next))
		*next = nic->vt_rdv_retry_ms;
}

bool vt_at_rdv(const struct vt_conn *c)
{
	return c->at_rdv || own_is_rdv(c->nic);
}

int vt_forward(struct vt_conn *c, const uint8_t *called, size_t called_len)
{
	struct vipl_nic *nic = c->nic;
	uint8_t host[VIPL_ADDR_LEN];
	if (!vt_at_rdv(c) || vipl_reg_local(nic, called, called_len) ||
	    vipl_reg_lookup(nic, called, called_len, host) != 0)
		return -1;
	uint8_t buf[VT_HDR_LEN + VT_CE_LEN + VT_CE_OPTS_MAX];
	struct vt_ce ce = { .has_redirect = true };
	memcpy(ce.redirect, host, VIPL_ADDR_LEN);
	size_t n = VT_HDR_LEN + vt_ce_put(buf + VT_HDR_LEN, &ce);
	struct vt_hdr h;
	vt_hdr_fill(c, &h, VT_F_EOM | VT_CONN_REJECT, c->tx_msgno);
	h.seg_len = (uint16_t)n;
	vt_hdr_put(buf, &h);
	if (c->req != NULL)
		c->req->vt = NULL;
	c->req = NULL;
	(void)vt_queue(c, buf, n);
	vt_close_after(c, VIPL_GRAVE_MS);
	return 0;
}
