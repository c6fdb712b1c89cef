/* Folding each Conv's batch norm into its convolution (Ultralytics'
 * fuse_conv_and_bn): w' = w * gamma / sqrt(var + eps) per output channel,
 * b' = beta - mean * gamma / sqrt(var + eps). The BN tensors leave the
 * model; a "<...>.conv.bias" tensor joins it right after the weight. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model_internal.h"

static yolo_status fuse_one(yolo_model *m, yolo_conv_block *b, yolo_tensor **bias_out) {
    int64_t c2 = b->c2, per = yolo_tensor_numel(b->weight) / c2;
    float *w = malloc(sizeof(float) * (size_t)(c2 * per)), *stats = malloc(sizeof(float) * (size_t)(4 * c2));
    float *bias = malloc(sizeof(float) * (size_t)c2);
    yolo_status st = !w || !stats || !bias ? yolo_error(YOLO_ERR_NOMEM, "fusing '%s': out of memory", b->weight->name)
                                           : YOLO_OK;
    if (!st) st = yolo_tensor_download_f32(b->weight, w, c2 * per);
    if (!st) st = yolo_tensor_download_f32(b->bn_weight, stats, c2);
    if (!st) st = yolo_tensor_download_f32(b->bn_bias, stats + c2, c2);
    if (!st) st = yolo_tensor_download_f32(b->bn_mean, stats + 2 * c2, c2);
    if (!st) st = yolo_tensor_download_f32(b->bn_var, stats + 3 * c2, c2);
    yolo_tensor *bt = NULL;
    if (!st) {
        for (int64_t o = 0; o < c2; o++) {
            double s = stats[o] / sqrt((double)stats[3 * c2 + o] + m->bn_eps);
            for (int64_t k = 0; k < per; k++) w[o * per + k] = (float)(w[o * per + k] * s);
            bias[o] = (float)(stats[c2 + o] - stats[2 * c2 + o] * s);
        }
        char name[YOLO_NAME_MAX];
        size_t len = strlen(b->weight->name);
        if (len > 7 && !strcmp(b->weight->name + len - 7, ".weight"))
            snprintf(name, sizeof(name), "%.*s.bias", (int)(len - 7), b->weight->name);
        else
            snprintf(name, sizeof(name), "%.80s_bias", b->weight->name);
        int64_t shape[1] = {c2};
        bt = yolo_tensor_new(m->backend, name, YOLO_F32, 1, shape, false);
        st = bt ? yolo_tensor_upload_f32(bt, bias, c2) : yolo_error_context(YOLO_ERR_NOMEM, "fusing '%s'", name);
    }
    if (!st) st = yolo_tensor_upload_f32(b->weight, w, c2 * per);
    free(w);
    free(stats);
    free(bias);
    if (st) {
        yolo_tensor_free(bt);
        return st;
    }
    *bias_out = bt;
    return YOLO_OK;
}

yolo_status yolo_model_fuse(yolo_model *m) {
    if (m->fused) return YOLO_OK;
    int cap = m->n_tensors + m->n_convs;
    yolo_model_tensor *list = malloc(sizeof(*list) * (size_t)(cap ? cap : 1));
    yolo_tensor **biases = calloc((size_t)(m->n_convs ? m->n_convs : 1), sizeof(*biases));
    if (!list || !biases) {
        free(list);
        free(biases);
        return yolo_error(YOLO_ERR_NOMEM, "%s: fuse: out of memory", m->name);
    }
    yolo_status st = YOLO_OK;
    for (int i = 0; i < m->n_convs && !st; i++)
        if (m->convs[i].block->bn_weight) st = fuse_one(m, m->convs[i].block, &biases[i]);
    if (st) {
        for (int i = 0; i < m->n_convs; i++) yolo_tensor_free(biases[i]);
        free(list);
        free(biases);
        return yolo_error_context(st, "%s: fuse", m->name);
    }
    /* Rebuild the tensor list: drop BN tensors, put each bias after its weight. */
    int n = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        yolo_model_tensor t = m->tensors[i];
        bool dropped = false;
        for (int c = 0; c < m->n_convs && !dropped; c++) {
            yolo_conv_block *b = m->convs[c].block;
            if (!biases[c]) continue;
            if (t.tensor == b->bn_weight || t.tensor == b->bn_bias || t.tensor == b->bn_mean || t.tensor == b->bn_var)
                dropped = true;
        }
        if (dropped) {
            yolo_tensor_free(t.tensor);
            continue;
        }
        t.tensor->requires_grad = false; /* a fused model is for inference */
        list[n++] = t;
        for (int c = 0; c < m->n_convs; c++)
            if (biases[c] && m->convs[c].block->weight == t.tensor)
                list[n++] = (yolo_model_tensor){biases[c], YOLO_PARAM_BIAS, t.layer};
    }
    for (int c = 0; c < m->n_convs; c++) {
        yolo_conv_block *b = m->convs[c].block;
        if (!biases[c]) continue;
        b->bias = biases[c];
        b->bn_weight = b->bn_bias = b->bn_mean = b->bn_var = NULL;
    }
    free(m->tensors);
    m->tensors = list;
    m->n_tensors = n;
    m->cap_tensors = cap;
    m->fused = true;
    free(biases);
    /* then the modules' own steps (YOLOv10's RepVGGDW merges its convolutions) */
    for (int i = 0; i < m->n_fuse_steps && !st; i++) st = m->fuse_steps[i].fuse(m, m->fuse_steps[i].block);
    return st ? yolo_error_context(st, "%s: fuse", m->name) : YOLO_OK;
}

static void drop_conv(yolo_model *m, const yolo_conv_block *b) {
    int n = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        yolo_tensor *t = m->tensors[i].tensor;
        if (t == b->weight || t == b->bias)
            yolo_tensor_free(t);
        else
            m->tensors[n++] = m->tensors[i];
    }
    m->n_tensors = n;
    n = 0;
    for (int i = 0; i < m->n_convs; i++)
        if (m->convs[i].block != b) m->convs[n++] = m->convs[i];
    m->n_convs = n;
}

static void set_act_leaf(yolo_model *m, const yolo_conv_block *b, bool own_act_leaf) {
    for (int i = 0; i < m->n_convs; i++)
        if (m->convs[i].block == b) m->convs[i].own_act_leaf = own_act_leaf;
}

yolo_status model_merge_centred_conv(yolo_model *m, yolo_conv_block *big, yolo_conv_block *small) {
    if (!big->bias || !small->bias)
        return yolo_error(YOLO_ERR_ARG, "merging '%s' into '%s': fuse their batch norms first", small->weight->name,
                          big->weight->name);
    const int kb = big->k, ks = small->k, off = (kb - ks) / 2;
    const int64_t filters = yolo_tensor_numel(small->weight) / ((int64_t)ks * ks), co = big->c2;
    if (ks > kb || (kb - ks) % 2 || filters * kb * kb != yolo_tensor_numel(big->weight) || small->c2 != co)
        return yolo_error(YOLO_ERR_ARG, "merging '%s' into '%s': kernels %d and %d of other filters", small->weight->name,
                          big->weight->name, ks, kb);
    const int64_t nb = filters * kb * kb, ns = filters * ks * ks;
    float *wb = malloc(sizeof(float) * (size_t)nb), *ws = malloc(sizeof(float) * (size_t)ns);
    float *bb = malloc(sizeof(float) * (size_t)co), *bs = malloc(sizeof(float) * (size_t)co);
    yolo_status st = wb && ws && bb && bs ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "merging convolutions: out of memory");
    if (!st) st = yolo_tensor_download_f32(big->weight, wb, nb);
    if (!st) st = yolo_tensor_download_f32(small->weight, ws, ns);
    if (!st) st = yolo_tensor_download_f32(big->bias, bb, co);
    if (!st) st = yolo_tensor_download_f32(small->bias, bs, co);
    if (!st) {
        for (int64_t f = 0; f < filters; f++)
            for (int i = 0; i < ks; i++)
                for (int j = 0; j < ks; j++) wb[(f * kb + i + off) * kb + j + off] += ws[(f * ks + i) * ks + j];
        for (int64_t o = 0; o < co; o++) bb[o] += bs[o];
        st = yolo_tensor_upload_f32(big->weight, wb, nb);
    }
    if (!st) st = yolo_tensor_upload_f32(big->bias, bb, co);
    free(wb), free(ws), free(bb), free(bs);
    if (st) return yolo_error_context(st, "merging '%s' into '%s'", small->weight->name, big->weight->name);
    drop_conv(m, small);
    small->weight = small->bias = NULL;
    set_act_leaf(m, big, false); /* Ultralytics keeps the bare fused Conv2d: no Identity leaf */
    return YOLO_OK;
}
