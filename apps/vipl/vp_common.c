/* vp_common: options, NIC and memory setup, connection and descriptors of the VIPL examples. */
#include <arpa/inet.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "vp.h"

#define VP_DEFAULT_PORT 7447

static void usage(const char *prog, bool bw)
{
	fprintf(stderr,
		"usage: %s -s | -c host[:port]  [-l ip[:port]] [-d disc] [-n iters] [-S size] [-a]\n"
		"       [-r ur|rd|rr] [-p | -y] [-v]%s [-t timeout_ms]\n"
		"  -s server, -c client of the server NIC host[:port] (a name or address; port\n"
		"     default %d, or SOFTRNIC_VIPL_ADDR's: the host's VIPL port, found by -d)\n"
		"  -l this process's NIC address (else SOFTRNIC_VIPL_ADDR / the default)\n"
		"  -p spin on Vip%sDone instead of blocking waits (-y: sched_yield between polls)\n"
		"  -v verify a data pattern\n",
		prog, bw ? " [-w window]" : "", VP_DEFAULT_PORT, bw ? "Send" : "Recv");
}

static int parse_rel(const char *s, VIP_RELIABILITY_LEVEL *r)
{
	if (strcmp(s, "ur") == 0 || strcmp(s, "unreliable") == 0)
		*r = VIP_SERVICE_UNRELIABLE;
	else if (strcmp(s, "rd") == 0 || strcmp(s, "reliable_delivery") == 0)
		*r = VIP_SERVICE_RELIABLE_DELIVERY;
	else if (strcmp(s, "rr") == 0 || strcmp(s, "reliable_reception") == 0)
		*r = VIP_SERVICE_RELIABLE_RECEPTION;
	else
		return -1;
	return 0;
}

int vp_parse(struct vp_opts *o, int argc, char **argv, const char *prog, bool bw)
{
	memset(o, 0, sizeof *o);
	o->disc = bw ? "vipl-bw" : "vipl-pingpong";
	o->iters = bw ? 10000 : 1000;
	o->size = bw ? 65536 : 8;
	o->rel = VIP_SERVICE_RELIABLE_DELIVERY;
	o->window = 64;
	o->timeout_ms = 30000;
	int ch;
	char *end;
	while ((ch = getopt(argc, argv, "sc:l:d:n:S:ar:pyvw:t:h")) != -1) {
		switch (ch) {
		case 's': o->server = true; break;
		case 'c': o->peer = optarg; break;
		case 'l': o->local = optarg; break;
		case 'd': o->disc = optarg; break;
		case 'n': o->iters = strtoul(optarg, &end, 0); if (*end || !o->iters) goto bad; break;
		case 'S': o->size = (uint32_t)strtoul(optarg, &end, 0); if (*end) goto bad; break;
		case 'a': o->all_sizes = true; break;
		case 'r': if (parse_rel(optarg, &o->rel)) goto bad; break;
		case 'p': o->poll = true; break;
		case 'y': o->poll = true, o->yield = true; break;
		case 'v': o->verify = true; break;
		case 'w':
			o->window = (unsigned)strtoul(optarg, &end, 0);
			if (*end || !o->window || o->window > 4096)
				goto bad;
			break;
		case 't': o->timeout_ms = strtoul(optarg, &end, 0); if (*end) goto bad; break;
		default: goto bad;
		}
	}
	if (optind != argc || o->server == (o->peer != NULL) || strlen(o->disc) > 64)
		goto bad;
	return 0;
bad:
	usage(prog, bw);
	return -1;
}

const char *vp_rc(VIP_RETURN rc)
{
	static const char *const n[] = { "SUCCESS", "NOT_DONE", "INVALID_PARAMETER",
		"ERROR_RESOURCE", "TIMEOUT", "REJECT", "INVALID_RELIABILITY_LEVEL", "INVALID_MTU",
		"INVALID_QOS", "INVALID_PTAG", "INVALID_RDMAREAD", "DESCRIPTOR_ERROR",
		"INVALID_STATE", "ERROR_NAMESERVICE", "NO_MATCH", "NOT_REACHABLE",
		"ERROR_NOT_SUPPORTED", "ERROR" };
	return (unsigned)rc < sizeof n / sizeof n[0] ? n[rc] : "?";
}

#define TRY(call)                                                                            \
	do {                                                                                 \
		VIP_RETURN rc_ = (call);                                                     \
		if (rc_ != VIP_SUCCESS) {                                                    \
			fprintf(stderr, "%s: VIP_%s\n", #call, vp_rc(rc_));                  \
			return -1;                                                           \
		}                                                                            \
	} while (0)

/* Asynchronous errors are printed, except Connection Lost: the peer's disconnect is the
 * normal end of a run, and a loss in mid-run also fails the next descriptor, which the
 * waits report with its status. */
static void on_error(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *ed)
{
	(void)ctx;
	if (ed->ErrorCode == VIP_ERROR_CONN_LOST)
		return;
	fprintf(stderr, "asynchronous VIPL error %d (resource %d)\n", (int)ed->ErrorCode,
		(int)ed->ResourceCode);
}

int vp_open(struct vp *v, size_t mem_len)
{
	if (v->o.local && setenv("SOFTRNIC_VIPL_ADDR", v->o.local, 1) != 0)
		return perror("setenv"), -1;
	TRY(VipOpenNic("softrnic0", &v->nic));
	TRY(VipQueryNic(v->nic, &v->attr));
	TRY(VipErrorCallback(v->nic, v, on_error));
	TRY(VipCreatePtag(v->nic, &v->ptag));
	v->mem_len = (mem_len + 4095) & ~(size_t)4095;
	v->mem = mmap(NULL, v->mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v->mem == MAP_FAILED)
		return perror("mmap"), -1;
	VIP_MEM_ATTRIBUTES ma = { .Ptag = v->ptag };
	TRY(VipRegisterMem(v->nic, v->mem, v->mem_len, &ma, &v->mh));
	VIP_VI_ATTRIBUTES a = { .ReliabilityLevel = v->o.rel, .Ptag = v->ptag,
				.MaxTransferSize = v->attr.MaxTransferSize < 65536
							   ? v->attr.MaxTransferSize : 65536 };
	TRY(VipCreateVi(v->nic, &a, NULL, NULL, &v->vi));
	return 0;
}

void *vp_alloc(struct vp *v, size_t len)
{
	size_t off = (v->used + 63) & ~(size_t)63;
	if (off + len > v->mem_len)
		return NULL;
	v->used = off + len;
	return v->mem + off;
}

VIP_DESCRIPTOR *vp_desc(struct vp *v, void *buf, uint32_t len)
{
	VIP_DESCRIPTOR *d = vp_alloc(v, sizeof *d);
	if (!d)
		return NULL;
	memset(d, 0, sizeof *d);
	d->CS.SegCount = 1;
	d->CS.Length = len;
	d->DS[0].Local.Data.Address = buf;
	d->DS[0].Local.Handle = v->mh;
	d->DS[0].Local.Length = len;
	return d;
}

/* A VIP_NET_ADDRESS for host:port (client: the server; port default 7447) + discriminator. */
static VIP_NET_ADDRESS *make_addr(const uint8_t host[6], const char *disc)
{
	size_t dl = strlen(disc);
	VIP_NET_ADDRESS *a = calloc(1, sizeof *a + 6 + 64);
	if (!a)
		return NULL;
	a->HostAddressLen = 6;
	a->DiscriminatorLen = (VIP_UINT16)dl;
	memcpy(a->HostAddress, host, 6);
	memcpy(a->HostAddress + 6, disc, dl);
	return a;
}

/* The server's host address through VIPL's name service: a host name or dotted address, with
 * ":port" or without (then the host's well-known VIPL port, where every VIPL process of that
 * host is found by its discriminator). */
static int parse_host(struct vp *v, const char *s, uint8_t host[6])
{
	struct {
		VIP_NET_ADDRESS a;
		uint8_t room[16];
	} na;
	if (VipNSGetHostByName(v->nic, (VIP_CHAR *)s, &na.a, 0) != VIP_SUCCESS ||
	    na.a.HostAddressLen != 6)
		return -1;
	memcpy(host, na.a.HostAddress, 6);
	return 0;
}

/* The server runs at the reliability level its client asked for (perftest's servers take
 * the test from the client too). */
static VIP_RETURN adopt_reliability(struct vp *v, VIP_RELIABILITY_LEVEL rel)
{
	VIP_VI_ATTRIBUTES a = { .ReliabilityLevel = rel, .Ptag = v->ptag,
				.MaxTransferSize = v->attr.MaxTransferSize < 65536
							   ? v->attr.MaxTransferSize : 65536 };
	VIP_RETURN rc = VipSetViAttributes(v->vi, &a);
	if (rc == VIP_SUCCESS)
		v->o.rel = rel;
	return rc;
}

int vp_connect(struct vp *v)
{
	VIP_VI_ATTRIBUTES ra;
	VIP_NET_ADDRESS *la = make_addr(v->attr.LocalNicAddress, v->o.disc);
	if (!la || v->attr.NicAddressLen != 6)
		return fprintf(stderr, "unexpected NIC address length %u\n", v->attr.NicAddressLen), -1;
	if (v->o.server) {
		VIP_NET_ADDRESS *peer = make_addr(v->attr.LocalNicAddress, "");
		VIP_CONN_HANDLE conn;
		VIP_RETURN rc = VipConnectWait(v->nic, la, v->o.timeout_ms, peer, &ra, &conn);
		if (rc == VIP_SUCCESS && ra.ReliabilityLevel != v->o.rel)
			rc = adopt_reliability(v, ra.ReliabilityLevel);
		if (rc == VIP_SUCCESS)
			rc = VipConnectAccept(conn, v->vi);
		free(peer);
		free(la);
		if (rc != VIP_SUCCESS)
			return fprintf(stderr, "server: connection: VIP_%s\n", vp_rc(rc)), -1;
		return 0;
	}
	uint8_t host[6];
	if (parse_host(v, v->o.peer, host) != 0) {
		free(la);
		return fprintf(stderr, "unknown server '%s' (host[:port])\n", v->o.peer), -1;
	}
	VIP_NET_ADDRESS *ra_addr = make_addr(host, v->o.disc);
	VIP_RETURN rc = VIP_TIMEOUT;
	/* the server may not be up yet: retry NO_MATCH / TIMEOUT until the deadline */
	uint64_t end = vp_now_ns() + (uint64_t)v->o.timeout_ms * 1000000u;
	while (vp_now_ns() < end) {
		rc = VipConnectRequest(v->vi, la, ra_addr, 1000, &ra);
		if (rc == VIP_SUCCESS || (rc != VIP_TIMEOUT && rc != VIP_NO_MATCH &&
					  rc != VIP_REJECT))
			break;
		struct timespec ts = { 0, 100 * 1000000L };
		nanosleep(&ts, NULL);
	}
	free(ra_addr);
	free(la);
	if (rc != VIP_SUCCESS)
		return fprintf(stderr, "client: VipConnectRequest: VIP_%s\n", vp_rc(rc)), -1;
	return 0;
}

void vp_close(struct vp *v)
{
	VIP_DESCRIPTOR *d;
	if (v->vi) {
		VipDisconnect(v->vi);
		while (VipSendWait(v->vi, 100, &d) == VIP_SUCCESS)
			;
		while (VipRecvWait(v->vi, 100, &d) == VIP_SUCCESS)
			;
		VipDestroyVi(v->vi);
	}
	if (v->mh)
		VipDeregisterMem(v->nic, v->mem, v->mh);
	if (v->ptag)
		VipDestroyPtag(v->nic, v->ptag);
	if (v->nic)
		VipCloseNic(v->nic);
	if (v->mem && v->mem != MAP_FAILED)
		munmap(v->mem, v->mem_len);
}

int vp_post_send(struct vp *v, VIP_DESCRIPTOR *d, uint32_t len)
{
	d->CS.Status = 0;
	d->CS.Length = len;
	d->DS[0].Local.Length = len;
	TRY(VipPostSend(v->vi, d, v->mh));
	return 0;
}

int vp_post_recv(struct vp *v, VIP_DESCRIPTOR *d)
{
	d->CS.Status = 0;
	TRY(VipPostRecv(v->vi, d, v->mh));
	return 0;
}

/* One completion from the queue: polling (VipXDone spin) or blocking (VipXWait); NULL and a
 * message on a timeout, a VIPL error or a descriptor completed in error. */
static VIP_DESCRIPTOR *wait_q(struct vp *v, bool recv)
{
	VIP_DESCRIPTOR *d = NULL;
	VIP_RETURN rc;
	if (v->o.poll) {
		uint64_t end = 0;
		unsigned spins = 0;
		while ((rc = recv ? VipRecvDone(v->vi, &d) : VipSendDone(v->vi, &d)) == VIP_NOT_DONE) {
			/* -y: yield between empty polls; a pure spin can starve the provider's
			 * threads when processes share cores (README, rdma_bench) */
			if (v->o.yield)
				sched_yield();
			if (++spins % 4096 == 0) {
				uint64_t now = vp_now_ns();
				if (!end)
					end = now + (uint64_t)v->o.timeout_ms * 1000000u;
				else if (now > end)
					break;
			}
		}
	} else {
		rc = recv ? VipRecvWait(v->vi, v->o.timeout_ms, &d)
			  : VipSendWait(v->vi, v->o.timeout_ms, &d);
	}
	if (rc != VIP_SUCCESS) {
		fprintf(stderr, "%s: VIP_%s\n", recv ? "receive" : "send",
			rc == VIP_NOT_DONE ? "TIMEOUT" : vp_rc(rc));
		return NULL;
	}
	if (d->CS.Status & VIP_STATUS_ERROR_MASK) {
		fprintf(stderr, "%s completed in error: status 0x%08x\n", recv ? "receive" : "send",
			d->CS.Status);
		return NULL;
	}
	return d;
}

VIP_DESCRIPTOR *vp_wait_recv(struct vp *v) { return wait_q(v, true); }
VIP_DESCRIPTOR *vp_wait_send(struct vp *v) { return wait_q(v, false); }

uint64_t vp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void vp_fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

bool vp_check(const uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 131u + i * 7u + (i >> 8))) {
			fprintf(stderr, "data check failed: message %u byte %u is 0x%02x\n", seed, i,
				p[i]);
			return false;
		}
	return true;
}

unsigned vp_sizes(const struct vp *v, uint32_t *out, unsigned max)
{
	uint32_t mtu = v->attr.MaxTransferSize < 65536 ? (uint32_t)v->attr.MaxTransferSize : 65536;
	if (!v->o.all_sizes) {
		out[0] = v->o.size;
		return 1;
	}
	unsigned n = 0;
	for (uint32_t s = 2; s <= mtu && n < max; s *= 2)
		out[n++] = s;
	return n;
}
