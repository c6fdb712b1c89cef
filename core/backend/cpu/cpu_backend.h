/* CPU backend internals shared by its kernels. */
#ifndef YOLO_CPU_BACKEND_H
#define YOLO_CPU_BACKEND_H

#include "backend/backend.h"
#include "backend/cpu/thread_pool.h"
#include "graph/ops.h"

struct yolo_buffer {
    void *data;
    size_t size;
};

typedef struct yolo_cpu_context {
    yolo_thread_pool *pool;
    int threads;
    bool bf16; /* amp: convolutions and matmuls read bf16 copies of their inputs (fp32 out) */
} yolo_cpu_context;

/* Host pointer to a tensor's storage on the CPU backend. */
static inline void *yolo_cpu_data(const yolo_tensor *t) {
    return (char *)t->buffer->data + t->offset;
}
static inline float *yolo_cpu_f32(const yolo_tensor *t) { return (float *)yolo_cpu_data(t); }

/* Below this many elements of work a kernel runs on the calling thread:
 * waking the pool would cost more than the work. */
#define YOLO_CPU_PARALLEL_MIN_ELEMENTS 32768

/* fn over [0, n), split over the pool when `work` (elements touched) is
 * large enough; each index runs exactly once, in one thread. */
static inline void yolo_cpu_run_ranges(yolo_cpu_context *ctx, int64_t n, int64_t work, yolo_range_fn fn, void *arg) {
    if (n <= 0) return;
    if (!ctx || !ctx->pool || work < YOLO_CPU_PARALLEL_MIN_ELEMENTS)
        fn(arg, 0, n);
    else
        yolo_parallel_for(ctx->pool, n, fn, arg);
}

/* The same for element-wise kernels, whose n elements are their work. */
static inline void yolo_cpu_run_elements(yolo_cpu_context *ctx, int64_t n, yolo_range_fn fn, void *arg) {
    yolo_cpu_run_ranges(ctx, n, n, fn, arg);
}

/* fn over [0, n) split over the pool whenever n > 1, for indices that are
 * each known to be large (convolution slices, matmul slots); inline
 * without a pool. */
static inline void yolo_cpu_run_split(yolo_cpu_context *ctx, int64_t n, yolo_range_fn fn, void *arg) {
    if (n <= 0) return;
    if (ctx && ctx->pool && n > 1)
        yolo_parallel_for(ctx->pool, n, fn, arg);
    else
        fn(arg, 0, n);
}

/* A kernel computes `out` (a node) from out->node->src[...] (graph/node.h); see graph/ops.h. */
typedef yolo_status (*yolo_cpu_kernel)(yolo_cpu_context *ctx, yolo_tensor *out);

/* Kernel table, indexed by yolo_op; NULL where an op needs no kernel. Each
 * kernels_*.c file provides its ops through yolo_cpu_kernel_for. */
yolo_cpu_kernel yolo_cpu_kernel_for(int op);

/* Per-file lookups, chained by yolo_cpu_kernel_for (return NULL if not theirs). */
yolo_cpu_kernel yolo_cpu_conv_kernel(int op);
yolo_cpu_kernel yolo_cpu_elementwise_kernel(int op);
yolo_cpu_kernel yolo_cpu_norm_kernel(int op);
yolo_cpu_kernel yolo_cpu_shape_kernel(int op);
yolo_cpu_kernel yolo_cpu_spatial_kernel(int op);
yolo_cpu_kernel yolo_cpu_linalg_kernel(int op);
yolo_cpu_kernel yolo_cpu_optim_kernel(int op);
yolo_cpu_kernel yolo_cpu_collective_kernel(int op);

/* BN_SILU_BWD over one plane of s elements (kernels_elementwise.c): dz =
 * SILU_BWD(z, dy), z = (x[at + i] - mean) * k + b, x f32 or bf16. Also run
 * by BN_BWD with SiLU folded in (kernels_norm.c), so both give dz's bits. */
void yolo_cpu_bn_silu_bwd_plane(const void *x, bool x_bf16, int64_t at, const float *dy, float *dz, int64_t s,
                                float mean, float k, float b);

/* Prints per-op times collected while YOLO_PROFILE was set (or since
 * yolo_cpu_profile_enable: the profile key). */
#include <stdio.h>
void yolo_cpu_profile_report(FILE *out);
void yolo_cpu_profile_enable(void);

#endif
