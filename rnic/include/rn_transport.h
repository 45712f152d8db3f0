/* The transport interface under the RNIC: a reliable, ordered byte stream (TCP) between two
 * endpoints. Kernel sockets (rn_sock.c) and softrnic's own TCP engine on a DPDK port (the
 * dpdk/ layer) implement it. Connection setup (rn_cm) and the QPs use only this header, so
 * they never know which transport carries them; the device knows a user-space engine only
 * through the hooks it registers here (rn_engine_register).
 *
 * Model
 *   - A transport is a table of operations plus an opaque context (struct rn_transport).
 *   - A connection handle (struct rn_conn) is created by listen / accept / connect and is
 *     embedded as the FIRST member of the implementation's own connection struct. One handle
 *     is either a listener or a stream, never both.
 *   - Every operation is non-blocking. Errors are negative errno values; -EAGAIN means "not
 *     now, wait on rn_conn_fd() and retry". No operation raises a signal (no SIGPIPE).
 *   - A handle is used by one thread at a time; the caller serialises (the progress engine
 *     owns it after connection setup).
 *
 * Ownership rules (what a zero-copy engine must also honour)
 *   - sendv: the octets reported as accepted belong to the transport from the moment the call
 *     returns; the caller may reuse or free its buffers immediately. Octets not accepted stay
 *     the caller's: it retries with the rest. Partial acceptance may split an FPDU anywhere;
 *     framing is the caller's business.
 *   - sendv_ref (optional): as sendv, but the entries marked as references stay the caller's
 *     memory, read by the transport until ref_released reports their batch; the caller keeps
 *     them valid and unchanged until then. Memory that a deregistration takes away is
 *     copied out by the transport first (rn_mem_holder_add): a reference never outlives it.
 *   - recv: copies received stream octets into the caller's buffer. The transport keeps no
 *     reference to it after the call. recv_lend (optional) hands out its own buffers
 *     instead, so that a user-space engine's receive costs no copy before placement; the
 *     lent octets are the caller's to read until it releases the view.
 *   - close / abort release the handle: the pointer is invalid after the call, whatever the
 *     outcome. Handles are never shared between transports.
 */
#ifndef RN_TRANSPORT_H
#define RN_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct rn_transport;
struct rn_conn;

/* Received octets lent by recv_lend: runs in the transport's own buffers, in stream order.
 * owner[] is the transport's business (what release gives back). */
#define RN_RX_VIEW_RUNS 32u
struct rn_rx_view {
	struct iovec run[RN_RX_VIEW_RUNS];
	unsigned n;                       /* runs */
	void *owner[RN_RX_VIEW_RUNS];
	unsigned owners;
	void (*release)(struct rn_rx_view *v);
};

struct rn_transport_ops {
	const char *name; /* "sock", "dpdk", ... for logs */

	/* Listen on addr (IPv4 or IPv6; port 0 picks a free one, see local_addr) with the given
	 * backlog. *out is a listener handle. */
	int (*listen)(const struct rn_transport *t, const struct sockaddr *addr, socklen_t len,
		      int backlog, struct rn_conn **out);

	/* Take one pending connection from a listener: 0 with *out a connected stream handle,
	 * -EAGAIN when none is pending (the listener's fd turns readable when one is). */
	int (*accept)(struct rn_conn *listener, struct rn_conn **out);

	/* Start connecting to addr. Returns 0 with *out a handle whose connection is in
	 * progress or already up (see connect_status), or a negative errno with no handle when
	 * the attempt failed at once (e.g. -ECONNREFUSED, -ENETUNREACH). */
	int (*connect)(const struct rn_transport *t, const struct sockaddr *addr, socklen_t len,
		       struct rn_conn **out);

	/* Completion of connect: 0 connected, -EINPROGRESS still going (wait for the fd to turn
	 * writable), or the failure (-ECONNREFUSED, -ETIMEDOUT, ...). Stable once not
	 * -EINPROGRESS. Always 0 on accepted streams. */
	int (*connect_status)(struct rn_conn *c);

	/* Send octets gathered from iov[0..iovcnt). Returns the number accepted (>= 1, possibly
	 * fewer than offered), -EAGAIN if none fit now (wait for writable), or an error
	 * (-EPIPE, -ECONNRESET, ...). */
	ssize_t (*sendv)(struct rn_conn *c, const struct iovec *iov, unsigned iovcnt);

	/* Receive up to len octets into buf. Returns octets copied (>= 1), 0 at end of stream
	 * (the peer sent FIN and everything before it was received), -EAGAIN if none are
	 * available (wait for readable), or an error (-ECONNRESET when the peer reset). */
	ssize_t (*recv)(struct rn_conn *c, void *buf, size_t len);

	/* Send FIN after everything already accepted; receiving goes on. */
	int (*shutdown_write)(struct rn_conn *c);

	/* Orderly close: queued octets are still delivered, then FIN. Received octets not read
	 * yet make it a reset instead, as a kernel socket's close does (RFC 2525 2.17): the
	 * peer learns that data was lost. Frees the handle. */
	void (*close)(struct rn_conn *c);

	/* Abortive close: discard queued octets and send RST (SO_LINGER 0 on sockets). Frees
	 * the handle. */
	void (*abort)(struct rn_conn *c);

	/* A file descriptor that is readable when accept/recv would not return -EAGAIN (or the
	 * stream ended/failed) and writable when sendv would accept octets or connect finished
	 * (level-triggered, usable with poll and epoll). The transport owns it: never close it
	 * or read/write it directly. */
	int (*fd)(const struct rn_conn *c);

	/* Local / peer address of the handle (peer: streams only). *len is in/out as for
	 * getsockname(2). */
	int (*local_addr)(const struct rn_conn *c, struct sockaddr *addr, socklen_t *len);
	int (*peer_addr)(const struct rn_conn *c, struct sockaddr *addr, socklen_t *len);

	/* Streams: the TCP payload octets one segment carries now (the sender's effective MSS,
	 * TCP_MAXSEG on a kernel socket), or a negative errno. The QP sizes its FPDUs from it
	 * (MPA MULPDU, RFC 5044 §4.1), so one FPDU travels in one segment. May be NULL. */
	int (*mss)(const struct rn_conn *c);

	/* Streams, optional (NULL: the transport cannot keep records whole, as kernel TCP).
	 * From now on every octet offered to sendv belongs to a record whose total length
	 * rec_len returns from the record's first two octets (MPA FPDUs without markers).
	 * sendv then accepts whole records only, and every TCP segment starts with a record
	 * (the MPA alignment rule, RFC 5044 §5). 0 or a negative errno. */
	int (*set_records)(struct rn_conn *c, size_t (*rec_len)(const uint8_t hdr[2]));

	/* Streams, optional (NULL: use recv). recv without the copy: takes up to len received
	 * octets off the stream, as recv does (the receive window opens for them), and lends
	 * them in place, read-only, as v->run[0..v->n). Returns the octets taken (>= 1; fewer
	 * than len when RN_RX_VIEW_RUNS runs were reached), 0 at end of stream, -EAGAIN, or an
	 * error, as recv. After a return > 0 the caller must call rn_rx_view_release(v) once;
	 * the octets stay valid until then, even if the handle is closed or aborted first (the
	 * view owns them, not the handle), but not after the transport is freed. */
	ssize_t (*recv_lend)(struct rn_conn *c, struct rn_rx_view *v, size_t len);

	/* Streams, optional (NULL: sendv only). Zero-copy transmit: sendv, except that the
	 * entries whose ref[i] is true are referenced, not copied, when the transport can (a
	 * port whose driver copies at transmit). *held says whether any referenced octet of
	 * this call was taken that way; then batch (increasing from call to call) is reported
	 * by ref_released once no octet of it is referenced any more, after the peer
	 * acknowledged it or the transport copied it out. Batches are released in order. */
	ssize_t (*sendv_ref)(struct rn_conn *c, const struct iovec *iov, unsigned iovcnt,
			     const bool *ref, uint64_t batch, bool *held);
	/* The last batch released (0: none yet); clears the readiness its release caused. */
	uint64_t (*ref_released)(struct rn_conn *c);

	/* Streams, optional (NULL: unknown, try sendv). The octets sendv would take now (a
	 * transport in record mode takes whole records only, so fewer may fit). Fewer than need
	 * count as a refused sendv: the stream turns ready once space grows. Or a negative
	 * errno, as sendv. Lets a caller that copies what sendv refuses frame only what fits. */
	ssize_t (*send_space)(struct rn_conn *c, size_t need);

	/* true: fd() never turns writable; readability stands for every change (data, send
	 * space, connect finished, end of stream, failure). Consumers try both directions when
	 * it is readable. A user-space engine signals through an eventfd this way. */
	bool ready_as_readable;
};

struct rn_transport {
	const struct rn_transport_ops *ops;
	void *ctx; /* implementation state (NULL for kernel sockets) */
};

/* Base of every connection handle; implementations embed it first. */
struct rn_conn {
	const struct rn_transport_ops *ops;
};

/* The kernel TCP socket transport (rn_sock.c): a process-wide constant. */
const struct rn_transport *rn_sock_transport(void);
/* Its streams' keepalive, for streams made from now on (process-wide): a peer silent for
 * idle_s is probed every intvl_s and given up after `probes` unanswered probes, and data
 * left unacknowledged as long (TCP_USER_TIMEOUT) ends the stream too; idle_s 0 turns both
 * off. Default RN_SOCK_KA_IDLE_S, _INTVL_S, _PROBES: a host that vanished (power, cable)
 * is given up within 10 s, as a hardware RNIC's keepalive bounds it. -EINVAL when idle_s is
 * set and intvl_s or probes is 0, or any is above its _MAX. */
#define RN_SOCK_KA_IDLE_S 5u
#define RN_SOCK_KA_INTVL_S 1u
#define RN_SOCK_KA_PROBES 5u
#define RN_SOCK_KA_IDLE_MAX 86400u
#define RN_SOCK_KA_INTVL_MAX 3600u
#define RN_SOCK_KA_PROBES_MAX 100u
int rn_sock_set_keepalive(unsigned idle_s, unsigned intvl_s, unsigned probes);

/* ---- a user-space engine and the device's threads (rn_transport.c) -------------------- */
/* A transport whose TCP runs in the process needs threads to drive it. The device lends its
 * own: the progress thread while it is awake, and any thread that polls a CQ. The engine
 * registers these hooks once (process-wide; NULL removes them); until then the device calls
 * nothing. */
struct rn_engine_hooks {
	void (*iter)(void);            /* the progress thread is awake: one bounded pass */
	void (*block)(void);           /* the progress thread is about to sleep */
	void (*consumer_blocks)(void); /* a thread that polled CQs is about to block */
};
void rn_engine_register(const struct rn_engine_hooks *h);
void rn_engine_iter(void);
void rn_engine_block(void);
void rn_engine_consumer_blocks(void);
/* The device marks the calling thread while it polls a CQ (rn_device_cq_progress), so a
 * transport's receive that finds nothing can drive the engine right there instead of waiting
 * for another thread. */
void rn_thread_set_cq_poller(bool on);
bool rn_thread_is_cq_poller(void);

/* ---- holders of references beyond a call (zero-copy transmit; rn_mem.c) --------------- */
/* A transport that keeps reading registered memory after the data-path call that handed it
 * over (until the peer acknowledges) registers drop here, process-wide. Deregistration and a
 * translation-changing reregistration call every drop after their grace period and before
 * they return; drop must end every such reference (copy the octets out). At most
 * RN_MEM_HOLDERS; -ENOSPC beyond. */
#define RN_MEM_HOLDERS 8u
int rn_mem_holder_add(void (*drop)(void *arg), void *arg);
void rn_mem_holder_del(void (*drop)(void *arg), void *arg);

/* ---- descriptor leases (rn_fdlease.c) ----------------------------------------------- */
/* The progress engine watches a stream's fd() without a copy of its own: it holds a lease
 * on the number while it is registered. So a transport closes the descriptor that fd()
 * returns with rn_fd_close, never close(): while the engine holds it the close waits for
 * the engine to let go (at its next look at the stream, soon after the release), so the
 * number is never reused under its registration. The socket's FIN or RST goes when the
 * descriptor is really closed. */
void rn_fd_close(int fd);

/* ---- call-through helpers ------------------------------------------------------------- */

static inline int rn_tp_listen(const struct rn_transport *t, const struct sockaddr *addr,
			       socklen_t len, int backlog, struct rn_conn **out)
{
	return t->ops->listen(t, addr, len, backlog, out);
}

static inline int rn_tp_connect(const struct rn_transport *t, const struct sockaddr *addr,
				socklen_t len, struct rn_conn **out)
{
	return t->ops->connect(t, addr, len, out);
}

static inline int rn_conn_accept(struct rn_conn *l, struct rn_conn **out)
{
	return l->ops->accept(l, out);
}

static inline int rn_conn_connect_status(struct rn_conn *c)
{
	return c->ops->connect_status(c);
}

static inline ssize_t rn_conn_sendv(struct rn_conn *c, const struct iovec *iov, unsigned n)
{
	return c->ops->sendv(c, iov, n);
}

static inline ssize_t rn_conn_recv(struct rn_conn *c, void *buf, size_t len)
{
	return c->ops->recv(c, buf, len);
}

static inline int rn_conn_shutdown_write(struct rn_conn *c)
{
	return c->ops->shutdown_write(c);
}

static inline void rn_conn_close(struct rn_conn *c)
{
	c->ops->close(c);
}

static inline void rn_conn_abort(struct rn_conn *c)
{
	c->ops->abort(c);
}

static inline int rn_conn_fd(const struct rn_conn *c)
{
	return c->ops->fd(c);
}

static inline int rn_conn_local_addr(const struct rn_conn *c, struct sockaddr *a, socklen_t *l)
{
	return c->ops->local_addr(c, a, l);
}

static inline int rn_conn_peer_addr(const struct rn_conn *c, struct sockaddr *a, socklen_t *l)
{
	return c->ops->peer_addr(c, a, l);
}

/* Record mode when the transport has it (see set_records); -EOPNOTSUPP otherwise. */
static inline int rn_conn_set_records(struct rn_conn *c, size_t (*rec_len)(const uint8_t hdr[2]))
{
	return c->ops->set_records ? c->ops->set_records(c, rec_len) : -EOPNOTSUPP;
}

static inline bool rn_conn_ready_as_readable(const struct rn_conn *c)
{
	return c->ops->ready_as_readable;
}

static inline bool rn_conn_can_lend(const struct rn_conn *c)
{
	return c->ops->recv_lend != NULL;
}

/* Only where rn_conn_can_lend. */
static inline ssize_t rn_conn_recv_lend(struct rn_conn *c, struct rn_rx_view *v, size_t len)
{
	return c->ops->recv_lend(c, v, len);
}

/* -EOPNOTSUPP when the transport cannot tell. */
static inline ssize_t rn_conn_send_space(struct rn_conn *c, size_t need)
{
	return c->ops->send_space ? c->ops->send_space(c, need) : -EOPNOTSUPP;
}

static inline void rn_rx_view_release(struct rn_rx_view *v)
{
	v->release(v);
}

static inline bool rn_conn_can_ref(const struct rn_conn *c)
{
	return c->ops->sendv_ref != NULL;
}

/* Only where rn_conn_can_ref. */
static inline ssize_t rn_conn_sendv_ref(struct rn_conn *c, const struct iovec *iov, unsigned n,
					const bool *ref, uint64_t batch, bool *held)
{
	return c->ops->sendv_ref(c, iov, n, ref, batch, held);
}

static inline uint64_t rn_conn_ref_released(struct rn_conn *c)
{
	return c->ops->ref_released(c);
}

/* The stream's MSS, or 0 when the transport cannot tell. */
static inline unsigned rn_conn_mss(const struct rn_conn *c)
{
	int v = c->ops->mss ? c->ops->mss(c) : -1;

	return v > 0 ? (unsigned)v : 0;
}

#endif
