/* Which 2-byte float dtypes the Vulkan kernels take (yolo_vk_check_dtypes).
 *
 * f16 reaches kernels in two ways: CAST, FILL and the copies (concat,
 * slice) take any one dtype, and amp's f16 activations (core/graph/narrow.c)
 * run through the few kernels built for them: BN_SILU writing f16,
 * UPSAMPLE_NEAREST and a same-shape ADD of f16, CONV2D and
 * CONV2D_BWD_WEIGHT reading an f16 x. Every other f16 or bf16 operand is
 * refused here, before recording, rather than misread as f32. */
#include <stdio.h>

#include "backend/vulkan/vk_ops.h"

static bool is_2byte_float(yolo_dtype d) { return d == YOLO_F16 || d == YOLO_BF16; }

/* "sources f16, f32; output f32" */
static const char *describe(const yolo_tensor *out, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "sources ");
    for (int s = 0; s < out->node->n_src && used < size; s++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", s ? ", " : "",
                                 out->node->src[s] ? yolo_dtype_name(out->node->src[s]->dtype) : "none");
    if (used < size) snprintf(buf + used, size - used, "; output %s", yolo_dtype_name(out->dtype));
    return buf;
}

/* All sources from `first` on are f32. */
static bool f32_from(const struct yolo_node *n, int first) {
    for (int s = first; s < n->n_src; s++)
        if (n->src[s] && n->src[s]->dtype != YOLO_F32) return false;
    return true;
}

/* amp's f16 activation kernels (the *_f16 shaders). */
static bool f16_activation_kernel(const yolo_tensor *out) {
    const struct yolo_node *n = out->node;
    const yolo_tensor *x = n->n_src > 0 ? n->src[0] : NULL;
    if (!x) return false;
    switch (n->op) {
    case YOLO_OP_BN_SILU: return out->dtype == YOLO_F16 && f32_from(n, 0);
    case YOLO_OP_UPSAMPLE_NEAREST: return out->dtype == YOLO_F16 && x->dtype == YOLO_F16;
    case YOLO_OP_ADD:
        return n->n_src == 2 && out->dtype == YOLO_F16 && x->dtype == YOLO_F16 && n->src[1]->dtype == YOLO_F16 &&
               yolo_tensor_same_shape(x, out) && yolo_tensor_same_shape(n->src[1], out);
    case YOLO_OP_CONV2D:
    case YOLO_OP_CONV2D_BWD_WEIGHT: return out->dtype == YOLO_F32 && x->dtype == YOLO_F16 && f32_from(n, 1);
    default: return false;
    }
}

yolo_status yolo_vk_check_dtypes(const yolo_vk_context *ctx, const yolo_tensor *out) {
    const struct yolo_node *n = out->node;
    bool any = is_2byte_float(out->dtype), bf16 = out->dtype == YOLO_BF16;
    for (int s = 0; s < n->n_src; s++)
        if (n->src[s]) {
            any |= is_2byte_float(n->src[s]->dtype);
            bf16 |= n->src[s]->dtype == YOLO_BF16;
        }
    if (!any) return YOLO_OK;
    char what[160];
    switch (n->op) {
    case YOLO_OP_CONCAT:
    case YOLO_OP_SLICE:
    case YOLO_OP_SLICE_BWD: /* bytes moved as they are: one dtype throughout */
        for (int s = 0; s < n->n_src; s++)
            if (n->src[s]->dtype != out->dtype)
                return yolo_error(YOLO_ERR_SHAPE, "%s: %s '%s': source %d is %s, the output %s (copies keep one dtype)",
                                  ctx->label, yolo_op_name(n->op), out->name, s, yolo_dtype_name(n->src[s]->dtype),
                                  yolo_dtype_name(out->dtype));
        return YOLO_OK;
    case YOLO_OP_ZERO: return YOLO_OK;
    case YOLO_OP_CAST:
    case YOLO_OP_FILL:
        if (!bf16) return YOLO_OK;
        break;
    default:
        if (f16_activation_kernel(out)) {
            if (ctx->f16_storage) return YOLO_OK;
            return yolo_error(YOLO_ERR_UNSUPPORTED,
                              "%s: %s '%s' (%s) needs 16-bit storage (storageBuffer16BitAccess), which this device "
                              "lacks or YOLO_VK_DISABLE_F16 turned off",
                              ctx->label, yolo_op_name(n->op), out->name, describe(out, what, sizeof what));
        }
        break;
    }
    return yolo_error(YOLO_ERR_UNSUPPORTED,
                      "%s: %s '%s' has no Vulkan kernel for %s: 2-byte floats run only in CAST, FILL, ZERO, the "
                      "copies, and amp's f16 activations (BN_SILU writing f16; UPSAMPLE_NEAREST and a same-shape ADD "
                      "of f16; CONV2D and CONV2D_BWD_WEIGHT reading an f16 x)",
                      ctx->label, yolo_op_name(n->op), out->name, describe(out, what, sizeof what));
}
