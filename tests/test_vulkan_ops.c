/* Every op on the Vulkan backend against the CPU backend, forward and
 * backward, on random inputs: odd sizes, stride 2, padding, dilation,
 * groups, broadcasting, every axis kind. Tolerances (relative, see
 * vulkan_parity.h): 1e-5 for elementwise maps and copies (the GPU's exp and
 * division differ from libm by a few ulp), 1e-4 for sums, convolutions and
 * matrix products (fp32 accumulation in another order than the CPU's
 * double or blocked sums) and AdamW (pow and sqrt), 2e-4 for batch norm
 * backward (a difference of sums); copies, pooling and casts are exact. The
 * optimizer cases run three times with new hyper-parameters uploaded before
 * each run: the replayed command buffer must follow them. The second half
 * runs larger tensors with every binding capped at 16 KiB
 * (YOLO_VK_MAX_BINDING_BYTES), through the split-binding paths that tensors
 * over maxStorageBufferRange take. */
#include "vulkan_parity.h"

#define EW 1e-5
#define RED 1e-4

static const yolo_conv2d_params P1 = {.pad_h = 1, .pad_w = 1};

/* ---- convolution ---- */

static yolo_tensor *b_conv3x3(parity_case *c) {
    int64_t xs[4] = {2, 4, 9, 7}, ws[4] = {6, 4, 3, 3}, bs[1] = {6};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv2d(c->g, x, w, parity_input(c, 1, bs, -1, 1, true), &P1);
}
static yolo_tensor *b_conv_s2_groups(parity_case *c) {
    int64_t xs[4] = {2, 4, 8, 9}, ws[4] = {6, 2, 3, 3};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv2d(c->g, x, w, NULL, &(yolo_conv2d_params){.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1,
                                                                 .groups = 2});
}
static yolo_tensor *b_conv1x1(parity_case *c) {
    int64_t xs[4] = {3, 5, 7, 7}, ws[4] = {8, 5, 1, 1};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv2d(c->g, x, w, NULL, &(yolo_conv2d_params){0});
}
static yolo_tensor *b_conv_dilated(parity_case *c) {
    int64_t xs[4] = {1, 3, 11, 10}, ws[4] = {4, 3, 3, 3}, bs[1] = {4};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv2d(c->g, x, w, parity_input(c, 1, bs, -1, 1, true),
                       &(yolo_conv2d_params){.pad_h = 2, .pad_w = 1, .dilation_h = 2, .dilation_w = 1});
}
static yolo_tensor *b_conv_depthwise(parity_case *c) {
    int64_t xs[4] = {2, 6, 7, 7}, ws[4] = {6, 1, 3, 3};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv2d(c->g, x, w, NULL, &(yolo_conv2d_params){.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1,
                                                                 .groups = 6});
}
static yolo_tensor *b_conv_wide(parity_case *c) { /* K = 32*9 > one tile row, M*N > the small tiles */
    int64_t xs[4] = {2, 32, 12, 12}, ws[4] = {40, 32, 3, 3};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.2f, 0.2f, true);
    return yolo_conv2d(c->g, x, w, NULL, &P1);
}
static yolo_tensor *b_conv_transpose(parity_case *c) {
    int64_t xs[4] = {2, 4, 5, 6}, ws[4] = {4, 3, 2, 2}, bs[1] = {3};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv_transpose2d(c->g, x, w, parity_input(c, 1, bs, -1, 1, true),
                                 &(yolo_conv2d_params){.stride_h = 2, .stride_w = 2});
}
static yolo_tensor *b_conv_transpose_groups(parity_case *c) {
    int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {4, 2, 3, 3};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv_transpose2d(c->g, x, w, NULL,
                                 &(yolo_conv2d_params){.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1,
                                                       .groups = 2});
}

/* ---- batch norm ---- */

static yolo_tensor *bn_common(parity_case *c, int ndim, const int64_t *xs, bool training) {
    const int64_t cs[1] = {xs[1]};
    yolo_tensor *x = parity_input(c, ndim, xs, -2, 3, true);
    yolo_tensor *gamma = parity_input(c, 1, cs, 0.5f, 1.5f, true), *beta = parity_input(c, 1, cs, -1, 1, true);
    yolo_tensor *rm = parity_state(c, 1, cs, -0.5f, 0.5f), *rv = parity_state(c, 1, cs, 0.5f, 2.0f);
    return yolo_batch_norm(c->g, x, gamma, beta, rm, rv, training, 0.1f, 1e-3f);
}
static yolo_tensor *b_bn_train(parity_case *c) {
    int64_t xs[4] = {3, 5, 6, 7};
    return bn_common(c, 4, xs, true);
}
static yolo_tensor *b_bn_eval(parity_case *c) {
    int64_t xs[4] = {2, 3, 5, 4};
    return bn_common(c, 4, xs, false);
}
/* Training batch norm whose batch mean has a second reader: autograd keeps
 * the unfused backward (BN_APPLY_BWD_DATA + BN_STATS_BWD, rows padded by
 * SLICE_BWD) instead of BN_BWD. */
static yolo_tensor *b_bn_unfused(parity_case *c) {
    const int64_t xs[4] = {2, 3, 4, 5}, cs[1] = {3}, c2[2] = {2, 3};
    yolo_tensor *x = parity_input(c, 4, xs, -2, 3, true);
    yolo_tensor *gamma = parity_input(c, 1, cs, 0.5f, 1.5f, true), *beta = parity_input(c, 1, cs, -1, 1, true);
    yolo_tensor *rm = parity_state(c, 1, cs, -0.5f, 0.5f), *rv = parity_state(c, 1, cs, 0.5f, 2.0f);
    yolo_tensor *stats = yolo_graph_node(c->g, YOLO_OP_BN_STATS, YOLO_F32, 2, c2, 3, (yolo_tensor *[]){x, rm, rv});
    if (!stats) return NULL;
    stats->node->iparams[0] = 1;
    stats->node->fparams[0] = 0.1f;
    yolo_tensor *mean = yolo_graph_view(c->g, stats, 0, 1, cs);
    yolo_tensor *var = yolo_graph_view(c->g, stats, 3 * sizeof(float), 1, cs);
    if (!mean || !var) return NULL;
    yolo_tensor *y = yolo_graph_node(c->g, YOLO_OP_BN_APPLY, YOLO_F32, 4, xs, 5, (yolo_tensor *[]){x, mean, var, gamma, beta});
    if (!y) return NULL;
    y->node->fparams[0] = 1e-3f;
    return yolo_add(c->g, y, yolo_sum(c->g, mean));
}
static yolo_tensor *b_bn_silu_eval(parity_case *c) { /* inference: BN_SILU on running statistics */
    int64_t xs[4] = {2, 3, 5, 4};
    return yolo_scale(c->g, yolo_silu(c->g, bn_common(c, 4, xs, false)), 1.5f);
}
static yolo_tensor *b_bn_2d(parity_case *c) {
    int64_t xs[2] = {8, 5};
    return bn_common(c, 2, xs, true);
}

/* ---- elementwise ---- */

static yolo_tensor *b_silu(parity_case *c) {
    int64_t s[3] = {3, 7, 11};
    return yolo_silu(c->g, parity_input(c, 3, s, -6, 6, true));
}
static yolo_tensor *b_relu(parity_case *c) {
    int64_t s[2] = {13, 9};
    return yolo_relu(c->g, parity_input(c, 2, s, -1, 1, true));
}
static yolo_tensor *b_sigmoid(parity_case *c) {
    int64_t s[1] = {1000};
    return yolo_sigmoid(c->g, parity_input(c, 1, s, -8, 8, true));
}
static yolo_tensor *b_hardswish(parity_case *c) { /* all three pieces: 0, the quadratic and x */
    int64_t s[2] = {40, 25};
    return yolo_hardswish(c->g, parity_input(c, 2, s, -6, 6, true));
}
static yolo_tensor *b_add_bcast(parity_case *c) {
    int64_t a[4] = {2, 3, 4, 5}, b[3] = {3, 1, 1};
    return yolo_add(c->g, parity_input(c, 4, a, -1, 1, true), parity_input(c, 3, b, -1, 1, true));
}
static yolo_tensor *b_sub_bcast(parity_case *c) {
    int64_t a[3] = {4, 1, 5}, b[2] = {3, 1};
    return yolo_sub(c->g, parity_input(c, 3, a, -1, 1, true), parity_input(c, 2, b, -1, 1, true));
}
static yolo_tensor *b_mul(parity_case *c) {
    int64_t a[4] = {2, 3, 4, 5}, b[4] = {2, 1, 4, 1};
    return yolo_mul(c->g, parity_input(c, 4, a, -1, 1, true), parity_input(c, 4, b, -1, 1, true));
}
static yolo_tensor *b_scale(parity_case *c) {
    int64_t s[2] = {7, 6};
    return yolo_scale(c->g, parity_input(c, 2, s, -1, 1, true), 0.37f);
}
static yolo_tensor *b_detach(parity_case *c) { /* x * detach(x): the gradient is dy * x, not 2 dy x */
    int64_t s[2] = {7, 6};
    yolo_tensor *x = parity_input(c, 2, s, -1, 1, true);
    return yolo_mul(c->g, x, yolo_detach(c->g, x));
}
static yolo_tensor *b_cast_half(parity_case *c) { /* f32 -> f16 -> f32: rounding as the CPU */
    int64_t s[2] = {5, 77};
    yolo_tensor *h = yolo_cast(c->g, parity_input(c, 2, s, -70000, 70000, true), YOLO_F16, 1.0f);
    return yolo_cast(c->g, h, YOLO_F32, 0.5f);
}
static yolo_tensor *b_cast_u8(parity_case *c) { /* images: u8 -> f32 / 255 */
    int64_t s[4] = {2, 3, 5, 7};
    return yolo_cast(c->g, parity_graph_input(c, YOLO_U8, 4, s, 0, 255), YOLO_F32, 1.0f / 255.0f);
}
static yolo_tensor *b_cast_i32(parity_case *c) {
    int64_t s[1] = {301};
    return yolo_cast(c->g, parity_graph_input(c, YOLO_I32, 1, s, -70000, 70000), YOLO_F32, 3.0f);
}

/* ---- shape ---- */

static yolo_tensor *b_concat_slice(parity_case *c) {
    int64_t a[4] = {2, 3, 4, 5}, b[4] = {2, 1, 4, 5}, d[4] = {2, 2, 4, 5};
    yolo_tensor *xs[3] = {parity_input(c, 4, a, -1, 1, true), parity_input(c, 4, b, -1, 1, true),
                          parity_input(c, 4, d, -1, 1, true)};
    yolo_tensor *cat = yolo_concat(c->g, 3, xs, 1);
    return yolo_slice(c->g, cat, 2, 1, 2);
}
static yolo_tensor *b_chunk_concat_last(parity_case *c) {
    int64_t a[3] = {3, 4, 10};
    yolo_tensor *parts[2];
    yolo_chunk(c->g, parity_input(c, 3, a, -1, 1, true), 2, 2, parts);
    yolo_tensor *sw[2] = {parts[1], yolo_silu(c->g, parts[0])};
    return yolo_concat(c->g, 2, sw, 2);
}
static yolo_tensor *b_concat_half(parity_case *c) { /* 2-byte elements through the byte-merging copy */
    int64_t a[3] = {2, 3, 5}, b[3] = {2, 1, 5};
    yolo_tensor *ha = yolo_cast(c->g, parity_input(c, 3, a, -1, 1, false), YOLO_F16, 1.0f);
    yolo_tensor *hb = yolo_cast(c->g, parity_input(c, 3, b, -1, 1, false), YOLO_F16, 1.0f);
    yolo_tensor *xs[2] = {hb, ha};
    yolo_tensor *cat = yolo_concat(c->g, 2, xs, 1);
    return yolo_cast(c->g, yolo_slice(c->g, cat, 2, 1, 3), YOLO_F32, 1.0f);
}
static yolo_tensor *b_broadcast_to(parity_case *c) {
    int64_t a[3] = {3, 1, 5}, to[4] = {2, 3, 4, 5};
    return yolo_broadcast_to(c->g, parity_input(c, 3, a, -1, 1, true), 4, to);
}
static yolo_tensor *b_sum_to(parity_case *c) {
    int64_t a[4] = {2, 3, 4, 5}, to[4] = {1, 3, 1, 5};
    return yolo_sum_to(c->g, parity_input(c, 4, a, -1, 1, true), 4, to);
}

/* ---- spatial ---- */

static yolo_tensor *b_upsample(parity_case *c) {
    int64_t s[4] = {2, 3, 4, 5};
    return yolo_upsample_nearest(c->g, parity_input(c, 4, s, -1, 1, true), 2);
}
static yolo_tensor *b_maxpool_sppf(parity_case *c) {
    int64_t s[4] = {2, 3, 9, 8};
    return yolo_maxpool2d(c->g, parity_input(c, 4, s, -1, 1, true), 5, 1, 2);
}
static yolo_tensor *b_maxpool_s2(parity_case *c) {
    int64_t s[4] = {1, 4, 7, 9};
    return yolo_maxpool2d(c->g, parity_input(c, 4, s, -1, 1, true), 3, 2, 1);
}
static yolo_tensor *b_maxpool_ties(parity_case *c) { /* integer values: ties go to the first maximum */
    int64_t s[4] = {1, 2, 6, 6};
    yolo_tensor *x = parity_graph_input(c, YOLO_I32, 4, s, 0, 3);
    return yolo_maxpool2d(c->g, yolo_scale(c->g, yolo_cast(c->g, x, YOLO_F32, 1.0f), 1.0f), 2, 2, 0);
}
static yolo_tensor *b_global_avgpool(parity_case *c) {
    int64_t s[4] = {2, 5, 6, 7};
    return yolo_global_avgpool(c->g, parity_input(c, 4, s, -1, 1, true));
}

/* ---- linear algebra ---- */

static yolo_tensor *matmul_case(parity_case *c, bool ta, bool tb) {
    int64_t a[2] = {ta ? 7 : 5, ta ? 5 : 7}, b[2] = {tb ? 3 : 7, tb ? 7 : 3};
    return yolo_matmul(c->g, parity_input(c, 2, a, -1, 1, true), parity_input(c, 2, b, -1, 1, true), ta, tb);
}
static yolo_tensor *b_matmul(parity_case *c) { return matmul_case(c, false, false); }
static yolo_tensor *b_matmul_ta(parity_case *c) { return matmul_case(c, true, false); }
static yolo_tensor *b_matmul_tb(parity_case *c) { return matmul_case(c, false, true); }
static yolo_tensor *b_matmul_tatb(parity_case *c) { return matmul_case(c, true, true); }
/* batched, shaped as attention's q^T k (a^T) and v attn^T (b^T) */
static yolo_tensor *b_matmul_batched_ta(parity_case *c) {
    int64_t a[3] = {3, 8, 25}, b[3] = {3, 8, 25};
    return yolo_matmul(c->g, parity_input(c, 3, a, -1, 1, true), parity_input(c, 3, b, -1, 1, true), true, false);
}
static yolo_tensor *b_matmul_batched_tb(parity_case *c) {
    int64_t a[3] = {2, 16, 25}, b[3] = {2, 25, 25};
    return yolo_matmul(c->g, parity_input(c, 3, a, -1, 1, true), parity_input(c, 3, b, -1, 1, true), false, true);
}
static yolo_tensor *b_linear(parity_case *c) {
    int64_t x[2] = {4, 9}, w[2] = {6, 9}, b[1] = {6};
    return yolo_linear(c->g, parity_input(c, 2, x, -1, 1, true), parity_input(c, 2, w, -1, 1, true),
                       parity_input(c, 1, b, -1, 1, true));
}
static yolo_tensor *b_softmax_mid(parity_case *c) {
    int64_t s[3] = {3, 17, 5};
    return yolo_softmax(c->g, parity_input(c, 3, s, -3, 3, true), 1);
}
static yolo_tensor *b_log_softmax_last(parity_case *c) {
    int64_t s[2] = {4, 33};
    return yolo_log_softmax(c->g, parity_input(c, 2, s, -3, 3, true), -1);
}
static yolo_tensor *b_softmax_long(parity_case *c) { /* a row per workgroup */
    int64_t s[2] = {2, 3000};
    return yolo_softmax(c->g, parity_input(c, 2, s, -3, 3, true), 1);
}
static yolo_tensor *b_log_softmax_long(parity_case *c) {
    int64_t s[3] = {2, 2500, 3};
    return yolo_log_softmax(c->g, parity_input(c, 3, s, -3, 3, true), 1);
}

/* ---- reductions ---- */

static yolo_tensor *b_sum(parity_case *c) {
    int64_t s[2] = {7, 1000};
    return yolo_sum(c->g, parity_input(c, 2, s, -1, 1, true));
}
static yolo_tensor *b_mean(parity_case *c) {
    int64_t s[3] = {3, 5, 7};
    return yolo_mean(c->g, parity_input(c, 3, s, -1, 1, true));
}
static yolo_tensor *b_sum_squares(parity_case *c) {
    int64_t s[1] = {4099};
    return yolo_sum_squares(c->g, parity_input(c, 1, s, -1, 1, true));
}

/* ---- optimizer, EMA and zeroing (three runs, new hyper-parameters before each) ---- */

static void sgd_schedule(parity_case *c, int run) {
    const float h[4] = {0.1f / (float)(run + 1), 0.9f, 5e-4f, run % 2 ? 1.0f : 0.0f}; /* nesterov on and off */
    yolo_tensor_upload_f32(c->hyper, h, 4);
}
static yolo_tensor *b_sgd(parity_case *c) {
    int64_t s[2] = {13, 17}, hs[1] = {4}, one[1] = {1};
    yolo_tensor *p = parity_state(c, 2, s, -1, 1), *buf = parity_state(c, 2, s, -0.1f, 0.1f);
    yolo_tensor *g = parity_input(c, 2, s, -1, 1, false), *scale = parity_input(c, 1, one, 0.5f, 0.6f, false);
    c->hyper = yolo_tensor_new(c->be, "hyper", YOLO_F32, 1, hs, false);
    c->between_runs = sgd_schedule;
    return yolo_sgd_update(c->g, p, g, buf, c->hyper, scale);
}
/* The optimizer's update graph in small: norm -> clipping factor -> SGD. */
static yolo_tensor *b_clip_sgd(parity_case *c) {
    int64_t s[2] = {13, 17}, hs[1] = {4}, two[1] = {2};
    yolo_tensor *p = parity_state(c, 2, s, -1, 1), *buf = parity_state(c, 2, s, -0.1f, 0.1f);
    yolo_tensor *g = parity_input(c, 2, s, -1, 1, false);
    yolo_tensor *clip = parity_state(c, 1, two, 0.5f, 0.6f); /* max_norm, unscale: clips (norm ~ 4.6) */
    c->hyper = yolo_tensor_new(c->be, "hyper", YOLO_F32, 1, hs, false);
    c->between_runs = sgd_schedule;
    yolo_tensor *scale = yolo_grad_clip_scale(c->g, yolo_sum_squares(c->g, g), clip);
    return yolo_sgd_update(c->g, p, g, buf, c->hyper, scale);
}
/* MuSGD's step in small: momentum, normalization, one Newton-Schulz
 * iteration of matmuls (as train/optimizer.c chains five), the update. */
static void musgd_schedule(parity_case *c, int run) {
    /* a large lr and muon factor: the orthogonalized update dominates the compared parameter */
    const float h[6] = {0.5f / (float)(run + 1), 0.9f, 5e-4f, run % 2 ? 0.0f : 1.0f, 1.0f, 0.5f};
    yolo_tensor_upload_f32(c->hyper, h, 6);
}
static yolo_tensor *b_musgd(parity_case *c) {
    int64_t s[2] = {13, 17}, s3[3] = {1, 13, 17}, hs[1] = {6}, one[1] = {1};
    yolo_tensor *p = parity_state(c, 2, s, -1, 1), *m = parity_state(c, 2, s, -0.1f, 0.1f);
    yolo_tensor *b = parity_state(c, 2, s, -0.1f, 0.1f), *g = parity_input(c, 2, s, -1, 1, false);
    yolo_tensor *scale = parity_input(c, 1, one, 0.5f, 0.6f, false);
    c->hyper = yolo_tensor_new(c->be, "hyper", YOLO_F32, 1, hs, false);
    c->between_runs = musgd_schedule;
    yolo_tensor *u = yolo_muon_momentum(c->g, g, m, c->hyper, scale);
    yolo_tensor *x = yolo_reshape(c->g, yolo_muon_normalize(c->g, u, yolo_sum_squares(c->g, u)), 3, s3);
    yolo_tensor *a = yolo_matmul(c->g, x, x, false, true);
    yolo_tensor *bb = yolo_add(c->g, yolo_scale(c->g, a, -4.775f), yolo_scale(c->g, yolo_matmul(c->g, a, a, false, false), 2.0315f));
    x = yolo_add(c->g, yolo_scale(c->g, x, 3.4445f), yolo_matmul(c->g, bb, x, false, false));
    return yolo_musgd_update(c->g, p, g, yolo_reshape(c->g, x, 2, s), b, c->hyper, scale);
}
static void adamw_schedule(parity_case *c, int run) {
    const float h[6] = {1e-3f * (float)(run + 1), 0.9f, 0.999f, 1e-8f, 0.05f, (float)(run + 1)};
    yolo_tensor_upload_f32(c->hyper, h, 6);
}
static yolo_tensor *b_adamw(parity_case *c) {
    int64_t s[1] = {1001}, hs[1] = {6};
    yolo_tensor *p = parity_state(c, 1, s, -1, 1), *m = parity_state(c, 1, s, -0.1f, 0.1f);
    yolo_tensor *v = parity_state(c, 1, s, 0.0f, 0.01f);
    yolo_tensor *g = parity_input(c, 1, s, -1, 1, false);
    c->hyper = yolo_tensor_new(c->be, "hyper", YOLO_F32, 1, hs, false);
    c->between_runs = adamw_schedule;
    return yolo_adamw_update(c->g, p, g, m, v, c->hyper, NULL);
}
static void ema_schedule(parity_case *c, int run) {
    const float decay = 0.9f + 0.03f * (float)run;
    yolo_tensor_upload_f32(c->hyper, &decay, 1);
}
static yolo_tensor *b_ema_zero(parity_case *c) {
    int64_t s[3] = {3, 5, 7}, hs[1] = {1};
    yolo_tensor *ema = parity_state(c, 3, s, -1, 1), *z = parity_state(c, 3, s, -1, 1);
    yolo_tensor *p = parity_input(c, 3, s, -1, 1, false);
    c->hyper = yolo_tensor_new(c->be, "hyper", YOLO_F32, 1, hs, false);
    c->between_runs = ema_schedule;
    yolo_zero(c->g, z);
    return yolo_ema_update(c->g, ema, p, c->hyper);
}
/* The EMA gated on its optimizer step's grad_scale (inputs[1]): every run
 * updates, or the second run's step was skipped (scale 0: no change). */
static void ema_gate_schedule(parity_case *c, int run, bool skip_second) {
    ema_schedule(c, run);
    const float step_scale = skip_second && run == 1 ? 0.0f : 0.5f;
    yolo_tensor_upload_f32(c->inputs[1], &step_scale, 1);
}
static void ema_taken(parity_case *c, int run) { ema_gate_schedule(c, run, false); }
static void ema_skipped(parity_case *c, int run) { ema_gate_schedule(c, run, true); }
static yolo_tensor *ema_gated(parity_case *c, void (*schedule)(parity_case *, int)) {
    int64_t s[2] = {9, 11}, hs[1] = {1}, one[1] = {1};
    yolo_tensor *ema = parity_state(c, 2, s, -1, 1), *p = parity_input(c, 2, s, -1, 1, false);
    yolo_tensor *step_scale = parity_input(c, 1, one, 1, 1, false);
    c->hyper = yolo_tensor_new(c->be, "hyper", YOLO_F32, 1, hs, false);
    c->between_runs = schedule;
    return yolo_ema_update_gated(c->g, ema, p, c->hyper, step_scale);
}
static yolo_tensor *b_ema_taken(parity_case *c) { return ema_gated(c, ema_taken); }
static yolo_tensor *b_ema_skipped(parity_case *c) { return ema_gated(c, ema_skipped); }

/* ---- more shapes of the CPU gradient checks (test_ops_gradcheck.c) ---- */

static yolo_tensor *b_add_scalar(parity_case *c) {
    int64_t a[1] = {1}, b[3] = {2, 3, 5};
    return yolo_add(c->g, parity_input(c, 1, a, -1, 1, true), parity_input(c, 3, b, -1, 1, true));
}
static yolo_tensor *b_upsample3(parity_case *c) {
    int64_t s[4] = {2, 1, 2, 3};
    return yolo_upsample_nearest(c->g, parity_input(c, 4, s, -1, 1, true), 3);
}
static yolo_tensor *b_maxpool_odd(parity_case *c) {
    int64_t s[4] = {1, 3, 5, 7};
    return yolo_maxpool2d(c->g, parity_input(c, 4, s, -1, 1, true), 2, 2, 0);
}
static yolo_tensor *b_softmax_axis0(parity_case *c) {
    int64_t s[3] = {3, 2, 4};
    return yolo_softmax(c->g, parity_input(c, 3, s, -2, 2, true), 0);
}
static yolo_tensor *b_concat_negative_axis(parity_case *c) {
    int64_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 1};
    yolo_tensor *xs[2] = {parity_input(c, 4, a, -1, 1, true), parity_input(c, 4, b, -1, 1, true)};
    return yolo_concat(c->g, 2, xs, -1);
}
static yolo_tensor *b_chunk3(parity_case *c) {
    int64_t s[4] = {2, 6, 3, 3};
    yolo_tensor *parts[3];
    yolo_chunk(c->g, parity_input(c, 4, s, -1, 1, true), 3, 1, parts);
    yolo_tensor *xs[2] = {parts[2], parts[0]};
    return yolo_concat(c->g, 2, xs, 1);
}
static yolo_tensor *b_sum_to_fewer_dims(parity_case *c) {
    int64_t s[3] = {4, 3, 5}, to[1] = {5};
    return yolo_sum_to(c->g, parity_input(c, 3, s, -1, 1, true), 1, to);
}
static yolo_tensor *b_cast_scale_reshape(parity_case *c) {
    int64_t s[4] = {2, 3, 2, 5}, to[2] = {2, 30};
    return yolo_reshape(c->g, yolo_cast(c->g, parity_input(c, 4, s, -1, 1, true), YOLO_F32, 2.5f), 2, to);
}
static yolo_tensor *b_c2f_block(parity_case *c) { /* conv-bn-silu, chunk, residual, concat, pools, upsample */
    int64_t xs[4] = {1, 3, 6, 6}, w1[4] = {4, 3, 3, 3}, w2[4] = {2, 2, 3, 3}, cs[1] = {4};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *k1 = parity_input(c, 4, w1, -0.5f, 0.5f, true);
    yolo_tensor *k2 = parity_input(c, 4, w2, -0.5f, 0.5f, true);
    yolo_tensor *gm = parity_input(c, 1, cs, 0.8f, 1.2f, true), *bt = parity_input(c, 1, cs, -0.1f, 0.1f, true);
    yolo_tensor *rm = parity_state(c, 1, cs, 0, 0), *rv = parity_state(c, 1, cs, 1, 1);
    yolo_tensor *y = yolo_silu(c->g, yolo_batch_norm(c->g, yolo_conv2d(c->g, x, k1, NULL, &P1), gm, bt, rm, rv, true,
                                                     0.03f, 1e-3f));
    yolo_tensor *parts[2];
    yolo_chunk(c->g, y, 2, 1, parts);
    yolo_tensor *r = yolo_add(c->g, parts[1], yolo_silu(c->g, yolo_conv2d(c->g, parts[1], k2, NULL, &P1)));
    yolo_tensor *cat = yolo_concat(c->g, 3, (yolo_tensor *[]){parts[0], parts[1], r}, 1);
    yolo_tensor *pooled = yolo_maxpool2d(c->g, cat, 3, 1, 1);
    return yolo_add(c->g, yolo_upsample_nearest(c->g, yolo_maxpool2d(c->g, pooled, 2, 2, 0), 2), cat);
}

typedef struct op_case {
    const char *name;
    parity_build build;
    bool backward;
    double tol_fwd, tol_grad;
    int runs;
} op_case;

static const op_case cases[] = {
    {"conv2d 3x3 pad 1 + bias", b_conv3x3, true, RED, RED, 1},
    {"conv2d stride 2 groups 2", b_conv_s2_groups, true, RED, RED, 1},
    {"conv2d 1x1", b_conv1x1, true, RED, RED, 1},
    {"conv2d dilation 2x1 + bias", b_conv_dilated, true, RED, RED, 1},
    {"conv2d depthwise stride 2", b_conv_depthwise, true, RED, RED, 1},
    {"conv2d 32->40 channels", b_conv_wide, true, RED, RED, 1},
    {"conv_transpose2d stride 2 + bias", b_conv_transpose, true, RED, RED, 1},
    {"conv_transpose2d groups 2 pad 1", b_conv_transpose_groups, true, RED, RED, 1},
    {"batch_norm train", b_bn_train, true, RED, 2 * RED, 1},
    {"batch_norm eval", b_bn_eval, true, RED, 2 * RED, 1},
    {"batch_norm [N,C]", b_bn_2d, true, RED, 2 * RED, 1},
    {"batch_norm train, mean read twice", b_bn_unfused, true, RED, 2 * RED, 1},
    {"batch_norm eval + silu", b_bn_silu_eval, true, RED, 2 * RED, 1},
    {"silu", b_silu, true, EW, EW, 1},
    {"relu", b_relu, true, EW, EW, 1},
    {"sigmoid", b_sigmoid, true, EW, EW, 1},
    {"hardswish", b_hardswish, true, EW, EW, 1},
    {"add broadcast", b_add_bcast, true, EW, RED, 1},
    {"sub broadcast both", b_sub_bcast, true, EW, RED, 1},
    {"mul broadcast", b_mul, true, EW, RED, 1},
    {"scale", b_scale, true, EW, EW, 1},
    {"detach", b_detach, true, EW, EW, 1},
    {"cast f32->f16->f32", b_cast_half, true, EW, EW, 1},
    {"cast u8->f32 /255", b_cast_u8, false, EW, EW, 1},
    {"cast i32->f32 x3", b_cast_i32, false, 0, 0, 1},
    {"concat + slice", b_concat_slice, true, 0, 0, 1},
    {"chunk + concat last axis", b_chunk_concat_last, true, EW, EW, 1},
    {"concat f16 (byte path)", b_concat_half, false, 0, 0, 1},
    {"broadcast_to", b_broadcast_to, true, 0, RED, 1},
    {"sum_to", b_sum_to, true, RED, 0, 1},
    {"upsample nearest x2", b_upsample, true, 0, RED, 1},
    {"maxpool 5/1/2 (SPPF)", b_maxpool_sppf, true, 0, RED, 1},
    {"maxpool 3/2/1", b_maxpool_s2, true, 0, RED, 1},
    {"maxpool ties", b_maxpool_ties, false, 0, 0, 1},
    {"global_avgpool", b_global_avgpool, true, RED, RED, 1},
    {"matmul", b_matmul, true, RED, RED, 1},
    {"matmul a^T", b_matmul_ta, true, RED, RED, 1},
    {"matmul b^T", b_matmul_tb, true, RED, RED, 1},
    {"matmul a^T b^T", b_matmul_tatb, true, RED, RED, 1},
    {"matmul batched a^T", b_matmul_batched_ta, true, RED, RED, 1},
    {"matmul batched b^T", b_matmul_batched_tb, true, RED, RED, 1},
    {"linear", b_linear, true, RED, RED, 1},
    {"softmax axis 1", b_softmax_mid, true, EW, RED, 1},
    {"log_softmax last axis", b_log_softmax_last, true, EW, RED, 1},
    {"softmax long row", b_softmax_long, true, EW, RED, 1},
    {"log_softmax long strided row", b_log_softmax_long, true, EW, RED, 1},
    {"sum", b_sum, true, RED, 0, 1},
    {"mean", b_mean, true, RED, EW, 1},
    {"sum_squares", b_sum_squares, true, RED, EW, 1},
    {"add scalar", b_add_scalar, true, EW, RED, 1},
    {"upsample x3", b_upsample3, true, 0, RED, 1},
    {"maxpool 2/2/0 odd", b_maxpool_odd, true, 0, RED, 1},
    {"softmax axis 0", b_softmax_axis0, true, EW, RED, 1},
    {"concat axis -1", b_concat_negative_axis, true, 0, 0, 1},
    {"chunk 3 + concat", b_chunk3, true, 0, 0, 1},
    {"sum_to fewer dims", b_sum_to_fewer_dims, true, RED, 0, 1},
    {"cast x2.5 + reshape", b_cast_scale_reshape, true, EW, EW, 1},
    {"C2f-like block", b_c2f_block, true, RED, 2 * RED, 1},
    {"sgd_update (+nesterov, scale)", b_sgd, false, EW, EW, 3},
    {"grad_clip_scale + sgd_update", b_clip_sgd, false, EW, EW, 3},
    {"adamw_update", b_adamw, false, 1e-4, 1e-4, 3},
    {"muon_momentum + normalize + matmuls + musgd_update", b_musgd, false, RED, RED, 3},
    {"ema_update + zero", b_ema_zero, false, EW, EW, 3},
    {"ema_update gated, steps taken", b_ema_taken, false, EW, EW, 3},
    {"ema_update gated, step 2 skipped", b_ema_skipped, false, EW, EW, 3},
};

/* ---- larger tensors for the 16 KiB binding cap: every one needs splitting ---- */

static yolo_tensor *s_silu(parity_case *c) {
    int64_t s[1] = {20000};
    return yolo_silu(c->g, parity_input(c, 1, s, -4, 4, true));
}
static yolo_tensor *s_add(parity_case *c) {
    int64_t a[4] = {8, 3, 40, 30}, b[3] = {3, 1, 1};
    return yolo_add(c->g, parity_input(c, 4, a, -1, 1, true), parity_input(c, 3, b, -1, 1, true));
}
static yolo_tensor *s_conv(parity_case *c) {
    int64_t xs[4] = {6, 3, 20, 20}, ws[4] = {8, 3, 3, 3}, bs[1] = {8};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv2d(c->g, x, w, parity_input(c, 1, bs, -1, 1, true), &P1);
}
static yolo_tensor *s_conv_transpose(parity_case *c) {
    int64_t xs[4] = {4, 4, 10, 10}, ws[4] = {4, 3, 2, 2};
    yolo_tensor *x = parity_input(c, 4, xs, -1, 1, true), *w = parity_input(c, 4, ws, -0.5f, 0.5f, true);
    return yolo_conv_transpose2d(c->g, x, w, NULL, &(yolo_conv2d_params){.stride_h = 2, .stride_w = 2});
}
static yolo_tensor *s_bn(parity_case *c) {
    int64_t xs[4] = {6, 3, 20, 20};
    return bn_common(c, 4, xs, true);
}
static yolo_tensor *s_bn_silu(parity_case *c) { /* fused by the planner: BN_SILU, BN_SILU_BWD */
    int64_t xs[4] = {6, 3, 20, 20};
    return yolo_scale(c->g, yolo_silu(c->g, bn_common(c, 4, xs, true)), 1.5f);
}
static yolo_tensor *s_concat_slice(parity_case *c) {
    int64_t a[4] = {4, 2, 30, 30}, b[4] = {4, 1, 30, 30};
    yolo_tensor *xs[2] = {parity_input(c, 4, a, -1, 1, true), parity_input(c, 4, b, -1, 1, true)};
    return yolo_slice(c->g, yolo_concat(c->g, 2, xs, 1), 1, 1, 2);
}
static yolo_tensor *s_upsample(parity_case *c) {
    int64_t s[4] = {4, 3, 10, 10};
    return yolo_upsample_nearest(c->g, parity_input(c, 4, s, -1, 1, true), 2);
}
static yolo_tensor *s_maxpool(parity_case *c) {
    int64_t s[4] = {4, 3, 20, 20};
    return yolo_maxpool2d(c->g, parity_input(c, 4, s, -1, 1, true), 5, 1, 2);
}
static yolo_tensor *s_softmax(parity_case *c) {
    int64_t s[2] = {30, 300};
    return yolo_log_softmax(c->g, parity_input(c, 2, s, -3, 3, true), 1);
}
static yolo_tensor *s_sum_squares(parity_case *c) {
    int64_t s[1] = {30000};
    return yolo_sum_squares(c->g, parity_input(c, 1, s, -1, 1, true));
}
static yolo_tensor *s_sum_to(parity_case *c) {
    int64_t a[4] = {8, 3, 40, 30}, to[4] = {1, 3, 1, 30};
    return yolo_sum_to(c->g, parity_input(c, 4, a, -1, 1, true), 4, to);
}
static yolo_tensor *s_avgpool(parity_case *c) {
    int64_t s[4] = {4, 8, 20, 20};
    return yolo_global_avgpool(c->g, parity_input(c, 4, s, -1, 1, true));
}
static yolo_tensor *s_cast(parity_case *c) {
    int64_t s[1] = {20001};
    yolo_tensor *h = yolo_cast(c->g, parity_input(c, 1, s, -100, 100, true), YOLO_F16, 1.0f);
    return yolo_cast(c->g, h, YOLO_F32, 1.0f);
}
static yolo_tensor *s_adamw(parity_case *c) {
    int64_t s[1] = {10001}, hs[1] = {6};
    yolo_tensor *p = parity_state(c, 1, s, -1, 1), *m = parity_state(c, 1, s, -0.1f, 0.1f);
    yolo_tensor *v = parity_state(c, 1, s, 0.0f, 0.01f);
    yolo_tensor *g = parity_input(c, 1, s, -1, 1, false);
    c->hyper = yolo_tensor_new(c->be, "hyper", YOLO_F32, 1, hs, false);
    c->between_runs = adamw_schedule;
    return yolo_adamw_update(c->g, p, g, m, v, c->hyper, NULL);
}

static const op_case split_cases[] = {
    {"silu [20000]", s_silu, true, EW, EW, 1},
    {"add broadcast [8,3,40,30]", s_add, true, EW, RED, 1},
    {"conv2d [6,3,20,20]", s_conv, true, RED, RED, 1},
    {"conv_transpose2d [4,4,10,10]", s_conv_transpose, true, RED, RED, 1},
    {"batch_norm train [6,3,20,20]", s_bn, true, RED, 2 * RED, 1},
    {"batch_norm + silu [6,3,20,20]", s_bn_silu, true, RED, 2 * RED, 1},
    {"concat + slice [4,3,30,30]", s_concat_slice, true, 0, 0, 1},
    {"upsample [4,3,10,10]", s_upsample, true, 0, RED, 1},
    {"maxpool [4,3,20,20]", s_maxpool, true, 0, RED, 1},
    {"log_softmax [30,300]", s_softmax, true, EW, RED, 1},
    {"sum_squares [30000]", s_sum_squares, true, RED, EW, 1},
    {"sum_to [8,3,40,30]", s_sum_to, true, RED, 0, 1},
    {"global_avgpool [4,8,20,20]", s_avgpool, true, RED, RED, 1},
    {"cast f16 [20001]", s_cast, true, EW, EW, 1},
    {"adamw [10001]", s_adamw, false, 1e-4, 1e-4, 3},
};

static void run_list(yolo_backend *cpu, yolo_backend *vk, const op_case *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        parity_check(cpu, vk, list[i].name, list[i].build, list[i].backward, list[i].tol_fwd, list[i].tol_grad,
                     list[i].runs > 0 ? list[i].runs : 1);
}

int main(void) {
    yolo_backend *cpu = NULL, *vk = NULL;
    int rc = vk_test_open("vulkan", &vk);
    if (rc) return rc;
    if (yolo_backend_create("cpu", 2, &cpu) != YOLO_OK) {
        fprintf(stderr, "cpu backend: %s\n", yolo_last_error());
        return 1;
    }
    printf("ops on %s:\n", yolo_backend_name(vk));
    run_list(cpu, vk, cases, sizeof cases / sizeof cases[0]);
    parity_check_coverage(); /* every op of graph/ops.h, forward and backward */
    yolo_backend_free(vk);

    /* Bindings capped at 16 KiB: these tensors take the split-binding paths
     * that tensors over maxStorageBufferRange (128 MiB on lavapipe) need. The
     * 16-bit storage and subgroup paths are off too: casts take the
     * word-merging kernel, reductions the shared-memory tree. */
    setenv("YOLO_VK_MAX_BINDING_BYTES", "16384", 1);
    setenv("YOLO_VK_DISABLE_F16", "1", 1);
    setenv("YOLO_VK_DISABLE_SUBGROUP", "1", 1);
    if (vk_test_open("vulkan", &vk) == 0) {
        printf("ops with bindings capped at 16 KiB, no 16-bit storage, no subgroups:\n");
        run_list(cpu, vk, split_cases, sizeof split_cases / sizeof split_cases[0]);
        yolo_backend_free(vk);
    }
    yolo_backend_free(cpu);
    return vk_test_finish("test_vulkan_ops");
}
