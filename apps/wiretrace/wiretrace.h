/* wiretrace: pcap files of one or more TCP connections, for the demo, the dump tool and the
 * wire tests.
 *
 * Writer: wt_writer (a pcap file, Ethernet link type) plus wt_tcp, a model of one TCP
 * connection between two endpoints. wt_tcp wraps what each side sends in Ethernet/IPv4/TCP
 * with consistent sequence and acknowledgement numbers and valid IPv4 and TCP checksums:
 * three-way handshake, data segments (each chunk given to wt_tcp_send() starts a new segment,
 * so the caller controls FPDU alignment; chunks larger than the MSS are split), delayed ACKs
 * and FIN teardown. Time is virtual and deterministic: each frame advances the clock.
 *
 * Reader: wt_capture_load() reads a capture (Ethernet, Linux cooked or raw IP), groups TCP
 * segments into connections (4-tuple; a new SYN after the old connection ended starts a new
 * one) and reassembles both byte streams in sequence order, coping with retransmissions,
 * overlaps and out-of-order segments. Each reassembled byte can be traced back to the frame
 * and TCP segment that carried it.
 */
#ifndef WIRETRACE_H
#define WIRETRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TCP header flag bits. */
#define WT_TCP_FIN 0x01
#define WT_TCP_SYN 0x02
#define WT_TCP_RST 0x04
#define WT_TCP_PSH 0x08
#define WT_TCP_ACK 0x10

#define WT_CLIENT 0 /* the side that sends the SYN */
#define WT_SERVER 1

struct wt_endpoint {
	uint8_t mac[6];
	uint8_t ip[4]; /* IPv4 address, network order */
	uint16_t port; /* host order */
};

/* Fills ep with MAC 02:00:00:00:00:<host>, IPv4 198.51.100.<host> and the given port. */
void wt_endpoint_make(struct wt_endpoint *ep, uint8_t host, uint16_t port);

/* ---- writer ---------------------------------------------------------------------------- */

struct wt_writer;

/* Opens path for writing a pcap with link type DLT_EN10MB. NULL on error, with a message in
 * err (errlen bytes). */
struct wt_writer *wt_writer_open(const char *path, char *err, size_t errlen);
/* Writes one complete Ethernet frame at the current virtual time, then advances the clock
 * by the per-frame step. 0 on success, -1 on error. */
int wt_writer_frame(struct wt_writer *w, const uint8_t *frame, size_t len);
/* Moves the virtual clock forward (e.g. "think time" between exchanges). */
void wt_writer_advance(struct wt_writer *w, uint32_t usec);
/* Frames written so far; the next frame written gets number wt_writer_frames() + 1. */
unsigned wt_writer_frames(const struct wt_writer *w);
/* Flushes and closes the file; 0 on success. */
int wt_writer_close(struct wt_writer *w);

/* Builds an Ethernet/IPv4/TCP frame into buf (cap bytes): IPv4 header with DF, TTL 64 and
 * the given id; TCP header with the given options (optlen a multiple of 4, <= 40). Both
 * checksums are computed. Returns the frame length, or 0 if it does not fit. */
size_t wt_build_frame(uint8_t *buf, size_t cap, const struct wt_endpoint *src,
		      const struct wt_endpoint *dst, uint16_t ip_id, uint32_t seq, uint32_t ack,
		      uint8_t flags, uint16_t window, const uint8_t *opt, size_t optlen,
		      const void *data, size_t len);

/* One TCP connection being written. Fields are readable; change them only through the
 * functions below (tests may read nxt[] to know the next sequence number). */
struct wt_tcp {
	struct wt_writer *w;
	struct wt_endpoint ep[2];  /* [WT_CLIENT], [WT_SERVER] */
	uint32_t isn[2];           /* initial sequence numbers */
	uint32_t nxt[2];           /* next sequence number each side sends */
	uint16_t ip_id[2];
	uint16_t mss;              /* largest payload per segment */
	unsigned delack;           /* receiver ACKs after this many unacked segments (0: only
				    * on wt_tcp_ack and at teardown) */
	unsigned unacked[2];       /* data segments side i received but has not ACKed */
	bool established, closed;
};

/* Sets up the model (writes nothing). mss 0 means 1460. delack defaults to 2. */
void wt_tcp_init(struct wt_tcp *c, struct wt_writer *w, const struct wt_endpoint *client,
		 const struct wt_endpoint *server, uint32_t isn_client, uint32_t isn_server,
		 uint16_t mss);
/* SYN (with MSS option), SYN-ACK, ACK. */
int wt_tcp_handshake(struct wt_tcp *c);
/* Sends len bytes from side as one segment, or as several MSS-sized segments if longer.
 * Every segment carries ACK (piggybacking any pending acknowledgement) and the last one PSH.
 * Returns the number of segments written (>= 1; len 0 writes nothing and returns 0), or -1. */
int wt_tcp_send(struct wt_tcp *c, int side, const void *data, size_t len);
/* Sends a pure ACK from side if it has received data it has not acknowledged. Returns 1 if
 * an ACK was written, 0 if none was needed, -1 on error. */
int wt_tcp_ack(struct wt_tcp *c, int side);
/* Orderly close started by side: FIN/ACK, the peer's FIN/ACK, the final ACK. */
int wt_tcp_close(struct wt_tcp *c, int side);
/* Writes one raw segment from side with an arbitrary sequence number and flags, without
 * changing the model (ACK number = peer's nxt). For tests of retransmission and reordering. */
int wt_tcp_segment(struct wt_tcp *c, int side, uint32_t seq, uint8_t flags, const void *data,
		   size_t len);

/* ---- reader ---------------------------------------------------------------------------- */

/* A run of reassembled stream bytes that came from one TCP segment. */
struct wt_chunk {
	uint64_t off;   /* offset in the stream (0 = first byte after the SYN) */
	uint32_t len;
	uint32_t frame; /* 1-based frame number of the segment that carried these bytes */
	uint32_t seq;   /* that segment's TCP sequence number */
	uint32_t ready; /* frame after which these bytes were contiguous (differs from frame
			 * when the segment arrived out of order) */
};

struct wt_stream {
	struct wt_endpoint src, dst;
	bool syn, fin, rst;
	uint32_t isn;           /* SYN's sequence number (or first data seq - 1 without SYN) */
	uint8_t *data;          /* reassembled bytes, in order, up to the first unfilled hole */
	size_t len;
	struct wt_chunk *chunks;
	size_t nchunks;
	uint32_t *frames;       /* frames carrying payload in this direction, capture order */
	size_t nframes;
	size_t segments;        /* data segments seen */
	size_t retransmits;     /* data segments entirely already received */
	size_t overlaps;        /* data segments partly already received */
	size_t out_of_order;    /* data segments that arrived ahead of a hole */
	size_t missing;         /* bytes after the first hole that never became contiguous */
	size_t cap_, ncap_, ncap_frames_; /* allocation sizes (internal) */
	void *pending_;         /* out-of-order segments (internal) */
	size_t npending_;
};

struct wt_conn {
	struct wt_stream dir[2]; /* [WT_CLIENT]: client->server, [WT_SERVER]: server->client */
	uint32_t first_frame, last_frame;
	bool saw_syn;            /* the capture includes the client's SYN */
};

struct wt_capture {
	struct wt_conn *conns;
	size_t nconns;
	size_t nframes;          /* all frames in the file */
	size_t tcp_frames;
	size_t other_frames;     /* not IPv4/TCP */
	size_t bad_ip_csum;      /* IPv4 header checksum wrong */
	size_t bad_tcp_csum;     /* TCP checksum wrong (only checked on untruncated frames) */
	size_t truncated;        /* frames captured shorter than on the wire */
	int linktype;
	size_t conn_cap_;
};

/* Reads the capture at path. 0 on success; -1 with a message in err otherwise. */
int wt_capture_load(const char *path, struct wt_capture *cap, char *err, size_t errlen);
void wt_capture_free(struct wt_capture *cap);

/* The chunk holding stream offset off, or NULL if off >= s->len. */
const struct wt_chunk *wt_stream_locate(const struct wt_stream *s, uint64_t off);

/* "198.51.100.11:7174" into buf (at least 24 bytes); returns buf. */
char *wt_endpoint_str(const struct wt_endpoint *ep, char *buf, size_t len);

/* Internet checksum (RFC 1071) of len bytes, added to a running 32-bit sum; fold with
 * wt_csum_fold(). Exposed for tests. */
uint32_t wt_csum_add(uint32_t sum, const void *buf, size_t len);
uint16_t wt_csum_fold(uint32_t sum);

#endif
