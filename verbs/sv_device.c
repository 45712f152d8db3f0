/* The device list, contexts and device / port / GID queries (docs/verbs.md "Device").
 * One device, "softrnic0": an iWARP RNIC (node type RNIC, transport iWARP) with one Ethernet
 * port. GID 0 and the node GUID are derived from a MAC address the way Linux siw does it
 * (GID = the MAC then zeros; GUID = the MAC's EUI-64). */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "verbs_int.h"
#include "sv_post_err.h"

#undef ibv_query_port   /* the header maps it to an inline; we define the function */

struct sv_device {
	struct ibv_device dev;
	uint32_t magic;
	uint8_t mac[6];
};

#define SV_MAGIC_DEV 0x73764456u

static struct sv_device sv_dev0 = {
	.dev = { .node_type = IBV_NODE_RNIC, .transport_type = IBV_TRANSPORT_IWARP,
		 .name = "softrnic0", .dev_name = "softrnic0" },
	.magic = SV_MAGIC_DEV,
};
static pthread_once_t sv_dev_once = PTHREAD_ONCE_INIT;

/* The first non-loopback interface's MAC; a fixed locally administered one without any. */
static void sv_pick_mac(uint8_t mac[6])
{
	static const uint8_t fallback[6] = { 0x02, 0x53, 0x52, 0x4e, 0x49, 0x43 };
	struct ifaddrs *ifa, *i;

	memcpy(mac, fallback, 6);
	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_ll *ll = (const void *)i->ifa_addr;

		if (!ll || ll->sll_family != AF_PACKET || (i->ifa_flags & IFF_LOOPBACK) ||
		    ll->sll_halen != 6 || !memcmp(ll->sll_addr, "\0\0\0\0\0\0", 6))
			continue;
		memcpy(mac, ll->sll_addr, 6);
		break;
	}
	freeifaddrs(ifa);
}

static void sv_dev_init_once(void)
{
	/* Over DPDK the device is the port: its MAC gives the GID (docs/dpdk.md). When
	 * the port cannot open, the kernel's MAC stands and librdmacm reports the error. */
	if (softrnic_transport_selected() == SOFTRNIC_TRANSPORT_DPDK &&
	    softrnic_transport_mac(sv_dev0.mac) == 0)
		return;
	sv_pick_mac(sv_dev0.mac);
}

static struct sv_device *sv_device(struct ibv_device *d)
{
	struct sv_device *s = (struct sv_device *)d;

	pthread_once(&sv_dev_once, sv_dev_init_once);
	return d == &sv_dev0.dev ? s : NULL;   /* identity: never read a foreign struct */
}

/* ---- the device list ------------------------------------------------------------------ */
struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **l = calloc(2, sizeof(*l));

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_once(&sv_dev_once, sv_dev_init_once);
	l[0] = &sv_dev0.dev;
	if (num_devices)
		*num_devices = 1;
	return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return sv_device(device) ? device->name : NULL;
}

int ibv_get_device_index(struct ibv_device *device)
{
	return sv_device(device) ? 0 : -1;
}

/* EUI-64 of the MAC, flipping the universal/local bit (what siw shows as node_guid). */
static __be64 sv_guid(const uint8_t mac[6])
{
	uint8_t g[8] = { mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5] };
	__be64 v;

	memcpy(&v, g, sizeof(v));
	return v;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct sv_device *d = sv_device(device);

	return d ? sv_guid(d->mac) : 0;
}

/* ---- handles ------------------------------------------------------------------------------ */
struct sv_context *sv_ctx(struct ibv_context *c)
{
	struct sv_context *s;

	if (!c || c->abi_compat != __VERBS_ABI_IS_EXTENDED)
		return NULL;
	s = (struct sv_context *)((uint8_t *)c - offsetof(struct sv_context, vc.context));
	return s->magic == SV_MAGIC_CTX ? s : NULL;
}

#define SV_HANDLE(fn, type, ibvtype, magicval)                                               \
	struct type *fn(struct ibvtype *h)                                                  \
	{                                                                                    \
		struct type *o = (struct type *)h;                                           \
		if (!h || h->handle != sv_tag(o, magicval) || o->magic != (magicval))        \
			return NULL;                                                         \
		return sv_ctx(h->context) ? o : NULL;                                        \
	}
SV_HANDLE(sv_pd, sv_pd, ibv_pd, SV_MAGIC_PD)
SV_HANDLE(sv_mr, sv_mr, ibv_mr, SV_MAGIC_MR)
SV_HANDLE(sv_cq, sv_cq, ibv_cq, SV_MAGIC_CQ)
SV_HANDLE(sv_srq, sv_srq, ibv_srq, SV_MAGIC_SRQ)
SV_HANDLE(sv_mw, sv_mw, ibv_mw, SV_MAGIC_MW)

/* Channels: found in their context's list (no handle field to tag). */
struct sv_channel *sv_channel(struct ibv_comp_channel *ch)
{
	struct sv_context *c = ch ? sv_ctx(ch->context) : NULL;
	struct sv_channel *s = NULL;

	if (!c)
		return NULL;
	pthread_mutex_lock(&ch->context->mutex);
	for (s = c->channels; s && &s->ch != ch; s = s->next)
		;
	pthread_mutex_unlock(&ch->context->mutex);
	return s;
}
SV_HANDLE(sv_qp, sv_qp, ibv_qp, SV_MAGIC_QP)

int sv_fd_timeout(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return (fl >= 0 && (fl & O_NONBLOCK)) ? 0 : -1;
}

/* ---- queries ------------------------------------------------------------------------------- */
static void sv_fill_attr(struct sv_context *c, const uint8_t mac[6])
{
	struct ibv_device_attr *a = &c->attr;

	sv_dev_limits(c->dev, a);   /* every limit from the device */
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", SV_FW_VER);
	a->node_guid = a->sys_image_guid = sv_guid(mac);
	a->device_cap_flags |= IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
			       IBV_DEVICE_MEM_MGT_EXTENSIONS | IBV_DEVICE_SYS_IMAGE_GUID |
			       IBV_DEVICE_CURR_QP_STATE_MOD;
	a->atomic_cap = IBV_ATOMIC_NONE;      /* RFC 7306 atomics: not offered */
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	struct sv_context *c = sv_ctx(context);

	if (!c || !device_attr)
		return EINVAL;
	*device_attr = c->attr;
	return 0;
}

/* verbs_context.query_device_ex: the legacy attributes, every extension zero. */
static int sv_query_device_ex(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct sv_context *c = sv_ctx(context);

	if (!c || !attr || attr_size < sizeof(attr->orig_attr) || (input && input->comp_mask))
		return EINVAL;
	memset(attr, 0, attr_size);
	attr->orig_attr = c->attr;
	if (offsetof(struct ibv_device_attr_ex, phys_port_cnt_ex) +
	    sizeof(attr->phys_port_cnt_ex) <= attr_size)
		attr->phys_port_cnt_ex = 1;
	return 0;
}

static void sv_port_attr(struct ibv_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = IBV_MTU_1024;   /* Ethernet MTU 1500: what siw reports */
	p->gid_tbl_len = 1;
	p->port_cap_flags = IBV_PORT_CM_SUP;
	p->max_msg_sz = 0x80000000u;    /* 2 GiB: the largest SGE sum we accept */
	p->pkey_tbl_len = 1;
	p->max_vl_num = 1;
	p->active_width = 1;            /* 1X */
	p->active_speed = 1;            /* shown as 2.5 Gbps: there is no real link */
	p->phys_state = 5;              /* LinkUp */
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
}

/* verbs_context.query_port: what ibv_query_port() (an inline) calls. */
static int sv_query_port_ex(struct ibv_context *context, uint8_t port_num,
			    struct ibv_port_attr *port_attr, size_t len)
{
	struct ibv_port_attr p;

	if (!sv_ctx(context) || !port_attr || port_num != 1)
		return EINVAL;
	sv_port_attr(&p);
	memcpy(port_attr, &p, len < sizeof(p) ? len : sizeof(p));
	return 0;
}

/* The exported symbol for old binaries: the compat layout is a prefix of ibv_port_attr up to
 * link_layer. */
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	return sv_query_port_ex(context, port_num, (struct ibv_port_attr *)port_attr,
				offsetof(struct ibv_port_attr, flags));
}

static int sv_gid(struct ibv_context *context, uint32_t port, uint32_t index, union ibv_gid *g)
{
	struct sv_context *c = sv_ctx(context);

	if (!c || port != 1 || index != 0 || !g)
		return EINVAL;
	memset(g, 0, sizeof(*g));
	memcpy(g->raw, sv_dev0.mac, 6);   /* siw: the netdev MAC, then zeros */
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	int rc = index < 0 ? EINVAL : sv_gid(context, port_num, (uint32_t)index, gid);

	if (rc) {
		errno = rc;
		return -1;
	}
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	int rc;

	if (flags || !entry || entry_size < sizeof(*entry))
		return EINVAL;
	memset(entry, 0, sizeof(*entry));
	rc = sv_gid(context, port_num, gid_index, &entry->gid);
	if (rc)
		return rc;
	entry->gid_index = gid_index;
	entry->port_num = port_num;
	entry->gid_type = IBV_GID_TYPE_IB;   /* what the kernel reports for iWARP GIDs */
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	int rc;

	if (!max_entries)
		return -EINVAL;
	rc = _ibv_query_gid_ex(context, 1, 0, entries, flags, entry_size);
	return rc ? -rc : 1;
}

/* No partitions on iWARP: one P_Key, the default full-membership 0xffff. */
int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	if (!sv_ctx(context) || port_num != 1 || index != 0 || !pkey) {
		errno = EINVAL;
		return -1;
	}
	*pkey = 0xffff;
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	if (!sv_ctx(context) || port_num != 1 || pkey != 0xffff)
		return -1;
	return 0;
}

/* ---- open / close ---------------------------------------------------------------------------- */
static void sv_ctx_ops(struct sv_context *c)
{
	struct ibv_context_ops *o = &c->vc.context.ops;

	o->alloc_mw = sv_alloc_mw;
	o->bind_mw = sv_bind_mw;
	o->dealloc_mw = sv_dealloc_mw;
	o->poll_cq = sv_poll_cq;
	o->req_notify_cq = sv_req_notify_cq;
	o->post_srq_recv = sv_post_srq_recv;
	o->post_send = sv_post_send_ib;
	o->post_recv = sv_post_recv_ib;
	/* The extended ops we have; the header's helpers give EOPNOTSUPP for the others. */
	c->vc.query_port = sv_query_port_ex;
	c->vc.query_device_ex = sv_query_device_ex;
	c->vc.sz = sizeof(struct verbs_context);
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct sv_device *d = sv_device(device);
	struct sv_context *c;
	int rc;

	if (!d) {
		errno = ENODEV;
		return NULL;
	}
	if (sv_conf_checked() != 0) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->cmd_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rc = c->cmd_fd < 0 ? errno : sv_dev_open(c);
	if (rc) {
		if (c->cmd_fd >= 0)
			close(c->cmd_fd);
		free(c);
		errno = rc;
		return NULL;
	}
	sv_ctx_ops(c);
	c->vc.context.device = device;
	c->vc.context.cmd_fd = c->cmd_fd;
	c->vc.context.async_fd = rn_device_async_fd(c->dev);
	c->vc.context.num_comp_vectors = 1;
	c->vc.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&c->vc.context.mutex, NULL);
	c->magic = SV_MAGIC_CTX;
	sv_fill_attr(c, d->mac);
	return &c->vc.context;
}

/* Resources still open are the application's leak; the device releases what it owns. */
int ibv_close_device(struct ibv_context *context)
{
	struct sv_context *c = sv_ctx(context);

	if (!c)
		return EINVAL;
	c->magic = 0;
	sv_dev_close(c);
	close(c->cmd_fd);
	pthread_mutex_destroy(&context->mutex);
	free(c);
	return 0;
}

/* Our memory is the process's own and no DMA engine pins it, so fork() needs no preparation
 * (children do not inherit the device's threads and must not use the parent's resources). */
int ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}
