/* The test/benchmark protocol shared by softrnic-tcp (softrnic's TCP engine on a DPDK port)
 * and its kernel twin tests/tcp/linux/ktcp_peer.c (kernel sockets). Both parse the same
 * command line (stcp_opts.c) and run the same per-connection session logic (stcp_sess.c);
 * only the transport underneath differs, so either side of a test can be Linux.
 *
 * Wire protocol of one connection (docs/testing.md):
 *   source -> sink : header "STCP" | id (u32 BE) | length (u64 BE), then length octets of the
 *                    pattern of stream id (stcp_pattern.c), then FIN;
 *   sink -> source : after verifying every octet, the verdict 'K', then FIN.
 *   pingpong -> echo : message k is octets [k*size, (k+1)*size) of the pattern of the
 *                    connection's id; the echo side returns every octet as is.
 * A source therefore only succeeds when the sink verified everything, and a sink only when the
 * header's length arrived intact and in order. */
#ifndef STCP_H
#define STCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STCP_HDR_LEN 16u
#define STCP_STAGE 65536u

enum stcp_role { STCP_SOURCE, STCP_SINK, STCP_ECHO, STCP_PING };
enum stcp_stop { STCP_STOP_NONE, STCP_STOP_RST, STCP_STOP_FIN };

/* How a connection ended, as seen by the tool; --expect names one of these. */
enum stcp_outcome {
	STCP_PENDING,
	STCP_OK,       /* every octet verified (or the requested stop was carried out) */
	STCP_E_VERIFY, /* a received octet differs from the pattern */
	STCP_E_EOF,    /* the peer closed before the transfer was complete */
	STCP_E_RESET,  /* RST received (-ECONNRESET / -EPIPE) */
	STCP_E_REFUSED,/* active open answered by RST */
	STCP_E_TIMEOUT,/* the transport gave up (-ETIMEDOUT) or the tool's --timeout hit */
	STCP_E_PROTO,  /* bad header or unexpected octets */
	STCP_E_OTHER,
};
const char *stcp_outcome_name(enum stcp_outcome o);

/* What the transport has to do next on the connection. */
enum stcp_act { STCP_ACT_NONE, STCP_ACT_SHUTDOWN, STCP_ACT_ABORT, STCP_ACT_CLOSE };

struct stcp_opts {
	bool listen;
	uint16_t port;          /* host order */
	char host[64];          /* connect: dotted quad */
	enum stcp_role role;
	uint64_t bytes;         /* --source */
	uint64_t ping_n;        /* --pingpong */
	uint32_t size;          /* --size (pingpong message) */
	uint32_t conns;         /* --conns, default 1 */
	enum stcp_stop stop;
	uint64_t stop_after;
	double timeout_s;       /* 0 = none */
	bool stats;
	bool quiet;
	bool zc;                /* softrnic-tcp: send with tcp_send_zc (ktcp_peer ignores it) */
	enum stcp_outcome expect;  /* STCP_OK unless --expect */
	uint32_t burst;         /* handshakes in flight when connecting (--burst) */
};
/* Parses argv[1..]; on error prints why (with the usage) and returns -1. */
int stcp_opts_parse(struct stcp_opts *o, int argc, char **argv, const char *prog);
void stcp_usage(const char *prog);

/* ---- pattern: octet off of stream id -------------------------------------------------- */
void stcp_pattern_fill(uint32_t id, uint64_t off, uint8_t *buf, size_t len);
/* Index of the first octet of buf that differs from the pattern, or len when all match. */
size_t stcp_pattern_check(uint32_t id, uint64_t off, const uint8_t *buf, size_t len);

/* ---- one connection's session -------------------------------------------------------------- */
struct stcp_sess {
	const struct stcp_opts *o;
	enum stcp_role role;
	uint32_t id;
	uint64_t total;        /* source: octets to send; sink: from the header */
	uint64_t limit;        /* source: octets before the requested stop */
	uint64_t tx_off, rx_off;  /* payload octets sent (accepted) / verified */
	uint8_t hdr[STCP_HDR_LEN];
	unsigned hdr_n;        /* header octets sent (source) or received (sink) */
	bool verdict_pending;  /* sink: 'K' still to send */
	bool verdict_ok;       /* source: 'K' received */
	bool tx_complete, eof, stopped;
	enum stcp_act act;
	enum stcp_outcome out;
	char why[128];
	uint64_t t_start, t_end;  /* ns: established / outcome */
	uint64_t raw_rx, raw_tx;  /* octets on the wire in each direction, header included */
	/* pingpong */
	uint64_t ping_k, ping_t0;
	bool ping_inflight;
	uint64_t *lat;         /* ns per exchange */
	/* transmit staging: pattern octets [stage_off, stage_off + stage_len) */
	uint8_t *stage;
	uint64_t stage_off;
	size_t stage_len;
};

uint64_t stcp_now_ns(void);
int stcp_sess_init(struct stcp_sess *s, const struct stcp_opts *o, uint32_t id);
void stcp_sess_fini(struct stcp_sess *s);
/* The connection is established (starts the clock). */
void stcp_sess_start(struct stcp_sess *s);
/* Octets to send now: *p points at them (valid until the next call), 0 when none. */
size_t stcp_sess_tx_peek(struct stcp_sess *s, const uint8_t **p);
void stcp_sess_tx_done(struct stcp_sess *s, size_t n);
void stcp_sess_rx(struct stcp_sess *s, const uint8_t *p, size_t n);
void stcp_sess_eof(struct stcp_sess *s);
/* err: negative errno from the transport. */
void stcp_sess_error(struct stcp_sess *s, int err);
/* The connection is over in both directions without error. */
void stcp_sess_closed(struct stcp_sess *s);
/* Takes the pending action (the transport carries it out once). */
enum stcp_act stcp_sess_take_act(struct stcp_sess *s);
void stcp_sess_fail(struct stcp_sess *s, enum stcp_outcome out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- end-of-run report (stcp_report.c) ------------------------------------------------------ */
struct stcp_sess_agg {
	uint32_t n, ok, expected;
	uint32_t by_outcome[STCP_E_OTHER + 1];
	uint64_t payload, raw_rx, raw_tx;
	uint64_t t_first, t_last;
};
/* Prints the result lines every test and the benchmark parse; returns the exit status
 * (0 when every session ended as expected, 1 otherwise, 2 timed out). The n sessions lie
 * stride octets apart from first (they sit inside each tool's connection records). */
int stcp_report(const char *tool, const struct stcp_opts *o, struct stcp_sess *first,
		size_t stride, uint32_t n, bool timed_out);

#endif
