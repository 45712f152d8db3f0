/* rdma-core's provider interface (IBVERBS_PRIVATE_34) in libibverbs.so.1 only (docs/dropin.md
 * "Provider entry points"). Debian's perftest links libmlx5.so.1 and libefa.so.1 directly;
 * they import these symbols, and their constructors call verbs_register_driver_34. So the
 * providers load, we export the whole interface; softrnic has no kernel uverbs device, so no
 * provider is ever matched to a device and the calls that would reach the kernel behave as
 * they do when no uverbs device exists:
 *   - verbs_register_driver_34 / ibv_register_driver accept the registration (kept in a table,
 *     never matched: the only device is softrnic0, which no provider drives);
 *   - every kernel command (ibv_cmd_*, execute_ioctl) fails with ENODEV: there is no uverbs
 *     command fd to write to (cmd_fd of our contexts is an eventfd nobody reads);
 *   - _verbs_init_and_alloc_context fails with ENODEV (it is only reached from a provider's
 *     alloc_context, for a device it matched);
 *   - the helpers that need no kernel (verbs_init_cq, __ioctl_final_num_attrs, __verbs_log,
 *     ibv_query_gid_type on our context, verbs_open_device of our device) do their job.
 * Prototypes follow rdma-core 44's driver.h (not installed by libibverbs-dev); structures a
 * call never reads are opaque here. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "sv_provider.h"
#include "sv_symver.h"

/* ---- registration ------------------------------------------------------------------------ */
#define SV_MAX_PROVIDERS 64

static const struct verbs_device_ops *sv_providers[SV_MAX_PROVIDERS];
static unsigned sv_nproviders;
static pthread_mutex_t sv_prov_mtx = PTHREAD_MUTEX_INITIALIZER;

/* Called from each provider library's constructor. Accepted; matching would need a sysfs
 * uverbs device, and softrnic has none, so the provider stays unused. */
void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	if (!ops)
		return;
	pthread_mutex_lock(&sv_prov_mtx);
	if (sv_nproviders < SV_MAX_PROVIDERS)
		sv_providers[sv_nproviders++] = ops;
	pthread_mutex_unlock(&sv_prov_mtx);
}

unsigned softrnic_provider_count(void)
{
	unsigned n;

	pthread_mutex_lock(&sv_prov_mtx);
	n = sv_nproviders;
	pthread_mutex_unlock(&sv_prov_mtx);
	return n;
}

/* libibverbs 1.1's provider registration (pre-rdma-core drivers): such drivers speak an ABI
 * that no longer exists; rdma-core warns and ignores them, and so do we. Only the non-default
 * version exists, as in Debian's library. */
void sv_register_driver_legacy(const char *name, void *init_func);
void sv_register_driver_legacy(const char *name, void *init_func)
{
	(void)init_func;
	fprintf(stderr, "libibverbs (softrnic): ignoring legacy driver %s (old provider ABI)\n",
		name ? name : "(null)");
}
SV_SYMVER(sv_register_driver_legacy, "ibv_register_driver@IBVERBS_1.1");

bool verbs_allow_disassociate_destroy;

/* ---- contexts ---------------------------------------------------------------------------- */
/* A provider's context: only for a device the provider matched, which never happens. */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id)
{
	(void)device, (void)cmd_fd, (void)alloc_size, (void)context_offset, (void)driver_id;
	errno = ENODEV;
	return NULL;
}

/* Nothing was allocated by _verbs_init_and_alloc_context, so there is nothing to release or
 * to install ops into. */
void verbs_uninit_context(struct verbs_context *context)
{
	(void)context;
}

void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops)
{
	(void)vctx, (void)ops;
}

/* Opening goes through our device list: softrnic0 opens, anything else is not a device. */
struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data)
{
	(void)private_data;
	return ibv_open_device(device);
}

/* The common part of a provider's CQ: plain initialisation, no kernel involved. */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context)
{
	if (!cq)
		return;
	cq->context = context;
	cq->channel = channel;
	cq->cq_context = cq_context;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
}

/* ---- helpers ------------------------------------------------------------------------------ */
/* The layout of rdma-core's struct ibv_command_buffer (cmd_ioctl.h), as far as we read it. */
struct ibv_command_buffer {
	struct ibv_command_buffer *next;
	struct ib_uverbs_attr *next_attr;
	struct ib_uverbs_attr *last_attr;
	uint8_t uhw_in_idx, uhw_out_idx, uhw_in_headroom_dwords, uhw_out_headroom_dwords;
	uint8_t flags;               /* buffer_error, fallback_require_ex, fallback_ioctl_only */
	struct ib_uverbs_ioctl_hdr hdr;
};

/* How many attributes a command has once the linked buffers are appended. */
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, struct ibv_command_buffer *link)
{
	for (; link; link = link->next)
		num_attrs += (unsigned)(link->next_attr - link->hdr.attrs);
	return num_attrs;
}

/* Provider debug output: printed when VERBS_LOG_LEVEL is at least the message's level. */
void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
	const char *env = getenv("VERBS_LOG_LEVEL");
	va_list ap;

	(void)ctx;
	if (!env || strtoul(env, NULL, 0) < level)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* GID types through sysfs: our one GID is what the kernel lists as "IB/RoCE v1" for iWARP. */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type)
{
	union ibv_gid gid;

	if (!type || ibv_query_gid(context, port_num, (int)index, &gid))
		return EINVAL;
	*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

/* A sysfs device record exists only for a kernel uverbs device; we never create one. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
{
	(void)sysfs_dev, (void)fnfmt;
	if (buf && size)
		buf[0] = '\0';
	errno = ENODEV;
	return -1;
}
