/* Protection tags and memory registration (VIA §9.5, §9.8.4-5, §3.2). A Ptag is an ibv_pd,
 * reference-counted by its regions and VIs; a region is an MR over the page-rounded range
 * (rounded outwards), its memory handle the MR's STag (lkey == rkey). Local write is granted for
 * receive buffers unless a page of the range is read-only (§9.5.3: the NIC must never write
 * read-only pages); remote rights follow EnableRdmaWrite / EnableRdmaRead. */
#include "vipl_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct vipl_ptag *ptag_get(struct vipl_nic *nic, void *h)
{
	struct vipl_ptag *p = (struct vipl_ptag *)vipl_handle_get(h, VK_PTAG);
	if (p != NULL && p->o.nic != nic) {
		vipl_handle_put(&p->o);
		p = NULL;
	}
	return p;
}

VIPL_EXPORT VIP_RETURN VipCreatePtag(VIP_NIC_HANDLE NicHandle, VIP_PROTECTION_HANDLE *Tag)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	if (nic == NULL || Tag == NULL) {
		vipl_handle_put(nic ? &nic->o : NULL);
		return VIP_INVALID_PARAMETER;
	}
	struct vipl_ptag *p = calloc(1, sizeof(*p));
	if (p != NULL)
		p->pd = ibv_alloc_pd(nic->ctx);
	if (p == NULL || p->pd == NULL) {
		free(p);
		vipl_handle_put(&nic->o);
		return VIP_ERROR_RESOURCE;
	}
	p->o.kind = VK_PTAG;
	p->o.nic = nic;
	atomic_fetch_add(&nic->o.refs, 1); /* the Ptag's hold on its NIC */
	pthread_mutex_lock(&nic->lock);
	if (vipl_handle_add(&p->o) == NULL) {
		pthread_mutex_unlock(&nic->lock);
		ibv_dealloc_pd(p->pd);
		free(p);
		vipl_handle_put(&nic->o);
		vipl_handle_put(&nic->o);
		return VIP_ERROR_RESOURCE;
	}
	p->next = nic->ptags;
	nic->ptags = p;
	*Tag = p->o.handle;
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&nic->o);
	return VIP_SUCCESS;
}

VIPL_EXPORT VIP_RETURN VipDestroyPtag(VIP_NIC_HANDLE NicHandle, VIP_PROTECTION_HANDLE Tag)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	struct vipl_ptag *p = nic ? ptag_get(nic, Tag) : NULL;
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (p != NULL) {
		pthread_mutex_lock(&nic->lock);
		/* abandoned connections (graves) may still have QPs on the PD: finish them */
		vipl_graves_free(nic, true);
		while (nic->burying > 0 && !pthread_equal(pthread_self(), nic->thread))
			pthread_cond_wait(&nic->cv, &nic->lock);
		if (p->users > 0 || p->o.dead) {
			rc = p->users > 0 ? VIP_ERROR_RESOURCE : VIP_INVALID_PARAMETER;
		} else if (ibv_dealloc_pd(p->pd) != 0) {
			rc = VIP_ERROR_RESOURCE; /* still used by the RNIC: nothing changed */
		} else {
			for (struct vipl_ptag **pp = &nic->ptags; *pp; pp = &(*pp)->next)
				if (*pp == p) {
					*pp = p->next;
					break;
				}
			p->pd = NULL;
			rc = VIP_SUCCESS;
		}
		pthread_mutex_unlock(&nic->lock);
		if (rc == VIP_SUCCESS)
			vipl_handle_remove(&p->o);
		vipl_handle_put(&p->o);
	}
	vipl_handle_put(nic ? &nic->o : NULL);
	return rc;
}

/* Whether every page of [lo, hi) is mapped writable, from /proc/self/maps. */
static bool range_writable(uintptr_t lo, uintptr_t hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uintptr_t at = lo;
	if (f == NULL)
		return false;
	while (at < hi && fgets(line, sizeof(line), f) != NULL) {
		unsigned long a, b;
		char perm[5];
		if (sscanf(line, "%lx-%lx %4s", &a, &b, perm) != 3)
			continue;
		if (b <= at || a > at)
			continue;
		if (perm[1] != 'w')
			break;
		at = b;
	}
	fclose(f);
	return at >= hi;
}

struct vipl_region **vipl_region_bucket(struct vipl_nic *nic, VIP_MEM_HANDLE h)
{
	/* STags are (index << 8) | key: the index bits spread well */
	return &nic->regions[((h >> 8) ^ (h << 2)) % VIPL_REGION_BUCKETS];
}

static void region_unlink(struct vipl_nic *nic, struct vipl_region *r)
{
	for (struct vipl_region **pp = vipl_region_bucket(nic, r->handle); *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			return;
		}
}

struct vipl_region *vipl_region_find(struct vipl_nic *nic, VIP_MEM_HANDLE h)
{
	for (struct vipl_region *r = *vipl_region_bucket(nic, h); r != NULL; r = r->next)
		if (r->handle == h)
			return r;
	return NULL;
}

static int access_of(bool writable, bool rw, bool rr)
{
	int acc = writable ? IBV_ACCESS_LOCAL_WRITE : 0;
	if (rw)
		acc |= IBV_ACCESS_REMOTE_WRITE;
	if (rr)
		acc |= IBV_ACCESS_REMOTE_READ;
	return acc;
}

VIPL_EXPORT VIP_RETURN VipRegisterMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress,
				      VIP_ULONG Length, VIP_MEM_ATTRIBUTES *MemAttribs,
				      VIP_MEM_HANDLE *MemoryHandle)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	struct vipl_ptag *p = NULL;
	if (MemoryHandle != NULL)
		*MemoryHandle = 0;
	if (nic == NULL || VirtualAddress == NULL || Length == 0 || MemAttribs == NULL ||
	    MemoryHandle == NULL || (uintptr_t)VirtualAddress + Length < (uintptr_t)VirtualAddress)
		goto out;
	if ((p = ptag_get(nic, MemAttribs->Ptag)) == NULL) {
		rc = VIP_INVALID_PTAG;
		goto out;
	}
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	struct vipl_region *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		rc = VIP_ERROR_RESOURCE;
		goto out;
	}
	r->va = (uintptr_t)VirtualAddress;
	r->lo = r->va & ~(page - 1);
	r->hi = (r->va + Length + page - 1) & ~(page - 1);
	r->writable = range_writable(r->lo, r->hi);
	r->rdma_write = MemAttribs->EnableRdmaWrite != 0;
	r->rdma_read = MemAttribs->EnableRdmaRead != 0;
	if (r->rdma_write && !r->writable) { /* remote writes into read-only pages: refused */
		free(r);
		goto out;
	}
	pthread_mutex_lock(&nic->lock);
	r->mr = ibv_reg_mr(p->pd, (void *)r->lo, r->hi - r->lo,
			   access_of(r->writable, r->rdma_write, r->rdma_read));
	if (r->mr == NULL) {
		pthread_mutex_unlock(&nic->lock);
		free(r);
		rc = VIP_ERROR_RESOURCE;
		goto out;
	}
	r->handle = r->mr->lkey;
	r->ptag = p;
	p->users++;
	struct vipl_region **b = vipl_region_bucket(nic, r->handle);
	r->next = *b;
	*b = r;
	*MemoryHandle = r->handle;
	pthread_mutex_unlock(&nic->lock);
	rc = VIP_SUCCESS;
out:
	vipl_handle_put(p ? &p->o : NULL);
	vipl_handle_put(nic ? &nic->o : NULL);
	return rc;
}

static void region_drop(struct vipl_region *r)
{
	ibv_dereg_mr(r->mr);
	r->ptag->users--;
	free(r);
}

/* The address must be the one registered (VIA leaves it open). Descriptors still posted that
 * name the region fail with a protection error when they are processed (§3.2.1). */
VIPL_EXPORT VIP_RETURN VipDeregisterMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress,
					VIP_MEM_HANDLE MemoryHandle)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (nic == NULL)
		return rc;
	pthread_mutex_lock(&nic->lock);
	for (struct vipl_region **pp = vipl_region_bucket(nic, MemoryHandle); *pp; pp = &(*pp)->next) {
		struct vipl_region *r = *pp;
		if (r->handle == MemoryHandle && r->va == (uintptr_t)VirtualAddress) {
			*pp = r->next;
			region_drop(r);
			rc = VIP_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&nic->o);
	return rc;
}

void vipl_regions_free(struct vipl_nic *nic)
{
	for (size_t i = 0; i < VIPL_REGION_BUCKETS; i++)
		while (nic->regions[i] != NULL) {
			struct vipl_region *r = nic->regions[i];
			nic->regions[i] = r->next;
			region_drop(r);
		}
}

static struct vipl_region *region_at(struct vipl_nic *nic, void *addr, VIP_MEM_HANDLE h)
{
	struct vipl_region *r = vipl_region_find(nic, h);
	return r != NULL && r->va == (uintptr_t)addr ? r : NULL;
}

VIPL_EXPORT VIP_RETURN VipQueryMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID Address,
				   VIP_MEM_HANDLE MemHandle, VIP_MEM_ATTRIBUTES *MemAttribs)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (nic == NULL)
		return rc;
	pthread_mutex_lock(&nic->lock);
	struct vipl_region *r = region_at(nic, Address, MemHandle);
	if (r != NULL && MemAttribs != NULL) {
		MemAttribs->Ptag = r->ptag->o.handle;
		MemAttribs->EnableRdmaWrite = r->rdma_write;
		MemAttribs->EnableRdmaRead = r->rdma_read;
		rc = VIP_SUCCESS;
	}
	pthread_mutex_unlock(&nic->lock);
	vipl_handle_put(&nic->o);
	return rc;
}

/* A new Ptag or new enables re-register the MR (ibv_rereg_mr CHANGE_PD | CHANGE_ACCESS). The
 * memory handle the application holds stays valid for local use (descriptors naming it are
 * translated to the new STag), but softrnic gives every reregistration a new STag: peers
 * must be told the region's handle again (docs/vipl.md "Memory"). */
VIPL_EXPORT VIP_RETURN VipSetMemAttributes(VIP_NIC_HANDLE NicHandle, VIP_PVOID Address,
					   VIP_MEM_HANDLE MemHandle, VIP_MEM_ATTRIBUTES *MemAttribs)
{
	struct vipl_nic *nic = vipl_nic_get(NicHandle);
	struct vipl_ptag *p = NULL;
	VIP_RETURN rc = VIP_INVALID_PARAMETER;
	if (nic == NULL || MemAttribs == NULL)
		goto out;
	if ((p = ptag_get(nic, MemAttribs->Ptag)) == NULL) {
		rc = VIP_INVALID_PTAG;
		goto out;
	}
	pthread_mutex_lock(&nic->lock);
	struct vipl_region *r = region_at(nic, Address, MemHandle);
	bool rw = MemAttribs->EnableRdmaWrite != 0, rr = MemAttribs->EnableRdmaRead != 0;
	if (r == NULL || (rw && !r->writable)) {
		pthread_mutex_unlock(&nic->lock);
		goto out;
	}
	if (p != r->ptag || rw != r->rdma_write || rr != r->rdma_read) {
		int e = ibv_rereg_mr(r->mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS, p->pd,
				     NULL, 0, access_of(r->writable, rw, rr));
		if (e != 0) {
			rc = VIP_ERROR_RESOURCE;
			if (e == IBV_REREG_MR_ERR_CMD) { /* the MR is gone (docs/verbs.md) */
				ibv_dereg_mr(r->mr);
				r->mr = ibv_reg_mr(r->ptag->pd, (void *)r->lo, r->hi - r->lo,
						   access_of(r->writable, r->rdma_write, r->rdma_read));
				if (r->mr == NULL) { /* cannot restore: the region is lost */
					region_unlink(nic, r);
					r->ptag->users--;
					free(r);
				}
			}
			pthread_mutex_unlock(&nic->lock);
			goto out;
		}
		r->ptag->users--;
		r->ptag = p;
		p->users++;
		r->rdma_write = rw;
		r->rdma_read = rr;
	}
	pthread_mutex_unlock(&nic->lock);
	rc = VIP_SUCCESS;
out:
	vipl_handle_put(p ? &p->o : NULL);
	vipl_handle_put(nic ? &nic->o : NULL);
	return rc;
}
