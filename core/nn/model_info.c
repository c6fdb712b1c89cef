/* Parameter, layer and FLOP counts and the summaries that Ultralytics'
 * model.info() prints.
 *
 * GFLOPs follow ultralytics.utils.torch_utils.get_flops as published for
 * YOLOv8 (8.9 for v8n, 8.7 fused, 12.6 for v8n-seg fused, 4.3 for v8n-cls
 * fused): thop counts MACs of the eval-mode forward of a stride-sized image
 * (max(stride, 32) squared) -- conv: output elements * Cin/g * kh * kw,
 * conv-transpose counted the same way over its output (thop's rule before
 * ultralytics-thop 2.x, 4x the true MACs of a 2x2 stride-2 one), linear:
 * in * out (batched matmuls, functional in PyTorch, count 0), batch norm: 4 per
 * element, nearest upsampling: 1 per output element, adaptive average
 * pool: input + output elements; activations,
 * max-pools and functional ops count 0 -- then multiplies by 2 and scales
 * by (imgsz / stride)^2. That scaling also multiplies the Linear of a
 * classifier, as Ultralytics does. Counted by walking the nodes of a real
 * forward graph (nothing is run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "nn/model_internal.h"

int64_t model_layer_param_count(const yolo_model *m, int layer) {
    int64_t n = 0;
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].layer == layer && m->tensors[i].role != YOLO_PARAM_BUFFER)
            n += yolo_tensor_numel(m->tensors[i].tensor);
    return n;
}

/* used: whether a tensor is read by the forward that counts (NULL: all are). */
static bool is_used(const yolo_tensor *t, const yolo_tensor *const *used, int n_used) {
    if (!used) return true;
    for (int i = 0; i < n_used; i++)
        if (used[i] == t) return true;
    return false;
}

static int leaf_count(const yolo_model *m, const yolo_tensor *const *used, int n_used) {
    int n = 0;
    bool shared_act = false;
    for (int i = 0; i < m->n_convs; i++) {
        const model_conv_entry *c = &m->convs[i];
        if (!is_used(c->block->weight, used, n_used)) continue;
        n += c->block->bn_weight ? 2 : 1; /* conv (+ bn until fused) */
        if (c->own_act_leaf)
            n++;
        else
            shared_act = true; /* one default activation module shared by all Convs */
    }
    for (int i = 0; i < m->n_layers; i++) n += m->layers[i].leaves;
    /* a plain nn.Conv2d / nn.Linear (its weight: 2-D or 4-D, no Conv block's) that the forward does not run */
    for (int i = 0; used && i < m->n_tensors; i++) {
        const yolo_tensor *t = m->tensors[i].tensor;
        bool block = false;
        for (int k = 0; k < m->n_convs && !block; k++) block = m->convs[k].block->weight == t;
        if (m->tensors[i].role != YOLO_PARAM_BUFFER && (t->ndim == 2 || t->ndim == 4) && !block &&
            !is_used(t, used, n_used))
            n--;
    }
    return n + (shared_act ? 1 : 0);
}

/* thop's multiply-accumulate count of one graph (see the file comment). */
static double graph_macs(const yolo_graph *g) {
    double macs = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const yolo_tensor *t = g->nodes[i];
        double out = (double)yolo_tensor_numel(t);
        switch (t->node->op) {
        case YOLO_OP_CONV2D: {
            const yolo_tensor *w = t->node->src[1];
            if (w->node && w->node->op == YOLO_OP_FILL) break; /* a functional avg_pool2d (YOLOv9's AConv, ADown) */
            macs += out * (double)(w->shape[1] * w->shape[2] * w->shape[3]);
            break;
        }
        case YOLO_OP_CONV_TRANSPOSE2D: {
            const yolo_tensor *x = t->node->src[0], *w = t->node->src[1];
            int groups = t->node->iparams[6] > 0 ? t->node->iparams[6] : 1;
            macs += out * (double)(x->shape[1] / groups) * (double)(w->shape[2] * w->shape[3]);
            break;
        }
        case YOLO_OP_BN_APPLY: macs += 4.0 * out; break;
        case YOLO_OP_UPSAMPLE_NEAREST: macs += out; break;
        case YOLO_OP_MATMUL: { /* nn.Linear's; thop does not see attention's batched torch.matmul */
            const yolo_tensor *a = t->node->src[0];
            if (t->ndim != 2) break;
            macs += out * (double)(t->node->iparams[0] ? a->shape[0] : a->shape[1]);
            break;
        }
        case YOLO_OP_SUM_TO: {
            const yolo_tensor *x = t->node->src[0];
            if (x->ndim == 4 && t->ndim == 4 && t->shape[2] == 1 && t->shape[3] == 1)
                macs += (double)yolo_tensor_numel(x) + out; /* adaptive average pool */
            break;
        }
        default: break;
        }
    }
    return macs;
}

/* A fused model that runs end2end is counted as Ultralytics' fuse leaves
 * it, without the one-to-many head (and Proto26's semantic branch): the
 * inference forward, which computes only what it decodes. We keep those
 * weights (end2end=False still works), so this is a count, not a removal. */
static bool inference_counted(const yolo_model *m) { return m->fused && yolo_model_end2end(m); }

static yolo_status forward_macs(yolo_model *m, int h, int w, double *macs) {
    yolo_graph *g = yolo_graph_new(m->backend);
    if (!g) return yolo_error_context(YOLO_ERR_NOMEM, "%s: FLOPs", m->name);
    int64_t shape[4] = {1, m->ch, h, w};
    yolo_tensor *x = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    yolo_model_outputs out;
    yolo_status st = !x                      ? yolo_graph_status(g)
                     : inference_counted(m) ? yolo_model_forward_inference(m, g, x, &out)
                                            : yolo_model_forward(m, g, x, false, &out);
    if (!st) *macs = graph_macs(g);
    yolo_graph_free(g);
    return st;
}

/* The model tensors the inference forward reads (malloc'd into *used). */
static yolo_status inference_tensors(yolo_model *m, const yolo_tensor ***used, int *n_used) {
    *used = NULL, *n_used = 0;
    yolo_graph *g = yolo_graph_new(m->backend);
    int side = 32;
    for (int i = 0; i < m->n_strides; i++) side = m->strides[i] > side ? m->strides[i] : side;
    int64_t shape[4] = {1, m->ch, side, side};
    yolo_tensor *x = g ? yolo_graph_input(g, "images", YOLO_F32, 4, shape) : NULL;
    yolo_model_outputs out;
    yolo_status st = x ? yolo_model_forward_inference(m, g, x, &out) : YOLO_ERR_NOMEM;
    const yolo_tensor **list = st ? NULL : malloc(sizeof *list * (size_t)(m->n_tensors ? m->n_tensors : 1));
    if (!st && !list) st = YOLO_ERR_NOMEM;
    for (int i = 0; !st && i < m->n_tensors; i++) {
        const yolo_tensor *t = m->tensors[i].tensor;
        bool read = false;
        for (int k = 0; k < g->n_nodes && !read; k++)
            for (int j = 0; j < g->nodes[k]->node->n_src && !read; j++) read = g->nodes[k]->node->src[j] == t;
        if (read) list[(*n_used)++] = t;
    }
    yolo_graph_free(g);
    if (st) {
        free(list);
        *n_used = 0;
        return yolo_error_context(st, "%s: counting the fused model's parameters", m->name);
    }
    *used = list;
    return YOLO_OK;
}

yolo_status yolo_model_get_info(yolo_model *m, int imgsz, yolo_model_info *info) {
    memset(info, 0, sizeof(*info));
    const yolo_tensor **used = NULL;
    int n_used = 0;
    yolo_status st = inference_counted(m) ? inference_tensors(m, &used, &n_used) : YOLO_OK;
    if (st) return st;
    info->layers = leaf_count(m, used, n_used);
    for (int i = 0; i < m->n_tensors; i++) {
        const yolo_model_tensor *t = &m->tensors[i];
        if (t->role == YOLO_PARAM_BUFFER || !is_used(t->tensor, used, n_used)) continue;
        info->parameters += yolo_tensor_numel(t->tensor);
        if (t->tensor->requires_grad) info->gradients += yolo_tensor_numel(t->tensor);
    }
    free(used);
    if (imgsz <= 0) return YOLO_OK;
    int stride = 32;
    for (int i = 0; i < m->n_strides; i++)
        if (m->strides[i] > stride) stride = m->strides[i];
    double macs = 0;
    st = forward_macs(m, stride, stride, &macs);
    if (!st) {
        info->gflops = macs * 2 / 1e9 * ((double)imgsz / stride) * ((double)imgsz / stride);
        return YOLO_OK;
    }
    /* as get_flops: fall back to the full image size */
    if ((st = forward_macs(m, imgsz, imgsz, &macs))) return yolo_error_context(st, "%s: counting FLOPs", m->name);
    info->gflops = macs * 2 / 1e9;
    return YOLO_OK;
}

static const char *thousands(int64_t v, char *buf, size_t size) {
    char digits[32];
    snprintf(digits, sizeof(digits), "%lld", (long long)(v < 0 ? -v : v));
    size_t n = strlen(digits), j = 0;
    if (v < 0 && j + 1 < size) buf[j++] = '-';
    for (size_t i = 0; i < n && j + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0) buf[j++] = ',';
        buf[j++] = digits[i];
    }
    buf[j] = '\0';
    return buf;
}

/* "yolov8n.yaml" -> "YOLOv8n" (Ultralytics: Path(yaml_file).stem.replace("yolo", "YOLO")). */
static void display_name(const char *name, char *out, size_t size) {
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    char stem[MODEL_NAME_MAX];
    snprintf(stem, sizeof(stem), "%s", base);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = '\0';
    size_t j = 0;
    for (const char *p = stem; *p && j + 1 < size;) {
        if (!strncmp(p, "yolo", 4) && j + 4 < size) {
            memcpy(out + j, "YOLO", 4);
            j += 4;
            p += 4;
        } else {
            out[j++] = *p++;
        }
    }
    out[j] = '\0';
    if (!out[0]) snprintf(out, size, "Model");
}

yolo_status yolo_model_print_summary(yolo_model *m, int imgsz, FILE *f) {
    yolo_model_info info;
    yolo_status st = yolo_model_get_info(m, imgsz, &info);
    if (st) return st;
    char name[MODEL_NAME_MAX], p[32], g[32], flops[48] = "";
    display_name(m->name, name, sizeof(name));
    if (imgsz > 0) snprintf(flops, sizeof(flops), ", %.1f GFLOPs", info.gflops);
    fprintf(f, "%s summary%s: %d layers, %s parameters, %s gradients%s\n", name, m->fused ? " (fused)" : "",
            info.layers, thousands(info.parameters, p, sizeof(p)), thousands(info.gradients, g, sizeof(g)), flops);
    return YOLO_OK;
}

void yolo_model_print_layers(const yolo_model *m, FILE *f) {
    fprintf(f, "%3s%20s%3s%10s  %-24s%s\n", "", "from", "n", "params", "module", "arguments");
    for (int i = 0; i < m->n_layers; i++) {
        const model_layer *L = &m->layers[i];
        char from[64];
        if (L->row && L->row->from_list) {
            size_t len = (size_t)snprintf(from, sizeof(from), "[");
            for (int j = 0; j < L->n_from && len < sizeof(from); j++)
                len += (size_t)snprintf(from + len, sizeof(from) - len, "%s%d", j ? ", " : "", L->row->from[j]);
            if (len < sizeof(from)) snprintf(from + len, sizeof(from) - len, "]");
        } else {
            snprintf(from, sizeof(from), "%d", L->row ? L->row->from[0] : -1);
        }
        fprintf(f, "%3d%20s%3d%10lld  %-24s%s\n", i, from, L->repeats, (long long)model_layer_param_count(m, i),
                L->type->name, L->args_text);
    }
}
