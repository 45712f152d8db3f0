/* wiretrace writer: pcap output and a model of one TCP connection. */
#include "wiretrace.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WT_SNAPLEN 65535
#define WT_FRAME_STEP_US 20      /* virtual time between frames */
#define WT_START_SEC 1700000000  /* a fixed start time, so output is reproducible */
#define WT_WINDOW 64240

struct wt_writer {
	pcap_t *pd;
	pcap_dumper_t *dumper;
	uint64_t now_us;
	unsigned frames;
};

void wt_endpoint_make(struct wt_endpoint *ep, uint8_t host, uint16_t port)
{
	static const uint8_t mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x00 };
	memcpy(ep->mac, mac, sizeof(mac));
	ep->mac[5] = host;
	ep->ip[0] = 198;
	ep->ip[1] = 51;
	ep->ip[2] = 100;
	ep->ip[3] = host;
	ep->port = port;
}

char *wt_endpoint_str(const struct wt_endpoint *ep, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u:%u", ep->ip[0], ep->ip[1], ep->ip[2], ep->ip[3], ep->port);
	return buf;
}

uint32_t wt_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len > 1) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

uint16_t wt_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

struct wt_writer *wt_writer_open(const char *path, char *err, size_t errlen)
{
	struct wt_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	w->pd = pcap_open_dead(DLT_EN10MB, WT_SNAPLEN);
	if (!w->pd) {
		snprintf(err, errlen, "pcap_open_dead failed");
		free(w);
		return NULL;
	}
	w->dumper = pcap_dump_open(w->pd, path);
	if (!w->dumper) {
		snprintf(err, errlen, "%s: %s", path, pcap_geterr(w->pd));
		pcap_close(w->pd);
		free(w);
		return NULL;
	}
	w->now_us = (uint64_t)WT_START_SEC * 1000000u;
	return w;
}

int wt_writer_frame(struct wt_writer *w, const uint8_t *frame, size_t len)
{
	if (len > WT_SNAPLEN)
		return -1;
	struct pcap_pkthdr h;
	memset(&h, 0, sizeof(h));
	h.ts.tv_sec = (time_t)(w->now_us / 1000000u);
	h.ts.tv_usec = (suseconds_t)(w->now_us % 1000000u);
	h.caplen = (bpf_u_int32)len;
	h.len = (bpf_u_int32)len;
	pcap_dump((u_char *)w->dumper, &h, frame);
	w->frames++;
	w->now_us += WT_FRAME_STEP_US;
	return 0;
}

void wt_writer_advance(struct wt_writer *w, uint32_t usec)
{
	w->now_us += usec;
}

unsigned wt_writer_frames(const struct wt_writer *w)
{
	return w->frames;
}

int wt_writer_close(struct wt_writer *w)
{
	if (!w)
		return 0;
	int rc = pcap_dump_flush(w->dumper);
	pcap_dump_close(w->dumper);
	pcap_close(w->pd);
	free(w);
	return rc == 0 ? 0 : -1;
}

size_t wt_build_frame(uint8_t *buf, size_t cap, const struct wt_endpoint *src,
		      const struct wt_endpoint *dst, uint16_t ip_id, uint32_t seq, uint32_t ack,
		      uint8_t flags, uint16_t window, const uint8_t *opt, size_t optlen,
		      const void *data, size_t len)
{
	if (optlen > 40 || optlen % 4)
		return 0;
	size_t thl = 20 + optlen;
	size_t iplen = 20 + thl + len;
	size_t flen = 14 + iplen;
	if (iplen > 0xffff || flen > cap)
		return 0;

	/* Ethernet */
	memcpy(buf, dst->mac, 6);
	memcpy(buf + 6, src->mac, 6);
	put16(buf + 12, 0x0800);

	/* IPv4 */
	uint8_t *ip = buf + 14;
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)iplen);
	put16(ip + 4, ip_id);
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = 6;
	put16(ip + 10, 0);
	memcpy(ip + 12, src->ip, 4);
	memcpy(ip + 16, dst->ip, 4);
	put16(ip + 10, wt_csum_fold(wt_csum_add(0, ip, 20)));

	/* TCP */
	uint8_t *tcp = ip + 20;
	put16(tcp, src->port);
	put16(tcp + 2, dst->port);
	put32(tcp + 4, seq);
	put32(tcp + 8, (flags & WT_TCP_ACK) ? ack : 0);
	tcp[12] = (uint8_t)((thl / 4) << 4);
	tcp[13] = flags;
	put16(tcp + 14, window);
	put16(tcp + 16, 0);
	put16(tcp + 18, 0);
	if (optlen)
		memcpy(tcp + 20, opt, optlen);
	if (len)
		memcpy(tcp + thl, data, len);

	uint8_t pseudo[12];
	memcpy(pseudo, src->ip, 4);
	memcpy(pseudo + 4, dst->ip, 4);
	pseudo[8] = 0;
	pseudo[9] = 6;
	put16(pseudo + 10, (uint16_t)(thl + len));
	uint32_t sum = wt_csum_add(0, pseudo, sizeof(pseudo));
	sum = wt_csum_add(sum, tcp, thl + len);
	put16(tcp + 16, wt_csum_fold(sum));
	return flen;
}

void wt_tcp_init(struct wt_tcp *c, struct wt_writer *w, const struct wt_endpoint *client,
		 const struct wt_endpoint *server, uint32_t isn_client, uint32_t isn_server,
		 uint16_t mss)
{
	memset(c, 0, sizeof(*c));
	c->w = w;
	c->ep[WT_CLIENT] = *client;
	c->ep[WT_SERVER] = *server;
	c->isn[WT_CLIENT] = isn_client;
	c->isn[WT_SERVER] = isn_server;
	c->nxt[WT_CLIENT] = isn_client;
	c->nxt[WT_SERVER] = isn_server;
	c->ip_id[WT_CLIENT] = (uint16_t)(isn_client * 7u + 1u);
	c->ip_id[WT_SERVER] = (uint16_t)(isn_server * 7u + 1u);
	c->mss = mss ? mss : 1460;
	c->delack = 2;
}

/* Writes one segment from side with the given seq/flags; ack = everything the peer sent. */
static int emit(struct wt_tcp *c, int side, uint32_t seq, uint8_t flags, const uint8_t *opt,
		size_t optlen, const void *data, size_t len)
{
	static uint8_t frame[14 + 20 + 60 + 65535];
	size_t n = wt_build_frame(frame, sizeof(frame), &c->ep[side], &c->ep[!side],
				  c->ip_id[side]++, seq, c->nxt[!side], flags, WT_WINDOW, opt, optlen,
				  data, len);
	if (!n)
		return -1;
	if (flags & WT_TCP_ACK)
		c->unacked[side] = 0;
	return wt_writer_frame(c->w, frame, n);
}

int wt_tcp_segment(struct wt_tcp *c, int side, uint32_t seq, uint8_t flags, const void *data,
		   size_t len)
{
	unsigned saved = c->unacked[side];
	int rc = emit(c, side, seq, flags, NULL, 0, data, len);
	c->unacked[side] = saved;
	return rc;
}

int wt_tcp_handshake(struct wt_tcp *c)
{
	uint8_t opt[4] = { 2, 4, (uint8_t)(c->mss >> 8), (uint8_t)c->mss };
	if (emit(c, WT_CLIENT, c->nxt[WT_CLIENT], WT_TCP_SYN, opt, 4, NULL, 0))
		return -1;
	c->nxt[WT_CLIENT]++;
	if (emit(c, WT_SERVER, c->nxt[WT_SERVER], WT_TCP_SYN | WT_TCP_ACK, opt, 4, NULL, 0))
		return -1;
	c->nxt[WT_SERVER]++;
	if (emit(c, WT_CLIENT, c->nxt[WT_CLIENT], WT_TCP_ACK, NULL, 0, NULL, 0))
		return -1;
	c->established = true;
	return 0;
}

int wt_tcp_ack(struct wt_tcp *c, int side)
{
	if (!c->unacked[side])
		return 0;
	return emit(c, side, c->nxt[side], WT_TCP_ACK, NULL, 0, NULL, 0) ? -1 : 1;
}

int wt_tcp_send(struct wt_tcp *c, int side, const void *data, size_t len)
{
	const uint8_t *p = data;
	int segs = 0;
	if (!c->established || c->closed)
		return -1;
	while (len) {
		size_t n = len > c->mss ? c->mss : len;
		uint8_t flags = WT_TCP_ACK | (n == len ? WT_TCP_PSH : 0);
		if (emit(c, side, c->nxt[side], flags, NULL, 0, p, n))
			return -1;
		c->nxt[side] += (uint32_t)n;
		p += n;
		len -= n;
		segs++;
		c->unacked[!side]++;
		if (c->delack && c->unacked[!side] >= c->delack && wt_tcp_ack(c, !side) < 0)
			return -1;
	}
	return segs;
}

int wt_tcp_close(struct wt_tcp *c, int side)
{
	if (!c->established || c->closed)
		return -1;
	if (emit(c, side, c->nxt[side], WT_TCP_FIN | WT_TCP_ACK, NULL, 0, NULL, 0))
		return -1;
	c->nxt[side]++;
	if (emit(c, !side, c->nxt[!side], WT_TCP_FIN | WT_TCP_ACK, NULL, 0, NULL, 0))
		return -1;
	c->nxt[!side]++;
	if (emit(c, side, c->nxt[side], WT_TCP_ACK, NULL, 0, NULL, 0))
		return -1;
	c->closed = true;
	return 0;
}
