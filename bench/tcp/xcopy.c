/* xcopy: the cross-core copy baseline of scripts/bench-tcp.sh - what any transfer between
 * two processes through a copying shared-memory ring (memif without zero-copy) must do at
 * least: one thread copies each frame into a ring slot, another copies it out. No DPDK, no
 * TCP, no CRC, no checksum. Run next to the RDMA bandwidth, it shows which state the two
 * vCPUs of a shared machine are in (its rate changes severalfold within seconds), and so how
 * much of a gap to iperf3 the machine leaves open.
 *   xcopy PRODUCER_CPU CONSUMER_CPU [SECONDS [FRAME_OCTETS [SLOTS]]]
 * Defaults: 2 s of 9000-octet frames through 1024 slots of 9088 (memif's ring at MTU 9000).
 * Prints "xcopy: gbit_s=... frames=... secs=...". Exit 0, 1 on failure, 2 usage. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define SLOT_ROUND 128u
#define SIDE_BUF (64u << 10) /* each side's own buffer: an RDMA Write's 64 KiB message */

struct ring {
	uint8_t *slots;
	uint32_t nslots, slot_size, frame;
	double seconds;
	uint8_t *side[2]; /* the producer's source and the consumer's destination */
	_Atomic uint64_t frames; /* UINT64_MAX until the producer stops */
	_Alignas(64) _Atomic uint64_t produced;
	_Alignas(64) _Atomic uint64_t consumed;
};

/* The side's buffer offset of frame i: frames walk a 64 KiB buffer as a sender's message. */
static size_t side_off(const struct ring *r, uint64_t i)
{
	uint64_t per = SIDE_BUF / r->frame;

	return (size_t)(i % per) * r->frame;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *producer(void *arg)
{
	struct ring *r = arg;
	const uint8_t *src = r->side[0];
	double end = now_s() + r->seconds;
	uint64_t i;

	for (i = 0; (i & 1023) != 0 || now_s() < end; i++) {
		while (i - atomic_load_explicit(&r->consumed, memory_order_acquire) >= r->nslots)
			;
		memcpy(r->slots + (size_t)(i % r->nslots) * r->slot_size, src + side_off(r, i),
		       r->frame);
		atomic_store_explicit(&r->produced, i + 1, memory_order_release);
	}
	atomic_store_explicit(&r->frames, i, memory_order_release);
	return NULL;
}

static void *consumer(void *arg)
{
	struct ring *r = arg;
	uint8_t *dst = r->side[1];

	for (uint64_t i = 0; i < atomic_load_explicit(&r->frames, memory_order_acquire); i++) {
		while (atomic_load_explicit(&r->produced, memory_order_acquire) == i)
			if (atomic_load_explicit(&r->frames, memory_order_acquire) == i)
				goto out;
		memcpy(dst + side_off(r, i), r->slots + (size_t)(i % r->nslots) * r->slot_size,
		       r->frame);
		atomic_store_explicit(&r->consumed, i + 1, memory_order_release);
	}
out:
	return NULL;
}

static long arg_num(int argc, char **argv, int i, long dflt, long lo, long hi)
{
	char *end;
	long v;

	if (i >= argc)
		return dflt;
	v = strtol(argv[i], &end, 10);
	return *end != '\0' || v < lo || v > hi ? -1 : v;
}

/* Starts fn on cpu; an error message and nonzero when it cannot (a CPU not online, or not
 * in this process's affinity mask). */
static int start_on(pthread_t *th, int cpu, void *(*fn)(void *), struct ring *r)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int rc;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	rc = pthread_attr_init(&attr);
	if (rc == 0)
		rc = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (rc == 0)
		rc = pthread_create(th, &attr, fn, r);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		fprintf(stderr, "xcopy: cannot run a thread on CPU %d: %s\n", cpu, strerror(rc));
	return rc;
}

int main(int argc, char **argv)
{
	static struct ring r;
	pthread_t th[2];
	long cpu0 = arg_num(argc, argv, 1, -1, 0, CPU_SETSIZE - 1);
	long cpu1 = arg_num(argc, argv, 2, -1, 0, CPU_SETSIZE - 1);
	long secs_arg = arg_num(argc, argv, 3, 2, 1, 3600);
	long frame = arg_num(argc, argv, 4, 9000, 64, SIDE_BUF);
	long slots = arg_num(argc, argv, 5, 1024, 2, 1L << 16);
	size_t ring_len;
	double t0, secs;
	int rc = 1;

	if (argc < 3 || argc > 6 || cpu0 < 0 || cpu1 < 0 || secs_arg < 0 || frame < 0 || slots < 0) {
		fprintf(stderr, "usage: xcopy PRODUCER_CPU CONSUMER_CPU [SECONDS [FRAME_OCTETS [SLOTS]]]\n");
		return 2;
	}
	r.seconds = (double)secs_arg;
	atomic_store(&r.frames, UINT64_MAX);
	r.frame = (uint32_t)frame;
	r.slot_size = (r.frame + SLOT_ROUND - 1) / SLOT_ROUND * SLOT_ROUND;
	r.nslots = (uint32_t)slots;
	ring_len = (size_t)r.nslots * r.slot_size;
	/* shared, as memif's region is between processes */
	r.slots = mmap(NULL, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	r.side[0] = malloc(SIDE_BUF);
	r.side[1] = malloc(SIDE_BUF);
	if (r.slots == MAP_FAILED || r.side[0] == NULL || r.side[1] == NULL) {
		fprintf(stderr, "xcopy: out of memory\n");
		goto out;
	}
	memset(r.slots, 0, ring_len);
	memset(r.side[0], 0x5a, SIDE_BUF);
	memset(r.side[1], 0, SIDE_BUF);
	t0 = now_s();
	if (start_on(&th[1], (int)cpu1, consumer, &r) != 0)
		goto out;
	if (start_on(&th[0], (int)cpu0, producer, &r) != 0) {
		atomic_store(&r.frames, 0); /* the consumer has nothing to wait for */
		pthread_join(th[1], NULL);
		goto out;
	}
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	secs = now_s() - t0;
	if (r.side[1][0] != 0x5a) { /* the copies arrived (and are not optimised away) */
		fprintf(stderr, "xcopy: the consumer saw no data\n");
		goto out;
	}
	printf("xcopy: gbit_s=%.3f frames=%lu frame=%u slots=%u secs=%.3f\n",
	       (double)r.frames * r.frame * 8 / secs / 1e9, (unsigned long)r.frames, r.frame,
	       r.nslots, secs);
	rc = 0;
out:
	if (r.slots != MAP_FAILED)
		munmap(r.slots, ring_len);
	free(r.side[0]);
	free(r.side[1]);
	return rc;
}
