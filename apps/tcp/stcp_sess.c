/* One connection's session of softrnic-tcp / ktcp_peer: what to send, how to check what
 * arrives, and when the connection has ended as it should (stcp.h has the wire protocol).
 * Transport-neutral: the transport feeds received octets and events in, asks what to send
 * and carries out the actions (shutdown, abort, close) the session asks for. */
#include <errno.h>
#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stcp.h"

static const char hdr_magic[4] = { 'S', 'T', 'C', 'P' };

uint64_t stcp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *stcp_outcome_name(enum stcp_outcome o)
{
	static const char *const names[] = {
		[STCP_PENDING] = "pending", [STCP_OK] = "ok", [STCP_E_VERIFY] = "verify",
		[STCP_E_EOF] = "eof", [STCP_E_RESET] = "reset", [STCP_E_REFUSED] = "refused",
		[STCP_E_TIMEOUT] = "timeout", [STCP_E_PROTO] = "proto", [STCP_E_OTHER] = "other",
	};
	return (unsigned)o <= STCP_E_OTHER ? names[o] : "?";
}

int stcp_sess_init(struct stcp_sess *s, const struct stcp_opts *o, uint32_t id)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->role = o->role;
	s->id = id;
	if (s->role == STCP_SOURCE || s->role == STCP_PING) {
		s->stage = malloc(STCP_STAGE > o->size ? STCP_STAGE : o->size);
		if (!s->stage)
			return -ENOMEM;
	}
	if (s->role == STCP_PING && o->ping_n) {
		s->lat = calloc(o->ping_n, sizeof(*s->lat));
		if (!s->lat)
			return -ENOMEM;
	}
	if (s->role == STCP_SOURCE) {
		uint64_t len = htobe64(o->bytes);
		uint32_t bid = htobe32(id);
		s->total = o->bytes;
		s->limit = o->stop != STCP_STOP_NONE && o->stop_after < o->bytes ? o->stop_after
										   : o->bytes;
		memcpy(s->hdr, hdr_magic, 4);
		memcpy(s->hdr + 4, &bid, 4);
		memcpy(s->hdr + 8, &len, 8);
	}
	return 0;
}

void stcp_sess_fini(struct stcp_sess *s)
{
	free(s->stage);
	free(s->lat);
	s->stage = NULL;
	s->lat = NULL;
}

void stcp_sess_fail(struct stcp_sess *s, enum stcp_outcome out, const char *fmt, ...)
{
	if (s->out != STCP_PENDING)
		return;  /* the first verdict stands */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	s->out = out;
	s->t_end = stcp_now_ns();
}

static void set_ok(struct stcp_sess *s)
{
	if (s->out == STCP_PENDING) {
		s->out = STCP_OK;
		s->t_end = stcp_now_ns();
	}
}

void stcp_sess_start(struct stcp_sess *s)
{
	if (!s->t_start)
		s->t_start = stcp_now_ns();
}

/* The requested stop point was reached: carry it out. */
static void stop_now(struct stcp_sess *s)
{
	if (s->stopped)
		return;
	s->stopped = true;
	if (s->o->stop == STCP_STOP_RST) {
		s->act = STCP_ACT_ABORT;
		set_ok(s);  /* the abort is what was asked for */
	} else {
		s->act = s->role == STCP_SOURCE ? STCP_ACT_SHUTDOWN : STCP_ACT_CLOSE;
		if (s->role != STCP_SOURCE)
			set_ok(s);
	}
}

static size_t source_peek(struct stcp_sess *s, const uint8_t **p)
{
	if (s->hdr_n < STCP_HDR_LEN) {
		*p = s->hdr + s->hdr_n;
		return STCP_HDR_LEN - s->hdr_n;
	}
	if (s->tx_off >= s->limit)
		return 0;
	if (s->tx_off < s->stage_off || s->tx_off >= s->stage_off + s->stage_len) {
		uint64_t left = s->limit - s->tx_off;
		s->stage_off = s->tx_off;
		s->stage_len = left < STCP_STAGE ? (size_t)left : STCP_STAGE;
		stcp_pattern_fill(s->id, s->stage_off, s->stage, s->stage_len);
	}
	*p = s->stage + (s->tx_off - s->stage_off);
	return (size_t)(s->stage_off + s->stage_len - s->tx_off);
}

static size_t ping_peek(struct stcp_sess *s, const uint8_t **p)
{
	uint64_t msg_end = (s->ping_k + 1) * s->o->size;
	if (s->ping_k >= s->o->ping_n || s->tx_off >= msg_end)
		return 0;
	if (!s->ping_inflight) {
		s->ping_inflight = true;
		s->stage_off = s->ping_k * s->o->size;
		s->stage_len = s->o->size;
		stcp_pattern_fill(s->id, s->stage_off, s->stage, s->stage_len);
		s->ping_t0 = stcp_now_ns();
	}
	*p = s->stage + (s->tx_off - s->stage_off);
	return (size_t)(msg_end - s->tx_off);
}

size_t stcp_sess_tx_peek(struct stcp_sess *s, const uint8_t **p)
{
	static const uint8_t verdict = 'K';
	switch (s->role) {
	case STCP_SOURCE:
		return s->stopped ? 0 : source_peek(s, p);
	case STCP_PING:
		return ping_peek(s, p);
	case STCP_SINK:
		if (!s->verdict_pending)
			return 0;
		*p = &verdict;
		return 1;
	case STCP_ECHO:
		break;
	}
	return 0;
}

void stcp_sess_tx_done(struct stcp_sess *s, size_t n)
{
	s->raw_tx += n;
	if (s->role == STCP_SINK) {
		if (n && s->verdict_pending) {
			/* The peer's FIN came before the verdict: nothing is left to receive, so
			 * the sink closes, as a server does, and the transport ends the connection
			 * on its own (an engine orphan, a kernel socket closed), bounded even when
			 * the peer is gone before it acknowledges our FIN. */
			s->verdict_pending = false;
			s->act = STCP_ACT_CLOSE;
		}
		return;
	}
	if (s->role == STCP_SOURCE && s->hdr_n < STCP_HDR_LEN) {
		size_t h = STCP_HDR_LEN - s->hdr_n;
		h = n < h ? n : h;
		s->hdr_n += (unsigned)h;
		n -= h;
	}
	s->tx_off += n;
	if (s->role == STCP_SOURCE && s->hdr_n == STCP_HDR_LEN && s->tx_off >= s->limit &&
	    !s->tx_complete) {
		s->tx_complete = true;
		if (s->limit < s->total)
			stop_now(s);
		else
			s->act = STCP_ACT_SHUTDOWN;
	}
}

/* Sink: collect the header, then verify payload in order. */
static void sink_rx(struct stcp_sess *s, const uint8_t *p, size_t n)
{
	while (n && s->hdr_n < STCP_HDR_LEN) {
		s->hdr[s->hdr_n++] = *p++;
		n--;
		if (s->hdr_n == STCP_HDR_LEN) {
			uint32_t bid;
			uint64_t len;
			if (memcmp(s->hdr, hdr_magic, 4) != 0) {
				stcp_sess_fail(s, STCP_E_PROTO, "bad header magic");
				s->act = STCP_ACT_ABORT;
				return;
			}
			memcpy(&bid, s->hdr + 4, 4);
			memcpy(&len, s->hdr + 8, 8);
			s->id = be32toh(bid);
			s->total = be64toh(len);
		}
	}
	if (!n || s->out != STCP_PENDING)
		return;
	if (s->rx_off + n > s->total) {
		stcp_sess_fail(s, STCP_E_PROTO, "%zu octets beyond the announced %llu", n,
			       (unsigned long long)s->total);
		s->act = STCP_ACT_ABORT;
		return;
	}
	size_t good = stcp_pattern_check(s->id, s->rx_off, p, n);
	if (good < n) {
		stcp_sess_fail(s, STCP_E_VERIFY, "stream %u octet %llu differs from the pattern",
			       s->id, (unsigned long long)(s->rx_off + good));
		s->act = STCP_ACT_ABORT;
		return;
	}
	s->rx_off += n;
	if (s->o->stop != STCP_STOP_NONE && s->rx_off >= s->o->stop_after)
		stop_now(s);
}

static void ping_rx(struct stcp_sess *s, const uint8_t *p, size_t n)
{
	while (n && s->out == STCP_PENDING) {
		uint64_t msg_end = (s->ping_k + 1) * s->o->size;
		size_t take = msg_end - s->rx_off < n ? (size_t)(msg_end - s->rx_off) : n;
		if (s->ping_k >= s->o->ping_n || !s->ping_inflight) {
			stcp_sess_fail(s, STCP_E_PROTO, "octets nobody asked for");
			s->act = STCP_ACT_ABORT;
			return;
		}
		size_t good = stcp_pattern_check(s->id, s->rx_off, p, take);
		if (good < take) {
			stcp_sess_fail(s, STCP_E_VERIFY, "echo octet %llu differs",
				       (unsigned long long)(s->rx_off + good));
			s->act = STCP_ACT_ABORT;
			return;
		}
		s->rx_off += take;
		p += take;
		n -= take;
		if (s->rx_off == msg_end) {
			s->lat[s->ping_k++] = stcp_now_ns() - s->ping_t0;
			s->ping_inflight = false;
			if (s->ping_k == s->o->ping_n)
				s->act = STCP_ACT_SHUTDOWN;
		}
	}
}

void stcp_sess_rx(struct stcp_sess *s, const uint8_t *p, size_t n)
{
	s->raw_rx += n;
	switch (s->role) {
	case STCP_SINK:
		if (!s->stopped)
			sink_rx(s, p, n);
		break;
	case STCP_PING:
		ping_rx(s, p, n);
		break;
	case STCP_SOURCE:
		if (n && !s->verdict_ok && p[0] == 'K' && n == 1) {
			s->verdict_ok = true;
		} else if (n && !s->stopped) {
			stcp_sess_fail(s, STCP_E_PROTO, "unexpected octets from the sink");
			s->act = STCP_ACT_ABORT;
		}
		break;
	case STCP_ECHO:
		s->rx_off += n;
		break;
	}
}

void stcp_sess_eof(struct stcp_sess *s)
{
	if (s->eof)
		return;
	s->eof = true;
	switch (s->role) {
	case STCP_SINK:
		if (s->stopped)
			break;
		if (s->hdr_n == STCP_HDR_LEN && s->rx_off == s->total) {
			set_ok(s);
			s->verdict_pending = true;  /* then shutdown */
		} else {
			stcp_sess_fail(s, STCP_E_EOF, "peer FIN after %llu of %llu octets",
				       (unsigned long long)s->rx_off,
				       (unsigned long long)s->total);
			s->act = STCP_ACT_SHUTDOWN;
		}
		break;
	case STCP_SOURCE:
		if (s->stopped || (s->verdict_ok && s->tx_complete))
			set_ok(s);
		else
			stcp_sess_fail(s, STCP_E_EOF, "peer FIN after %llu of %llu octets sent%s",
				       (unsigned long long)s->tx_off,
				       (unsigned long long)s->total,
				       s->verdict_ok ? "" : ", no verdict");
		if (!s->tx_complete)
			s->act = STCP_ACT_SHUTDOWN;
		break;
	case STCP_PING:
		if (s->ping_k == s->o->ping_n)
			set_ok(s);
		else
			stcp_sess_fail(s, STCP_E_EOF, "peer FIN after %llu of %llu exchanges",
				       (unsigned long long)s->ping_k,
				       (unsigned long long)s->o->ping_n);
		break;
	case STCP_ECHO:
		set_ok(s);
		s->act = STCP_ACT_SHUTDOWN;  /* the transport waits until the echo drained */
		break;
	}
}

void stcp_sess_error(struct stcp_sess *s, int err)
{
	switch (err) {
	case -ECONNRESET:
	case -EPIPE:
	case -ECONNABORTED:
		stcp_sess_fail(s, STCP_E_RESET, "connection reset by peer (%s)", strerror(-err));
		break;
	case -ECONNREFUSED:
		stcp_sess_fail(s, STCP_E_REFUSED, "connection refused");
		break;
	case -ETIMEDOUT:
		stcp_sess_fail(s, STCP_E_TIMEOUT, "transport timed out");
		break;
	default:
		stcp_sess_fail(s, STCP_E_OTHER, "error %s", strerror(-err));
		break;
	}
}

void stcp_sess_closed(struct stcp_sess *s)
{
	if (s->out == STCP_PENDING)
		stcp_sess_eof(s);
}

enum stcp_act stcp_sess_take_act(struct stcp_sess *s)
{
	enum stcp_act a = s->act;
	s->act = STCP_ACT_NONE;
	return a;
}
