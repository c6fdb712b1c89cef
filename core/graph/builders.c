/* Op builders: check arguments and shapes, infer the output shape, append
 * the node. Errors name the op and the shapes involved (see yolo/graph.h). */
#include <stdio.h>
#include <string.h>

#include "graph/collective.h"
#include "graph/graph_internal.h"

#define SHAPE(t, buf) yolo_tensor_shape_str((t), (buf), sizeof(buf))

/* Common argument check: graph ok, inputs non-NULL and usable in g. */
static bool check_inputs(yolo_graph *g, const char *op, int n, yolo_tensor *const *xs) {
    if (!g) {
        yolo_error(YOLO_ERR_ARG, "%s: NULL graph", op);
        return false;
    }
    for (int i = 0; i < n; i++) {
        if (!xs[i]) {
            /* a NULL input after an earlier failure keeps the first message */
            if (g->status == YOLO_OK) yolo_graph_fail(g, YOLO_ERR_ARG, "%s: input %d is NULL", op, i);
            return false;
        }
        if (!yolo_graph_owns_or_persistent(g, xs[i])) {
            yolo_graph_fail(g, YOLO_ERR_ARG, "%s: input '%s' belongs to another graph or backend", op, xs[i]->name);
            return false;
        }
    }
    return true;
}

static bool check_f32(yolo_graph *g, const char *op, yolo_tensor *t) {
    if (t->dtype == YOLO_F32) return true;
    char s[96];
    yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: '%s' is %s, expected f32", op, t->name, SHAPE(t, s));
    return false;
}

static int normalize_axis(yolo_graph *g, const char *op, const yolo_tensor *t, int axis) {
    int a = axis < 0 ? axis + t->ndim : axis;
    if (a < 0 || a >= t->ndim) {
        char s[96];
        yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: axis %d out of range for %s", op, axis, SHAPE(t, s));
        return -1;
    }
    return a;
}

/* A view of t with `ndim` dims, t's shape right-aligned and padded with leading 1s. */
static yolo_tensor *expand_dims(yolo_graph *g, yolo_tensor *t, int ndim) {
    if (t->ndim == ndim) return t;
    int64_t shape[YOLO_MAX_DIMS];
    int pad = ndim - t->ndim;
    for (int i = 0; i < ndim; i++) shape[i] = i < pad ? 1 : t->shape[i - pad];
    return yolo_graph_view(g, t, 0, ndim, shape);
}

/* ---- convolution ---- */

static void conv_params(const yolo_conv2d_params *p, int32_t out[7]) {
    out[0] = p && p->stride_h > 0 ? p->stride_h : 1;
    out[1] = p && p->stride_w > 0 ? p->stride_w : 1;
    out[2] = p ? p->pad_h : 0;
    out[3] = p ? p->pad_w : 0;
    out[4] = p && p->dilation_h > 0 ? p->dilation_h : 1;
    out[5] = p && p->dilation_w > 0 ? p->dilation_w : 1;
    out[6] = p && p->groups > 0 ? p->groups : 1;
}

static yolo_tensor *conv_common(yolo_graph *g, const char *op, int code, yolo_tensor *x, yolo_tensor *w,
                                yolo_tensor *bias, const yolo_conv2d_params *p) {
    yolo_tensor *in[3] = {x, w, bias};
    if (!check_inputs(g, op, bias ? 3 : 2, in)) return NULL;
    if (!check_f32(g, op, x) || !check_f32(g, op, w) || (bias && !check_f32(g, op, bias))) return NULL;
    char sx[96], sw[96], sb[96];
    int32_t ip[7];
    conv_params(p, ip);
    int groups = ip[6];
    if (x->ndim != 4 || w->ndim != 4)
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: input %s and weight %s must be 4-D", op, SHAPE(x, sx),
                               SHAPE(w, sw));
    if (ip[2] < 0 || ip[3] < 0)
        return yolo_graph_fail(g, YOLO_ERR_ARG, "%s: negative padding %d,%d", op, ip[2], ip[3]);
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
    int64_t kh = w->shape[2], kw = w->shape[3], O, Ho, Wo;
    if (code == YOLO_OP_CONV2D) {
        O = w->shape[0];
        if (C % groups || O % groups || w->shape[1] * groups != C)
            return yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: input %s does not fit weight %s with groups=%d", op,
                                   SHAPE(x, sx), SHAPE(w, sw), groups);
        Ho = (H + 2 * ip[2] - (int64_t)ip[4] * (kh - 1) - 1) / ip[0] + 1;
        Wo = (W + 2 * ip[3] - (int64_t)ip[5] * (kw - 1) - 1) / ip[1] + 1;
    } else {
        O = w->shape[1] * groups;
        if (C % groups || w->shape[0] != C)
            return yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: input %s does not fit weight %s with groups=%d", op,
                                   SHAPE(x, sx), SHAPE(w, sw), groups);
        Ho = (H - 1) * ip[0] - 2 * ip[2] + (int64_t)ip[4] * (kh - 1) + 1;
        Wo = (W - 1) * ip[1] - 2 * ip[3] + (int64_t)ip[5] * (kw - 1) + 1;
    }
    if (Ho < 1 || Wo < 1 || (H + 2 * ip[2] < (int64_t)ip[4] * (kh - 1) + 1 && code == YOLO_OP_CONV2D))
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: input %s with weight %s, stride %d, pad %d gives an empty output",
                               op, SHAPE(x, sx), SHAPE(w, sw), ip[0], ip[2]);
    if (bias && (yolo_tensor_numel(bias) != O || bias->ndim != 1))
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: bias %s does not match %lld output channels", op,
                               SHAPE(bias, sb), (long long)O);
    int64_t shape[4] = {N, O, Ho, Wo};
    yolo_tensor *t = yolo_graph_node(g, code, YOLO_F32, 4, shape, bias ? 3 : 2, in);
    if (t) memcpy(t->node->iparams, ip, sizeof ip);
    return t;
}

yolo_tensor *yolo_conv2d(yolo_graph *g, yolo_tensor *x, yolo_tensor *w, yolo_tensor *bias, const yolo_conv2d_params *p) {
    return conv_common(g, "conv2d", YOLO_OP_CONV2D, x, w, bias, p);
}

yolo_tensor *yolo_conv_transpose2d(yolo_graph *g, yolo_tensor *x, yolo_tensor *w, yolo_tensor *bias,
                                   const yolo_conv2d_params *p) {
    return conv_common(g, "conv_transpose2d", YOLO_OP_CONV_TRANSPOSE2D, x, w, bias, p);
}

/* ---- batch norm ---- */

yolo_tensor *yolo_batch_norm(yolo_graph *g, yolo_tensor *x, yolo_tensor *gamma, yolo_tensor *beta,
                             yolo_tensor *running_mean, yolo_tensor *running_var, bool training, float momentum,
                             float eps) {
    const char *op = "batch_norm";
    yolo_tensor *in[5] = {x, gamma, beta, running_mean, running_var};
    if (!check_inputs(g, op, 5, in)) return NULL;
    for (int i = 0; i < 5; i++)
        if (!check_f32(g, op, in[i])) return NULL;
    char sx[96], sp[96];
    if (x->ndim != 4 && x->ndim != 2)
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: input %s must be [N,C,H,W] or [N,C]", op, SHAPE(x, sx));
    int64_t C = x->shape[1];
    for (int i = 1; i < 5; i++)
        if (yolo_tensor_numel(in[i]) != C)
            return yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: parameter '%s' %s does not match input %s (C=%lld)", op,
                                   in[i]->name, SHAPE(in[i], sp), SHAPE(x, sx), (long long)C);
    if (!(eps > 0.0f) || momentum < 0.0f || momentum > 1.0f)
        return yolo_graph_fail(g, YOLO_ERR_ARG, "%s: eps %g must be > 0 and momentum %g in [0,1]", op, (double)eps,
                               (double)momentum);
    yolo_tensor *mean = running_mean, *var = running_var;
    if (training) {
        if (yolo_tensor_numel(x) / C < 2)
            return yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: training needs more than one value per channel, got %s", op,
                                   SHAPE(x, sx));
        int64_t sshape[2] = {2, C};
        yolo_tensor *stats_src[3] = {x, running_mean, running_var};
        yolo_tensor *stats = yolo_graph_node(g, YOLO_OP_BN_STATS, YOLO_F32, 2, sshape, 3, stats_src);
        if (!stats) return NULL;
        stats->node->iparams[0] = 1;
        stats->node->fparams[0] = momentum;
        if (g->collective && g->collective->world > 1) { /* sync_bn: the statistics of all ranks */
            stats->node->iparams[0] = 0;                       /* the running stats take the global ones */
            yolo_tensor *sync_src[3] = {stats, running_mean, running_var};
            stats = yolo_graph_node(g, YOLO_OP_SYNC_BN_STATS, YOLO_F32, 2, sshape, 3, sync_src);
            if (!stats) return NULL;
            stats->node->iparams[0] = (int32_t)(yolo_tensor_numel(x) / C);
            stats->node->iparams[1] = 1;
            stats->node->fparams[0] = momentum;
        }
        int64_t cshape[1] = {C};
        mean = yolo_graph_view(g, stats, 0, 1, cshape);
        var = yolo_graph_view(g, stats, (size_t)C * sizeof(float), 1, cshape);
        if (!mean || !var) return NULL;
    }
    yolo_tensor *apply_src[5] = {x, mean, var, gamma, beta};
    yolo_tensor *y = yolo_graph_node(g, YOLO_OP_BN_APPLY, YOLO_F32, x->ndim, x->shape, 5, apply_src);
    if (y) y->node->fparams[0] = eps;
    return y;
}

/* ---- elementwise ---- */

static yolo_tensor *unary(yolo_graph *g, const char *op, int code, yolo_tensor *x) {
    if (!check_inputs(g, op, 1, &x) || !check_f32(g, op, x)) return NULL;
    return yolo_graph_node(g, code, YOLO_F32, x->ndim, x->shape, 1, &x);
}

yolo_tensor *yolo_silu(yolo_graph *g, yolo_tensor *x) { return unary(g, "silu", YOLO_OP_SILU, x); }
yolo_tensor *yolo_relu(yolo_graph *g, yolo_tensor *x) { return unary(g, "relu", YOLO_OP_RELU, x); }
yolo_tensor *yolo_sigmoid(yolo_graph *g, yolo_tensor *x) { return unary(g, "sigmoid", YOLO_OP_SIGMOID, x); }
yolo_tensor *yolo_hardswish(yolo_graph *g, yolo_tensor *x) { return unary(g, "hardswish", YOLO_OP_HARDSWISH, x); }

static yolo_tensor *binary(yolo_graph *g, const char *op, int code, yolo_tensor *a, yolo_tensor *b) {
    yolo_tensor *in[2] = {a, b};
    if (!check_inputs(g, op, 2, in) || !check_f32(g, op, a) || !check_f32(g, op, b)) return NULL;
    int ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t shape[YOLO_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        int ia = i - (ndim - a->ndim), ib = i - (ndim - b->ndim);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[96], sb[96];
            return yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: shapes %s and %s do not broadcast", op, SHAPE(a, sa),
                                   SHAPE(b, sb));
        }
        shape[i] = da > db ? da : db;
    }
    in[0] = expand_dims(g, a, ndim);
    in[1] = expand_dims(g, b, ndim);
    if (!in[0] || !in[1]) return NULL;
    return yolo_graph_node(g, code, YOLO_F32, ndim, shape, 2, in);
}

yolo_tensor *yolo_add(yolo_graph *g, yolo_tensor *a, yolo_tensor *b) { return binary(g, "add", YOLO_OP_ADD, a, b); }
yolo_tensor *yolo_sub(yolo_graph *g, yolo_tensor *a, yolo_tensor *b) { return binary(g, "sub", YOLO_OP_SUB, a, b); }
yolo_tensor *yolo_mul(yolo_graph *g, yolo_tensor *a, yolo_tensor *b) { return binary(g, "mul", YOLO_OP_MUL, a, b); }

yolo_tensor *yolo_scale(yolo_graph *g, yolo_tensor *x, float factor) {
    yolo_tensor *t = unary(g, "scale", YOLO_OP_SCALE, x);
    if (t) t->node->fparams[0] = factor;
    return t;
}

yolo_tensor *yolo_detach(yolo_graph *g, yolo_tensor *x) {
    yolo_tensor *t = unary(g, "detach", YOLO_OP_DETACH, x);
    if (t) t->node->fparams[0] = 1.0f;
    return t;
}

yolo_tensor *yolo_cast(yolo_graph *g, yolo_tensor *x, yolo_dtype dtype, float factor) {
    if (!check_inputs(g, "cast", 1, &x)) return NULL;
    bool ok = (x->dtype == YOLO_F32 && (dtype == YOLO_F16 || dtype == YOLO_F32)) ||
              (dtype == YOLO_F32 && (x->dtype == YOLO_F16 || x->dtype == YOLO_U8 || x->dtype == YOLO_I32));
    if (!ok) {
        char s[96];
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "cast: %s to %s is not supported", SHAPE(x, s), yolo_dtype_name(dtype));
    }
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_CAST, dtype, x->ndim, x->shape, 1, &x);
    if (t) t->node->fparams[0] = factor;
    return t;
}

/* ---- shape ---- */

yolo_tensor *yolo_reshape(yolo_graph *g, yolo_tensor *x, int ndim, const int64_t *shape) {
    if (!check_inputs(g, "reshape", 1, &x)) return NULL;
    int64_t n = 1;
    if (ndim < 1 || ndim > YOLO_MAX_DIMS) return yolo_graph_fail(g, YOLO_ERR_SHAPE, "reshape: ndim %d", ndim);
    for (int i = 0; i < ndim; i++) n *= shape[i];
    if (n != yolo_tensor_numel(x)) {
        char s[96];
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "reshape: %s has %lld elements, the new shape %lld", SHAPE(x, s),
                               (long long)yolo_tensor_numel(x), (long long)n);
    }
    return yolo_graph_view(g, x, 0, ndim, shape);
}

yolo_tensor *yolo_concat(yolo_graph *g, int n, yolo_tensor *const *xs, int axis) {
    if (!g) return NULL;
    if (n < 1) return yolo_graph_fail(g, YOLO_ERR_ARG, "concat: no inputs");
    if (!check_inputs(g, "concat", n, xs)) return NULL;
    int a = normalize_axis(g, "concat", xs[0], axis);
    if (a < 0) return NULL;
    int64_t shape[YOLO_MAX_DIMS];
    memcpy(shape, xs[0]->shape, sizeof shape);
    shape[a] = 0;
    for (int i = 0; i < n; i++) {
        bool fits = xs[i]->ndim == xs[0]->ndim && xs[i]->dtype == xs[0]->dtype;
        for (int d = 0; fits && d < xs[0]->ndim; d++)
            if (d != a && xs[i]->shape[d] != xs[0]->shape[d]) fits = false;
        if (!fits) {
            char s0[96], si[96];
            return yolo_graph_fail(g, YOLO_ERR_SHAPE, "concat: input %d %s does not fit input 0 %s along axis %d", i,
                                   SHAPE(xs[i], si), SHAPE(xs[0], s0), a);
        }
        shape[a] += xs[i]->shape[a];
    }
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_CONCAT, xs[0]->dtype, xs[0]->ndim, shape, n, xs);
    if (t) t->node->iparams[0] = a;
    return t;
}

yolo_tensor *yolo_slice(yolo_graph *g, yolo_tensor *x, int axis, int64_t start, int64_t length) {
    if (!check_inputs(g, "slice", 1, &x)) return NULL;
    int a = normalize_axis(g, "slice", x, axis);
    if (a < 0) return NULL;
    if (start < 0 || length < 1 || start + length > x->shape[a]) {
        char s[96];
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "slice: [%lld, %lld) along axis %d is outside %s", (long long)start,
                               (long long)(start + length), a, SHAPE(x, s));
    }
    int64_t shape[YOLO_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[a] = length;
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_SLICE, x->dtype, x->ndim, shape, 1, &x);
    if (t) {
        t->node->iparams[0] = a;
        t->node->iparams[1] = (int32_t)start;
    }
    return t;
}

yolo_tensor *yolo_chunk(yolo_graph *g, yolo_tensor *x, int n, int axis, yolo_tensor **out) {
    if (!check_inputs(g, "chunk", 1, &x)) return NULL;
    int a = normalize_axis(g, "chunk", x, axis);
    if (a < 0) return NULL;
    if (n < 1 || x->shape[a] % n) {
        char s[96];
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "chunk: %s along axis %d does not split into %d equal parts",
                               SHAPE(x, s), a, n);
    }
    int64_t len = x->shape[a] / n;
    for (int i = 0; i < n; i++)
        if (!(out[i] = yolo_slice(g, x, a, i * len, len))) return NULL;
    return out[0];
}

/* Checks that `from` broadcasts to `to` (right-aligned, dims 1 or equal). */
static bool broadcastable(const yolo_tensor *from, int ndim, const int64_t *to) {
    if (from->ndim > ndim) return false;
    for (int i = 0; i < from->ndim; i++) {
        int64_t d = from->shape[from->ndim - 1 - i], t = to[ndim - 1 - i];
        if (d != t && d != 1) return false;
    }
    return true;
}

yolo_tensor *yolo_broadcast_to(yolo_graph *g, yolo_tensor *x, int ndim, const int64_t *shape) {
    if (!check_inputs(g, "broadcast_to", 1, &x)) return NULL;
    if (ndim < 1 || ndim > YOLO_MAX_DIMS || !broadcastable(x, ndim, shape)) {
        char s[96];
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "broadcast_to: %s does not broadcast to the %d-D target", SHAPE(x, s),
                               ndim);
    }
    yolo_tensor *xe = expand_dims(g, x, ndim);
    if (!xe) return NULL;
    return yolo_graph_node(g, YOLO_OP_BROADCAST_TO, x->dtype, ndim, shape, 1, &xe);
}

yolo_tensor *yolo_sum_to(yolo_graph *g, yolo_tensor *x, int ndim, const int64_t *shape) {
    if (!check_inputs(g, "sum_to", 1, &x) || !check_f32(g, "sum_to", x)) return NULL;
    int64_t padded[YOLO_MAX_DIMS];
    bool ok = ndim >= 1 && ndim <= x->ndim;
    for (int i = 0; ok && i < x->ndim; i++) {
        int j = i - (x->ndim - ndim);
        padded[i] = j >= 0 ? shape[j] : 1;
        if (padded[i] != 1 && padded[i] != x->shape[i]) ok = false;
    }
    if (!ok) {
        char s[96];
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "sum_to: %s cannot be summed to the %d-D target", SHAPE(x, s), ndim);
    }
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_SUM_TO, YOLO_F32, x->ndim, padded, 1, &x);
    if (!t || ndim == x->ndim) return t;
    return yolo_graph_view(g, t, 0, ndim, shape);
}

/* ---- spatial ---- */

static bool check_4d(yolo_graph *g, const char *op, yolo_tensor *x) {
    if (x->ndim == 4) return true;
    char s[96];
    yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: input %s must be [N,C,H,W]", op, SHAPE(x, s));
    return false;
}

yolo_tensor *yolo_upsample_nearest(yolo_graph *g, yolo_tensor *x, int factor) {
    if (!check_inputs(g, "upsample_nearest", 1, &x) || !check_f32(g, "upsample_nearest", x) ||
        !check_4d(g, "upsample_nearest", x))
        return NULL;
    if (factor < 1) return yolo_graph_fail(g, YOLO_ERR_ARG, "upsample_nearest: factor %d < 1", factor);
    int64_t shape[4] = {x->shape[0], x->shape[1], x->shape[2] * factor, x->shape[3] * factor};
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_UPSAMPLE_NEAREST, YOLO_F32, 4, shape, 1, &x);
    if (t) t->node->iparams[0] = factor;
    return t;
}

yolo_tensor *yolo_maxpool2d(yolo_graph *g, yolo_tensor *x, int kernel, int stride, int pad) {
    if (!check_inputs(g, "maxpool2d", 1, &x) || !check_f32(g, "maxpool2d", x) || !check_4d(g, "maxpool2d", x))
        return NULL;
    if (kernel < 1 || stride < 1 || pad < 0 || pad > kernel / 2)
        return yolo_graph_fail(g, YOLO_ERR_ARG, "maxpool2d: kernel %d, stride %d, pad %d (pad must be <= kernel/2)",
                               kernel, stride, pad);
    int64_t Ho = (x->shape[2] + 2 * pad - kernel) / stride + 1, Wo = (x->shape[3] + 2 * pad - kernel) / stride + 1;
    if (Ho < 1 || Wo < 1) {
        char s[96];
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "maxpool2d: kernel %d does not fit %s", kernel, SHAPE(x, s));
    }
    int64_t shape[4] = {x->shape[0], x->shape[1], Ho, Wo};
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_MAXPOOL2D, YOLO_F32, 4, shape, 1, &x);
    if (t) {
        t->node->iparams[0] = kernel;
        t->node->iparams[1] = stride;
        t->node->iparams[2] = pad;
    }
    return t;
}

yolo_tensor *yolo_global_avgpool(yolo_graph *g, yolo_tensor *x) {
    if (!check_inputs(g, "global_avgpool", 1, &x) || !check_4d(g, "global_avgpool", x)) return NULL;
    int64_t shape[4] = {x->shape[0], x->shape[1], 1, 1};
    return yolo_scale(g, yolo_sum_to(g, x, 4, shape), 1.0f / (float)(x->shape[2] * x->shape[3]));
}

/* ---- linear algebra ---- */

yolo_tensor *yolo_matmul(yolo_graph *g, yolo_tensor *a, yolo_tensor *b, bool transpose_a, bool transpose_b) {
    yolo_tensor *in[2] = {a, b};
    if (!check_inputs(g, "matmul", 2, in) || !check_f32(g, "matmul", a) || !check_f32(g, "matmul", b)) return NULL;
    char sa[96], sb[96];
    if (a->ndim != b->ndim || a->ndim < 2 || a->ndim > 3)
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "matmul: %s and %s must both be 2-D or both 3-D (batched)",
                               SHAPE(a, sa), SHAPE(b, sb));
    const int r = a->ndim - 2; /* the matrix dims follow the batch dim, if any */
    if (r && a->shape[0] != b->shape[0])
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "matmul: batch sizes differ: %s x %s", SHAPE(a, sa), SHAPE(b, sb));
    int64_t M = transpose_a ? a->shape[r + 1] : a->shape[r], Ka = transpose_a ? a->shape[r] : a->shape[r + 1];
    int64_t Kb = transpose_b ? b->shape[r + 1] : b->shape[r], N = transpose_b ? b->shape[r] : b->shape[r + 1];
    if (Ka != Kb)
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "matmul: inner dimensions differ: %s%s x %s%s", SHAPE(a, sa),
                               transpose_a ? "^T" : "", SHAPE(b, sb), transpose_b ? "^T" : "");
    int64_t shape[3] = {a->shape[0], M, N};
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_MATMUL, YOLO_F32, a->ndim, r ? shape : shape + 1, 2, in);
    if (t) {
        t->node->iparams[0] = transpose_a;
        t->node->iparams[1] = transpose_b;
    }
    return t;
}

yolo_tensor *yolo_linear(yolo_graph *g, yolo_tensor *x, yolo_tensor *w, yolo_tensor *bias) {
    yolo_tensor *y = yolo_matmul(g, x, w, false, true);
    if (!y || !bias) return y;
    if (bias->ndim != 1 || bias->shape[0] != y->shape[1]) {
        char sb[96], sy[96];
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "linear: bias %s does not match output %s", SHAPE(bias, sb),
                               SHAPE(y, sy));
    }
    return yolo_add(g, y, bias);
}

static yolo_tensor *softmax_common(yolo_graph *g, const char *op, int code, yolo_tensor *x, int axis) {
    if (!check_inputs(g, op, 1, &x) || !check_f32(g, op, x)) return NULL;
    int a = normalize_axis(g, op, x, axis);
    if (a < 0) return NULL;
    yolo_tensor *t = yolo_graph_node(g, code, YOLO_F32, x->ndim, x->shape, 1, &x);
    if (t) t->node->iparams[0] = a;
    return t;
}

yolo_tensor *yolo_softmax(yolo_graph *g, yolo_tensor *x, int axis) {
    return softmax_common(g, "softmax", YOLO_OP_SOFTMAX, x, axis);
}

yolo_tensor *yolo_log_softmax(yolo_graph *g, yolo_tensor *x, int axis) {
    return softmax_common(g, "log_softmax", YOLO_OP_LOG_SOFTMAX, x, axis);
}

/* ---- reductions ---- */

static yolo_tensor *reduce_all(yolo_graph *g, const char *op, int code, yolo_tensor *x) {
    if (!check_inputs(g, op, 1, &x) || !check_f32(g, op, x)) return NULL;
    int64_t one = 1;
    return yolo_graph_node(g, code, YOLO_F32, 1, &one, 1, &x);
}

yolo_tensor *yolo_sum(yolo_graph *g, yolo_tensor *x) { return reduce_all(g, "sum", YOLO_OP_SUM, x); }

yolo_tensor *yolo_mean(yolo_graph *g, yolo_tensor *x) {
    yolo_tensor *s = reduce_all(g, "mean", YOLO_OP_SUM, x);
    return s ? yolo_scale(g, s, 1.0f / (float)yolo_tensor_numel(x)) : NULL;
}

yolo_tensor *yolo_sum_squares(yolo_graph *g, yolo_tensor *x) {
    return reduce_all(g, "sum_squares", YOLO_OP_SUM_SQUARES, x);
}

/* ---- in-place updates ---- */

static yolo_tensor *update_node(yolo_graph *g, const char *op, int code, int n, yolo_tensor *const *in) {
    yolo_tensor *t = yolo_graph_node(g, code, in[0]->dtype, in[0]->ndim, in[0]->shape, n, in);
    if (!t) return NULL;
    t->node->view_of = in[0]; /* writes into src 0 */
    (void)op;
    return t;
}

static bool check_state(yolo_graph *g, const char *op, yolo_tensor *param, int n, yolo_tensor *const *state) {
    if (param->kind != YOLO_TENSOR_PERSISTENT) {
        yolo_graph_fail(g, YOLO_ERR_ARG, "%s: '%s' must be a persistent tensor", op, param->name);
        return false;
    }
    if (!check_f32(g, op, param)) return false;
    for (int i = 0; i < n; i++) {
        if (!yolo_tensor_same_shape(param, state[i]) || state[i]->dtype != YOLO_F32) {
            char sp[96], ss[96];
            yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: '%s' %s does not match '%s' %s", op, state[i]->name,
                            SHAPE(state[i], ss), param->name, SHAPE(param, sp));
            return false;
        }
    }
    return true;
}

/* hyper holds count f32 values; scale (grad_scale, step_scale; may be NULL) one. */
static bool check_hyper(yolo_graph *g, const char *op, yolo_tensor *hyper, int count, yolo_tensor *scale) {
    if (!check_f32(g, op, hyper)) return false;
    if (yolo_tensor_numel(hyper) < count) {
        yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: hyper-parameter tensor '%s' has %lld values, %d needed", op,
                        hyper->name, (long long)yolo_tensor_numel(hyper), count);
        return false;
    }
    if (scale && (!check_f32(g, op, scale) || yolo_tensor_numel(scale) != 1)) {
        yolo_graph_fail(g, YOLO_ERR_SHAPE, "%s: %s '%s' must hold one f32", op,
                        strcmp(op, "ema_update") ? "grad_scale" : "step_scale", scale->name);
        return false;
    }
    return true;
}

yolo_tensor *yolo_sgd_update(yolo_graph *g, yolo_tensor *param, yolo_tensor *grad, yolo_tensor *momentum_buf,
                             yolo_tensor *hyper, yolo_tensor *grad_scale) {
    yolo_tensor *in[5] = {param, grad, momentum_buf, hyper, grad_scale};
    if (!check_inputs(g, "sgd_update", grad_scale ? 5 : 4, in)) return NULL;
    if (!check_state(g, "sgd_update", param, 2, in + 1) ||
        !check_hyper(g, "sgd_update", hyper, YOLO_SGD_HYPER_COUNT, grad_scale))
        return NULL;
    return update_node(g, "sgd_update", YOLO_OP_SGD_UPDATE, grad_scale ? 5 : 4, in);
}

yolo_tensor *yolo_adamw_update(yolo_graph *g, yolo_tensor *param, yolo_tensor *grad, yolo_tensor *m, yolo_tensor *v,
                               yolo_tensor *hyper, yolo_tensor *grad_scale) {
    yolo_tensor *in[6] = {param, grad, m, v, hyper, grad_scale};
    if (!check_inputs(g, "adamw_update", grad_scale ? 6 : 5, in)) return NULL;
    if (!check_state(g, "adamw_update", param, 3, in + 1) ||
        !check_hyper(g, "adamw_update", hyper, YOLO_ADAMW_HYPER_COUNT, grad_scale))
        return NULL;
    return update_node(g, "adamw_update", YOLO_OP_ADAMW_UPDATE, grad_scale ? 6 : 5, in);
}

yolo_tensor *yolo_muon_momentum(yolo_graph *g, yolo_tensor *grad, yolo_tensor *momentum_buf, yolo_tensor *hyper,
                                yolo_tensor *grad_scale) {
    yolo_tensor *in[4] = {grad, momentum_buf, hyper, grad_scale};
    if (!check_inputs(g, "muon_momentum", grad_scale ? 4 : 3, in)) return NULL;
    if (!check_state(g, "muon_momentum", momentum_buf, 1, in) ||
        !check_hyper(g, "muon_momentum", hyper, YOLO_MUSGD_HYPER_COUNT, grad_scale))
        return NULL;
    return yolo_graph_node(g, YOLO_OP_MUON_MOMENTUM, YOLO_F32, grad->ndim, grad->shape, grad_scale ? 4 : 3, in);
}

yolo_tensor *yolo_muon_normalize(yolo_graph *g, yolo_tensor *x, yolo_tensor *sum_sq) {
    yolo_tensor *in[2] = {x, sum_sq};
    if (!check_inputs(g, "muon_normalize", 2, in) || !check_f32(g, "muon_normalize", x) ||
        !check_f32(g, "muon_normalize", sum_sq))
        return NULL;
    if (yolo_tensor_numel(sum_sq) != 1)
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "muon_normalize: sum_sq '%s' must hold one value", sum_sq->name);
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_MUON_NORMALIZE, YOLO_F32, x->ndim, x->shape, 2, in);
    if (t) t->node->fparams[0] = 1e-7f;
    return t;
}

yolo_tensor *yolo_musgd_update(yolo_graph *g, yolo_tensor *param, yolo_tensor *grad, yolo_tensor *ortho,
                               yolo_tensor *sgd_buf, yolo_tensor *hyper, yolo_tensor *grad_scale) {
    yolo_tensor *in[6] = {param, grad, ortho, sgd_buf, hyper, grad_scale};
    if (!check_inputs(g, "musgd_update", grad_scale ? 6 : 5, in)) return NULL;
    if (!check_state(g, "musgd_update", param, 3, in + 1) ||
        !check_hyper(g, "musgd_update", hyper, YOLO_MUSGD_HYPER_COUNT, grad_scale))
        return NULL;
    return update_node(g, "musgd_update", YOLO_OP_MUSGD_UPDATE, grad_scale ? 6 : 5, in);
}

yolo_tensor *yolo_grad_clip_scale(yolo_graph *g, yolo_tensor *norm_sq, yolo_tensor *hyper) {
    yolo_tensor *in[2] = {norm_sq, hyper};
    if (!check_inputs(g, "grad_clip_scale", 2, in) || !check_f32(g, "grad_clip_scale", norm_sq) ||
        !check_hyper(g, "grad_clip_scale", hyper, YOLO_CLIP_HYPER_COUNT, NULL))
        return NULL;
    if (yolo_tensor_numel(norm_sq) != 1)
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "grad_clip_scale: norm_sq '%s' must hold one value", norm_sq->name);
    int64_t one = 1;
    return yolo_graph_node(g, YOLO_OP_GRAD_CLIP_SCALE, YOLO_F32, 1, &one, 2, in);
}

yolo_tensor *yolo_ema_update_gated(yolo_graph *g, yolo_tensor *ema, yolo_tensor *param, yolo_tensor *hyper,
                                   yolo_tensor *step_scale) {
    yolo_tensor *in[4] = {ema, param, hyper, step_scale};
    const int n = step_scale ? 4 : 3;
    if (!check_inputs(g, "ema_update", n, in)) return NULL;
    if (!check_state(g, "ema_update", ema, 1, in + 1) || !check_hyper(g, "ema_update", hyper, 1, step_scale))
        return NULL;
    return update_node(g, "ema_update", YOLO_OP_EMA_UPDATE, n, in);
}

yolo_tensor *yolo_ema_update(yolo_graph *g, yolo_tensor *ema, yolo_tensor *param, yolo_tensor *hyper) {
    return yolo_ema_update_gated(g, ema, param, hyper, NULL);
}

yolo_tensor *yolo_accumulate(yolo_graph *g, yolo_tensor *dst, yolo_tensor *x) {
    yolo_tensor *in[2] = {dst, x};
    char sa[96], sb[96];
    if (!check_inputs(g, "accumulate", 2, in) || !check_f32(g, "accumulate", dst) || !check_f32(g, "accumulate", x))
        return NULL;
    if (dst->kind != YOLO_TENSOR_PERSISTENT)
        return yolo_graph_fail(g, YOLO_ERR_ARG, "accumulate: '%s' must be a persistent tensor", dst->name);
    if (yolo_tensor_numel(dst) != yolo_tensor_numel(x) || dst->ndim != x->ndim || !yolo_tensor_same_shape(dst, x))
        return yolo_graph_fail(g, YOLO_ERR_SHAPE, "accumulate: %s into '%s' %s", SHAPE(x, sa), dst->name,
                               SHAPE(dst, sb));
    return update_node(g, "accumulate", YOLO_OP_ACCUMULATE, 2, in);
}

yolo_tensor *yolo_zero(yolo_graph *g, yolo_tensor *t) {
    if (!check_inputs(g, "zero", 1, &t)) return NULL;
    if (t->kind != YOLO_TENSOR_PERSISTENT)
        return yolo_graph_fail(g, YOLO_ERR_ARG, "zero: '%s' must be a persistent tensor", t->name);
    return update_node(g, "zero", YOLO_OP_ZERO, 1, &t);
}
