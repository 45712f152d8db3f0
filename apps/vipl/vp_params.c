/* vp_params: the test's parameters go from the client to the server once connected, as
 * perftest's do, so a server started with only -s runs whatever test its client asks for:
 * iterations (-n), size (-S), all sizes (-a) and verification (-v). The reliability level
 * comes with the connection request (vp_connect). The server posts the receive for them
 * before its other receives, so it takes the first message. Network order on the wire:
 *   0 magic "VPP1"  4 iterations  8 size  12 flags (bit 0 -a, bit 1 -v) */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "vp.h"

#define VP_PARAMS_MAGIC 0x56505031u
#define VP_PARAMS_LEN 16
#define VP_F_ALL 1u
#define VP_F_VERIFY 2u

int vp_params_post(struct vp *v)
{
	if (!v->o.server)
		return 0;
	v->pbuf = vp_alloc(v, 64);
	v->pd = v->pbuf ? vp_desc(v, v->pbuf, 64) : NULL;
	if (!v->pd)
		return fprintf(stderr, "registered buffer too small\n"), -1;
	return vp_post_recv(v, v->pd);
}

static int params_send(struct vp *v)
{
	uint8_t *buf = vp_alloc(v, 64);
	VIP_DESCRIPTOR *d = buf ? vp_desc(v, buf, VP_PARAMS_LEN) : NULL;
	if (!d)
		return fprintf(stderr, "registered buffer too small\n"), -1;
	uint32_t w[4] = { htonl(VP_PARAMS_MAGIC), htonl((uint32_t)v->o.iters), htonl(v->o.size),
			  htonl((v->o.all_sizes ? VP_F_ALL : 0) | (v->o.verify ? VP_F_VERIFY : 0)) };
	memcpy(buf, w, sizeof w);
	if (vp_post_send(v, d, VP_PARAMS_LEN) || !vp_wait_send(v))
		return -1;
	return 0;
}

static int params_take(struct vp *v)
{
	VIP_DESCRIPTOR *d = vp_wait_recv(v);
	uint32_t w[4];
	if (!d)
		return -1;
	memcpy(w, v->pbuf, sizeof w);
	if (d != v->pd || d->CS.Length != VP_PARAMS_LEN || ntohl(w[0]) != VP_PARAMS_MAGIC ||
	    ntohl(w[1]) == 0)
		return fprintf(stderr, "server: the client sent no test parameters\n"), -1;
	v->o.iters = ntohl(w[1]);
	v->o.size = ntohl(w[2]);
	v->o.all_sizes = (ntohl(w[3]) & VP_F_ALL) != 0;
	v->o.verify = (ntohl(w[3]) & VP_F_VERIFY) != 0;
	if (v->o.size > VP_MAX_MSG)
		return fprintf(stderr, "server: client asked for %u bytes\n", v->o.size), -1;
	return 0;
}

int vp_params_exchange(struct vp *v)
{
	return v->o.server ? params_take(v) : params_send(v);
}
