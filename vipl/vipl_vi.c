/* VIs (VIA §9.3, §9.8.2-3): creation with attribute checks, destruction (Idle, both queues
 * empty; cancels notify handlers), attribute changes (Idle only) and queries; cLAN's user data
 * and DFC flag. */
#include "vipl_int.h"

#include <stdlib.h>
#include <string.h>

static VIP_RETURN check_attrs(struct vipl_nic *nic, const VIP_VI_ATTRIBUTES *a,
			      struct vipl_ptag **ptag)
{
	VIP_RELIABILITY_LEVEL r = a->ReliabilityLevel & (VIP_RELIABILITY_LEVEL)~VIP_SERVICE_DFC;
	if (r != VIP_SERVICE_UNRELIABLE && r != VIP_SERVICE_RELIABLE_DELIVERY &&
	    r != VIP_SERVICE_RELIABLE_RECEPTION)
		return VIP_INVALID_RELIABILITY_LEVEL;
	if (a->MaxTransferSize == 0 || a->MaxTransferSize > VIPL_MAX_XFER)
		return VIP_INVALID_MTU;
	if (a->QoS != NULL)
		return VIP_INVALID_QOS; /* QoS: NULL only */
	if (a->EnableRdmaRead && r == VIP_SERVICE_UNRELIABLE)
		return VIP_INVALID_RDMAREAD; /* no RDMA Read on Unreliable VIs (Table 1) */
	struct vipl_ptag *p = (struct vipl_ptag *)vipl_handle_get(a->Ptag, VK_PTAG);
	if (p == NULL || p->o.nic != nic) {
		vipl_handle_put(p ? &p->o : NULL);
		return VIP_INVALID_PTAG;
	}
	*ptag = p;
	return VIP_SUCCESS;
}

/* The attributes as kept: the level without the DFC flag, which becomes vi->dfc. */
static void set_attrs(struct vipl_vi *vi, const VIP_VI_ATTRIBUTES *a)
{
	vi->attr = *a;
	vi->attr.ReliabilityLevel = a->ReliabilityLevel & (VIP_RELIABILITY_LEVEL)~VIP_SERVICE_DFC;
	vi->dfc = (a->ReliabilityLevel & VIP_SERVICE_DFC) != 0;
	vi->granted_mtu = a->MaxTransferSize;
}

static struct vipl_cq *cq_arg(struct vipl_nic *nic, void *h, bool *bad)
{
	if (h == NULL)
		return NULL;
	struct vipl_cq *cq = (struct vipl_cq *)vipl_handle_get(h, VK_CQ);
	if (cq == NULL || cq->o.nic != nic) {
		*bad = true;
		vipl_handle_put(cq ? &cq->o : NULL);
		return NULL;
	}
	return cq;
}

VIPL_EXPORT VIP_RETURN VipCreateVi(VIP_NIC_HANDLE NicHandle, VIP_VI_ATTRIBUTES *ViAttribs,
				   VIP_CQ_HANDLE SendCQHandle, VIP_CQ_HANDLE RecvCQHandle,
				   VIP_VI_HANDLE *ViHandle)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	struct vipl_ptag *p = NULL;
	struct vipl_cq *scq = NULL, *rcq = NULL;
	bool bad = false;
	VIP_RETURN rc = VIP_INVALID_PARAMETER;

	if (nic == NULL || ViAttribs == NULL || ViHandle == NULL)
		goto out;
	scq = cq_arg(nic, SendCQHandle, &bad);
	rcq = cq_arg(nic, RecvCQHandle, &bad);
	if (bad)
		goto out;
	if ((rc = check_attrs(nic, ViAttribs, &p)) != VIP_SUCCESS)
		goto out;
	struct vipl_vi *vi = calloc(1, sizeof(*vi));
	if (vi == NULL) {
		rc = VIP_ERROR_RESOURCE;
		goto out;
	}
	vi->o.kind = VK_VI;
	vi->o.nic = nic;
	set_attrs(vi, ViAttribs);
	vi->dfc_interrupt = true;
	vi->state = VIP_STATE_IDLE;
	atomic_fetch_add(&nic->o.refs, 1);
	pthread_mutex_lock(&nic->lock);
	if (vipl_handle_add(&vi->o) == NULL) {
		pthread_mutex_unlock(&nic->lock);
		free(vi);
		vipl_handle_put(&nic->o);
		rc = VIP_ERROR_RESOURCE;
		goto out;
	}
	vi->ptag = p;
	p->users++;
	vi->sq.cq = scq;
	vi->rq.cq = rcq;
	if (scq)
		scq->bound++;
	if (rcq)
		rcq->bound++;
	vi->next = nic->vis;
	nic->vis = vi;
	*ViHandle = vi->o.handle;
	pthread_mutex_unlock(&nic->lock);
	rc = VIP_SUCCESS;
out:
	vipl_handle_put(p ? &p->o : NULL);
	vipl_handle_put(scq ? &scq->o : NULL);
	vipl_handle_put(rcq ? &rcq->o : NULL);
	vipl_handle_put(nic ? &nic->o : NULL);
	return rc;
}

VIPL_EXPORT VIP_RETURN VipDestroyVi(VIP_VI_HANDLE ViHandle)
{
	struct vipl_vi *vi = (struct vipl_vi *)vipl_handle_get(ViHandle, VK_VI);
	if (vi == NULL)
		return VIP_INVALID_PARAMETER;
	struct vipl_nic *nic = vi->o.nic;
	pthread_mutex_lock(&nic->lock);
	if (vi->o.dead || vi->state != VIP_STATE_IDLE || vi->sq.count || vi->rq.count ||
	    vi->mode != CM_NONE) {
		VIP_RETURN rc = vi->o.dead ? VIP_INVALID_PARAMETER : VIP_ERROR_RESOURCE;
		pthread_mutex_unlock(&nic->lock);
		vipl_handle_put(&vi->o);
		return rc;
	}
	vi->sq.notify = vi->rq.notify = NULL;
	vipl_calls_cancel(nic, vi, NULL);
	for (struct vipl_vi **pp = &nic->vis; *pp; pp = &(*pp)->next)
		if (*pp == vi) {
			*pp = vi->next;
			break;
		}
	if (vi->sq.cq)
		vi->sq.cq->bound--;
	if (vi->rq.cq)
		vi->rq.cq->bound--;
	vi->ptag->users--;
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_remove(&vi->o);
	pthread_mutex_lock(&nic->lock);
	pthread_cond_broadcast(&nic->cv); /* a waiter on it returns VIP_INVALID_PARAMETER */
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&vi->o);
	return VIP_SUCCESS;
}

/* Idle only (VIP_INVALID_STATE otherwise: VIA §5 names no code), same checks as creation. */
VIPL_EXPORT VIP_RETURN VipSetViAttributes(VIP_VI_HANDLE ViHandle, VIP_VI_ATTRIBUTES *Attributes)
{
	struct vipl_vi *vi = (struct vipl_vi *)vipl_handle_get(ViHandle, VK_VI);
	struct vipl_ptag *p = NULL;
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (vi == NULL || Attributes == NULL)
		goto out;
	struct vipl_nic *nic = vi->o.nic;
	pthread_mutex_lock(&nic->lock);
	bool idle = vi->state == VIP_STATE_IDLE && vi->mode == CM_NONE;
	pthread_mutex_unlock(&nic->lock);
	if (!idle) {
		rc = VIP_INVALID_STATE;
		goto out;
	}
	if ((rc = check_attrs(nic, Attributes, &p)) != VIP_SUCCESS)
		goto out;
	pthread_mutex_lock(&nic->lock);
	if (vi->state != VIP_STATE_IDLE || vi->mode != CM_NONE) {
		rc = VIP_INVALID_STATE;
	} else {
		vi->ptag->users--;
		vi->ptag = p;
		p->users++;
		set_attrs(vi, Attributes);
	}
	pthread_mutex_unlock(&nic->lock);
out:
	vipl_handle_put(p ? &p->o : NULL);
	vipl_handle_put(vi ? &vi->o : NULL);
	return rc;
}

/* The attributes in force: the granted MTU once connected. NIC lock held. */
void vipl_attrs_of(const struct vipl_vi *vi, VIP_VI_ATTRIBUTES *a)
{
	*a = vi->attr;
	if (vi->dfc)
		a->ReliabilityLevel |= VIP_SERVICE_DFC;
	a->Ptag = vi->ptag->o.handle;
	if (vi->state == VIP_STATE_CONNECTED)
		a->MaxTransferSize = vi->granted_mtu;
}

VIPL_EXPORT VIP_RETURN VipQueryVi(VIP_VI_HANDLE ViHandle, VIP_VI_STATE *State,
				  VIP_VI_ATTRIBUTES *Attributes, VIP_BOOLEAN *SendQueueEmpty,
				  VIP_BOOLEAN *RecvQueueEmpty)
{
	struct vipl_vi *vi = (struct vipl_vi *)vipl_handle_get(ViHandle, VK_VI);
	if (vi == NULL)
		return VIP_INVALID_PARAMETER;
	struct vipl_nic *nic = vi->o.nic;
	pthread_mutex_lock(&nic->lock);
	if (State)
		*State = vi->state;
	if (Attributes)
		vipl_attrs_of(vi, Attributes);
	if (SendQueueEmpty)
		*SendQueueEmpty = vi->sq.count == 0;
	if (RecvQueueEmpty)
		*RecvQueueEmpty = vi->rq.count == 0;
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&vi->o);
	return VIP_SUCCESS;
}

/* cLAN's per-VI pointer for the application; a bad handle sets nothing and reads NULL (the
 * calls return no status). */
VIPL_EXPORT void VipSetUserData(VIP_VI_HANDLE ViHandle, VIP_PVOID Data)
{
	struct vipl_vi *vi = (struct vipl_vi *)vipl_handle_get(ViHandle, VK_VI);
	if (vi == NULL)
		return;
	pthread_mutex_lock(&vi->o.nic->lock);
	vi->user_data = Data;
	pthread_mutex_unlock(&vi->o.nic->lock);
	vipl_handle_put(&vi->o);
}

VIPL_EXPORT VIP_PVOID VipGetUserData(VIP_VI_HANDLE ViHandle)
{
	struct vipl_vi *vi = (struct vipl_vi *)vipl_handle_get(ViHandle, VK_VI);
	if (vi == NULL)
		return NULL;
	pthread_mutex_lock(&vi->o.nic->lock);
	void *d = vi->user_data;
	pthread_mutex_unlock(&vi->o.nic->lock);
	vipl_handle_put(&vi->o);
	return d;
}
