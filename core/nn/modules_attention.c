/* C2PSA with its PSABlock and Attention (Ultralytics' ultralytics/nn/
 * modules/block.py, YOLO11): multi-head self-attention over the spatial
 * positions of a feature map, from the graph's batched matmul and softmax.
 *
 * Attention(dim, num_heads, attn_ratio=0.5): head_dim = dim / heads,
 * key_dim = head_dim * attn_ratio; qkv = Conv(dim, dim + 2*heads*key_dim, 1,
 * act=False) viewed as [B*heads, 2*key_dim + head_dim, N] (N = H*W) and
 * split into q, k, v; attn = softmax(q^T k / sqrt(key_dim)) over the keys;
 * x = (v attn^T) as [B, dim, H, W] + pe(v), pe a depthwise 3x3 Conv
 * without activation; out = proj(x), a 1x1 Conv without activation.
 * PSABlock(c, attn_ratio=0.5, num_heads, shortcut=True): x + attn(x), then
 * x + ffn(x) with ffn = Conv(c, 2c, 1), Conv(2c, c, 1, act=False).
 * C2PSA(c1, c2, n=1, e=0.5), c1 == c2: cv1 (c1 -> 2c, c = c1*e), split a, b;
 * b through n PSABlocks with c/64 heads; cv2(cat(a, b)).
 * PSA(c1, c2, e=0.5) (YOLOv10): C2PSA with one PSABlock whose attn and ffn
 * are the module's own. */
#include <math.h>
#include <stdio.h>

#include "nn/model_internal.h"

typedef struct attention_block {
    int heads, key_dim, head_dim;
    float scale;
    yolo_conv_block qkv, proj, pe;
} attention_block;

struct psa_block {
    attention_block attn;
    yolo_conv_block ffn0, ffn1;
    bool add;
};

size_t psa_block_size(void) { return sizeof(psa_block); }

typedef struct c2psa_block {
    int n, c;
    yolo_conv_block cv1, cv2;
    psa_block *m;
} c2psa_block;

static yolo_status attention_init(yolo_module_ctx *ctx, attention_block *a, const char *name, int dim, int heads,
                                  double attn_ratio) {
    if (heads < 1 || dim % heads)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "Attention %s: %d channels do not split into %d heads", name,
                                 dim, heads);
    a->heads = heads;
    a->head_dim = dim / heads;
    a->key_dim = (int)(a->head_dim * attn_ratio);
    if (a->key_dim < 1)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "Attention %s: key_dim %d*%g < 1", name, a->head_dim, attn_ratio);
    a->scale = (float)pow(a->key_dim, -0.5);
    const int h = dim + 2 * a->key_dim * heads;
    yolo_status st;
    if ((st = module_conv_at(ctx, &a->qkv, name, "qkv", dim, h, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_IDENTITY)) ||
        (st = module_conv_at(ctx, &a->proj, name, "proj", dim, dim, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_IDENTITY)) ||
        (st = module_conv_at(ctx, &a->pe, name, "pe", dim, dim, 3, 1, YOLO_AUTOPAD, dim, YOLO_ACT_IDENTITY)))
        return st;
    return YOLO_OK;
}

yolo_tensor *attention_heads(yolo_graph *g, yolo_tensor *t, int key_dim, int head_dim, float scale, yolo_tensor **v) {
    yolo_tensor *q = yolo_slice(g, t, 1, 0, key_dim);
    yolo_tensor *k = yolo_slice(g, t, 1, key_dim, key_dim);
    *v = yolo_slice(g, t, 1, 2 * key_dim, head_dim);
    /* [B*heads, N, N]: row i holds query position i's weights over the keys */
    yolo_tensor *attn = yolo_softmax(g, yolo_scale(g, yolo_matmul(g, q, k, true, false), scale), -1);
    return yolo_matmul(g, *v, attn, false, true);
}

static yolo_tensor *attention_forward(const yolo_forward_ctx *f, const attention_block *a, yolo_tensor *x) {
    yolo_graph *g = f->graph;
    yolo_tensor *qkv = yolo_conv_block_forward(f, &a->qkv, x);
    if (!qkv) return NULL;
    const int64_t B = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], N = H * W;
    const int64_t per_head = 2 * a->key_dim + a->head_dim;
    const int64_t heads_shape[3] = {B * a->heads, per_head, N}, image_shape[4] = {B, C, H, W};
    yolo_tensor *v = NULL;
    yolo_tensor *y = attention_heads(g, yolo_reshape(g, qkv, 3, heads_shape), a->key_dim, a->head_dim, a->scale, &v);
    y = yolo_reshape(g, y, 4, image_shape);
    yolo_tensor *pe = yolo_conv_block_forward(f, &a->pe, yolo_reshape(g, v, 4, image_shape));
    return y && pe ? yolo_conv_block_forward(f, &a->proj, yolo_add(g, y, pe)) : NULL;
}

yolo_status psa_block_init(yolo_module_ctx *ctx, psa_block *b, const char *name, int c, int heads) {
    char attn[64];
    if (!module_join_name(ctx, attn, sizeof(attn), name, "attn")) return YOLO_ERR_ARG;
    yolo_status st;
    if ((st = attention_init(ctx, &b->attn, attn, c, heads, 0.5)) ||
        (st = module_conv_at(ctx, &b->ffn0, name, "ffn.0", c, 2 * c, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_DEFAULT)) ||
        (st = module_conv_at(ctx, &b->ffn1, name, "ffn.1", 2 * c, c, 1, 1, YOLO_AUTOPAD, 1, YOLO_ACT_IDENTITY)))
        return st;
    b->add = true;
    return YOLO_OK;
}

yolo_tensor *psa_block_forward(const yolo_forward_ctx *f, const void *block, yolo_tensor *x) {
    const psa_block *b = block;
    yolo_tensor *a = attention_forward(f, &b->attn, x);
    if (!a) return NULL;
    x = b->add ? yolo_add(f->graph, x, a) : a;
    yolo_tensor *y = yolo_conv_block_forward(f, &b->ffn1, yolo_conv_block_forward(f, &b->ffn0, x));
    return b->add && y ? yolo_add(f->graph, x, y) : y;
}

/* C2PSA, or with `single` YOLOv10's PSA: one PSABlock whose attn and ffn
 * are the module's own (named without "m.0"), and no repeats argument. */
static yolo_status psa_family_build(yolo_module_ctx *ctx, bool single) {
    int c1, c2;
    double e;
    yolo_status st;
    if ((st = module_single_input(ctx, &c1)) || (st = module_out_channels_arg(ctx, &c2)) ||
        (st = yolo_module_arg_float(ctx, 1, 0.5, &e)))
        return st;
    if (c1 != c2) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "input channels %d must equal output channels %d", c1, c2);
    if (!(e > 0) || e > 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "e=%g out of range (0, 1]", e);
    c2psa_block *b = yolo_module_state_alloc(ctx, sizeof(*b));
    if (!b) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    b->n = single ? 1 : yolo_module_repeats(ctx);
    b->c = (int)(c1 * e);
    if (b->c < 64)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "hidden channels %d give %d attention heads (c/64); need >= 64",
                                 b->c, b->c / 64);
    if ((st = yolo_conv_block_init(ctx, &b->cv1, "cv1", c1, 2 * b->c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &b->cv2, "cv2", 2 * b->c, c1, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)))
        return st;
    if (!(b->m = module_alloc(ctx, sizeof(psa_block) * (size_t)(b->n ? b->n : 1))))
        return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < b->n; i++) {
        char name[32];
        if (single)
            name[0] = '\0';
        else
            snprintf(name, sizeof(name), "m.%d", i);
        if ((st = psa_block_init(ctx, &b->m[i], name, b->c, b->c / 64))) return st;
    }
    if (!single) return module_finish_repeated(ctx, c1, c2, b->n, 1);
    yolo_module_set_args_text(ctx, "[%d, %d]", c1, c2);
    yolo_module_set_out_channels(ctx, c2);
    return YOLO_OK;
}

static yolo_status c2psa_build(yolo_module_ctx *ctx) { return psa_family_build(ctx, false); }
static yolo_status psa_build(yolo_module_ctx *ctx) { return psa_family_build(ctx, true); }

static yolo_status c2psa_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                 yolo_module_outputs *out) {
    (void)n_in;
    const c2psa_block *b = state;
    return module_split_chain_concat(f, &b->cv1, &b->cv2, in[0], 1, psa_block_forward, b->m, sizeof(*b->m), b->n, out);
}

const yolo_module_type yolo_c2psa_type = {"C2PSA", "CSP block with position-sensitive attention (YOLO11)",
                                          c2psa_build, c2psa_forward, NULL, NULL, YOLO_MODULE_REPEATS_INSIDE};
const yolo_module_type yolo_psa_type = {"PSA", "position-sensitive attention block (YOLOv10)", psa_build, c2psa_forward,
                                        NULL, NULL, 0};
