/* Batch norm (graph/ops.h splits it into statistics, the affine apply and
 * their backward pieces). x is [N, C, S...]: per-channel reductions go
 * through yolo_vk_reduce (two passes for the variance: mean, then the
 * centered squares, so no cancellation), per-element pieces through
 * bn_eltwise.comp, per-channel finishing steps through bn_running.comp and
 * bn_bwd_params.comp. */
#include <string.h>

#include "backend/vulkan/vk_ops.h"

typedef struct bn_layout {
    int64_t n, c, s;
} bn_layout;

static bn_layout layout_of(const yolo_tensor *x) {
    bn_layout l = {x->shape[0], x->ndim > 1 ? x->shape[1] : 1, 1};
    for (int i = 2; i < x->ndim; i++) l.s *= x->shape[i];
    return l;
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Per-channel sums over N and S of x (and y) into `out` + row*C. */
static yolo_status channel_reduce(yolo_vk_recorder *r, bn_layout l, const yolo_tensor *x, const yolo_tensor *y,
                                  const yolo_tensor *center, const yolo_tensor *out, int row, int mode, float scale) {
    yolo_vk_reduce_args a = {.x_buf = x->buffer,
                             .x_offset = x->offset,
                             .y_buf = y ? y->buffer : NULL,
                             .y_offset = y ? y->offset : 0,
                             .c_buf = center ? center->buffer : NULL,
                             .c_offset = center ? center->offset : 0,
                             .out_buf = out->buffer,
                             .out_offset = out->offset + (VkDeviceSize)(row * l.c) * 4,
                             .kept = {1, 1, l.c, 1},
                             .reduced = {1, l.n, 1, l.s},
                             .stride = {0, l.c * l.s, l.s, 1},
                             .mode = mode,
                             .scale = scale};
    return yolo_vk_reduce(r, &a);
}

static yolo_status per_channel(yolo_vk_recorder *r, const char *shader, int64_t c, const yolo_tensor *const t[3],
                               const bool write[3], const float f[3]) {
    yolo_vk_dispatch d;
    yolo_vk_dispatch_init(&d, shader);
    d.spec[0] = r->ctx->wg;
    d.n_spec = 1;
    for (int s = 0; s < 3; s++) {
        yolo_status st = yolo_vk_bind_tensor(r, &d, s, t[s], 0, yolo_vk_numel(t[s]), write[s], 4);
        if (st != YOLO_OK) return st;
    }
    d.push[8] = (uint32_t)c;
    for (int k = 0; k < 3; k++) d.push[9 + k] = float_bits(f[k]);
    yolo_vk_grid_1d(&d, ((uint64_t)c + r->ctx->wg - 1) / r->ctx->wg);
    return yolo_vk_record(r, &d);
}

static yolo_status op_bn_stats(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    const bn_layout l = layout_of(x);
    const int64_t m = l.n * l.s;
    if (m == 0) return yolo_error(YOLO_ERR_SHAPE, "BN_STATS: no elements per channel");
    const float inv_m = (float)(1.0 / (double)m);
    yolo_status st = channel_reduce(r, l, x, NULL, NULL, out, 0, 0, inv_m);
    if (st != YOLO_OK) return st;
    /* the mean (row 0) is the center of the variance's squares */
    yolo_tensor mean = *out;
    mean.ndim = 1;
    mean.shape[0] = l.c;
    if ((st = channel_reduce(r, l, x, NULL, &mean, out, 1, 2, inv_m)) != YOLO_OK) return st;
    if (!out->node->iparams[0] || out->node->n_src < 3) return YOLO_OK;
    const yolo_tensor *t[3] = {out, out->node->src[1], out->node->src[2]};
    const bool write[3] = {false, true, true};
    const float f[3] = {out->node->fparams[0], m > 1 ? (float)((double)m / (double)(m - 1)) : 1.0f, 0.0f};
    return per_channel(r, "bn_running", l.c, t, write, f);
}

static yolo_status op_bn_apply_bwd_params(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0], *mean = out->node->src[1], *dy = out->node->src[4];
    const bn_layout l = layout_of(x);
    yolo_status st = channel_reduce(r, l, x, dy, mean, out, 0, 3, 1.0f); /* sum dy*(x-mean) */
    if (st == YOLO_OK) st = channel_reduce(r, l, dy, NULL, NULL, out, 1, 0, 1.0f); /* sum dy */
    if (st != YOLO_OK) return st;
    const yolo_tensor *t[3] = {out, out->node->src[2], out->node->src[3]};
    const bool write[3] = {true, false, false};
    const float f[3] = {out->node->fparams[0], 0.0f, 0.0f};
    return per_channel(r, "bn_bwd_params", l.c, t, write, f);
}

/* bn_eltwise.comp: slots 0 x, 1 mean/stats, 2 var/stats, 3 gamma, 4 beta, 5 dstats, 6 dy (elementwise like x,
 * or NULL), 7 out (f16 for BN_SILU's value under amp: the bn_eltwise_f16 build). */
static yolo_status run_bn_eltwise(yolo_vk_recorder *r, const yolo_tensor *out, uint32_t mode, const yolo_tensor *x,
                                  const yolo_tensor *const per_channel_args[6], const yolo_tensor *dy) {
    const bn_layout l = layout_of(out);
    yolo_vk_dispatch d;
    yolo_vk_dispatch_init(&d, out->dtype == YOLO_F16 ? "bn_eltwise_f16" : "bn_eltwise");
    d.spec[0] = r->ctx->wg;
    d.spec[1] = mode;
    d.n_spec = 2;
    yolo_vk_arg args[8] = {{0}};
    args[0].t = x;
    for (int s = 1; s < 6; s++) {
        if (per_channel_args[s]) args[s] = (yolo_vk_arg){.t = per_channel_args[s], .whole = true};
        else args[s].alias = 1;
    }
    if (dy) args[6].t = dy;
    else args[6].alias = 1;
    args[7] = (yolo_vk_arg){.t = out, .write = true};
    d.push[9] = (uint32_t)l.c;
    d.push[10] = (uint32_t)l.s;
    d.push[11] = float_bits(out->node->fparams[0]);
    d.push[12] = float_bits((float)(1.0 / (double)(l.n * l.s)));
    return yolo_vk_run_flat(r, &d, args, yolo_vk_numel(out));
}

static yolo_status op_bn_apply(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *const pc[6] = {NULL, out->node->src[1], out->node->src[2], out->node->src[3], out->node->src[4], NULL};
    return run_bn_eltwise(r, out, 0, out->node->src[0], pc, NULL);
}

static yolo_status op_bn_apply_bwd_data(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *const pc[6] = {NULL, NULL, out->node->src[0], out->node->src[1], NULL, NULL};
    return run_bn_eltwise(r, out, 1, out->node->src[2], pc, NULL);
}

static yolo_status op_bn_stats_bwd(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *const pc[6] = {NULL, out->node->src[1], NULL, NULL, NULL, out->node->src[2]};
    return run_bn_eltwise(r, out, 2, out->node->src[0], pc, NULL);
}

/* BN_BWD: src x, stats, gamma, dy -> [dx..., 4 rows]: the rows as BN_APPLY_BWD_PARAMS computes them (into
 * the tail of out), then dx through bn_eltwise.comp mode 3 reading the rows dmean, dvar. The pieces of out
 * and stats are described by tensor copies with their own shapes and byte offsets. */
static yolo_status op_bn_bwd(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0], *stats = out->node->src[1], *gamma = out->node->src[2], *dy = out->node->src[3];
    const bn_layout l = layout_of(x);
    const size_t numel_bytes = (size_t)(l.n * l.c * l.s) * sizeof(float);
    yolo_tensor rows = *out, mean = *stats, var = *stats, dstats, dx = *out;
    rows.ndim = 2;
    rows.shape[0] = 4;
    rows.shape[1] = l.c;
    rows.offset = out->offset + numel_bytes;
    mean.ndim = var.ndim = 1;
    mean.shape[0] = var.shape[0] = l.c;
    var.offset = stats->offset + (size_t)l.c * sizeof(float);
    dstats = rows;
    dstats.shape[0] = 2;
    dstats.offset = rows.offset + 2 * (size_t)l.c * sizeof(float);
    dx.ndim = x->ndim;
    memcpy(dx.shape, x->shape, sizeof dx.shape);
    yolo_status st = channel_reduce(r, l, x, dy, &mean, &rows, 0, 3, 1.0f); /* sum dy*(x-mean) */
    if (st == YOLO_OK) st = channel_reduce(r, l, dy, NULL, NULL, &rows, 1, 0, 1.0f); /* sum dy */
    if (st != YOLO_OK) return st;
    const yolo_tensor *t[3] = {&rows, &var, gamma};
    const bool write[3] = {true, false, false};
    const float f[3] = {out->node->fparams[0], 0.0f, 0.0f};
    if ((st = per_channel(r, "bn_bwd_params", l.c, t, write, f)) != YOLO_OK) return st;
    const yolo_tensor *const pc[6] = {NULL, stats, stats, gamma, NULL, &dstats};
    return run_bn_eltwise(r, &dx, 3, x, pc, dy);
}

/* BN_SILU: src x, mean, var, gamma, beta; BN_SILU_BWD: the same, then dy. */
static yolo_status op_bn_silu(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *const pc[6] = {NULL, out->node->src[1], out->node->src[2], out->node->src[3], out->node->src[4], NULL};
    const bool backward = out->node->op == YOLO_OP_BN_SILU_BWD;
    return run_bn_eltwise(r, out, backward ? 5 : 4, out->node->src[0], pc, backward ? out->node->src[5] : NULL);
}

yolo_vk_op_fn yolo_vk_norm_op(int op) {
    switch (op) {
    case YOLO_OP_BN_STATS: return op_bn_stats;
    case YOLO_OP_BN_APPLY: return op_bn_apply;
    case YOLO_OP_BN_APPLY_BWD_PARAMS: return op_bn_apply_bwd_params;
    case YOLO_OP_BN_APPLY_BWD_DATA: return op_bn_apply_bwd_data;
    case YOLO_OP_BN_STATS_BWD: return op_bn_stats_bwd;
    case YOLO_OP_BN_BWD: return op_bn_bwd;
    case YOLO_OP_BN_SILU:
    case YOLO_OP_BN_SILU_BWD: return op_bn_silu;
    default: return NULL;
    }
}
