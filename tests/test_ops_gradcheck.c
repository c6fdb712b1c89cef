/* Finite-difference gradient checks through the graph API for every
 * differentiable op (yolo_op_differentiable), and shape-error reporting.
 *
 * Each case makes its inputs persistent tensors with requires_grad, builds
 * out = f(inputs) and loss = sum(out * R) for a fixed random R, and appends
 * yolo_graph_backward. The analytic gradients (the inputs' ->grad after one
 * run from zero) are compared with central differences of the same loss,
 * evaluated on the host in double from the downloaded `out`.
 *
 * Coverage is derived, not declared: the ops of the nodes each case builds
 * (before the loss) are recorded, and the test fails if any differentiable
 * op was never built by a case and is not in `skipped` with a reason. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/collective.h"
#include "graph/graph_internal.h"
#include "test_util.h"
#include "test_util_ops.h"

#define MAX_PARAMS 4
#define MAX_CHECKED 40   /* elements checked per input (spread over the tensor) */
#define FD_EPS 1e-3
#define FD_ATOL 1e-2
#define FD_RTOL 1e-2

static yolo_backend *be;
static bool covered[YOLO_OP_COUNT];

/* Input value patterns. */
enum {
    VALUES_RANDOM = 0,
    VALUES_DISTINCT /* well-separated and away from 0: maxpool, relu */,
    VALUES_POSITIVE,
    VALUES_WIDE /* in [-5, 5], 0.1 or more from hardswish's kinks at -3 and 3 */
};

typedef struct gc_case gc_case;
typedef yolo_tensor *(*gc_build)(yolo_graph *g, yolo_tensor **p, const gc_case *c);

struct gc_case {
    const char *name;
    gc_build build;
    int np;
    int nd[MAX_PARAMS];
    int64_t shape[MAX_PARAMS][4];
    int values;
    int i[8];        /* case arguments, meaning depends on build */
    int tn;          /* target shape for sum_to / broadcast_to */
    int64_t t[4];
};

/* Tensors a build function needs besides the checked inputs (running stats). */
static yolo_tensor *aux[8];
static int n_aux;

static yolo_tensor *aux_tensor(int ndim, const int64_t *shape, float value) {
    yolo_tensor *t = yolo_tensor_new(be, "aux", YOLO_F32, ndim, shape, false);
    int64_t n = ops_numel(ndim, shape);
    float *d = malloc((size_t)n * sizeof *d);
    for (int64_t k = 0; k < n; k++) d[k] = value;
    yolo_tensor_upload_f32(t, d, n);
    free(d);
    aux[n_aux++] = t;
    return t;
}

/* ---- builders of the cases ---- */

static yolo_tensor *b_conv(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    yolo_conv2d_params cp = {c->i[1], c->i[1], c->i[2], c->i[2], c->i[3], c->i[3], c->i[4]};
    yolo_tensor *bias = c->np > 2 ? p[2] : NULL;
    return c->i[0] ? yolo_conv_transpose2d(g, p[0], p[1], bias, &cp) : yolo_conv2d(g, p[0], p[1], bias, &cp);
}

/* i0: 0 eval, 1 training (autograd fuses the backward into BN_BWD), 2 training
 * built from raw nodes with the batch mean read a second time (unfused
 * backward: BN_APPLY_BWD_DATA + BN_STATS_BWD). */
/* sync_bn (i0 = 3) as a rank of two whose peer holds fixed statistics
 * (mean 0.3 + 0.1c, var 1.2 + 0.2c) and whose loss ignores them (the peer
 * adds no gradient): the finite differences of this rank's loss then check
 * SYNC_BN_STATS and its backward. */
static yolo_status fake_peer(void *user, double *data, int64_t n, const char *what) {
    (void)user;
    const int64_t C = n / 3;
    if (strstr(what, "statistics"))
        for (int64_t c = 0; c < C; c++) {
            data[c] += 0.3 + 0.1 * c;
            data[C + c] += 1.2 + 0.2 * c;
            data[2 * C + c] += (0.3 + 0.1 * c) * (0.3 + 0.1 * c);
        }
    return YOLO_OK;
}
static const yolo_graph_collective fake_pair = {2, fake_peer, NULL};

static yolo_tensor *b_batch_norm(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    int64_t C = p[0]->shape[1];
    yolo_tensor *rm = aux_tensor(1, &C, 0.1f), *rv = aux_tensor(1, &C, 1.5f);
    if (c->i[0] == 3) yolo_graph_set_collective(g, &fake_pair);
    if (c->i[0] != 2) return yolo_batch_norm(g, p[0], p[1], p[2], rm, rv, c->i[0] != 0, 0.1f, 1e-5f);
    int64_t c2[2] = {2, C};
    yolo_tensor *stats = yolo_graph_node(g, YOLO_OP_BN_STATS, YOLO_F32, 2, c2, 3, (yolo_tensor *[]){p[0], rm, rv});
    if (!stats) return NULL;
    yolo_tensor *mean = yolo_graph_view(g, stats, 0, 1, &C);
    yolo_tensor *var = yolo_graph_view(g, stats, (size_t)C * sizeof(float), 1, &C);
    if (!mean || !var) return NULL;
    yolo_tensor *y = yolo_graph_node(g, YOLO_OP_BN_APPLY, YOLO_F32, p[0]->ndim, p[0]->shape, 5,
                                     (yolo_tensor *[]){p[0], mean, var, p[1], p[2]});
    if (!y) return NULL;
    y->node->fparams[0] = 1e-5f;
    return yolo_add(g, y, yolo_scale(g, yolo_sum(g, mean), 0.5f));
}

static yolo_tensor *b_unary(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    switch (c->i[0]) {
    case 0: return yolo_silu(g, p[0]);
    case 1: return yolo_relu(g, p[0]);
    case 2: return yolo_sigmoid(g, p[0]);
    case 3: return yolo_scale(g, p[0], -1.75f);
    case 4: return yolo_cast(g, p[0], YOLO_F32, 2.5f);
    case 5: return yolo_reshape(g, p[0], 2, (int64_t[]){p[0]->shape[0], yolo_tensor_numel(p[0]) / p[0]->shape[0]});
    case 6: return yolo_global_avgpool(g, p[0]);
    case 7: return yolo_upsample_nearest(g, p[0], c->i[1]);
    case 8: return yolo_maxpool2d(g, p[0], c->i[1], c->i[2], c->i[3]);
    case 9: return yolo_sum(g, p[0]);
    case 10: return yolo_mean(g, p[0]);
    case 11: return yolo_sum_squares(g, p[0]);
    case 12: return yolo_softmax(g, p[0], c->i[1]);
    case 13: return yolo_log_softmax(g, p[0], c->i[1]);
    case 14: return yolo_sum_to(g, p[0], c->tn, c->t);
    case 16: return yolo_hardswish(g, p[0]);
    default: return yolo_broadcast_to(g, p[0], c->tn, c->t);
    }
}

static yolo_tensor *b_binary(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    switch (c->i[0]) {
    case 0: return yolo_add(g, p[0], p[1]);
    case 1: return yolo_sub(g, p[0], p[1]);
    default: return yolo_mul(g, p[0], p[1]);
    }
}

static yolo_tensor *b_concat(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    return yolo_concat(g, c->np, p, c->i[0]);
}

/* i0 axis; i1 == 0: slice from i2 of length i3; else chunk into i1 parts, concat of parts 2 and 0. */
static yolo_tensor *b_slice(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    if (!c->i[1]) return yolo_slice(g, p[0], c->i[0], c->i[2], c->i[3]);
    yolo_tensor *parts[4];
    if (!yolo_chunk(g, p[0], c->i[1], c->i[0], parts)) return NULL;
    return yolo_concat(g, 2, (yolo_tensor *[]){parts[2], parts[0]}, c->i[0]);
}

static yolo_tensor *b_matmul(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    if (c->i[2]) return yolo_linear(g, p[0], p[1], c->np > 2 ? p[2] : NULL);
    return yolo_matmul(g, p[0], p[1], c->i[0] != 0, c->i[1] != 0);
}

/* Attention's core as Ultralytics' Attention.forward computes it per head:
 * softmax(q^T k * scale, -1), then v attn^T (q, k [B,kd,N], v [B,hd,N]). */
static yolo_tensor *b_attention(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    (void)c;
    yolo_tensor *attn = yolo_softmax(g, yolo_scale(g, yolo_matmul(g, p[0], p[1], true, false), 0.7f), -1);
    return yolo_matmul(g, p[2], attn, false, true);
}

/* The same from one qkv map [B, heads*(2kd+hd), H, W] as Attention.forward
 * splits it: a view as [B*heads, 2kd+hd, N], q, k, v sliced from it, and v
 * used twice (the attention product and, viewed as [B, C, H, W], a
 * positional term); c->i[0] = heads, c->i[1] = kd, c->i[2] = hd. */
static yolo_tensor *b_attention_qkv(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    const int64_t B = p[0]->shape[0], H = p[0]->shape[2], W = p[0]->shape[3], heads = c->i[0], kd = c->i[1],
                  hd = c->i[2];
    const int64_t hs[3] = {B * heads, 2 * kd + hd, H * W}, img[4] = {B, heads * hd, H, W};
    yolo_tensor *t = yolo_reshape(g, p[0], 3, hs);
    yolo_tensor *q = yolo_slice(g, t, 1, 0, kd), *k = yolo_slice(g, t, 1, kd, kd), *v = yolo_slice(g, t, 1, 2 * kd, hd);
    yolo_tensor *attn = yolo_softmax(g, yolo_scale(g, yolo_matmul(g, q, k, true, false), 0.7f), -1);
    yolo_tensor *y = yolo_reshape(g, yolo_matmul(g, v, attn, false, true), 4, img);
    return yolo_add(g, y, yolo_scale(g, yolo_reshape(g, v, 4, img), -0.6f));
}

static yolo_tensor *b_attention_bn(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    int64_t C = p[1]->shape[0];
    yolo_tensor *rm = aux_tensor(1, &C, 0.1f), *rv = aux_tensor(1, &C, 1.5f);
    yolo_tensor *y = yolo_conv2d(g, p[0], p[1], NULL, &(yolo_conv2d_params){0});
    y = yolo_batch_norm(g, y, p[2], p[3], rm, rv, true, 0.1f, 1e-3f);
    yolo_tensor *q[1] = {y};
    return b_attention_qkv(g, q, c);
}

/* A small C2f-like block: conv-bn-silu, chunk, residual bottleneck, concat,
 * upsample and SPPF-style max pooling, so gradients of shared nodes add up. */
static yolo_tensor *b_block(yolo_graph *g, yolo_tensor **p, const gc_case *c) {
    (void)c;
    yolo_conv2d_params same = {1, 1, 1, 1, 1, 1, 1};
    int64_t C = p[1]->shape[0];
    yolo_tensor *rm = aux_tensor(1, &C, 0), *rv = aux_tensor(1, &C, 1), *gm = aux_tensor(1, &C, 1.2f);
    yolo_tensor *bt = aux_tensor(1, &C, 0.1f);
    yolo_tensor *y = yolo_silu(g, yolo_batch_norm(g, yolo_conv2d(g, p[0], p[1], NULL, &same), gm, bt, rm, rv, true,
                                                  0.03f, 1e-3f));
    yolo_tensor *parts[2];
    if (!yolo_chunk(g, y, 2, 1, parts)) return NULL;
    yolo_tensor *r = yolo_add(g, parts[1], yolo_silu(g, yolo_conv2d(g, parts[1], p[2], NULL, &same)));
    yolo_tensor *cat = yolo_concat(g, 3, (yolo_tensor *[]){parts[0], parts[1], r}, 1);
    yolo_tensor *pooled = yolo_maxpool2d(g, cat, 3, 1, 1);
    return yolo_add(g, yolo_upsample_nearest(g, yolo_maxpool2d(g, pooled, 2, 2, 0), 2), cat);
}

/* Positional rows: trailing fields (i, tn, t) are left out where unused. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#define S4(a, b, c, d) {a, b, c, d}
static const gc_case cases[] = {
    /* convolutions: i = {transposed, stride, pad, dilation, groups} */
    {"conv2d 3x3 odd sizes + bias", b_conv, 3, {4, 4, 1}, {S4(2, 3, 7, 9), S4(5, 3, 3, 3), S4(5, 1, 1, 1)}, 0, {0, 1, 1, 1, 1}},
    {"conv2d stride 2", b_conv, 2, {4, 4}, {S4(1, 3, 9, 8), S4(4, 3, 3, 3)}, 0, {0, 2, 1, 1, 1}},
    {"conv2d groups 2", b_conv, 3, {4, 4, 1}, {S4(2, 4, 6, 5), S4(6, 2, 3, 3), S4(6, 1, 1, 1)}, 0, {0, 1, 1, 1, 2}},
    {"conv2d depthwise stride 2", b_conv, 2, {4, 4}, {S4(1, 4, 7, 7), S4(4, 1, 3, 3)}, 0, {0, 2, 1, 1, 4}},
    {"conv2d 1x1", b_conv, 2, {4, 4}, {S4(2, 5, 4, 3), S4(3, 5, 1, 1)}, 0, {0, 1, 0, 1, 1}},
    {"conv2d dilation 2", b_conv, 2, {4, 4}, {S4(1, 2, 8, 7), S4(3, 2, 3, 3)}, 0, {0, 1, 2, 2, 1}},
    {"conv_transpose2d 2x2 stride 2 + bias", b_conv, 3, {4, 4, 1}, {S4(1, 4, 3, 4), S4(4, 3, 2, 2), S4(3, 1, 1, 1)}, 0, {1, 2, 0, 1, 1}},
    {"conv_transpose2d groups 2 stride 2 pad 1", b_conv, 2, {4, 4}, {S4(2, 4, 3, 3), S4(4, 2, 3, 3)}, 0, {1, 2, 1, 1, 2}},
    /* batch norm: i0 = training */
    {"batch_norm training", b_batch_norm, 3, {4, 1, 1}, {S4(2, 3, 4, 5), S4(3, 1, 1, 1), S4(3, 1, 1, 1)}, 0, {1}},
    {"batch_norm training 2-D", b_batch_norm, 3, {2, 1, 1}, {S4(6, 4, 1, 1), S4(4, 1, 1, 1), S4(4, 1, 1, 1)}, 0, {1}},
    {"batch_norm training, mean read twice", b_batch_norm, 3, {4, 1, 1}, {S4(2, 3, 4, 5), S4(3, 1, 1, 1), S4(3, 1, 1, 1)}, 0, {2}},
    {"batch_norm training, sync_bn over 2 ranks", b_batch_norm, 3, {4, 1, 1}, {S4(2, 3, 4, 5), S4(3, 1, 1, 1), S4(3, 1, 1, 1)}, 0, {3}},
    {"batch_norm eval", b_batch_norm, 3, {4, 1, 1}, {S4(2, 3, 3, 3), S4(3, 1, 1, 1), S4(3, 1, 1, 1)}, 0, {0}},
    /* elementwise */
    {"silu", b_unary, 1, {4}, {S4(2, 3, 5, 7)}, 0, {0}},
    {"relu", b_unary, 1, {3}, {S4(3, 5, 7, 1)}, VALUES_DISTINCT, {1}},
    {"sigmoid", b_unary, 1, {2}, {S4(5, 9, 1, 1)}, 0, {2}},
    {"hardswish (all three pieces)", b_unary, 1, {4}, {S4(2, 3, 5, 7)}, VALUES_WIDE, {16}},
    {"scale", b_unary, 1, {1}, {S4(13, 1, 1, 1)}, 0, {3}},
    {"cast f32->f32 x2.5", b_unary, 1, {2}, {S4(3, 7, 1, 1)}, 0, {4}},
    {"reshape (view)", b_unary, 1, {4}, {S4(2, 3, 2, 5)}, 0, {5}},
    {"add broadcast per channel", b_binary, 2, {4, 4}, {S4(2, 3, 4, 5), S4(1, 3, 1, 1)}, 0, {0}},
    {"sub broadcast both sides", b_binary, 2, {3, 2}, {S4(3, 1, 5, 1), S4(4, 1, 1, 1)}, 0, {1}},
    {"mul broadcast both sides", b_binary, 2, {3, 2}, {S4(3, 1, 5, 1), S4(4, 1, 1, 1)}, 0, {2}},
    {"mul same shape", b_binary, 2, {2, 2}, {S4(3, 7, 1, 1), S4(3, 7, 1, 1)}, 0, {2}},
    {"add scalar", b_binary, 2, {1, 3}, {S4(1, 1, 1, 1), S4(2, 3, 5, 1)}, 0, {0}},
    /* shape */
    {"concat axis 1", b_concat, 3, {4, 4, 4}, {S4(2, 1, 3, 4), S4(2, 3, 3, 4), S4(2, 2, 3, 4)}, 0, {1}},
    {"concat axis 3 (negative)", b_concat, 2, {4, 4}, {S4(1, 2, 3, 4), S4(1, 2, 3, 1)}, 0, {-1}},
    {"slice axis 2", b_slice, 1, {4}, {S4(2, 3, 7, 5)}, 0, {2, 0, 2, 4}},
    {"chunk 3 along channels", b_slice, 1, {4}, {S4(2, 6, 3, 3)}, 0, {1, 3}},
    {"sum_to per channel", b_unary, 1, {4}, {S4(2, 3, 4, 5)}, 0, {14}, 4, {1, 3, 1, 1}},
    {"sum_to fewer dims", b_unary, 1, {3}, {S4(4, 3, 5, 1)}, 0, {14}, 1, {5}},
    {"broadcast_to", b_unary, 1, {3}, {S4(3, 1, 5, 1)}, 0, {15}, 4, {2, 3, 4, 5}},
    /* spatial */
    {"upsample x2", b_unary, 1, {4}, {S4(1, 2, 3, 5)}, 0, {7, 2}},
    {"upsample x3", b_unary, 1, {4}, {S4(2, 1, 2, 3)}, 0, {7, 3}},
    {"maxpool 5/1/2 (SPPF)", b_unary, 1, {4}, {S4(1, 2, 7, 6)}, VALUES_DISTINCT, {8, 5, 1, 2}},
    {"maxpool 3/2/1", b_unary, 1, {4}, {S4(2, 2, 7, 7)}, VALUES_DISTINCT, {8, 3, 2, 1}},
    {"maxpool 2/2/0 odd", b_unary, 1, {4}, {S4(1, 3, 5, 7)}, VALUES_DISTINCT, {8, 2, 2, 0}},
    {"global_avgpool", b_unary, 1, {4}, {S4(2, 3, 5, 3)}, 0, {6}},
    /* linear algebra */
    {"matmul", b_matmul, 2, {2, 2}, {S4(5, 4, 1, 1), S4(4, 3, 1, 1)}, 0, {0, 0}},
    {"matmul a^T", b_matmul, 2, {2, 2}, {S4(4, 5, 1, 1), S4(4, 3, 1, 1)}, 0, {1, 0}},
    {"matmul b^T", b_matmul, 2, {2, 2}, {S4(5, 4, 1, 1), S4(3, 4, 1, 1)}, 0, {0, 1}},
    {"matmul a^T b^T", b_matmul, 2, {2, 2}, {S4(4, 5, 1, 1), S4(3, 4, 1, 1)}, 0, {1, 1}},
    {"matmul batched", b_matmul, 2, {3, 3}, {S4(2, 4, 3, 1), S4(2, 3, 5, 1)}, 0, {0, 0}},
    {"matmul batched a^T", b_matmul, 2, {3, 3}, {S4(3, 4, 5, 1), S4(3, 4, 6, 1)}, 0, {1, 0}},
    {"matmul batched b^T", b_matmul, 2, {3, 3}, {S4(2, 4, 5, 1), S4(2, 6, 5, 1)}, 0, {0, 1}},
    {"matmul batched a^T b^T", b_matmul, 2, {3, 3}, {S4(2, 5, 4, 1), S4(2, 3, 5, 1)}, 0, {1, 1}},
    {"attention (q^T k, softmax, v attn^T)", b_attention, 3, {3, 3, 3}, {S4(2, 3, 6, 1), S4(2, 3, 6, 1), S4(2, 4, 6, 1)},
     0, {0}},
    {"attention from one qkv map (views, slices, v twice)", b_attention_qkv, 1, {4}, {S4(2, 16, 2, 3)}, 0, {2, 2, 4}},
    {"conv + bn + attention", b_attention_bn, 4, {4, 4, 1, 1}, {S4(2, 4, 2, 3), S4(16, 4, 1, 1), S4(16, 1, 1, 1), S4(16, 1, 1, 1)}, 0, {2, 2, 4}},
    {"linear + bias", b_matmul, 3, {2, 2, 1}, {S4(3, 7, 1, 1), S4(5, 7, 1, 1), S4(5, 1, 1, 1)}, 0, {0, 0, 1}},
    {"softmax axis 1", b_unary, 1, {4}, {S4(2, 5, 3, 2)}, 0, {12, 1}},
    {"softmax last axis", b_unary, 1, {2}, {S4(4, 7, 1, 1)}, 0, {12, -1}},
    {"softmax axis 0", b_unary, 1, {3}, {S4(3, 2, 4, 1)}, 0, {12, 0}},
    {"log_softmax axis 1", b_unary, 1, {4}, {S4(2, 5, 3, 2)}, 0, {13, 1}},
    {"log_softmax last axis", b_unary, 1, {2}, {S4(4, 7, 1, 1)}, 0, {13, -1}},
    /* reductions */
    {"sum", b_unary, 1, {3}, {S4(3, 4, 5, 1)}, 0, {9}},
    {"mean", b_unary, 1, {2}, {S4(7, 3, 1, 1)}, 0, {10}},
    {"sum_squares", b_unary, 1, {4}, {S4(2, 3, 2, 3)}, 0, {11}},
    /* a block mixing them, gradients summed over shared nodes */
    {"C2f-like block", b_block, 3, {4, 4, 4}, {S4(1, 3, 6, 6), S4(4, 3, 3, 3), S4(2, 2, 3, 3)}, 0, {0}},
};

/* Differentiable ops deliberately without a case, and why (none today;
 * the NONE row only keeps the array non-empty). */
static const struct { int op; const char *why; } skipped[] = {
    {YOLO_OP_NONE, "graph inputs and leaves, no kernel"},
};
/* Variants of covered ops left out, and why (printed with the results). */
static const char *const skipped_variants[] = {
    "cast f32->f16->f32: f16 rounding (2^-11 relative) swamps a 1e-3 finite difference; "
    "CAST is checked on f32->f32 with a factor",
    "cast from u8/i32: integer inputs have no gradient",
};

static void fill_values(float *d, int64_t n, int values, uint64_t seed) {
    test_fill_uniform(d, n, seed, -1.5f, 1.5f);
    if (values == VALUES_DISTINCT) { /* a shuffled ladder: gaps of 0.05, never within 0.025 of 0 */
        uint64_t st = seed;
        for (int64_t k = 0; k < n; k++) d[k] = (float)(k - n / 2) * 0.05f + 0.025f;
        for (int64_t k = n - 1; k > 0; k--) {
            int64_t j = (int64_t)(test_uniform(&st, 0, 1) * (float)(k + 1));
            if (j > k) j = k;
            float t = d[k];
            d[k] = d[j];
            d[j] = t;
        }
    } else if (values == VALUES_POSITIVE) {
        for (int64_t k = 0; k < n; k++) d[k] = fabsf(d[k]) + 0.5f;
    } else if (values == VALUES_WIDE) {
        for (int64_t k = 0; k < n; k++) {
            d[k] *= 10.0f / 3.0f;
            if (fabsf(fabsf(d[k]) - 3.0f) < 0.1f) d[k] += 0.2f;
        }
    }
}

/* Host loss from the downloaded output, in double. */
static double host_loss(const yolo_tensor *out, const float *r, float *buf) {
    int64_t n = yolo_tensor_numel(out);
    if (yolo_tensor_download_f32(out, buf, n) != YOLO_OK) return NAN;
    double l = 0;
    for (int64_t k = 0; k < n; k++) l += (double)buf[k] * r[k];
    return l;
}

static void run_case(int index, const gc_case *c) {
    yolo_tensor *p[MAX_PARAMS] = {0};
    float *data[MAX_PARAMS] = {0};
    n_aux = 0;
    for (int k = 0; k < c->np; k++) {
        int64_t n = ops_numel(c->nd[k], c->shape[k]);
        p[k] = yolo_tensor_new(be, "p", YOLO_F32, c->nd[k], c->shape[k], true);
        data[k] = malloc((size_t)n * sizeof(float));
        fill_values(data[k], n, c->values, 1000u * (uint64_t)index + (uint64_t)k + 1);
        yolo_tensor_upload_f32(p[k], data[k], n);
        snprintf(p[k]->name, sizeof p[k]->name, "input%d", k);
    }
    yolo_graph *g = yolo_graph_new(be);
    int first = yolo_graph_node_count(g);
    yolo_tensor *out = c->build(g, p, c);
    float *r = NULL, *obuf = NULL;
    yolo_tensor *tr = NULL;
    if (!out) {
        fprintf(stderr, "FAIL %s: build failed: %s\n", c->name, yolo_graph_error(g));
        test_failures++;
        goto done;
    }
    for (int k = first; k < yolo_graph_node_count(g); k++) covered[g->nodes[k]->node->op] = true;
    int64_t no = yolo_tensor_numel(out);
    r = ops_random(no, 7777u + (uint64_t)index, -1, 1);
    obuf = malloc((size_t)no * sizeof *obuf);
    tr = yolo_tensor_new(be, "R", YOLO_F32, out->ndim, out->shape, false);
    yolo_tensor_upload_f32(tr, r, no);
    yolo_tensor *loss = yolo_sum(g, yolo_mul(g, out, tr));
    if (!loss || yolo_graph_mark_output(g, out) != YOLO_OK || yolo_graph_backward(g, loss) != YOLO_OK ||
        yolo_graph_plan(g, NULL) != YOLO_OK) {
        fprintf(stderr, "FAIL %s: loss/backward/plan: %s\n", c->name, yolo_last_error());
        test_failures++;
        goto done;
    }
    for (int k = 0; k < c->np; k++) yolo_tensor_zero(p[k]->grad);
    if (yolo_graph_run(g) != YOLO_OK) {
        fprintf(stderr, "FAIL %s: run: %s\n", c->name, yolo_last_error());
        test_failures++;
        goto done;
    }
    float *grads[MAX_PARAMS] = {0};
    for (int k = 0; k < c->np; k++) grads[k] = ops_download(p[k]->grad);
    int bad = 0;
    double worst = 0; /* largest error as a fraction of the tolerance */
    for (int k = 0; k < c->np && !bad; k++) {
        int64_t n = ops_numel(c->nd[k], c->shape[k]);
        int64_t step = n > MAX_CHECKED ? n / MAX_CHECKED : 1;
        for (int64_t e = (index + k) % step; e < n && !bad; e += step) {
            float orig = data[k][e];
            data[k][e] = (float)(orig + FD_EPS);
            yolo_tensor_upload_f32(p[k], data[k], n);
            yolo_graph_run(g);
            double lp = host_loss(out, r, obuf);
            data[k][e] = (float)(orig - FD_EPS);
            yolo_tensor_upload_f32(p[k], data[k], n);
            yolo_graph_run(g);
            double lm = host_loss(out, r, obuf);
            data[k][e] = orig;
            yolo_tensor_upload_f32(p[k], data[k], n);
            double h = (double)(float)(orig + FD_EPS) - (double)(float)(orig - FD_EPS);
            double numeric = (lp - lm) / h, analytic = grads[k][e];
            double ratio = fabs(numeric - analytic) / (FD_ATOL + FD_RTOL * fabs(numeric));
            if (ratio > worst) worst = ratio;
            if (!(ratio <= 1.0)) {
                char sh[48];
                fprintf(stderr, "FAIL gradcheck %s: d loss / d input%d%s[%lld] analytic %.6g, numeric %.6g\n", c->name,
                        k, ops_shape_str(sh, sizeof sh, c->nd[k], c->shape[k]), (long long)e, analytic, numeric);
                test_failures++;
                bad = 1;
            }
        }
    }
    for (int k = 0; k < c->np; k++) free(grads[k]);
    if (!bad) printf("ok   %-42s worst error %.3f of the tolerance\n", c->name, worst);
done:
    yolo_graph_free(g);
    yolo_tensor_free(tr);
    for (int k = 0; k < c->np; k++) {
        yolo_tensor_free(p[k]);
        free(data[k]);
    }
    for (int k = 0; k < n_aux; k++) yolo_tensor_free(aux[k]);
    free(r);
    free(obuf);
}

/* Every differentiable op was built by some case (or is skipped with a reason). */
static void check_coverage(void) {
    for (int op = 0; op < YOLO_OP_COUNT; op++) {
        if (!yolo_op_differentiable(op) || covered[op]) continue;
        const char *why = NULL;
        for (size_t k = 0; k < sizeof skipped / sizeof skipped[0]; k++)
            if (skipped[k].op == op) why = skipped[k].why;
        if (why) {
            printf("skip %s: %s\n", yolo_op_name(op), why);
            continue;
        }
        fprintf(stderr, "FAIL: differentiable op %s has no gradient check case\n", yolo_op_name(op));
        test_failures++;
    }
    for (size_t k = 0; k < sizeof skipped_variants / sizeof skipped_variants[0]; k++)
        printf("skip %s\n", skipped_variants[k]);
}

/* ---- shape errors: NULL, a failed graph, and a message naming op and shapes ---- */

static void expect_error(yolo_graph *g, yolo_tensor *t, const char *what, const char *const *needles) {
    CHECK_MSG(t == NULL, "%s: expected NULL", what);
    CHECK_MSG(yolo_graph_status(g) != YOLO_OK, "%s: graph status is ok", what);
    for (int k = 0; needles[k]; k++) {
        CHECK_MSG(strstr(yolo_graph_error(g), needles[k]) != NULL, "%s: graph error '%s' lacks '%s'", what,
                  yolo_graph_error(g), needles[k]);
        CHECK_MSG(test_error_mentions(needles[k]), "%s: yolo_last_error '%s' lacks '%s'", what, yolo_last_error(),
                  needles[k]);
    }
}

static void test_shape_errors(void) {
    struct {
        const char *what;
        int na, nb;
        int64_t a[4], b[4];
        const char *needles[4];
    } bad[] = {
        {"add [2,3] + [4,5]", 2, 2, {2, 3}, {4, 5}, {"add", "[2,3]", "[4,5]", NULL}},
        {"conv2d with wrong channels", 4, 4, {1, 3, 8, 8}, {4, 5, 3, 3}, {"conv2d", "[1,3,8,8]", "[4,5,3,3]", NULL}},
        {"matmul inner mismatch", 2, 2, {3, 4}, {5, 6}, {"matmul", "[3,4]", "[5,6]", NULL}},
        {"concat mismatch", 4, 4, {1, 2, 3, 4}, {1, 2, 5, 4}, {"concat", "[1,2,3,4]", "[1,2,5,4]", NULL}},
        {"mul [3,4,5] * [2,5]", 3, 2, {3, 4, 5}, {2, 5}, {"mul", "[3,4,5]", "[2,5]", NULL}},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        yolo_graph *g = yolo_graph_new(be);
        yolo_tensor *a = yolo_graph_input(g, "a", YOLO_F32, bad[k].na, bad[k].a);
        yolo_tensor *b = yolo_graph_input(g, "b", YOLO_F32, bad[k].nb, bad[k].b);
        yolo_tensor *t;
        switch (k) {
        case 0: t = yolo_add(g, a, b); break;
        case 1: t = yolo_conv2d(g, a, b, NULL, &(yolo_conv2d_params){0}); break;
        case 2: t = yolo_matmul(g, a, b, false, false); break;
        case 3: t = yolo_concat(g, 2, (yolo_tensor *[]){a, b}, 1); break;
        default: t = yolo_mul(g, a, b); break;
        }
        expect_error(g, t, bad[k].what, bad[k].needles);
        /* later builders given the NULL keep the first error */
        CHECK_MSG(yolo_silu(g, t) == NULL && strstr(yolo_graph_error(g), bad[k].needles[0]),
                  "%s: a chained builder replaced the first error with '%s'", bad[k].what, yolo_graph_error(g));
        CHECK_MSG(yolo_graph_plan(g, NULL) != YOLO_OK, "%s: a failed graph was planned", bad[k].what);
        yolo_graph_free(g);
    }
    /* batch norm with a parameter of the wrong size */
    yolo_graph *g = yolo_graph_new(be);
    yolo_tensor *x = yolo_graph_input(g, "x", YOLO_F32, 4, (int64_t[]){2, 3, 4, 4});
    yolo_tensor *p3 = yolo_tensor_new(be, "gamma", YOLO_F32, 1, (int64_t[]){3}, false);
    yolo_tensor *p5 = yolo_tensor_new(be, "beta", YOLO_F32, 1, (int64_t[]){5}, false);
    expect_error(g, yolo_batch_norm(g, x, p3, p5, p3, p3, true, 0.1f, 1e-5f), "batch_norm beta [5]",
                 (const char *const[]){"batch_norm", "[5]", "[2,3,4,4]", NULL});
    yolo_graph_free(g);
    yolo_tensor_free(p3);
    yolo_tensor_free(p5);
}

/* detach passes values and no gradient: d sum(R * (x * detach(x) + detach(x))) / dx = R * x exactly (finite
 * differences would see 2 R x + R, which is why this is not a case above). */
static void test_detach(void) {
    const int64_t n = 37;
    float *x = ops_random(n, 91, -2, 2), *r = ops_random(n, 92, -1, 1);
    yolo_tensor *p = yolo_tensor_new(be, "x", YOLO_F32, 1, &n, true);
    yolo_tensor *tr = yolo_tensor_new(be, "R", YOLO_F32, 1, &n, false);
    yolo_graph *g = yolo_graph_new(be);
    yolo_tensor_upload_f32(p, x, n);
    yolo_tensor_upload_f32(tr, r, n);
    yolo_tensor *d = yolo_detach(g, p);
    yolo_tensor *loss = yolo_sum(g, yolo_mul(g, yolo_add(g, yolo_mul(g, p, d), d), tr));
    CHECK_MSG(d && d->node->op == YOLO_OP_DETACH && !yolo_op_differentiable(YOLO_OP_DETACH), "detach builds DETACH");
    bool ok = loss && yolo_graph_backward(g, loss) == YOLO_OK && yolo_graph_plan(g, NULL) == YOLO_OK &&
              yolo_tensor_zero(p->grad) == YOLO_OK && yolo_graph_run(g) == YOLO_OK;
    CHECK_MSG(ok, "detach graph: %s", yolo_last_error());
    if (ok) {
        float *grad = ops_download(p->grad);
        int bad = 0;
        for (int64_t i = 0; i < n; i++) bad += grad[i] != r[i] * x[i];
        CHECK_MSG(bad == 0, "detach: %d of %lld gradients are not R * x", bad, (long long)n);
        if (!bad) printf("ok   detach passes no gradient\n");
        free(grad);
    }
    yolo_graph_free(g);
    yolo_tensor_free(p);
    yolo_tensor_free(tr);
    free(x);
    free(r);
}

int main(void) {
    if (yolo_backend_create("cpu", 2, &be) != YOLO_OK) {
        fprintf(stderr, "cpu backend: %s\n", yolo_last_error());
        return 1;
    }
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) run_case((int)k, &cases[k]);
    check_coverage();
    test_detach();
    test_shape_errors();
    yolo_backend_free(be);
    return test_result("test_ops_gradcheck");
}
