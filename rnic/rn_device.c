/* The RNIC device: open / query / close, limits and resource accounting, async event
 * delivery (rn_device.h). Connections and CM setups driven by the engine: rn_device_conn.c. */
#include "rn_device.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "rn_device_int.h"
#include "rn_transport.h"
#include "rn_sync.h"

/* ---- the process-wide name registry ("RNIC in use") ------------------------------------ */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	unsigned shared;
	bool exclusive;
} reg[RN_DEVICE_UNITS];

/* "softrnic<unit>": the unit, or -1. */
static int parse_name(const char *name)
{
	const char *p = "softrnic";
	size_t n = strlen(p);

	if (!name)
		return 0;
	if (strncmp(name, p, n) || name[n] < '0' || name[n] > '9' || name[n + 1])
		return -1;
	return name[n] - '0' < RN_DEVICE_UNITS ? name[n] - '0' : -1;
}

static enum rn_status reg_take(unsigned unit, bool exclusive)
{
	enum rn_status rc = RN_OK;

	pthread_mutex_lock(&reg_lock);
	if (reg[unit].exclusive || (exclusive && reg[unit].shared))
		rc = RN_ERR_RNIC_IN_USE;
	else if (exclusive)
		reg[unit].exclusive = true;
	else
		reg[unit].shared++;
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

static void reg_drop(unsigned unit, bool exclusive)
{
	pthread_mutex_lock(&reg_lock);
	if (exclusive)
		reg[unit].exclusive = false;
	else
		reg[unit].shared--;
	pthread_mutex_unlock(&reg_lock);
}

/* ---- attributes ------------------------------------------------------------------------- */
/* Defaults: what rn_qp / rn_srq / rn_cq / rn_mem can hold, sized so one open device costs a
 * few MB (the TPT alone is (max_mr + max_mw) rounded up to a power of two times 64 octets). */
static void default_attr(struct rn_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->vendor, sizeof(a->vendor), "softrnic software iWARP RNIC");
	a->vendor_id = 0x626d61;     /* what Linux siw reports (OUI-less software device) */
	a->vendor_part_id = 0x5352;  /* "SR" */
	a->hw_ver = 1;
	a->max_qp = 65536;           /* counted only: a QP costs what it holds (docs/rnic.md) */
	a->max_qp_wr = 16384;        /* rn_qp's default limit */
	a->max_send_sge = RN_RQ_MAX_SGE;
	a->max_write_sge = RN_RQ_MAX_SGE;
	a->max_recv_sge = RN_RQ_MAX_SGE;
	a->max_inline = 256;
	a->max_cq = 65536;           /* counted only, as QPs */
	/* A power of two (CQ rings mask), about Linux siw's limit (3,276,800): libfabric's rxm asks
	 * (rx + tx depth) x its universe size entries for one CQ. The ring is what was asked for. */
	a->max_cqe = 1u << 22;
	a->max_ceh = 256;
	a->max_mr = 16384;
	a->max_pbl = 512;            /* 2 MiB of 4 KiB pages per fast-register */
	a->max_mr_size = 1ull << 47; /* the user address space */
	a->max_pd = 1024;
	a->max_mw = 4096;
	a->max_ird = 128;            /* rn_qp's default limits */
	a->max_ord = 128;
	a->pbl_mode = RN_PBL_PAGE_LIST;
	a->page_size_cap = ((1ull << 31) - 1) & ~((1ull << 12) - 1); /* 4 KiB .. 1 GiB */
	a->srq_supported = true;
	a->max_srq = 1024;
	a->max_srq_wr = 16384;
	a->srq_dequeue = RN_SRQ_DEQUEUE_ARRIVAL;
	a->cq_overflow_detection = true; /* detected, reported once per episode */
	a->max_async_events = 1024;
	a->spin_us = RN_PROGRESS_SPIN_DEFAULT_US;
}

#define LOWER(f)                                                       \
	do {                                                           \
		if (lim->f && lim->f < a->f)                           \
			a->f = lim->f;                                 \
	} while (0)

static void apply_limits(struct rn_device_attr *a, const struct rn_device_attr *lim)
{
	if (!lim)
		return;
	LOWER(max_qp); LOWER(max_qp_wr); LOWER(max_send_sge); LOWER(max_write_sge);
	LOWER(max_recv_sge); LOWER(max_inline); LOWER(max_cq); LOWER(max_cqe);
	LOWER(max_ceh); LOWER(max_mr); LOWER(max_pbl); LOWER(max_pd); LOWER(max_mw);
	LOWER(max_ird); LOWER(max_ord); LOWER(max_srq); LOWER(max_srq_wr);
	LOWER(max_async_events);
}

void rn_device_open_attr_default(struct rn_device_open_attr *a)
{
	memset(a, 0, sizeof(*a));
}

/* ---- the engine as an rn_mem reader --------------------------------------------------- */
/* The reader slot belongs to the driving thread, so it is taken in `enter` on that thread;
 * going offline around blocking waits keeps an idle engine from delaying dereg. */
static void hk_enter(void *a)
{
	struct rn_device *dev = a;
	dev->reader_ok = rn_mem_reader_register(dev->mem, &dev->reader) == RN_OK;
}
/* iter / block also lend this thread to a user-space engine while it is awake
 * (rn_transport.h), so one thread does the engine and the QPs instead of two threads
 * handing packets across cores. */
static void hk_iter(void *a)
{
	struct rn_device *dev = a;
	if (dev->reader_ok)
		rn_mem_quiescent(dev->mem, dev->reader);
	rn_engine_iter();
}
static void hk_block(void *a)
{
	struct rn_device *dev = a;
	if (dev->reader_ok)
		rn_mem_reader_offline(dev->mem, dev->reader);
	rn_engine_block();
}
static void hk_unblock(void *a)
{
	struct rn_device *dev = a;
	if (dev->reader_ok)
		rn_mem_reader_online(dev->mem, dev->reader);
}
static void hk_leave(void *a)
{
	struct rn_device *dev = a;
	if (dev->reader_ok)
		rn_mem_reader_unregister(dev->mem, dev->reader);
	dev->reader_ok = false;
}

/* ---- open / close --------------------------------------------------------------------- */
static enum rn_status make_parts(struct rn_device *dev, int spin_us)
{
	struct rn_mem_limits ml = { dev->attr.max_pd, dev->attr.max_mr, dev->attr.max_mw,
				    dev->attr.max_pbl };
	struct rn_progress_cfg pc;

	rn_progress_cfg_default(&pc);
	if (spin_us)
		pc.spin_us = spin_us < 0 ? 0 : (unsigned)spin_us;
	dev->attr.spin_us = pc.spin_us;
	if (rn_mem_create(&ml, &dev->mem) || rn_evq_create(dev->attr.max_async_events, &dev->evq) ||
	    rn_progress_create(&pc, &dev->eng))
		return RN_ERR_NO_RESOURCES;
	dev->hook = (struct rn_progress_hook){ hk_enter, hk_iter, hk_block, hk_unblock, hk_leave,
					       dev };
	if (rn_progress_hook_add(dev->eng, &dev->hook))
		return RN_ERR_NO_RESOURCES;
	rn_event_res_init(&dev->res, RN_RES_RNIC, dev, 0);
	return RN_OK;
}

static void free_parts(struct rn_device *dev)
{
	rn_progress_destroy(dev->eng);
	rn_evq_destroy(dev->evq);
	rn_mem_destroy(dev->mem);
	rn_feed_free(&dev->feeds);
	if (dev->stats)
		rn_stats_dev_put(dev->stats);
	pthread_cond_destroy(&dev->ah_cond);
	pthread_mutex_destroy(&dev->ah_lock);
	pthread_mutex_destroy(&dev->lock);
	free(dev->unacked);
	free(dev);
}

enum rn_status rn_device_open(const struct rn_device_open_attr *a, struct rn_device **out)
{
	struct rn_device_open_attr def;
	struct rn_device *dev;
	enum rn_status rc;
	int unit;

	if (!out)
		return RN_ERR_INVALID_MODIFIER;
	*out = NULL;
	if (!a) {
		rn_device_open_attr_default(&def);
		a = &def;
	}
	unit = parse_name(a->name);
	if (unit < 0)
		return RN_ERR_INVALID_MODIFIER;
	if (a->pbl_mode != RN_PBL_PAGE_LIST)
		return a->pbl_mode == RN_PBL_BLOCK_LIST ? RN_ERR_BLOCK_LIST_UNSUPPORTED
							: RN_ERR_INVALID_MODIFIER;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return RN_ERR_NO_RESOURCES;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->ah_lock, NULL);
	rn_cond_init(&dev->ah_cond);
	default_attr(&dev->attr);
	apply_limits(&dev->attr, a->limits);
	rc = make_parts(dev, a->spin_us);
	if (!rc)
		rc = reg_take((unsigned)unit, a->exclusive);
	if (rc) {
		free_parts(dev);
		return rc;
	}
	dev->unit = (unsigned)unit;
	dev->exclusive = a->exclusive;
	dev->inline_mode = a->inline_progress;
	snprintf(dev->name, sizeof(dev->name), "softrnic%d", unit);
	dev->stats = rn_stats_dev_take(dev->unit, dev->name);
	atomic_init(&dev->next_id, 1);
	dev->magic = RN_DEVICE_MAGIC;
	*out = dev;
	return RN_OK;
}

bool rn_device_valid(const struct rn_device *dev)
{
	return dev && dev->magic == RN_DEVICE_MAGIC;
}

/* Events the consumer took and never acked would make every destroy below wait forever. */
static void ack_all_taken(struct rn_device *dev)
{
	pthread_mutex_lock(&dev->ah_lock);
	for (uint32_t i = 0; i < dev->nunacked; i++) {
		struct rn_async_event ev = { .res = dev->unacked[i] };
		rn_evq_ack(dev->evq, &ev);
	}
	dev->nunacked = 0;
	pthread_mutex_unlock(&dev->ah_lock);
}

static void close_objs(struct rn_device *dev)
{
	for (struct rn_dev_obj *o = dev->objs[RN_DK_SRQ], *n; o; o = n) {
		n = o->next;
		rn_srq_destroy(o->obj);
		free(o);
	}
	for (struct rn_dev_obj *o = dev->objs[RN_DK_CQ], *n; o; o = n) {
		n = o->next;
		rn_cq_ack_events(o->obj, rn_cq_unacked_events(o->obj));
		rn_cq_destroy(o->obj);
		free(o);
	}
	for (struct rn_dev_obj *o = dev->objs[RN_DK_CHANNEL], *n; o; o = n) {
		n = o->next;
		rn_comp_channel_destroy(o->obj);
		free(o);
	}
}

enum rn_status rn_device_close(struct rn_device *dev)
{
	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (rn_progress_stop(dev->eng))
		return RN_ERR_INVALID_RNIC; /* from an engine callback: not allowed */
	dev->magic = 0;
	ack_all_taken(dev);
	rn_device_conns_close(dev); /* QPs first: they hold CQs and S-RQs */
	close_objs(dev);
	reg_drop(dev->unit, dev->exclusive);
	free_parts(dev);
	return RN_OK;
}

enum rn_status rn_device_query(struct rn_device *dev, struct rn_device_attr *attr)
{
	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (!attr)
		return RN_ERR_INVALID_MODIFIER;
	*attr = dev->attr;
	attr->spin_us = rn_progress_spin_us(dev->eng);
	return RN_OK;
}

const char *rn_device_name(const struct rn_device *dev)
{
	return dev->name;
}

struct rn_mem *rn_device_mem(struct rn_device *dev)
{
	return dev->mem;
}

struct rn_evq *rn_device_evq(struct rn_device *dev)
{
	return dev->evq;
}

void rn_device_engine_up(struct rn_device *dev)
{
	if (dev->inline_mode || rn_progress_running(dev->eng) || rn_progress_on_driver(dev->eng))
		return;
	pthread_mutex_lock(&dev->lock);
	if (!rn_progress_running(dev->eng))
		rn_progress_start(dev->eng);
	pthread_mutex_unlock(&dev->lock);
}

struct rn_progress *rn_device_engine(struct rn_device *dev)
{
	rn_device_engine_up(dev);
	return dev->eng;
}

int rn_device_progress(struct rn_device *dev, int timeout_ms)
{
	return rn_progress_poll(dev->eng, timeout_ms);
}

uint32_t rn_device_next_id(struct rn_device *dev)
{
	return atomic_fetch_add(&dev->next_id, 1);
}

/* ---- accounting ----------------------------------------------------------------------- */
static uint32_t kind_max(const struct rn_device *dev, enum rn_dev_kind k)
{
	return k == RN_DK_CQ ? dev->attr.max_cq
	       : k == RN_DK_CHANNEL ? dev->attr.max_ceh : dev->attr.max_srq;
}

static enum rn_status reserve(struct rn_device *dev, enum rn_dev_kind k)
{
	enum rn_status rc = RN_OK;

	pthread_mutex_lock(&dev->lock);
	if (dev->count[k] >= kind_max(dev, k))
		rc = RN_ERR_NO_RESOURCES;
	else
		dev->count[k]++;
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

static void unreserve(struct rn_device *dev, enum rn_dev_kind k)
{
	pthread_mutex_lock(&dev->lock);
	dev->count[k]--;
	pthread_mutex_unlock(&dev->lock);
}

/* Reservation already held: link obj (the reservation is returned on failure). */
static enum rn_status track(struct rn_device *dev, enum rn_dev_kind k, void *obj)
{
	struct rn_dev_obj *o = malloc(sizeof(*o));

	if (!o) {
		unreserve(dev, k);
		return RN_ERR_NO_RESOURCES;
	}
	o->obj = obj;
	pthread_mutex_lock(&dev->lock);
	o->next = dev->objs[k];
	dev->objs[k] = o;
	pthread_mutex_unlock(&dev->lock);
	return RN_OK;
}

static bool tracked(struct rn_device *dev, enum rn_dev_kind k, const void *obj)
{
	bool found = false;

	pthread_mutex_lock(&dev->lock);
	for (struct rn_dev_obj *o = dev->objs[k]; o && !found; o = o->next)
		found = o->obj == obj;
	pthread_mutex_unlock(&dev->lock);
	return found;
}

static void untrack(struct rn_device *dev, enum rn_dev_kind k, const void *obj)
{
	pthread_mutex_lock(&dev->lock);
	for (struct rn_dev_obj **pp = &dev->objs[k]; *pp; pp = &(*pp)->next) {
		if ((*pp)->obj != obj)
			continue;
		struct rn_dev_obj *o = *pp;
		*pp = o->next;
		free(o);
		dev->count[k]--;
		break;
	}
	pthread_mutex_unlock(&dev->lock);
}

enum rn_status rn_device_qp_reserve(struct rn_device *dev)
{
	enum rn_status rc = RN_OK;

	pthread_mutex_lock(&dev->lock);
	if (dev->nqp >= dev->attr.max_qp)
		rc = RN_ERR_NO_RESOURCES;
	else
		dev->nqp++;
	pthread_mutex_unlock(&dev->lock);
	return rc;
}

void rn_device_qp_release(struct rn_device *dev)
{
	pthread_mutex_lock(&dev->lock);
	dev->nqp--;
	pthread_mutex_unlock(&dev->lock);
}

void rn_device_counts(struct rn_device *dev, struct rn_device_counts *c)
{
	pthread_mutex_lock(&dev->lock);
	c->qp = dev->nqp;
	c->cq = dev->count[RN_DK_CQ];
	c->channel = dev->count[RN_DK_CHANNEL];
	c->srq = dev->count[RN_DK_SRQ];
	c->cm = dev->ncm;
	pthread_mutex_unlock(&dev->lock);
}

/* ---- CQs, channels, S-RQs ------------------------------------------------------------- */
enum rn_status rn_device_cq_create(struct rn_device *dev, uint32_t min_cqe,
				   struct rn_comp_channel *channel, void *context,
				   struct rn_cq **out, uint32_t *allocated)
{
	struct rn_cq_attr ca = { min_cqe, 0, channel, NULL, 0, context };
	enum rn_status rc;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (channel && !tracked(dev, RN_DK_CHANNEL, channel))
		return RN_ERR_INVALID_CEH;
	rc = reserve(dev, RN_DK_CQ);
	if (rc)
		return rc;
	ca.max_cqe = dev->attr.max_cqe;
	ca.evq = dev->evq;
	ca.id = rn_device_next_id(dev);
	ca.overruns = &dev->stats->cq_overruns;
	rc = rn_cq_create(&ca, out, allocated);
	if (rc) {
		unreserve(dev, RN_DK_CQ);
		return rc;
	}
	rc = track(dev, RN_DK_CQ, *out);
	if (rc)
		rn_cq_destroy(*out);
	return rc;
}

enum rn_status rn_device_cq_destroy(struct rn_device *dev, struct rn_cq *cq)
{
	enum rn_status rc;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (!cq || !tracked(dev, RN_DK_CQ, cq))
		return RN_ERR_INVALID_CQ;
	rc = rn_cq_destroy(cq);
	if (!rc)
		untrack(dev, RN_DK_CQ, cq);
	return rc;
}

enum rn_status rn_device_channel_create(struct rn_device *dev, struct rn_comp_channel **out)
{
	enum rn_status rc;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	rc = reserve(dev, RN_DK_CHANNEL);
	if (rc)
		return rc;
	if (rn_comp_channel_create(out)) {
		unreserve(dev, RN_DK_CHANNEL);
		return RN_ERR_NO_RESOURCES;
	}
	rc = track(dev, RN_DK_CHANNEL, *out);
	if (rc)
		rn_comp_channel_destroy(*out);
	return rc;
}

enum rn_status rn_device_channel_destroy(struct rn_device *dev, struct rn_comp_channel *ch)
{
	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (!ch || !tracked(dev, RN_DK_CHANNEL, ch))
		return RN_ERR_INVALID_CEH;
	if (rn_comp_channel_destroy(ch))
		return RN_ERR_CQ_IN_USE;
	untrack(dev, RN_DK_CHANNEL, ch);
	return RN_OK;
}

enum rn_status rn_device_srq_create(struct rn_device *dev, const struct rn_srq_attr *attr,
				    struct rn_srq **out, uint32_t *alloc_wr,
				    uint32_t *alloc_sge)
{
	struct rn_srq_attr sa;
	enum rn_status rc;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (!attr || !out)
		return RN_ERR_INVALID_MODIFIER;
	rc = reserve(dev, RN_DK_SRQ);
	if (rc)
		return rc;
	if (rn_mem_pd_get(dev->mem, attr->pd)) {
		unreserve(dev, RN_DK_SRQ);
		return RN_ERR_INVALID_PD;
	}
	sa = *attr;
	sa.dev_max_wr = dev->attr.max_srq_wr;
	sa.dev_max_sge = dev->attr.max_recv_sge;
	sa.evq = dev->evq;
	sa.id = rn_device_next_id(dev);
	rc = rn_srq_create(&sa, out, alloc_wr, alloc_sge);
	if (!rc) {
		rc = track(dev, RN_DK_SRQ, *out);
		if (rc)
			rn_srq_destroy(*out);
	} else {
		unreserve(dev, RN_DK_SRQ);
	}
	if (rc)
		rn_mem_pd_put(dev->mem, attr->pd);
	return rc;
}

enum rn_status rn_device_srq_destroy(struct rn_device *dev, struct rn_srq *srq)
{
	uint32_t pd;
	enum rn_status rc;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	if (!srq || !tracked(dev, RN_DK_SRQ, srq))
		return RN_ERR_INVALID_SRQ;
	pd = rn_srq_pd(srq);
	rc = rn_srq_destroy(srq);
	if (!rc) {
		untrack(dev, RN_DK_SRQ, srq);
		rn_mem_pd_put(dev->mem, pd);
	}
	return rc;
}

/* ---- async events --------------------------------------------------------------------- */
static void ledger_add(struct rn_device *dev, struct rn_event_res *r)
{
	if (dev->nunacked == dev->capunacked) {
		uint32_t n = dev->capunacked ? dev->capunacked * 2 : 16;
		struct rn_event_res **t = realloc(dev->unacked, n * sizeof(*t));
		if (!t)
			return; /* not remembered: close would then wait for the consumer's ack */
		dev->unacked = t;
		dev->capunacked = n;
	}
	dev->unacked[dev->nunacked++] = r;
}

static void ledger_del(struct rn_device *dev, struct rn_event_res *r)
{
	for (uint32_t i = 0; i < dev->nunacked; i++) {
		if (dev->unacked[i] == r) {
			dev->unacked[i] = dev->unacked[--dev->nunacked];
			return;
		}
	}
}

int rn_device_async_get(struct rn_device *dev, struct rn_async_event *ev, int timeout_ms)
{
	int rc;

	if (!rn_device_valid(dev) || !ev)
		return EINVAL;
	pthread_mutex_lock(&dev->ah_lock);
	rc = dev->ah_handler_mode ? EINVAL : 0;
	pthread_mutex_unlock(&dev->ah_lock);
	if (rc)
		return rc;
	rc = rn_evq_get(dev->evq, ev, timeout_ms);
	if (!rc) {
		pthread_mutex_lock(&dev->ah_lock);
		ledger_add(dev, ev->res);
		pthread_mutex_unlock(&dev->ah_lock);
	}
	return rc;
}

void rn_device_async_ack(struct rn_device *dev, const struct rn_async_event *ev)
{
	pthread_mutex_lock(&dev->ah_lock);
	ledger_del(dev, ev->res);
	pthread_mutex_unlock(&dev->ah_lock);
	rn_evq_ack(dev->evq, ev);
}

int rn_device_async_fd(struct rn_device *dev)
{
	return rn_evq_fd(dev->evq);
}

/* Engine: deliver queued events to the handler of the moment (or drop them: no handler). A
 * bounded batch per call; the level-triggered fd brings the engine back for the rest. */
static void async_io(void *arg, int fd, uint32_t events)
{
	struct rn_device *dev = arg;
	struct rn_async_event ev;
	(void)fd;
	(void)events;

	for (int i = 0; i < 64 && rn_evq_get(dev->evq, &ev, 0) == 0; i++) {
		rn_device_async_fn fn;
		void *fa;

		pthread_mutex_lock(&dev->ah_lock);
		fn = dev->ah_fn;
		fa = dev->ah_arg;
		dev->ah_running = fn != NULL;
		pthread_mutex_unlock(&dev->ah_lock);
		if (fn)
			fn(dev, &ev, fa);
		rn_evq_ack(dev->evq, &ev);
		pthread_mutex_lock(&dev->ah_lock);
		dev->ah_running = false;
		pthread_cond_broadcast(&dev->ah_cond);
		pthread_mutex_unlock(&dev->ah_lock);
	}
}

enum rn_status rn_device_set_async_handler(struct rn_device *dev, rn_device_async_fn fn,
					   void *arg)
{
	bool first;

	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	pthread_mutex_lock(&dev->ah_lock);
	dev->ah_fn = fn;
	dev->ah_arg = arg;
	dev->ah_handler_mode = true;
	first = !dev->ah_registered;
	dev->ah_registered = true;
	/* replaced: the old handler may be running on the engine; wait, unless we are it */
	while (dev->ah_running && !rn_progress_on_driver(dev->eng))
		pthread_cond_wait(&dev->ah_cond, &dev->ah_lock);
	pthread_mutex_unlock(&dev->ah_lock);
	if (first) {
		if (rn_progress_add(dev->eng, rn_evq_fd(dev->evq), EPOLLIN, async_io, dev))
			return RN_ERR_NO_RESOURCES;
		rn_device_engine_up(dev);
	}
	return RN_OK;
}

enum rn_status rn_device_post_event(struct rn_device *dev, enum rn_event_id id)
{
	if (!rn_device_valid(dev))
		return RN_ERR_INVALID_RNIC;
	return rn_evq_post(dev->evq, id, &dev->res);
}
