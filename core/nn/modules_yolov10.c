/* YOLOv10's module types (Ultralytics' ultralytics/nn/modules/block.py):
 * SCDown, and CIB with its RepVGGDW, the inner block of C2fCIB
 * (modules_csp.c); PSA is in modules_attention.c beside C2PSA. yaml args as
 * parse_model passes them, the input channels first.
 *
 * SCDown(c1, c2, k, s): cv1 = Conv(c1, c2, 1), cv2 = Conv(c2, c2, k, s,
 * g=c2, act=False); a pointwise then a depthwise strided conv.
 * RepVGGDW(ed): SiLU(conv(x) + conv1(x)), conv = Conv(ed, ed, 7, 1, 3,
 * g=ed, act=False), conv1 = Conv(ed, ed, 3, 1, 1, g=ed, act=False); the
 * SiLU is its own (nn.SiLU()), whatever the model's default activation.
 * CIB(c1, c2, shortcut=True, e=0.5, lk=False), c_ = c2*e: cv1 =
 * Sequential(Conv(c1, c1, 3, g=c1), Conv(c1, 2c_, 1), RepVGGDW(2c_) if lk
 * else Conv(2c_, 2c_, 3, g=2c_), Conv(2c_, c2, 1), Conv(c2, c2, 3, g=c2)),
 * plus x when shortcut and c1 == c2. */
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
    yolo_conv_block conv1; /* with lk: RepVGGDW's conv1 (3x3), until fused into cv[2] */
    bool lk, add, lk_fused;
};

size_t cib_block_size(void) { return sizeof(cib_block); }

/* yolo_model_fuse's step for a CIB with lk (Ultralytics' RepVGGDW.fuse),
 * after the batch-norm fold: the 3x3 kernel centred in the 7x7 one
 * (padding 3 and 1 keep them aligned), biases summed: conv(x) + conv1(x) is
 * one convolution, and conv1 leaves the model. */
static yolo_status repvggdw_fuse(yolo_model *m, void *block) {
    cib_block *b = block;
    if (b->lk_fused) return YOLO_OK;
    yolo_status st = model_merge_centred_conv(m, &b->cv[2], &b->conv1);
    if (st) return yolo_error_context(st, "RepVGGDW fuse");
    b->lk_fused = true;
    return YOLO_OK;
}

yolo_status cib_block_init(yolo_module_ctx *ctx, cib_block *b, const char *name, int c1, int c2, bool shortcut,
                           double e, bool lk) {
    const int c_ = (int)(c2 * e);
    if (c_ < 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "CIB hidden channels %d*%g < 1", c2, e);
    b->lk = lk;
    b->add = shortcut && c1 == c2;
    yolo_status st;
    if ((st = module_conv_at(ctx, &b->cv[0], name, "cv1.0", c1, c1, 3, 1, YOLO_AUTOPAD, c1, YOLO_ACT_DEFAULT)) ||
        (st = module_conv_at(ctx, &b->cv[1], name, "cv1.1", c1, 2 * c_, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)))
        return st;
    if (lk) {
        if ((st = module_conv_at(ctx, &b->cv[2], name, "cv1.2.conv", 2 * c_, 2 * c_, 7, 1, YOLO_AUTOPAD, 2 * c_,
                                 YOLO_ACT_IDENTITY)) ||
            (st = module_conv_at(ctx, &b->conv1, name, "cv1.2.conv1", 2 * c_, 2 * c_, 3, 1, YOLO_AUTOPAD, 2 * c_,
                                 YOLO_ACT_IDENTITY)))
            return st;
        yolo_module_add_leaves(ctx, 1); /* RepVGGDW's own nn.SiLU() */
        if ((st = model_register_fuse(ctx, repvggdw_fuse, b))) return st;
    } else if ((st = module_conv_at(ctx, &b->cv[2], name, "cv1.2", 2 * c_, 2 * c_, 3, 1, YOLO_AUTOPAD, 2 * c_,
                                    YOLO_ACT_DEFAULT))) {
        return st;
    }
    if ((st = module_conv_at(ctx, &b->cv[3], name, "cv1.3", 2 * c_, c2, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)) ||
        (st = module_conv_at(ctx, &b->cv[4], name, "cv1.4", c2, c2, 3, 1, YOLO_AUTOPAD, c2, YOLO_ACT_DEFAULT)))
        return st;
    return YOLO_OK;
}

yolo_tensor *cib_block_forward(const yolo_forward_ctx *f, const void *block, yolo_tensor *x) {
    const cib_block *b = block;
    yolo_tensor *y = yolo_conv_block_forward(f, &b->cv[1], yolo_conv_block_forward(f, &b->cv[0], x));
    if (y && b->lk && b->lk_fused) {
        y = yolo_silu(f->graph, yolo_conv_block_forward(f, &b->cv[2], y));
    } else if (y && b->lk) {
        yolo_tensor *big = yolo_conv_block_forward(f, &b->cv[2], y), *small = yolo_conv_block_forward(f, &b->conv1, y);
        y = big && small ? yolo_silu(f->graph, yolo_add(f->graph, big, small)) : NULL;
    } else {
        y = yolo_conv_block_forward(f, &b->cv[2], y);
    }
    y = yolo_conv_block_forward(f, &b->cv[4], yolo_conv_block_forward(f, &b->cv[3], y));
    return b->add && y ? yolo_add(f->graph, x, y) : y;
}

const yolo_module_type yolo_scdown_type = {"SCDown", "pointwise Conv then strided depthwise Conv (YOLOv10)",
                                           scdown_build, scdown_forward, NULL, NULL, 0};
