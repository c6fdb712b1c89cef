/* The YOLOv8 Classify head (Ultralytics ultralytics/nn/modules/head.py
 * Classify): Conv 1x1 to 1280 -> global average pool -> dropout -> Linear.
 * yaml args [c2 (= nc), k=1, s=1, p=None, g=1]; the 1280 is not scaled.
 *
 * Output of its forward: t[0] = [N, nc] logits in training, softmax
 * probabilities in eval. Several inputs are concatenated on channels
 * first, as Ultralytics does.
 *
 * Dropout: Ultralytics' Dropout module always exists (p = the `dropout`
 * train arg, 0 by default) and counts as a layer. A non-zero rate is "not
 * built yet": the graph has no dropout op, so forward in training fails
 * with YOLO_ERR_UNSUPPORTED until one exists (classify_head_set_dropout). */
#include <stdio.h>

#include "classify_modules.h"

#define CLASSIFY_HIDDEN_CHANNELS 1280 /* efficientnet_b0 size */

typedef struct classify_head {
    int c1, nc;
    double dropout;
    yolo_conv_block conv;
    yolo_linear_layer linear;
} classify_head;

static yolo_status classify_build(yolo_module_ctx *ctx) {
    int c1 = 0;
    for (int i = 0; i < yolo_module_n_inputs(ctx); i++) c1 += yolo_module_in_channels(ctx, i);
    int64_t c2, k, s, p, g;
    int model_nc = yolo_module_nc(ctx);
    yolo_status st;
    if ((st = yolo_module_arg_int(ctx, 0, model_nc > 0 ? model_nc : 1000, &c2)) ||
        (st = yolo_module_arg_int(ctx, 1, 1, &k)) || (st = yolo_module_arg_int(ctx, 2, 1, &s)) ||
        (st = yolo_module_arg_int(ctx, 3, YOLO_AUTOPAD, &p)) || (st = yolo_module_arg_int(ctx, 4, 1, &g)))
        return st;
    if (c2 < 1 || c2 > 1000000) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "classes %lld out of range", (long long)c2);
    /* the width rule, as parse_model applies it to Classify's c2 (nc is left alone) */
    c2 = yolo_module_scale_channels(ctx, (int)c2);
    classify_head *h = yolo_module_state_alloc(ctx, sizeof(*h));
    if (!h) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    h->c1 = c1;
    h->nc = (int)c2;
    if ((st = yolo_conv_block_init(ctx, &h->conv, "conv", c1, CLASSIFY_HIDDEN_CHANNELS, (int)k, (int)s, (int)p, (int)g,
                                   1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_linear_layer_init(ctx, &h->linear, "linear", CLASSIFY_HIDDEN_CHANNELS, h->nc)))
        return st;
    yolo_module_add_leaves(ctx, 2); /* AdaptiveAvgPool2d and Dropout */
    yolo_module_set_args_text(ctx, "[%d, %d]", c1, h->nc);
    yolo_module_set_out_channels(ctx, h->nc);
    return YOLO_OK;
}

static yolo_status classify_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                    yolo_module_outputs *out) {
    classify_head *h = state;
    yolo_graph *g = f->graph;
    if (f->training && h->dropout > 0)
        return yolo_error(YOLO_ERR_UNSUPPORTED, "Classify: dropout=%g is not built yet (no dropout op); use dropout=0",
                          h->dropout);
    yolo_tensor *x = n_in == 1 ? in[0] : yolo_concat(g, n_in, in, 1);
    x = yolo_global_avgpool(g, yolo_conv_block_forward(f, &h->conv, x));
    int64_t flat[2] = {x ? x->shape[0] : 0, CLASSIFY_HIDDEN_CHANNELS};
    x = x ? yolo_linear_layer_forward(f, &h->linear, yolo_reshape(g, x, 2, flat)) : NULL;
    if (x && !f->training) x = yolo_softmax(g, x, 1);
    out->n = 1;
    out->t[0] = x;
    return x ? YOLO_OK : (yolo_graph_status(g) ? yolo_graph_status(g) : YOLO_ERR_SHAPE);
}

yolo_status classify_head_set_dropout(void *state, double p) {
    if (!(p >= 0 && p < 1)) return yolo_error(YOLO_ERR_CONFIG, "Classify: dropout %g must be in [0, 1)", p);
    ((classify_head *)state)->dropout = p;
    return YOLO_OK;
}

static const yolo_module_type classify_module_type = {
    .name = "Classify",
    .summary = "YOLOv8 classification head: Conv 1x1 to 1280, global average pool, dropout, Linear",
    .build = classify_build,
    .forward = classify_forward,
};

const yolo_module_type *const classify_modules[CLASSIFY_N_MODULES] = {&classify_module_type};
