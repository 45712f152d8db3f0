/* Exported libibverbs calls declared only in rdma-core's driver.h (not installed by
 * libibverbs-dev): the fork range helpers of sv_compat.c. */
#ifndef SV_V_COMPAT_H
#define SV_V_COMPAT_H

#include <stddef.h>

int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

#endif
