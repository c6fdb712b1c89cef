/* Reverse-mode differentiation: appends to a graph the backward pass of
 * its nodes, one per-op rule each. Gradients of graph nodes are summed in
 * the graph; gradients of persistent parameters are accumulated into their
 * persistent `grad` tensors (so several runs accumulate, as nominal-batch
 * accumulation wants, until an optimizer graph zeroes them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"

typedef struct autograd {
    yolo_graph *g;
    bool *needs;     /* per node index: some parameter lies upstream */
    int *uses;       /* per forward node index: how many forward nodes read it */
    bool *slices_pending; /* per node index: its SLICE consumers' gradients wait to be concatenated */
    int n_forward;   /* nodes that existed before the backward pass */
} autograd;

static bool needs_grad(const autograd *ad, const yolo_tensor *t) {
    if (!t) return false;
    if (t->kind == YOLO_TENSOR_PERSISTENT) return t->requires_grad;
    if (t->graph != ad->g || t->node->index >= ad->n_forward) return false;
    return ad->needs[t->node->index];
}

static yolo_tensor *node(autograd *ad, int op, const yolo_tensor *like, int n, yolo_tensor *const *src) {
    return yolo_graph_node(ad->g, op, YOLO_F32, like->ndim, like->shape, n, src);
}

/* Adds grad to t's gradient: summed in the graph for nodes, accumulated into
 * the persistent grad tensor for parameters. */
static yolo_status add_grad(autograd *ad, yolo_tensor *t, yolo_tensor *grad) {
    if (!grad) return yolo_graph_status(ad->g) ? yolo_graph_status(ad->g) : YOLO_ERR_NOMEM;
    if (!needs_grad(ad, t)) return YOLO_OK;
    if (t->kind == YOLO_TENSOR_PERSISTENT) {
        yolo_tensor *src[2] = {t->grad, grad};
        yolo_tensor *acc = yolo_graph_node(ad->g, YOLO_OP_ACCUMULATE, YOLO_F32, t->ndim, t->shape, 2, src);
        if (!acc) return yolo_graph_status(ad->g);
        acc->node->view_of = t->grad;
        yolo_set_name(acc, "accumulate(%s)", t->grad->name);
        return YOLO_OK;
    }
    if (!t->node->node_grad) {
        t->node->node_grad = grad;
        return YOLO_OK;
    }
    yolo_tensor *sum = yolo_add(ad->g, t->node->node_grad, grad);
    if (!sum) return yolo_graph_status(ad->g);
    t->node->node_grad = sum;
    return YOLO_OK;
}

/* Gradient of a broadcast operand: sum dy back to the operand's shape. */
static yolo_tensor *unbroadcast(autograd *ad, yolo_tensor *dy, const yolo_tensor *operand) {
    if (yolo_tensor_same_shape(dy, operand)) return dy;
    return yolo_sum_to(ad->g, dy, operand->ndim, operand->shape);
}

static yolo_tensor *conv_bwd(autograd *ad, int op, const yolo_tensor *like, yolo_tensor *a, yolo_tensor *b,
                             const int32_t *iparams) {
    yolo_tensor *src[2] = {a, b};
    yolo_tensor *t = node(ad, op, like, 2, src);
    if (t) memcpy(t->node->iparams, iparams, 7 * sizeof *iparams);
    return t;
}

/* d(sum over a [1]-shaped scalar broadcast) helper: dy [1] -> like's shape. */
static yolo_tensor *expand_scalar(autograd *ad, yolo_tensor *dy, const yolo_tensor *like) {
    return yolo_broadcast_to(ad->g, dy, like->ndim, like->shape);
}

/* The SLICE nodes reading x, in order of their start, when they are all
 * of x's readers and tile x along one axis (chunk): x's gradient is then
 * the concatenation of theirs, with no zero-padded SLICE_BWD and ADD.
 * Returns their count (0: not that pattern); `out` may be NULL. */
#define MAX_TILES 64
static int slice_tiles(const autograd *ad, const yolo_tensor *x, yolo_tensor **out) {
    if (x->graph != ad->g || x->node->index >= ad->n_forward || x->kind == YOLO_TENSOR_PERSISTENT) return 0;
    const int n_uses = ad->uses[x->node->index];
    if (n_uses < 2 || n_uses > MAX_TILES) return 0;
    yolo_tensor *tiles[MAX_TILES];
    int n = 0, axis = -1;
    for (int i = x->node->index + 1; i < ad->n_forward && n < n_uses; i++) {
        yolo_tensor *t = ad->g->nodes[i];
        bool reads = false;
        for (int k = 0; k < t->node->n_src; k++) reads |= t->node->src[k] == x;
        if (!reads) continue;
        if (t->node->op != YOLO_OP_SLICE || t->dtype != YOLO_F32 || (axis >= 0 && t->node->iparams[0] != axis)) return 0;
        axis = t->node->iparams[0];
        /* insertion by start */
        int j = n++;
        while (j > 0 && tiles[j - 1]->node->iparams[1] > t->node->iparams[1]) {
            tiles[j] = tiles[j - 1];
            j--;
        }
        tiles[j] = t;
    }
    if (n != n_uses) return 0;
    int64_t at = 0;
    for (int k = 0; k < n; k++) {
        if (tiles[k]->node->iparams[1] != at) return 0;
        at += tiles[k]->shape[axis];
    }
    if (at != x->shape[axis]) return 0;
    if (out) memcpy(out, tiles, (size_t)n * sizeof *tiles);
    return n;
}

static bool slices_tile(const autograd *ad, const yolo_tensor *x) { return slice_tiles(ad, x, NULL) > 0; }

/* x's gradient from its tiling slices: their gradients (zeros where one has
 * none) concatenated along the slices' axis. */
static yolo_status gather_slice_grads(autograd *ad, yolo_tensor *x) {
    yolo_tensor *tiles[MAX_TILES], *parts[MAX_TILES];
    const int n = slice_tiles(ad, x, tiles);
    if (n == 0) return yolo_error(YOLO_ERR_ARG, "backward: slices of '%s' changed during the pass", x->name);
    for (int k = 0; k < n; k++) {
        parts[k] = tiles[k]->node->node_grad;
        if (!parts[k]) {
            parts[k] = yolo_graph_node(ad->g, YOLO_OP_FILL, YOLO_F32, tiles[k]->ndim, tiles[k]->shape, 0, NULL);
            if (!parts[k]) return yolo_graph_status(ad->g);
            parts[k]->node->fparams[0] = 0.0f;
        }
    }
    return add_grad(ad, x, yolo_concat(ad->g, n, parts, tiles[0]->node->iparams[0]));
}

/* The BN_STATS node of training batch norm when y = BN_APPLY(x, mean, var, ...)
 * takes mean and var as the two rows of stats = BN_STATS(x), and nothing
 * else reads stats or its rows (nor seeds their gradients): the gradient of
 * stats is then the [dmean; dvar] rows of BN_APPLY_BWD_PARAMS alone, and
 * x's two gradient terms fold into one BN_BWD. NULL otherwise. */
static yolo_tensor *fusable_bn_stats(const autograd *ad, const yolo_tensor *y) {
    yolo_tensor *x = y->node->src[0], *mean = y->node->src[1], *var = y->node->src[2], *gamma = y->node->src[3];
    if (mean->node->op != YOLO_OP_VIEW || var->node->op != YOLO_OP_VIEW || mean == var) return NULL;
    yolo_tensor *stats = mean->node->view_of;
    if (!stats || var->node->view_of != stats || stats->node->op != YOLO_OP_BN_STATS || stats->node->src[0] != x) return NULL;
    if (stats->graph != ad->g || mean->graph != ad->g || var->graph != ad->g) return NULL;
    const int64_t C = yolo_tensor_numel(gamma);
    if (yolo_tensor_numel(stats) != 2 * C || mean->node->view_offset != 0 || var->node->view_offset != (size_t)C * sizeof(float))
        return NULL;
    if (ad->uses[stats->node->index] != 2 || ad->uses[mean->node->index] != 1 || ad->uses[var->node->index] != 1) return NULL;
    if (stats->node->node_grad || mean->node->node_grad || var->node->node_grad) return NULL;
    return stats;
}

/* Backward of BN_APPLY(x, rows of stats = BN_STATS(x), gamma, beta): one
 * BN_BWD node holding dx and the rows dgamma, dbeta, dmean, dvar (the
 * arithmetic of BN_APPLY_BWD_PARAMS, BN_APPLY_BWD_DATA, BN_STATS_BWD and
 * their ADD); dx, dgamma and dbeta are views of it. stats gets no gradient
 * of its own, so its rule never runs. Without x's gradient only the
 * parameters' rows are computed (BN_APPLY_BWD_PARAMS). */
static yolo_status bn_backward_fused(autograd *ad, yolo_tensor *y, yolo_tensor *stats) {
    yolo_graph *g = ad->g;
    yolo_tensor **s = y->node->src, *dy = y->node->node_grad, *x = s[0];
    const int64_t C = yolo_tensor_numel(s[3]), numel = yolo_tensor_numel(x);
    const bool need_x = needs_grad(ad, x);
    if (!need_x && !needs_grad(ad, s[3]) && !needs_grad(ad, s[4])) return YOLO_OK;
    yolo_tensor *f;
    size_t rows; /* byte offset of the dgamma row in f */
    if (need_x) {
        int64_t fshape[1] = {numel + 4 * C};
        f = yolo_graph_node(g, YOLO_OP_BN_BWD, YOLO_F32, 1, fshape, 4, (yolo_tensor *[]){x, stats, s[3], dy});
        rows = (size_t)numel * sizeof(float);
    } else {
        int64_t pshape[2] = {4, C};
        f = yolo_graph_node(g, YOLO_OP_BN_APPLY_BWD_PARAMS, YOLO_F32, 2, pshape, 5,
                            (yolo_tensor *[]){x, s[1], s[2], s[3], dy});
        rows = 0;
    }
    if (!f) return yolo_graph_status(g);
    f->node->fparams[0] = y->node->fparams[0];
    yolo_status st = YOLO_OK;
    for (int r = 0; r < 2 && !st; r++) { /* rows dgamma, dbeta */
        yolo_tensor *t = s[3 + r];
        if (needs_grad(ad, t))
            st = add_grad(ad, t, yolo_graph_view(g, f, rows + (size_t)(r * C) * sizeof(float), t->ndim, t->shape));
    }
    if (st || !need_x) return st;
    return add_grad(ad, x, yolo_graph_view(g, f, 0, x->ndim, x->shape));
}

static yolo_status backward_node(autograd *ad, yolo_tensor *y) {
    yolo_graph *g = ad->g;
    yolo_tensor *dy = y->node->node_grad;
    yolo_tensor **s = y->node->src;
    yolo_status st = YOLO_OK;
    switch (y->node->op) {
    case YOLO_OP_VIEW: {
        yolo_tensor *x = y->node->view_of;
        if (y->node->view_offset == 0 && yolo_tensor_numel(y) == yolo_tensor_numel(x))
            return add_grad(ad, x, yolo_reshape(g, dy, x->ndim, x->shape));
        /* a window of x (a row of batch-norm statistics): zero-pad back to x */
        int64_t flat = yolo_tensor_numel(x);
        yolo_tensor *dflat = yolo_reshape(g, dy, 1, (int64_t[]){yolo_tensor_numel(y)});
        if (!dflat) return yolo_graph_status(g);
        int64_t fshape[1] = {flat};
        yolo_tensor *padded = yolo_graph_node(g, YOLO_OP_SLICE_BWD, YOLO_F32, 1, fshape, 1, &dflat);
        if (!padded) return yolo_graph_status(g);
        padded->node->iparams[0] = 0;
        padded->node->iparams[1] = (int32_t)(y->node->view_offset / yolo_dtype_size(x->dtype));
        return add_grad(ad, x, yolo_reshape(g, padded, x->ndim, x->shape));
    }
    case YOLO_OP_CONV2D:
        if (needs_grad(ad, s[0])) st = add_grad(ad, s[0], conv_bwd(ad, YOLO_OP_CONV2D_BWD_DATA, s[0], dy, s[1], y->node->iparams));
        if (!st && needs_grad(ad, s[1]))
            st = add_grad(ad, s[1], conv_bwd(ad, YOLO_OP_CONV2D_BWD_WEIGHT, s[1], s[0], dy, y->node->iparams));
        if (!st && y->node->n_src > 2 && needs_grad(ad, s[2]))
            st = add_grad(ad, s[2], yolo_reshape(g, yolo_sum_to(g, dy, 4, (int64_t[]){1, y->shape[1], 1, 1}), 1,
                                                 s[2]->shape));
        return st;
    case YOLO_OP_CONV_TRANSPOSE2D:
        /* y = conv2d_bwd_data(x, w): x's gradient is the forward conv of dy */
        if (needs_grad(ad, s[0])) st = add_grad(ad, s[0], conv_bwd(ad, YOLO_OP_CONV2D, s[0], dy, s[1], y->node->iparams));
        if (!st && needs_grad(ad, s[1]))
            st = add_grad(ad, s[1], conv_bwd(ad, YOLO_OP_CONV2D_BWD_WEIGHT, s[1], dy, s[0], y->node->iparams));
        if (!st && y->node->n_src > 2 && needs_grad(ad, s[2]))
            st = add_grad(ad, s[2], yolo_reshape(g, yolo_sum_to(g, dy, 4, (int64_t[]){1, y->shape[1], 1, 1}), 1,
                                                 s[2]->shape));
        return st;
    case YOLO_OP_SYNC_BN_STATS: {
        yolo_tensor *src[3] = {s[0], y, dy};
        return add_grad(ad, s[0], node(ad, YOLO_OP_SYNC_BN_STATS_BWD, s[0], 3, src));
    }
    case YOLO_OP_BN_STATS: {
        yolo_tensor *src[3] = {s[0], y, dy};
        return add_grad(ad, s[0], node(ad, YOLO_OP_BN_STATS_BWD, s[0], 3, src));
    }
    case YOLO_OP_BN_APPLY: {
        /* src x, mean, var, gamma, beta */
        int64_t C = yolo_tensor_numel(s[3]);
        yolo_tensor *stats = fusable_bn_stats(ad, y);
        if (stats) return bn_backward_fused(ad, y, stats);
        bool need_params = needs_grad(ad, s[1]) || needs_grad(ad, s[2]) || needs_grad(ad, s[3]) || needs_grad(ad, s[4]);
        if (need_params) {
            yolo_tensor *src[5] = {s[0], s[1], s[2], s[3], dy};
            int64_t pshape[2] = {4, C};
            yolo_tensor *p = yolo_graph_node(g, YOLO_OP_BN_APPLY_BWD_PARAMS, YOLO_F32, 2, pshape, 5, src);
            if (!p) return yolo_graph_status(g);
            p->node->fparams[0] = y->node->fparams[0];
            const int targets[4] = {3, 4, 1, 2}; /* rows: dgamma, dbeta, dmean, dvar */
            for (int r = 0; r < 4 && !st; r++) {
                yolo_tensor *t = s[targets[r]];
                if (!needs_grad(ad, t)) continue;
                yolo_tensor *row = yolo_graph_view(g, p, (size_t)(r * C) * sizeof(float), t->ndim, t->shape);
                st = add_grad(ad, t, row);
            }
        }
        if (!st && needs_grad(ad, s[0])) {
            yolo_tensor *src[3] = {s[2], s[3], dy};
            yolo_tensor *dx = node(ad, YOLO_OP_BN_APPLY_BWD_DATA, s[0], 3, src);
            if (dx) dx->node->fparams[0] = y->node->fparams[0];
            st = add_grad(ad, s[0], dx);
        }
        return st;
    }
    case YOLO_OP_SILU:
    case YOLO_OP_RELU:
    case YOLO_OP_HARDSWISH: { /* backward from the input x */
        yolo_tensor *src[2] = {s[0], dy};
        const int op = y->node->op;
        const int bwd = op == YOLO_OP_SILU ? YOLO_OP_SILU_BWD : op == YOLO_OP_RELU ? YOLO_OP_RELU_BWD : YOLO_OP_HARDSWISH_BWD;
        return add_grad(ad, s[0], node(ad, bwd, s[0], 2, src));
    }
    case YOLO_OP_SIGMOID: {
        yolo_tensor *src[2] = {y, dy};
        return add_grad(ad, s[0], node(ad, YOLO_OP_SIGMOID_BWD, s[0], 2, src));
    }
    case YOLO_OP_ADD:
        if (needs_grad(ad, s[0])) st = add_grad(ad, s[0], unbroadcast(ad, dy, s[0]));
        if (!st && needs_grad(ad, s[1])) st = add_grad(ad, s[1], unbroadcast(ad, dy, s[1]));
        return st;
    case YOLO_OP_SUB:
        if (needs_grad(ad, s[0])) st = add_grad(ad, s[0], unbroadcast(ad, dy, s[0]));
        if (!st && needs_grad(ad, s[1])) st = add_grad(ad, s[1], yolo_scale(g, unbroadcast(ad, dy, s[1]), -1.0f));
        return st;
    case YOLO_OP_MUL:
        if (needs_grad(ad, s[0])) st = add_grad(ad, s[0], unbroadcast(ad, yolo_mul(g, dy, s[1]), s[0]));
        if (!st && needs_grad(ad, s[1])) st = add_grad(ad, s[1], unbroadcast(ad, yolo_mul(g, dy, s[0]), s[1]));
        return st;
    case YOLO_OP_SCALE:
        return add_grad(ad, s[0], yolo_scale(g, dy, y->node->fparams[0]));
    case YOLO_OP_CAST:
        if (s[0]->dtype != YOLO_F32 && s[0]->dtype != YOLO_F16) return YOLO_OK; /* integer inputs: no gradient */
        return add_grad(ad, s[0], yolo_cast(g, dy, s[0]->dtype, y->node->fparams[0]));
    case YOLO_OP_CONCAT: {
        int axis = y->node->iparams[0];
        int64_t start = 0;
        for (int i = 0; i < y->node->n_src && !st; i++) {
            if (needs_grad(ad, s[i])) st = add_grad(ad, s[i], yolo_slice(g, dy, axis, start, s[i]->shape[axis]));
            start += s[i]->shape[axis];
        }
        return st;
    }
    case YOLO_OP_SLICE: {
        if (slices_tile(ad, s[0])) { /* concatenated when the loop reaches s[0] */
            ad->slices_pending[s[0]->node->index] = true;
            return YOLO_OK;
        }
        yolo_tensor *dx = yolo_graph_node(g, YOLO_OP_SLICE_BWD, YOLO_F32, s[0]->ndim, s[0]->shape, 1, &dy);
        if (dx) memcpy(dx->node->iparams, y->node->iparams, 2 * sizeof *dx->node->iparams);
        return add_grad(ad, s[0], dx);
    }
    case YOLO_OP_BROADCAST_TO:
        return add_grad(ad, s[0], unbroadcast(ad, dy, s[0]));
    case YOLO_OP_SUM_TO:
        return add_grad(ad, s[0], yolo_broadcast_to(g, dy, s[0]->ndim, s[0]->shape));
    case YOLO_OP_UPSAMPLE_NEAREST: {
        yolo_tensor *dx = node(ad, YOLO_OP_UPSAMPLE_NEAREST_BWD, s[0], 1, &dy);
        if (dx) dx->node->iparams[0] = y->node->iparams[0];
        return add_grad(ad, s[0], dx);
    }
    case YOLO_OP_MAXPOOL2D: {
        yolo_tensor *src[2] = {s[0], dy};
        yolo_tensor *dx = node(ad, YOLO_OP_MAXPOOL2D_BWD, s[0], 2, src);
        if (dx) memcpy(dx->node->iparams, y->node->iparams, 3 * sizeof *dx->node->iparams);
        return add_grad(ad, s[0], dx);
    }
    case YOLO_OP_MATMUL: {
        bool ta = y->node->iparams[0], tb = y->node->iparams[1];
        yolo_tensor *da, *db;
        if (!ta && !tb) {
            da = needs_grad(ad, s[0]) ? yolo_matmul(g, dy, s[1], false, true) : NULL;
            db = needs_grad(ad, s[1]) ? yolo_matmul(g, s[0], dy, true, false) : NULL;
        } else if (ta && !tb) {
            da = needs_grad(ad, s[0]) ? yolo_matmul(g, s[1], dy, false, true) : NULL;
            db = needs_grad(ad, s[1]) ? yolo_matmul(g, s[0], dy, false, false) : NULL;
        } else if (!ta && tb) {
            da = needs_grad(ad, s[0]) ? yolo_matmul(g, dy, s[1], false, false) : NULL;
            db = needs_grad(ad, s[1]) ? yolo_matmul(g, dy, s[0], true, false) : NULL;
        } else {
            da = needs_grad(ad, s[0]) ? yolo_matmul(g, s[1], dy, true, true) : NULL;
            db = needs_grad(ad, s[1]) ? yolo_matmul(g, dy, s[0], true, true) : NULL;
        }
        if (needs_grad(ad, s[0])) st = add_grad(ad, s[0], da);
        if (!st && needs_grad(ad, s[1])) st = add_grad(ad, s[1], db);
        return st;
    }
    case YOLO_OP_SOFTMAX:
    case YOLO_OP_LOG_SOFTMAX: {
        yolo_tensor *src[2] = {y, dy};
        yolo_tensor *dx =
            node(ad, y->node->op == YOLO_OP_SOFTMAX ? YOLO_OP_SOFTMAX_BWD : YOLO_OP_LOG_SOFTMAX_BWD, s[0], 2, src);
        if (dx) dx->node->iparams[0] = y->node->iparams[0];
        return add_grad(ad, s[0], dx);
    }
    case YOLO_OP_SUM:
        return add_grad(ad, s[0], expand_scalar(ad, dy, s[0]));
    case YOLO_OP_SUM_SQUARES:
        return add_grad(ad, s[0], yolo_mul(g, yolo_scale(g, s[0], 2.0f), dy));
    default:
        return yolo_error(YOLO_ERR_UNSUPPORTED, "backward: op %s (node '%s') has no gradient rule",
                          yolo_op_name(y->node->op), y->name);
    }
}

/* Walks the forward nodes in reverse from the seeds' last index. */
static yolo_status backward_seeded(yolo_graph *g, int n_seeds, yolo_tensor *const *outputs,
                                   yolo_tensor *const *seeds) {
    if (g->status != YOLO_OK) return yolo_error(g->status, "backward on a failed graph: %s", g->error);
    if (g->planned) return yolo_error(YOLO_ERR_ARG, "backward: the graph is already planned");
    autograd ad = {.g = g, .n_forward = g->n_nodes};
    ad.needs = calloc((size_t)g->n_nodes + 1, sizeof *ad.needs);
    ad.uses = calloc((size_t)g->n_nodes + 1, sizeof *ad.uses);
    ad.slices_pending = calloc((size_t)g->n_nodes + 1, sizeof *ad.slices_pending);
    if (!ad.needs || !ad.uses || !ad.slices_pending) {
        free(ad.needs);
        free(ad.uses);
        free(ad.slices_pending);
        return yolo_error(YOLO_ERR_NOMEM, "backward: out of memory");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const yolo_tensor *t = g->nodes[i];
        for (int k = 0; k < t->node->n_src; k++)
            if (t->node->src[k] && t->node->src[k]->graph == g && t->node->src[k]->kind != YOLO_TENSOR_PERSISTENT) ad.uses[t->node->src[k]->node->index]++;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        yolo_tensor *t = g->nodes[i];
        if (t->node->op == YOLO_OP_NONE || !yolo_op_differentiable(t->node->op)) continue;
        for (int k = 0; k < t->node->n_src && !ad.needs[i]; k++) ad.needs[i] = needs_grad(&ad, t->node->src[k]);
    }
    int last = -1;
    yolo_status st = YOLO_OK;
    for (int i = 0; i < n_seeds && !st; i++) {
        if (outputs[i]->node->index > last) last = outputs[i]->node->index;
        st = add_grad(&ad, outputs[i], seeds[i]);
    }
    for (int i = last; i >= 0 && !st; i--) {
        yolo_tensor *t = g->nodes[i];
        if (ad.slices_pending[i]) st = gather_slice_grads(&ad, t);
        if (st || !t->node->node_grad || !ad.needs[i]) continue;
        st = backward_node(&ad, t);
        if (st == YOLO_OK && yolo_graph_status(g) != YOLO_OK) st = yolo_graph_status(g);
    }
    /* node_grad only means something during this pass */
    for (int i = 0; i < ad.n_forward; i++) g->nodes[i]->node->node_grad = NULL;
    free(ad.needs);
    free(ad.uses);
    free(ad.slices_pending);
    if (st != YOLO_OK && g->status == YOLO_OK) {
        g->status = st;
        snprintf(g->error, sizeof g->error, "%s", yolo_last_error());
    }
    return st;
}

static yolo_status check_output(yolo_graph *g, yolo_tensor *t) {
    if (!t) return yolo_error(YOLO_ERR_ARG, "backward: NULL output");
    if (t->graph != g) return yolo_error(YOLO_ERR_ARG, "backward: '%s' is not a node of this graph", t->name);
    if (t->dtype != YOLO_F32) return yolo_error(YOLO_ERR_SHAPE, "backward: output '%s' is not f32", t->name);
    return YOLO_OK;
}

yolo_status yolo_graph_backward(yolo_graph *g, yolo_tensor *loss) {
    if (!g) return yolo_error(YOLO_ERR_ARG, "backward: NULL graph");
    yolo_status st = check_output(g, loss);
    if (st) return st;
    if (yolo_tensor_numel(loss) != 1)
        return yolo_error(YOLO_ERR_SHAPE, "backward: loss '%s' must hold one value (has %lld)", loss->name,
                          (long long)yolo_tensor_numel(loss));
    if (!g->backward_start) g->backward_start = g->n_nodes;
    yolo_tensor *seed = yolo_graph_node(g, YOLO_OP_FILL, YOLO_F32, loss->ndim, loss->shape, 0, NULL);
    if (!seed) return yolo_graph_status(g);
    seed->node->fparams[0] = 1.0f;
    yolo_set_name(seed, "d(%s)", loss->name);
    return backward_seeded(g, 1, &loss, &seed);
}

yolo_status yolo_graph_backward_from(yolo_graph *g, int n, yolo_tensor *const *outputs, yolo_tensor **grad_inputs) {
    if (!g || n < 1 || !outputs || !grad_inputs) return yolo_error(YOLO_ERR_ARG, "backward_from: bad arguments");
    if (!g->backward_start) g->backward_start = g->n_nodes;
    for (int i = 0; i < n; i++) {
        yolo_status st = check_output(g, outputs[i]);
        if (st) return st;
        char name[YOLO_NAME_MAX + 8];
        snprintf(name, sizeof name, "d(%s)", outputs[i]->name);
        grad_inputs[i] = yolo_graph_input(g, name, YOLO_F32, outputs[i]->ndim, outputs[i]->shape);
        if (!grad_inputs[i]) return yolo_graph_status(g);
    }
    return backward_seeded(g, n, outputs, grad_inputs);
}
