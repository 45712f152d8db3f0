/* NICs (VIA §9.2): VipOpenNic / VipCloseNic / VipQueryNic / VipErrorCallback /
 * VipQuerySystemManagementInfo, the per-kind object destructors, deferred callbacks and async
 * errors. A NIC is librdmacm's device context (PDs must belong to it for rdma_create_qp-style
 * QPs on cm ids), its own rdma_cm event channel and completion channel, and one thread. */
#include "vipl_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

uint64_t vipl_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct vipl_nic *vipl_nic_get(void *h)
{
	return (struct vipl_nic *)vipl_handle_get(h, VK_NIC);
}

void vipl_nic_wake(struct vipl_nic *nic)
{
	uint64_t one = 1;
	if (write(nic->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the thread is being woken anyway */
	}
}

void vipl_call_queue(struct vipl_nic *nic, struct vipl_call *c)
{
	c->next = NULL;
	*nic->calls_tail = c;
	nic->calls_tail = &c->next;
	vipl_nic_wake(nic);
}

void vipl_calls_cancel(struct vipl_nic *nic, const struct vipl_vi *vi, const struct vipl_cq *cq)
{
	struct vipl_call **pp = &nic->calls;
	while (*pp != NULL) {
		struct vipl_call *c = *pp;
		if ((vi != NULL && c->kind == CALL_VI && c->vi == vi) ||
		    (cq != NULL && c->kind == CALL_CQ && c->cq == cq)) {
			*pp = c->next;
			free(c);
		} else {
			pp = &c->next;
		}
	}
	nic->calls_tail = &nic->calls;
	while (*nic->calls_tail != NULL)
		nic->calls_tail = &(*nic->calls_tail)->next;
	while (((vi != NULL && nic->cb_vi == vi) || (cq != NULL && nic->cb_cq == cq)) &&
	       !pthread_equal(pthread_self(), nic->thread))
		pthread_cond_wait(&nic->cv, &nic->lock);
}

/* VIA §9.9.1: without a handler of the application's, errors are logged; here on stderr. */
static void default_error_handler(void *ctx, VIP_ERROR_DESCRIPTOR *e)
{
	(void)ctx;
	fprintf(stderr, "vipl: asynchronous error %d (resource %d) on NIC %p VI %p CQ %p\n",
		(int)e->ErrorCode, (int)e->ResourceCode, e->NicHandle, e->ViHandle, e->CQHandle);
}

/* Queued for the NIC thread, which calls the handler with no lock held (NIC lock held here). */
void vipl_async_error(struct vipl_nic *nic, struct vipl_vi *vi, VIP_ERROR_CODE code,
		      VIP_RESOURCE_CODE res, VIP_DESCRIPTOR *d, VIP_ULONG op)
{
	vipl_async_error_as(nic, vi, code, res, d, op, false);
}

void vipl_async_error_as(struct vipl_nic *nic, struct vipl_vi *vi, VIP_ERROR_CODE code,
			 VIP_RESOURCE_CODE res, VIP_DESCRIPTOR *d, VIP_ULONG op, bool orderly)
{
	struct vipl_call *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return;
	c->kind = CALL_ERR;
	c->err.NicHandle = nic->o.handle;
	c->err.ViHandle = vi ? vi->o.handle : NULL;
	c->err.DescriptorPtr = d;
	c->err.OpCode = op;
	c->err.ResourceCode = res;
	c->err.ErrorCode = code;
	c->vih = NULL;
	c->orderly = orderly;
	vipl_call_queue(nic, c);
}

static void nic_destroy_channels(struct vipl_nic *nic)
{
	if (nic->listener != NULL)
		rdma_destroy_id(nic->listener);
	if (nic->rdv != NULL)
		rdma_destroy_id(nic->rdv);
	if (nic->ech != NULL)
		rdma_destroy_event_channel(nic->ech);
	if (nic->cch != NULL)
		ibv_destroy_comp_channel(nic->cch);
	if (nic->wake_fd >= 0)
		close(nic->wake_fd);
}

static int nic_init(struct vipl_nic *nic, const struct vipl_devname *dev)
{
	int n = 0;
	struct ibv_context **devs = rdma_get_devices(&n);

	if (devs == NULL || n < 1) {
		if (devs != NULL)
			rdma_free_devices(devs);
		return -1;
	}
	nic->ctx = devs[0];
	rdma_free_devices(devs);
	if (ibv_query_device(nic->ctx, &nic->dattr) != 0)
		return -1;
	if (vipl_addr_local(dev, &nic->sin, &nic->bind_sin, &nic->rdv_port) != 0)
		return -1;
	memcpy(nic->addr, &nic->sin.sin_addr, 4);
	memcpy(nic->addr + 4, &nic->sin.sin_port, 2);
	snprintf(nic->name, sizeof(nic->name), "softrnic%d", dev->unit);
	nic->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	nic->cch = ibv_create_comp_channel(nic->ctx);
	nic->ech = rdma_create_event_channel();
	if (nic->wake_fd < 0 || nic->cch == NULL || nic->ech == NULL)
		return -1;
	return vipl_thread_start(nic);
}

VIPL_EXPORT VIP_RETURN VipOpenNic(const VIP_CHAR *DeviceName, VIP_NIC_HANDLE *NicHandle)
{
	struct vipl_devname dev;
	if (NicHandle == NULL || vipl_devname_parse(DeviceName, &dev) != 0)
		return VIP_INVALID_PARAMETER;
	struct vipl_nic *nic = calloc(1, sizeof(*nic));
	if (nic == NULL)
		return VIP_ERROR_RESOURCE;
	nic->o.kind = VK_NIC;
	nic->o.nic = nic;
	nic->wake_fd = -1;
	nic->calls_tail = &nic->calls;
	pthread_mutex_init(&nic->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&nic->cv, &ca);
	pthread_condattr_destroy(&ca);
	nic->wire = vipl_wire_choose(&dev);
	nic->vt_listen_fd = nic->vt_rdv_fd = -1;
	if (nic->wire == NULL || nic_init(nic, &dev) != 0 || vipl_handle_add(&nic->o) == NULL) {
		if (nic->thread_started)
			vipl_thread_stop(nic);
		nic_destroy_channels(nic);
		pthread_mutex_destroy(&nic->lock);
		pthread_cond_destroy(&nic->cv);
		free(nic);
		return VIP_ERROR_RESOURCE;
	}
	/* Listen at once, so requests that come before the first ConnectWait are queued
	 * (VIPL_BACKLOG_MS) rather than refused; ConnectWait retries if this fails. */
	pthread_mutex_lock(&nic->lock);
	(void)nic->wire->open(nic);
	pthread_mutex_unlock(&nic->lock);
	*NicHandle = nic->o.handle;
	return VIP_SUCCESS;
}

/* VIA §9.2.2 leaves it open: closing a NIC tears down what is still open on it (connections
 * aborted, descriptors flushed, regions deregistered, CQs and Ptags destroyed); their handles
 * become invalid. */
static void nic_teardown(struct vipl_nic *nic)
{
	pthread_mutex_lock(&nic->lock);
	for (struct vipl_vi *vi = nic->vis; vi != NULL; vi = vi->next) {
		if (vi->mode != CM_NONE)
			vipl_connect_done(vi, VIP_ERROR_RESOURCE);
		vipl_conn_teardown(vi);
		vipl_wq_flush(vi, &vi->sq);
		vipl_wq_flush(vi, &vi->rq);
	}
	while (nic->reqs != NULL) {
		struct vipl_req *r = nic->reqs;
		nic->reqs = r->next;
		vipl_req_free(r);
	}
	vipl_graves_free(nic, true);
	vipl_reg_clear(nic);
	if (nic->wire->close != NULL)
		nic->wire->close(nic);
	struct vipl_vi *vis = nic->vis;
	struct vipl_cq *cqs = nic->cqs;
	struct vipl_ptag *ptags = nic->ptags;
	nic->vis = NULL;
	nic->cqs = NULL;
	nic->ptags = NULL;
	vipl_regions_free(nic);
	pthread_mutex_unlock(&nic->lock);
	while (vis != NULL) {
		struct vipl_vi *n = vis->next;
		vipl_handle_remove(&vis->o);
		vis = n;
	}
	while (cqs != NULL) {
		struct vipl_cq *n = cqs->next;
		vipl_handle_remove(&cqs->o);
		cqs = n;
	}
	while (ptags != NULL) {
		struct vipl_ptag *n = ptags->next;
		ibv_dealloc_pd(ptags->pd);
		ptags->pd = NULL;
		vipl_handle_remove(&ptags->o);
		ptags = n;
	}
	pthread_mutex_lock(&nic->lock);
	pthread_cond_broadcast(&nic->cv); /* waiters find their objects dead */
	pthread_mutex_unlock(&nic->lock);
	while (nic->calls != NULL) {
		struct vipl_call *c = nic->calls;
		nic->calls = c->next;
		free(c);
	}
	nic->calls_tail = &nic->calls;
}

VIPL_EXPORT VIP_RETURN VipCloseNic(VIP_NIC_HANDLE NicHandle)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	if (nic == NULL)
		return VIP_INVALID_PARAMETER;
	if (nic->thread_started && pthread_equal(pthread_self(), nic->thread)) {
		vipl_handle_put(&nic->o); /* from a handler: the thread cannot join itself */
		return VIP_ERROR_RESOURCE;
	}
	vipl_handle_remove(&nic->o); /* no new call can find it */
	vipl_thread_stop(nic);
	nic_teardown(nic);
	nic_destroy_channels(nic);
	nic->listener = NULL;
	nic->ech = NULL;
	nic->cch = NULL;
	nic->wake_fd = -1;
	vipl_handle_put(&nic->o);
	return VIP_SUCCESS;
}

void vipl_obj_free(struct vipl_obj *o)
{
	struct vipl_nic *nic = o->nic;
	switch (o->kind) {
	case VK_NIC:
		pthread_mutex_destroy(&nic->lock);
		pthread_cond_destroy(&nic->cv);
		free(nic);
		return;
	case VK_VI: {
		struct vipl_vi *vi = (struct vipl_vi *)o;
		struct vipl_wq *qs[2] = { &vi->sq, &vi->rq };
		for (int i = 0; i < 2; i++) {
			while (qs[i]->head != NULL) {
				struct vipl_wqe *e = qs[i]->head;
				qs[i]->head = e->next;
				vipl_wqe_free(e);
			}
			while (qs[i]->spare != NULL) {
				struct vipl_wqe *e = qs[i]->spare;
				qs[i]->spare = e->next;
				free(e);
			}
		}
		free(vi);
		break;
	}
	case VK_CQ:
		vipl_tags_free((struct vipl_cq *)o);
		free(((struct vipl_cq *)o)->ring);
		free(o);
		break;
	case VK_EVENT:
		vipl_event_free(o);
		break;
	case VK_PTAG:
	case VK_CONN:
		free(o);
		break;
	}
	vipl_handle_put(&nic->o);
}

VIPL_EXPORT VIP_RETURN VipQueryNic(VIP_NIC_HANDLE NicHandle, VIP_NIC_ATTRIBUTES *a)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	if (nic == NULL || a == NULL) {
		vipl_handle_put(nic ? &nic->o : NULL);
		return VIP_INVALID_PARAMETER;
	}
	const struct ibv_device_attr *d = &nic->dattr;
	unsigned long maxvi = (unsigned long)d->max_qp;
	if ((unsigned long)d->max_pd - 1 < maxvi)
		maxvi = (unsigned long)d->max_pd - 1; /* one Ptag per VI, librdmacm keeps a PD */
	memset(a, 0, sizeof(*a));
	snprintf(a->Name, sizeof(a->Name), "%s", nic->name);
	a->HardwareVersion = d->hw_ver;
	a->ProviderVersion = 0x00010000; /* VIPL 1.0 */
	a->NicAddressLen = VIPL_ADDR_LEN;
	a->LocalNicAddress = nic->addr;
	a->ThreadSafe = VIP_TRUE;
	a->MaxDiscriminatorLen = VIPL_MAX_DISC;
	a->MaxRegisterBytes = (VIP_ULONG)d->max_mr_size;
	a->MaxRegisterRegions = (VIP_ULONG)d->max_mr;
	a->MaxRegisterBlockBytes = (VIP_ULONG)d->max_mr_size;
	a->MaxVI = maxvi;
	a->MaxDescriptorsPerQueue = VIPL_MAX_QDESC;
	a->MaxSegmentsPerDesc = VIPL_MAX_SEGS;
	a->MaxCQ = 4096;                /* VIPL CQs are library rings */
	a->MaxCQEntries = 1u << 20;
	a->MaxTransferSize = VIPL_MAX_XFER;
	a->NativeMTU = 1500;
	a->MaxPtags = maxvi;
	a->ReliabilityLevelSupport = VIP_SERVICE_UNRELIABLE | VIP_SERVICE_RELIABLE_DELIVERY |
				     VIP_SERVICE_RELIABLE_RECEPTION;
	a->RDMAReadSupport = VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_RELIABLE_RECEPTION;
	vipl_handle_put(&nic->o);
	return VIP_SUCCESS;
}

VIPL_EXPORT VIP_RETURN VipErrorCallback(VIP_NIC_HANDLE NicHandle, VIP_PVOID Context,
					VIP_ERROR_HANDLER Handler)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	if (nic == NULL)
		return VIP_INVALID_PARAMETER;
	pthread_mutex_lock(&nic->lock);
	nic->err_handler = Handler;
	nic->err_ctx = Context;
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&nic->o);
	return VIP_SUCCESS;
}

/* Run one deferred callback; called by the NIC thread with no lock held. */
void vipl_call_run(struct vipl_nic *nic, struct vipl_call *c)
{
	switch (c->kind) {
	case CALL_VI:
		c->vih(c->ctx, nic->o.handle, c->vi_handle, c->desc);
		break;
	case CALL_CQ:
		c->cqh(c->ctx, nic->o.handle, c->vi_handle, c->recv);
		break;
	case CALL_ERR: {
		pthread_mutex_lock(&nic->lock);
		VIP_ERROR_HANDLER h = nic->err_handler ? nic->err_handler : default_error_handler;
		void *ctx = nic->err_handler ? nic->err_ctx : NULL;
		pthread_mutex_unlock(&nic->lock);
		/* the peer's Disconnect is the normal end of a connection: the application's
		 * handler hears of it (Connection Lost, VIA §9.9.1), the default one does not
		 * log it */
		if (h != default_error_handler || !c->orderly)
			h(ctx, &c->err);
		break;
	}
	}
}

/* VIPL 1.0's only InfoType: autodiscovery. softrnic discovers nothing: an empty list. Another
 * InfoType is a request this provider does not offer (cLAN's VIP_ERROR_NOT_SUPPORTED). */
VIPL_EXPORT VIP_RETURN VipQuerySystemManagementInfo(VIP_NIC_HANDLE NicHandle, VIP_ULONG InfoType,
						    VIP_PVOID SysManInfo)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (nic != NULL && SysManInfo != NULL && InfoType != VIP_SMI_AUTODISCOVERY) {
		rc = VIP_ERROR_NOT_SUPPORTED;
	} else if (nic != NULL && SysManInfo != NULL) {
		VIP_AUTODISCOVERY_LIST *l = SysManInfo;
		l->NumberOfHops = 0;
		l->NumAdAddrs = 0;
		rc = VIP_SUCCESS;
	}
	vipl_handle_put(nic ? &nic->o : NULL);
	return rc;
}
