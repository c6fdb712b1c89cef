/* Convolution on the CPU: the geometry shared by the kernels (kernels_conv.c)
 * and the two implementations behind them, oneDNN primitives (conv_onednn.c)
 * and im2col + OpenBLAS sgemm (conv_im2col.c). */
#ifndef YOLO_CONV_COMMON_H
#define YOLO_CONV_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/cpu/cpu_backend.h"

/* One convolution seen as the forward conv2d x[n,c,h,w] * w[o,c/g,kh,kw] ->
 * y[n,o,ho,wo]; the backward passes and the transposed conv reuse it. */
typedef struct yolo_conv_geom {
    int64_t n, c, h, w;
    int64_t o, ho, wo;
    int64_t kh, kw;
    int64_t sh, sw, ph, pw, dh, dw, groups;
    bool x_bf16; /* x (a of FWD and BWD_WEIGHT) is stored as bf16 (amp's activations; oneDNN only) */
    bool y_bf16; /* y (out of FWD) is stored as bf16 (amp's conv outputs; oneDNN only) */
    bool x_image; /* x is the model's input image (a graph input, or a CAST of one): fp32 under amp */
    int x_block; /* 0, or x (dx: BWD_DATA's out) is stored channel-blocked by this many, nChw16c / nChw8c
                  * (graph/blocked.c; oneDNN only) */
    int y_block; /* the same for y (dy: the backward passes' input) */
} yolo_conv_geom;

typedef enum yolo_conv_pass {
    YOLO_CONV_FWD,        /* a = x, b = w, bias (may be NULL) -> out = y */
    YOLO_CONV_BWD_DATA,   /* a = dy, b = w -> out = dx */
    YOLO_CONV_BWD_WEIGHT, /* a = x, b = dy -> out = dw */
} yolo_conv_pass;

typedef enum yolo_conv_impl {
    YOLO_CONV_IMPL_DEFAULT = 0, /* YOLO_CONV_IMPL env var, else the measured winner */
    YOLO_CONV_IMPL_ONEDNN,
    YOLO_CONV_IMPL_IM2COL,
} yolo_conv_impl;

/* Both overwrite `out` (contiguous NCHW / OIHW f32). Deterministic for a
 * given ctx->threads. Thread-safe (each holds a lock while it runs). `a` and
 * `out` are f32 but for x or y stored as bf16 (g->x_bf16, g->y_bf16), which
 * only oneDNN runs. */
yolo_status yolo_conv_onednn(yolo_cpu_context *ctx, yolo_conv_pass pass, const yolo_conv_geom *g,
                             const void *a, const float *b, const float *bias, void *out);
yolo_status yolo_conv_im2col(yolo_cpu_context *ctx, yolo_conv_pass pass, const yolo_conv_geom *g,
                             const void *a, const float *b, const float *bias, void *out);

/* Whether oneDNN runs bf16 convolutions on this CPU (AVX512-BF16 or AMX);
 * `why` (may be NULL) gets the ISA it found. ctx->bf16 asks for them. */
bool yolo_conv_onednn_bf16_available(char *why, size_t size);

/* The channel block of oneDNN's direct convolutions on the ISA that runs
 * (16 on AVX-512, 8 on AVX2), the layout of the graph's blocked values
 * (graph/blocked.c); 0 where they have none (another ISA).
 * YOLO_BLOCKED_ACTIVATIONS (read once) overrides it for A/B runs: "off"
 * (plain storage), "8" or "16" (that block: correct on any ISA, oneDNN
 * then converting where its kernels want another). */
int yolo_conv_onednn_channel_block(void);
/* The same override for graphs planned from now on (tests): 0, 8, 16, or
 * -1 for the ISA's block. */
void yolo_conv_onednn_set_channel_block(int block);

/* Tests: whether batch slices share one conversion of the weights
 * (conv_onednn.c, plan_weight_parts; YOLO_WEIGHT_PARTS=off disables it),
 * and how many shared conversions have run. Changing it drops the cached
 * primitives. */
void yolo_conv_onednn_allow_weight_parts(bool allow);
uint64_t yolo_conv_onednn_shared_weight_conversions(void);

/* Marks the start (true) and end (false) of a graph run. Only inside one
 * does the backward-weight pass take the bf16 dy that the backward-data
 * pass before it left; both ends forget it, so a copy never outlives the
 * run (and the memory plan) it was made under. */
void yolo_conv_onednn_in_graph(bool inside);

/* Frees the cached primitives and workspaces (they are rebuilt on demand). */
void yolo_conv_onednn_release(void);
void yolo_conv_im2col_release(void);

/* Process-wide choice for tests and the bench; IMPL_DEFAULT restores the
 * env-var/default rule. Returns the implementation now in effect. */
yolo_conv_impl yolo_conv_set_impl(yolo_conv_impl impl);
yolo_conv_impl yolo_conv_current_impl(void);
/* Whether YOLO_CONV_IMPL named the implementation (else the platform's default). */
bool yolo_conv_impl_from_env(void);
const char *yolo_conv_impl_name(yolo_conv_impl impl);
/* Frees both implementations' caches. */
void yolo_conv_release_caches(void);

/* Runs one pass on the current implementation (what the kernels call). */
yolo_status yolo_conv_run(yolo_cpu_context *ctx, yolo_conv_pass pass, const yolo_conv_geom *g,
                          const void *a, const float *b, const float *bias, void *out);

/* y[n,o,:] += bias[o] over the pool. */
void yolo_conv_add_bias(yolo_cpu_context *ctx, float *y, const float *bias, int64_t n, int64_t o, int64_t plane);

#endif
