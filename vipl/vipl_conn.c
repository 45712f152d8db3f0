/* Connection calls (VIA §9.4, VIPL 1.0 peer-to-peer): ConnectWait / Accept / Reject on the
 * server, ConnectRequest on the client, Disconnect, and ConnectPeerRequest / Done / Wait.
 * The protocol work is in vipl_cm.c; these calls validate, start it and wait on the NIC's
 * condition variable. */
#include "vipl_int.h"

#include <errno.h>
#include <string.h>

static struct vipl_vi *vi_get(void *h)
{
	return (struct vipl_vi *)vipl_handle_get(h, VK_VI);
}

static void set_discs(struct vipl_vi *vi, const VIP_NET_ADDRESS *local,
		      const VIP_NET_ADDRESS *remote)
{
	vi->local_disc_len = local->DiscriminatorLen;
	memcpy(vi->local_disc, local->HostAddress + local->HostAddressLen, local->DiscriminatorLen);
	vi->remote_disc_len = remote->DiscriminatorLen;
	memcpy(vi->remote_disc, remote->HostAddress + remote->HostAddressLen,
	       remote->DiscriminatorLen);
	memcpy(vi->remote_host, remote->HostAddress, VIPL_ADDR_LEN);
}

/* Wait for the pending connect of vi (deadline 0: forever); NIC lock held. */
static VIP_RETURN wait_connect(struct vipl_vi *vi, uint64_t dl)
{
	while (vi->result == VIP_NOT_DONE && !vi->o.dead) {
		if (vipl_wait(vi->o.nic, dl) == ETIMEDOUT || (dl && vipl_now_ms() >= dl)) {
			if (vi->result != VIP_NOT_DONE)
				break;
			vipl_connect_done(vi, VIP_TIMEOUT);
		}
	}
	return vi->o.dead ? VIP_INVALID_PARAMETER : vi->result;
}

VIPL_EXPORT VIP_RETURN VipConnectRequest(VIP_VI_HANDLE ViHandle, VIP_NET_ADDRESS *LocalAddr,
					 VIP_NET_ADDRESS *RemoteAddr, VIP_ULONG Timeout,
					 VIP_VI_ATTRIBUTES *RemoteViAttribs)
{
	struct vipl_vi *vi = vi_get(ViHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (vi == NULL || vipl_addr_check(LocalAddr, false) || vipl_addr_check(RemoteAddr, true))
		goto out;
	struct vipl_nic *nic = vi->o.nic;
	pthread_mutex_lock(&nic->lock);
	if (vi->state != VIP_STATE_IDLE || vi->mode != CM_NONE) {
		rc = VIP_INVALID_STATE; /* VIA §5 names no code */
	} else if (Timeout == 0) {
		rc = VIP_TIMEOUT; /* §9.4.4: 0 is an immediate timeout */
	} else {
		set_discs(vi, LocalAddr, RemoteAddr);
		vi->granted_mtu = vi->attr.MaxTransferSize;
		vi->mode = CM_CLIENT;
		vi->result = VIP_NOT_DONE;
		vi->state = VIP_STATE_CONNECT_PENDING;
		uint64_t dl = vipl_deadline(Timeout);
		vi->deadline_ms = dl; /* told to the server (vipl_cm.c requester_timeout) */
		if (vipl_start_connect(vi) != 0)
			vipl_connect_done(vi, VIP_ERROR_RESOURCE);
		rc = wait_connect(vi, dl);
		if (rc == VIP_SUCCESS && RemoteViAttribs != NULL)
			*RemoteViAttribs = vi->remote;
	}
	pthread_mutex_unlock(&nic->lock);
out:
	vipl_handle_put(vi ? &vi->o : NULL);
	return rc;
}

static struct vipl_req *find_req(struct vipl_nic *nic, const VIP_NET_ADDRESS *local)
{
	const uint8_t *d = local->HostAddress + local->HostAddressLen;
	for (struct vipl_req *r = nic->reqs; r != NULL; r = r->next)
		if (!r->claimed && !r->dead &&
		    vipl_disc_cmp(r->called, r->called_len, d, local->DiscriminatorLen) == 0)
			return r;
	return NULL;
}

/* The requester's NIC address and discriminator: HostAddressLen (6) + DiscriminatorLen
 * octets after the 4-octet header, never more (§2.7). */
static void fill_remote(const struct vipl_req *r, VIP_NET_ADDRESS *ra, VIP_VI_ATTRIBUTES *attr)
{
	ra->HostAddressLen = VIPL_ADDR_LEN;
	ra->DiscriminatorLen = r->calling_len;
	memcpy(ra->HostAddress, r->host, VIPL_ADDR_LEN);
	memcpy(ra->HostAddress + VIPL_ADDR_LEN, r->calling, r->calling_len);
	if (attr != NULL) {
		memset(attr, 0, sizeof(*attr));
		attr->ReliabilityLevel = r->rel;
		attr->MaxTransferSize = r->mtu;
		attr->EnableRdmaWrite = (r->flags & PD_F_RDMAW) != 0;
		attr->EnableRdmaRead = (r->flags & PD_F_RDMAR) != 0;
	}
}

VIPL_EXPORT VIP_RETURN VipConnectWait(VIP_NIC_HANDLE NicHandle, VIP_NET_ADDRESS *LocalAddr,
				      VIP_ULONG Timeout, VIP_NET_ADDRESS *RemoteAddr,
				      VIP_VI_ATTRIBUTES *RemoteViAttribs,
				      VIP_CONN_HANDLE *ConnHandle)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (nic == NULL || vipl_addr_check(LocalAddr, false) || RemoteAddr == NULL ||
	    ConnHandle == NULL)
		goto out;
	uint64_t dl = vipl_deadline(Timeout);
	const uint8_t *disc = LocalAddr->HostAddress + LocalAddr->HostAddressLen;
	pthread_mutex_lock(&nic->lock);
	if (nic->wire->listen(nic) != 0) {
		rc = VIP_ERROR_RESOURCE;
	} else {
		/* other processes' requests for it reach this one through the host's port */
		(void)vipl_reg_add(nic, disc, LocalAddr->DiscriminatorLen);
		for (;;) {
			struct vipl_req *r = find_req(nic, LocalAddr);
			if (r != NULL) {
				if (vipl_handle_add(&r->o) == NULL) {
					rc = VIP_ERROR_RESOURCE;
					break;
				}
				r->claimed = true;
				fill_remote(r, RemoteAddr, RemoteViAttribs);
				*ConnHandle = r->o.handle;
				rc = VIP_SUCCESS;
				break;
			}
			if (Timeout == 0 || nic->o.dead) {
				rc = nic->o.dead ? VIP_INVALID_PARAMETER : VIP_TIMEOUT;
				break;
			}
			if (vipl_wait(nic, dl) == ETIMEDOUT || (dl && vipl_now_ms() >= dl)) {
				if ((r = find_req(nic, LocalAddr)) != NULL)
					continue;
				rc = VIP_TIMEOUT;
				break;
			}
		}
		if (!nic->o.dead)
			vipl_reg_del(nic, disc, LocalAddr->DiscriminatorLen);
	}
	pthread_mutex_unlock(&nic->lock);
out:
	vipl_handle_put(nic ? &nic->o : NULL);
	return rc;
}

static void req_drop(struct vipl_nic *nic, struct vipl_req *r)
{
	for (struct vipl_req **pp = &nic->reqs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			nic->nreqs--;
			break;
		}
	vipl_req_free(r);
}

/* The request stays valid when the attributes conflict (§9.4.2): the caller may change the
 * VI's attributes and accept again, or reject. */
VIPL_EXPORT VIP_RETURN VipConnectAccept(VIP_CONN_HANDLE ConnHandle, VIP_VI_HANDLE ViHandle)
{
	struct vipl_req *r = (struct vipl_req *)vipl_handle_get(ConnHandle, VK_CONN);
	struct vipl_vi *vi = vi_get(ViHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (r == NULL || vi == NULL || vi->o.nic != r->o.nic)
		goto out;
	struct vipl_nic *nic = vi->o.nic;
	pthread_mutex_lock(&nic->lock);
	if (r->o.dead || vi->o.dead) {
		rc = VIP_INVALID_PARAMETER;
	} else if (vi->state != VIP_STATE_IDLE || vi->mode != CM_NONE) {
		rc = VIP_INVALID_STATE;
	} else if (r->rel != vi->attr.ReliabilityLevel) {
		rc = VIP_INVALID_RELIABILITY_LEVEL;
	} else if (r->dead) {
		rc = VIP_ERROR_RESOURCE; /* the requester is gone */
		req_drop(nic, r);
	} else {
		vi->local_disc_len = r->called_len;
		memcpy(vi->local_disc, r->called, r->called_len);
		memcpy(vi->remote_host, r->host, VIPL_ADDR_LEN);
		vi->mode = CM_ACCEPT;
		vi->result = VIP_NOT_DONE;
		if (nic->wire->accept(vi, r) != 0) {
			vi->mode = CM_NONE;
			rc = VIP_ERROR_RESOURCE;
		} else {
			req_drop(nic, r);
			rc = wait_connect(vi, vipl_now_ms() + VIPL_ACCEPT_MS); /* VIA §5.1 */
		}
	}
	pthread_mutex_unlock(&nic->lock);
out:
	vipl_handle_put(r ? &r->o : NULL);
	vipl_handle_put(vi ? &vi->o : NULL);
	return rc;
}

size_t vipl_pdata_for(struct vipl_vi *vi, uint8_t kind, uint8_t *buf, size_t cap);

VIPL_EXPORT VIP_RETURN VipConnectReject(VIP_CONN_HANDLE ConnHandle)
{
	struct vipl_req *r = (struct vipl_req *)vipl_handle_get(ConnHandle, VK_CONN);
	if (r == NULL)
		return VIP_INVALID_PARAMETER;
	struct vipl_nic *nic = r->o.nic;
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	pthread_mutex_lock(&nic->lock);
	if (!r->o.dead) {
		if (!r->dead)
			nic->wire->reject(nic, r, PD_REJECT);
		req_drop(nic, r);
		rc = VIP_SUCCESS;
	}
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&r->o);
	return rc;
}

/* An abort (§4.2): every posted descriptor completes DESC_FLUSHED and the VI is Idle, from
 * Connected, Pending or Error; on an Idle VI the held receives are flushed (VIA §5.1). */
VIPL_EXPORT VIP_RETURN VipDisconnect(VIP_VI_HANDLE ViHandle)
{
	struct vipl_vi *vi = vi_get(ViHandle);
	if (vi == NULL)
		return VIP_INVALID_PARAMETER;
	struct vipl_nic *nic = vi->o.nic;
	pthread_mutex_lock(&nic->lock);
	if (vi->mode != CM_NONE)
		vipl_connect_done(vi, VIP_ERROR_RESOURCE); /* a peer connect in progress ends */
	else if (vi->state == VIP_STATE_CONNECTED && vipl_rr(vi))
		vipl_conn_bury_after(vi, vipl_rr_last_ack(vi));
	else
		vipl_conn_bury(vi);
	vi->peer = false;
	vi->state = VIP_STATE_IDLE;
	vipl_wq_flush(vi, &vi->sq);
	vipl_wq_flush(vi, &vi->rq);
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&vi->o);
	return VIP_SUCCESS;
}

/* VITCP §4 tie-break: the higher IPv4 address opens actively. On one host (two VIs of one
 * NIC, or processes that know each other by the host's name, which gives the well-known port
 * and not theirs, and may resolve to another of the host's addresses than the NIC's) the
 * discriminators decide, then the ports (D240). */
static int role(struct vipl_vi *vi)
{
	int c = memcmp(vi->o.nic->addr, vi->remote_host, 4);
	if (c != 0 && vipl_addr_is_local(vi->o.nic, vi->remote_host))
		c = 0; /* the same host */
	if (c == 0)
		c = vipl_disc_cmp(vi->local_disc, vi->local_disc_len, vi->remote_disc,
				  vi->remote_disc_len);
	if (c == 0)
		c = memcmp(vi->o.nic->addr + 4, vi->remote_host + 4, 2);
	return c;
}

VIPL_EXPORT VIP_RETURN VipConnectPeerRequest(VIP_VI_HANDLE ViHandle, VIP_NET_ADDRESS *LocalAddr,
					     VIP_NET_ADDRESS *RemoteAddr, VIP_ULONG Timeout)
{
	struct vipl_vi *vi = vi_get(ViHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (vi == NULL || vipl_addr_check(LocalAddr, false) || vipl_addr_check(RemoteAddr, true))
		goto out;
	struct vipl_nic *nic = vi->o.nic;
	pthread_mutex_lock(&nic->lock);
	if (vi->state != VIP_STATE_IDLE || vi->mode != CM_NONE) {
		rc = VIP_INVALID_STATE;
		goto unlock;
	}
	if (Timeout == 0) {
		rc = VIP_TIMEOUT;
		goto unlock;
	}
	set_discs(vi, LocalAddr, RemoteAddr);
	int c = role(vi);
	if (c == 0)
		goto unlock; /* connecting a VI to its own address */
	vi->granted_mtu = vi->attr.MaxTransferSize;
	vi->result = VIP_NOT_DONE;
	vi->peer = true;
	vi->deadline_ms = vipl_deadline(Timeout);
	vi->state = VIP_STATE_CONNECT_PENDING;
	if (c > 0) {
		vi->mode = CM_PEER_ACTIVE;
		nic->npeer++;
		if (vipl_start_connect(vi) != 0)
			vi->retry_ms = vipl_now_ms() + VIPL_PEER_RETRY_MS;
	} else {
		vi->mode = CM_PEER_PASSIVE;
		nic->npeer++;
		(void)vipl_reg_add(nic, vi->local_disc, vi->local_disc_len);
		if (nic->wire->listen(nic) != 0) {
			vipl_connect_done(vi, VIP_ERROR_RESOURCE);
			vi->peer = false;
			rc = VIP_ERROR_RESOURCE;
			goto unlock;
		}
	}
	vipl_nic_wake(nic); /* timers */
	rc = VIP_SUCCESS;
unlock:
	pthread_mutex_unlock(&nic->lock);
out:
	vipl_handle_put(vi ? &vi->o : NULL);
	return rc;
}

static VIP_RETURN peer_done(void *h, VIP_VI_ATTRIBUTES *attr, bool wait)
{
	struct vipl_vi *vi = vi_get(h);
	if (vi == NULL)
		return VIP_INVALID_PARAMETER;
	struct vipl_nic *nic = vi->o.nic;
	VIP_RETURN rc;
	pthread_mutex_lock(&nic->lock);
	if (!vi->peer) {
		rc = VIP_INVALID_STATE; /* no peer connect requested */
	} else if (vi->result == VIP_NOT_DONE && !wait) {
		rc = VIP_NOT_DONE;
	} else {
		rc = wait_connect(vi, vi->deadline_ms);
		vi->peer = false;
		if (rc == VIP_SUCCESS && attr != NULL)
			*attr = vi->remote;
	}
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&vi->o);
	return rc;
}

VIPL_EXPORT VIP_RETURN VipConnectPeerDone(VIP_VI_HANDLE ViHandle, VIP_VI_ATTRIBUTES *RemoteViAttribs)
{
	return peer_done(ViHandle, RemoteViAttribs, false);
}

VIPL_EXPORT VIP_RETURN VipConnectPeerWait(VIP_VI_HANDLE ViHandle, VIP_VI_ATTRIBUTES *RemoteViAttribs)
{
	return peer_done(ViHandle, RemoteViAttribs, true);
}
