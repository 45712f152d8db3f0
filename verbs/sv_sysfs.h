/* libibverbs' sysfs helpers (sv_sysfs.c): exported in IBVERBS_1.0 but declared only in
 * rdma-core's driver.h, which libibverbs-dev does not install. */
#ifndef SV_V_SYSFS_H
#define SV_V_SYSFS_H

#include <stddef.h>

const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

#endif
