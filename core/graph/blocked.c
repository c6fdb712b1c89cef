/* Channel-blocked activation storage (yolo_graph_block_activations).
 *
 * oneDNN's direct convolution kernels work on channel-blocked layouts
 * (nChw16c with AVX-512: [N][C/16][H][W][16]; nChw8c with AVX2). With our plain NCHW tensors
 * every convolution reordered x in (twice: forward and weight gradient),
 * y out, dy in and dx out: on YOLOv8n at 320, batch 8 (AVX512-BF16) those
 * reorders were 21% of oneDNN's time under amp and 10% in fp32, and the
 * pointwise convolutions had to run as plain GEMMs. So values that only
 * convolutions, batch norm and layout-blind copies touch are stored
 * blocked, and the reorders at those convolutions disappear.
 *
 * Which ops may touch a blocked value:
 * - the convolutions (CONV2D and its two backward ops), each of whose
 *   operands has its own layout (the oneDNN primitive is told which);
 * - batch norm's fused ops BN_STATS, BN_SILU and BN_BWD (kernels_norm.c,
 *   kernels_elementwise.c), whose x, dy and output share one layout;
 * - copies that cannot tell the layouts apart: ADD of same-shape values,
 *   CONCAT, SLICE and SLICE_BWD along the channels at multiples of the block (an
 *   image's channel range is one contiguous run in both layouts), FILL;
 * - nearest upsampling and its backward (kernels_spatial.c);
 * - the views at offset 0 that BN+SiLU fusion (the SiLU's value) and
 *   BN_BWD (its dx) make, which share their root's storage.
 * Values an op outside the list touches stay plain, and so do the values
 * that must share a layout with them (a union-find over "same layout"
 * classes). So do graph inputs, outputs, values of other shapes than
 * [N,C,H,W] with C % block == 0, and everything when the backend has no
 * channel block (yolo_backend_channel_block). The block is the backend's:
 * oneDNN's AVX-512 kernels block by 16 channels, its AVX2 ones by 8, and a
 * layout of another block would only move the reorders elsewhere.
 *
 * Numerics: convolutions and the elementwise maps give the same bits in
 * either layout; batch norm's per-channel sums add the same terms in
 * another order (kernels_norm.c), so training differs within rounding. */
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"

typedef struct layout_sets {
    int block; /* channels per block */
    int *parent;
    bool *bad; /* per class root after finish: some member must stay plain */
} layout_sets;

static int find(layout_sets *s, int i) {
    while (s->parent[i] != i) i = s->parent[i] = s->parent[s->parent[i]];
    return i;
}

static void unite(layout_sets *s, int a, int b) {
    a = find(s, a), b = find(s, b);
    if (a != b) s->parent[b] = a, s->bad[a] = s->bad[a] || s->bad[b];
}

/* A node of g (index), or -1 for persistent tensors and other graphs'. */
static int index_in(const yolo_graph *g, const yolo_tensor *t) {
    return t && t->graph == g && t->kind != YOLO_TENSOR_PERSISTENT ? t->node->index : -1;
}

static void mark_bad(layout_sets *s, const yolo_graph *g, const yolo_tensor *t) {
    int i = index_in(g, t);
    if (i >= 0) s->bad[find(s, i)] = true;
}

static void join(layout_sets *s, const yolo_graph *g, const yolo_tensor *a, const yolo_tensor *b) {
    int i = index_in(g, a), j = index_in(g, b);
    if (i >= 0 && j >= 0) unite(s, i, j);
    else mark_bad(s, g, i >= 0 ? a : b);
}

/* [N,C,H,W] with C a multiple of the block. */
static bool blockable_shape(const layout_sets *s, const yolo_tensor *t) {
    return t->ndim == 4 && t->shape[1] > 0 && t->shape[1] % s->block == 0;
}

/* The channel window of a CONCAT part, a SLICE or a SLICE_BWD lies on block bounds. */
static bool channel_window(const layout_sets *s, int axis, int64_t start, const yolo_tensor *small,
                           const yolo_tensor *big) {
    return axis == 1 && start % s->block == 0 && blockable_shape(s, small) && blockable_shape(s, big);
}

/* The value a view at offset 0 stands for, when it may share its root's
 * layout: same [N,C,H,W] shape (BN+SiLU's SiLU value), or the dx at the
 * start of a BN_BWD (its x's shape). */
static bool view_shares_layout(const layout_sets *s, const yolo_tensor *v) {
    const yolo_tensor *root = v->node->view_of;
    if (v->node->view_offset != 0 || !blockable_shape(s, v)) return false;
    if (root->node->op == YOLO_OP_BN_BWD) return yolo_tensor_same_shape(v, root->node->src[0]);
    return yolo_tensor_same_shape(v, root);
}

/* BN_BWD's rows dgamma, dbeta, dmean, dvar after its dx: plain [C] values
 * that do not constrain dx's layout. */
static bool bn_bwd_rows_view(const yolo_tensor *v) {
    const yolo_tensor *root = v->node->view_of;
    return root->node->op == YOLO_OP_BN_BWD &&
           v->node->view_offset >= (size_t)yolo_tensor_numel(root->node->src[0]) * sizeof(float);
}

/* The constraints node t's op puts on its own and its sources' layouts. */
static void constrain(layout_sets *s, const yolo_graph *g, const yolo_tensor *t) {
    const struct yolo_node *n = t->node;
    yolo_tensor *const *src = n->src;
    if (n->view_of && n->op != YOLO_OP_VIEW) join(s, g, t, n->view_of); /* an in-place op: one storage */
    switch (n->op) {
    case YOLO_OP_VIEW:
        if (bn_bwd_rows_view(t)) return;
        if (view_shares_layout(s, t)) return join(s, g, t, n->view_of);
        mark_bad(s, g, n->view_of);
        return mark_bad(s, g, t);
    case YOLO_OP_CONV2D:
    case YOLO_OP_CONV2D_BWD_DATA:
    case YOLO_OP_CONV2D_BWD_WEIGHT:
        return; /* every operand may have its own layout */
    case YOLO_OP_BN_STATS:
        return; /* reads x in either layout; writes [2,C] */
    case YOLO_OP_BN_SILU:
        return join(s, g, t, src[0]);
    case YOLO_OP_BN_BWD: /* x, stats, gamma, dy[, beta] -> dx and the rows */
        join(s, g, t, src[0]);
        return join(s, g, t, src[3]);
    case YOLO_OP_FILL:
        return;
    case YOLO_OP_UPSAMPLE_NEAREST: /* its kernels read and write blocked values (kernels_spatial.c) */
    case YOLO_OP_UPSAMPLE_NEAREST_BWD:
        if (n->n_src == 1 && blockable_shape(s, t) && blockable_shape(s, src[0])) return join(s, g, t, src[0]);
        break;
    case YOLO_OP_ADD:
        if (n->n_src == 2 && yolo_tensor_same_shape(src[0], t) && yolo_tensor_same_shape(src[1], t)) {
            join(s, g, t, src[0]);
            return join(s, g, t, src[1]);
        }
        break;
    case YOLO_OP_CONCAT: {
        bool ok = true;
        int64_t at = 0;
        for (int k = 0; k < n->n_src && ok; k++) {
            ok = channel_window(s, n->iparams[0], at, src[k], t);
            at += src[k]->ndim > 1 ? src[k]->shape[1] : 0;
        }
        if (!ok) break;
        for (int k = 0; k < n->n_src; k++) join(s, g, t, src[k]);
        return;
    }
    case YOLO_OP_SLICE:
        if (n->n_src == 1 && channel_window(s, n->iparams[0], n->iparams[1], t, src[0])) return join(s, g, t, src[0]);
        break;
    case YOLO_OP_SLICE_BWD:
        if (n->n_src == 1 && channel_window(s, n->iparams[0], n->iparams[1], src[0], t)) return join(s, g, t, src[0]);
        break;
    default:
        break;
    }
    mark_bad(s, g, t);
    for (int k = 0; k < n->n_src; k++) mark_bad(s, g, src[k]);
}

int yolo_graph_block_activations(yolo_graph *g, int block) {
    const int n = g->n_nodes;
    layout_sets s = {block, malloc(((size_t)n + 1) * sizeof(int)), calloc((size_t)n + 1, sizeof(bool))};
    int count = 0;
    if (!s.parent || !s.bad) goto done; /* out of memory: stay plain */
    for (int i = 0; i < n; i++) {
        const yolo_tensor *t = g->nodes[i];
        s.parent[i] = i;
        /* BN_BWD's flat output is dx's storage; its view carries the shape */
        const bool flat_bn_bwd = t->node->op == YOLO_OP_BN_BWD && t->node->n_src >= 4;
        s.bad[i] = t->kind != YOLO_TENSOR_NODE || t->node->is_output ||
                   (t->dtype != YOLO_F32 && t->dtype != YOLO_BF16) ||
                   !(blockable_shape(&s, t) || (flat_bn_bwd && blockable_shape(&s, t->node->src[0])));
    }
    for (int i = 0; i < n; i++) constrain(&s, g, g->nodes[i]);
    for (int i = 0; i < n; i++) {
        yolo_tensor *t = g->nodes[i];
        t->node->block = s.bad[find(&s, i)] ? 0 : (uint8_t)block;
        count += t->node->block && t->node->op != YOLO_OP_VIEW;
    }
done:
    free(s.parent);
    free(s.bad);
    return count;
}
