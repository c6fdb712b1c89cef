/* The op table and helpers shared by the op glue files (vk_ops.h). */
#include "backend/vulkan/vk_ops.h"

#include <string.h>

yolo_vk_op_fn yolo_vk_op_for(int op) {
    yolo_vk_op_fn fn = yolo_vk_eltwise_op(op);
    if (!fn) fn = yolo_vk_shape_op(op);
    if (!fn) fn = yolo_vk_reduce_op(op);
    if (!fn) fn = yolo_vk_norm_op(op);
    if (!fn) fn = yolo_vk_gemm_op(op);
    if (!fn) fn = yolo_vk_optim_op(op);
    return fn;
}

int64_t yolo_vk_numel(const yolo_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

int64_t yolo_vk_max_elems(const yolo_vk_recorder *r, size_t elem_bytes) {
    /* room for the alignment skew of the descriptor's start (< 256 bytes) */
    const VkDeviceSize room = r->ctx->max_binding > 512 ? r->ctx->max_binding - 512 : 0;
    int64_t n = (int64_t)(room / elem_bytes) / 64 * 64;
    return n > 64 ? n : 64;
}

void yolo_vk_alias(yolo_vk_dispatch *d, int slot, int of) {
    d->bind[slot] = d->bind[of];
    d->push[slot] = d->push[of];
    d->used |= 1u << slot;
}

yolo_status yolo_vk_run_flat(yolo_vk_recorder *r, const yolo_vk_dispatch *tmpl, const yolo_vk_arg args[8],
                             int64_t n) {
    int64_t chunk = n;
    for (int s = 0; s < 8; s++)
        if (args[s].t && !args[s].whole) {
            int64_t m = yolo_vk_max_elems(r, 4);
            if (m < chunk) chunk = m;
        }
    if (chunk < 1) chunk = 1;
    for (int64_t e0 = 0; e0 < n || e0 == 0; e0 += chunk) {
        const int64_t len = n - e0 < chunk ? n - e0 : chunk;
        yolo_vk_dispatch d = *tmpl;
        for (int s = 0; s < 8; s++) {
            const yolo_vk_arg *a = &args[s];
            if (!a->t) continue;
            const uint32_t unit = (uint32_t)yolo_dtype_size(a->t->dtype);
            yolo_status st = a->whole ? yolo_vk_bind_tensor(r, &d, s, a->t, 0, yolo_vk_numel(a->t), a->write, unit)
                                      : yolo_vk_bind_tensor(r, &d, s, a->t, e0, len, a->write, unit);
            if (st != YOLO_OK) return st;
        }
        for (int s = 0; s < 8; s++)
            if (args[s].alias) yolo_vk_alias(&d, s, args[s].alias - 1);
        d.push[8] = (uint32_t)len;
        d.push[31] = (uint32_t)e0; /* PU(23): the chunk's first element */
        yolo_vk_grid_1d(&d, ((uint64_t)len + r->ctx->wg - 1) / r->ctx->wg);
        yolo_status st = yolo_vk_record(r, &d);
        if (st != YOLO_OK) return st;
        if (n == 0) break;
    }
    return YOLO_OK;
}

int yolo_vk_broadcast_groups(const yolo_tensor *big, const yolo_tensor *small, int64_t dims[4], bool bcast[4]) {
    int nd = 0;
    for (int i = 0; i < big->ndim; i++) {
        const int64_t bd = big->shape[i];
        if (bd == 1) continue;
        const int is = i - (big->ndim - small->ndim);
        const bool flag = (is >= 0 ? small->shape[is] : 1) != bd;
        if (nd > 0 && bcast[nd - 1] == flag) {
            dims[nd - 1] *= bd;
        } else {
            dims[nd] = bd;
            bcast[nd] = flag;
            nd++;
        }
    }
    if (nd == 0) {
        dims[0] = 1;
        bcast[0] = false;
        nd = 1;
    }
    return nd;
}
