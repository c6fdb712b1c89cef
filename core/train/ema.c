/* Device-side EMA of the model's tensors (see ema.h). */
#include "train/ema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double yolo_ema_decay(int64_t updates) { return 0.9999 * (1.0 - exp(-(double)updates / 2000.0)); }

yolo_status yolo_model_copy_tensors(const yolo_model *from, yolo_model *to) {
    int n = yolo_model_tensor_count(from);
    if (n != yolo_model_tensor_count(to))
        return yolo_error(YOLO_ERR_ARG, "copy model: %d tensors vs %d", n, yolo_model_tensor_count(to));
    for (int i = 0; i < n; i++) {
        const yolo_tensor *src = yolo_model_tensor_at(from, i)->tensor;
        yolo_tensor *dst = yolo_model_tensor_at(to, i)->tensor;
        if (!yolo_tensor_same_shape(src, dst) || src->dtype != dst->dtype)
            return yolo_error(YOLO_ERR_SHAPE, "copy model: tensor %d '%s' does not match '%s'", i, src->name, dst->name);
        size_t bytes = yolo_tensor_bytes(src);
        void *tmp = malloc(bytes ? bytes : 1);
        if (!tmp) return yolo_error(YOLO_ERR_NOMEM, "copy model: out of memory");
        yolo_status st = yolo_tensor_download(src, tmp, bytes);
        if (!st) st = yolo_tensor_upload(dst, tmp, bytes);
        free(tmp);
        if (st) return st;
    }
    return YOLO_OK;
}

/* A frozen parameter (freeze, DFL) or a frozen batch norm's running
 * statistics never change, so the EMA keeps them bit-identical rather than
 * re-rounding d * x + (1 - d) * x every step. */
static bool is_frozen(const yolo_model *model, int i) {
    const yolo_model_tensor *mt = yolo_model_tensor_at(model, i);
    if (mt->role != YOLO_PARAM_BUFFER) return !mt->tensor->requires_grad;
    const char *name = mt->tensor->name, *dot = strrchr(name, '.');
    if (!dot || (strcmp(dot, ".running_mean") != 0 && strcmp(dot, ".running_var") != 0)) return false;
    char weight[YOLO_NAME_MAX + 8];
    snprintf(weight, sizeof weight, "%.*s.weight", (int)(dot - name), name);
    const yolo_tensor *w = yolo_model_find_tensor(model, weight);
    return w && !w->requires_grad;
}

/* The update graph of every tensor that changes, gated by step_scale (may be NULL). */
static yolo_status build_graph(yolo_ema *ema, yolo_tensor *step_scale) {
    yolo_graph_free(ema->graph);
    ema->graph = yolo_graph_new(yolo_model_backend(ema->source));
    ema->gate = step_scale;
    if (!ema->graph) return yolo_error(YOLO_ERR_NOMEM, "ema: out of memory");
    for (int i = 0; i < yolo_model_tensor_count(ema->source); i++) {
        yolo_tensor *p = yolo_model_tensor_at(ema->source, i)->tensor;
        yolo_tensor *e = yolo_model_tensor_at(ema->ema, i)->tensor;
        if (p->dtype == YOLO_F32 && !is_frozen(ema->source, i) &&
            !yolo_ema_update_gated(ema->graph, e, p, ema->hyper, step_scale))
            return yolo_graph_status(ema->graph);
    }
    return yolo_graph_plan(ema->graph, NULL);
}

yolo_status yolo_ema_create(yolo_model *source, yolo_model *ema_model, yolo_ema **out) {
    *out = NULL;
    yolo_ema *ema = calloc(1, sizeof *ema);
    if (!ema) {
        yolo_model_free(ema_model);
        return yolo_error(YOLO_ERR_NOMEM, "ema: out of memory");
    }
    ema->ema = ema_model;
    ema->source = source;
    yolo_status st = yolo_model_copy_tensors(source, ema_model);
    int64_t one = 1;
    if (!st) {
        ema->hyper = yolo_tensor_new(yolo_model_backend(source), "ema.decay", YOLO_F32, 1, &one, false);
        if (!ema->hyper) st = yolo_error(YOLO_ERR_NOMEM, "ema: out of memory");
    }
    if (!st) st = build_graph(ema, NULL);
    if (st) {
        yolo_ema_free(ema);
        return st;
    }
    *out = ema;
    return YOLO_OK;
}

void yolo_ema_free(yolo_ema *ema) {
    if (!ema) return;
    yolo_graph_free(ema->graph);
    yolo_tensor_free(ema->hyper);
    yolo_model_free(ema->ema);
    free(ema);
}

yolo_status yolo_ema_gate(yolo_ema *ema, yolo_tensor *step_scale) {
    yolo_status st = build_graph(ema, step_scale);
    return st ? yolo_error_context(st, "ema: gating the updates on '%s'", step_scale->name) : YOLO_OK;
}

yolo_status yolo_ema_prepare(yolo_ema *ema) {
    float d = (float)yolo_ema_decay(ema->updates + 1);
    return yolo_tensor_upload(ema->hyper, &d, sizeof d);
}

yolo_status yolo_ema_run(yolo_ema *ema) { return yolo_graph_run(ema->graph); }

yolo_status yolo_ema_step(yolo_ema *ema) {
    yolo_status st = yolo_ema_prepare(ema);
    if (!st) st = yolo_ema_run(ema);
    if (!st) ema->updates++;
    return st;
}
