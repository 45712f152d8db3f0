/* rn_device internals shared by rn_device.c (open / query / close, resources, async events),
 * rn_device_conn.c (connections and CM setups driven by the engine) and rn_device_qp.c (the
 * rn_qp binding, in its own file so that users of rn_device that never create QPs do not link
 * rn_qp). */
#ifndef RN_DEVICE_INT_H
#define RN_DEVICE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "rn_device.h"
#include "rn_device_feed.h"
#include "rn_stats_int.h"

#define RN_DEVICE_MAGIC 0x524e4943u /* "RNIC" */

/* A tracked CQ, completion channel or S-RQ. */
struct rn_dev_obj {
	void *obj;
	struct rn_dev_obj *next;
};
enum rn_dev_kind { RN_DK_CQ, RN_DK_CHANNEL, RN_DK_SRQ, RN_DK_COUNT };

struct rn_device {
	uint32_t magic;
	unsigned unit;
	bool exclusive, inline_mode;
	char name[16];
	struct rn_device_attr attr;
	struct rn_mem *mem;
	struct rn_evq *evq;
	struct rn_progress *eng;
	struct rn_event_res res;       /* the RNIC as an event resource */
	struct rn_stats_dev *stats;    /* its counters (rn_stats_int.h), from open to close */

	/* the engine thread as an rn_mem reader (hook callbacks run on the driving thread) */
	struct rn_progress_hook hook;
	unsigned reader;
	bool reader_ok;

	pthread_mutex_t lock;          /* lists and counts below, engine start */
	struct rn_dev_obj *objs[RN_DK_COUNT];
	uint32_t count[RN_DK_COUNT];
	uint32_t nqp, ncm;
	uint32_t nconns;               /* attached objects (conns) */
	struct rn_feed_tab feeds;      /* CQ -> the conns feeding it (rn_device_feed.h) */
	struct rn_dev_conn *conns;
	struct rn_dev_cm *cms;
	atomic_uint next_id;
	_Atomic uint64_t call_end_ns;   /* end of the consumer's last poll or long post */
	atomic_uint poll_run;           /* polls in a row, each within STREAK_NS of a call's end */

	/* async events: mode, handler, events taken and not acked (queue mode) */
	pthread_mutex_t ah_lock;
	pthread_cond_t ah_cond;
	bool ah_handler_mode, ah_running, ah_registered;
	rn_device_async_fn ah_fn;
	void *ah_arg;
	struct rn_event_res **unacked;
	uint32_t nunacked, capunacked;
};

/* Count one QP against max_qp: RN_OK or NO_RESOURCES. */
enum rn_status rn_device_qp_reserve(struct rn_device *dev);
void rn_device_qp_release(struct rn_device *dev);
/* A fresh object number (QP ID, CQ / S-RQ number), unique per device. */
uint32_t rn_device_next_id(struct rn_device *dev);
bool rn_device_valid(const struct rn_device *dev);
/* Start the engine's thread unless it runs or the device is in inline mode. */
void rn_device_engine_up(struct rn_device *dev);

/* rn_device_conn.c */
/* The attached conn whose object is obj, or NULL. */
/* The conn of obj, or NULL; hint (the conn obj names, e.g. its wake_arg) saves the walk of
 * the device's conns when it is right. */
struct rn_dev_conn *rn_device_conn_find(struct rn_device *dev, const void *obj, void *hint);
/* Mark c as holding a QP reservation: freeing it releases the reservation. */
void rn_device_conn_set_counted(struct rn_dev_conn *c);
/* Close: detach and destroy every conn and CM attachment (engine stopped). */
void rn_device_conns_close(struct rn_device *dev);

#endif
