/* Reductions (SUM, SUM_SQUARES, SUM_TO and the generic yolo_vk_reduce that
 * batch norm and split-K use) and softmax / log-softmax with backward.
 *
 * No invocation loops longer than the device's loop budget (lavapipe
 * silently stops a shader after 65,535 loop iterations): long reductions
 * become workgroup trees over chunks, then a pass over the chunk sums. */
#include <string.h>

#include "backend/vulkan/vk_ops.h"

#define REDUCE_ITER 16 /* values per invocation per chunk in the workgroup path */

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static int64_t prod4(const int64_t v[4]) { return v[0] * v[1] * v[2] * v[3]; }

/* Elements spanned by the view, from its first. */
static int64_t extent(const yolo_vk_reduce_args *a) {
    int64_t e = 1;
    for (int d = 0; d < 4; d++) e += (a->kept[d] * a->reduced[d] - 1) * a->stride[d];
    return e;
}

/* The view fits one binding: one pass (plus one over chunk sums). */
static yolo_status reduce_direct(yolo_vk_recorder *r, const yolo_vk_reduce_args *a) {
    yolo_vk_context *ctx = r->ctx;
    const int64_t n_out = prod4(a->kept), total = prod4(a->reduced);
    const int64_t x_elems = extent(a);
    /* one invocation per output: each r costs ~9 loop iterations (index math) */
    const bool small = (total <= 64 || (total <= 1024 && n_out >= 256)) && (uint64_t)total * 10 <= ctx->loop_budget;
    const int64_t chunk = (int64_t)ctx->wg * REDUCE_ITER;
    const int64_t n_chunks = small ? 1 : (total + chunk - 1) / chunk;
    if (n_chunks > 65535)
        return yolo_error(YOLO_ERR_UNSUPPORTED, "vulkan: a reduction of %lld values is too long", (long long)total);
    const yolo_buffer *out_buf = a->out_buf;
    VkDeviceSize out_off = a->out_offset;
    yolo_buffer *partial = NULL;
    yolo_status st;
    if (n_chunks > 1) {
        if ((st = yolo_vk_scratch(r, (size_t)(n_chunks * n_out) * 4, &partial)) != YOLO_OK) return st;
        out_buf = partial;
        out_off = 0;
    }
    yolo_vk_dispatch d;
    yolo_vk_dispatch_init(&d, ctx->subgroup && !small ? "reduce_subgroup" : "reduce");
    d.spec[0] = ctx->wg;
    d.spec[1] = (uint32_t)a->mode;
    d.spec[2] = small;
    d.spec[3] = REDUCE_ITER;
    d.n_spec = 4;
    st = yolo_vk_bind(r, &d, 0, a->x_buf, a->x_offset, (VkDeviceSize)x_elems * 4, false, 4);
    if (st == YOLO_OK && a->mode == 3)
        st = yolo_vk_bind(r, &d, 1, a->y_buf, a->y_offset, (VkDeviceSize)x_elems * 4, false, 4);
    if (st == YOLO_OK && a->mode >= 2)
        st = yolo_vk_bind(r, &d, 2, a->c_buf, a->c_offset, (VkDeviceSize)n_out * 4, false, 4);
    if (st == YOLO_OK)
        st = yolo_vk_bind(r, &d, 3, out_buf, out_off, (VkDeviceSize)(n_out * (n_chunks > 1 ? n_chunks : 1)) * 4,
                          true, 4);
    if (st != YOLO_OK) return st;
    if (a->mode != 3) yolo_vk_alias(&d, 1, 0);
    if (a->mode < 2) yolo_vk_alias(&d, 2, 0);
    d.push[8] = (uint32_t)n_out;
    d.push[9] = (uint32_t)total;
    d.push[10] = (uint32_t)chunk;
    d.push[11] = (uint32_t)n_chunks;
    for (int k = 0; k < 4; k++) {
        d.push[12 + k] = (uint32_t)a->kept[k];
        d.push[16 + k] = (uint32_t)a->reduced[k];
        d.push[20 + k] = (uint32_t)a->stride[k];
    }
    d.push[24] = float_bits(a->scale);
    d.push[25] = a->accumulate;
    if (small) {
        yolo_vk_grid_1d(&d, ((uint64_t)n_out + ctx->wg - 1) / ctx->wg);
    } else {
        d.groups[0] = (uint32_t)n_chunks;
        d.groups[1] = (uint32_t)(n_out < 65535 ? n_out : 65535);
        d.groups[2] = (uint32_t)((n_out + 65534) / 65535);
    }
    if ((st = yolo_vk_record(r, &d)) != YOLO_OK) return st;
    if (n_chunks == 1) return YOLO_OK;
    yolo_vk_reduce_args second = {.x_buf = partial,
                                  .out_buf = a->out_buf,
                                  .out_offset = a->out_offset,
                                  .kept = {1, 1, 1, n_out},
                                  .reduced = {1, 1, n_chunks, 1},
                                  .stride = {0, 0, n_out, 1},
                                  .mode = 0,
                                  .scale = a->scale,
                                  .accumulate = a->accumulate};
    return yolo_vk_reduce(r, &second);
}

yolo_status yolo_vk_reduce(yolo_vk_recorder *r, const yolo_vk_reduce_args *a) {
    const int64_t cap = yolo_vk_max_elems(r, 4);
    if (extent(a) <= cap) return reduce_direct(r, a);
    /* Too large for one binding: split along the outermost dimension. */
    int d0 = 0;
    while (d0 < 3 && a->kept[d0] * a->reduced[d0] == 1) d0++;
    const int64_t rows = a->kept[d0] * a->reduced[d0];
    int64_t per = cap / (a->stride[d0] > 0 ? a->stride[d0] : 1);
    if (per < 1) per = 1;
    const bool reduced = a->reduced[d0] > 1;
    int64_t inner_out = 1; /* outputs per kept row */
    for (int d = d0 + 1; d < 4; d++) inner_out *= a->kept[d];
    const int64_t n_out = prod4(a->kept);
    const int64_t n_sub = (rows + per - 1) / per;
    yolo_buffer *partial = NULL;
    yolo_status st;
    if (reduced && (st = yolo_vk_scratch(r, (size_t)(n_sub * n_out) * 4, &partial)) != YOLO_OK) return st;
    for (int64_t i = 0; i < n_sub; i++) {
        const int64_t r0 = i * per, nr = rows - r0 < per ? rows - r0 : per;
        yolo_vk_reduce_args s = *a;
        s.x_offset += (VkDeviceSize)(r0 * a->stride[d0]) * 4;
        s.y_offset += (VkDeviceSize)(r0 * a->stride[d0]) * 4;
        if (reduced) {
            s.reduced[d0] = nr;
            s.out_buf = partial;
            s.out_offset = (VkDeviceSize)(i * n_out) * 4;
            s.scale = 1.0f;
            s.accumulate = false;
        } else {
            s.kept[d0] = nr;
            s.out_offset += (VkDeviceSize)(r0 * inner_out) * 4;
            s.c_offset += (VkDeviceSize)(r0 * inner_out) * 4;
        }
        if ((st = yolo_vk_reduce(r, &s)) != YOLO_OK) return st;
    }
    if (!reduced) return YOLO_OK;
    yolo_vk_reduce_args fin = {.x_buf = partial,
                               .out_buf = a->out_buf,
                               .out_offset = a->out_offset,
                               .kept = {1, 1, 1, n_out},
                               .reduced = {1, 1, n_sub, 1},
                               .stride = {0, 0, n_out, 1},
                               .mode = 0,
                               .scale = a->scale,
                               .accumulate = a->accumulate};
    return yolo_vk_reduce(r, &fin);
}

/* ---- SUM, SUM_SQUARES, SUM_TO ---- */

static yolo_status op_sum(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    yolo_vk_reduce_args a = {.x_buf = x->buffer,
                             .x_offset = x->offset,
                             .out_buf = out->buffer,
                             .out_offset = out->offset,
                             .kept = {1, 1, 1, 1},
                             .reduced = {1, 1, 1, yolo_vk_numel(x)},
                             .stride = {0, 0, 0, 1},
                             .mode = out->node->op == YOLO_OP_SUM_SQUARES ? 1 : 0,
                             .scale = 1.0f};
    return yolo_vk_reduce(r, &a);
}

static yolo_status op_sum_to(yolo_vk_recorder *r, const yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    int64_t dims[4];
    bool bc[4];
    const int nd = yolo_vk_broadcast_groups(x, out, dims, bc);
    yolo_vk_reduce_args a = {.x_buf = x->buffer,
                             .x_offset = x->offset,
                             .out_buf = out->buffer,
                             .out_offset = out->offset,
                             .kept = {1, 1, 1, 1},
                             .reduced = {1, 1, 1, 1},
                             .stride = {0, 0, 0, 0},
                             .mode = 0,
                             .scale = 1.0f};
    int64_t stride = 1;
    for (int g = nd - 1, d = 3; g >= 0; g--, d--) {
        if (bc[g]) a.reduced[d] = dims[g];
        else a.kept[d] = dims[g];
        a.stride[d] = stride;
        stride *= dims[g];
    }
    return yolo_vk_reduce(r, &a);
}

/* ---- softmax family ---- */

static yolo_status op_softmax(yolo_vk_recorder *r, const yolo_tensor *out) {
    int axis = out->node->iparams[0];
    if (axis < 0) axis += out->ndim;
    if (axis < 0 || axis >= out->ndim)
        return yolo_error(YOLO_ERR_ARG, "%s: axis %d out of range for a %d-d tensor", yolo_op_name(out->node->op),
                          out->node->iparams[0], out->ndim);
    int64_t outer = 1, inner = 1;
    const int64_t len = out->shape[axis];
    for (int i = 0; i < axis; i++) outer *= out->shape[i];
    for (int i = axis + 1; i < out->ndim; i++) inner *= out->shape[i];
    const uint32_t code = out->node->op == YOLO_OP_SOFTMAX ? 0 : out->node->op == YOLO_OP_LOG_SOFTMAX ? 1
                          : out->node->op == YOLO_OP_SOFTMAX_BWD ? 2 : 3;
    const bool backward = code >= 2;
    /* one invocation per row while three passes over the row stay short */
    const bool row_wg = (uint64_t)len * 4 > r->ctx->loop_budget / 4 || len > 2048;
    const int64_t row_elems = len * inner;
    int64_t per = yolo_vk_max_elems(r, 4) / row_elems;
    if (per < 1) per = 1;
    for (int64_t o0 = 0; o0 < outer; o0 += per) {
        const int64_t no = outer - o0 < per ? outer - o0 : per;
        yolo_vk_dispatch d;
        yolo_vk_dispatch_init(&d, "softmax");
        d.spec[0] = r->ctx->wg;
        d.spec[1] = code;
        d.spec[2] = row_wg;
        d.n_spec = 3;
        yolo_status st = yolo_vk_bind_tensor(r, &d, 0, out->node->src[0], o0 * row_elems, no * row_elems, false, 4);
        if (st == YOLO_OK && backward)
            st = yolo_vk_bind_tensor(r, &d, 1, out->node->src[1], o0 * row_elems, no * row_elems, false, 4);
        if (st == YOLO_OK) st = yolo_vk_bind_tensor(r, &d, 2, out, o0 * row_elems, no * row_elems, true, 4);
        if (st != YOLO_OK) return st;
        if (!backward) yolo_vk_alias(&d, 1, 0);
        d.push[8] = (uint32_t)no;
        d.push[9] = (uint32_t)len;
        d.push[10] = (uint32_t)inner;
        const uint64_t rows = (uint64_t)(no * inner);
        yolo_vk_grid_1d(&d, row_wg ? rows : (rows + r->ctx->wg - 1) / r->ctx->wg);
        if ((st = yolo_vk_record(r, &d)) != YOLO_OK) return st;
    }
    return YOLO_OK;
}

yolo_vk_op_fn yolo_vk_reduce_op(int op) {
    switch (op) {
    case YOLO_OP_SUM:
    case YOLO_OP_SUM_SQUARES: return op_sum;
    case YOLO_OP_SUM_TO: return op_sum_to;
    case YOLO_OP_SOFTMAX:
    case YOLO_OP_SOFTMAX_BWD:
    case YOLO_OP_LOG_SOFTMAX:
    case YOLO_OP_LOG_SOFTMAX_BWD: return op_softmax;
    default: return NULL;
    }
}
