/* Ids: rdma_create_id / rdma_destroy_id, addresses (bind, resolve addr and route, ports),
 * options, rdma_migrate_id, rdma_get_devices. */
#include "rcm_int.h"
#include "verbs_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static socklen_t sa_len(const struct sockaddr *sa)
{
	if (sa == NULL)
		return 0;
	if (sa->sa_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (sa->sa_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

static bool is_wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* A DPDK port has no loopback. Binding 127.0.0.1 there still succeeds, as librdmacm's does
 * (it binds the id to a device), because programs bind it to learn their devices' addresses
 * (libfabric's verbs provider asks rdma_getaddrinfo for "localhost" and binds that, then
 * takes the addresses of the interfaces); nothing can listen or connect on it. */
static bool loopback_on_dpdk(const struct sockaddr *sa)
{
	return softrnic_transport_selected() == SOFTRNIC_TRANSPORT_DPDK && is_loopback(sa);
}

static uint16_t *port_of(struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return &((struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return &((struct sockaddr_in6 *)sa)->sin6_port;
	return NULL;
}

/* ---- create / destroy ----------------------------------------------------------------- */

RCM_EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
			      void *context, enum rdma_port_space ps)
{
	if (id == NULL)
		return rcm_err(EINVAL);
	if (ps != RDMA_PS_TCP)
		return rcm_err(EPROTONOSUPPORT); /* iWARP: connected TCP port space only */
	struct rcm_id *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return rcm_err(ENOMEM);
	if (channel == NULL) {
		channel = rdma_create_event_channel();
		if (channel == NULL) {
			int e = errno;
			free(r);
			return rcm_err(e);
		}
		r->sync = true;
	}
	r->ch = rcm_ch_of(channel);
	r->pub.channel = channel;
	r->pub.context = context;
	r->pub.ps = ps;
	r->pub.qp_type = IBV_QPT_RC;
	r->state = RCM_IDLE;
	r->ird = r->ord = 0xFF;
	pthread_mutex_lock(&rcm_lock);
	r->ch->ids++;
	rcm_id_link(r);
	pthread_mutex_unlock(&rcm_lock);
	*id = &r->pub;
	return 0;
}

static void free_child(struct rcm_id *c);

/* Children of a listener being destroyed: unseen ones go, seen ones lose their listener. */
static void orphan_children(struct rcm_id *lis)
{
	struct rcm_id *c = rcm_ids;

	while (c != NULL) {
		struct rcm_id *next = c->next;
		if (c->listener == lis) {
			if (c->state == RCM_REQ_RECV)
				free_child(c);
			else
				c->listener = NULL;
		}
		c = next;
	}
}

/* Release an id that is already off every queue (rcm_lock held; no sync channel). */
static void free_child(struct rcm_id *c)
{
	rcm_drop_events(c, NULL);
	rcm_id_teardown(c);
	rcm_id_unlink(c);
	c->ch->ids--;
	free(c);
}

RCM_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	if (id == NULL)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	pthread_mutex_lock(&rcm_lock);
	rcm_drop_events(r, free_child);
	if (r->state == RCM_LISTEN)
		orphan_children(r);
	while (r->events_out > 0) /* librdmacm: wait until the consumer acked its events */
		pthread_cond_wait(&rcm_cond, &rcm_lock);
	rcm_id_teardown(r);
	rcm_id_unlink(r);
	r->ch->ids--;
	rcm_engine_kick(); /* the engine's poll holds closed sockets until it wakes */
	pthread_mutex_unlock(&rcm_lock);
	free(r->req_event);
	free(r->ep_attr);
	if (r->sync)
		rdma_destroy_event_channel(&r->ch->pub);
	free(r);
	return 0;
}

/* ---- addresses ------------------------------------------------------------------------ */

/* 0 if addr is one of this host's addresses (a socket can bind to it), else -errno. */
static int check_local(const struct sockaddr *addr)
{
	/* on DPDK the port's address, not the kernel's */
	if (softrnic_transport_selected() == SOFTRNIC_TRANSPORT_DPDK)
		return softrnic_transport_check_local(addr);
	struct sockaddr_storage ss;
	socklen_t len = sa_len(addr);
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memcpy(&ss, addr, len);
	*port_of((struct sockaddr *)&ss) = 0;
	int rc = bind(fd, (struct sockaddr *)&ss, len) == 0 ? 0 : -errno;
	close(fd);
	return rc;
}

static void set_src(struct rcm_id *r, const struct sockaddr *addr)
{
	memset(&r->pub.route.addr.src_storage, 0, sizeof(r->pub.route.addr.src_storage));
	memcpy(&r->pub.route.addr.src_storage, addr, sa_len(addr));
	r->bound = true;
}

/* The port is taken at bind, as librdmacm's bind takes it in the kernel's port space:
 * rdma_get_src_port answers at once (qperf publishes it before rdma_listen) and the port
 * stays ours until rdma_listen. The listener opened here (kernel socket or DPDK, whichever
 * transport rdma_listen uses) is what rdma_listen then accepts on; the engine leaves it
 * alone until then. The port chosen for port 0 goes into the bound address. */
static int take_port(struct rcm_id *r, const struct sockaddr *addr)
{
	const struct rn_transport *tp;
	struct rn_conn *l;
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	int rc = softrnic_transport_default(&tp);

	if (rc == 0)
		rc = rn_tp_listen(tp, addr, sa_len(addr), RCM_BIND_BACKLOG, &l);
	if (rc != 0)
		return rc;
	set_src(r, addr);
	if (rn_conn_local_addr(l, (struct sockaddr *)&got, &len) == 0 &&
	    got.ss_family == addr->sa_family)
		*port_of(&r->pub.route.addr.src_addr) = *port_of((struct sockaddr *)&got);
	r->conn = l;
	return 0;
}

RCM_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	if (id == NULL || sa_len(addr) == 0)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	if (r->state != RCM_IDLE)
		return rcm_err(EINVAL);
	int rc = 0;
	if (loopback_on_dpdk(addr)) {
		set_src(r, addr); /* no port taken: rdma_listen says EADDRNOTAVAIL */
	} else {
		rc = check_local(addr);
		if (rc == 0)
			rc = take_port(r, addr);
	}
	if (rc != 0)
		return rcm_err(-rc);
	r->state = RCM_BOUND;
	/* An interface address binds the id to the device, as the kernel binds it to the RNIC
	 * on that netdev. Loopback and the wildcard do not: no RNIC sits on lo (siw is attached
	 * to a real netdev), and libfabric's verbs provider, finding a device behind 127.0.0.1,
	 * would publish 127.0.0.1 as the endpoint's address to its peers. Connections to and
	 * from loopback still run on softrnic; the id gets the device when one is made. */
	if (!is_wildcard(addr) && !is_loopback(addr))
		rcm_dev_attach(id);
	return 0;
}

/* The source address the kernel routes dst from (a UDP connect sends nothing). */
static int route_src(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	/* on DPDK the port's subnet and gateway */
	if (softrnic_transport_selected() == SOFTRNIC_TRANSPORT_DPDK) {
		memset(src, 0, sizeof(*src));
		return softrnic_transport_route(dst, (struct sockaddr_in *)src);
	}
	socklen_t len = sizeof(*src);
	int fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_storage d;

	if (fd < 0)
		return -errno;
	memcpy(&d, dst, sa_len(dst));
	if (*port_of((struct sockaddr *)&d) == 0)
		*port_of((struct sockaddr *)&d) = htons(9); /* any port: only the route matters */
	int rc = connect(fd, (struct sockaddr *)&d, sa_len(dst)) == 0 ? 0 : -errno;
	if (rc == 0 && getsockname(fd, (struct sockaddr *)src, &len) != 0)
		rc = -errno;
	close(fd);
	if (rc == 0)
		*port_of((struct sockaddr *)src) = 0;
	return rc;
}

static int resolve(struct rcm_id *r, const struct sockaddr *dst)
{
	struct sockaddr_storage src;

	if (!r->bound || is_wildcard(&r->pub.route.addr.src_addr)) {
		int rc = route_src(dst, &src);
		if (rc != 0)
			return rc;
		set_src(r, (struct sockaddr *)&src);
	}
	memset(&r->pub.route.addr.dst_storage, 0, sizeof(r->pub.route.addr.dst_storage));
	memcpy(&r->pub.route.addr.dst_storage, dst, sa_len(dst));
	rcm_dev_attach(&r->pub);
	r->pub.port_num = 1;
	return r->pub.verbs != NULL ? 0 : -ENODEV;
}

RCM_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
				 struct sockaddr *dst_addr, int timeout_ms)
{
	(void)timeout_ms; /* resolution is local and immediate */
	if (id == NULL || sa_len(dst_addr) == 0)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	if (r->state == RCM_IDLE && src_addr != NULL && rdma_bind_addr(id, src_addr) != 0)
		return -1;
	if (r->state != RCM_IDLE && r->state != RCM_BOUND)
		return rcm_err(EINVAL);
	if (r->bound && r->pub.route.addr.src_addr.sa_family != dst_addr->sa_family)
		return rcm_err(EINVAL);
	int rc = resolve(r, dst_addr);
	pthread_mutex_lock(&rcm_lock);
	if (rc == 0 && r->conn != NULL) { /* active now: the port taken at bind goes */
		rn_conn_close(r->conn);
		r->conn = NULL;
	}
	if (rc == 0)
		r->state = RCM_ADDR_RESOLVED;
	rc = rcm_post(r, rc == 0 ? RDMA_CM_EVENT_ADDR_RESOLVED : RDMA_CM_EVENT_ADDR_ERROR, rc,
		      NULL, 0, NULL);
	bool sync = r->sync; /* read under the lock: see rdma_accept */
	pthread_mutex_unlock(&rcm_lock);
	if (rc != 0)
		return rcm_err(-rc);
	return sync ? rcm_sync_wait(r, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) : 0;
}

RCM_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	(void)timeout_ms;
	if (id == NULL)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	pthread_mutex_lock(&rcm_lock);
	int rc = r->state == RCM_ADDR_RESOLVED ? 0 : -EINVAL;
	if (rc == 0) {
		r->state = RCM_ROUTE_RESOLVED;
		r->pub.route.num_paths = 0; /* iWARP: no path records, TCP routes */
		rc = rcm_post(r, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0, NULL);
	}
	bool sync = r->sync; /* read under the lock: see rdma_accept */
	pthread_mutex_unlock(&rcm_lock);
	if (rc != 0)
		return rcm_err(-rc);
	return sync ? rcm_sync_wait(r, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) : 0;
}

static __be16 port_or_zero(struct sockaddr *sa)
{
	uint16_t *p = port_of(sa);
	return p != NULL ? *p : 0;
}

RCM_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return port_or_zero(&id->route.addr.src_addr);
}

RCM_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return port_or_zero(&id->route.addr.dst_addr);
}

/* ---- options -------------------------------------------------------------------------- */

static int opt_int(int *dst, const void *v, size_t len)
{
	if (len != sizeof(int))
		return rcm_err(EINVAL);
	memcpy(dst, v, sizeof(int));
	return 0;
}

RCM_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
			       size_t optlen)
{
	if (id == NULL || optval == NULL)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	if (level != RDMA_OPTION_ID)
		return rcm_err(ENOSYS); /* RDMA_OPTION_IB_PATH: IB path records, none on iWARP */
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			return rcm_err(EINVAL);
		r->tos = *(uint8_t *)optval;
		r->tos_set = true; /* kept; the socket transport has no per-connection TOS yet */
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		return opt_int(&r->reuseaddr, optval, optlen);
	case RDMA_OPTION_ID_AFONLY:
		return opt_int(&r->afonly, optval, optlen);
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		/* IB CM ACK timeout: TCP retransmission timers govern iWARP; accepted, no effect */
		return optlen == sizeof(uint8_t) ? 0 : rcm_err(EINVAL);
	}
	return rcm_err(ENOSYS); /* an option this library does not know */
}

/* ---- migrate -------------------------------------------------------------------------- */

RCM_EXPORT int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	if (id == NULL)
		return rcm_err(EINVAL);
	struct rcm_id *r = rcm_id_of(id);
	bool sync = channel == NULL;
	if (sync && (channel = rdma_create_event_channel()) == NULL)
		return -1;
	struct rcm_channel *old = r->ch;
	bool old_sync = r->sync;
	pthread_mutex_lock(&rcm_lock);
	while (r->events_out > 0)
		pthread_cond_wait(&rcm_cond, &rcm_lock);
	rcm_move_events(r, rcm_ch_of(channel));
	old->ids--;
	r->ch = rcm_ch_of(channel);
	r->ch->ids++;
	r->pub.channel = channel;
	r->sync = sync;
	pthread_mutex_unlock(&rcm_lock);
	if (old_sync)
		rdma_destroy_event_channel(&old->pub);
	return 0;
}

/* ---- devices -------------------------------------------------------------------------- */

RCM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = calloc(2, sizeof(*list));

	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	list[0] = rcm_dev_context();
	if (num_devices != NULL)
		*num_devices = list[0] != NULL ? 1 : 0;
	return list;
}

RCM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
