/* Elementwise ops: activations and their backward, scale, accumulate, EMA
 * (shaders/eltwise.comp), broadcasting add/sub/mul and broadcast_to
 * (binary.comp; binary_f16 for amp's residual add of f16 activations), cast
 * (cast.comp, cast16.comp), fill and zero (fill.comp). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "backend/vulkan/vk_ops.h"

enum { E_SILU, E_SILU_BWD, E_RELU, E_RELU_BWD, E_SIGMOID, E_SIGMOID_BWD, E_SCALE, E_ADD, E_EMA, E_HARDSWISH, E_HARDSWISH_BWD };

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void dispatch_1d(yolo_vk_recorder *r, yolo_vk_dispatch *d, const char *shader) {
    yolo_vk_dispatch_init(d, shader);
    d->spec[0] = r->ctx->wg;
    d->n_spec = 1;
}

/* eltwise.comp slots: 0 x, 1 y, 2 out, 3 EMA decay, 4 EMA step_scale (unused ones repeat x). */
static yolo_status run_eltwise(yolo_vk_recorder *r, const yolo_tensor *out, uint32_t op) {
    const bool gated = op == E_EMA && out->node->n_src > 3 && out->node->src[3];
    yolo_vk_dispatch d;
    dispatch_1d(r, &d, "eltwise");
    d.spec[1] = op;
    d.spec[2] = gated;
    d.n_spec = 3;
    yolo_vk_arg args[8] = {{0}};
    args[0].t = out->node->src[0];
    if (out->node->n_src > 1) args[1].t = out->node->src[1];
    else args[1].alias = 1;
    args[2] = (yolo_vk_arg){.t = out, .write = true};
    if (op == E_EMA) args[3] = (yolo_vk_arg){.t = out->node->src[2], .whole = true};
    else args[3].alias = 1;
    if (gated) args[4] = (yolo_vk_arg){.t = out->node->src[3], .whole = true};
    else args[4].alias = 1;
    if (op == E_SCALE) d.push[9] = float_bits(out->node->fparams[0]);
    return yolo_vk_run_flat(r, &d, args, yolo_vk_numel(out));
}

static yolo_status op_silu(yolo_vk_recorder *r, const yolo_tensor *n) { return run_eltwise(r, n, E_SILU); }
static yolo_status op_silu_bwd(yolo_vk_recorder *r, const yolo_tensor *n) { return run_eltwise(r, n, E_SILU_BWD); }
static yolo_status op_relu(yolo_vk_recorder *r, const yolo_tensor *n) { return run_eltwise(r, n, E_RELU); }
static yolo_status op_relu_bwd(yolo_vk_recorder *r, const yolo_tensor *n) { return run_eltwise(r, n, E_RELU_BWD); }
static yolo_status op_sigmoid(yolo_vk_recorder *r, const yolo_tensor *n) { return run_eltwise(r, n, E_SIGMOID); }
static yolo_status op_sigmoid_bwd(yolo_vk_recorder *r, const yolo_tensor *n) {
    return run_eltwise(r, n, E_SIGMOID_BWD);
}
static yolo_status op_hardswish(yolo_vk_recorder *r, const yolo_tensor *n) { return run_eltwise(r, n, E_HARDSWISH); }
static yolo_status op_hardswish_bwd(yolo_vk_recorder *r, const yolo_tensor *n) {
    return run_eltwise(r, n, E_HARDSWISH_BWD);
}
static yolo_status op_scale(yolo_vk_recorder *r, const yolo_tensor *n) { return run_eltwise(r, n, E_SCALE); }
static yolo_status op_accumulate(yolo_vk_recorder *r, const yolo_tensor *n) { return run_eltwise(r, n, E_ADD); }
static yolo_status op_ema(yolo_vk_recorder *r, const yolo_tensor *n) { return run_eltwise(r, n, E_EMA); }

/* ---- broadcasting binary ops ---- */

/* Groups of output dims with one broadcast pattern per operand (as the CPU
 * backend merges them), strides per operand, at most 4 groups. */
typedef struct bcast_plan {
    int nd;
    int64_t dim[4];
    int64_t stride[2][4];
} bcast_plan;

static void plan_binary(const yolo_tensor *out, const yolo_tensor *const srcs[2], int n_srcs, bcast_plan *p) {
    int64_t dim[4];
    bool bc[2][4];
    int nd = 0;
    for (int i = 0; i < out->ndim; i++) {
        const int64_t od = out->shape[i];
        if (od == 1) continue;
        bool f[2] = {false, false};
        for (int s = 0; s < n_srcs; s++) {
            const int is = i - (out->ndim - srcs[s]->ndim);
            f[s] = (is >= 0 ? srcs[s]->shape[is] : 1) != od;
        }
        if (nd > 0 && bc[0][nd - 1] == f[0] && bc[1][nd - 1] == f[1]) {
            dim[nd - 1] *= od;
        } else {
            dim[nd] = od;
            bc[0][nd] = f[0];
            bc[1][nd] = f[1];
            nd++;
        }
    }
    if (nd == 0) {
        dim[0] = 1;
        bc[0][0] = bc[1][0] = false;
        nd = 1;
    }
    /* right-align into 4 slots, leading dims of 1 */
    p->nd = 4;
    for (int d = 0; d < 4; d++) {
        p->dim[d] = 1;
        p->stride[0][d] = p->stride[1][d] = 0;
    }
    int64_t st[2] = {1, 1};
    for (int g = nd - 1, d = 3; g >= 0; g--, d--) {
        p->dim[d] = dim[g];
        for (int s = 0; s < 2; s++) {
            p->stride[s][d] = bc[s][g] ? 0 : st[s];
            if (!bc[s][g]) st[s] *= dim[g];
        }
    }
}

static yolo_status run_binary(yolo_vk_recorder *r, const yolo_tensor *out, const yolo_tensor *a,
                              const yolo_tensor *b, uint32_t op) {
    const yolo_tensor *srcs[2] = {a, b ? b : a};
    const bool half = out->dtype == YOLO_F16; /* a, b f16 too (yolo_vk_check_dtypes) */
    const uint32_t unit = half ? 2 : 4;
    bcast_plan p;
    plan_binary(out, srcs, b ? 2 : 1, &p);
    /* Split along the outermost group: an operand broadcast there is bound whole. */
    int outer = 0;
    while (outer < 3 && p.dim[outer] == 1) outer++;
    const int64_t rows = p.dim[outer];
    const int64_t out_row = yolo_vk_numel(out) / rows;
    int64_t max_rows = rows;
    const int64_t cap = yolo_vk_max_elems(r, 4);
    if (out_row * rows > cap) max_rows = cap / out_row > 0 ? cap / out_row : 1;
    for (int s = 0; s < 2; s++)
        if (p.stride[s][outer] && p.stride[s][outer] * max_rows > cap)
            max_rows = cap / p.stride[s][outer] > 0 ? cap / p.stride[s][outer] : 1;
    for (int64_t r0 = 0; r0 < rows; r0 += max_rows) {
        const int64_t nr = rows - r0 < max_rows ? rows - r0 : max_rows;
        yolo_vk_dispatch d;
        dispatch_1d(r, &d, half ? "binary_f16" : "binary");
        d.spec[1] = op;
        d.n_spec = 2;
        yolo_status st = YOLO_OK;
        for (int s = 0; s < 2 && st == YOLO_OK; s++) {
            if (s == 1 && !b) break;
            const int64_t srow = p.stride[s][outer];
            st = srow ? yolo_vk_bind_tensor(r, &d, s, srcs[s], r0 * srow, nr * srow, false, unit)
                      : yolo_vk_bind_tensor(r, &d, s, srcs[s], 0, yolo_vk_numel(srcs[s]), false, unit);
        }
        if (st == YOLO_OK) st = yolo_vk_bind_tensor(r, &d, 2, out, r0 * out_row, nr * out_row, true, unit);
        if (st != YOLO_OK) return st;
        if (!b) yolo_vk_alias(&d, 1, 0);
        d.push[8] = (uint32_t)(nr * out_row);
        for (int k = 0; k < 4; k++) {
            d.push[9 + k] = (uint32_t)(k == outer ? nr : p.dim[k]);
            d.push[13 + k] = (uint32_t)p.stride[0][k];
            d.push[17 + k] = (uint32_t)p.stride[1][k];
        }
        yolo_vk_grid_1d(&d, ((uint64_t)(nr * out_row) + r->ctx->wg - 1) / r->ctx->wg);
        if ((st = yolo_vk_record(r, &d)) != YOLO_OK) return st;
    }
    return YOLO_OK;
}

static yolo_status op_add(yolo_vk_recorder *r, const yolo_tensor *n) { return run_binary(r, n, n->node->src[0], n->node->src[1], 0); }
static yolo_status op_sub(yolo_vk_recorder *r, const yolo_tensor *n) { return run_binary(r, n, n->node->src[0], n->node->src[1], 1); }
static yolo_status op_mul(yolo_vk_recorder *r, const yolo_tensor *n) { return run_binary(r, n, n->node->src[0], n->node->src[1], 2); }
static yolo_status op_broadcast_to(yolo_vk_recorder *r, const yolo_tensor *n) {
    if (yolo_dtype_size(n->dtype) != 4)
        return yolo_error(YOLO_ERR_UNSUPPORTED, "vulkan: BROADCAST_TO of %s tensors", yolo_dtype_name(n->dtype));
    return run_binary(r, n, n->node->src[0], NULL, 3);
}

/* ---- cast ---- */

static uint32_t dtype_code(yolo_dtype t) {
    switch (t) {
    case YOLO_F16: return 1;
    case YOLO_I32: return 2;
    case YOLO_U8: return 3;
    default: return 0;
    }
}

yolo_status yolo_vk_to_half(yolo_vk_recorder *r, const yolo_tensor *t, int64_t first, int64_t count,
                            const yolo_buffer *dst) {
    yolo_vk_dispatch d;
    dispatch_1d(r, &d, "cast16");
    d.spec[1] = 1; /* TO_HALF */
    d.n_spec = 2;
    yolo_status st = yolo_vk_bind_tensor(r, &d, 0, t, first, count, false, 4);
    if (st == YOLO_OK) st = yolo_vk_bind(r, &d, 3, dst, 0, (VkDeviceSize)count * 2, true, 2);
    if (st != YOLO_OK) return st;
    yolo_vk_alias(&d, 1, 0);
    yolo_vk_alias(&d, 2, 3);
    d.push[8] = (uint32_t)count;
    d.push[9] = float_bits(1.0f);
    yolo_vk_grid_1d(&d, ((uint64_t)count + r->ctx->wg - 1) / r->ctx->wg);
    return yolo_vk_record(r, &d);
}

static yolo_status op_cast(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    const int64_t n = yolo_vk_numel(out);
    const size_t es_src = yolo_dtype_size(x->dtype), es_dst = yolo_dtype_size(out->dtype);
    const bool half_pair = (x->dtype == YOLO_F32 && out->dtype == YOLO_F16) ||
                           (x->dtype == YOLO_F16 && out->dtype == YOLO_F32);
    const bool use16 = r->ctx->f16_storage && half_pair && x->offset % es_src == 0 && out->offset % es_dst == 0;
    const size_t es_max = es_src > es_dst ? es_src : es_dst;
    const int64_t chunk = yolo_vk_max_elems(r, es_max);
    for (int64_t e0 = 0; e0 < n; e0 += chunk) {
        const int64_t len = n - e0 < chunk ? n - e0 : chunk;
        yolo_vk_dispatch d;
        yolo_status st;
        if (use16) {
            const bool to_half = out->dtype == YOLO_F16;
            dispatch_1d(r, &d, "cast16");
            d.spec[1] = to_half;
            d.n_spec = 2;
            /* slots: 0 f32 src, 1 f16 src, 2 f32 dst, 3 f16 dst; the other
             * direction's slots repeat this one's */
            const int s_src = to_half ? 0 : 1, s_dst = to_half ? 3 : 2;
            st = yolo_vk_bind_tensor(r, &d, s_src, x, e0, len, false, (uint32_t)es_src);
            if (st == YOLO_OK) st = yolo_vk_bind_tensor(r, &d, s_dst, out, e0, len, true, (uint32_t)es_dst);
            if (st != YOLO_OK) return st;
            yolo_vk_alias(&d, to_half ? 1 : 0, s_src);
            yolo_vk_alias(&d, to_half ? 2 : 3, s_dst);
            d.push[8] = (uint32_t)len;
            d.push[9] = float_bits(out->node->fparams[0]);
            yolo_vk_grid_1d(&d, ((uint64_t)len + r->ctx->wg - 1) / r->ctx->wg);
        } else {
            dispatch_1d(r, &d, "cast");
            d.spec[1] = dtype_code(x->dtype);
            d.spec[2] = dtype_code(out->dtype);
            d.n_spec = 3;
            st = yolo_vk_bind_tensor(r, &d, 0, x, e0, len, false, 1);
            if (st == YOLO_OK) st = yolo_vk_bind_tensor(r, &d, 1, out, e0, len, true, 1);
            if (st != YOLO_OK) return st;
            d.push[8] = (uint32_t)len;
            d.push[9] = float_bits(out->node->fparams[0]);
            const uint64_t first = d.push[1], end = first + (uint64_t)len * es_dst;
            const uint64_t words = (end + 3) / 4 - first / 4;
            yolo_vk_grid_1d(&d, (words + r->ctx->wg - 1) / r->ctx->wg);
        }
        if ((st = yolo_vk_record(r, &d)) != YOLO_OK) return st;
    }
    return YOLO_OK;
}

/* ---- fill and zero ---- */

static uint32_t fill_pattern(yolo_dtype dtype, float value) {
    switch (dtype) {
    case YOLO_F16: {
        uint32_t h = yolo_f32_to_f16(value);
        return h | h << 16;
    }
    case YOLO_I32: {
        double v = value;
        int32_t i = v != v ? 0 : v <= -2147483648.0 ? INT32_MIN : v >= 2147483647.0 ? INT32_MAX : (int32_t)nearbyint(v);
        return (uint32_t)i;
    }
    case YOLO_U8: {
        uint32_t b = !(value > 0.0f) ? 0u : value >= 255.0f ? 255u : (uint32_t)nearbyintf(value);
        return b * 0x01010101u;
    }
    default: return float_bits(value);
    }
}

static yolo_status run_fill(yolo_vk_recorder *r, const yolo_tensor *t, uint32_t pattern) {
    const int64_t n = yolo_vk_numel(t);
    const size_t es = yolo_dtype_size(t->dtype);
    const int64_t chunk = yolo_vk_max_elems(r, es);
    for (int64_t e0 = 0; e0 < n; e0 += chunk) {
        const int64_t len = n - e0 < chunk ? n - e0 : chunk;
        yolo_vk_dispatch d;
        dispatch_1d(r, &d, "fill");
        yolo_status st = yolo_vk_bind_tensor(r, &d, 0, t, e0, len, true, 1);
        if (st != YOLO_OK) return st;
        d.push[8] = (uint32_t)(len * (int64_t)es);
        d.push[9] = pattern;
        const uint64_t first = d.push[0], end = first + (uint64_t)len * es;
        yolo_vk_grid_1d(&d, ((end + 3) / 4 - first / 4 + r->ctx->wg - 1) / r->ctx->wg);
        if ((st = yolo_vk_record(r, &d)) != YOLO_OK) return st;
    }
    return YOLO_OK;
}

static yolo_status op_fill(yolo_vk_recorder *r, const yolo_tensor *n) {
    return run_fill(r, n, fill_pattern(n->dtype, n->node->fparams[0]));
}
static yolo_status op_zero(yolo_vk_recorder *r, const yolo_tensor *n) { return run_fill(r, n->node->src[0], 0); }

yolo_vk_op_fn yolo_vk_eltwise_op(int op) {
    switch (op) {
    case YOLO_OP_SILU: return op_silu;
    case YOLO_OP_SILU_BWD: return op_silu_bwd;
    case YOLO_OP_RELU: return op_relu;
    case YOLO_OP_RELU_BWD: return op_relu_bwd;
    case YOLO_OP_SIGMOID: return op_sigmoid;
    case YOLO_OP_SIGMOID_BWD: return op_sigmoid_bwd;
    case YOLO_OP_HARDSWISH: return op_hardswish;
    case YOLO_OP_HARDSWISH_BWD: return op_hardswish_bwd;
    case YOLO_OP_SCALE:
    case YOLO_OP_DETACH: return op_scale;
    case YOLO_OP_ADD: return op_add;
    case YOLO_OP_SUB: return op_sub;
    case YOLO_OP_MUL: return op_mul;
    case YOLO_OP_BROADCAST_TO: return op_broadcast_to;
    case YOLO_OP_CAST: return op_cast;
    case YOLO_OP_FILL: return op_fill;
    case YOLO_OP_ZERO: return op_zero;
    case YOLO_OP_ACCUMULATE: return op_accumulate;
    case YOLO_OP_EMA_UPDATE: return op_ema;
    default: return NULL;
    }
}
