#include "tv.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t tv_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void tv_nap(void)
{
	struct timespec ms = { 0, 1000000 };
	nanosleep(&ms, NULL);
}

/* Ports per process so the test programs can run in parallel, and below Linux's ephemeral
 * range (32768-60999): a listener bound in it failed now and then with EADDRINUSE, the port
 * being some connection's local port (peer_connect, ~1 run in 30). */
void tv_env(void)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "127.0.0.1:%u", 10000u + (unsigned)(getpid() % 11000) * 2u);
	setenv("SOFTRNIC_VIPL_ADDR", buf, 1);
	if (getenv("TV_FILTER") != NULL)
		cmocka_set_test_filter(getenv("TV_FILTER"));
}

VIP_VI_STATE tv_state(VIP_VI_HANDLE vi)
{
	VIP_VI_STATE s;
	assert_int_equal(VipQueryVi(vi, &s, NULL, NULL, NULL), VIP_SUCCESS);
	return s;
}

void tv_open(struct tv *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(VipOpenNic(i ? "softrnic1" : "softrnic0", &t->nic[i]), VIP_SUCCESS);
		assert_int_equal(VipQueryNic(t->nic[i], &t->attr[i]), VIP_SUCCESS);
		assert_int_equal(VipCreatePtag(t->nic[i], &t->ptag[i]), VIP_SUCCESS);
		t->arena[i] = aligned_alloc(4096, TV_ARENA);
		assert_non_null(t->arena[i]);
		memset(t->arena[i], 0, TV_ARENA);
		VIP_MEM_ATTRIBUTES ma = { t->ptag[i], VIP_TRUE, VIP_TRUE };
		assert_int_equal(VipRegisterMem(t->nic[i], t->arena[i], TV_ARENA, &ma, &t->mh[i]),
				 VIP_SUCCESS);
	}
}

void tv_close(struct tv *t)
{
	for (int i = 0; i < 2; i++) {
		if (t->nic[i] != NULL)
			assert_int_equal(VipCloseNic(t->nic[i]), VIP_SUCCESS);
		free(t->arena[i]);
	}
	memset(t, 0, sizeof(*t));
}

void *tv_alloc(struct tv *t, int side, size_t n)
{
	size_t at = (t->used[side] + 63) & ~(size_t)63;
	assert_true(at + n <= TV_ARENA);
	t->used[side] = at + n;
	return t->arena[side] + at;
}

VIP_DESCRIPTOR *tv_desc(struct tv *t, int side, unsigned segs)
{
	size_t n = sizeof(VIP_CONTROL_SEGMENT) + (segs ? segs : 1) * sizeof(VIP_DESCRIPTOR_SEGMENT);
	VIP_DESCRIPTOR *d = tv_alloc(t, side, n < sizeof(VIP_DESCRIPTOR) ? sizeof(VIP_DESCRIPTOR) : n);
	memset(d, 0, n);
	return d;
}

void tv_addr(struct tv *t, int side, const char *disc, struct tv_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->a.HostAddressLen = t->attr[side].NicAddressLen;
	out->a.DiscriminatorLen = (VIP_UINT16)strlen(disc);
	uint8_t *p = (uint8_t *)out + offsetof(VIP_NET_ADDRESS, HostAddress);
	memcpy(p, t->attr[side].LocalNicAddress, out->a.HostAddressLen);
	memcpy(p + out->a.HostAddressLen, disc, strlen(disc));
}

VIP_VI_HANDLE tv_vi(struct tv *t, int side, VIP_RELIABILITY_LEVEL rel, VIP_CQ_HANDLE scq,
		    VIP_CQ_HANDLE rcq)
{
	VIP_VI_ATTRIBUTES a = { .ReliabilityLevel = rel, .MaxTransferSize = 65536, .QoS = NULL,
				.Ptag = t->ptag[side], .EnableRdmaWrite = VIP_TRUE,
				.EnableRdmaRead = rel != VIP_SERVICE_UNRELIABLE };
	VIP_VI_HANDLE vi = NULL;
	assert_int_equal(VipCreateVi(t->nic[side], &a, scq, rcq, &vi), VIP_SUCCESS);
	return vi;
}

struct client {
	VIP_VI_HANDLE vi;
	struct tv_addr local, remote;
	VIP_RETURN rc;
	VIP_VI_ATTRIBUTES ra;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	c->rc = VipConnectRequest(c->vi, &c->local.a, &c->remote.a, 5000, &c->ra);
	return NULL;
}

void tv_connect(struct tv *t, VIP_VI_HANDLE a, VIP_VI_HANDLE b, const char *da, const char *db)
{
	struct client c = { .vi = a };
	pthread_t th;
	struct tv_addr local, remote;
	VIP_VI_ATTRIBUTES ra;
	VIP_CONN_HANDLE ch;

	tv_addr(t, 0, da, &c.local);
	tv_addr(t, 1, db, &c.remote);
	tv_addr(t, 1, db, &local);
	assert_int_equal(pthread_create(&th, NULL, client_main, &c), 0);
	VIP_RETURN rc = VipConnectWait(t->nic[1], &local.a, 5000, &remote.a, &ra, &ch);
	if (rc != VIP_SUCCESS) {
		pthread_join(th, NULL);
		print_error("ConnectWait %d, ConnectRequest %d\n", (int)rc, (int)c.rc);
	}
	assert_int_equal(rc, VIP_SUCCESS);
	assert_int_equal(VipConnectAccept(ch, b), VIP_SUCCESS);
	pthread_join(th, NULL);
	assert_int_equal(c.rc, VIP_SUCCESS);
}
