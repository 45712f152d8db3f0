/* Protection domains: 24-bit IDs from a FIFO, reference counted by every MR, MW, QP and S-RQ
 * that names them (RDMA Verbs 1.0 §9.2.2, T02). */
#include "rn_mem_int.h"

static bool pd_live_locked(const struct rn_mem *mem, uint32_t pd)
{
	return pd != 0 && pd <= mem->lim.max_pd && mem->pds[pd].live;
}

enum rn_status rn_pd_ref_locked(struct rn_mem *mem, uint32_t pd)
{
	if (!pd_live_locked(mem, pd))
		return RN_ERR_INVALID_PD;
	mem->pds[pd].refs++;
	return RN_OK;
}

void rn_pd_unref_locked(struct rn_mem *mem, uint32_t pd)
{
	if (pd_live_locked(mem, pd) && mem->pds[pd].refs > 0)
		mem->pds[pd].refs--;
}

void rn_pd_unref(struct rn_mem *mem, uint32_t pd)
{
	pthread_mutex_lock(&mem->lock);
	rn_pd_unref_locked(mem, pd);
	pthread_mutex_unlock(&mem->lock);
}

enum rn_status rn_mem_pd_alloc(struct rn_mem *mem, uint32_t *pd)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	if (!pd)
		return RN_ERR_INVALID_MODIFIER;
	enum rn_status st = RN_ERR_NO_RESOURCES;
	pthread_mutex_lock(&mem->lock);
	if (mem->pdq_head != mem->pdq_tail) {
		/* ring of max_pd + 1 slots holding at most max_pd ids: head == tail means empty */
		uint32_t id = mem->pd_freeq[mem->pdq_head];
		mem->pdq_head = (mem->pdq_head + 1) % (mem->lim.max_pd + 1);
		mem->pds[id].live = true;
		mem->pds[id].refs = 0;
		*pd = id;
		st = RN_OK;
	}
	pthread_mutex_unlock(&mem->lock);
	return st;
}

enum rn_status rn_mem_pd_dealloc(struct rn_mem *mem, uint32_t pd)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	enum rn_status st = RN_OK;
	pthread_mutex_lock(&mem->lock);
	if (!pd_live_locked(mem, pd))
		st = RN_ERR_INVALID_PD;
	else if (mem->pds[pd].refs > 0)
		st = RN_ERR_PD_IN_USE;
	else {
		mem->pds[pd].live = false;
		mem->pd_freeq[mem->pdq_tail] = pd;
		mem->pdq_tail = (mem->pdq_tail + 1) % (mem->lim.max_pd + 1);
	}
	pthread_mutex_unlock(&mem->lock);
	return st;
}

enum rn_status rn_mem_pd_get(struct rn_mem *mem, uint32_t pd)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	pthread_mutex_lock(&mem->lock);
	enum rn_status st = rn_pd_ref_locked(mem, pd);
	pthread_mutex_unlock(&mem->lock);
	return st;
}

enum rn_status rn_mem_pd_put(struct rn_mem *mem, uint32_t pd)
{
	if (!mem)
		return RN_ERR_INVALID_RNIC;
	enum rn_status st = RN_OK;
	pthread_mutex_lock(&mem->lock);
	if (!pd_live_locked(mem, pd) || mem->pds[pd].refs == 0)
		st = RN_ERR_INVALID_PD;
	else
		mem->pds[pd].refs--;
	pthread_mutex_unlock(&mem->lock);
	return st;
}
