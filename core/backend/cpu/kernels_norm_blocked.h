/* Batch norm's fused ops on channel-blocked values, [N][C/B][H][W][B]
 * (graph/blocked.c): the kernels of BN_STATS, BN_SILU and BN_BWD call these
 * when their x is blocked (node->block: B, 8 or 16); x may be f32 or bf16. */
#ifndef YOLO_CPU_KERNELS_NORM_BLOCKED_H
#define YOLO_CPU_KERNELS_NORM_BLOCKED_H

#include "backend/cpu/cpu_backend.h"

/* Per-channel mean and biased variance of x into mean[C] and var[C]. */
yolo_status yolo_cpu_bn_stats_blocked(yolo_cpu_context *ctx, const yolo_tensor *x, float *mean, float *var);

/* out = SiLU((x - mean) * gamma / sqrtf(var + eps) + beta), out f32 or bf16, blocked like x. */
void yolo_cpu_bn_silu_blocked(yolo_cpu_context *ctx, const yolo_tensor *x, const float *mean, const float *var,
                              const float *gamma, const float *beta, float eps, yolo_tensor *out);

/* BN_BWD into out ([numel(x) + 4C]: dx blocked like x, then the rows dgamma,
 * dbeta, dmean, dvar). With silu_folded, dy is SiLU's output gradient and
 * beta is read (graph/ops.h). */
yolo_status yolo_cpu_bn_bwd_blocked(yolo_cpu_context *ctx, const yolo_tensor *x, const float *mean, const float *var,
                                    const float *gamma, const float *beta, const float *dy, bool silu_folded,
                                    float eps, float *out);

#endif
