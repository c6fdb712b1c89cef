/* A traced forward graph written as an ONNX ModelProto (onnx_export.h).
 * Field numbers are onnx.proto's (ONNX 1.12). */
#include "interop/onnx_export.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/onnx_end2end.h"
#include "interop/onnx_writer.h"

static void conv(writer *w, const yolo_tensor *t, const char *const *in, int n_in, const char *out, bool transpose) {
    const yolo_tensor *wt = t->node->src[1];
    pb_buf a = {0};
    int64_t k[2] = {wt->shape[2], wt->shape[3]}, s[2] = {t->node->iparams[0], t->node->iparams[1]};
    int64_t p[4] = {t->node->iparams[2], t->node->iparams[3], t->node->iparams[2], t->node->iparams[3]}, d[2] = {t->node->iparams[4], t->node->iparams[5]};
    ox_attr_ints(&a, "dilations", d, 2);
    ox_attr_int(&a, "group", t->node->iparams[6]);
    ox_attr_ints(&a, "kernel_shape", k, 2);
    ox_attr_ints(&a, "pads", p, 4);
    ox_attr_ints(&a, "strides", s, 2);
    ox_node(w, transpose ? "ConvTranspose" : "Conv", in, n_in, out, &a);
}

/* 2-D: Gemm with its transpose flags (a Linear layer, as OpenCV reads it);
 * batched 3-D: MatMul, which broadcasts over the leading dim, after a
 * Transpose of the last two dims of each transposed operand. */
static void matmul(writer *w, const yolo_tensor *t, const char *const *in, const char *out, int index) {
    pb_buf a = {0};
    if (t->ndim == 2) {
        ox_attr_int(&a, "transA", t->node->iparams[0]);
        ox_attr_int(&a, "transB", t->node->iparams[1]);
        ox_node(w, "Gemm", in, 2, out, &a);
        return;
    }
    char names[2][NAME_MAX_LEN];
    const char *operands[2];
    static const int64_t swap_last[3] = {0, 2, 1};
    for (int i = 0; i < 2; i++) {
        operands[i] = in[i];
        if (!t->node->iparams[i]) continue;
        snprintf(names[i], sizeof names[i], "/t%d_T%d", index, i);
        pb_buf p = {0};
        ox_attr_ints(&p, "perm", swap_last, 3);
        ox_node(w, "Transpose", &in[i], 1, names[i], &p);
        operands[i] = names[i];
    }
    ox_node(w, "MatMul", operands, 2, out, NULL);
}

/* Softmax along `axis`: before opset 13 Softmax flattens the dims from
 * axis on, so a non-last axis goes through a transpose to the end. */
static void softmax(writer *w, const yolo_tensor *t, const char *x, const char *out, int index) {
    int axis = t->node->iparams[0], nd = t->ndim;
    pb_buf a = {0};
    if (w->opset >= 13 || axis == nd - 1) {
        ox_attr_int(&a, "axis", axis);
        ox_node(w, "Softmax", &x, 1, out, &a);
        return;
    }
    int64_t perm[YOLO_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < nd; i++)
        if (i != axis) perm[k++] = i;
    perm[k] = axis;
    int64_t inv[YOLO_MAX_DIMS];
    for (int i = 0; i < nd; i++) inv[perm[i]] = i;
    char t1[NAME_MAX_LEN], t2[NAME_MAX_LEN];
    snprintf(t1, sizeof t1, "/t%d_last", index);
    snprintf(t2, sizeof t2, "/t%d_softmax", index);
    ox_attr_ints(&a, "perm", perm, nd);
    ox_node(w, "Transpose", &x, 1, t1, &a);
    pb_buf b = {0};
    ox_attr_int(&b, "axis", nd - 1);
    const char *in1 = t1;
    ox_node(w, "Softmax", &in1, 1, t2, &b);
    pb_buf c = {0};
    ox_attr_ints(&c, "perm", inv, nd);
    const char *in2 = t2;
    ox_node(w, "Transpose", &in2, 1, out, &c);
}

static void reduce_sum(writer *w, const yolo_tensor *t, const char *x, const char *out, int index) {
    const yolo_tensor *src = t->node->src[0];
    int64_t axes[YOLO_MAX_DIMS];
    int n = 0, lead = src->ndim - t->ndim;
    for (int i = 0; i < src->ndim; i++) {
        int j = i - lead;
        if (j < 0 || (t->shape[j] == 1 && src->shape[i] != 1)) axes[n++] = i;
    }
    char tmp[NAME_MAX_LEN];
    snprintf(tmp, sizeof tmp, "/t%d_sum", index);
    const char *target = lead ? tmp : out;
    pb_buf a = {0};
    ox_attr_int(&a, "keepdims", 1);
    if (w->opset >= 13) {
        char ax[NAME_MAX_LEN];
        ox_const_i64(w, axes, n, ax, sizeof ax);
        const char *in[2] = {x, ax};
        ox_node(w, "ReduceSum", in, 2, target, &a);
    } else {
        ox_attr_ints(&a, "axes", axes, n);
        ox_node(w, "ReduceSum", &x, 1, target, &a);
    }
    if (lead) ox_reshape(w, tmp, t->ndim, t->shape, out);
}

/* The values of a constant: a persistent f32 tensor or a view of one
 * (malloc'd, numel(t) floats); NULL if t is computed. */
static bool is_constant(const yolo_tensor *t) {
    if (t->node->op == YOLO_OP_VIEW && t->node->n_src == 1) t = t->node->src[0];
    return t->kind == YOLO_TENSOR_PERSISTENT && t->dtype == YOLO_F32;
}

static float *constant_data(writer *w, const yolo_tensor *t) {
    const yolo_tensor *src = t->node->op == YOLO_OP_VIEW && t->node->n_src == 1 ? t->node->src[0] : t;
    int64_t n = yolo_tensor_numel(src), count = yolo_tensor_numel(t);
    int64_t start = src == t ? 0 : (int64_t)(t->node->view_offset / sizeof(float));
    float *data = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!data || start + count > n || yolo_tensor_download_f32(src, data, n)) {
        free(data);
        ox_fail(w, data ? YOLO_ERR_BACKEND : YOLO_ERR_NOMEM, "cannot read constant '%s'", src->name);
        return NULL;
    }
    if (start) memmove(data, data + start, sizeof(float) * (size_t)count);
    return data;
}

/* A view of a constant (anchors, strides reshaped by the head) is itself a
 * constant: folded here, since OpenCV's importer cannot reshape an
 * initializer. */
static bool fold_constant_view(writer *w, const yolo_tensor *t, int index) {
    if (t->node->op != YOLO_OP_VIEW || !is_constant(t) || ox_shape_varies(w, t)) return false;
    float *data = constant_data(w, t);
    if (data)
        ox_initializer(w, ox_result_name(w, t, index), ELEM_FLOAT, t->ndim, t->shape, data,
                    sizeof(float) * (size_t)yolo_tensor_numel(t));
    free(data);
    return true;
}

/* An elementwise op's constant operand broadcast to the output's shape
 * (for Mul, all but the batch dimension), as OpenCV 4.6's importer needs:
 * it turns Mul by a constant into a scale layer that broadcasts over the
 * batch alone, and Add/Sub by a constant broadcast nowhere. ONNX Runtime
 * would not need this. */
static void full_constant(writer *w, const yolo_tensor *c, const yolo_tensor *out, const char *name, bool keep_batch,
                          char *buf, size_t size) {
    snprintf(buf, size, "%s", name);
    if (w->dynamic || !is_constant(c) || c->ndim != out->ndim || c->ndim < 2) return;
    int64_t shape[YOLO_MAX_DIMS];
    bool same = true;
    for (int d = 0; d < out->ndim; d++) {
        shape[d] = d == 0 && keep_batch ? c->shape[0] : out->shape[d];
        same = same && shape[d] == c->shape[d];
    }
    if (same) return;
    float *data = constant_data(w, c);
    int64_t n = 1;
    for (int d = 0; d < out->ndim; d++) n *= shape[d];
    float *full = data ? malloc(sizeof(float) * (size_t)(n ? n : 1)) : NULL;
    if (data && !full) ox_fail(w, YOLO_ERR_NOMEM, "out of memory");
    if (full) {
        int64_t idx[YOLO_MAX_DIMS] = {0};
        for (int64_t i = 0; i < n; i++) {
            int64_t off = 0;
            for (int d = 0; d < out->ndim; d++) off = off * c->shape[d] + (c->shape[d] == 1 ? 0 : idx[d]);
            full[i] = data[off];
            for (int d = out->ndim - 1; d >= 0; d--) {
                if (++idx[d] < shape[d]) break;
                idx[d] = 0;
            }
        }
        ox_const_f32(w, full, out->ndim, shape, buf, size);
    }
    free(full);
    free(data);
}

/* global_avgpool's (sum over H, W) * 1/(H*W): x, when t is that scale. */
static const yolo_tensor *global_pool_input(const yolo_tensor *t) {
    if (t->node->op != YOLO_OP_SCALE || t->node->src[0]->node->op != YOLO_OP_SUM_TO) return NULL;
    const yolo_tensor *x = t->node->src[0]->node->src[0];
    if (x->ndim != 4 || t->ndim != 4 || t->shape[0] != x->shape[0] || t->shape[1] != x->shape[1] || t->shape[2] != 1 ||
        t->shape[3] != 1)
        return NULL;
    return fabs((double)t->node->fparams[0] * (double)(x->shape[2] * x->shape[3]) - 1.0) < 1e-6 ? x : NULL;
}

static void emit_node(writer *w, const yolo_tensor *t, int index) {
    if (fold_constant_view(w, t, index)) return;
    const yolo_tensor *pooled = global_pool_input(t);
    if (pooled) { /* as Ultralytics' AdaptiveAvgPool2d(1) exports (OpenCV 4.6 has no opset-13 ReduceSum) */
        const char *x = ox_input_name(w, pooled);
        char out[NAME_MAX_LEN];
        snprintf(out, sizeof out, "%s", ox_result_name(w, t, index));
        ox_node(w, "GlobalAveragePool", &x, 1, out, NULL);
        return;
    }
    const char *in[5] = {0};
    for (int i = 0; i < t->node->n_src && i < 5; i++) in[i] = ox_input_name(w, t->node->src[i]);
    if (w->st) return;
    char out_buf[NAME_MAX_LEN];
    snprintf(out_buf, sizeof out_buf, "%s", ox_result_name(w, t, index));
    const char *out = out_buf;
    char c[NAME_MAX_LEN], tmp[NAME_MAX_LEN], tmp2[NAME_MAX_LEN];
    pb_buf a = {0};
    switch (t->node->op) {
    case YOLO_OP_VIEW: {
        size_t es = yolo_dtype_size(t->dtype);
        bool whole = t->node->view_offset == 0 && yolo_tensor_numel(t) == yolo_tensor_numel(t->node->src[0]);
        if (ox_shape_varies(w, t) || ox_shape_varies(w, t->node->src[0])) {
            if (whole) ox_dynamic_reshape(w, t, in[0], out, index);
            else ox_fail(w, YOLO_ERR_UNSUPPORTED, "dynamic=True: '%s' (node %d) is a window of a size-dependent "
                         "tensor", t->name, index);
        } else if (whole) {
            ox_reshape(w, in[0], t->ndim, t->shape, out);
        } else { /* a window of the flat storage */
            int64_t flat = -1, start = (int64_t)(t->node->view_offset / es);
            snprintf(tmp, sizeof tmp, "/t%d_flat", index);
            snprintf(tmp2, sizeof tmp2, "/t%d_window", index);
            ox_reshape(w, in[0], 1, &flat, tmp);
            ox_slice(w, tmp, 0, start, start + yolo_tensor_numel(t), tmp2);
            ox_reshape(w, tmp2, t->ndim, t->shape, out);
        }
        return;
    }
    case YOLO_OP_CONV2D: conv(w, t, in, t->node->n_src, out, false); return;
    case YOLO_OP_CONV_TRANSPOSE2D: conv(w, t, in, t->node->n_src, out, true); return;
    case YOLO_OP_BN_APPLY: { /* x, mean, var, gamma, beta -> X, scale, B, mean, var */
        const char *bn[5] = {in[0], in[3], in[4], in[1], in[2]};
        ox_attr_float(&a, "epsilon", t->node->fparams[0]);
        ox_node(w, "BatchNormalization", bn, 5, out, &a);
        return;
    }
    case YOLO_OP_SILU: {
        snprintf(tmp, sizeof tmp, "/t%d_sigmoid", index);
        ox_node(w, "Sigmoid", in, 1, tmp, NULL);
        const char *mul[2] = {in[0], tmp};
        ox_node(w, "Mul", mul, 2, out, NULL);
        return;
    }
    case YOLO_OP_RELU: ox_node(w, "Relu", in, 1, out, NULL); return;
    case YOLO_OP_SIGMOID: ox_node(w, "Sigmoid", in, 1, out, NULL); return;
    case YOLO_OP_HARDSWISH:
        if (w->opset >= 14) { /* HardSwish came in opset 14; before it, PyTorch's exporter's form */
            ox_node(w, "HardSwish", in, 1, out, NULL);
        } else {
            ox_attr_float(&a, "alpha", 1.0f / 6.0f);
            ox_attr_float(&a, "beta", 0.5f);
            snprintf(tmp, sizeof tmp, "/t%d_hardsigmoid", index);
            ox_node(w, "HardSigmoid", in, 1, tmp, &a);
            const char *mul[2] = {in[0], tmp};
            ox_node(w, "Mul", mul, 2, out, NULL);
        }
        return;
    case YOLO_OP_ADD:
    case YOLO_OP_SUB:
    case YOLO_OP_MUL: {
        char a0[NAME_MAX_LEN], a1[NAME_MAX_LEN];
        bool mul = t->node->op == YOLO_OP_MUL;
        full_constant(w, t->node->src[0], t, in[0], mul, a0, sizeof a0);
        full_constant(w, t->node->src[1], t, in[1], mul, a1, sizeof a1);
        const char *ab[2] = {a0, a1};
        ox_node(w, t->node->op == YOLO_OP_ADD ? "Add" : t->node->op == YOLO_OP_SUB ? "Sub" : "Mul", ab, 2, out, NULL);
        return;
    }
    case YOLO_OP_CAST:
        if (t->dtype != YOLO_F32 || t->node->src[0]->dtype != YOLO_F32) {
            ox_fail(w, YOLO_ERR_UNSUPPORTED, "a %s -> %s cast has no ONNX form here", yolo_dtype_name(t->node->src[0]->dtype),
                 yolo_dtype_name(t->dtype));
            return;
        }
        __attribute__((fallthrough)); /* an f32 cast is a scale */
    case YOLO_OP_SCALE: {
        int64_t one = 1;
        ox_const_f32(w, &t->node->fparams[0], 1, &one, c, sizeof c);
        const char *mul[2] = {in[0], c};
        ox_node(w, "Mul", mul, 2, out, NULL);
        return;
    }
    case YOLO_OP_DETACH: /* only training graphs detach; a value is a value */
        ox_node(w, "Identity", (const char *const[]){in[0]}, 1, out, NULL);
        return;
    case YOLO_OP_FILL: {
        if (ox_shape_varies(w, t)) break;
        int64_t n = yolo_tensor_numel(t);
        float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
        if (!v) {
            ox_fail(w, YOLO_ERR_NOMEM, "out of memory");
            return;
        }
        for (int64_t i = 0; i < n; i++) v[i] = t->node->fparams[0];
        /* an initializer under the value's own name: OpenCV 4.6 takes no Identity of a constant (YOLOv9's
         * avg_pool2d weights feed a Conv) */
        ox_initializer(w, out, ELEM_FLOAT, t->ndim, t->shape, v, sizeof(float) * (size_t)n);
        free(v);
        return;
    }
    case YOLO_OP_CONCAT: {
        const char **names = malloc(sizeof *names * (size_t)t->node->n_src);
        if (!names) {
            ox_fail(w, YOLO_ERR_NOMEM, "out of memory");
            return;
        }
        for (int i = 0; i < t->node->n_src; i++) names[i] = ox_input_name(w, t->node->src[i]);
        ox_attr_int(&a, "axis", t->node->iparams[0]);
        ox_node(w, "Concat", names, t->node->n_src, out, &a);
        free(names);
        return;
    }
    case YOLO_OP_SLICE:
        if (ox_dim_varies(w, t, t->node->iparams[0])) break;
        ox_slice(w, in[0], t->node->iparams[0], t->node->iparams[1], t->node->iparams[1] + t->shape[t->node->iparams[0]], out);
        return;
    case YOLO_OP_BROADCAST_TO: {
        if (ox_shape_varies(w, t)) break;
        ox_const_i64(w, t->shape, t->ndim, c, sizeof c);
        const char *ex[2] = {in[0], c};
        ox_node(w, "Expand", ex, 2, out, NULL);
        return;
    }
    case YOLO_OP_SUM_TO:
        if (ox_shape_varies(w, t) && t->ndim != t->node->src[0]->ndim) break;
        reduce_sum(w, t, in[0], out, index); return;
    case YOLO_OP_UPSAMPLE_NEAREST: {
        int64_t zero = 0, four = 4;
        float scales[4] = {1, 1, (float)t->node->iparams[0], (float)t->node->iparams[0]};
        ox_const_f32(w, NULL, 1, &zero, tmp, sizeof tmp); /* roi: empty */
        ox_const_f32(w, scales, 1, &four, c, sizeof c);
        const char *rs[3] = {in[0], tmp, c};
        ox_attr_string(&a, "coordinate_transformation_mode", "asymmetric");
        ox_attr_string(&a, "mode", "nearest");
        ox_attr_string(&a, "nearest_mode", "floor");
        ox_node(w, "Resize", rs, 3, out, &a);
        return;
    }
    case YOLO_OP_MAXPOOL2D: {
        int64_t k[2] = {t->node->iparams[0], t->node->iparams[0]}, s[2] = {t->node->iparams[1], t->node->iparams[1]};
        int64_t p[4] = {t->node->iparams[2], t->node->iparams[2], t->node->iparams[2], t->node->iparams[2]};
        ox_attr_ints(&a, "kernel_shape", k, 2);
        ox_attr_ints(&a, "pads", p, 4);
        ox_attr_ints(&a, "strides", s, 2);
        ox_node(w, "MaxPool", in, 1, out, &a);
        return;
    }
    case YOLO_OP_MATMUL: matmul(w, t, in, out, index); return;
    case YOLO_OP_SOFTMAX: softmax(w, t, in[0], out, index); return;
    default: break;
    }
    ox_fail(w, YOLO_ERR_UNSUPPORTED, "op %s (node %d, '%s') has no ONNX form here%s", yolo_op_name(t->node->op), index,
            t->name, w->dynamic ? " with dynamic=True (its shape follows the input's)" : "");
}

/* ---- the model ---- */

/* A graph input or output; with dynamic=True the dims that follow the
 * input's size are named as Ultralytics names them. */
static void value_info(writer *w, int field, const char *name, const yolo_tensor *t) {
    pb_buf shape = {0}, tensor = {0}, type = {0}, vi = {0};
    bool image = !strcmp(name, "images");
    for (int i = 0; i < t->ndim; i++) {
        pb_buf dim = {0};
        const char *param = i == 0 ? "batch" : t->ndim == 3 ? "anchors" : image ? (i == 2 ? "height" : "width")
                                                                                  : (i == 2 ? "mask_height" : "mask_width");
        if (ox_dim_varies(w, t, i)) pb_string_field(&dim, DIM_PARAM, param);
        else pb_varint_field(&dim, DIM_VALUE, (uint64_t)t->shape[i]);
        pb_message_field(&shape, SHAPE_DIM, &dim);
    }
    pb_varint_field(&tensor, TENSOR_TYPE_ELEM, ELEM_FLOAT);
    pb_message_field(&tensor, TENSOR_TYPE_SHAPE, &shape);
    pb_message_field(&type, TYPE_TENSOR, &tensor);
    pb_string_field(&vi, VALUE_NAME, name);
    pb_message_field(&vi, VALUE_TYPE, &type);
    pb_message_field(&w->graph, field, &vi);
}

/* output0 of an end2end export: [batch, k, 6 + extra]. */
static void end2end_value_info(writer *w, int64_t k, int64_t extra) {
    pb_buf shape = {0}, tensor = {0}, type = {0}, vi = {0};
    for (int i = 0; i < 3; i++) {
        pb_buf dim = {0};
        if (i == 0 && ox_dim_varies(w, w->images, 0)) pb_string_field(&dim, DIM_PARAM, "batch");
        else pb_varint_field(&dim, DIM_VALUE, (uint64_t)(i == 0 ? w->images->shape[0] : i == 1 ? k : 6 + extra));
        pb_message_field(&shape, SHAPE_DIM, &dim);
    }
    pb_varint_field(&tensor, TENSOR_TYPE_ELEM, ELEM_FLOAT);
    pb_message_field(&tensor, TENSOR_TYPE_SHAPE, &shape);
    pb_message_field(&type, TYPE_TENSOR, &tensor);
    pb_string_field(&vi, VALUE_NAME, "output0");
    pb_message_field(&vi, VALUE_TYPE, &type);
    pb_message_field(&w->graph, GRAPH_OUTPUT, &vi);
}

/* Marks every node the outputs depend on. */
static void mark_needed(const yolo_graph *g, const yolo_tensor *t, bool *needed) {
    if (!t || t->graph != g || needed[t->node->index]) return;
    needed[t->node->index] = true;
    const yolo_tensor *pooled = global_pool_input(t);
    if (pooled) mark_needed(g, pooled, needed);
    for (int i = 0; !pooled && i < t->node->n_src; i++) mark_needed(g, t->node->src[i], needed);
}

/* The head's outputs to export (see onnx_export.h). */
static int pick_outputs(const yolo_model *m, const yolo_model_outputs *out, int height, const yolo_tensor **picked) {
    int n = 0;
    picked[n++] = out->t[0];
    const yolo_tensor *last = out->n > 1 ? out->t[out->n - 1] : NULL;
    int strides[YOLO_MODULE_MAX_INPUTS];
    int ns = yolo_model_strides(m, strides, YOLO_MODULE_MAX_INPUTS);
    int finest = ns > 0 ? strides[0] : 0;
    for (int i = 1; i < ns; i++)
        if (strides[i] < finest) finest = strides[i];
    if (last && last->ndim == 4 && last->shape[2] > 0 && finest > 0 && height / last->shape[2] < finest)
        picked[n++] = last;
    return n;
}

static yolo_status write_file(const char *path, const pb_buf *b) {
    FILE *f = fopen(path, "wb");
    if (!f) return yolo_error(YOLO_ERR_IO, "ONNX export: cannot create %s: %s", path, strerror(errno));
    bool ok = fwrite(b->data, 1, b->len, f) == b->len;
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        remove(path);
        return yolo_error(YOLO_ERR_IO, "ONNX export: writing %s failed", path);
    }
    return YOLO_OK;
}

/* dynamic=True: the forward at batch+1, height+64, width+96 (one at a
 * time, multiples of the largest stride), node for node the same ops. */
static void trace_other_sizes(writer *w, yolo_model *model, const int64_t *shape, yolo_graph **alt) {
    static const int64_t step[3][4] = {{1, 0, 0, 0}, {0, 0, 64, 0}, {0, 0, 0, 96}};
    for (int k = 0; k < 3 && !w->st; k++) {
        int64_t s[4];
        for (int d = 0; d < 4; d++) s[d] = shape[d] + step[k][d];
        alt[k] = yolo_graph_new(yolo_model_backend(model));
        yolo_tensor *x = alt[k] ? yolo_graph_input(alt[k], "images", YOLO_F32, 4, s) : NULL;
        yolo_model_outputs o;
        if (!x || yolo_model_forward(model, alt[k], x, false, &o)) {
            ox_fail(w, YOLO_ERR_UNSUPPORTED, "dynamic=True: the model does not trace at %lldx%lldx%lld: %s",
                    (long long)s[0], (long long)s[2], (long long)s[3], yolo_last_error());
            return;
        }
        bool same = alt[k]->n_nodes == w->base->n_nodes;
        for (int i = 0; same && i < w->base->n_nodes; i++)
            same = alt[k]->nodes[i]->node->op == w->base->nodes[i]->node->op &&
                   alt[k]->nodes[i]->ndim == w->base->nodes[i]->ndim;
        if (!same) {
            ox_fail(w, YOLO_ERR_UNSUPPORTED, "dynamic=True: the graph traced at %lldx%lldx%lld has other ops than "
                    "at the export size", (long long)s[0], (long long)s[2], (long long)s[3]);
            return;
        }
        w->alt[k] = alt[k];
        w->n_alt = k + 1;
    }
}

yolo_status yolo_onnx_export(yolo_model *model, const yolo_onnx_options *opt, const char *path, int *n_outputs) {
    if (n_outputs) *n_outputs = 0;
    if (opt->opset < YOLO_ONNX_OPSET_MIN || opt->opset > YOLO_ONNX_OPSET_MAX)
        return yolo_error(YOLO_ERR_CONFIG, "opset=%d: ONNX export writes opsets %d to %d", opt->opset,
                          YOLO_ONNX_OPSET_MIN, YOLO_ONNX_OPSET_MAX);
    yolo_graph *g = yolo_graph_new(yolo_model_backend(model));
    int64_t shape[4] = {opt->batch, yolo_model_in_channels(model), opt->height, opt->width};
    yolo_tensor *images = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    yolo_model_outputs out;
    yolo_status st = yolo_model_forward(model, g, images, false, &out);
    if (st) {
        yolo_graph_free(g);
        return yolo_error_context(st, "ONNX export: tracing the model at %lldx%lldx%lld", (long long)shape[0],
                                  (long long)shape[2], (long long)shape[3]);
    }
    writer w = {.opset = opt->opset, .dynamic = opt->dynamic, .base = g, .images = images};
    yolo_graph *alt[3] = {0};
    if (opt->dynamic) trace_other_sizes(&w, model, shape, alt);
    w.n_outputs = pick_outputs(model, &out, opt->height, w.outputs);
    const yolo_tensor *decoded = NULL; /* end2end: the postprocess's input, not an output itself */
    const int nc = yolo_model_nc(model);
    if (opt->end2end_k > 0) {
        if (out.t[0]->ndim != 3 || nc < 1 || out.t[0]->shape[1] < 4 + nc)
            ox_fail(&w, YOLO_ERR_UNSUPPORTED, "end2end export: the head's output is not Detect's [B, 4 + nc, A] "
                    "(nc %d, and per-anchor extras)", nc);
        decoded = out.t[0];
    }
    bool *needed = calloc((size_t)g->n_nodes + 1, sizeof *needed);
    if (!needed) ox_fail(&w, YOLO_ERR_NOMEM, "out of memory");
    for (int i = 0; needed && i < w.n_outputs; i++) mark_needed(g, w.outputs[i], needed);
    /* output0 is the postprocess's; output1 (Segment26's prototypes) stays */
    const yolo_tensor *proto = decoded && w.n_outputs > 1 ? w.outputs[1] : NULL;
    if (decoded) w.n_outputs = 0;
    ox_add_name(&w, images, "images");
    pb_string_field(&w.graph, GRAPH_NAME, "main_graph");
    for (int i = 0; !w.st && i < g->n_nodes; i++) {
        const yolo_tensor *t = g->nodes[i];
        if (needed[i] && t != images) emit_node(&w, t, i);
    }
    value_info(&w, GRAPH_INPUT, "images", images);
    if (decoded && !w.st) {
        const char *pred = ox_find_name(&w, decoded);
        if (!pred) ox_fail(&w, YOLO_ERR_UNSUPPORTED, "end2end export: the decoded output was not emitted");
        /* Ultralytics exports k = max_det, which fails at run time where the
         * input has fewer anchors; a fixed size that has fewer gets them all */
        int64_t k = opt->end2end_k;
        if (!opt->dynamic && k > decoded->shape[2]) k = decoded->shape[2];
        const int extra = (int)decoded->shape[1] - 4 - nc;
        if (pred) ox_end2end_postprocess(&w, pred, nc, extra, k, "output0");
        end2end_value_info(&w, k, extra);
        w.n_outputs = 1;
        if (proto && !w.st) {
            const char *pname = ox_find_name(&w, proto);
            if (!pname) ox_fail(&w, YOLO_ERR_UNSUPPORTED, "end2end export: the prototypes were not emitted");
            else {
                const char *in[1] = {pname};
                ox_node(&w, "Identity", in, 1, "output1", NULL);
                value_info(&w, GRAPH_OUTPUT, "output1", proto);
                w.n_outputs = 2;
            }
        }
    }
    for (int i = 0; !decoded && i < w.n_outputs; i++) {
        char name[32];
        snprintf(name, sizeof name, "output%d", i);
        value_info(&w, GRAPH_OUTPUT, name, w.outputs[i]);
    }
    pb_buf m = {0};
    pb_varint_field(&m, MODEL_IR_VERSION, opt->opset <= 14 ? 7 : 8);
    pb_string_field(&m, MODEL_PRODUCER_NAME, "yolo");
    pb_string_field(&m, MODEL_PRODUCER_VERSION, opt->producer_version ? opt->producer_version : "");
    pb_message_field(&m, MODEL_GRAPH, &w.graph);
    pb_buf os = {0};
    pb_varint_field(&os, OPSET_VERSION, (uint64_t)opt->opset);
    pb_message_field(&m, MODEL_OPSET_IMPORT, &os);
    for (int i = 0; i < opt->n_metadata; i++) {
        pb_buf kv = {0};
        pb_string_field(&kv, KV_KEY, opt->metadata[i].key);
        pb_string_field(&kv, KV_VALUE, opt->metadata[i].value);
        pb_message_field(&m, MODEL_METADATA_PROPS, &kv);
    }
    st = w.st;
    if (!st && m.oom) st = yolo_error(YOLO_ERR_NOMEM, "ONNX export: out of memory");
    if (!st) st = write_file(path, &m);
    if (!st && n_outputs) *n_outputs = w.n_outputs;
    pb_free(&m);
    pb_free(&w.graph);
    ox_free_names(&w);
    free(needed);
    for (int k = 0; k < 3; k++) yolo_graph_free(alt[k]);
    yolo_graph_free(g);
    return st;
}
