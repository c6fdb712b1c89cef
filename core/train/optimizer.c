/* Parameter groups and the device-side update graph (see optimizer.h). */
#include "train/optimizer.h"

#include "train/muon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* MuSGD's factors of the group lr for its two steps (Ultralytics 8.4.8+). */
#define MUSGD_MUON 0.2f
#define MUSGD_SGD 1.0f

static const char *const optimizer_names[] = {[YOLO_OPTIMIZER_SGD] = "SGD", [YOLO_OPTIMIZER_ADAMW] = "AdamW",
                                              [YOLO_OPTIMIZER_MUSGD] = "MuSGD"};

const char *yolo_optimizer_name(yolo_optimizer_kind kind) { return optimizer_names[kind]; }

bool yolo_optimizer_kind_of(const char *name, yolo_optimizer_kind *kind) {
    for (size_t k = 0; k < sizeof optimizer_names / sizeof *optimizer_names; k++)
        if (strcasecmp(name, optimizer_names[k]) == 0) return *kind = (yolo_optimizer_kind)k, true;
    return false;
}

/* A MuSGD parameter that takes the Muon step: a matrix or conv filter (ndim >= 2). */
static bool muon_param(const yolo_optimizer *opt, int i) {
    return opt->kind == YOLO_OPTIMIZER_MUSGD && opt->params[i]->ndim >= 2;
}

/* Ultralytics' group of a parameter: biases 0, decayed weights 1, norm weights 2. */
static int group_of(yolo_param_role role) {
    switch (role) {
    case YOLO_PARAM_BIAS: return 0;
    case YOLO_PARAM_NORM_WEIGHT: return 2;
    default: return 1;
    }
}

static yolo_tensor *state_like(yolo_backend *be, const yolo_tensor *p, const char *suffix) {
    char name[YOLO_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s.%s", p->name, suffix);
    return yolo_tensor_new(be, name, YOLO_F32, p->ndim, p->shape, false);
}

/* norm_sq = sum of squares of every gradient -> the clipping factor (kept
 * in step_scale for the EMA) -> the updates (which skip the step when the
 * factor is 0) -> zeroed gradients. */
static yolo_status build_update_graph(yolo_optimizer *opt) {
    yolo_graph *g = yolo_graph_new(opt->backend);
    if (!g) return YOLO_ERR_NOMEM;
    opt->update_graph = g;
    yolo_tensor *total = NULL;
    for (int i = 0; i < opt->n_params; i++) {
        yolo_tensor *sq = yolo_sum_squares(g, opt->params[i]->grad);
        total = total ? yolo_add(g, total, sq) : sq;
    }
    opt->norm_sq = total;
    yolo_tensor *scale = total ? yolo_grad_clip_scale(g, total, opt->clip_hyper) : NULL;
    if (scale) { /* step_scale = 0 + scale: exact */
        yolo_zero(g, opt->step_scale);
        yolo_accumulate(g, opt->step_scale, scale);
    }
    for (int i = 0; i < opt->n_params && scale; i++) {
        yolo_tensor *p = opt->params[i];
        yolo_tensor *hyper = (opt->boosted[i] ? opt->hyper_boosted : opt->hyper)[opt->group[i]];
        if (muon_param(opt, i)) { /* MuSGD's hyper starts with SGD's four values */
            yolo_tensor *ortho = yolo_muon_orthogonalize(g, yolo_muon_momentum(g, p->grad, opt->state_a[i], hyper, scale));
            yolo_musgd_update(g, p, p->grad, ortho, opt->state_b[i], hyper, scale);
        } else if (opt->kind == YOLO_OPTIMIZER_ADAMW) {
            yolo_adamw_update(g, p, p->grad, opt->state_a[i], opt->state_b[i], hyper, scale);
        } else {
            yolo_sgd_update(g, p, p->grad, opt->state_a[i], hyper, scale);
        }
        yolo_zero(g, p->grad);
    }
    if (yolo_graph_status(g)) return yolo_graph_status(g);
    if (!scale) return YOLO_ERR_ARG;
    yolo_status st = yolo_graph_mark_output(g, total); /* kept for the host to read after the step */
    return st ? st : yolo_graph_plan(g, NULL);
}

yolo_status yolo_optimizer_create(yolo_model *model, yolo_optimizer_kind kind, float lr, float momentum,
                                  float weight_decay, yolo_optimizer **out) {
    const int n = yolo_model_tensor_count(model);
    yolo_model_tensor *tensors = malloc(sizeof *tensors * (size_t)(n ? n : 1));
    if (!tensors) return yolo_error(YOLO_ERR_NOMEM, "optimizer: out of memory");
    for (int i = 0; i < n; i++) tensors[i] = *yolo_model_tensor_at(model, i);
    yolo_status st =
        yolo_optimizer_create_for(yolo_model_backend(model), n, tensors, kind, lr, momentum, weight_decay, out);
    free(tensors);
    return st;
}

yolo_status yolo_optimizer_create_for(yolo_backend *backend, int n, const yolo_model_tensor *tensors,
                                      yolo_optimizer_kind kind, float lr, float momentum, float weight_decay,
                                      yolo_optimizer **out) {
    *out = NULL;
    yolo_optimizer *opt = calloc(1, sizeof *opt);
    if (!opt) return yolo_error(YOLO_ERR_NOMEM, "optimizer: out of memory");
    opt->kind = kind;
    opt->backend = backend;
    opt->initial_lr = lr;
    opt->momentum = momentum;
    opt->weight_decay = weight_decay;
    opt->params = calloc((size_t)n + 1, sizeof *opt->params);
    opt->group = calloc((size_t)n + 1, sizeof *opt->group);
    opt->state_a = calloc((size_t)n + 1, sizeof *opt->state_a);
    opt->state_b = calloc((size_t)n + 1, sizeof *opt->state_b);
    opt->boosted = calloc((size_t)n + 1, sizeof *opt->boosted);
    if (!opt->params || !opt->group || !opt->state_a || !opt->state_b || !opt->boosted) {
        yolo_optimizer_free(opt);
        return yolo_error(YOLO_ERR_NOMEM, "optimizer: out of memory");
    }
    for (int i = 0; i < n; i++) {
        const yolo_model_tensor *mt = &tensors[i];
        if (mt->role == YOLO_PARAM_BUFFER || !mt->tensor->requires_grad) continue; /* DFL's fixed weights */
        int k = opt->n_params++;
        opt->params[k] = mt->tensor;
        opt->group[k] = group_of(mt->role);
        opt->group_count[opt->group[k]]++;
        opt->state_a[k] = state_like(opt->backend, mt->tensor, kind == YOLO_OPTIMIZER_ADAMW ? "exp_avg" : "momentum_buffer");
        /* Ultralytics' state names: exp_avg_sq; MuSGD's second buffer, its SGD step's */
        const bool second = kind == YOLO_OPTIMIZER_ADAMW || muon_param(opt, k);
        if (second)
            opt->state_b[k] = state_like(opt->backend, mt->tensor,
                                         kind == YOLO_OPTIMIZER_ADAMW ? "exp_avg_sq" : "momentum_buffer_SGD");
        opt->boosted[k] = kind == YOLO_OPTIMIZER_MUSGD && yolo_musgd_boosted(mt->tensor->name);
        if (!opt->state_a[k] || (second && !opt->state_b[k])) {
            yolo_optimizer_free(opt);
            return yolo_error_context(YOLO_ERR_NOMEM, "optimizer state");
        }
    }
    if (opt->n_params == 0) {
        yolo_optimizer_free(opt);
        return yolo_error(YOLO_ERR_ARG, "optimizer: the model has no trainable parameters");
    }
    int64_t hyper_n = kind == YOLO_OPTIMIZER_SGD     ? YOLO_SGD_HYPER_COUNT
                      : kind == YOLO_OPTIMIZER_ADAMW ? YOLO_ADAMW_HYPER_COUNT
                                                     : YOLO_MUSGD_HYPER_COUNT;
    for (int gi = 0; gi < YOLO_PARAM_GROUPS; gi++) {
        char name[48];
        snprintf(name, sizeof name, "optimizer.pg%d", gi);
        opt->hyper[gi] = yolo_tensor_new(opt->backend, name, YOLO_F32, 1, &hyper_n, false);
        if (kind == YOLO_OPTIMIZER_MUSGD) {
            snprintf(name, sizeof name, "optimizer.pg%d.lr_x3", gi);
            opt->hyper_boosted[gi] = yolo_tensor_new(opt->backend, name, YOLO_F32, 1, &hyper_n, false);
        }
        opt->lr[gi] = lr;
    }
    int64_t clip_n = YOLO_CLIP_HYPER_COUNT;
    opt->clip_hyper = yolo_tensor_new(opt->backend, "optimizer.clip", YOLO_F32, 1, &clip_n, false);
    int64_t one = 1;
    opt->step_scale = yolo_tensor_new(opt->backend, "optimizer.step_scale", YOLO_F32, 1, &one, false);
    opt->unscale = 1.0f;
    yolo_grad_scaler_init(&opt->scaler, false);
    yolo_status st = YOLO_OK;
    for (int gi = 0; gi < YOLO_PARAM_GROUPS && !st; gi++)
        if (!opt->hyper[gi] || (kind == YOLO_OPTIMIZER_MUSGD && !opt->hyper_boosted[gi])) st = YOLO_ERR_NOMEM;
    if (!st && (!opt->clip_hyper || !opt->step_scale)) st = YOLO_ERR_NOMEM;
    if (!st) st = build_update_graph(opt);
    if (st) {
        yolo_optimizer_free(opt);
        return yolo_error_context(st, "optimizer");
    }
    *out = opt;
    return YOLO_OK;
}

void yolo_optimizer_free(yolo_optimizer *opt) {
    if (!opt) return;
    yolo_graph_free(opt->update_graph);
    for (int i = 0; i < opt->n_params; i++) {
        yolo_tensor_free(opt->state_a[i]);
        yolo_tensor_free(opt->state_b[i]);
    }
    for (int gi = 0; gi < YOLO_PARAM_GROUPS; gi++) yolo_tensor_free(opt->hyper[gi]), yolo_tensor_free(opt->hyper_boosted[gi]);
    yolo_tensor_free(opt->clip_hyper);
    yolo_tensor_free(opt->step_scale);
    free(opt->params);
    free(opt->group);
    free(opt->state_a);
    free(opt->state_b);
    free(opt->boosted);
    free(opt);
}

static yolo_status upload_hypers(yolo_optimizer *opt) {
    for (int gi = 0; gi < YOLO_PARAM_GROUPS; gi++) {
        float wd = gi == 1 ? opt->weight_decay : 0.0f;
        yolo_status st;
        if (opt->kind == YOLO_OPTIMIZER_SGD) {
            float h[YOLO_SGD_HYPER_COUNT] = {[YOLO_SGD_LR] = opt->lr[gi],
                                             [YOLO_SGD_MOMENTUM] = opt->momentum,
                                             [YOLO_SGD_WEIGHT_DECAY] = wd,
                                             [YOLO_SGD_NESTEROV] = 1.0f};
            st = yolo_tensor_upload(opt->hyper[gi], h, sizeof h);
        } else if (opt->kind == YOLO_OPTIMIZER_MUSGD) {
            float h[YOLO_MUSGD_HYPER_COUNT] = {[YOLO_MUSGD_LR] = opt->lr[gi],
                                               [YOLO_MUSGD_MOMENTUM] = opt->momentum,
                                               [YOLO_MUSGD_WEIGHT_DECAY] = wd,
                                               [YOLO_MUSGD_NESTEROV] = 1.0f,
                                               [YOLO_MUSGD_MUON] = MUSGD_MUON,
                                               [YOLO_MUSGD_SGD] = MUSGD_SGD};
            st = yolo_tensor_upload(opt->hyper[gi], h, sizeof h);
            h[YOLO_MUSGD_LR] = opt->lr[gi] * 3.0f;
            if (!st) st = yolo_tensor_upload(opt->hyper_boosted[gi], h, sizeof h);
        } else {
            float h[YOLO_ADAMW_HYPER_COUNT] = {[YOLO_ADAMW_LR] = opt->lr[gi],
                                               [YOLO_ADAMW_BETA1] = opt->momentum,
                                               [YOLO_ADAMW_BETA2] = 0.999f,
                                               [YOLO_ADAMW_EPS] = 1e-8f,
                                               [YOLO_ADAMW_WEIGHT_DECAY] = wd,
                                               [YOLO_ADAMW_STEP] = (float)(opt->steps + 1)};
            st = yolo_tensor_upload(opt->hyper[gi], h, sizeof h);
        }
        if (st) return st;
    }
    return YOLO_OK;
}

yolo_status yolo_optimizer_check(yolo_optimizer *opt, double *grad_norm) {
    if (!opt->norm_unread && !grad_norm) return YOLO_OK;
    float sq = 0.0f;
    yolo_status st = yolo_tensor_download(opt->norm_sq, &sq, sizeof sq);
    if (st) return yolo_error_context(st, "optimizer: gradient norm");
    double norm = sqrt((double)sq) * opt->unscale;
    if (grad_norm) *grad_norm = norm;
    if (!opt->norm_unread) return YOLO_OK;
    opt->norm_unread = false;
    opt->last_skipped = !isfinite(norm);
    yolo_grad_scaler_update(&opt->scaler, opt->last_skipped);
    if (!opt->last_skipped) return YOLO_OK;
    opt->steps--; /* the device skipped it */
    if (opt->scaler.enabled) return YOLO_OK;
    return yolo_error(YOLO_ERR_NUMERIC, "optimizer: the gradient norm is %g; the step was skipped", norm);
}

yolo_status yolo_optimizer_prepare(yolo_optimizer *opt, float max_norm) {
    yolo_status st = yolo_optimizer_check(opt, NULL); /* the previous step's, long finished */
    if (st) return st;
    if (opt->scaler.enabled) opt->unscale = 1.0f / opt->scaler.scale; /* a power of two: exact */
    const float clip[YOLO_CLIP_HYPER_COUNT] = {[YOLO_CLIP_MAX_NORM] = max_norm, [YOLO_CLIP_UNSCALE] = opt->unscale};
    st = yolo_tensor_upload(opt->clip_hyper, clip, sizeof clip);
    if (!st) st = upload_hypers(opt);
    opt->prepared = !st;
    return st;
}

yolo_status yolo_optimizer_step(yolo_optimizer *opt, float max_norm, double *grad_norm) {
    yolo_status st = opt->prepared ? YOLO_OK : yolo_optimizer_prepare(opt, max_norm);
    opt->prepared = false;
    if (!st) st = yolo_graph_run(opt->update_graph);
    if (st) return st;
    opt->steps++;
    opt->norm_unread = true;
    return grad_norm ? yolo_optimizer_check(opt, grad_norm) : YOLO_OK;
}

void yolo_optimizer_describe(const yolo_optimizer *opt, char *buf, size_t size) {
    snprintf(buf, size,
             "%s(lr=%g, momentum=%g) with parameter groups %d weight(decay=0.0), %d weight(decay=%g), %d bias(decay=0.0)",
             yolo_optimizer_name(opt->kind), (double)opt->initial_lr, (double)opt->momentum,
             opt->group_count[2], opt->group_count[1], (double)opt->weight_decay, opt->group_count[0]);
}
