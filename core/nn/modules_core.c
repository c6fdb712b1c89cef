/* The core module types: Conv, Bottleneck, C2f, C3, SPPF, nn.Upsample,
 * Concat (Ultralytics' ultralytics/nn/modules/{conv,block}.py semantics;
 * yaml args as Ultralytics' parse_model passes them, the input channels
 * first and `repeats` inside C2f/C3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model_internal.h"

/* ---- shared helpers ---- */

static void format_arg(const yolo_arg *a, char *buf, size_t size) {
    size_t len = 0;
    buf[0] = '\0';
    switch (a->kind) {
    case YOLO_ARG_NULL: snprintf(buf, size, "None"); break;
    case YOLO_ARG_BOOL: snprintf(buf, size, "%s", a->b ? "True" : "False"); break;
    case YOLO_ARG_INT: snprintf(buf, size, "%lld", (long long)a->i); break;
    case YOLO_ARG_FLOAT: snprintf(buf, size, "%g", a->f); break;
    case YOLO_ARG_STRING: snprintf(buf, size, "'%s'", a->s); break;
    case YOLO_ARG_ACT: snprintf(buf, size, "%s", a->s); break;
    case YOLO_ARG_LIST:
        len += (size_t)snprintf(buf, size, "[");
        for (int i = 0; i < a->n_items && len < size; i++) {
            char item[64];
            format_arg(&a->items[i], item, sizeof(item));
            len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", item);
        }
        if (len < size) snprintf(buf + len, size - len, "]");
        break;
    }
}

/* ", a, b, c" for args[start..] (empty if none). */
static const char *args_tail(const yolo_module_ctx *ctx, int start, char *buf, size_t size) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = start; i < yolo_module_arg_count(ctx) && len < size; i++) {
        char item[96];
        format_arg(yolo_module_arg(ctx, i), item, sizeof(item));
        len += (size_t)snprintf(buf + len, size - len, ", %s", item);
    }
    return buf;
}

/* c2 from args[0], scaled by the width rule. */
static yolo_status out_channels_arg(yolo_module_ctx *ctx, int *c2) {
    int64_t v;
    if (yolo_module_arg_count(ctx) < 1)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "the first argument (output channels) is missing");
    yolo_status st = yolo_module_arg_int(ctx, 0, 0, &v);
    if (st) return st;
    if (v < 1 || v > 65536) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "output channels %lld out of range", (long long)v);
    *c2 = yolo_module_scale_channels(ctx, (int)v);
    return YOLO_OK;
}

static yolo_status single_input(yolo_module_ctx *ctx, int *c1) {
    if (yolo_module_n_inputs(ctx) != 1)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "takes one input, 'from' lists %d", yolo_module_n_inputs(ctx));
    *c1 = yolo_module_in_channels(ctx, 0);
    return YOLO_OK;
}

static yolo_status one_output(yolo_module_outputs *out, yolo_tensor *y) {
    out->n = 1;
    out->t[0] = y;
    return y ? YOLO_OK : YOLO_ERR_SHAPE; /* the graph holds the message */
}

/* ---- Conv(c1, c2, k=1, s=1, p=None, g=1, d=1, act=True) ---- */

static yolo_status conv_build(yolo_module_ctx *ctx) {
    int c1, c2;
    int64_t k, s, p, g, d;
    yolo_act act;
    yolo_status st;
    if ((st = single_input(ctx, &c1)) || (st = out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_int(ctx, 1, 1, &k)) || (st = yolo_module_arg_int(ctx, 2, 1, &s)) ||
        (st = yolo_module_arg_int(ctx, 3, YOLO_AUTOPAD, &p)) || (st = yolo_module_arg_int(ctx, 4, 1, &g)) ||
        (st = yolo_module_arg_int(ctx, 5, 1, &d)) || (st = yolo_module_arg_act(ctx, 6, &act)))
        return st;
    if (k < 1 || k > 31 || s < 1 || s > 16 || g < 1 || d < 1 || d > 16 || p < YOLO_AUTOPAD || p > 31)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "k=%lld s=%lld p=%lld g=%lld d=%lld out of range", (long long)k,
                                 (long long)s, (long long)p, (long long)g, (long long)d);
    yolo_conv_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if ((st = yolo_conv_block_init(ctx, b, "", c1, c2, (int)k, (int)s, (int)p, (int)g, (int)d, act))) return st;
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d%s]", c1, c2, args_tail(ctx, 1, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status conv_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                yolo_module_outputs *out) {
    (void)n_in;
    return one_output(out, yolo_conv_block_forward(f, state, in[0]));
}

/* ---- Bottleneck(c1, c2, shortcut=True, g=1, k=(3, 3), e=0.5) ---- */

typedef struct bottleneck {
    yolo_conv_block cv1, cv2;
    bool add;
} bottleneck;

static yolo_status bottleneck_init(yolo_module_ctx *ctx, bottleneck *b, const char *name, int c1, int c2,
                                   bool shortcut, int g, int k1, int k2, double e) {
    char n1[64], n2[64];
    snprintf(n1, sizeof(n1), "%s%scv1", name, *name ? "." : "");
    snprintf(n2, sizeof(n2), "%s%scv2", name, *name ? "." : "");
    int c_ = (int)(c2 * e);
    yolo_status st;
    if ((st = yolo_conv_block_init(ctx, &b->cv1, n1, c1, c_, k1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, n2, c_, c2, k2, 1, YOLO_AUTOPAD, g, 1, YOLO_ACT_DEFAULT)))
        return st;
    b->add = shortcut && c1 == c2;
    return YOLO_OK;
}

static yolo_tensor *bottleneck_forward(const yolo_forward_ctx *f, const bottleneck *b, yolo_tensor *x) {
    yolo_tensor *y = yolo_conv_block_forward(f, &b->cv2, yolo_conv_block_forward(f, &b->cv1, x));
    return b->add && y ? yolo_add(f->graph, x, y) : y;
}

static yolo_status kernel_pair_arg(yolo_module_ctx *ctx, int i, int *k1, int *k2) {
    const yolo_arg *a = yolo_module_arg(ctx, i);
    *k1 = *k2 = 3;
    if (!a || a->kind == YOLO_ARG_NULL) return YOLO_OK;
    if (a->kind == YOLO_ARG_INT) {
        *k1 = *k2 = (int)a->i;
    } else if (a->kind == YOLO_ARG_LIST && a->n_items == 2 && a->items[0].kind == YOLO_ARG_INT &&
               a->items[1].kind == YOLO_ARG_INT) {
        *k1 = (int)a->items[0].i;
        *k2 = (int)a->items[1].i;
    } else {
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "argument %d (k) must be [k1, k2]", i);
    }
    if (*k1 < 1 || *k2 < 1 || *k1 > 31 || *k2 > 31)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "kernel sizes %d, %d out of range", *k1, *k2);
    return YOLO_OK;
}

static yolo_status bottleneck_build(yolo_module_ctx *ctx) {
    int c1, c2, k1, k2;
    bool shortcut;
    int64_t g;
    double e;
    yolo_status st;
    if ((st = single_input(ctx, &c1)) || (st = out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_bool(ctx, 1, true, &shortcut)) || (st = yolo_module_arg_int(ctx, 2, 1, &g)) ||
        (st = kernel_pair_arg(ctx, 3, &k1, &k2)) || (st = yolo_module_arg_float(ctx, 4, 0.5, &e)))
        return st;
    if (g < 1 || !(e > 0) || e > 16) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "g=%lld e=%g out of range", (long long)g, e);
    bottleneck *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if ((st = bottleneck_init(ctx, b, "", c1, c2, shortcut, (int)g, k1, k2, e))) return st;
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d%s]", c1, c2, args_tail(ctx, 1, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status bottleneck_module_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                             yolo_module_outputs *out) {
    (void)n_in;
    return one_output(out, bottleneck_forward(f, state, in[0]));
}

/* ---- C2f(c1, c2, n=1, shortcut=False, g=1, e=0.5) and C3(c1, c2, n=1, shortcut=True, g=1, e=0.5) ---- */

typedef struct csp_block {
    int n, c;
    yolo_conv_block cv1, cv2, cv3;
    bottleneck *m; /* n of them, in the model's allocations */
} csp_block;

static yolo_status csp_build(yolo_module_ctx *ctx, bool c2f) {
    int c1, c2;
    bool shortcut;
    int64_t g;
    double e;
    yolo_status st;
    if ((st = single_input(ctx, &c1)) || (st = out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_bool(ctx, 1, !c2f, &shortcut)) || (st = yolo_module_arg_int(ctx, 2, 1, &g)) ||
        (st = yolo_module_arg_float(ctx, 3, 0.5, &e)))
        return st;
    if (g < 1 || !(e > 0) || e > 16) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "g=%lld e=%g out of range", (long long)g, e);
    csp_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    b->n = yolo_module_repeats(ctx);
    b->c = (int)(c2 * e);
    if (b->c < 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "hidden channels %d*%g < 1", c2, e);
    /* the bottlenecks live in a second allocation owned by the model */
    void *saved = yolo_module_state(ctx);
    b->m = yolo_module_state_alloc(ctx, sizeof(bottleneck) * (size_t)b->n);
    ctx->state = saved;
    if (!b->m) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if (c2f) {
        if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, 2 * b->c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
            (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", (2 + b->n) * b->c, c2, 1, 1, YOLO_AUTOPAD, 1, 1,
                                       YOLO_ACT_DEFAULT)))
            return st;
    } else {
        if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, b->c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
            (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", c1, b->c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
            (st = yolo_conv_block_init(ctx, &b->cv3, "cv3", 2 * b->c, c2, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)))
            return st;
    }
    for (int i = 0; i < b->n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "m.%d", i);
        /* C2f: 3x3, 3x3; C3: 1x1, 3x3; both e=1.0 */
        if ((st = bottleneck_init(ctx, &b->m[i], name, b->c, b->c, shortcut, (int)g, c2f ? 3 : 1, 3, 1.0))) return st;
    }
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d, %d%s]", c1, c2, b->n, args_tail(ctx, 1, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status c2f_build(yolo_module_ctx *ctx) { return csp_build(ctx, true); }
static yolo_status c3_build(yolo_module_ctx *ctx) { return csp_build(ctx, false); }

static yolo_status c2f_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                               yolo_module_outputs *out) {
    (void)n_in;
    const csp_block *b = state;
    yolo_tensor *stack[2 + 64];
    yolo_tensor **ys = b->n + 2 <= 66 ? stack : malloc(sizeof(yolo_tensor *) * (size_t)(b->n + 2));
    if (!ys) return yolo_error(YOLO_ERR_NOMEM, "C2f forward: out of memory");
    yolo_tensor *y = yolo_conv_block_forward(f, &b->cv1, in[0]);
    yolo_tensor *r = y ? yolo_chunk(f->graph, y, 2, 1, ys) : NULL;
    for (int i = 0; r && i < b->n; i++) {
        ys[2 + i] = bottleneck_forward(f, &b->m[i], ys[1 + i]);
        if (!ys[2 + i]) r = NULL;
    }
    y = r ? yolo_conv_block_forward(f, &b->cv2, yolo_concat(f->graph, 2 + b->n, ys, 1)) : NULL;
    if (ys != stack) free(ys);
    return one_output(out, y);
}

static yolo_status c3_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                              yolo_module_outputs *out) {
    (void)n_in;
    const csp_block *b = state;
    yolo_tensor *y = yolo_conv_block_forward(f, &b->cv1, in[0]);
    for (int i = 0; y && i < b->n; i++) y = bottleneck_forward(f, &b->m[i], y);
    yolo_tensor *parts[2] = {y, yolo_conv_block_forward(f, &b->cv2, in[0])};
    return one_output(out, parts[0] && parts[1]
                               ? yolo_conv_block_forward(f, &b->cv3, yolo_concat(f->graph, 2, parts, 1))
                               : NULL);
}

/* ---- SPPF(c1, c2, k=5) ---- */

typedef struct sppf_block {
    yolo_conv_block cv1, cv2;
    int k;
} sppf_block;

static yolo_status sppf_build(yolo_module_ctx *ctx) {
    int c1, c2;
    int64_t k;
    yolo_status st;
    if ((st = single_input(ctx, &c1)) || (st = out_channels_arg(ctx, &c2)) || (st = yolo_module_arg_int(ctx, 1, 5, &k)))
        return st;
    if (k < 1 || k > 31 || k % 2 == 0) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "k=%lld must be odd, 1 to 31", (long long)k);
    sppf_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    b->k = (int)k;
    int c_ = c1 / 2;
    if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, c_, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", c_ * 4, c2, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)))
        return st;
    yolo_module_add_leaves(ctx, 1); /* the MaxPool2d */
    yolo_module_set_args_text(ctx, "[%d, %d, %d]", c1, c2, b->k);
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status sppf_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                yolo_module_outputs *out) {
    (void)n_in;
    const sppf_block *b = state;
    yolo_tensor *ys[4];
    ys[0] = yolo_conv_block_forward(f, &b->cv1, in[0]);
    for (int i = 1; i < 4; i++) ys[i] = yolo_maxpool2d(f->graph, ys[i - 1], b->k, 1, b->k / 2);
    return one_output(out, ys[3] ? yolo_conv_block_forward(f, &b->cv2, yolo_concat(f->graph, 4, ys, 1)) : NULL);
}

/* ---- nn.Upsample(size=None, scale_factor=2, mode='nearest') ---- */

static yolo_status upsample_build(yolo_module_ctx *ctx) {
    int c1;
    yolo_status st = single_input(ctx, &c1);
    if (st) return st;
    const yolo_arg *size = yolo_module_arg(ctx, 0), *mode = yolo_module_arg(ctx, 2);
    if (size && size->kind != YOLO_ARG_NULL)
        return yolo_module_error(ctx, YOLO_ERR_UNSUPPORTED, "a fixed output size is not built, use [None, 2, 'nearest']");
    double factor;
    if ((st = yolo_module_arg_float(ctx, 1, 1.0, &factor))) return st;
    if (factor < 1 || factor > 64 || factor != (int)factor)
        return yolo_module_error(ctx, YOLO_ERR_UNSUPPORTED, "scale_factor %g: only integer factors 1 to 64 are built", factor);
    if (mode && mode->kind != YOLO_ARG_NULL && (mode->kind != YOLO_ARG_STRING || strcmp(mode->s, "nearest")))
        return yolo_module_error(ctx, YOLO_ERR_UNSUPPORTED, "mode '%s' is not built (only 'nearest')", mode->s);
    int *state = yolo_module_state_alloc(ctx, sizeof(int));
    if (!state) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    *state = (int)factor;
    yolo_module_add_leaves(ctx, 1);
    yolo_module_set_args_text(ctx, "[None, %d, 'nearest']", *state);
    yolo_module_set_out_channels(ctx, c1);
    return YOLO_OK;
}

static yolo_status upsample_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                    yolo_module_outputs *out) {
    (void)n_in;
    int factor = *(const int *)state;
    return one_output(out, factor == 1 ? in[0] : yolo_upsample_nearest(f->graph, in[0], factor));
}

/* ---- Concat(dimension=1) ---- */

static yolo_status concat_build(yolo_module_ctx *ctx) {
    int64_t dim;
    yolo_status st = yolo_module_arg_int(ctx, 0, 1, &dim);
    if (st) return st;
    if (dim != 1 && dim != -3)
        return yolo_module_error(ctx, YOLO_ERR_UNSUPPORTED, "dimension %lld: only channel concatenation (1) is built",
                                 (long long)dim);
    int c = 0;
    for (int i = 0; i < yolo_module_n_inputs(ctx); i++) c += yolo_module_in_channels(ctx, i);
    if (!yolo_module_state_alloc(ctx, 1)) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    yolo_module_add_leaves(ctx, 1);
    yolo_module_set_args_text(ctx, "[%lld]", (long long)dim);
    yolo_module_set_out_channels(ctx, c);
    return YOLO_OK;
}

static yolo_status concat_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                  yolo_module_outputs *out) {
    (void)state;
    return one_output(out, n_in == 1 ? in[0] : yolo_concat(f->graph, n_in, in, 1));
}

/* ---- the table ---- */

static const yolo_module_type conv_type = {"Conv", "Conv2d + BatchNorm2d + activation", conv_build, conv_forward,
                                           NULL, NULL, 0};
static const yolo_module_type bottleneck_type = {"Bottleneck", "two Convs with an optional residual",
                                                 bottleneck_build, bottleneck_module_forward, NULL, NULL, 0};
static const yolo_module_type c2f_type = {"C2f", "CSP bottleneck with 2 convolutions (YOLOv8)", c2f_build,
                                          c2f_forward, NULL, NULL, YOLO_MODULE_REPEATS_INSIDE};
static const yolo_module_type c3_type = {"C3", "CSP bottleneck with 3 convolutions (YOLOv5)", c3_build, c3_forward,
                                         NULL, NULL, YOLO_MODULE_REPEATS_INSIDE};
static const yolo_module_type sppf_type = {"SPPF", "spatial pyramid pooling - fast", sppf_build, sppf_forward, NULL,
                                           NULL, 0};
static const yolo_module_type upsample_type = {"nn.Upsample", "nearest-neighbour upsampling", upsample_build,
                                               upsample_forward, NULL, NULL, 0};
static const yolo_module_type concat_type = {"Concat", "channel concatenation of the inputs", concat_build,
                                             concat_forward, NULL, NULL, 0};

const yolo_module_type *const yolo_core_modules[] = {&conv_type, &bottleneck_type, &c2f_type,   &c3_type,
                                                     &sppf_type, &upsample_type,   &concat_type};
const int yolo_core_module_count = (int)(sizeof(yolo_core_modules) / sizeof(yolo_core_modules[0]));
