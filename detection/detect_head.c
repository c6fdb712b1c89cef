/* detect_head.c — the YOLOv8 Detect head's building and forward helpers
 * (yolo/detection.h, "Detect head"): the box and class branches (and
 * YOLO26's one-to-one copies), the fixed DFL conv, Ultralytics' bias
 * initialisation and the eval-mode decode.
 * The Detect module type itself is the detect plugin's; Segment, Pose and
 * any other head that extends Detect build on these. */
#include "yolo/detection.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int imax(int a, int b) { return a > b ? a : b; }
static int imin(int a, int b) { return a < b ? a : b; }

yolo_status yolo_det_read_channels(yolo_module_ctx *ctx, int *nl, int *ch) {
    *nl = yolo_module_n_inputs(ctx);
    if (*nl < 1 || *nl > YOLO_DET_MAX_LEVELS)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "takes 1 to %d feature levels, 'from' lists %d",
                                 YOLO_DET_MAX_LEVELS, *nl);
    for (int i = 0; i < *nl; i++) ch[i] = yolo_module_in_channels(ctx, i);
    return YOLO_OK;
}

yolo_status yolo_det_branches_init(yolo_module_ctx *ctx, yolo_det_branch *b, const char *name, int nl, const int *ch,
                                   int c, int c_out) {
    for (int i = 0; i < nl; i++) {
        char n0[64], n1[64], n2[64];
        snprintf(n0, sizeof n0, "%s.%d.0", name, i);
        snprintf(n1, sizeof n1, "%s.%d.1", name, i);
        snprintf(n2, sizeof n2, "%s.%d.2", name, i);
        yolo_status st;
        if ((st = yolo_conv_block_init(ctx, &b[i].conv[0], n0, ch[i], c, 3, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
            (st = yolo_conv_block_init(ctx, &b[i].conv[1], n1, c, c, 3, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
            (st = yolo_conv_layer_init(ctx, &b[i].pred, n2, c, c_out, 1, 1, 0, 1, true, true)))
            return st;
    }
    return YOLO_OK;
}

yolo_status yolo_det_dw_branches_init(yolo_module_ctx *ctx, yolo_det_branch *b, const char *name, int nl,
                                      const int *ch, int c, int c_out) {
    for (int i = 0; i < nl; i++) {
        b[i].depthwise = true;
        for (int j = 0; j < 2; j++) {
            const int c_in = j ? c : ch[i];
            char dw[64], pw[64];
            snprintf(dw, sizeof dw, "%s.%d.%d.0", name, i, j);
            snprintf(pw, sizeof pw, "%s.%d.%d.1", name, i, j);
            yolo_status st;
            if ((st = yolo_conv_block_init(ctx, &b[i].dw[j], dw, c_in, c_in, 3, 1, YOLO_AUTOPAD, c_in, 1,
                                           YOLO_ACT_DEFAULT)) ||
                (st = yolo_conv_block_init(ctx, &b[i].conv[j], pw, c_in, c, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)))
                return st;
        }
        char n2[64];
        snprintf(n2, sizeof n2, "%s.%d.2", name, i);
        yolo_status st = yolo_conv_layer_init(ctx, &b[i].pred, n2, c, c_out, 1, 1, 0, 1, true, true);
        if (st) return st;
    }
    return YOLO_OK;
}

yolo_tensor *yolo_det_branch_forward(const yolo_forward_ctx *f, const yolo_det_branch *b, yolo_tensor *x) {
    for (int j = 0; j < 2; j++) {
        if (b->depthwise) x = yolo_conv_block_forward(f, &b->dw[j], x);
        x = yolo_conv_block_forward(f, &b->conv[j], x);
    }
    return yolo_conv_layer_forward(f, &b->pred, x);
}

/* The box and class branches of one head (cv2/cv3, or one2one_cv2/one2one_cv3). */
static yolo_status head_branches_init(yolo_module_ctx *ctx, const yolo_det_head *h, yolo_det_branch *box,
                                      yolo_det_branch *cls, const char *box_name, const char *cls_name) {
    yolo_status st = yolo_det_branches_init(ctx, box, box_name, h->nl, h->ch, h->c2, 4 * h->reg_max);
    /* Ultralytics' legacy flag: YOLOv8-style class branch, or depthwise (YOLO11) */
    if (!st)
        st = yolo_module_legacy_heads(ctx) ? yolo_det_branches_init(ctx, cls, cls_name, h->nl, h->ch, h->c3, h->nc)
                                           : yolo_det_dw_branches_init(ctx, cls, cls_name, h->nl, h->ch, h->c3, h->nc);
    return st;
}

yolo_status yolo_det_head_init(yolo_module_ctx *ctx, yolo_det_head *h, int nc, int nl, const int *ch) {
    if (nc < 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "nc %d must be >= 1", nc);
    h->nc = nc;
    h->nl = nl;
    h->reg_max = yolo_module_reg_max(ctx);
    if (h->reg_max < 1 || h->reg_max > YOLO_DET_REG_MAX)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "reg_max %d: the head takes 1..%d", h->reg_max,
                                 YOLO_DET_REG_MAX);
    h->no = nc + 4 * h->reg_max;
    memcpy(h->ch, ch, sizeof(int) * (size_t)nl);
    h->c2 = imax(imax(16, ch[0] / 4), 4 * h->reg_max);
    h->c3 = imax(ch[0], imin(nc, 100));
    /* state-dict order: every cv2 level, every cv3 level, dfl (then yolo_det_one2one_init's copies) */
    yolo_status st = head_branches_init(ctx, h, h->box, h->cls, "cv2", "cv3");
    if (st) return st;
    if (h->reg_max > 1) { /* YOLO26's reg_max 1: Ultralytics' dfl is an Identity */
        if ((st = yolo_conv_layer_init(ctx, &h->dfl, "dfl.conv", h->reg_max, 1, 1, 1, 0, 1, false, false))) return st;
        float w[YOLO_DET_REG_MAX];
        for (int i = 0; i < h->reg_max; i++) w[i] = (float)i;
        if ((st = yolo_tensor_upload_f32(h->dfl.weight, w, h->reg_max))) return st;
    }
    yolo_module_add_leaves(ctx, h->reg_max == 1); /* Ultralytics counts the Identity in dfl's place */
    return YOLO_OK;
}

yolo_status yolo_det_one2one_init(yolo_module_ctx *ctx, const yolo_det_head *h, yolo_det_one2one *o) {
    /* one leaf module per deep-copied branch list: copy.deepcopy gives the
     * copies their own SiLU instead of Conv's shared default_act */
    yolo_module_add_leaves(ctx, 2);
    return head_branches_init(ctx, h, o->box, o->cls, "one2one_cv2", "one2one_cv3");
}

/* Ultralytics 8.4 writes 2.0 where 8.3 wrote 1.0; under DFL a constant over
 * the bins cancels in the softmax, so only reg_max 1 sees it. */
static float box_bias(const yolo_det_head *h) { return h->reg_max > 1 ? 1.0f : 2.0f; }

/* bias_init of one box and class branch pair (cls is nc floats of scratch). */
static yolo_status branch_biases(const yolo_det_head *h, const yolo_det_branch *box, const yolo_det_branch *cls,
                                 float *cls_bias) {
    float b[4 * YOLO_DET_REG_MAX];
    for (int i = 0; i < 4 * h->reg_max; i++) b[i] = box_bias(h);
    yolo_status st = YOLO_OK;
    for (int i = 0; i < h->nl && !st; i++) {
        double s = h->stride[i];
        float v = (float)log(5.0 / h->nc / ((640.0 / s) * (640.0 / s)));
        for (int c = 0; c < h->nc; c++) cls_bias[c] = v;
        st = yolo_tensor_upload_f32(box[i].pred.bias, b, 4 * h->reg_max);
        if (!st) st = yolo_tensor_upload_f32(cls[i].pred.bias, cls_bias, h->nc);
    }
    return st;
}

yolo_status yolo_det_one2one_finalize(const yolo_det_head *h, yolo_det_one2one *o) {
    float *cls = malloc(sizeof(float) * (size_t)h->nc);
    if (!cls) return yolo_error(YOLO_ERR_NOMEM, "Detect: out of memory");
    yolo_status st = branch_biases(h, o->box, o->cls, cls);
    free(cls);
    return st;
}

yolo_status yolo_det_head_finalize(yolo_module_ctx *ctx, yolo_det_head *h) {
    for (int i = 0; i < h->nl; i++) {
        h->stride[i] = yolo_module_in_stride(ctx, i);
        if (h->stride[i] < 1) return yolo_module_error(ctx, YOLO_ERR_CONFIG, "input %d has no measurable stride", i);
    }
    float *cls = malloc(sizeof(float) * (size_t)h->nc);
    if (!cls) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    yolo_status st = branch_biases(h, h->box, h->cls, cls);
    free(cls);
    return st;
}

static yolo_status branches_raw(const yolo_forward_ctx *f, const yolo_det_head *h, const yolo_det_branch *box,
                                const yolo_det_branch *cls, int n_in, yolo_tensor *const *in, bool detach,
                                yolo_tensor **raw) {
    if (n_in != h->nl) return yolo_error(YOLO_ERR_ARG, "Detect: %d inputs, built for %d", n_in, h->nl);
    for (int i = 0; i < h->nl; i++) {
        yolo_tensor *x = detach ? yolo_detach(f->graph, in[i]) : in[i];
        yolo_tensor *parts[2] = {x ? yolo_det_branch_forward(f, &box[i], x) : NULL,
                                 x ? yolo_det_branch_forward(f, &cls[i], x) : NULL};
        raw[i] = parts[0] && parts[1] ? yolo_concat(f->graph, 2, parts, 1) : NULL;
        if (!raw[i]) return yolo_graph_status(f->graph) ? yolo_graph_status(f->graph) : YOLO_ERR_SHAPE;
    }
    return YOLO_OK;
}

yolo_status yolo_det_head_raw(const yolo_forward_ctx *f, yolo_det_head *h, int n_in, yolo_tensor *const *in,
                              yolo_tensor **raw) {
    return branches_raw(f, h, h->box, h->cls, n_in, in, false, raw);
}

yolo_status yolo_det_one2one_raw(const yolo_forward_ctx *f, const yolo_det_head *h, const yolo_det_one2one *o,
                                 int n_in, yolo_tensor *const *in, yolo_tensor **raw) {
    return branches_raw(f, h, o->box, o->cls, n_in, in, f->training, raw);
}

yolo_tensor *yolo_det_flatten_levels(yolo_graph *g, int nl, yolo_tensor *const *maps) {
    yolo_tensor *flat[YOLO_DET_MAX_LEVELS];
    for (int i = 0; i < nl; i++) {
        if (!maps[i]) return NULL;
        int64_t shape[3] = {maps[i]->shape[0], maps[i]->shape[1], maps[i]->shape[2] * maps[i]->shape[3]};
        flat[i] = yolo_reshape(g, maps[i], 3, shape);
    }
    return nl == 1 ? flat[0] : yolo_concat(g, nl, flat, 2);
}

yolo_det_anchor_cache *yolo_det_head_anchors(yolo_det_head *h, yolo_graph *g, yolo_tensor *const *raw, float offset) {
    yolo_backend *be = yolo_graph_backend(g);
    for (int c = 0; c < h->n_cache; c++) {
        yolo_det_anchor_cache *e = &h->cache[c];
        bool same = e->backend == be && e->offset == offset;
        for (int i = 0; i < h->nl && same; i++)
            same = e->hw[i][0] == raw[i]->shape[2] && e->hw[i][1] == raw[i]->shape[3];
        if (same) return e;
    }
    yolo_det_anchor_cache *grown = realloc(h->cache, sizeof(*grown) * (size_t)(h->n_cache + 1));
    if (!grown) {
        yolo_error(YOLO_ERR_NOMEM, "Detect: cannot grow the anchor cache");
        return NULL;
    }
    h->cache = grown;
    yolo_det_anchor_cache *e = &h->cache[h->n_cache];
    memset(e, 0, sizeof(*e));
    int64_t total = 0;
    for (int i = 0; i < h->nl; i++) {
        e->hw[i][0] = raw[i]->shape[2];
        e->hw[i][1] = raw[i]->shape[3];
        total += e->hw[i][0] * e->hw[i][1];
    }
    float *xy = malloc(sizeof(float) * (size_t)(3 * total));
    int64_t ashape[2] = {2, total}, sshape[2] = {1, total};
    e->backend = be;
    e->offset = offset;
    e->anchors = yolo_tensor_new(be, "detect.anchors", YOLO_F32, 2, ashape, false);
    e->strides = yolo_tensor_new(be, "detect.strides", YOLO_F32, 2, sshape, false);
    if (!xy || !e->anchors || !e->strides) goto fail;
    int64_t k = 0;
    for (int i = 0; i < h->nl; i++)
        for (int64_t y = 0; y < e->hw[i][0]; y++)
            for (int64_t x = 0; x < e->hw[i][1]; x++, k++) {
                xy[k] = (float)x + offset;
                xy[total + k] = (float)y + offset;
                xy[2 * total + k] = (float)h->stride[i];
            }
    if (yolo_tensor_upload_f32(e->anchors, xy, 2 * total) || yolo_tensor_upload_f32(e->strides, xy + 2 * total, total))
        goto fail;
    free(xy);
    h->n_cache++;
    return e;
fail:
    free(xy);
    yolo_tensor_free(e->anchors);
    yolo_tensor_free(e->strides);
    yolo_error(YOLO_ERR_NOMEM, "Detect: cannot create the anchor tensors");
    return NULL;
}

yolo_tensor *yolo_det_head_decode(const yolo_forward_ctx *f, yolo_det_head *h, yolo_tensor *const *raw) {
    yolo_graph *g = f->graph;
    yolo_tensor *x = yolo_det_flatten_levels(g, h->nl, raw);
    if (!x) return NULL;
    yolo_det_anchor_cache *e = yolo_det_head_anchors(h, g, raw, 0.5f);
    if (!e) return NULL;
    int64_t n = x->shape[0], a = x->shape[2];
    yolo_tensor *box = yolo_slice(g, x, 1, 0, 4 * h->reg_max);
    yolo_tensor *cls = yolo_slice(g, x, 1, 4 * h->reg_max, h->nc);
    /* DFL: softmax over the reg_max bins of each side, then the fixed conv
     * (expectation); at reg_max 1 the four channels are the distances */
    int64_t bins[4] = {n * 4, h->reg_max, 1, a}, sides[3] = {n, 4, a};
    yolo_tensor *d = box;
    if (h->reg_max > 1) {
        d = yolo_softmax(g, yolo_reshape(g, box, 4, bins), 1);
        d = yolo_reshape(g, yolo_conv_layer_forward(f, &h->dfl, d), 3, sides);
    }
    /* dist2bbox (xywh), then to pixels */
    yolo_tensor *lt = yolo_slice(g, d, 1, 0, 2), *rb = yolo_slice(g, d, 1, 2, 2);
    yolo_tensor *x1y1 = yolo_sub(g, e->anchors, lt), *x2y2 = yolo_add(g, e->anchors, rb);
    yolo_tensor *xywh[2] = {yolo_scale(g, yolo_add(g, x1y1, x2y2), 0.5f), yolo_sub(g, x2y2, x1y1)};
    yolo_tensor *dbox = yolo_mul(g, yolo_concat(g, 2, xywh, 1), e->strides);
    yolo_tensor *parts[2] = {dbox, yolo_sigmoid(g, cls)};
    return yolo_concat(g, 2, parts, 1);
}

void yolo_det_head_release(yolo_det_head *h) {
    for (int c = 0; c < h->n_cache; c++) {
        yolo_tensor_free(h->cache[c].anchors);
        yolo_tensor_free(h->cache[c].strides);
    }
    free(h->cache);
    h->cache = NULL;
    h->n_cache = 0;
}

void yolo_det_channels_text(int nl, const int *ch, char *buf, size_t size) {
    if (!buf || size == 0) return;
    buf[0] = '\0';
    size_t len = 0;
    for (int i = 0; i < nl && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? ", " : "", ch[i]);
}
