/* YOLOv9's GELAN modules (Ultralytics' ultralytics/nn/modules/block.py and
 * conv.py): RepNCSPELAN4 and ELAN1, AConv and ADown, SPPELAN, with RepCSP,
 * RepBottleneck and RepConv inside. yaml args as parse_model passes them
 * (c2, the first, scaled by width; the others as written):
 *
 * RepConv(c1, c2, k=3, s=1, p=1): SiLU(conv1(x) + conv2(x)), conv1 a kxk
 *   Conv and conv2 a 1x1 Conv, both without activation; its SiLU is
 *   RepConv's own class-wide module (not the yaml's `activation:`), one
 *   leaf for the whole model. Fusing folds conv2 into conv1's centre.
 * RepBottleneck(c, c, shortcut=True, e=1.0): x + cv2(cv1(x)), cv1 a
 *   RepConv, cv2 a 3x3 Conv.
 * RepCSP(c1, c2, n): C3 with n RepBottlenecks: cv3(cat(m(cv1(x)), cv2(x))),
 *   c_ = c2/2.
 * RepNCSPELAN4(c1, c2, c3, c4, n=1): a, b = chunk(cv1(x)) (c1 -> c3),
 *   y2 = cv2(b), y3 = cv3(y2), cv4(cat(a, b, y2, y3)) (-> c2); cv2 =
 *   Sequential(RepCSP(c3/2, c4, n), Conv(c4, c4, 3)), cv3 the same from c4.
 * ELAN1(c1, c2, c3, c4): the same with cv2 = Conv(c3/2, c4, 3) and cv3 =
 *   Conv(c4, c4, 3).
 * AConv(c1, c2): cv1(avg_pool2d(x, 2, 1)), cv1 Conv(c1, c2, 3, 2, 1).
 * ADown(c1, c2): x = avg_pool2d(x, 2, 1); a, b = chunk(x); cat(cv1(a),
 *   cv2(max_pool2d(b, 3, 2, 1))), cv1 Conv(c1/2, c2/2, 3, 2, 1), cv2
 *   Conv(c1/2, c2/2, 1).
 * SPPELAN(c1, c2, c3, k=5): y = [cv1(x)] (c1 -> c3), three max pools
 *   (k, 1, k/2) chained, cv5(cat(y)) (4 c3 -> c2).
 *
 * avg_pool2d(x, 2, 1) is functional in Ultralytics (no module, and thop
 * counts no FLOPs for it): here a depthwise 2x2 convolution whose weights
 * are a graph constant of 1/4 (exact in every precision). */
#include <stdio.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "nn/model_internal.h"

typedef struct repconv {
    yolo_conv_block conv1, conv2;
    bool fused;
} repconv;

typedef struct rep_bottleneck {
    repconv cv1;
    yolo_conv_block cv2;
    bool add;
} rep_bottleneck;

typedef struct rep_csp {
    int n;
    yolo_conv_block cv1, cv2, cv3;
    rep_bottleneck *m;
} rep_csp;

typedef struct elan_block {
    bool rep; /* RepNCSPELAN4; else ELAN1 */
    yolo_conv_block cv1, cv4;
    rep_csp csp[2];            /* rep: cv2.0, cv3.0 */
    yolo_conv_block conv[2];   /* rep: cv2.1, cv3.1; else cv2, cv3 */
} elan_block;

typedef struct down_block {
    bool adown;
    yolo_conv_block cv1, cv2;
} down_block;

typedef struct sppelan_block {
    int k;
    yolo_conv_block cv1, cv5;
} sppelan_block;

/* ---- RepConv ---- */

/* yolo_model_fuse's step for a RepConv (Ultralytics' RepConv.fuse_convs),
 * after the batch-norm fold: conv2's 1x1 kernel added at the centre of
 * conv1's 3x3 (paddings 1 and 0 keep them aligned), biases summed; conv2
 * leaves the model and conv1 is the bare nn.Conv2d Ultralytics keeps. */
static yolo_status repconv_fuse(yolo_model *m, void *block) {
    repconv *r = block;
    if (r->fused) return YOLO_OK;
    yolo_status st = model_merge_centred_conv(m, &r->conv1, &r->conv2);
    if (st) return yolo_error_context(st, "RepConv fuse");
    r->fused = true;
    return YOLO_OK;
}

static yolo_status repconv_init(yolo_module_ctx *ctx, repconv *r, const char *name, int c1, int c2) {
    yolo_status st;
    if ((st = module_conv_at(ctx, &r->conv1, name, "conv1", c1, c2, 3, 1, 1, 1, YOLO_ACT_IDENTITY)) ||
        (st = module_conv_at(ctx, &r->conv2, name, "conv2", c1, c2, 1, 1, 0, 1, YOLO_ACT_IDENTITY)))
        return st;
    if (!ctx->model->repconv_act_counted) { /* RepConv.default_act: one module shared by every RepConv */
        ctx->model->repconv_act_counted = true;
        yolo_module_add_leaves(ctx, 1);
    }
    return model_register_fuse(ctx, repconv_fuse, r);
}

static yolo_tensor *repconv_forward(const yolo_forward_ctx *f, const repconv *r, yolo_tensor *x) {
    yolo_tensor *y = yolo_conv_block_forward(f, &r->conv1, x);
    if (y && !r->fused) {
        yolo_tensor *y1 = yolo_conv_block_forward(f, &r->conv2, x);
        y = y1 ? yolo_add(f->graph, y, y1) : NULL;
    }
    return y ? yolo_silu(f->graph, y) : NULL;
}

/* ---- RepCSP with its RepBottlenecks ---- */

static yolo_status rep_csp_init(yolo_module_ctx *ctx, rep_csp *b, const char *name, int c1, int c2, int n) {
    const int c_ = c2 / 2;
    if (c_ < 1 || n < 0) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "RepCSP %s: c2 %d, n %d", name, c2, n);
    yolo_status st;
    if ((st = module_conv_at(ctx, &b->cv1, name, "cv1", c1, c_, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)) ||
        (st = module_conv_at(ctx, &b->cv2, name, "cv2", c1, c_, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)) ||
        (st = module_conv_at(ctx, &b->cv3, name, "cv3", 2 * c_, c2, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)))
        return st;
    b->n = n;
    if (!(b->m = module_alloc(ctx, sizeof(rep_bottleneck) * (size_t)(n + 1))))
        return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        char m[64], leaf[32];
        snprintf(leaf, sizeof(leaf), "m.%d", i);
        if (!module_join_name(ctx, m, sizeof(m), name, leaf)) return YOLO_ERR_ARG;
        char cv1[80];
        snprintf(cv1, sizeof(cv1), "%s.cv1", m);
        if ((st = repconv_init(ctx, &b->m[i].cv1, cv1, c_, c_)) ||
            (st = module_conv_at(ctx, &b->m[i].cv2, m, "cv2", c_, c_, 3, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)))
            return st;
        b->m[i].add = true; /* shortcut and c1 == c2 */
    }
    return YOLO_OK;
}

static yolo_tensor *rep_csp_forward(const yolo_forward_ctx *f, const rep_csp *b, yolo_tensor *x) {
    yolo_tensor *y = yolo_conv_block_forward(f, &b->cv1, x);
    for (int i = 0; y && i < b->n; i++) {
        yolo_tensor *z = yolo_conv_block_forward(f, &b->m[i].cv2, repconv_forward(f, &b->m[i].cv1, y));
        y = z && b->m[i].add ? yolo_add(f->graph, y, z) : z;
    }
    yolo_tensor *parts[2] = {y, yolo_conv_block_forward(f, &b->cv2, x)};
    return parts[0] && parts[1] ? yolo_conv_block_forward(f, &b->cv3, yolo_concat(f->graph, 2, parts, 1)) : NULL;
}

/* ---- RepNCSPELAN4 and ELAN1 ---- */

static yolo_status elan_build(yolo_module_ctx *ctx, bool rep) {
    int c1, c2;
    int64_t c3, c4, n = 1;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_int(ctx, 1, 0, &c3)) || (st = yolo_module_arg_int(ctx, 2, 0, &c4)) ||
        (rep && (st = yolo_module_arg_int(ctx, 3, 1, &n))))
        return st;
    if (c3 < 2 || c3 % 2 || c3 > 65536 || c4 < 1 || c4 > 65536 || n < 0 || n > 64)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "c3 %lld (even, >= 2), c4 %lld (>= 1) or n %lld out of range",
                                 (long long)c3, (long long)c4, (long long)n);
    elan_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    b->rep = rep;
    const int h = (int)c3 / 2, d = (int)c4;
    if ((st = module_conv_at(ctx, &b->cv1, "", "cv1", c1, (int)c3, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT))) return st;
    if (rep) {
        if ((st = rep_csp_init(ctx, &b->csp[0], "cv2.0", h, d, (int)n)) ||
            (st = module_conv_at(ctx, &b->conv[0], "", "cv2.1", d, d, 3, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)) ||
            (st = rep_csp_init(ctx, &b->csp[1], "cv3.0", d, d, (int)n)) ||
            (st = module_conv_at(ctx, &b->conv[1], "", "cv3.1", d, d, 3, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)))
            return st;
    } else if ((st = module_conv_at(ctx, &b->conv[0], "", "cv2", h, d, 3, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)) ||
               (st = module_conv_at(ctx, &b->conv[1], "", "cv3", d, d, 3, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT))) {
        return st;
    }
    if ((st = module_conv_at(ctx, &b->cv4, "", "cv4", (int)c3 + 2 * d, c2, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)))
        return st;
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d%s]", c1, c2, module_args_tail(ctx, 1, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status repncspelan4_build(yolo_module_ctx *ctx) { return elan_build(ctx, true); }
static yolo_status elan1_build(yolo_module_ctx *ctx) { return elan_build(ctx, false); }

static yolo_status elan_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                yolo_module_outputs *out) {
    (void)n_in;
    const elan_block *b = state;
    yolo_tensor *y[4] = {0};
    yolo_tensor *x = yolo_conv_block_forward(f, &b->cv1, in[0]);
    if (!x || !yolo_chunk(f->graph, x, 2, 1, y)) return module_one_output(out, NULL);
    for (int i = 0; i < 2 && y[1 + i]; i++) {
        yolo_tensor *t = b->rep ? rep_csp_forward(f, &b->csp[i], y[1 + i]) : y[1 + i];
        y[2 + i] = t ? yolo_conv_block_forward(f, &b->conv[i], t) : NULL;
    }
    return module_one_output(out, y[3] ? yolo_conv_block_forward(f, &b->cv4, yolo_concat(f->graph, 4, y, 1)) : NULL);
}

/* ---- AConv and ADown ---- */

/* avg_pool2d(x, 2, 1, 0): a depthwise 2x2 convolution with constant weights 1/4 */
static yolo_tensor *avg_pool_2x2(yolo_graph *g, yolo_tensor *x) {
    if (!x) return NULL;
    const int64_t wshape[4] = {x->shape[1], 1, 2, 2};
    yolo_tensor *w = yolo_graph_node(g, YOLO_OP_FILL, YOLO_F32, 4, wshape, 0, NULL);
    if (!w) return NULL;
    w->node->fparams[0] = 0.25f;
    const yolo_conv2d_params p = {.stride_h = 1, .stride_w = 1, .dilation_h = 1, .dilation_w = 1,
                                  .groups = (int)x->shape[1]};
    return yolo_conv2d(g, x, w, NULL, &p);
}

static yolo_status down_build(yolo_module_ctx *ctx, bool adown) {
    int c1, c2;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2))) return st;
    if (adown && (c1 % 2 || c2 % 2))
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "ADown halves its channels: %d in and %d out must be even", c1,
                                 c2);
    down_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    b->adown = adown;
    if (adown) {
        if ((st = module_conv_at(ctx, &b->cv1, "", "cv1", c1 / 2, c2 / 2, 3, 2, 1, 1, YOLO_ACT_DEFAULT)) ||
            (st = module_conv_at(ctx, &b->cv2, "", "cv2", c1 / 2, c2 / 2, 1, 1, 0, 1, YOLO_ACT_DEFAULT)))
            return st;
    } else if ((st = module_conv_at(ctx, &b->cv1, "", "cv1", c1, c2, 3, 2, 1, 1, YOLO_ACT_DEFAULT))) {
        return st;
    }
    yolo_module_set_args_text(ctx, "[%d, %d]", c1, c2);
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status aconv_build(yolo_module_ctx *ctx) { return down_build(ctx, false); }
static yolo_status adown_build(yolo_module_ctx *ctx) { return down_build(ctx, true); }

static yolo_status down_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                yolo_module_outputs *out) {
    (void)n_in;
    const down_block *b = state;
    yolo_tensor *x = avg_pool_2x2(f->graph, in[0]);
    if (!b->adown) return module_one_output(out, x ? yolo_conv_block_forward(f, &b->cv1, x) : NULL);
    yolo_tensor *h[2];
    if (!x || !yolo_chunk(f->graph, x, 2, 1, h)) return module_one_output(out, NULL);
    h[0] = yolo_conv_block_forward(f, &b->cv1, h[0]);
    h[1] = yolo_conv_block_forward(f, &b->cv2, yolo_maxpool2d(f->graph, h[1], 3, 2, 1));
    return module_one_output(out, h[0] && h[1] ? yolo_concat(f->graph, 2, h, 1) : NULL);
}

/* ---- SPPELAN ---- */

static yolo_status sppelan_build(yolo_module_ctx *ctx) {
    int c1, c2;
    int64_t c3, k;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_int(ctx, 1, 0, &c3)) || (st = yolo_module_arg_int(ctx, 2, 5, &k)))
        return st;
    if (c3 < 1 || c3 > 65536 || k < 1 || k % 2 == 0 || k > 31)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "c3 %lld (>= 1) or k %lld (odd, <= 31) out of range",
                                 (long long)c3, (long long)k);
    sppelan_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    b->k = (int)k;
    if ((st = module_conv_at(ctx, &b->cv1, "", "cv1", c1, (int)c3, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)) ||
        (st = module_conv_at(ctx, &b->cv5, "", "cv5", 4 * (int)c3, c2, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)))
        return st;
    yolo_module_add_leaves(ctx, 3); /* cv2, cv3, cv4: the MaxPool2d modules */
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d%s]", c1, c2, module_args_tail(ctx, 1, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status sppelan_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                   yolo_module_outputs *out) {
    (void)n_in;
    const sppelan_block *b = state;
    yolo_tensor *y[4];
    y[0] = yolo_conv_block_forward(f, &b->cv1, in[0]);
    for (int i = 1; i < 4; i++) y[i] = y[i - 1] ? yolo_maxpool2d(f->graph, y[i - 1], b->k, 1, b->k / 2) : NULL;
    return module_one_output(out, y[3] ? yolo_conv_block_forward(f, &b->cv5, yolo_concat(f->graph, 4, y, 1)) : NULL);
}

const yolo_module_type yolo_repncspelan4_type = {"RepNCSPELAN4", "CSP-ELAN with RepConv bottlenecks (YOLOv9)",
                                                 repncspelan4_build, elan_forward, NULL, NULL, 0};
const yolo_module_type yolo_elan1_type = {"ELAN1", "ELAN with plain 3x3 Convs (YOLOv9t/s)", elan1_build, elan_forward,
                                          NULL, NULL, 0};
const yolo_module_type yolo_aconv_type = {"AConv", "average pool, then a stride-2 Conv (YOLOv9t/s/m)", aconv_build,
                                          down_forward, NULL, NULL, 0};
const yolo_module_type yolo_adown_type = {"ADown", "average pool, then halves down by a Conv and by max pool (YOLOv9)",
                                          adown_build, down_forward, NULL, NULL, 0};
const yolo_module_type yolo_sppelan_type = {"SPPELAN", "SPP-ELAN: three chained max pools (YOLOv9)", sppelan_build,
                                            sppelan_forward, NULL, NULL, 0};
