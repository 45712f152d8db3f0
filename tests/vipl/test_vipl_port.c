/* What porting a 1990s VIA application needs of the NIC (docs/vipl.md "Device names", "Several
 * processes per host"): the device names of M-VIA and cLAN, NICs that share a host (a taken
 * port, the host's well-known port that finds a NIC by discriminator, its takeover, stale
 * registry entries), the name service's port, and a peer's Disconnect that the default error
 * handler keeps off stderr. One process; its NICs stand for the processes of one host. */
#include "tv.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char rundir[] = "/tmp/test_vipl_port.XXXXXX";

static uint16_t port_of(const VIP_NIC_ATTRIBUTES *a)
{
	uint16_t p;
	memcpy(&p, a->LocalNicAddress + 4, 2);
	return ntohs(p);
}

static uint16_t base_port(void)
{
	const char *e = getenv("SOFTRNIC_VIPL_ADDR");
	return (uint16_t)atoi(strchr(e, ':') + 1);
}

/* An address of 127.0.0.1:port with discriminator disc. */
static void addr_at(uint16_t port, const char *disc, struct tv_addr *out)
{
	uint32_t ip = htonl(0x7F000001);
	uint16_t p = htons(port);
	memset(out, 0, sizeof(*out));
	out->a.HostAddressLen = 6;
	out->a.DiscriminatorLen = (VIP_UINT16)strlen(disc);
	memcpy(out->a.HostAddress, &ip, 4);
	memcpy(out->a.HostAddress + 4, &p, 2);
	memcpy(out->a.HostAddress + 6, disc, strlen(disc));
}

static void dev_names(void **state)
{
	(void)state;
	static const struct { const char *name; const char *nic; } ok[] = {
		{ "/dev/via_eth0", "softrnic0" }, { "/dev/via_eth1", "softrnic1" },
		{ "/dev/clanvi0", "softrnic0" }, { "/dev/clanvi2", "softrnic2" },
		{ "/dev/via_lo", "softrnic0" }, { "via0", "softrnic0" }, { NULL, "softrnic0" },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		VIP_NIC_HANDLE nic;
		VIP_NIC_ATTRIBUTES a;
		assert_int_equal(VipOpenNic(ok[i].name, &nic), VIP_SUCCESS);
		assert_int_equal(VipQueryNic(nic, &a), VIP_SUCCESS);
		assert_string_equal(a.Name, ok[i].nic);
		if (ok[i].name != NULL && strcmp(ok[i].name, "/dev/via_lo") == 0)
			assert_int_equal(a.LocalNicAddress[0], 127);
		assert_int_equal(VipCloseNic(nic), VIP_SUCCESS);
	}
	static const char *const bad[] = { "/dev/via_eth8", "/dev/via_eth", "/dev/via_eth01",
					   "/dev/clanvi", "/dev/via_foo", "softrnic9", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		VIP_NIC_HANDLE nic = NULL;
		assert_int_equal(VipOpenNic(bad[i], &nic), VIP_INVALID_PARAMETER);
	}
}

/* A NIC whose port another has takes a free one, and is reachable there. */
static void port_taken(void **state)
{
	(void)state;
	struct tv t;
	VIP_NIC_HANDLE x;
	VIP_NIC_ATTRIBUTES xa;
	tv_open(&t);
	assert_int_equal(VipOpenNic("softrnic0", &x), VIP_SUCCESS);
	assert_int_equal(VipQueryNic(x, &xa), VIP_SUCCESS);
	assert_int_equal(port_of(&t.attr[0]), base_port());
	assert_int_not_equal(port_of(&xa), base_port());
	assert_int_not_equal(port_of(&xa), port_of(&t.attr[1]));
	assert_int_equal(VipCloseNic(x), VIP_SUCCESS);
	tv_close(&t);
}

/* The name service gives the host's well-known port, whatever the NIC's own. */
static void ns_port(void **state)
{
	(void)state;
	struct tv t;
	struct tv_addr a;
	tv_open(&t);
	for (int i = 0; i < 2; i++) {
		memset(&a, 0, sizeof(a));
		assert_int_equal(VipNSGetHostByName(t.nic[i], "localhost", &a.a, 0), VIP_SUCCESS);
		uint16_t p;
		memcpy(&p, a.a.HostAddress + 4, 2);
		assert_int_equal(ntohs(p), base_port());
	}
	tv_close(&t);
}

struct waiter {
	VIP_NIC_HANDLE nic;
	VIP_VI_HANDLE vi;
	const char *disc;
	unsigned delay_ms;
	VIP_RETURN rc;
	struct tv_addr remote;
};

static void *wait_main(void *arg)
{
	struct waiter *w = arg;
	struct tv_addr local;
	VIP_VI_ATTRIBUTES ra;
	VIP_CONN_HANDLE ch;
	usleep(w->delay_ms * 1000u);
	addr_at(0, w->disc, &local);
	local.a.HostAddressLen = 0; /* ConnectWait needs the discriminator only */
	memmove(local.a.HostAddress, local.a.HostAddress + 6, strlen(w->disc));
	w->rc = VipConnectWait(w->nic, &local.a, 5000, &w->remote.a, &ra, &ch);
	if (w->rc == VIP_SUCCESS)
		w->rc = VipConnectAccept(ch, w->vi);
	return NULL;
}

/* The client VI (on side 0) connects to 127.0.0.1:port with disc; a ConnectWait for it runs on
 * nic after delay_ms. Both must succeed; returns the server's view of the client's address. */
static void connect_via(struct tv *t, VIP_NIC_HANDLE nic, VIP_PROTECTION_HANDLE ptag,
			uint16_t port, const char *disc, unsigned delay_ms)
{
	VIP_VI_ATTRIBUTES at = { .ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY,
				 .MaxTransferSize = 65536, .Ptag = ptag };
	struct waiter w = { .nic = nic, .disc = disc, .delay_ms = delay_ms };
	assert_int_equal(VipCreateVi(nic, &at, NULL, NULL, &w.vi), VIP_SUCCESS);
	VIP_VI_HANDLE c = tv_vi(t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	struct tv_addr l, r;
	VIP_VI_ATTRIBUTES ra;
	pthread_t th;
	tv_addr(t, 0, "client", &l);
	addr_at(port, disc, &r);
	assert_int_equal(pthread_create(&th, NULL, wait_main, &w), 0);
	/* as VIA programs do: NO_MATCH (nobody at the port yet) is tried again */
	uint64_t t0 = tv_ms();
	VIP_RETURN rc;
	while ((rc = VipConnectRequest(c, &l.a, &r.a, 4000, &ra)) == VIP_NO_MATCH &&
	       tv_ms() - t0 < 4000)
		usleep(20000);
	pthread_join(th, NULL);
	assert_int_equal(rc, VIP_SUCCESS);
	assert_int_equal(w.rc, VIP_SUCCESS);
	assert_memory_equal(w.remote.a.HostAddress, t->attr[0].LocalNicAddress, 6);
	assert_int_equal(tv_state(c), VIP_STATE_CONNECTED);
	assert_int_equal(VipDisconnect(c), VIP_SUCCESS);
	assert_int_equal(VipDisconnect(w.vi), VIP_SUCCESS);
	assert_int_equal(VipDestroyVi(c), VIP_SUCCESS);
	assert_int_equal(VipDestroyVi(w.vi), VIP_SUCCESS);
}

/* Requests at the well-known port reach the NIC that waits for their discriminator, whether
 * its ConnectWait came first or later; when the port's holder closes, another NIC takes it. */
static void rendezvous(void **state)
{
	(void)state;
	struct tv t;
	VIP_NIC_HANDLE x;
	VIP_PROTECTION_HANDLE xp;
	tv_open(&t);
	assert_int_equal(VipOpenNic("softrnic0", &x), VIP_SUCCESS); /* port taken: a free one */
	assert_int_equal(VipCreatePtag(x, &xp), VIP_SUCCESS);
	connect_via(&t, x, xp, base_port(), "on-x", 0);
	connect_via(&t, x, xp, base_port(), "on-x-later", 100);
	connect_via(&t, t.nic[1], t.ptag[1], base_port(), "on-1", 0);
	/* the holder of the well-known port (side 0's NIC) goes: one of the NICs open then takes
	 * it within VIPL_RDV_RETAKE_MS (1 s) */
	VIP_NIC_HANDLE c;
	assert_int_equal(VipOpenNic("softrnic2", &c), VIP_SUCCESS);
	assert_int_equal(VipCloseNic(t.nic[0]), VIP_SUCCESS);
	t.nic[0] = c;
	assert_int_equal(VipQueryNic(c, &t.attr[0]), VIP_SUCCESS);
	assert_int_equal(VipCreatePtag(c, &t.ptag[0]), VIP_SUCCESS);
	VIP_MEM_ATTRIBUTES ma = { t.ptag[0], VIP_TRUE, VIP_TRUE };
	assert_int_equal(VipRegisterMem(c, t.arena[0], TV_ARENA, &ma, &t.mh[0]), VIP_SUCCESS);
	uint64_t t0 = tv_ms();
	connect_via(&t, x, xp, base_port(), "after-takeover", 0);
	assert_true(tv_ms() - t0 < 4000);
	assert_int_equal(VipDestroyPtag(x, xp), VIP_SUCCESS);
	assert_int_equal(VipCloseNic(x), VIP_SUCCESS);
	tv_close(&t);
}

/* A registry entry of a process that is gone redirects nothing, and goes. */
/* An entry for discriminator disc_hex on side 1's NIC, made by a process that has exited;
 * owner -1: ours. */
static void dead_entry(struct tv *t, const char *disc_hex, int owner, char *path, size_t cap)
{
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	assert_true(child > 0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	struct stat st;
	assert_int_equal(stat("/proc/self/ns/net", &st), 0);
	/* the NIC at 127.0.0.1:<side 1's port> */
	snprintf(path, cap, "%s/%lu.%u.%s.7f000001.%u.%ld", rundir, (unsigned long)st.st_ino,
		 (unsigned)base_port(), disc_hex, (unsigned)port_of(&t->attr[1]), (long)child);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	if (owner >= 0)
		assert_int_equal(fchown(fd, (uid_t)owner, (gid_t)owner), 0);
	close(fd);
}

/* A request for disc on side 0 finds nobody waiting. */
static void expect_no_match(struct tv *t, const char *disc)
{
	VIP_VI_HANDLE c = tv_vi(t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	struct tv_addr l, r;
	VIP_VI_ATTRIBUTES ra;
	tv_addr(t, 0, "client", &l);
	addr_at(base_port(), disc, &r);
	assert_int_equal(VipConnectRequest(c, &l.a, &r.a, 200, &ra), VIP_NO_MATCH);
	assert_int_equal(VipDestroyVi(c), VIP_SUCCESS);
}

static void stale_entry(void **state)
{
	(void)state;
	struct tv t;
	char path[512];
	tv_open(&t);
	dead_entry(&t, "7374616c65", -1, path, sizeof(path)); /* "stale" */
	expect_no_match(&t, "stale");
	assert_int_equal(access(path, F_OK), -1);
	tv_close(&t);
}

/* An entry another user made (the directory is shared by the host's users) is never used,
 * not even removed when its process is gone: it could name any address. */
static void foreign_entry(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip(); /* only root can make a file another user owns */
	struct tv t;
	char path[512];
	tv_open(&t);
	dead_entry(&t, "666f726569676e", 65534, path, sizeof(path)); /* "foreign" */
	expect_no_match(&t, "foreign");
	assert_int_equal(access(path, F_OK), 0); /* ignored, so not judged stale either */
	assert_int_equal(unlink(path), 0);
	tv_close(&t);
}

struct peer {
	VIP_VI_HANDLE vi;
	struct tv_addr l, r;
	VIP_RETURN rc;
};

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	VIP_VI_ATTRIBUTES ra;
	p->rc = VipConnectPeerRequest(p->vi, &p->l.a, &p->r.a, 5000);
	if (p->rc == VIP_SUCCESS)
		p->rc = VipConnectPeerWait(p->vi, &ra);
	return NULL;
}

/* Two NICs of one host that know each other only by the host's name (its well-known port):
 * peer-to-peer connect by discriminators. ip_configured false: the NICs take the host's
 * default address, which "localhost" does not resolve to (D240: the same host still). */
static void peers_by_name(bool ip_configured)
{
	struct tv t;
	struct peer p[2];
	pthread_t th[2];
	char saved[64], port_only[64];
	snprintf(saved, sizeof(saved), "%s", getenv("SOFTRNIC_VIPL_ADDR"));
	snprintf(port_only, sizeof(port_only), "%s", strchr(saved, ':'));
	if (!ip_configured)
		setenv("SOFTRNIC_VIPL_ADDR", port_only, 1);
	tv_open(&t);
	setenv("SOFTRNIC_VIPL_ADDR", saved, 1);
	for (int i = 0; i < 2; i++) {
		p[i].vi = tv_vi(&t, i, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
		tv_addr(&t, i, i ? "peer-b" : "peer-a", &p[i].l);
		memset(&p[i].r, 0, sizeof(p[i].r));
		assert_int_equal(VipNSGetHostByName(t.nic[i], "localhost", &p[i].r.a, 0),
				 VIP_SUCCESS);
		p[i].r.a.DiscriminatorLen = 6;
		memcpy(p[i].r.a.HostAddress + 6, i ? "peer-a" : "peer-b", 6);
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, peer_main, &p[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(p[i].rc, VIP_SUCCESS);
		assert_int_equal(tv_state(p[i].vi), VIP_STATE_CONNECTED);
	}
	tv_close(&t);
}

static void peer_by_name(void **state)
{
	(void)state;
	peers_by_name(true);
}

static void peer_by_name_default_ip(void **state)
{
	(void)state;
	peers_by_name(false);
}

/* With no handler of the application's, a peer's Disconnect leaves stderr empty; an error
 * of the application's own (a descriptor outside registered memory) is logged there. */
static void quiet_disconnect(void **state)
{
	(void)state;
	struct tv t;
	char log[] = "/tmp/test_vipl_port.err.XXXXXX";
	int fd = mkstemp(log);
	assert_true(fd >= 0);
	fflush(stderr);
	int saved = dup(2);
	assert_int_equal(dup2(fd, 2), 2);
	tv_open(&t);
	VIP_VI_HANDLE a = tv_vi(&t, 0, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	VIP_VI_HANDLE b = tv_vi(&t, 1, VIP_SERVICE_RELIABLE_DELIVERY, NULL, NULL);
	tv_connect(&t, a, b, "qa", "qb");
	assert_int_equal(VipDisconnect(a), VIP_SUCCESS);
	uint64_t t0 = tv_ms();
	while (tv_state(b) != VIP_STATE_ERROR && tv_ms() - t0 < 3000)
		tv_nap();
	assert_int_equal(tv_state(b), VIP_STATE_ERROR);
	usleep(50000); /* the NIC thread has run the error call */
	off_t quiet = lseek(fd, 0, SEEK_END);
	VIP_DESCRIPTOR *d = aligned_alloc(64, 4096);
	memset(d, 0, 4096);
	assert_int_equal(VipPostRecv(b, d, t.mh[1]), VIP_SUCCESS);
	t0 = tv_ms();
	while (lseek(fd, 0, SEEK_END) == 0 && tv_ms() - t0 < 3000)
		tv_nap();
	off_t loud = lseek(fd, 0, SEEK_END);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	unlink(log);
	free(d);
	tv_close(&t);
	assert_int_equal(quiet, 0);
	assert_true(loud > 0);
}

int main(void)
{
	tv_env();
	assert_non_null(mkdtemp(rundir));
	setenv("SOFTRNIC_VIPL_RUNDIR", rundir, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dev_names),     cmocka_unit_test(port_taken),
		cmocka_unit_test(ns_port),       cmocka_unit_test(rendezvous),
		cmocka_unit_test(stale_entry),   cmocka_unit_test(foreign_entry),
		cmocka_unit_test(peer_by_name),
		cmocka_unit_test(peer_by_name_default_ip),
		cmocka_unit_test(quiet_disconnect),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(rundir);
	return rc;
}
