/* impair: a two-port Ethernet forwarder that loses, duplicates, reorders and delays frames -
 * the netem of tests/tcp/linux when the kernel has no sch_netem (this machine's has not).
 * It bridges two interfaces of its own namespace through AF_PACKET sockets and impairs the
 * frames of one direction (or both):
 *   impair IF_A IF_B [--dir ab|ba|both] [--loss PCT] [--dup PCT] [--reorder PCT]
 *          [--delay-ms MS] [--jitter-ms MS] [--corrupt PCT] [--corrupt-csum stale|fix]
 *          [--seed N] [--seconds S]
 * --reorder P holds a frame with probability P and sends it after the next one of its
 * direction; --delay-ms queues every impaired frame for MS, and --jitter-ms J makes that delay
 * uniform in [MS - J, MS + J] per frame, so that frames overtake one another as under netem's
 * jitter. --corrupt P flips one bit of the
 * TCP payload of that share of the IPv4 TCP frames that carry one (Ethernet, IP and TCP
 * headers and the frame's length untouched, so it still arrives as a well-formed frame). The
 * TCP checksum is left stale by default, as a flip on a wire would leave it: the receiving
 * TCP must drop the segment and the sender retransmit. With --corrupt-csum fix the checksum is
 * updated to match, so that only an end-to-end check above TCP (MPA's CRC) can catch it. Runs until SIGTERM/SIGINT or
 * --seconds, then prints what it did ("impair: ..." on stderr). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRAME_MAX 2048
#define QLEN 8192

struct frame {
	uint64_t due_ns;
	uint64_t order;  /* arrival number: equal due times leave in arrival order */
	uint16_t len;
	uint8_t out;  /* socket index to send on */
	uint8_t data[FRAME_MAX];
};

struct dir_state {
	bool impaired;
	bool held_valid;
	struct frame held;  /* reordering: the frame waiting for the next one */
};

static struct {
	double loss, dup, reorder, corrupt;
	bool corrupt_fix;      /* --corrupt-csum fix */
	uint64_t delay_ns, jitter_ns;
	uint64_t rng;
	int fd[2];
	struct dir_state dir[2];  /* 0: a->b, 1: b->a */
	struct frame *q;          /* delay queue: slots of frames waiting */
	unsigned *heap;           /* slot numbers, a min-heap by (due_ns, order) */
	unsigned *free_slot;      /* a stack of unused slots */
	unsigned qn, nfree;
	uint64_t next_order;
	uint64_t in, out, lost, duped, reordered, delayed, qdrops, corrupted;
} g;

static volatile sig_atomic_t stop;
static void on_sig(int s) { stop = s; }

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double rnd(void)  /* xorshift64*: uniform in [0, 1) */
{
	g.rng ^= g.rng >> 12;
	g.rng ^= g.rng << 25;
	g.rng ^= g.rng >> 27;
	return (double)((g.rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

static int open_if(const char *name)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	int one = 1;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	if (fd < 0)
		return -1;
	sll.sll_ifindex = (int)if_nametoindex(name);
	/* Our own transmissions must not come back as input. */
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void tx(const struct frame *f)
{
	if (send(g.fd[f->out], f->data, f->len, 0) == (ssize_t)f->len)
		g.out++;
}

static bool due_before(unsigned a, unsigned b)
{
	const struct frame *x = &g.q[a], *y = &g.q[b];
	return x->due_ns < y->due_ns || (x->due_ns == y->due_ns && x->order < y->order);
}

static void heap_swap(unsigned i, unsigned j)
{
	unsigned t = g.heap[i];
	g.heap[i] = g.heap[j];
	g.heap[j] = t;
}

static void heap_push(unsigned slot)
{
	unsigned i = g.qn++;
	g.heap[i] = slot;
	while (i && due_before(g.heap[i], g.heap[(i - 1) / 2])) {
		heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static unsigned heap_pop(void)
{
	unsigned top = g.heap[0], i = 0;
	g.heap[0] = g.heap[--g.qn];
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;
		if (l < g.qn && due_before(g.heap[l], g.heap[m]))
			m = l;
		if (r < g.qn && due_before(g.heap[r], g.heap[m]))
			m = r;
		if (m == i)
			return top;
		heap_swap(i, m);
		i = m;
	}
}

static void emit(const struct frame *f)
{
	if (!g.delay_ns && !g.jitter_ns) {
		tx(f);
		return;
	}
	if (!g.nfree) {
		g.qdrops++;
		return;
	}
	unsigned slot = g.free_slot[--g.nfree];
	g.q[slot] = *f;
	g.q[slot].order = g.next_order++;
	heap_push(slot);
	g.delayed++;
}

static void flush_due(uint64_t now)
{
	while (g.qn && g.q[g.heap[0]].due_ns <= now) {
		unsigned slot = heap_pop();
		tx(&g.q[slot]);
		g.free_slot[g.nfree++] = slot;
	}
}

/* Where an IPv4 TCP frame's payload is: 0 when it has none (or is no such frame). */
static unsigned tcp_payload(const struct frame *f, unsigned *tcp_off, unsigned *end)
{
	const uint8_t *d = f->data;
	if (f->len < 14 + 20 + 20 || d[12] != 0x08 || d[13] != 0x00 || (d[14] >> 4) != 4 ||
	    d[23] != 6)
		return 0;
	unsigned ihl = (d[14] & 15u) * 4, tot = (unsigned)d[16] << 8 | d[17];
	*tcp_off = 14 + ihl;
	*end = 14 + tot;
	if (ihl < 20 || *end > f->len || *tcp_off + 20 > *end)
		return 0;
	unsigned start = *tcp_off + (d[*tcp_off + 12] >> 4) * 4u;
	return start < *end ? start : 0;
}

/* The checksum after one 16-bit word of the segment changed from old to new (RFC 1624). */
static void csum_update(uint8_t *sum, uint16_t old, uint16_t new)
{
	uint32_t hc = (uint32_t)sum[0] << 8 | sum[1];
	uint32_t x = (~hc & 0xffff) + (~old & 0xffffu) + new;
	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	hc = ~x & 0xffff;
	sum[0] = (uint8_t)(hc >> 8);
	sum[1] = (uint8_t)hc;
}

static void corrupt(struct frame *f)
{
	unsigned tcp_off, end, start = tcp_payload(f, &tcp_off, &end);
	if (!start)
		return;
	unsigned at = start + (unsigned)(rnd() * (end - start));
	/* the 16-bit word of the segment holding the byte (the segment starts even) */
	unsigned w = tcp_off + ((at - tcp_off) & ~1u);
	uint16_t old = (uint16_t)(f->data[w] << 8 | (w + 1 < end ? f->data[w + 1] : 0));
	f->data[at] ^= (uint8_t)(1u << (unsigned)(rnd() * 8));
	uint16_t new = (uint16_t)(f->data[w] << 8 | (w + 1 < end ? f->data[w + 1] : 0));
	if (g.corrupt_fix)
		csum_update(f->data + tcp_off + 16, old, new);
	g.corrupted++;
}

/* The delay of one frame: --delay-ms, spread uniformly over +- --jitter-ms. */
static uint64_t frame_delay(void)
{
	if (!g.jitter_ns)
		return g.delay_ns;
	double d = (double)g.delay_ns + (2 * rnd() - 1) * (double)g.jitter_ns;
	return d > 0 ? (uint64_t)d : 0;
}

static void impair_frame(struct dir_state *d, struct frame *f)
{
	f->due_ns = now_ns() + frame_delay();
	if (g.loss > 0 && rnd() < g.loss) {
		g.lost++;
		return;
	}
	if (g.corrupt > 0 && rnd() < g.corrupt)
		corrupt(f);
	if (g.reorder > 0 && !d->held_valid && rnd() < g.reorder) {
		d->held = *f;  /* goes out after the next frame */
		d->held_valid = true;
		g.reordered++;
		return;
	}
	emit(f);
	if (g.dup > 0 && rnd() < g.dup) {
		emit(f);
		g.duped++;
	}
	if (d->held_valid) {
		d->held.due_ns = f->due_ns;
		emit(&d->held);
		d->held_valid = false;
	}
}

static void pump(int from)
{
	static struct frame f;
	for (int i = 0; i < 64; i++) {
		ssize_t n = recv(g.fd[from], f.data, sizeof(f.data), 0);
		if (n <= 0)
			return;
		g.in++;
		f.len = (uint16_t)n;
		f.out = (uint8_t)!from;
		if (g.dir[from].impaired)
			impair_frame(&g.dir[from], &f);
		else
			tx(&f);
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: impair IF_A IF_B [--dir ab|ba|both] [--loss PCT] [--dup PCT] "
			"[--reorder PCT] [--delay-ms MS] [--jitter-ms MS] [--corrupt PCT] [--corrupt-csum stale|fix] "
			"[--seed N] [--seconds S]\n");
	return 64;
}

static int parse(int argc, char **argv, double *secs)
{
	g.dir[0].impaired = g.dir[1].impaired = true;
	g.rng = 0x9e3779b97f4a7c15ull;
	for (int i = 3; i < argc; i += 2) {
		if (i + 1 >= argc)
			return -1;
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--dir")) {
			g.dir[0].impaired = !strcmp(v, "ab") || !strcmp(v, "both");
			g.dir[1].impaired = !strcmp(v, "ba") || !strcmp(v, "both");
			if (!g.dir[0].impaired && !g.dir[1].impaired)
				return -1;
		} else if (!strcmp(k, "--loss")) g.loss = atof(v) / 100;
		else if (!strcmp(k, "--dup")) g.dup = atof(v) / 100;
		else if (!strcmp(k, "--reorder")) g.reorder = atof(v) / 100;
		else if (!strcmp(k, "--corrupt")) g.corrupt = atof(v) / 100;
		else if (!strcmp(k, "--corrupt-csum") && (!strcmp(v, "fix") || !strcmp(v, "stale")))
			g.corrupt_fix = !strcmp(v, "fix");
		else if (!strcmp(k, "--delay-ms")) g.delay_ns = (uint64_t)(atof(v) * 1e6);
		else if (!strcmp(k, "--jitter-ms")) g.jitter_ns = (uint64_t)(atof(v) * 1e6);
		else if (!strcmp(k, "--seed")) g.rng = strtoull(v, NULL, 0) | 1;
		else if (!strcmp(k, "--seconds")) *secs = atof(v);
		else
			return -1;
	}
	return g.loss < 0 || g.loss > 1 || g.dup < 0 || g.dup > 1 || g.reorder < 0 ||
			       g.reorder > 1 || g.corrupt < 0 || g.corrupt > 1 ||
			       g.jitter_ns > g.delay_ns ? -1 : 0;
}

int main(int argc, char **argv)
{
	double secs = 600;
	if (argc < 3 || parse(argc, argv, &secs))
		return usage();
	g.q = calloc(QLEN, sizeof(*g.q));
	g.heap = calloc(QLEN, sizeof(*g.heap));
	g.free_slot = calloc(QLEN, sizeof(*g.free_slot));
	for (unsigned i = 0; g.free_slot && i < QLEN; i++)
		g.free_slot[g.nfree++] = QLEN - 1 - i;
	g.fd[0] = open_if(argv[1]);
	g.fd[1] = open_if(argv[2]);
	if (!g.q || !g.heap || !g.free_slot || g.fd[0] < 0 || g.fd[1] < 0) {
		fprintf(stderr, "impair: cannot open %s / %s: %s\n", argv[1], argv[2],
			strerror(errno));
		return 3;
	}
	signal(SIGTERM, on_sig);
	signal(SIGINT, on_sig);
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	printf("impair: ready\n");
	fflush(stdout);
	while (!stop && now_ns() < end) {
		struct pollfd p[2] = { { g.fd[0], POLLIN, 0 }, { g.fd[1], POLLIN, 0 } };
		struct timespec tmo = { 0, 100000000 };
		if (g.qn) {  /* wake exactly when the head of the delay queue is due */
			uint64_t now = now_ns(), due = g.q[g.heap[0]].due_ns;
			uint64_t w = due > now ? due - now : 0;
			tmo.tv_sec = (time_t)(w / 1000000000u);
			tmo.tv_nsec = (long)(w % 1000000000u);
		}
		if (ppoll(p, 2, &tmo, NULL) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN)
			pump(0);
		if (p[1].revents & POLLIN)
			pump(1);
		flush_due(now_ns());
	}
	fprintf(stderr,
		"impair: in %llu out %llu lost %llu duplicated %llu reordered %llu delayed %llu "
		"queue-drops %llu corrupted %llu\n",
		(unsigned long long)g.in, (unsigned long long)g.out, (unsigned long long)g.lost,
		(unsigned long long)g.duped, (unsigned long long)g.reordered,
		(unsigned long long)g.delayed, (unsigned long long)g.qdrops,
		(unsigned long long)g.corrupted);
	return 0;
}
