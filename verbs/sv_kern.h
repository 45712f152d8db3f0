/* libibverbs' kernel-structure converters (sv_kern.c), declared in rdma-core's marshall.h,
 * which libibverbs-dev does not install. */
#ifndef SV_V_KERN_H
#define SV_V_KERN_H

struct ibv_ah_attr;
struct ibv_qp_attr;
struct ibv_sa_path_rec;
struct ib_uverbs_ah_attr;
struct ib_uverbs_qp_attr;
struct ib_user_path_rec;

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);

#endif
