/* A2C2f with its ABlock and AAttn (Ultralytics' ultralytics/nn/modules/
 * block.py, YOLO12): self-attention within "areas", horizontal bands of a
 * feature map, from the graph's batched matmul and softmax.
 *
 * AAttn(dim, num_heads, area=1): head_dim = dim / heads; qkv = Conv(dim,
 * 3*dim, 1, act=False), each head's 3*head_dim channels q, k, v in turn;
 * the H*W positions (row-major) cut into `area` equal bands, and within each
 * band attn = softmax(q^T k / sqrt(head_dim)) over the keys, x = v attn^T;
 * out = proj(x + pe(v)), pe a depthwise 7x7 Conv and proj a 1x1 Conv, both
 * without activation.
 * ABlock(dim, num_heads, mlp_ratio=1.2, area=1): x + attn(x), then
 * x + mlp(x), mlp = Conv(dim, int(dim*mlp_ratio), 1), Conv(.., dim, 1,
 * act=False); its conv weights start as trunc_normal_(std=0.02).
 * A2C2f(c1, c2, n=1, a2=True, area=1, residual=False, mlp_ratio=2.0, e=0.5,
 * g=1, shortcut=True): c = int(c2*e), a multiple of 32; y = [cv1(x)] (c1 ->
 * c), n blocks chained on the last (a2: two ABlocks with c/32 heads, named
 * m.<i>.0 and m.<i>.1; else C3k(c, c, 2, shortcut, g), named m.<i>),
 * cv2(cat(y)) ((1+n)c -> c2); with a2 and residual, x + gamma * that, gamma
 * a per-channel parameter starting at 0.01.
 * Ultralytics' parse_model appends (True, 1.2) to the args at the l and x
 * scales: [c2, a2, area] then means residual=True, mlp_ratio=1.2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model_internal.h"

typedef struct aattn_block {
    int heads, head_dim, area;
    float scale;
    yolo_conv_block qkv, proj, pe;
} aattn_block;

typedef struct ablock {
    aattn_block attn;
    yolo_conv_block mlp0, mlp1;
} ablock;

typedef struct a2c2f_block {
    int n, c;
    yolo_conv_block cv1, cv2;
    ablock *ab;        /* a2: 2n of them, block i being ab[2i], ab[2i+1] */
    c3_block **c3k;    /* else: n C3k blocks */
    yolo_tensor *gamma; /* [c2], or NULL */
} a2c2f_block;

/* ABlock's _init_weights: the convs it owns start as trunc_normal_(std=0.02). */
static yolo_status trunc_normal_init(yolo_module_ctx *ctx, const yolo_conv_block *b) {
    yolo_model *m = ctx->model;
    return model_init_tensor(b->weight, m->seed, m->n_params_created++, YOLO_INIT_TRUNC_NORMAL, 0.02);
}

static yolo_status conv_named(yolo_module_ctx *ctx, yolo_conv_block *b, const char *name, const char *leaf, int c1,
                              int c2, int k, int g, yolo_act act) {
    yolo_status st = module_conv_at(ctx, b, name, leaf, c1, c2, k, 1, YOLO_AUTOPAD, g, act);
    return st ? st : trunc_normal_init(ctx, b);
}

static yolo_status ablock_init(yolo_module_ctx *ctx, ablock *b, const char *name, int dim, int heads,
                               double mlp_ratio, int area) {
    aattn_block *a = &b->attn;
    a->heads = heads;
    a->head_dim = dim / heads;
    a->area = area;
    a->scale = (float)pow(a->head_dim, -0.5);
    const int hidden = (int)(dim * mlp_ratio);
    if (hidden < 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "mlp_ratio %g gives %d hidden channels", mlp_ratio, hidden);
    char attn[64];
    if (!module_join_name(ctx, attn, sizeof(attn), name, "attn")) return YOLO_ERR_ARG;
    yolo_status st;
    if ((st = conv_named(ctx, &a->qkv, attn, "qkv", dim, 3 * dim, 1, 1, YOLO_ACT_IDENTITY)) ||
        (st = conv_named(ctx, &a->proj, attn, "proj", dim, dim, 1, 1, YOLO_ACT_IDENTITY)) ||
        (st = conv_named(ctx, &a->pe, attn, "pe", dim, dim, 7, dim, YOLO_ACT_IDENTITY)) ||
        (st = conv_named(ctx, &b->mlp0, name, "mlp.0", dim, hidden, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = conv_named(ctx, &b->mlp1, name, "mlp.1", hidden, dim, 1, 1, YOLO_ACT_IDENTITY)))
        return st;
    return YOLO_OK;
}

/* Attention within each band of n = H*W / area positions: the bands are
 * slices of the flattened positions, attended one after the other. */
static yolo_tensor *aattn_forward(const yolo_forward_ctx *f, const aattn_block *a, yolo_tensor *x) {
    yolo_graph *g = f->graph;
    yolo_tensor *qkv = yolo_conv_block_forward(f, &a->qkv, x);
    if (!qkv) return NULL;
    const int64_t B = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], N = H * W;
    if (N % a->area) {
        yolo_error(YOLO_ERR_SHAPE, "AAttn: %lldx%lld positions do not split into %d areas (imgsz a multiple of 32 does)",
                   (long long)H, (long long)W, a->area);
        return NULL;
    }
    const int64_t n = N / a->area, flat_shape[3] = {B, 3 * C, N}, heads_shape[3] = {B * a->heads, 3 * a->head_dim, n},
                  band_shape[3] = {B, C, n}, image_shape[4] = {B, C, H, W};
    yolo_tensor *flat = yolo_reshape(g, qkv, 3, flat_shape);
    yolo_tensor *xs[64], *vs[64]; /* a2c2f_build keeps area <= 64 */
    for (int j = 0; j < a->area; j++) {
        yolo_tensor *band = a->area > 1 ? yolo_slice(g, flat, 2, j * n, n) : flat, *v = NULL;
        yolo_tensor *y = attention_heads(g, yolo_reshape(g, band, 3, heads_shape), a->head_dim, a->head_dim, a->scale,
                                         &v);
        xs[j] = yolo_reshape(g, y, 3, band_shape);
        vs[j] = yolo_reshape(g, v, 3, band_shape);
        if (!xs[j] || !vs[j]) return NULL;
    }
    yolo_tensor *y = a->area > 1 ? yolo_concat(g, a->area, xs, 2) : xs[0];
    yolo_tensor *v = a->area > 1 ? yolo_concat(g, a->area, vs, 2) : vs[0];
    yolo_tensor *pe = yolo_conv_block_forward(f, &a->pe, yolo_reshape(g, v, 4, image_shape));
    return pe ? yolo_conv_block_forward(f, &a->proj, yolo_add(g, yolo_reshape(g, y, 4, image_shape), pe)) : NULL;
}

static yolo_tensor *ablock_forward(const yolo_forward_ctx *f, const ablock *b, yolo_tensor *x) {
    yolo_tensor *a = aattn_forward(f, &b->attn, x);
    if (!a) return NULL;
    x = yolo_add(f->graph, x, a);
    yolo_tensor *y = yolo_conv_block_forward(f, &b->mlp1, yolo_conv_block_forward(f, &b->mlp0, x));
    return y ? yolo_add(f->graph, x, y) : NULL;
}

/* Arg i of A2C2f as parse_model passes it: the yaml's, then at the l and x
 * scales True and 1.2 after the last one the yaml gives, then the default. */
typedef struct a2c2f_arg {
    bool given, b;
    double f;
    const yolo_arg *yaml;
} a2c2f_arg;

static a2c2f_arg arg_at(const yolo_module_ctx *ctx, int i, bool lx) {
    const int count = yolo_module_arg_count(ctx);
    if (i < count) return (a2c2f_arg){.given = true, .yaml = yolo_module_arg(ctx, i)};
    if (lx && i == count) return (a2c2f_arg){.given = true, .b = true, .f = 1.0};
    if (lx && i == count + 1) return (a2c2f_arg){.given = true, .b = true, .f = 1.2};
    return (a2c2f_arg){0};
}

static yolo_status read_bool(yolo_module_ctx *ctx, int i, bool lx, bool def, bool *out) {
    a2c2f_arg a = arg_at(ctx, i, lx);
    if (a.yaml) return yolo_module_arg_bool(ctx, i, def, out);
    *out = a.given ? a.b : def;
    return YOLO_OK;
}

static yolo_status read_float(yolo_module_ctx *ctx, int i, bool lx, double def, double *out) {
    a2c2f_arg a = arg_at(ctx, i, lx);
    if (a.yaml) return yolo_module_arg_float(ctx, i, def, out);
    *out = a.given ? a.f : def;
    return YOLO_OK;
}

static yolo_status read_int(yolo_module_ctx *ctx, int i, bool lx, int64_t def, int64_t *out) {
    a2c2f_arg a = arg_at(ctx, i, lx);
    if (a.yaml) return yolo_module_arg_int(ctx, i, def, out);
    if (a.given && a.f != 1.0)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG,
                                 "argument %d would be the %g parse_model appends at the l and x scales; give the yaml "
                                 "its [c2, a2, area] form",
                                 i, a.f);
    *out = a.given ? 1 : def;
    return YOLO_OK;
}

static yolo_status a2c2f_build(yolo_module_ctx *ctx) {
    const char *scale = ctx->model->scale;
    const bool lx = scale[0] && !scale[1] && strchr("lx", scale[0]);
    int c1, c2;
    bool a2, residual, shortcut;
    int64_t area, g;
    double mlp_ratio, e;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = read_bool(ctx, 1, lx, true, &a2)) || (st = read_int(ctx, 2, lx, 1, &area)) ||
        (st = read_bool(ctx, 3, lx, false, &residual)) || (st = read_float(ctx, 4, lx, 2.0, &mlp_ratio)) ||
        (st = read_float(ctx, 5, lx, 0.5, &e)) || (st = read_int(ctx, 6, lx, 1, &g)) ||
        (st = read_bool(ctx, 7, lx, true, &shortcut)))
        return st;
    const int c = (int)(c2 * e);
    if (c < 32 || c % 32)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "hidden channels %d (c2 %d * e %g) must be a multiple of 32", c,
                                 c2, e);
    if (a2 && (area < 1 || area > 64))
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "area %lld out of range [1, 64]", (long long)area);
    if (g < 1 || c % g) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "g=%lld does not divide %d channels", (long long)g, c);
    if (!(mlp_ratio > 0)) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "mlp_ratio %g must be > 0", mlp_ratio);
    if (a2 && residual && c1 != c2)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "residual needs input channels %d equal to output channels %d",
                                 c1, c2);
    a2c2f_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    b->n = yolo_module_repeats(ctx);
    b->c = c;
    if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", (1 + b->n) * c, c2, 1, 1, YOLO_AUTOPAD, 1, 1,
                                   YOLO_ACT_DEFAULT)))
        return st;
    if (a2) {
        if (!(b->ab = module_alloc(ctx, sizeof(ablock) * (size_t)(2 * b->n + 1))))
            return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
        for (int i = 0; i < 2 * b->n; i++) {
            char name[32];
            snprintf(name, sizeof(name), "m.%d.%d", i / 2, i % 2);
            if ((st = ablock_init(ctx, &b->ab[i], name, c, c / 32, mlp_ratio, (int)area))) return st;
        }
        if (residual) {
            const int64_t shape[1] = {c2};
            b->gamma = yolo_module_param(ctx, "gamma", 1, shape, YOLO_PARAM_WEIGHT, true, YOLO_INIT_CONSTANT, 0.01);
            if (!b->gamma) return YOLO_ERR_NOMEM;
        }
    } else {
        if (!(b->c3k = module_alloc(ctx, sizeof(c3_block *) * (size_t)(b->n + 1))))
            return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
        for (int i = 0; i < b->n; i++) {
            char name[32];
            snprintf(name, sizeof(name), "m.%d", i);
            if (!(b->c3k[i] = module_alloc(ctx, c3_block_size())))
                return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
            if ((st = c3k_block_init(ctx, b->c3k[i], name, c, c, 2, shortcut, (int)g))) return st;
        }
    }
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d, %d%s%s]", c1, c2, b->n, module_args_tail(ctx, 1, tail, sizeof(tail)),
                              lx ? ", True, 1.2" : "");
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status a2c2f_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                 yolo_module_outputs *out) {
    (void)n_in;
    const a2c2f_block *b = state;
    yolo_graph *g = f->graph;
    yolo_tensor *stack[1 + 64];
    yolo_tensor **ys = b->n + 1 <= 65 ? stack : malloc(sizeof(yolo_tensor *) * (size_t)(b->n + 1));
    if (!ys) return yolo_error(YOLO_ERR_NOMEM, "A2C2f forward: out of memory");
    yolo_tensor *y = ys[0] = yolo_conv_block_forward(f, &b->cv1, in[0]);
    for (int i = 0; y && i < b->n; i++) {
        if (b->ab) {
            y = ablock_forward(f, &b->ab[2 * i], y);
            y = y ? ablock_forward(f, &b->ab[2 * i + 1], y) : NULL;
        } else {
            y = c3_block_forward(f, b->c3k[i], y);
        }
        ys[1 + i] = y;
    }
    y = y ? yolo_conv_block_forward(f, &b->cv2, yolo_concat(g, 1 + b->n, ys, 1)) : NULL;
    if (ys != stack) free(ys);
    if (y && b->gamma) {
        const int64_t shape[3] = {b->gamma->shape[0], 1, 1};
        y = yolo_add(g, in[0], yolo_mul(g, yolo_reshape(g, b->gamma, 3, shape), y));
    }
    return module_one_output(out, y);
}

/* parse_model sets legacy=False on meeting A2C2f, as on C3k2: the heads take their current form */
const yolo_module_type yolo_a2c2f_type = {"A2C2f", "C2f with area-attention blocks (YOLO12)", a2c2f_build,
                                          a2c2f_forward, NULL, NULL,
                                          YOLO_MODULE_REPEATS_INSIDE | YOLO_MODULE_CURRENT_HEADS};
