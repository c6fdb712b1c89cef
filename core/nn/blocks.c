/* Blocks shared by modules and plugins: Ultralytics' Conv (conv + BN +
 * act), plain nn.Conv2d, nn.ConvTranspose2d and nn.Linear. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/model_internal.h"

static yolo_tensor *param(yolo_module_ctx *ctx, const char *name, const char *leaf, int ndim, const int64_t *shape,
                          yolo_param_role role, bool trainable, yolo_param_init init, double value) {
    char buf[YOLO_NAME_MAX];
    if (!module_join_name(ctx, buf, sizeof(buf), name, leaf)) return NULL;
    return yolo_module_param(ctx, buf, ndim, shape, role, trainable, init, value);
}

/* ---- Conv ---- */

yolo_status yolo_conv_block_init(yolo_module_ctx *ctx, yolo_conv_block *b, const char *name, int c1, int c2, int k,
                                 int s, int p, int g, int d, yolo_act act) {
    memset(b, 0, sizeof(*b));
    if (g < 1) g = 1;
    if (d < 1) d = 1;
    if (c1 < 1 || c2 < 1 || k < 1 || s < 1 || c1 % g || c2 % g)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG,
                                 "Conv %s: invalid shape c1=%d c2=%d k=%d s=%d g=%d (channels must divide by groups)",
                                 name ? name : "", c1, c2, k, s, g);
    if (p == YOLO_AUTOPAD) p = (d * (k - 1) + 1) / 2; /* autopad: 'same' for odd kernels */
    if (p < 0) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "Conv %s: padding %d < 0", name ? name : "", p);
    *b = (yolo_conv_block){.c1 = c1, .c2 = c2, .k = k, .s = s, .p = p, .g = g, .d = d,
                           .act = yolo_module_resolve_act(ctx, act)};
    int64_t wshape[4] = {c2, c1 / g, k, k}, cshape[1] = {c2};
    char conv_name[YOLO_NAME_MAX], bn_name[YOLO_NAME_MAX];
    if (!module_join_name(ctx, conv_name, sizeof(conv_name), name, "conv") ||
        !module_join_name(ctx, bn_name, sizeof(bn_name), name, "bn"))
        return YOLO_ERR_ARG;
    b->weight = param(ctx, conv_name, "weight", 4, wshape, YOLO_PARAM_WEIGHT, true, YOLO_INIT_KAIMING_UNIFORM,
                      (double)(c1 / g) * k * k);
    if (!b->weight) return YOLO_ERR_NOMEM;
    b->bn_weight = param(ctx, bn_name, "weight", 1, cshape, YOLO_PARAM_NORM_WEIGHT, true, YOLO_INIT_ONE, 0);
    if (!b->bn_weight) return YOLO_ERR_NOMEM;
    b->bn_bias = param(ctx, bn_name, "bias", 1, cshape, YOLO_PARAM_BIAS, true, YOLO_INIT_ZERO, 0);
    if (!b->bn_bias) return YOLO_ERR_NOMEM;
    b->bn_mean = param(ctx, bn_name, "running_mean", 1, cshape, YOLO_PARAM_BUFFER, false, YOLO_INIT_ZERO, 0);
    if (!b->bn_mean) return YOLO_ERR_NOMEM;
    b->bn_var = param(ctx, bn_name, "running_var", 1, cshape, YOLO_PARAM_BUFFER, false, YOLO_INIT_ONE, 0);
    if (!b->bn_var) return YOLO_ERR_NOMEM;
    /* Ultralytics shares one default activation module between all Convs; an
     * explicit one (or the Identity of act=False) is a module of its own. */
    return model_register_conv(ctx, b, act != YOLO_ACT_DEFAULT);
}

yolo_tensor *yolo_conv_block_forward(const yolo_forward_ctx *f, const yolo_conv_block *b, yolo_tensor *x) {
    yolo_conv2d_params p = {.stride_h = b->s, .stride_w = b->s, .pad_h = b->p, .pad_w = b->p,
                            .dilation_h = b->d, .dilation_w = b->d, .groups = b->g};
    yolo_tensor *y = yolo_conv2d(f->graph, x, b->weight, b->bias, &p);
    if (b->bn_weight)
        /* a frozen batch norm (freeze) keeps its running statistics: eval mode */
        y = yolo_batch_norm(f->graph, y, b->bn_weight, b->bn_bias, b->bn_mean, b->bn_var,
                            f->training && b->bn_weight->requires_grad,
                            f->model ? f->model->bn_momentum : YOLO_BN_MOMENTUM,
                            f->model ? f->model->bn_eps : YOLO_BN_EPS);
    return y ? yolo_act_apply(f->graph, b->act, y) : NULL;
}

/* ---- nn.Conv2d / nn.ConvTranspose2d ---- */

yolo_status yolo_conv_layer_init(yolo_module_ctx *ctx, yolo_conv_layer *l, const char *name, int c1, int c2, int k,
                                 int s, int p, int g, bool bias, bool trainable) {
    memset(l, 0, sizeof(*l));
    if (g < 1) g = 1;
    if (p == YOLO_AUTOPAD) p = k / 2;
    if (c1 < 1 || c2 < 1 || k < 1 || s < 1 || p < 0 || c1 % g || c2 % g)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "Conv2d %s: invalid shape c1=%d c2=%d k=%d s=%d p=%d g=%d",
                                 name ? name : "", c1, c2, k, s, p, g);
    *l = (yolo_conv_layer){.c1 = c1, .c2 = c2, .k = k, .s = s, .p = p, .g = g};
    int64_t wshape[4] = {c2, c1 / g, k, k}, bshape[1] = {c2};
    double fan_in = (double)(c1 / g) * k * k;
    l->weight = param(ctx, name, "weight", 4, wshape, YOLO_PARAM_WEIGHT, trainable, YOLO_INIT_KAIMING_UNIFORM, fan_in);
    if (!l->weight) return YOLO_ERR_NOMEM;
    if (bias) {
        l->bias = param(ctx, name, "bias", 1, bshape, YOLO_PARAM_BIAS, trainable, YOLO_INIT_UNIFORM, 1.0 / sqrt(fan_in));
        if (!l->bias) return YOLO_ERR_NOMEM;
    }
    yolo_module_add_leaves(ctx, 1);
    return YOLO_OK;
}

yolo_tensor *yolo_conv_layer_forward(const yolo_forward_ctx *f, const yolo_conv_layer *l, yolo_tensor *x) {
    yolo_conv2d_params p = {.stride_h = l->s, .stride_w = l->s, .pad_h = l->p, .pad_w = l->p, .groups = l->g};
    return yolo_conv2d(f->graph, x, l->weight, l->bias, &p);
}

yolo_status yolo_conv_transpose_layer_init(yolo_module_ctx *ctx, yolo_conv_layer *l, const char *name, int c1,
                                           int c2, int k, int s, int p, bool bias) {
    memset(l, 0, sizeof(*l));
    if (c1 < 1 || c2 < 1 || k < 1 || s < 1 || p < 0)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "ConvTranspose2d %s: invalid shape c1=%d c2=%d k=%d s=%d p=%d",
                                 name ? name : "", c1, c2, k, s, p);
    *l = (yolo_conv_layer){.c1 = c1, .c2 = c2, .k = k, .s = s, .p = p, .g = 1};
    /* PyTorch computes the fan-in of a transposed conv from weight dim 1 (its out channels) */
    int64_t wshape[4] = {c1, c2, k, k}, bshape[1] = {c2};
    double fan_in = (double)c2 * k * k;
    l->weight = param(ctx, name, "weight", 4, wshape, YOLO_PARAM_WEIGHT, true, YOLO_INIT_KAIMING_UNIFORM, fan_in);
    if (!l->weight) return YOLO_ERR_NOMEM;
    if (bias) {
        l->bias = param(ctx, name, "bias", 1, bshape, YOLO_PARAM_BIAS, true, YOLO_INIT_UNIFORM, 1.0 / sqrt(fan_in));
        if (!l->bias) return YOLO_ERR_NOMEM;
    }
    yolo_module_add_leaves(ctx, 1);
    return YOLO_OK;
}

yolo_tensor *yolo_conv_transpose_layer_forward(const yolo_forward_ctx *f, const yolo_conv_layer *l, yolo_tensor *x) {
    yolo_conv2d_params p = {.stride_h = l->s, .stride_w = l->s, .pad_h = l->p, .pad_w = l->p};
    return yolo_conv_transpose2d(f->graph, x, l->weight, l->bias, &p);
}

/* ---- nn.Linear ---- */

yolo_status yolo_linear_layer_init(yolo_module_ctx *ctx, yolo_linear_layer *l, const char *name, int in, int out) {
    memset(l, 0, sizeof(*l));
    if (in < 1 || out < 1)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "Linear %s: invalid shape in=%d out=%d", name ? name : "", in,
                                 out);
    *l = (yolo_linear_layer){.in = in, .out = out};
    int64_t wshape[2] = {out, in}, bshape[1] = {out};
    l->weight = param(ctx, name, "weight", 2, wshape, YOLO_PARAM_WEIGHT, true, YOLO_INIT_KAIMING_UNIFORM, in);
    if (!l->weight) return YOLO_ERR_NOMEM;
    l->bias = param(ctx, name, "bias", 1, bshape, YOLO_PARAM_BIAS, true, YOLO_INIT_UNIFORM, 1.0 / sqrt((double)in));
    if (!l->bias) return YOLO_ERR_NOMEM;
    yolo_module_add_leaves(ctx, 1);
    return YOLO_OK;
}

yolo_tensor *yolo_linear_layer_forward(const yolo_forward_ctx *f, const yolo_linear_layer *l, yolo_tensor *x) {
    return yolo_linear(f->graph, x, l->weight, l->bias);
}
