/* The device behind a verbs context (v_dev.c): the RNIC's STag table, async event queue and
 * progress engine, and its limits. Private to verbs/. */
#ifndef SV_VERBS_DEV_H
#define SV_VERBS_DEV_H

#include "verbs_int.h"

#define SV_FW_VER "0.1.0"

/* Open the device for a context (a shared rn_device_open): fills c->dev and c->mem. 0 or an
 * errno value. */
int sv_dev_open(struct sv_context *c) SV_HIDDEN;
/* Close it: rn_device_close destroys whatever the application left open. */
void sv_dev_close(struct sv_context *c) SV_HIDDEN;
/* The device's attributes as ibv_device_attr (limits, vendor ids, capability flags). */
void sv_dev_limits(struct rn_device *d, struct ibv_device_attr *a) SV_HIDDEN;

#endif
