/* wiretrace reader: TCP connection reassembly from a pcap file. */
#include "wiretrace.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pending_seg {
	int64_t rel;
	uint32_t len, frame, seq;
	uint8_t *bytes;
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool ep_eq_ip(const struct wt_endpoint *ep, const uint8_t *ip, uint16_t port)
{
	return !memcmp(ep->ip, ip, 4) && ep->port == port;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* Appends bytes at the end of the contiguous stream as one chunk. */
static int stream_append(struct wt_stream *s, const uint8_t *b, uint32_t n, uint32_t frame,
			 uint32_t seq, uint32_t ready)
{
	if (!n)
		return 0;
	size_t cap = s->cap_;
	if (grow((void **)&s->data, &cap, s->len + n, 1))
		return -1;
	s->cap_ = cap;
	if (grow((void **)&s->chunks, &s->ncap_, s->nchunks + 1, sizeof(*s->chunks)))
		return -1;
	memcpy(s->data + s->len, b, n);
	s->chunks[s->nchunks++] = (struct wt_chunk){ .off = s->len, .len = n, .frame = frame,
						     .seq = seq, .ready = ready };
	s->len += n;
	return 0;
}

/* Moves every pending segment that now touches the contiguous end into the stream. */
static int stream_drain(struct wt_stream *s, uint32_t ready)
{
	struct pending_seg *pend = s->pending_;
	bool progress = true;
	while (progress) {
		progress = false;
		for (size_t i = 0; i < s->npending_; i++) {
			struct pending_seg *p = &pend[i];
			if (p->rel > (int64_t)s->len)
				continue;
			int64_t end = p->rel + p->len;
			if (end > (int64_t)s->len) {
				uint32_t skip = (uint32_t)((int64_t)s->len - p->rel);
				if (stream_append(s, p->bytes + skip, p->len - skip, p->frame, p->seq,
						  ready))
					return -1;
			}
			free(p->bytes);
			pend[i] = pend[--s->npending_];
			progress = true;
			break;
		}
	}
	return 0;
}

static int stream_add(struct wt_stream *s, int64_t rel, const uint8_t *b, uint32_t n,
		      uint32_t frame, uint32_t seq)
{
	s->segments++;
	if (rel + n <= (int64_t)s->len) {
		s->retransmits++;
		return 0;
	}
	if (rel > (int64_t)s->len) {
		/* Ahead of a hole: keep it unless an identical one is already pending. */
		struct pending_seg *pend = s->pending_;
		for (size_t i = 0; i < s->npending_; i++)
			if (pend[i].rel <= rel && pend[i].rel + pend[i].len >= rel + n) {
				s->retransmits++;
				return 0;
			}
		size_t pcap_ = s->npending_;
		/* capacity tracked implicitly: grow by one each time (few pending segments) */
		struct pending_seg *q = realloc(s->pending_, (pcap_ + 1) * sizeof(*q));
		if (!q)
			return -1;
		s->pending_ = q;
		uint8_t *copy = malloc(n);
		if (!copy)
			return -1;
		memcpy(copy, b, n);
		q[s->npending_++] = (struct pending_seg){ rel, n, frame, seq, copy };
		s->out_of_order++;
		return 0;
	}
	uint32_t skip = (uint32_t)((int64_t)s->len - rel);
	if (skip)
		s->overlaps++;
	if (stream_append(s, b + skip, n - skip, frame, seq, frame))
		return -1;
	return stream_drain(s, frame);
}

static void stream_finish(struct wt_stream *s)
{
	struct pending_seg *pend = s->pending_;
	int64_t maxend = (int64_t)s->len;
	for (size_t i = 0; i < s->npending_; i++) {
		if (pend[i].rel + pend[i].len > maxend)
			maxend = pend[i].rel + pend[i].len;
		free(pend[i].bytes);
	}
	s->missing = (size_t)(maxend - (int64_t)s->len);
	free(s->pending_);
	s->pending_ = NULL;
	s->npending_ = 0;
}

static void stream_free(struct wt_stream *s)
{
	stream_finish(s);
	free(s->data);
	free(s->chunks);
	free(s->frames);
}

const struct wt_chunk *wt_stream_locate(const struct wt_stream *s, uint64_t off)
{
	if (off >= s->len)
		return NULL;
	size_t lo = 0, hi = s->nchunks;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (s->chunks[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return &s->chunks[lo];
}

struct seginfo {
	const uint8_t *sip, *dip;
	const uint8_t *smac, *dmac;
	uint16_t sport, dport;
	uint32_t seq;
	uint8_t flags;
	const uint8_t *payload;
	uint32_t plen;
};

static struct wt_conn *find_conn(struct wt_capture *cap, const struct seginfo *si, int *dir)
{
	/* Latest connection with this 4-tuple wins (ports may be reused). */
	for (size_t i = cap->nconns; i-- > 0;) {
		struct wt_conn *c = &cap->conns[i];
		if (ep_eq_ip(&c->dir[0].src, si->sip, si->sport) &&
		    ep_eq_ip(&c->dir[0].dst, si->dip, si->dport)) {
			*dir = 0;
			return c;
		}
		if (ep_eq_ip(&c->dir[1].src, si->sip, si->sport) &&
		    ep_eq_ip(&c->dir[1].dst, si->dip, si->dport)) {
			*dir = 1;
			return c;
		}
	}
	return NULL;
}

static struct wt_conn *new_conn(struct wt_capture *cap, const struct seginfo *si, int dir,
				uint32_t frame)
{
	if (grow((void **)&cap->conns, &cap->conn_cap_, cap->nconns + 1, sizeof(*cap->conns)))
		return NULL;
	struct wt_conn *c = &cap->conns[cap->nconns++];
	memset(c, 0, sizeof(*c));
	struct wt_endpoint a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memcpy(a.mac, si->smac ? si->smac : a.mac, 6);
	memcpy(a.ip, si->sip, 4);
	a.port = si->sport;
	memcpy(b.mac, si->dmac ? si->dmac : b.mac, 6);
	memcpy(b.ip, si->dip, 4);
	b.port = si->dport;
	c->dir[dir].src = a;
	c->dir[dir].dst = b;
	c->dir[!dir].src = b;
	c->dir[!dir].dst = a;
	c->first_frame = frame;
	return c;
}

static int handle_segment(struct wt_capture *cap, const struct seginfo *si, uint32_t frame)
{
	int dir;
	struct wt_conn *c = find_conn(cap, si, &dir);
	bool syn = si->flags & WT_TCP_SYN, ack = si->flags & WT_TCP_ACK;

	if (c && syn && !ack) {
		/* A fresh SYN on a known tuple: new connection unless it repeats the old SYN. */
		struct wt_stream *s = &c->dir[dir];
		if (dir != 0 || !s->syn || s->isn != si->seq)
			c = NULL;
	}
	if (!c) {
		dir = (syn && ack) ? 1 : 0;
		c = new_conn(cap, si, dir, frame);
		if (!c)
			return -1;
	}
	c->last_frame = frame;
	struct wt_stream *s = &c->dir[dir];
	uint32_t seq = si->seq;
	if (syn) {
		if (!s->syn && s->segments == 0) {
			s->syn = true;
			s->isn = seq;
			if (dir == 0 && !ack)
				c->saw_syn = true;
		}
		seq++;
	}
	if (si->flags & WT_TCP_RST)
		s->rst = true;
	if (si->plen) {
		if (grow((void **)&s->frames, &s->ncap_frames_, s->nframes + 1, sizeof(*s->frames)))
			return -1;
		s->frames[s->nframes++] = frame;
		if (!s->syn && s->segments == 0 && s->len == 0) {
			/* Capture started mid-connection: this segment starts the stream. */
			s->isn = seq - 1;
			s->syn = false;
		}
		int64_t rel = (int64_t)(int32_t)(seq - s->isn - 1);
		if (rel + si->plen > 0) {
			const uint8_t *b = si->payload;
			uint32_t n = si->plen;
			if (rel < 0) {
				b += -rel;
				n -= (uint32_t)-rel;
				rel = 0;
			}
			if (stream_add(s, rel, b, n, frame, si->seq))
				return -1;
		}
	}
	if (si->flags & WT_TCP_FIN)
		s->fin = true;
	return 0;
}

/* One captured frame, narrowed step by step from the link layer down to TCP. */
struct frame_view {
	const uint8_t *p;      /* start of the current layer */
	size_t caplen;         /* captured octets from p on */
	const uint8_t *smac, *dmac;
};

/* Strips the link-layer header (Ethernet with VLAN tags, Linux cooked, raw IP). Returns false
 * for a frame that carries no IPv4. */
static bool strip_link(int linktype, struct frame_view *f)
{
	uint16_t etype = 0x0800;

	if (linktype == DLT_EN10MB) {
		if (f->caplen < 14)
			return false;
		f->dmac = f->p;
		f->smac = f->p + 6;
		etype = get16(f->p + 12);
		f->p += 14;
		f->caplen -= 14;
		while ((etype == 0x8100 || etype == 0x88a8) && f->caplen >= 4) {
			etype = get16(f->p + 2);
			f->p += 4;
			f->caplen -= 4;
		}
	} else if (linktype == DLT_LINUX_SLL) {
		if (f->caplen < 16)
			return false;
		etype = get16(f->p + 14);
		f->p += 16;
		f->caplen -= 16;
	}
	return etype == 0x0800;
}

/* Checks the TCP checksum over the pseudo header, counting a bad one. */
static void check_tcp_csum(struct wt_capture *cap, const uint8_t *ip, const uint8_t *tcp,
			   size_t tlen)
{
	uint8_t pseudo[12];

	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = 6;
	pseudo[10] = (uint8_t)(tlen >> 8);
	pseudo[11] = (uint8_t)tlen;
	uint32_t sum = wt_csum_add(0, pseudo, 12);
	if (wt_csum_fold(wt_csum_add(sum, tcp, tlen)) != 0)
		cap->bad_tcp_csum++;
}

/* Parses IPv4 + TCP (no fragments) into *si, counting bad checksums. Returns false for
 * anything that is not a well-formed TCP segment. */
static bool parse_ipv4_tcp(struct wt_capture *cap, const struct frame_view *f,
			   struct seginfo *si)
{
	const uint8_t *p = f->p;

	if (f->caplen < 20 || (p[0] >> 4) != 4)
		return false;
	size_t ihl = (size_t)(p[0] & 0x0f) * 4;
	size_t totlen = get16(p + 2);
	if (ihl < 20 || f->caplen < ihl || p[9] != 6 || totlen < ihl)
		return false;
	if ((get16(p + 6) & 0x3fff) != 0)
		return false; /* fragment */
	if (wt_csum_fold(wt_csum_add(0, p, ihl)) != 0)
		cap->bad_ip_csum++;
	bool complete = f->caplen >= totlen;
	size_t have = complete ? totlen : f->caplen; /* drops Ethernet padding */
	const uint8_t *tcp = p + ihl;
	size_t tlen = have - ihl;
	if (tlen < 20)
		return false;
	size_t thl = (size_t)(tcp[12] >> 4) * 4;
	if (thl < 20 || thl > tlen)
		return false;
	if (complete)
		check_tcp_csum(cap, p, tcp, tlen);
	*si = (struct seginfo){
		.sip = p + 12, .dip = p + 16, .smac = f->smac, .dmac = f->dmac,
		.sport = get16(tcp), .dport = get16(tcp + 2), .seq = get32(tcp + 4),
		.flags = tcp[13], .payload = tcp + thl, .plen = (uint32_t)(tlen - thl),
	};
	return true;
}

static pcap_t *open_capture(const char *path, struct wt_capture *cap, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *pd = pcap_open_offline(path, perr);

	if (!pd) {
		snprintf(err, errlen, "%s", perr);
		return NULL;
	}
	cap->linktype = pcap_datalink(pd);
	if (cap->linktype != DLT_EN10MB && cap->linktype != DLT_LINUX_SLL &&
	    cap->linktype != DLT_RAW && cap->linktype != 12 /* LINKTYPE_RAW on some systems */) {
		snprintf(err, errlen, "%s: unsupported link type %d", path, cap->linktype);
		pcap_close(pd);
		return NULL;
	}
	return pd;
}

static int load_fail(pcap_t *pd, struct wt_capture *cap)
{
	pcap_close(pd);
	wt_capture_free(cap);
	return -1;
}

int wt_capture_load(const char *path, struct wt_capture *cap, char *err, size_t errlen)
{
	memset(cap, 0, sizeof(*cap));
	pcap_t *pd = open_capture(path, cap, err, errlen);
	if (!pd)
		return -1;

	struct pcap_pkthdr *h;
	const u_char *pkt;
	int rc;
	while ((rc = pcap_next_ex(pd, &h, &pkt)) == 1) {
		uint32_t frame = (uint32_t)++cap->nframes;
		struct frame_view f = { .p = pkt, .caplen = h->caplen };
		struct seginfo si;
		if (h->caplen < h->len)
			cap->truncated++;
		if (!strip_link(cap->linktype, &f) || !parse_ipv4_tcp(cap, &f, &si)) {
			cap->other_frames++;
			continue;
		}
		cap->tcp_frames++;
		if (handle_segment(cap, &si, frame)) {
			snprintf(err, errlen, "out of memory");
			return load_fail(pd, cap);
		}
	}
	if (rc == -1) {
		snprintf(err, errlen, "%s: %s", path, pcap_geterr(pd));
		return load_fail(pd, cap);
	}
	pcap_close(pd);
	for (size_t i = 0; i < cap->nconns; i++) {
		stream_finish(&cap->conns[i].dir[0]);
		stream_finish(&cap->conns[i].dir[1]);
	}
	return 0;
}

void wt_capture_free(struct wt_capture *cap)
{
	for (size_t i = 0; i < cap->nconns; i++) {
		stream_free(&cap->conns[i].dir[0]);
		stream_free(&cap->conns[i].dir[1]);
	}
	free(cap->conns);
	memset(cap, 0, sizeof(*cap));
}
