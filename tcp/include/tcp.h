/* softrnic's TCP/IP engine: the TCP a hardware RNIC carries, on DPDK mbufs.
 *
 * One stack = one IPv4 interface (Ethernet, ARP, IPv4, ICMP echo: tcp/net.h) plus TCP per
 * RFC 9293 with RFC 7323 (window scale, timestamps, PAWS), RFC 2018/6675 (SACK), RFC 6298
 * (RTO, Karn), RFC 5681/6582 (NewReno), RFC 9438 (CUBIC) or BBR v1 with pacing, RFC 5961 (challenge ACKs) and
 * RFC 6528 (initial sequence numbers). Connections are found by a 4-tuple rte_hash; timers
 * live on one wheel; the data path allocates nothing but mbufs from the stack's pool.
 *
 * What an RNIC needs from it and no socket API gives:
 *   - record mode: segments never split a record that fits one MSS and each starts with one
 *     (MPA FPDU alignment, RFC 5044 §5) - tcp_conn_set_records;
 *   - zero-copy transmit: segments reference the caller's memory, held until acknowledged -
 *     tcp_send_zc and on_zc_done;
 *   - receive by callback with the mbuf itself, so DDP can place payload straight from it -
 *     on_recv; the receive window closes by what the consumer holds until tcp_conn_recved.
 *
 * Threading. A stack is single-threaded: every call on a stack, its listeners and its
 * connections comes from the one thread that owns the stack at that moment (the port's poll
 * thread, or any thread holding the port's lock: dpdk/dpdk_port.h). Callbacks run on that
 * thread from inside tcp_stack_input and tcp_stack_poll only; no API call ever calls back into
 * the caller (an API call may transmit). Addresses and ports in struct sockaddr_in are in
 * network byte order as usual; every other integer is in host order.
 *
 * Errors are negative errno values. */
#ifndef TCP_H
#define TCP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "net.h"

struct rte_mbuf;
struct tcp_stack;
struct tcp_conn;
struct tcp_listener;

enum tcp_state {
	TCP_CLOSED,
	TCP_LISTEN,
	TCP_SYN_SENT,
	TCP_SYN_RECEIVED,
	TCP_ESTABLISHED,
	TCP_FIN_WAIT_1,
	TCP_FIN_WAIT_2,
	TCP_CLOSE_WAIT,
	TCP_CLOSING,
	TCP_LAST_ACK,
	TCP_TIME_WAIT,
};
const char *tcp_state_name(enum tcp_state s);

enum tcp_cc_algo { TCP_CC_NEWRENO, TCP_CC_CUBIC, TCP_CC_BBR };

/* ---- stack ------------------------------------------------------------------------------ */
/* Default send buffer and receive window to start with: 1 MiB. The receiver takes segments in
 * bursts of 32 and acknowledges them at the end of its pass, so a window must cover the
 * sender's burst and the receiver's pass together: a smaller window at MTU 9000 makes the two
 * ends alternate (one burst a round trip) instead of overlapping (docs/tcp.md).
 * Neither is memory set aside: both bound what the shared mbuf pools may hold. */
#define TCP_BUF_DEFAULT (1u << 20)
/* Left at their defaults, both grow while a connection needs more (docs/tcp.md, "Buffer
 * autotuning"): the send buffer to twice the congestion window, the receive window while the
 * sender fills it, each up to this (Linux's default tcp_wmem limit). */
#define TCP_BUF_MAX_DEFAULT (4u << 20)
struct tcp_stack_cfg {
	struct net_if_cfg nif;  /* the interface: addresses, MTU, pool, transmit (tcp/net.h) */
	uint32_t max_conns;     /* connections + TIME_WAIT entries (hash size); 0 = 4096 */
	uint32_t snd_buf;       /* per-connection send buffer octets; 0 = TCP_BUF_DEFAULT */
	uint32_t rcv_buf;       /* per-connection receive window octets; 0 = TCP_BUF_DEFAULT */
	/* what each grows to; 0: TCP_BUF_MAX_DEFAULT where the buffer is 0, else the buffer
	 * (a buffer given alone stays fixed, as SO_SNDBUF / SO_RCVBUF do on Linux) */
	uint32_t snd_buf_max, rcv_buf_max;
	bool no_sack;           /* do not offer SACK (on by default) */
	bool no_timestamps;     /* do not offer timestamps (on by default) */
	bool no_wscale;         /* do not offer window scaling (on by default) */
	bool no_syncookies;     /* a full SYN queue drops SYNs instead of sending cookies */
	enum tcp_cc_algo cc;    /* default NEWRENO */
	uint32_t delack_us;     /* delayed-ACK timeout; 0 = 1000 (RFC 9293: < 500 ms) */
	uint32_t msl_ms;        /* TIME_WAIT lasts 2 MSL; 0 = 30000 */
	uint32_t syn_retries;   /* SYN retransmissions before -ETIMEDOUT; 0 = 6 */
	uint32_t data_retries;  /* RTO expiries before -ETIMEDOUT (RFC 9293 R2); 0 = 15 */
	/* After tcp_close, while the FIN is unacknowledged (FIN-WAIT-1, CLOSING, LAST-ACK):
	 * retransmissions, or zero-window probes, before a RST and on_closed(-ETIMEDOUT);
	 * 0 = 8 (Linux's tcp_orphan_retries) */
	uint32_t orphan_retries;
	uint32_t fin_timeout_ms; /* FIN-WAIT-2 after tcp_close, then RST; 0 = 60000 (Linux) */
	uint32_t rto_min_ms;    /* 0 = 200 (Linux; RFC 6298 says 1 s, 2.4 allows less) */
	uint32_t rto_init_ms;   /* 0 = 1000 (RFC 6298 2.1) */
	/* Clock in ns, monotonic. NULL = CLOCK_MONOTONIC. Tests pass a virtual clock. */
	uint64_t (*clock_ns)(void *arg);
	void *clock_arg;
	/* RFC 6528 secret; all zero = random (getrandom). Tests may fix it. */
	uint8_t isn_key[16];
};
/* Fills every field with its default (all zero / NULL, as described above). */
void tcp_stack_cfg_default(struct tcp_stack_cfg *cfg);

/* -EINVAL (bad address, MTU, missing pool or tx), -ENOMEM. */
int tcp_stack_create(const struct tcp_stack_cfg *cfg, struct tcp_stack **out);
/* Aborts every connection (RST, no callbacks; zero-copy memory is released before it
 * returns), TIME_WAIT ones included (their state dies with the stack, so a peer whose FIN
 * was never acknowledged learns it now), closes listeners, frees everything. NULL is
 * ignored. */
void tcp_stack_destroy(struct tcp_stack *s);

/* Received frames (from rte_eth_rx_burst). Takes ownership of every mbuf. */
void tcp_stack_input(struct tcp_stack *s, struct rte_mbuf **pkts, uint16_t n);
/* Runs due timers, deferred callbacks and ARP upkeep, then transmits what is queued.
 * Returns the ns until the next timer is due (UINT64_MAX: none), so an idle caller knows
 * how long it may sleep. Call it after every tcp_stack_input batch and when idle. */
uint64_t tcp_stack_poll(struct tcp_stack *s);
/* Transmit what API calls queued (tcp_send ... transmit through this too). */
void tcp_stack_flush(struct tcp_stack *s);

struct net_if *tcp_stack_netif(struct tcp_stack *s);
uint64_t tcp_stack_now_ns(const struct tcp_stack *s);
/* Between hold and release (nested: the outermost pair counts) the stack's clock, and its
 * interface's, read once: every segment of a burst, and its ACKs, see one time. Reading the
 * clock per use cost a busy port ~10 reads per packet. tcp_stack_input, tcp_stack_poll,
 * tcp_send, tcp_send_zc and tcp_conn_recved hold it themselves; a driver may hold it around
 * a whole pass and use tcp_stack_now_ns for its own timing. */
void tcp_stack_clock_hold(struct tcp_stack *s);
void tcp_stack_clock_release(struct tcp_stack *s);

struct tcp_stack_stats {
	uint64_t active_opens, passive_opens, attempt_fails, estab_resets;
	uint64_t in_segs, out_segs, retrans_segs, fast_retrans, rto_expiries;
	uint64_t in_errs, in_csum_errs, out_rsts, in_rsts;
	/* of in_csum_errs: the field held only the pseudo-header's sum (a sender that left the
	 * checksum to an offload its port did not do: a memif peer with memif_csum = off) */
	uint64_t in_csum_partial;
	uint64_t challenge_acks, paws_drops, ooo_segs, dup_segs, syn_backlog_drops;
	/* out-of-order segments dropped because the connection held as many ranges as it may */
	uint64_t ooo_drops;
	/* out-of-order segments whose ACK was held for a later one (SACK compression) */
	uint64_t acks_compressed;
	uint64_t no_port_rsts;  /* RST answered to a segment for no connection/listener */
	/* SYN cookies (docs/tcp.md): SYN-ACKs sent with one while a SYN queue was full, ACKs
	 * that returned a good one, and ACKs to a listener that sent cookies lately whose
	 * cookie was wrong or too old (answered with RST) */
	uint64_t syncookies_sent, syncookies_ok, syncookies_failed;
	uint64_t cur_conns, time_wait;
	/* sends refused (-ENOBUFS) because the send queues hold their share of the pool */
	uint64_t sq_full;
};
void tcp_stack_get_stats(const struct tcp_stack *s, struct tcp_stack_stats *st);

/* ---- connection callbacks ------------------------------------------------------------------ */
struct tcp_conn_ops {
	/* Active open finished: err 0 (ESTABLISHED) or -ECONNREFUSED (RST), -ETIMEDOUT (SYN
	 * retries), -EHOSTUNREACH (no ARP answer). After an error on_closed follows. */
	void (*on_connected)(void *arg, struct tcp_conn *c, int err);
	/* In-order payload: len octets of m from byte offset off of the packet data (m may be a
	 * chain). m is the callee's: rte_pktmbuf_free it when done. The receive window shrinks by
	 * len until the consumer calls tcp_conn_recved. */
	void (*on_recv)(void *arg, struct tcp_conn *c, struct rte_mbuf *m, uint32_t off,
			uint32_t len);
	/* The peer's FIN, after all its data was delivered. */
	void (*on_eof)(void *arg, struct tcp_conn *c);
	/* Send space grew after a tcp_send / tcp_send_zc that could not take everything. */
	void (*on_writable)(void *arg, struct tcp_conn *c);
	/* A tcp_send_zc is over and its memory is no longer referenced by the engine or the
	 * port: err 0 every octet was acknowledged, else why not (-ECONNRESET, ...). */
	void (*on_zc_done)(void *arg, struct tcp_conn *c, void *cookie, int err);
	/* Last callback: the connection is over for the user. err 0 after an orderly close in
	 * both directions (the engine may keep TIME_WAIT state on its own), -ECONNRESET (RST
	 * received), -ETIMEDOUT (retransmissions or keepalive gave up), -ECONNREFUSED /
	 * -EHOSTUNREACH (failed open). The handle is invalid once this returns. */
	void (*on_closed)(void *arg, struct tcp_conn *c, int err);
};

/* ---- listen / accept ------------------------------------------------------------------------ */
struct tcp_listener_ops {
	/* A connection is established and waiting in the accept queue. */
	void (*on_acceptable)(void *arg, struct tcp_listener *l);
};
/* port in host order (0: -EINVAL). backlog bounds half-open plus not-yet-accepted
 * connections; SYNs beyond it get SYN cookies and no state, and those cookies' connections
 * may fill the accept queue up to backlog again (docs/tcp.md). SYNs are dropped and counted
 * when the accept queue alone is full or with no_syncookies. -EADDRINUSE, -ENOMEM. */
int tcp_listen(struct tcp_stack *s, uint16_t port, int backlog,
	       const struct tcp_listener_ops *ops, void *arg, struct tcp_listener **out);
/* Take an established connection: 0, or -EAGAIN when none waits. The new connection's
 * callbacks are ops/arg from now on (data that arrived before is delivered at the next
 * tcp_stack_poll). */
int tcp_accept(struct tcp_listener *l, const struct tcp_conn_ops *ops, void *arg,
	       struct tcp_conn **out);
/* Close the listener; connections still in its queue are reset. */
void tcp_listener_close(struct tcp_listener *l);
uint16_t tcp_listener_port(const struct tcp_listener *l);

/* ---- connect ----------------------------------------------------------------------------- */
/* Active open to dst (AF_INET). local_port 0 picks an ephemeral one. 0 with *out (the result
 * comes through on_connected), or -EINVAL, -EADDRINUSE, -ENETUNREACH (no route), -ENOMEM. */
int tcp_connect(struct tcp_stack *s, const struct sockaddr_in *dst, uint16_t local_port,
		const struct tcp_conn_ops *ops, void *arg, struct tcp_conn **out);

/* ---- data ----------------------------------------------------------------------------------- */
/* Copy octets into the send queue and transmit what the windows allow. Returns octets
 * accepted (may be fewer than offered; in record mode whole records only), -EAGAIN when
 * nothing fits now (on_writable follows), -ENOTCONN before ESTABLISHED, -EPIPE after
 * tcp_shutdown or once the connection is over, -ENOBUFS when the pool (net_if_cfg.pool) has
 * no mbuf for the copy now (nothing taken; retry after a poll: acknowledgements free some). */
ssize_t tcp_send(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt);
/* Zero-copy: segments reference iov's memory until acknowledged, then on_zc_done(cookie).
 * All or nothing: 0, -EAGAIN (not enough send space), -ENOBUFS (no mbuf in the pool now),
 * -EINVAL when it would take more than 1024 mbufs (one per pool buffer's data room, at most
 * 32 KiB), other errors as tcp_send. The memory must stay valid and unchanged until
 * on_zc_done. */
int tcp_send_zc(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt, void *cookie);
/* Mixed: as tcp_send (octets accepted, whole records, the same errors), but the entries
 * whose ref[i] is true are referenced, not copied, the others copied. When any referenced
 * octet was accepted (*held true; held may be NULL), on_zc_done(cookie) follows once the
 * engine and the port no longer reference it; until then that memory must stay valid and
 * unchanged. -EINVAL when the accepted part would need more than 1024 mbufs. */
ssize_t tcp_send_ref(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt,
		     const bool *ref, void *cookie, bool *held);
/* The caller's memory is about to go (a deregistration): every referenced octet still
 * queued, on every connection, is copied into the engine's own buffers, so that once the
 * port holds no clone of it (ports that copy at transmit hold none after their burst) the
 * memory is no longer read and on_zc_done follows. A connection whose copy found the pool
 * empty is reset (on_closed(-ENOBUFS)). Returns how many were reset. */
unsigned tcp_stack_zc_unref(struct tcp_stack *s);
/* Record mode (for MPA): from now on every octet sent belongs to a record whose total length
 * rec_len returns from the record's first two octets. tcp_send takes whole records only,
 * a segment never splits a record that fits one MSS, and every segment starts with a record.
 * NULL turns it off. */
typedef size_t (*tcp_rec_len_fn)(const uint8_t hdr[2]);
void tcp_conn_set_records(struct tcp_conn *c, tcp_rec_len_fn rec_len);
/* The consumer released len octets delivered by on_recv: the window opens again. */
void tcp_conn_recved(struct tcp_conn *c, uint32_t len);

/* ---- close ---------------------------------------------------------------------------------- */
/* FIN after everything queued; receiving goes on. -ENOTCONN when not connected, -ENOBUFS
 * when the pool has no mbuf for the FIN now (retry after a poll). */
int tcp_shutdown(struct tcp_conn *c);
/* Orderly close: queued data still goes out, then FIN. Callbacks keep coming (on_zc_done,
 * on_recv is discarded and freed by the engine) until on_closed. */
void tcp_close(struct tcp_conn *c);
/* Abortive close: RST, queues dropped. No callback follows except on_zc_done(-ECONNABORTED)
 * for outstanding zero-copy sends, run before tcp_abort returns; the handle is invalid once
 * it returns. */
void tcp_abort(struct tcp_conn *c);

/* ---- queries and options ------------------------------------------------------------------- */
enum tcp_state tcp_conn_state(const struct tcp_conn *c);
/* Payload octets one segment carries (effective send MSS, options included). */
uint32_t tcp_conn_mss(const struct tcp_conn *c);
/* Octets tcp_send would accept now. */
uint32_t tcp_conn_send_space(const struct tcp_conn *c);
/* on_writable after the next acknowledgement that leaves send space, as after a send that
 * was not taken whole: for a user that checks tcp_conn_send_space instead of trying. */
void tcp_conn_want_writable(struct tcp_conn *c);
void tcp_conn_addrs(const struct tcp_conn *c, struct sockaddr_in *local,
		    struct sockaddr_in *peer);
/* Keepalive (RFC 9293 3.8.4): off by default. idle_s 0 turns it off. */
int tcp_conn_set_keepalive(struct tcp_conn *c, uint32_t idle_s, uint32_t intvl_s,
			   uint32_t probes);
/* Nagle (RFC 9293 3.7.4): off by default (an RNIC sends whole FPDUs at once). */
void tcp_conn_set_nagle(struct tcp_conn *c, bool on);

struct tcp_conn_stats {
	enum tcp_state state;
	uint32_t snd_mss, rcv_mss, snd_wnd, rcv_wnd, cwnd, ssthresh;
	uint8_t snd_wscale, rcv_wscale;
	bool sack_ok, ts_ok;
	uint32_t srtt_us, rttvar_us, rto_us;
	uint64_t bytes_sent, bytes_acked, bytes_received;
	uint64_t segs_out, segs_in, retrans, fast_retrans, rto_expiries, ooo_segs, dup_acks;
	uint64_t dsacks;       /* DSACKs received (RFC 2883): a segment reached the peer twice */
	uint64_t undos;        /* recoveries undone as spurious (the originals had arrived) */
	uint32_t reo_wnd_us;   /* RACK's reordering window now (RFC 8985) */
	uint32_t snd_buf, rcv_buf; /* the send buffer and receive window now (autotuning) */
};
void tcp_conn_get_stats(const struct tcp_conn *c, struct tcp_conn_stats *st);

#endif
