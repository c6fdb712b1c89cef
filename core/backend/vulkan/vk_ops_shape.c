/* Shape and spatial ops: concat, slice and its backward (copy_rows.comp),
 * nearest upsampling (upsample.comp; upsample_f16 for amp's f16
 * activations) and max pooling (maxpool.comp), each with its backward. */
#include <string.h>

#include "backend/vulkan/vk_ops.h"

static int axis_of(const yolo_tensor *t, int axis) { return axis < 0 ? axis + t->ndim : axis; }

static int64_t dims_product(const yolo_tensor *t, int from, int to) {
    int64_t n = 1;
    for (int i = from; i < to; i++) n *= t->shape[i];
    return n;
}

/* dst rows r of `len` elements at dst_start + r*dst_stride take src's at
 * src_start + r*src_stride (all in elements of the tensors' dtype). Rows
 * whose starts, lengths and strides are whole 32-bit words (every 4-byte
 * dtype; most f16 activation copies) move a word per invocation; others
 * through the byte path. Rows are split so every binding fits the
 * device's range limit. */
static bool word_aligned(const yolo_tensor *src, int64_t src_start, int64_t src_stride, const yolo_tensor *dst,
                         int64_t dst_start, int64_t dst_stride, int64_t len) {
    const int64_t es = (int64_t)yolo_dtype_size(dst->dtype);
    const size_t src_at = (src->buffer ? src->buffer->offset : 0) + src->offset + (size_t)(src_start * es);
    const size_t dst_at = (dst->buffer ? dst->buffer->offset : 0) + dst->offset + (size_t)(dst_start * es);
    return (len * es) % 4 == 0 && (src_stride * es) % 4 == 0 && (dst_stride * es) % 4 == 0 && src_at % 4 == 0 &&
           dst_at % 4 == 0;
}

static yolo_status copy_rows(yolo_vk_recorder *r, const yolo_tensor *src, int64_t src_start, int64_t src_stride,
                             const yolo_tensor *dst, int64_t dst_start, int64_t dst_stride, int64_t rows,
                             int64_t len) {
    const size_t es = yolo_dtype_size(dst->dtype);
    const bool bytes = !word_aligned(src, src_start, src_stride, dst, dst_start, dst_stride, len);
    const uint32_t unit = bytes ? 1 : 4;
    const int64_t cap = yolo_vk_max_elems(r, es);
    const int64_t widest = src_stride > dst_stride ? src_stride : dst_stride;
    int64_t max_rows = widest > 0 ? cap / widest : rows;
    if (max_rows < 1) max_rows = 1;
    for (int64_t r0 = 0; r0 < rows; r0 += max_rows) {
        const int64_t nr = rows - r0 < max_rows ? rows - r0 : max_rows;
        yolo_vk_dispatch d;
        yolo_vk_dispatch_init(&d, "copy_rows");
        d.spec[0] = r->ctx->wg;
        d.spec[1] = bytes;
        d.n_spec = 2;
        const int64_t s_first = src_start + r0 * src_stride, d_first = dst_start + r0 * dst_stride;
        const int64_t s_count = (nr - 1) * src_stride + len, d_count = (nr - 1) * dst_stride + len;
        yolo_status st = yolo_vk_bind_tensor(r, &d, 0, src, s_first, s_count, false, unit);
        if (st == YOLO_OK) st = yolo_vk_bind_tensor(r, &d, 1, dst, d_first, d_count, true, unit);
        if (st != YOLO_OK) return st;
        const int64_t eb = (int64_t)es, ub = unit; /* bytes per element, per unit */
        d.push[8] = (uint32_t)nr;
        d.push[9] = (uint32_t)(len * eb / ub);
        d.push[10] = (uint32_t)((nr > 1 ? src_stride : len) * eb / ub);
        d.push[11] = (uint32_t)((nr > 1 ? dst_stride : len) * eb / ub);
        uint64_t invocations = (uint64_t)nr * (uint64_t)(len * eb / ub);
        if (bytes) {
            const uint32_t wpr = (uint32_t)((len * eb + 3) / 4 + 1);
            d.push[12] = wpr;
            invocations = (uint64_t)nr * wpr;
        }
        yolo_vk_grid_1d(&d, (invocations + r->ctx->wg - 1) / r->ctx->wg);
        if ((st = yolo_vk_record(r, &d)) != YOLO_OK) return st;
    }
    return YOLO_OK;
}

static yolo_status op_concat(yolo_vk_recorder *r, const yolo_tensor *out) {
    const int axis = axis_of(out, out->node->iparams[0]);
    if (axis < 0 || axis >= out->ndim)
        return yolo_error(YOLO_ERR_ARG, "CONCAT: axis %d out of range for a %d-d output", out->node->iparams[0], out->ndim);
    const int64_t inner = dims_product(out, axis + 1, out->ndim), outer = dims_product(out, 0, axis);
    int64_t at = 0;
    for (int k = 0; k < out->node->n_src; k++) {
        const yolo_tensor *s = out->node->src[k];
        const int64_t len = s->shape[axis] * inner;
        yolo_status st = copy_rows(r, s, 0, len, out, at * inner, out->shape[axis] * inner, outer, len);
        if (st != YOLO_OK) return st;
        at += s->shape[axis];
    }
    return YOLO_OK;
}

static yolo_status fill_zero(yolo_vk_recorder *r, const yolo_tensor *t) {
    /* ZERO's kernel, reached through the op table */
    yolo_tensor *src[1] = {(yolo_tensor *)t};
    struct yolo_node node = {.op = YOLO_OP_ZERO, .n_src = 1, .src = src};
    yolo_tensor z = {.node = &node};
    return yolo_vk_op_for(YOLO_OP_ZERO)(r, &z);
}

static yolo_status op_slice(yolo_vk_recorder *r, const yolo_tensor *out) {
    const int backward = out->node->op == YOLO_OP_SLICE_BWD;
    const yolo_tensor *src = out->node->src[0];
    const yolo_tensor *big = backward ? out : src, *small = backward ? src : out;
    const int axis = axis_of(out, out->node->iparams[0]);
    if (axis < 0 || axis >= out->ndim)
        return yolo_error(YOLO_ERR_ARG, "%s: axis %d out of range", yolo_op_name(out->node->op), out->node->iparams[0]);
    const int64_t start = out->node->iparams[1];
    if (start < 0 || start + small->shape[axis] > big->shape[axis])
        return yolo_error(YOLO_ERR_ARG, "%s: [%lld, %lld) outside axis %d of length %lld", yolo_op_name(out->node->op),
                          (long long)start, (long long)(start + small->shape[axis]), axis,
                          (long long)big->shape[axis]);
    const int64_t inner = dims_product(out, axis + 1, out->ndim), outer = dims_product(out, 0, axis);
    const int64_t len = small->shape[axis] * inner, big_row = big->shape[axis] * inner;
    if (!backward) return copy_rows(r, src, start * inner, big_row, out, 0, len, outer, len);
    yolo_status st = fill_zero(r, out);
    if (st != YOLO_OK) return st;
    return copy_rows(r, src, 0, len, out, start * inner, big_row, outer, len);
}

/* Planes per dispatch so that in_plane and out_plane elements per plane fit. */
static int64_t planes_per_chunk(const yolo_vk_recorder *r, int64_t planes, int64_t in_plane, int64_t out_plane) {
    const int64_t cap = yolo_vk_max_elems(r, 4);
    const int64_t widest = in_plane > out_plane ? in_plane : out_plane;
    int64_t n = cap / widest;
    if (n < 1) n = 1;
    return n < planes ? n : planes;
}

static yolo_status op_upsample(yolo_vk_recorder *r, const yolo_tensor *out) {
    const int backward = out->node->op == YOLO_OP_UPSAMPLE_NEAREST_BWD;
    const yolo_tensor *src = out->node->src[0];
    const yolo_tensor *small = backward ? out : src;
    const int64_t f = out->node->iparams[0];
    if (f < 1) return yolo_error(YOLO_ERR_ARG, "%s: factor %lld must be >= 1", yolo_op_name(out->node->op), (long long)f);
    if ((uint64_t)(f * f) > r->ctx->loop_budget)
        return yolo_error(YOLO_ERR_UNSUPPORTED, "%s: factor %lld loops past this device's budget",
                          yolo_op_name(out->node->op), (long long)f);
    const int64_t h = small->shape[2], w = small->shape[3];
    const int64_t planes = small->shape[0] * small->shape[1];
    const int64_t small_plane = h * w, big_plane = h * w * f * f;
    const int64_t step = planes_per_chunk(r, planes, small_plane, big_plane);
    const int64_t src_plane = backward ? big_plane : small_plane, out_plane = backward ? small_plane : big_plane;
    const bool half = out->dtype == YOLO_F16; /* amp's f16 activations (forward only) */
    const uint32_t unit = half ? 2 : 4;
    for (int64_t p0 = 0; p0 < planes; p0 += step) {
        const int64_t np = planes - p0 < step ? planes - p0 : step;
        yolo_vk_dispatch d;
        yolo_vk_dispatch_init(&d, half ? "upsample_f16" : "upsample");
        d.spec[0] = r->ctx->wg;
        d.spec[1] = backward;
        d.n_spec = 2;
        yolo_status st = yolo_vk_bind_tensor(r, &d, 0, src, p0 * src_plane, np * src_plane, false, unit);
        if (st == YOLO_OK) st = yolo_vk_bind_tensor(r, &d, 1, out, p0 * out_plane, np * out_plane, true, unit);
        if (st != YOLO_OK) return st;
        const uint64_t n_out = (uint64_t)(np * out_plane);
        d.push[8] = (uint32_t)n_out;
        d.push[9] = (uint32_t)h;
        d.push[10] = (uint32_t)w;
        d.push[11] = (uint32_t)f;
        yolo_vk_grid_1d(&d, (n_out + r->ctx->wg - 1) / r->ctx->wg);
        if ((st = yolo_vk_record(r, &d)) != YOLO_OK) return st;
    }
    return YOLO_OK;
}

static yolo_status op_maxpool(yolo_vk_recorder *r, const yolo_tensor *out) {
    const int backward = out->node->op == YOLO_OP_MAXPOOL2D_BWD;
    const yolo_tensor *x = out->node->src[0];
    const yolo_tensor *pooled = backward ? out->node->src[1] : out;
    const int k = out->node->iparams[0], s = out->node->iparams[1], p = out->node->iparams[2];
    if (k < 1 || s < 1 || p < 0)
        return yolo_error(YOLO_ERR_ARG, "%s: kernel %d, stride %d, pad %d are invalid", yolo_op_name(out->node->op), k, s,
                          p);
    const uint64_t per_window = (uint64_t)k * (uint64_t)k;
    const uint64_t windows = backward ? (uint64_t)((k + s - 1) / s) * (uint64_t)((k + s - 1) / s) : 1;
    if (per_window * windows > r->ctx->loop_budget)
        return yolo_error(YOLO_ERR_UNSUPPORTED, "%s: a %dx%d window with stride %d loops past this device's budget",
                          yolo_op_name(out->node->op), k, k, s);
    const int64_t h = x->shape[2], w = x->shape[3], ho = pooled->shape[2], wo = pooled->shape[3];
    const int64_t planes = x->shape[0] * x->shape[1];
    const int64_t step = planes_per_chunk(r, planes, h * w, ho * wo);
    const int64_t out_plane = backward ? h * w : ho * wo;
    for (int64_t p0 = 0; p0 < planes; p0 += step) {
        const int64_t np = planes - p0 < step ? planes - p0 : step;
        yolo_vk_dispatch d;
        yolo_vk_dispatch_init(&d, "maxpool");
        d.spec[0] = r->ctx->wg;
        d.spec[1] = backward;
        d.n_spec = 2;
        yolo_status st = yolo_vk_bind_tensor(r, &d, 0, x, p0 * h * w, np * h * w, false, 4);
        if (st == YOLO_OK && backward)
            st = yolo_vk_bind_tensor(r, &d, 1, out->node->src[1], p0 * ho * wo, np * ho * wo, false, 4);
        if (st == YOLO_OK) st = yolo_vk_bind_tensor(r, &d, 2, out, p0 * out_plane, np * out_plane, true, 4);
        if (st != YOLO_OK) return st;
        if (!backward) yolo_vk_alias(&d, 1, 0);
        const uint64_t n_out = (uint64_t)(np * out_plane);
        const uint32_t params[8] = {(uint32_t)n_out, (uint32_t)h, (uint32_t)w, (uint32_t)ho,
                                    (uint32_t)wo, (uint32_t)k, (uint32_t)s, (uint32_t)p};
        memcpy(&d.push[8], params, sizeof params);
        yolo_vk_grid_1d(&d, (n_out + r->ctx->wg - 1) / r->ctx->wg);
        if ((st = yolo_vk_record(r, &d)) != YOLO_OK) return st;
    }
    return YOLO_OK;
}

yolo_vk_op_fn yolo_vk_shape_op(int op) {
    switch (op) {
    case YOLO_OP_CONCAT: return op_concat;
    case YOLO_OP_SLICE:
    case YOLO_OP_SLICE_BWD: return op_slice;
    case YOLO_OP_UPSAMPLE_NEAREST:
    case YOLO_OP_UPSAMPLE_NEAREST_BWD: return op_upsample;
    case YOLO_OP_MAXPOOL2D:
    case YOLO_OP_MAXPOOL2D_BWD: return op_maxpool;
    default: return NULL;
    }
}
