/* The core module types: Conv, DWConv, SPPF, nn.Upsample, Concat and the
 * table of all of them (the CSP family is in modules_csp.c, C2PSA in
 * modules_attention.c). Ultralytics' ultralytics/nn/modules/{conv,block}.py
 * semantics; yaml args as Ultralytics' parse_model passes them, the input
 * channels first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model_internal.h"

/* ---- Conv(c1, c2, k=1, s=1, p=None, g=1, d=1, act=True) ---- */

static yolo_status conv_build(yolo_module_ctx *ctx) {
    int c1, c2;
    int64_t k, s, p, g, d;
    yolo_act act;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
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
    yolo_module_set_args_text(ctx, "[%d, %d%s]", c1, c2, module_args_tail(ctx, 1, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status conv_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                yolo_module_outputs *out) {
    (void)n_in;
    return module_one_output(out, yolo_conv_block_forward(f, state, in[0]));
}

/* ---- DWConv(c1, c2, k=1, s=1, d=1, act=True): Conv with groups = gcd(c1, c2) ---- */

static int gcd(int a, int b) {
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static yolo_status dwconv_build(yolo_module_ctx *ctx) {
    int c1, c2;
    int64_t k, s, d;
    yolo_act act;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_int(ctx, 1, 1, &k)) || (st = yolo_module_arg_int(ctx, 2, 1, &s)) ||
        (st = yolo_module_arg_int(ctx, 3, 1, &d)) || (st = yolo_module_arg_act(ctx, 4, &act)))
        return st;
    if (k < 1 || k > 31 || s < 1 || s > 16 || d < 1 || d > 16)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "k=%lld s=%lld d=%lld out of range", (long long)k, (long long)s,
                                 (long long)d);
    yolo_conv_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if ((st = yolo_conv_block_init(ctx, b, "", c1, c2, (int)k, (int)s, YOLO_AUTOPAD, gcd(c1, c2), (int)d, act)))
        return st;
    char tail[192];
    yolo_module_set_args_text(ctx, "[%d, %d%s]", c1, c2, module_args_tail(ctx, 1, tail, sizeof(tail)));
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

/* ---- SPPF(c1, c2, k=5, n=3, shortcut=False) ----
 * Ultralytics 8.4's (YOLO26): n max-pools, cv2 over the n + 1 branches, the
 * input added when shortcut and c1 == c2. cv1 is unactivated, except for a
 * row that gives neither n nor shortcut (every yaml before YOLO26), whose
 * cv1 has the model's activation as in 8.3: Ultralytics' rule since its
 * fix of September 2026 (PR 26040). Its releases from January to then
 * built such rows unactivated; their .pt files say so in the pickled cv1,
 * and the importer writes their rows out in full (interop/pt_import.c). */

#define SPPF_MAX_POOLS 8

typedef struct sppf_block {
    yolo_conv_block cv1, cv2;
    int k, n;
    bool add;
} sppf_block;

static yolo_status sppf_build(yolo_module_ctx *ctx) {
    int c1, c2;
    int64_t k, n;
    bool shortcut;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_int(ctx, 1, 5, &k)) || (st = yolo_module_arg_int(ctx, 2, 3, &n)) ||
        (st = yolo_module_arg_bool(ctx, 3, false, &shortcut)))
        return st;
    if (k < 1 || k > 31 || k % 2 == 0) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "k=%lld must be odd, 1 to 31", (long long)k);
    if (n < 1 || n > SPPF_MAX_POOLS)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "n=%lld pools: 1 to %d are built", (long long)n, SPPF_MAX_POOLS);
    const bool legacy = !yolo_module_arg(ctx, 2) && !yolo_module_arg(ctx, 3);
    sppf_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    *b = (sppf_block){.k = (int)k, .n = (int)n, .add = shortcut && c1 == c2};
    int c_ = c1 / 2;
    if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, c_, 1, 1, YOLO_AUTOPAD, 1, 1,
                                   legacy ? YOLO_ACT_DEFAULT : YOLO_ACT_IDENTITY)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", c_ * (b->n + 1), c2, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)))
        return st;
    yolo_module_add_leaves(ctx, 1); /* the MaxPool2d */
    if (legacy)
        yolo_module_set_args_text(ctx, "[%d, %d, %d]", c1, c2, b->k);
    else
        yolo_module_set_args_text(ctx, "[%d, %d, %d, %d, %s]", c1, c2, b->k, b->n, shortcut ? "True" : "False");
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status sppf_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                yolo_module_outputs *out) {
    (void)n_in;
    const sppf_block *b = state;
    yolo_tensor *ys[SPPF_MAX_POOLS + 1];
    ys[0] = yolo_conv_block_forward(f, &b->cv1, in[0]);
    for (int i = 1; i <= b->n; i++) ys[i] = ys[i - 1] ? yolo_maxpool2d(f->graph, ys[i - 1], b->k, 1, b->k / 2) : NULL;
    yolo_tensor *y = ys[b->n] ? yolo_conv_block_forward(f, &b->cv2, yolo_concat(f->graph, b->n + 1, ys, 1)) : NULL;
    return module_one_output(out, y && b->add ? yolo_add(f->graph, y, in[0]) : y);
}

/* ---- nn.Upsample(size=None, scale_factor=2, mode='nearest') ---- */

static yolo_status upsample_build(yolo_module_ctx *ctx) {
    int c1;
    yolo_status st = module_single_input(ctx, &c1);
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
    return module_one_output(out, factor == 1 ? in[0] : yolo_upsample_nearest(f->graph, in[0], factor));
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
    return module_one_output(out, n_in == 1 ? in[0] : yolo_concat(f->graph, n_in, in, 1));
}

/* ---- the table ---- */

static const yolo_module_type conv_type = {"Conv", "Conv2d + BatchNorm2d + activation", conv_build, conv_forward,
                                           NULL, NULL, 0};
static const yolo_module_type dwconv_type = {"DWConv", "depthwise Conv (groups = gcd(c1, c2))", dwconv_build,
                                             conv_forward, NULL, NULL, 0};
static const yolo_module_type sppf_type = {"SPPF", "spatial pyramid pooling - fast", sppf_build, sppf_forward, NULL,
                                           NULL, 0};
static const yolo_module_type upsample_type = {"nn.Upsample", "nearest-neighbour upsampling", upsample_build,
                                               upsample_forward, NULL, NULL, 0};
static const yolo_module_type concat_type = {"Concat", "channel concatenation of the inputs", concat_build,
                                             concat_forward, NULL, NULL, 0};

const yolo_module_type *const yolo_core_modules[] = {
    &conv_type,     &dwconv_type,  &yolo_bottleneck_type, &yolo_c2f_type, &yolo_c3_type, &yolo_c3k2_type,
    &yolo_c2_type,  &sppf_type,    &yolo_c2psa_type,      &upsample_type, &concat_type,
    &yolo_scdown_type, &yolo_c2fcib_type, &yolo_psa_type, &yolo_a2c2f_type,
    &yolo_repncspelan4_type, &yolo_elan1_type, &yolo_aconv_type, &yolo_adown_type, &yolo_sppelan_type};
const int yolo_core_module_count = (int)(sizeof(yolo_core_modules) / sizeof(yolo_core_modules[0]));
