/* MATMUL (2-D or batched) and the convolutions as implicit GEMMs on the shared-memory tiled
 * kernel (shaders/gemm_core.glsl): conv_fwd.comp (CONV2D), conv_bwd_data.comp
 * (CONV2D_BWD_DATA, CONV_TRANSPOSE2D), conv_bwd_weight.comp.
 *
 * K is split into slices when one invocation would loop past the device's
 * budget (lavapipe) or when there are too few output tiles to fill the
 * device: slices write partial sums to scratch memory and a reduce pass adds
 * them (in passes, accumulating, when the scratch would be too large).
 *
 * amp=True (ctx->amp16): A's and B's bound ranges are first copied to fp16
 * (cast16, round to nearest even) in reused scratch, and the <shader>_f16
 * variant reads them, widening each to fp32: products and sums are fp32,
 * the output fp32. Weights are converted where they are used (each conv
 * call), activations per call too, except amp's f16 activations
 * (core/graph/narrow.c): an f16 x of CONV2D or CONV2D_BWD_WEIGHT is bound
 * as it is, the same bits its cast16 copy would hold.
 *
 * With cooperative matrices (ctx->coop, YOLO_VK_COOPMAT) amp's GEMMs with
 * at least 32 rows and 64 columns run <shader>_coop (or _coopemu, the
 * emulated test mode) instead: gemm_coop.glsl's fixed 64 x 64 blocks, BK 32,
 * the same push constants, split K and epilogue. */
#include <stdio.h>
#include <string.h>

#include "backend/vulkan/vk_ops.h"

typedef struct gemm_job {
    const char *shader;
    const yolo_tensor *a, *b, *c, *bias;
    int64_t a_first, a_count, b_first, b_count, c_first; /* elements bound */
    int64_t m, n, k, batches, groups;
    uint32_t extra[12]; /* PU(9)... */
    int n_extra;
    bool accumulate; /* add into c */
    /* amp: where the _f16 kernel reads a's and b's bound ranges (an fp16
     * copy in scratch, or an f16 tensor itself); a16 NULL: the fp32 kernel */
    const yolo_buffer *a16, *b16;
    VkDeviceSize a16_off, b16_off;
    const char *variant; /* the kernel's suffix: "" (fp32), "_f16", "_coop", "_coopemu" */
} gemm_job;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Loop iterations one invocation runs per BK step of K (loads, the
 * register block), counted generously as lavapipe counts them. */
static int64_t iterations_per_step(const yolo_vk_gemm_tiles *t) {
    const int64_t nt = t->wgx * t->wgy, bm = t->wgy * t->tm, bn = t->wgx * t->tn;
    return ceil_div(bm * t->bk, nt) + ceil_div(t->bk * bn, nt) + t->bk * (t->tm + t->tn + t->tm * t->tn) + 4;
}

static yolo_status dispatch_gemm(yolo_vk_recorder *r, const gemm_job *j, const yolo_vk_gemm_tiles *t,
                                 const yolo_buffer *c_buf, VkDeviceSize c_off, VkDeviceSize c_bytes, int64_t k_begin,
                                 int64_t k_len, int64_t slices, bool accumulate, bool bias) {
    yolo_vk_dispatch d;
    char shader[48];
    snprintf(shader, sizeof shader, "%s%s", j->shader, j->variant);
    yolo_vk_dispatch_init(&d, shader);
    if (t != &r->ctx->gemm_coop) { /* gemm_coop.glsl's sizes are fixed */
        const uint32_t spec[5] = {t->wgx, t->wgy, t->tm, t->tn, t->bk};
        memcpy(d.spec, spec, sizeof spec);
        d.n_spec = 5;
    }
    yolo_status st;
    if (j->a16) {
        st = yolo_vk_bind(r, &d, 0, j->a16, j->a16_off, (VkDeviceSize)j->a_count * 2, false, 2);
        if (st == YOLO_OK) st = yolo_vk_bind(r, &d, 1, j->b16, j->b16_off, (VkDeviceSize)j->b_count * 2, false, 2);
    } else {
        st = yolo_vk_bind_tensor(r, &d, 0, j->a, j->a_first, j->a_count, false, 4);
        if (st == YOLO_OK) st = yolo_vk_bind_tensor(r, &d, 1, j->b, j->b_first, j->b_count, false, 4);
    }
    if (st == YOLO_OK) st = yolo_vk_bind(r, &d, 2, c_buf, c_off, c_bytes, true, 4);
    if (st == YOLO_OK && j->bias) st = yolo_vk_bind_tensor(r, &d, 3, j->bias, 0, yolo_vk_numel(j->bias), false, 4);
    if (st != YOLO_OK) return st;
    if (!j->bias) yolo_vk_alias(&d, 3, 0);
    if (t == &r->ctx->gemm_coop) r->ctx->stats.coop_dispatches++;
    const uint32_t common[9] = {(uint32_t)j->m, (uint32_t)j->n, (uint32_t)j->k, (uint32_t)k_begin,
                                (uint32_t)k_len, (uint32_t)slices, (accumulate ? 1u : 0u) | (bias ? 2u : 0u),
                                (uint32_t)j->batches, (uint32_t)j->groups};
    memcpy(&d.push[8], common, sizeof common);
    memcpy(&d.push[17], j->extra, (size_t)j->n_extra * 4);
    d.groups[0] = (uint32_t)ceil_div(j->n, t->wgx * t->tn);
    d.groups[1] = (uint32_t)ceil_div(j->m, t->wgy * t->tm);
    d.groups[2] = (uint32_t)(j->batches * slices);
    return yolo_vk_record(r, &d);
}

/* Where the _f16 kernel reads elements [first, first+count) of t: t itself
 * when it is f16, else its fp16 copy in the shared scratch of `slot`. */
static yolo_status half_input(yolo_vk_recorder *r, const yolo_tensor *t, int64_t first, int64_t count, int slot,
                              const yolo_buffer **buf, VkDeviceSize *offset) {
    if (t->dtype == YOLO_F16) {
        *buf = t->buffer;
        *offset = t->offset + (VkDeviceSize)first * 2;
        return YOLO_OK;
    }
    yolo_buffer *copy = NULL;
    yolo_status st = yolo_vk_scratch_reused(r, slot, (size_t)count * 2, &copy);
    if (st == YOLO_OK) st = yolo_vk_to_half(r, t, first, count, copy);
    *buf = copy;
    *offset = 0;
    return st;
}

static yolo_status run_gemm(yolo_vk_recorder *r, gemm_job *j) {
    yolo_vk_context *ctx = r->ctx;
    /* amp, or an f16 input (amp's activations: the graph was planned under amp) */
    if ((ctx->amp16 && j->k > 0) || j->a->dtype == YOLO_F16 || j->b->dtype == YOLO_F16) {
        yolo_status st = half_input(r, j->a, j->a_first, j->a_count, 0, &j->a16, &j->a16_off);
        if (st == YOLO_OK) st = half_input(r, j->b, j->b_first, j->b_count, 1, &j->b16, &j->b16_off);
        if (st != YOLO_OK) return st;
    }
    /* the tile shape that wastes least: few rows, a small product, or large;
     * under amp, cooperative matrices unless a 64 x 64 block would be mostly empty */
    const yolo_vk_gemm_tiles *t = j->m <= 8 && j->n >= 256 ? &ctx->gemm_thin
                                  : j->m * j->n < 64 * 64 * 16 || j->m <= 32 ? &ctx->gemm_small
                                                                          : &ctx->gemm_large;
    j->variant = j->a16 ? "_f16" : "";
    if (j->a16 && ctx->coop != YOLO_VK_COOP_OFF && j->m >= 32 && j->n >= 64) {
        t = &ctx->gemm_coop;
        j->variant = ctx->coop == YOLO_VK_COOP_NV ? "_coop" : "_coopemu";
    }
    const int64_t bm = t->wgy * t->tm, bn = t->wgx * t->tn;
    const VkDeviceSize out_bytes = (VkDeviceSize)(j->batches * j->m * j->n) * 4;
    const VkDeviceSize c_off = j->c->offset + (VkDeviceSize)j->c_first * 4;
    /* longest K one invocation may walk */
    int64_t steps = (int64_t)(ctx->loop_budget / 2) / iterations_per_step(t);
    if (steps < 1) steps = 1;
    int64_t k_max = steps * t->bk;
    int64_t slices = ceil_div(j->k, k_max);
    /* few output tiles and a long K: split K for parallelism */
    const int64_t tiles = ceil_div(j->m, bm) * ceil_div(j->n, bn) * j->batches;
    if (tiles < 64 && j->k > 4096) {
        int64_t want = ceil_div(256, tiles);
        if (want > j->k / 1024) want = j->k / 1024;
        if (want > slices) slices = want;
    }
    if (slices < 1) slices = 1;
    const int64_t k_len = ceil_div(ceil_div(j->k, slices), t->bk) * t->bk;
    slices = ceil_div(j->k, k_len);
    if (j->k == 0) slices = 1;
    if (slices == 1)
        return dispatch_gemm(r, j, t, j->c->buffer, c_off, out_bytes, 0, k_len, 1, j->accumulate, j->bias != NULL);

    /* slices per pass, bounded by scratch size, binding range and grid depth */
    VkDeviceSize cap = ctx->scratch_cap < ctx->max_binding - 512 ? ctx->scratch_cap : ctx->max_binding - 512;
    int64_t per_pass = (int64_t)(cap / out_bytes);
    if (per_pass > 65535 / j->batches) per_pass = 65535 / j->batches;
    if (per_pass > slices) per_pass = slices;
    if (per_pass < 2) {
        /* no room for partials: walk the slices in order, accumulating in place */
        for (int64_t s = 0; s < slices; s++) {
            yolo_status st = dispatch_gemm(r, j, t, j->c->buffer, c_off, out_bytes, s * k_len, k_len, 1,
                                           j->accumulate || s > 0, j->bias && s == 0);
            if (st != YOLO_OK) return st;
        }
        return YOLO_OK;
    }
    yolo_buffer *partial;
    yolo_status st = yolo_vk_scratch(r, (size_t)(per_pass * (int64_t)out_bytes), &partial);
    if (st != YOLO_OK) return st;
    for (int64_t s0 = 0; s0 < slices; s0 += per_pass) {
        const int64_t ns = slices - s0 < per_pass ? slices - s0 : per_pass;
        st = dispatch_gemm(r, j, t, partial, 0, (VkDeviceSize)ns * out_bytes, s0 * k_len, k_len, ns, false,
                           j->bias && s0 == 0);
        if (st != YOLO_OK) return st;
        const int64_t n_out = j->batches * j->m * j->n;
        yolo_vk_reduce_args a = {.x_buf = partial,
                                 .out_buf = j->c->buffer,
                                 .out_offset = c_off,
                                 .kept = {1, 1, 1, n_out},
                                 .reduced = {1, 1, ns, 1},
                                 .stride = {0, 0, n_out, 1},
                                 .mode = 0,
                                 .scale = 1.0f,
                                 .accumulate = j->accumulate || s0 > 0};
        if ((st = yolo_vk_reduce(r, &a)) != YOLO_OK) return st;
    }
    return YOLO_OK;
}

/* ---- MATMUL ---- */

static yolo_status op_matmul(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *a = out->node->src[0], *b = out->node->src[1];
    const bool ta = out->node->iparams[0] != 0, tb = out->node->iparams[1] != 0;
    const int d = out->ndim - 2; /* 1 when batched: one product per leading index */
    gemm_job j = {.shader = "matmul", .a = a, .b = b, .c = out};
    j.m = out->shape[d];
    j.n = out->shape[d + 1];
    j.k = ta ? a->shape[d] : a->shape[d + 1];
    j.batches = d ? out->shape[0] : 1;
    j.groups = 1;
    j.a_count = yolo_vk_numel(a);
    j.b_count = yolo_vk_numel(b);
    const int64_t lda = a->shape[d + 1], ldb = b->shape[d + 1];
    const uint32_t extra[6] = {(uint32_t)(ta ? 1 : lda), (uint32_t)(ta ? lda : 1), (uint32_t)(tb ? 1 : ldb),
                               (uint32_t)(tb ? ldb : 1), (uint32_t)(a->shape[d] * lda),
                               (uint32_t)(b->shape[d] * ldb)};
    memcpy(j.extra, extra, sizeof extra);
    j.n_extra = 6;
    return run_gemm(r, &j);
}

/* ---- convolutions ---- */

typedef struct conv_geom {
    int64_t n, c, h, w, o, ho, wo, kh, kw, groups;
    uint32_t stride, pad, dil; /* h | w << 16 */
} conv_geom;

/* x: conv input [N,C,H,W]; y: conv output [N,O,Ho,Wo]; w: [O, C/g, kh, kw]. */
static conv_geom geom_of(const yolo_tensor *out, const yolo_tensor *x, const yolo_tensor *w, const yolo_tensor *y) {
    const int32_t *ip = out->node->iparams;
    conv_geom g = {x->shape[0], x->shape[1], x->shape[2], x->shape[3], y->shape[1], y->shape[2], y->shape[3],
                   w->shape[2], w->shape[3], ip[6] > 0 ? ip[6] : 1, 0, 0, 0};
    g.stride = (uint32_t)ip[0] | (uint32_t)ip[1] << 16;
    g.pad = (uint32_t)ip[2] | (uint32_t)ip[3] << 16;
    g.dil = (uint32_t)ip[4] | (uint32_t)ip[5] << 16;
    return g;
}

/* Images per dispatch so that the per-image tensors fit one binding each. */
static int64_t images_per_chunk(const yolo_vk_recorder *r, int64_t n, int64_t per_image_a, int64_t per_image_b) {
    const int64_t cap = yolo_vk_max_elems(r, 4);
    const int64_t widest = per_image_a > per_image_b ? per_image_a : per_image_b;
    int64_t k = cap / widest;
    if (k < 1) k = 1;
    return k < n ? k : n;
}

static yolo_status op_conv2d(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0], *w = out->node->src[1];
    const yolo_tensor *bias = out->node->n_src > 2 ? out->node->src[2] : NULL;
    const conv_geom g = geom_of(out, x, w, out);
    const int64_t x_img = g.c * g.h * g.w, y_img = g.o * g.ho * g.wo;
    const int64_t step = images_per_chunk(r, g.n, x_img, y_img);
    for (int64_t n0 = 0; n0 < g.n; n0 += step) {
        const int64_t nn = g.n - n0 < step ? g.n - n0 : step;
        gemm_job j = {.shader = "conv_fwd", .a = w, .b = x, .c = out, .bias = bias};
        j.a_count = yolo_vk_numel(w);
        j.b_first = n0 * x_img;
        j.b_count = nn * x_img;
        j.c_first = n0 * y_img;
        j.m = g.o / g.groups;
        j.n = g.ho * g.wo;
        j.k = g.c / g.groups * g.kh * g.kw;
        j.batches = nn * g.groups;
        j.groups = g.groups;
        const uint32_t extra[9] = {(uint32_t)g.c, (uint32_t)g.h, (uint32_t)g.w, (uint32_t)g.wo, (uint32_t)g.kh,
                                   (uint32_t)g.kw, g.stride, g.pad, g.dil};
        memcpy(j.extra, extra, sizeof extra);
        j.n_extra = 9;
        yolo_status st = run_gemm(r, &j);
        if (st != YOLO_OK) return st;
    }
    return YOLO_OK;
}

/* dx of the conv with input `dx` [N,C,H,W] and output `dy` [N,O,Ho,Wo]. */
static yolo_status conv_data_grad(yolo_vk_recorder *r, const yolo_tensor *out, const yolo_tensor *dy,
                                  const yolo_tensor *w, const yolo_tensor *dx, const yolo_tensor *bias) {
    const conv_geom g = geom_of(out, dx, w, dy);
    const int64_t x_img = g.c * g.h * g.w, y_img = g.o * g.ho * g.wo;
    const int64_t step = images_per_chunk(r, g.n, x_img, y_img);
    for (int64_t n0 = 0; n0 < g.n; n0 += step) {
        const int64_t nn = g.n - n0 < step ? g.n - n0 : step;
        gemm_job j = {.shader = "conv_bwd_data", .a = w, .b = dy, .c = dx, .bias = bias};
        j.a_count = yolo_vk_numel(w);
        j.b_first = n0 * y_img;
        j.b_count = nn * y_img;
        j.c_first = n0 * x_img;
        j.m = g.c / g.groups;
        j.n = g.h * g.w;
        j.k = g.o / g.groups * g.kh * g.kw;
        j.batches = nn * g.groups;
        j.groups = g.groups;
        const uint32_t extra[10] = {(uint32_t)g.o, (uint32_t)g.ho, (uint32_t)g.wo, (uint32_t)g.w, (uint32_t)g.kh,
                                    (uint32_t)g.kw, g.stride, g.pad, g.dil, (uint32_t)(g.o / g.groups)};
        memcpy(j.extra, extra, sizeof extra);
        j.n_extra = 10;
        yolo_status st = run_gemm(r, &j);
        if (st != YOLO_OK) return st;
    }
    return YOLO_OK;
}

static yolo_status op_conv2d_bwd_data(yolo_vk_recorder *r, const yolo_tensor *out) {
    return conv_data_grad(r, out, out->node->src[0], out->node->src[1], out, NULL);
}

/* The transposed conv is the data gradient of the conv whose input is `out`
 * and whose output is x (w [C,O/g,kh,kw] is that conv's weight). */
static yolo_status op_conv_transpose2d(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *bias = out->node->n_src > 2 ? out->node->src[2] : NULL;
    return conv_data_grad(r, out, out->node->src[0], out->node->src[1], out, bias);
}

static yolo_status op_conv2d_bwd_weight(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0], *dy = out->node->src[1];
    const conv_geom g = geom_of(out, x, out, dy);
    const int64_t x_img = g.c * g.h * g.w, y_img = g.o * g.ho * g.wo, p = g.ho * g.wo;
    const int64_t step = images_per_chunk(r, g.n, x_img, y_img);
    for (int64_t n0 = 0; n0 < g.n; n0 += step) {
        const int64_t nn = g.n - n0 < step ? g.n - n0 : step;
        gemm_job j = {.shader = "conv_bwd_weight", .a = dy, .b = x, .c = out, .accumulate = n0 > 0};
        j.a_first = n0 * y_img;
        j.a_count = nn * y_img;
        j.b_first = n0 * x_img;
        j.b_count = nn * x_img;
        j.m = g.o / g.groups;
        j.n = g.c / g.groups * g.kh * g.kw;
        j.k = nn * p;
        j.batches = g.groups;
        j.groups = g.groups;
        const uint32_t extra[11] = {(uint32_t)g.c, (uint32_t)g.h, (uint32_t)g.w, (uint32_t)g.wo, (uint32_t)g.kh,
                                    (uint32_t)g.kw, g.stride, g.pad, g.dil, (uint32_t)g.o, (uint32_t)p};
        memcpy(j.extra, extra, sizeof extra);
        j.n_extra = 11;
        yolo_status st = run_gemm(r, &j);
        if (st != YOLO_OK) return st;
    }
    return YOLO_OK;
}

yolo_vk_op_fn yolo_vk_gemm_op(int op) {
    switch (op) {
    case YOLO_OP_MATMUL: return op_matmul;
    case YOLO_OP_CONV2D: return op_conv2d;
    case YOLO_OP_CONV2D_BWD_DATA: return op_conv2d_bwd_data;
    case YOLO_OP_CONV2D_BWD_WEIGHT: return op_conv2d_bwd_weight;
    case YOLO_OP_CONV_TRANSPOSE2D: return op_conv_transpose2d;
    default: return NULL;
    }
}
