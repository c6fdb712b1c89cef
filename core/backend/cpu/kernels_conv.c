/* CPU kernels of CONV2D, CONV2D_BWD_DATA, CONV2D_BWD_WEIGHT and
 * CONV_TRANSPOSE2D (contracts in graph/ops.h).
 *
 * Two implementations sit behind them: oneDNN convolution primitives
 * (conv_onednn.c) and im2col + OpenBLAS sgemm (conv_im2col.c).
 * DEFAULT: oneDNN. On bench_conv (every YOLOv8n conv at imgsz 320, batch 8,
 * 2 threads, forward + both backward passes) it beat im2col on every 3x3
 * shape by 2-4x and on the model as a whole by ~2.9x (367 vs 1053 ms per
 * step, on a machine at load ~9, under nice -15): its direct kernels work
 * on blocked layouts in cache-sized tiles, while im2col writes and re-reads
 * a K x N matrix 9x the input per 3x3 conv and then leaves GEMM-shaped work
 * to a library whose idle threads compete with our pool. Two more reasons:
 * OpenBLAS 0.3.21 does not know this CPU (model 207) and falls back to SSE3
 * kernels unless OPENBLAS_CORETYPE is set before it loads, while oneDNN
 * picks AVX-512 from the CPU's feature bits; and oneDNN, run per batch slice
 * on our pool (see conv_onednn.c), stays fast on a busy machine.
 * YOLO_CONV_IMPL=onednn|im2col overrides the choice (read once). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/conv_common.h"

static yolo_conv_impl forced_impl = YOLO_CONV_IMPL_DEFAULT;
static yolo_conv_impl env_impl = YOLO_CONV_IMPL_DEFAULT;
static bool env_chose; /* YOLO_CONV_IMPL named an implementation */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* The default where YOLO_CONV_IMPL does not choose. On aarch64: im2col +
 * OpenBLAS. oneDNN 2.6 (Debian 12's) has JIT convolution kernels on aarch64
 * only for SVE, and needs the Arm Compute Library for anything else; Debian
 * builds it without ACL, so on NEON-only CPUs (most of them: Cortex-A72/A76,
 * Apple, Ampere Altra, Graviton 2) its convolutions are reference C loops,
 * while OpenBLAS has NEON sgemm kernels for every ARMv8 core it knows. The
 * measurements above were on x86-64 and say nothing about ARM; this choice
 * is by design, not measured (qemu-user timings mean nothing). */
#if defined(__aarch64__)
#define CONV_IMPL_PLATFORM_DEFAULT YOLO_CONV_IMPL_IM2COL
#else
#define CONV_IMPL_PLATFORM_DEFAULT YOLO_CONV_IMPL_ONEDNN
#endif

static void read_env(void) {
    const char *v = getenv("YOLO_CONV_IMPL");
    env_chose = v && (strcmp(v, "im2col") == 0 || strcmp(v, "onednn") == 0);
    if (!env_chose)
        env_impl = CONV_IMPL_PLATFORM_DEFAULT; /* unknown values fall back to it */
    else
        env_impl = strcmp(v, "im2col") == 0 ? YOLO_CONV_IMPL_IM2COL : YOLO_CONV_IMPL_ONEDNN;
}

bool yolo_conv_impl_from_env(void) {
    pthread_once(&env_once, read_env);
    return env_chose;
}

yolo_conv_impl yolo_conv_current_impl(void) {
    if (forced_impl != YOLO_CONV_IMPL_DEFAULT) return forced_impl;
    pthread_once(&env_once, read_env);
    return env_impl;
}

yolo_conv_impl yolo_conv_set_impl(yolo_conv_impl impl) {
    forced_impl = impl;
    return yolo_conv_current_impl();
}

const char *yolo_conv_impl_name(yolo_conv_impl impl) {
    switch (impl) {
    case YOLO_CONV_IMPL_ONEDNN: return "onednn";
    case YOLO_CONV_IMPL_IM2COL: return "im2col";
    default: return "default";
    }
}

void yolo_conv_release_caches(void) {
    yolo_conv_onednn_release();
    yolo_conv_im2col_release();
}

yolo_status yolo_conv_run(yolo_cpu_context *ctx, yolo_conv_pass pass, const yolo_conv_geom *g, const void *a,
                          const float *b, const float *bias, void *out) {
    const bool bf16_io = g->x_bf16 || (pass == YOLO_CONV_FWD && g->y_bf16);
    if (g->n == 0 || g->c == 0 || g->o == 0) { /* empty: nothing to sum (oneDNN rejects zero dims) */
        if (bf16_io)
            return yolo_error(YOLO_ERR_SHAPE, "conv2d: an empty convolution has no bf16 path (x or y is bf16)");
        int64_t count = pass == YOLO_CONV_FWD ? g->n * g->o * g->ho * g->wo
                        : pass == YOLO_CONV_BWD_DATA ? g->n * g->c * g->h * g->w
                                                     : g->o * (g->c / g->groups) * g->kh * g->kw;
        if (count > 0) memset(out, 0, (size_t)count * sizeof(float));
        if (pass == YOLO_CONV_FWD && bias && count > 0) yolo_conv_add_bias(ctx, out, bias, g->n, g->o, g->ho * g->wo);
        return YOLO_OK;
    }
    /* Blocked values (graph/blocked.c) exist only where the graph was planned
     * for oneDNN; they stay oneDNN's even if the choice changed since. */
    if (yolo_conv_current_impl() == YOLO_CONV_IMPL_IM2COL && !g->x_block && !g->y_block) {
        if (bf16_io)
            return yolo_error(YOLO_ERR_BACKEND, "conv2d: x or y is stored as bf16 (amp), which only the oneDNN "
                                                "convolutions read; YOLO_CONV_IMPL=im2col cannot run it");
        /* OpenBLAS's threads run its GEMMs: our workers must not spin on their cores */
        const bool warm = ctx && yolo_thread_pool_warm(ctx->pool);
        if (warm) yolo_thread_pool_set_warm(ctx->pool, false);
        yolo_status st = yolo_conv_im2col(ctx, pass, g, a, b, bias, out);
        if (warm) yolo_thread_pool_set_warm(ctx->pool, true);
        return st;
    }
    return yolo_conv_onednn(ctx, pass, g, a, b, bias, out);
}

typedef struct bias_job {
    float *y;
    const float *bias;
    int64_t o, plane;
} bias_job;

static void bias_range(void *arg, int64_t begin, int64_t end) {
    const bias_job *j = arg;
    for (int64_t i = begin; i < end; i++) {
        float b = j->bias[i % j->o];
        float *y = j->y + i * j->plane;
        for (int64_t p = 0; p < j->plane; p++) y[p] += b;
    }
}

void yolo_conv_add_bias(yolo_cpu_context *ctx, float *y, const float *bias, int64_t n, int64_t o, int64_t plane) {
    bias_job j = {y, bias, o, plane};
    yolo_cpu_run_split(ctx, n * o, bias_range, &j);
}

/* ---- geometry from a node, checked (the builder checks too, but a wrong
 * graph must give an error, not a wild write) ---- */

static yolo_status shape_error(const yolo_tensor *out, const char *why) {
    char s[4][64] = {{0}};
    for (int i = 0; i < out->node->n_src && i < 3; i++) yolo_tensor_shape_str(out->node->src[i], s[i], sizeof s[i]);
    yolo_tensor_shape_str(out, s[3], sizeof s[3]);
    return yolo_error(YOLO_ERR_SHAPE,
                      "%s '%s': %s (src %s, %s%s%s -> out %s; stride %dx%d pad %dx%d dilation %dx%d groups %d)",
                      yolo_op_name(out->node->op), out->name, why, s[0], s[1], out->node->n_src > 2 ? ", " : "", s[2], s[3],
                      out->node->iparams[0], out->node->iparams[1], out->node->iparams[2], out->node->iparams[3], out->node->iparams[4],
                      out->node->iparams[5], out->node->iparams[6]);
}

static int64_t conv_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
    return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

/* Whether x is the model's input image: a graph input, or a CAST of one
 * (the u8 pixels scaled to [0,1]). */
static bool reads_image(const yolo_tensor *x) {
    if (x->kind == YOLO_TENSOR_NODE && x->node->op == YOLO_OP_CAST && x->node->n_src == 1) x = x->node->src[0];
    return x->kind == YOLO_TENSOR_INPUT;
}

/* x: conv input [N,C,H,W]; y: conv output [N,O,Ho,Wo]; w: [O,C/g,kh,kw]. */
static yolo_status geom_from(const yolo_tensor *out, const yolo_tensor *x, const yolo_tensor *w,
                             const yolo_tensor *y, yolo_conv_geom *g) {
    const int32_t *ip = out->node->iparams;
    g->sh = ip[0], g->sw = ip[1], g->ph = ip[2], g->pw = ip[3], g->dh = ip[4], g->dw = ip[5], g->groups = ip[6];
    if (x->ndim != 4 || w->ndim != 4 || y->ndim != 4) return shape_error(out, "tensors must be 4-D");
    /* x of the forward and backward-weight passes may be amp's bf16 activation */
    const int op = out->node->op;
    g->x_bf16 = (op == YOLO_OP_CONV2D || op == YOLO_OP_CONV2D_BWD_WEIGHT) && x->dtype == YOLO_BF16;
    for (int i = 0; i < out->node->n_src; i++)
        if (out->node->src[i]->dtype != YOLO_F32 && !(i == 0 && g->x_bf16))
            return shape_error(out, "tensors must be f32 (x may be bf16)");
    g->y_bf16 = op == YOLO_OP_CONV2D && out->dtype == YOLO_BF16; /* amp's narrowed conv output */
    g->x_image = (op == YOLO_OP_CONV2D || op == YOLO_OP_CONV2D_BWD_WEIGHT) && reads_image(x);
    g->x_block = x->node->block, g->y_block = y->node->block;
    if (out->dtype != YOLO_F32 && !g->y_bf16) return shape_error(out, "tensors must be f32 (y may be bf16)");
    if (g->sh < 1 || g->sw < 1 || g->ph < 0 || g->pw < 0 || g->dh < 1 || g->dw < 1 || g->groups < 1)
        return shape_error(out, "bad stride/pad/dilation/groups");
    g->n = x->shape[0], g->c = x->shape[1], g->h = x->shape[2], g->w = x->shape[3];
    g->o = y->shape[1], g->ho = y->shape[2], g->wo = y->shape[3];
    g->kh = w->shape[2], g->kw = w->shape[3];
    if (y->shape[0] != g->n) return shape_error(out, "batch sizes differ");
    if (g->c % g->groups || g->o % g->groups) return shape_error(out, "channels not divisible by groups");
    if (w->shape[0] != g->o || w->shape[1] != g->c / g->groups) return shape_error(out, "weight shape");
    if (g->kh < 1 || g->kw < 1 || g->ho < 1 || g->wo < 1 ||
        g->ho != conv_out_size(g->h, g->kh, g->sh, g->ph, g->dh) ||
        g->wo != conv_out_size(g->w, g->kw, g->sw, g->pw, g->dw))
        return shape_error(out, "output size does not follow from input, kernel, stride, pad and dilation");
    return YOLO_OK;
}

static yolo_status bias_check(const yolo_tensor *out, int64_t channels) {
    if (out->node->n_src < 3 || !out->node->src[2]) return YOLO_OK;
    const yolo_tensor *b = out->node->src[2];
    if (b->dtype != YOLO_F32 || yolo_tensor_numel(b) != channels) return shape_error(out, "bias must be f32 [O]");
    return YOLO_OK;
}

static const float *bias_of(const yolo_tensor *out) {
    return out->node->n_src > 2 && out->node->src[2] ? yolo_cpu_f32(out->node->src[2]) : NULL;
}

static yolo_status kernel_conv2d(yolo_cpu_context *ctx, yolo_tensor *out) {
    if (out->node->n_src < 2) return shape_error(out, "needs x and w");
    yolo_conv_geom g;
    yolo_status st = geom_from(out, out->node->src[0], out->node->src[1], out, &g);
    if (st == YOLO_OK) st = bias_check(out, g.o);
    if (st != YOLO_OK) return st;
    return yolo_conv_run(ctx, YOLO_CONV_FWD, &g, yolo_cpu_data(out->node->src[0]), yolo_cpu_f32(out->node->src[1]),
                         bias_of(out), yolo_cpu_data(out));
}

static yolo_status kernel_conv2d_bwd_data(yolo_cpu_context *ctx, yolo_tensor *out) {
    if (out->node->n_src < 2) return shape_error(out, "needs dy and w");
    yolo_conv_geom g;
    yolo_status st = geom_from(out, out, out->node->src[1], out->node->src[0], &g);
    if (st != YOLO_OK) return st;
    return yolo_conv_run(ctx, YOLO_CONV_BWD_DATA, &g, yolo_cpu_f32(out->node->src[0]), yolo_cpu_f32(out->node->src[1]), NULL,
                         yolo_cpu_f32(out));
}

static yolo_status kernel_conv2d_bwd_weight(yolo_cpu_context *ctx, yolo_tensor *out) {
    if (out->node->n_src < 2) return shape_error(out, "needs x and dy");
    yolo_conv_geom g;
    yolo_status st = geom_from(out, out->node->src[0], out, out->node->src[1], &g);
    if (st != YOLO_OK) return st;
    return yolo_conv_run(ctx, YOLO_CONV_BWD_WEIGHT, &g, yolo_cpu_data(out->node->src[0]), yolo_cpu_f32(out->node->src[1]), NULL,
                         yolo_cpu_f32(out));
}

/* The transposed conv is the data gradient of the conv whose input is `out`
 * and whose output is x: x plays dy, w [C,O/g,kh,kw] is that conv's weight. */
static yolo_status kernel_conv_transpose2d(yolo_cpu_context *ctx, yolo_tensor *out) {
    if (out->node->n_src < 2) return shape_error(out, "needs x and w");
    yolo_conv_geom g;
    yolo_status st = geom_from(out, out, out->node->src[1], out->node->src[0], &g);
    if (st == YOLO_OK) st = bias_check(out, g.c);
    if (st != YOLO_OK) return st;
    float *y = yolo_cpu_f32(out);
    st = yolo_conv_run(ctx, YOLO_CONV_BWD_DATA, &g, yolo_cpu_f32(out->node->src[0]), yolo_cpu_f32(out->node->src[1]), NULL, y);
    const float *bias = bias_of(out);
    if (st == YOLO_OK && bias) yolo_conv_add_bias(ctx, y, bias, g.n, g.c, g.h * g.w);
    return st;
}

yolo_cpu_kernel yolo_cpu_conv_kernel(int op) {
    switch (op) {
    case YOLO_OP_CONV2D: return kernel_conv2d;
    case YOLO_OP_CONV2D_BWD_DATA: return kernel_conv2d_bwd_data;
    case YOLO_OP_CONV2D_BWD_WEIGHT: return kernel_conv2d_bwd_weight;
    case YOLO_OP_CONV_TRANSPOSE2D: return kernel_conv_transpose2d;
    default: return NULL;
    }
}
