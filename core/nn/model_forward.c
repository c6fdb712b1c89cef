/* The model's forward into a graph, and the model accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/model_internal.h"

yolo_status model_forward_all(yolo_model *m, yolo_graph *g, yolo_tensor *images, bool training, bool inference,
                              yolo_model_outputs *out, yolo_tensor **layer_out) {
    char s[96];
    if (!m || !g || !images || !out) return yolo_error(YOLO_ERR_ARG, "yolo_model_forward: NULL argument");
    memset(out, 0, sizeof(*out));
    if (images->ndim != 4 || images->shape[1] != m->ch)
        return yolo_error(YOLO_ERR_SHAPE, "%s: images %s must be [N, %d, H, W]", m->name,
                          yolo_tensor_shape_str(images, s, sizeof(s)), m->ch);
    if (yolo_graph_status(g)) return yolo_error(yolo_graph_status(g), "%s: the graph already failed: %s", m->name,
                                                yolo_graph_error(g));
    yolo_tensor **outs = layer_out ? layer_out : calloc((size_t)m->n_layers, sizeof(*outs));
    if (!outs) return yolo_error(YOLO_ERR_NOMEM, "%s: forward: out of memory", m->name);
    yolo_forward_ctx f = {.graph = g, .training = training, .model = m, .inference = inference && !training};
    yolo_status st = YOLO_OK;
    for (int i = 0; i < m->n_layers && !st; i++) {
        model_layer *L = &m->layers[i];
        yolo_tensor *in[YOLO_MODULE_MAX_INPUTS];
        int n_in = L->n_from;
        for (int j = 0; j < n_in; j++) in[j] = L->from[j] < 0 ? images : outs[L->from[j]];
        yolo_module_outputs mo;
        for (int c = 0; c < L->n_copies && !st; c++) {
            memset(&mo, 0, sizeof(mo));
            st = L->type->forward(&f, L->states[c], n_in, in, &mo);
            if (!st && (mo.n < 1 || !mo.t[0])) st = yolo_graph_status(g) ? yolo_graph_status(g) : YOLO_ERR_SHAPE;
            if (st) {
                const char *why = yolo_graph_status(g) ? yolo_graph_error(g) : yolo_last_error();
                char msg[1024];
                snprintf(msg, sizeof(msg), "%s", why && *why ? why : "no output");
                yolo_error(st, "%s:%d: layer %d %s forward: %s", m->spec.name, L->row ? L->row->line : 0, i,
                           L->type->name, msg);
                break;
            }
            in[0] = mo.t[0];
            n_in = 1;
        }
        if (st) break;
        outs[i] = mo.t[0];
        if (i == m->n_layers - 1) *out = mo;
    }
    if (!st && yolo_graph_status(g)) {
        st = yolo_graph_status(g);
        yolo_error(st, "%s: forward: %s", m->name, yolo_graph_error(g));
    }
    if (!layer_out) free(outs);
    if (st) memset(out, 0, sizeof(*out));
    return st;
}

yolo_status yolo_model_forward(yolo_model *model, yolo_graph *g, yolo_tensor *images, bool training,
                               yolo_model_outputs *out) {
    return model_forward_all(model, g, images, training, false, out, NULL);
}

yolo_status yolo_model_forward_inference(yolo_model *model, yolo_graph *g, yolo_tensor *images,
                                         yolo_model_outputs *out) {
    return model_forward_all(model, g, images, false, true, out, NULL);
}

/* ---- accessors ---- */

int yolo_model_tensor_count(const yolo_model *m) { return m ? m->n_tensors : 0; }

const yolo_model_tensor *yolo_model_tensor_at(const yolo_model *m, int i) {
    return m && i >= 0 && i < m->n_tensors ? &m->tensors[i] : NULL;
}

yolo_tensor *yolo_model_find_tensor(const yolo_model *m, const char *name) {
    for (int i = 0; m && name && i < m->n_tensors; i++)
        if (!strcmp(m->tensors[i].tensor->name, name)) return m->tensors[i].tensor;
    return NULL;
}

const char *yolo_model_name(const yolo_model *m) { return m->name; }
const char *yolo_model_scale(const yolo_model *m) { return m->scale; }
int yolo_model_nc(const yolo_model *m) { return m->nc; }
int yolo_model_reg_max(const yolo_model *m) { return m ? m->spec.reg_max : 16; }
bool yolo_model_has_end2end_head(const yolo_model *m) { return m && m->spec.end2end; }
bool yolo_model_end2end(const yolo_model *m) { return m && m->spec.end2end && !m->end2end_off; }
void yolo_model_set_end2end(yolo_model *m, bool on) {
    if (m) m->end2end_off = !on;
}
int yolo_model_in_channels(const yolo_model *m) { return m->ch; }
yolo_backend *yolo_model_backend(const yolo_model *m) { return m->backend; }
int yolo_model_layer_count(const yolo_model *m) { return m->n_layers; }
bool yolo_model_is_fused(const yolo_model *m) { return m->fused; }

const yolo_module_type *yolo_model_layer_type(const yolo_model *m, int layer) {
    if (layer < 0) layer += m->n_layers;
    return layer >= 0 && layer < m->n_layers ? m->layers[layer].type : NULL;
}

void *yolo_model_layer_state(const yolo_model *m, int layer) {
    if (layer < 0) layer += m->n_layers;
    return layer >= 0 && layer < m->n_layers ? m->layers[layer].states[0] : NULL;
}

int yolo_model_strides(const yolo_model *m, int *strides, int max) {
    for (int i = 0; i < m->n_strides && i < max; i++) strides[i] = m->strides[i];
    return m->n_strides;
}
