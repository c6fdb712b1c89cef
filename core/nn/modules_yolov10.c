/* YOLOv10's module types (Ultralytics' ultralytics/nn/modules/block.py):
 * SCDown, PSA, and CIB with its RepVGGDW, the inner block of C2fCIB
 * (modules_csp.c). yaml args as parse_model passes them, the input
 * channels first.
 *
 * SCDown(c1, c2, k, s): cv1 = Conv(c1, c2, 1), cv2 = Conv(c2, c2, k, s,
 * g=c2, act=False); a pointwise then a depthwise strided conv.
 * RepVGGDW(ed): SiLU(conv(x) + conv1(x)), conv = Conv(ed, ed, 7, 1, 3,
 * g=ed, act=False), conv1 = Conv(ed, ed, 3, 1, 1, g=ed, act=False); the
 * SiLU is its own (nn.SiLU()), whatever the model's default activation.
 * CIB(c1, c2, shortcut=True, e=0.5, lk=False), c_ = c2*e: cv1 =
 * Sequential(Conv(c1, c1, 3, g=c1), Conv(c1, 2c_, 1), RepVGGDW(2c_) if lk
 * else Conv(2c_, 2c_, 3, g=2c_), Conv(2c_, c2, 1), Conv(c2, c2, 3, g=c2)),
 * plus x when shortcut and c1 == c2.
 * PSA(c1, c2, e=0.5), c1 == c2: C2PSA with a single PSABlock whose parts
 * are the module's own (attn, ffn): cv1 (c1 -> 2c, c = c1*e), split a, b;
 * b + attn(b), then + ffn(b), with c/64 heads; cv2(cat(a, b)). */
#include <stdio.h>

#include "nn/model_internal.h"

/* ---- SCDown ---- */

typedef struct scdown_block {
    yolo_conv_block cv1, cv2;
} scdown_block;

static yolo_status scdown_build(yolo_module_ctx *ctx) {
    int c1, c2;
    int64_t k, s;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_int(ctx, 1, 3, &k)) || (st = yolo_module_arg_int(ctx, 2, 2, &s)))
        return st;
    if (k < 1 || k > 31 || s < 1 || s > 8)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "k=%lld s=%lld out of range", (long long)k, (long long)s);
    scdown_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, c2, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", c2, c2, (int)k, (int)s, YOLO_AUTOPAD, c2, 1,
                                   YOLO_ACT_IDENTITY)))
        return st;
    yolo_module_set_args_text(ctx, "[%d, %d, %lld, %lld]", c1, c2, (long long)k, (long long)s);
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status scdown_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                  yolo_module_outputs *out) {
    (void)n_in;
    const scdown_block *b = state;
    return module_one_output(out, yolo_conv_block_forward(f, &b->cv2, yolo_conv_block_forward(f, &b->cv1, in[0])));
}

/* ---- CIB and RepVGGDW ---- */

struct cib_block {
    yolo_conv_block cv[5]; /* cv1.0 .. cv1.4; with lk, cv[2] is RepVGGDW's conv (7x7) */
    yolo_conv_block conv1; /* with lk: RepVGGDW's conv1 (3x3) */
    bool lk, add;
};

size_t cib_block_size(void) { return sizeof(cib_block); }

static yolo_status conv_at(yolo_module_ctx *ctx, yolo_conv_block *b, const char *name, const char *leaf, int c1,
                           int c2, int k, int g, yolo_act act) {
    char full[64];
    if (!module_join_name(ctx, full, sizeof(full), name, leaf)) return YOLO_ERR_ARG;
    return yolo_conv_block_init(ctx, b, full, c1, c2, k, 1, YOLO_AUTOPAD, g, 1, act);
}

yolo_status cib_block_init(yolo_module_ctx *ctx, cib_block *b, const char *name, int c1, int c2, bool shortcut,
                           double e, bool lk) {
    const int c_ = (int)(c2 * e);
    if (c_ < 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "CIB hidden channels %d*%g < 1", c2, e);
    b->lk = lk;
    b->add = shortcut && c1 == c2;
    yolo_status st;
    if ((st = conv_at(ctx, &b->cv[0], name, "cv1.0", c1, c1, 3, c1, YOLO_ACT_DEFAULT)) ||
        (st = conv_at(ctx, &b->cv[1], name, "cv1.1", c1, 2 * c_, 1, 1, YOLO_ACT_DEFAULT)))
        return st;
    if (lk) {
        if ((st = conv_at(ctx, &b->cv[2], name, "cv1.2.conv", 2 * c_, 2 * c_, 7, 2 * c_, YOLO_ACT_IDENTITY)) ||
            (st = conv_at(ctx, &b->conv1, name, "cv1.2.conv1", 2 * c_, 2 * c_, 3, 2 * c_, YOLO_ACT_IDENTITY)))
            return st;
        yolo_module_add_leaves(ctx, 1); /* RepVGGDW's own nn.SiLU() */
    } else if ((st = conv_at(ctx, &b->cv[2], name, "cv1.2", 2 * c_, 2 * c_, 3, 2 * c_, YOLO_ACT_DEFAULT))) {
        return st;
    }
    if ((st = conv_at(ctx, &b->cv[3], name, "cv1.3", 2 * c_, c2, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = conv_at(ctx, &b->cv[4], name, "cv1.4", c2, c2, 3, c2, YOLO_ACT_DEFAULT)))
        return st;
    return YOLO_OK;
}

yolo_tensor *cib_block_forward(const yolo_forward_ctx *f, const void *block, yolo_tensor *x) {
    const cib_block *b = block;
    yolo_tensor *y = yolo_conv_block_forward(f, &b->cv[1], yolo_conv_block_forward(f, &b->cv[0], x));
    if (y && b->lk) {
        yolo_tensor *big = yolo_conv_block_forward(f, &b->cv[2], y), *small = yolo_conv_block_forward(f, &b->conv1, y);
        y = big && small ? yolo_silu(f->graph, yolo_add(f->graph, big, small)) : NULL;
    } else {
        y = yolo_conv_block_forward(f, &b->cv[2], y);
    }
    y = yolo_conv_block_forward(f, &b->cv[4], yolo_conv_block_forward(f, &b->cv[3], y));
    return b->add && y ? yolo_add(f->graph, x, y) : y;
}

/* ---- PSA ---- */

typedef struct psa_module {
    int c;
    yolo_conv_block cv1, cv2;
    psa_block *block; /* its attn and ffn, named as the module's own */
} psa_module;

static yolo_status psa_build(yolo_module_ctx *ctx) {
    int c1, c2;
    double e;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_float(ctx, 1, 0.5, &e)))
        return st;
    if (c1 != c2) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "input channels %d must equal output channels %d", c1, c2);
    if (!(e > 0) || e > 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "e=%g out of range (0, 1]", e);
    psa_module *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    b->c = (int)(c1 * e);
    if (b->c < 64)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "hidden channels %d give %d attention heads (c/64); need >= 64",
                                 b->c, b->c / 64);
    if (!(b->block = module_alloc(ctx, psa_block_size()))) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, 2 * b->c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", 2 * b->c, c1, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = psa_block_init(ctx, b->block, "", b->c, b->c / 64)))
        return st;
    yolo_module_set_args_text(ctx, "[%d, %d]", c1, c2);
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status psa_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                               yolo_module_outputs *out) {
    (void)n_in;
    const psa_module *b = state;
    return module_split_chain_concat(f, &b->cv1, &b->cv2, in[0], 1, psa_block_forward, b->block, psa_block_size(), 1,
                                     out);
}

const yolo_module_type yolo_scdown_type = {"SCDown", "pointwise Conv then strided depthwise Conv (YOLOv10)",
                                           scdown_build, scdown_forward, NULL, NULL, 0};
const yolo_module_type yolo_psa_type = {"PSA", "position-sensitive attention block (YOLOv10)", psa_build, psa_forward,
                                        NULL, NULL, 0};
