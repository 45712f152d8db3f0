/* Private to the TCP engine (tcp_*.c): the stack, listener and connection structures and the
 * functions the engine's files call in one another. Nothing here is API; see tcp/tcp.h and
 * docs/tcp.md for the design. */
#ifndef TCP_INT_H
#define TCP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "tcp.h"
#include "tcp_cc.h"
#include "tcp_isn.h"
#include "tcp_opt.h"
#include "tcp_prr.h"
#include "tcp_rack.h"
#include "tcp_rto.h"
#include "tcp_sack.h"
#include "tcp_segment.h"
#include "tcp_syncookie.h"
#include "tcp_seq.h"
#include "tcp_wheel.h"

struct rte_hash;
struct rte_mbuf;
struct rte_mempool;

/* Intrusive doubly-linked list (no allocation). */
struct tcp_link {
	struct tcp_link *next, *prev;
};
static inline void tcp_link_init(struct tcp_link *h) { h->next = h->prev = h; }
static inline bool tcp_link_empty(const struct tcp_link *h) { return h->next == h; }
static inline bool tcp_link_linked(const struct tcp_link *l) { return l->next != NULL; }
static inline void tcp_link_add_tail(struct tcp_link *h, struct tcp_link *l)
{
	l->prev = h->prev;
	l->next = h;
	h->prev->next = l;
	h->prev = l;
}
static inline void tcp_link_del(struct tcp_link *l)
{
	if (l->next == NULL)
		return;
	l->prev->next = l->next;
	l->next->prev = l->prev;
	l->next = l->prev = NULL;
}
#define TCP_CONTAINER(p, type, field) ((type *)(void *)((char *)(p)-offsetof(type, field)))

#define TCP_TICK_US 100u
#define TCP_MAX_WSCALE 14u
#define TCP_DEFAULT_MSS 536u       /* RFC 9293 3.7.1: without the option */
#define TCP_CHALLENGE_PER_SEC 1000u /* RFC 5961 7: ACK throttling */
#define TCP_PAWS_IDLE_MS (24ull * 24 * 3600 * 1000) /* RFC 7323 5.5: 24 days */
#define TCP_PAWS_WINDOW 1u  /* TSval ticks older than TS.Recent that PAWS still takes */
#define TCP_OOW_ACK_US 500000u /* one reply a connection to refused pure ACKs (Linux) */
#define TCP_PERSIST_MAX_US 60000000u
#define TCP_RTO_MAX_US 120000000u
/* Out-of-order ranges a connection may hold: enough for every other full segment of its
 * receive buffer missing (heavy reordering or loss at a large window), at least this. */
#define TCP_OOO_MIN 32u
#define TCP_OOO_INIT 8u            /* ranges allocated at the first out-of-order segment */
#define TCP_COMP_MAX 44u           /* out-of-order segments one held ACK may cover (D184) */
#define TCP_SQ_INIT 64u            /* send-queue entries at start (doubles) */
#define TCP_TLP_MIN_US 10000u      /* RFC 8985 7.2: PTO at least 10 ms */
#define TCP_COPY_MAX 256u          /* payload copied behind the headers, not cloned */

/* One zero-copy send: the caller's memory, held until acknowledged and released. */
struct tcp_zc {
	struct tcp_link link;      /* conn->zc_list (send order) or stack->zc_free */
	struct tcp_stack *s;
	struct tcp_conn *conn;     /* NULL: orphaned at stack teardown */
	void *cookie;
	uint32_t end_seq;          /* sequence after its last octet */
	bool released;             /* every mbuf referencing it was freed */
	bool copied;               /* tcp_stack_zc_unref copied it: delivered like tcp_send's */
	struct rte_mbuf_ext_shared_info shinfo; /* refcnt = mbufs attached to the memory */
};

/* Send-queue entry: one mbuf (copied data or the caller's memory) from sequence seq. */
struct tcp_sq_ent {
	struct rte_mbuf *m;
	uint32_t seq;
	uint32_t len;
	bool copy;                 /* our buffer (may be appended to) */
};

/* Out-of-order segment held for reassembly. */
/* Out-of-order range [seq, seq+len): the segments holding it, linked (with their payload
 * offset and length) through the mbuf dynamic field of tcp_reass.c. */
struct tcp_ooo_ent {
	struct rte_mbuf *head, *tail;
	uint32_t seq, len;
};

enum tcp_conn_flags {
	TCPF_ACK_NOW = 1u << 0,     /* send an ACK at the next output */
	TCPF_FIN_QUEUED = 1u << 1,  /* tcp_shutdown / tcp_close: FIN after the queue */
	TCPF_FIN_SENT = 1u << 2,
	TCPF_CLOSED_BY_USER = 1u << 3, /* tcp_close called: discard data, on_closed still due */
	TCPF_WANT_WRITABLE = 1u << 4,
	TCPF_FIN_RCVD = 1u << 5,     /* peer FIN consumed into sequence space */
	TCPF_EOF_PENDING = 1u << 6,  /* on_eof not yet delivered (no ops yet / deferred) */
	TCPF_ACCEPTED = 1u << 7,
	TCPF_DEAD = 1u << 8,         /* user handle gone, free at the next reap */
	TCPF_USER_GONE = 1u << 9,    /* on_closed delivered (TIME_WAIT kept by the engine) */
	TCPF_RTT_TIMING = 1u << 10,  /* rtt_seq timed (Karn: cleared on retransmission) */
	TCPF_SYN_RETX = 1u << 11,
	TCPF_NAGLE = 1u << 12,
	TCPF_IN_RECOVERY = 1u << 13,
	TCPF_DEFER = 1u << 14,       /* on the stack's deferred-callback list */
	TCPF_PROBE_WINDOW = 1u << 15, /* persist expiry: send what fits (SWS override) */
	TCPF_FINISH = 1u << 16,      /* on_closed(close_err) owed once zero-copy is done */
	TCPF_WRITABLE_DUE = 1u << 17, /* on_writable owed */
	TCPF_ABORTED = 1u << 18,     /* tcp_abort: only on_zc_done may still come */
	TCPF_FIN_OOO = 1u << 19,     /* a FIN arrived out of order at fin_seq */
	TCPF_TLP_DONE = 1u << 20,    /* a tail loss probe went out since the last new ACK */
	TCPF_HALF_OPEN = 1u << 21,   /* a listener's child in SYN-RECEIVED (listener->half_open) */
};

struct tcp_conn {
	struct tcp_stack *s;
	struct tcp_link link;      /* stack->conns */
	struct tcp_link defer;     /* stack->deferred (callbacks owed at the next poll) */
	struct tcp_link lq;        /* listener's accept queue */
	struct tcp_listener *listener; /* passive open not yet accepted */
	enum tcp_state state;
	uint32_t flags;
	int close_err;             /* err for on_closed when it is due */
	bool in_hash;
	const struct tcp_conn_ops *ops;
	void *arg;

	uint32_t laddr, raddr;     /* network order */
	uint16_t lport, rport;     /* host order */

	/* send sequence space (RFC 9293 3.3.1) */
	uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2, max_snd_wnd;
	uint32_t snd_end;          /* sequence after the last queued octet */
	uint8_t snd_wscale, rcv_wscale;
	uint16_t snd_mss;          /* peer's MSS minus our option overhead */
	uint16_t rcv_mss;
	uint16_t peer_mss;
	bool ws_ok, ts_ok, sack_ok;

	/* receive sequence space */
	uint32_t irs, rcv_nxt, rcv_adv;  /* rcv_adv: right edge announced */
	uint32_t rcv_held;         /* delivered (or waiting for delivery), not tcp_conn_recved */
	uint32_t rcv_buf;          /* the receive window now: cfg.rcv_buf, growing (tcp_reass.c) */
	uint32_t last_ack_sent;
	uint32_t fin_seq;          /* peer FIN sequence, when TCPF_FIN_RCVD */
	uint32_t unacked_bytes;    /* in-order octets received since the last ACK */
	/* SACK compression (D184): the RCV.NXT the out-of-order ACKs below were counted at,
	 * the immediate ones sent for it, the SACK blocks changed since the last ACK (the
	 * front of sack_rcv) and the out-of-order segments whose ACK is held */
	uint32_t comp_nxt;
	uint8_t comp_dups, comp_fresh;
	uint16_t comp_held;
	uint64_t comp_last_us;     /* when the last out-of-order segment came */
	uint64_t oow_ack_us;       /* when a refused pure ACK was last answered */

	/* timestamps (RFC 7323) */
	uint32_t ts_recent;
	uint64_t ts_recent_ms;     /* when ts_recent was set (24-day rule) */

	/* send queue */
	struct tcp_sq_ent *sq;
	uint32_t sq_cap, sq_head, sq_cnt;
	uint32_t sq_bytes;         /* octets held by the queue (acknowledged ones until freed) */
	uint32_t sq_hint;          /* entry index where the last lookup ended (from sq_head) */
	struct tcp_link zc_list;
	uint32_t zc_outstanding;

	/* record mode */
	tcp_rec_len_fn rec_len;
	uint32_t rec_start;        /* first octet of record mode (then rec_base, see rec_advance_base) */
	uint32_t rec_base;         /* a record boundary at or below snd_una */
	uint32_t rec_base_next;    /* the boundary after it (its header may be freed) */
	bool rec_base_next_ok;
	uint32_t rec_walk;         /* a record boundary found last (walk cache) */

	/* receive queues */
	struct tcp_ooo_ent *ooo;    /* sorted by seq, disjoint, not touching; allocated lazily */
	uint32_t ooo_cnt, ooo_cap;
	struct rte_mbuf *rxq_head, *rxq_tail; /* in-order data waiting for a consumer */
	struct tcp_sack_rcv sack_rcv;

	/* retransmission, congestion */
	struct tcp_rto rto;
	struct tcp_cc cc;
	struct tcp_sack_snd sack_snd;
	uint32_t dupacks;
	uint32_t lt_extra;         /* RFC 3042 limited transmit: octets allowed beyond cwnd */
	uint32_t rtt_seq;
	uint64_t rtt_start_us;
	uint32_t rtx_count;        /* consecutive RTO expiries */
	uint32_t persist_backoff;  /* probes since the window shut (the shift stops at 16) */
	uint64_t rxt_round_us;     /* SACK recovery without RACK: holes last retransmitted */
	uint32_t tlp_ts;           /* TSval of the last tail loss probe */
	struct tcp_rack rack;      /* RACK's segment log and state (tcp_recovery.c) */
	struct tcp_rate rate;      /* delivery-rate sampler, on the log's entries (BBR only) */
	uint64_t pace_next_us;     /* pacing: no data segment leaves before (tcp_pace.c) */
	struct tcp_prr prr;        /* PRR during a SACK recovery */
	/* undo of a spurious recovery: the window before it, the retransmissions it made,
	 * the DSACKs for them, the TSval (0: none yet) and end of its first retransmission,
	 * and the sequence space [undo_una, undo_max) it repaired */
	uint32_t undo_cwnd, undo_ssthresh, undo_retrans, undo_dsacks, undo_ts, undo_end;
	uint32_t undo_una, undo_max;
	bool undo_ok;
	bool rec_rto;              /* the recovery in progress began with an RTO */
	/* a duplicate arrived: the next ACK reports [dsack_start, dsack_end) first (RFC 2883) */
	uint32_t dsack_start, dsack_end;
	bool dsack_due;
	uint64_t last_send_us;     /* for restart after idle */

	/* keepalive */
	uint32_t ka_idle_s, ka_intvl_s, ka_probes, ka_sent;
	uint64_t last_rcv_us;

	struct tcp_timer t_rtx, t_persist, t_delack, t_ka; /* t_ka also TIME_WAIT / FIN_WAIT_2 */
	struct tcp_timer t_tlp;    /* tail loss probe (RFC 8985 7, simplified) */
	struct tcp_timer t_reo;    /* RACK's reordering timer (RFC 8985 6.2 step 5) */
	struct tcp_timer t_pace;   /* pacing: the next data segment may leave */

	struct tcp_conn_stats st;
};

struct tcp_listener {
	struct tcp_stack *s;
	struct tcp_link link;      /* stack->listeners */
	uint16_t port;
	int backlog;
	int pending;               /* half-open + established not accepted */
	int half_open;             /* of pending: children in SYN-RECEIVED (the SYN queue) */
	bool cookies_used;         /* a SYN cookie went out, last at cookie_sent_us */
	uint64_t cookie_sent_us;
	struct tcp_link acceptq;
	const struct tcp_listener_ops *ops;
	void *arg;
};

struct tcp_stack {
	struct tcp_stack_cfg cfg;
	struct net_if *nif;
	struct rte_mempool *pool;
	struct rte_hash *hash;
	struct tcp_conn *hash_last; /* the last lookup's hit: segments come in runs */
	struct tcp_wheel wheel;
	struct tcp_isn isn;
	struct tcp_syncookie cookie;
	struct tcp_link conns, listeners, deferred, reap, zc_free;
	uint32_t nconns;
	uint32_t sq_mbufs;         /* mbufs every send queue holds together */
	uint32_t sq_mbufs_max;     /* their bound: the pool less what output needs (tcp_send.c) */
	unsigned cb_depth;         /* inside input/poll: callbacks allowed, frees deferred */
	unsigned clk_depth;        /* inside tcp_stack_clock_hold: tcp_stack_now_ns is clk_ns */
	uint64_t clk_ns;
	uint64_t next_due_us;      /* no timer is due before this (UINT64_MAX: none armed) */
	uint16_t next_port;
	uint64_t challenge_sec;    /* RFC 5961 throttling window */
	uint32_t challenge_cnt;
	struct tcp_stack_stats st;
	char hash_name[32];
};

/* tcp_stack.c */
uint64_t tcp_now_us(const struct tcp_stack *s);
static inline uint32_t tcp_now_ms32(const struct tcp_stack *s)
{
	return (uint32_t)(tcp_now_us(s) / 1000);
}

/* tcp_hash.c */
int tcp_hash_create(struct tcp_stack *s);
void tcp_hash_destroy(struct tcp_stack *s);
struct tcp_conn *tcp_hash_lookup(struct tcp_stack *s, uint32_t laddr, uint16_t lport,
				 uint32_t raddr, uint16_t rport);
int tcp_hash_add(struct tcp_conn *c);
void tcp_hash_del(struct tcp_conn *c);
int tcp_port_pick(struct tcp_stack *s, uint32_t raddr, uint16_t rport, uint16_t *out);
struct tcp_listener *tcp_listener_find(struct tcp_stack *s, uint16_t port);

/* tcp_conn.c */
/* What every connection of s announces: its MSS option and its window scale. */
uint16_t tcp_stack_rcv_mss(const struct tcp_stack *s);
uint8_t tcp_stack_rcv_wscale(const struct tcp_stack *s);
struct tcp_conn *tcp_conn_alloc(struct tcp_stack *s);
void tcp_conn_set_state(struct tcp_conn *c, enum tcp_state st);
void tcp_conn_init_send(struct tcp_conn *c, uint32_t iss);
void tcp_conn_apply_syn_opts(struct tcp_conn *c, const struct tcp_seg *seg);
void tcp_conn_established(struct tcp_conn *c);
void tcp_conn_finish(struct tcp_conn *c, int err);  /* over: on_closed and release */
void tcp_conn_release(struct tcp_conn *c);          /* drop queues, unhash, to reap */
void tcp_conn_free(struct tcp_conn *c);
void tcp_conn_defer(struct tcp_conn *c);
void tcp_reap(struct tcp_stack *s);
void tcp_run_deferred(struct tcp_stack *s);
bool tcp_conn_user_alive(const struct tcp_conn *c);

/* tcp_listen.c */
/* A new child of l for seg's 4-tuple: hashed, counted in pending, on the accept queue. */
struct tcp_conn *tcp_listen_child(struct tcp_listener *l, const struct tcp_seg *seg);
void tcp_listen_syn(struct tcp_listener *l, struct rte_mbuf *m, const struct tcp_seg *seg);
void tcp_listen_conn_established(struct tcp_conn *c);
void tcp_listen_conn_gone(struct tcp_conn *c);

/* tcp_listen_cookie.c */
void tcp_listen_cookie_reply(struct tcp_listener *l, const struct tcp_seg *seg);
/* An ACK for a listening port: true when it returned a good cookie (m is then taken: a new
 * connection, or dropped while the accept queue is full). */
bool tcp_listen_cookie_ack(struct tcp_listener *l, struct rte_mbuf *m, struct tcp_seg *seg);

/* tcp_input.c */
void tcp_l4_input(void *arg, struct rte_mbuf *m, const struct net_ip_info *info);

/* tcp_state.c */
void tcp_state_syn_sent(struct tcp_conn *c, struct rte_mbuf *m, const struct tcp_seg *seg);
void tcp_state_sync(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg *seg);
void tcp_state_fin_acked(struct tcp_conn *c);
void tcp_enter_time_wait(struct tcp_conn *c);

/* tcp_ack.c */
/* Returns false when the segment must be dropped (ACK of unsent data). */
bool tcp_ack_process(struct tcp_conn *c, const struct tcp_seg *seg);

/* tcp_reass.c */
int tcp_reass_init(void); /* the mbuf dynamic field linking the receive queue */
void tcp_reass_data(struct tcp_conn *c, struct rte_mbuf *m, const struct tcp_seg *seg);
void tcp_reass_deliver_pending(struct tcp_conn *c);
void tcp_reass_purge(struct tcp_conn *c);
/* [start, end) arrived twice: the next ACK reports it first (RFC 2883). */
void tcp_reass_dsack(struct tcp_conn *c, uint32_t start, uint32_t end);

/* tcp_paws.c */
bool tcp_paws_reject(struct tcp_conn *c, const struct tcp_seg *seg);
void tcp_paws_update(struct tcp_conn *c, const struct tcp_seg *seg);

/* tcp_output.c */
void tcp_output(struct tcp_conn *c);
int tcp_send_segment(struct tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags);
void tcp_send_ack(struct tcp_conn *c);
void tcp_send_challenge_ack(struct tcp_conn *c);
void tcp_send_rst_for(struct tcp_stack *s, const struct tcp_seg *seg);
void tcp_send_rst_conn(struct tcp_conn *c);
uint16_t tcp_rcv_wnd_field(struct tcp_conn *c, bool syn);
uint32_t tcp_rcv_space(const struct tcp_conn *c);
uint32_t tcp_snd_buf_now(const struct tcp_conn *c);
uint32_t tcp_flight(const struct tcp_conn *c);

/* tcp_send.c */
uint32_t tcp_sq_space(const struct tcp_conn *c);
/* Empty mbufs taken from the pool beforehand; append_copy uses them in order. */
struct tcp_mbuf_stash {
	struct rte_mbuf **m;
	unsigned n, used;
};
int tcp_sq_append_copy(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt, size_t off,
		       size_t len, struct tcp_mbuf_stash *st);
int tcp_sq_push(struct tcp_conn *c, struct rte_mbuf *m, uint32_t len, bool copy);
int tcp_sq_reserve(struct tcp_conn *c, uint32_t n); /* room for n more entries */
/* n more mbufs may join the send queues (the pool's reserve for output stays free). */
bool tcp_sq_budget(struct tcp_conn *c, uint32_t n);
/* The bound on the send queues' mbufs for a pool of pool_size. */
uint32_t tcp_sq_mbufs_max(uint32_t pool_size);
struct rte_mbuf *tcp_sq_clone(struct tcp_conn *c, uint32_t seq, uint32_t len);
void tcp_sq_ack(struct tcp_conn *c, uint32_t una);
void tcp_sq_purge(struct tcp_conn *c);
uint32_t tcp_seg_len_at(struct tcp_conn *c, uint32_t seq, uint32_t avail, uint32_t mss);
bool tcp_sq_read(const struct tcp_conn *c, uint32_t seq, uint8_t *out, uint32_t n);
/* tcp_sq_read for transmission: the lookup hint follows, as after tcp_sq_clone */
bool tcp_sq_copy_out(struct tcp_conn *c, uint32_t seq, uint8_t *out, uint32_t n);
int tcp_send_check(const struct tcp_conn *c);
size_t tcp_iov_total(const struct iovec *iov, unsigned iovcnt);
ssize_t tcp_rec_whole(const struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt,
		      size_t total, size_t limit);
ssize_t tcp_send_take(struct tcp_conn *c, const struct iovec *iov, unsigned iovcnt, size_t total);

/* tcp_zc.c */
void tcp_zc_complete(struct tcp_conn *c, bool all, int err);
void tcp_zc_free_all(struct tcp_stack *s);

/* tcp_recv.c */
void tcp_recv_window_update(struct tcp_conn *c);

/* tcp_timers.c */
void tcp_timers_init(struct tcp_conn *c);
void tcp_timers_cancel_all(struct tcp_conn *c);
void tcp_rtx_arm(struct tcp_conn *c);
void tcp_rtx_restart(struct tcp_conn *c);
void tcp_persist_arm(struct tcp_conn *c);
void tcp_tlp_arm(struct tcp_conn *c);
void tcp_delack_arm(struct tcp_conn *c);
void tcp_ack_within(struct tcp_conn *c, uint64_t us);
void tcp_ka_reset(struct tcp_conn *c);
void tcp_ka_closing(struct tcp_conn *c);
void tcp_timer_arm_ms(struct tcp_conn *c, struct tcp_timer *t, uint64_t ms);
void tcp_timer_arm_us(struct tcp_conn *c, struct tcp_timer *t, uint64_t us);
void tcp_reo_arm(struct tcp_conn *c, uint64_t us);

/* tcp_recovery.c: SACK loss recovery by RACK and PRR */
bool tcp_recovery_on(const struct tcp_conn *c);  /* SACK, and RACK's log intact */
/* prior_pipe: RACK's pipe before the ACK */
void tcp_recovery_on_ack(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t old_una,
			 uint32_t old_sacked, uint32_t prior_pipe);
uint32_t tcp_recovery_detect(struct tcp_conn *c); /* octets newly marked lost */
void tcp_recovery_end(struct tcp_conn *c);
void tcp_recovery_send(struct tcp_conn *c);
void tcp_recovery_timer_init(struct tcp_conn *c);
bool tcp_recovery_rto(struct tcp_conn *c);

/* tcp_pace.c: pacing of data segments at the congestion control's rate */
bool tcp_pace_wait(struct tcp_conn *c);          /* too early: the pacing timer is armed */
void tcp_pace_sent(struct tcp_conn *c, uint32_t len);
void tcp_pace_app_limited(struct tcp_conn *c);   /* the application hands over data */
void tcp_pace_timer_init(struct tcp_conn *c);

/* tcp_undo.c: undo of a spurious recovery */
void tcp_undo_mark(struct tcp_conn *c);          /* a recovery or RTO starts */
void tcp_undo_retransmitted(struct tcp_conn *c, uint32_t end); /* it resent up to end */
void tcp_undo_dsack(struct tcp_conn *c, const struct tcp_seg *seg); /* seg has a DSACK */
void tcp_undo_check(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t old_una);

#endif
