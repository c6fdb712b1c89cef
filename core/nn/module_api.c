/* The build context given to module types: arguments, channels, scaling
 * rules, parameter creation and initialisation (see yolo/model.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/rng.h"
#include "nn/model_internal.h"
#include "nn/model_size.h"

/* ---- model bookkeeping ---- */

static bool grow(void **items, int *cap, int need, size_t size) {
    if (need <= *cap) return true;
    int cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need) cap2 *= 2;
    void *p = realloc(*items, (size_t)cap2 * size);
    if (!p) return false;
    *items = p;
    *cap = cap2;
    return true;
}

yolo_status model_register_tensor(yolo_model *m, yolo_tensor *t, yolo_param_role role, int layer) {
    if (!grow((void **)&m->tensors, &m->cap_tensors, m->n_tensors + 1, sizeof(*m->tensors)))
        return yolo_error(YOLO_ERR_NOMEM, "model %s: out of memory registering '%s'", m->name, t->name);
    m->tensors[m->n_tensors++] = (yolo_model_tensor){t, role, layer};
    return YOLO_OK;
}

yolo_status model_register_conv(yolo_module_ctx *ctx, yolo_conv_block *b, bool own_act_leaf) {
    yolo_model *m = ctx->model;
    if (!grow((void **)&m->convs, &m->cap_convs, m->n_convs + 1, sizeof(*m->convs)))
        return yolo_error(YOLO_ERR_NOMEM, "model %s: out of memory", m->name);
    m->convs[m->n_convs++] = (model_conv_entry){b, own_act_leaf, ctx->layer->index};
    return YOLO_OK;
}

yolo_status model_register_fuse(yolo_module_ctx *ctx, yolo_status (*fuse)(yolo_model *m, void *block), void *block) {
    yolo_model *m = ctx->model;
    if (!grow((void **)&m->fuse_steps, &m->cap_fuse_steps, m->n_fuse_steps + 1, sizeof(*m->fuse_steps)))
        return yolo_error(YOLO_ERR_NOMEM, "model %s: out of memory", m->name);
    m->fuse_steps[m->n_fuse_steps++] = (model_fuse_step){fuse, block};
    return YOLO_OK;
}

yolo_status model_init_tensor(yolo_tensor *t, uint64_t seed, int number, yolo_param_init init, double value) {
    int64_t n = yolo_tensor_numel(t);
    if (init == YOLO_INIT_ZERO) return yolo_tensor_zero(t);
    float *data = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!data) return yolo_error(YOLO_ERR_NOMEM, "initialising '%s': out of memory", t->name);
    yolo_rng rng;
    yolo_rng_init(&rng, seed, YOLO_RNG_INIT, 0, (uint32_t)number);
    double bound = 0;
    if (init == YOLO_INIT_UNIFORM) bound = value;
    /* PyTorch's kaiming_uniform_(a=sqrt(5)): gain sqrt(2/(1+5)), bound gain*sqrt(3/fan_in) = 1/sqrt(fan_in) */
    if (init == YOLO_INIT_KAIMING_UNIFORM) bound = value > 0 ? 1.0 / sqrt(value) : 0.0;
    for (int64_t i = 0; i < n; i++) {
        switch (init) {
        case YOLO_INIT_ONE: data[i] = 1.0f; break;
        case YOLO_INIT_CONSTANT: data[i] = (float)value; break;
        case YOLO_INIT_TRUNC_NORMAL: {
            double v;
            do v = value * yolo_rng_normal(&rng);
            while (v < -2.0 || v > 2.0);
            data[i] = (float)v;
            break;
        }
        default: data[i] = (float)yolo_rng_range(&rng, -bound, bound); break;
        }
    }
    yolo_status st = yolo_tensor_upload_f32(t, data, n);
    free(data);
    return st;
}

void model_ctx_setup(yolo_module_ctx *ctx, yolo_model *m, model_layer *layer, int copy) {
    memset(ctx, 0, sizeof(*ctx));
    ctx->model = m;
    ctx->layer = layer;
    ctx->copy = copy;
    if (layer->n_copies > 1)
        snprintf(ctx->prefix, sizeof(ctx->prefix), "model.%d.%d", layer->index, copy);
    else
        snprintf(ctx->prefix, sizeof(ctx->prefix), "model.%d", layer->index);
    ctx->state = layer->states ? layer->states[copy] : NULL;
}

/* ---- context queries ---- */

void *yolo_module_state_alloc(yolo_module_ctx *ctx, size_t size) {
    yolo_model *m = ctx->model;
    if (!grow((void **)&m->allocs, &m->cap_allocs, m->n_allocs + 1, sizeof(void *))) return NULL;
    void *p = calloc(1, size ? size : 1);
    if (!p) return NULL;
    m->allocs[m->n_allocs++] = p;
    ctx->state = p;
    return p;
}

void *yolo_module_state(yolo_module_ctx *ctx) { return ctx->state; }
int yolo_module_index(const yolo_module_ctx *ctx) { return ctx->layer->index; }
const char *yolo_module_prefix(const yolo_module_ctx *ctx) { return ctx->prefix; }
int yolo_module_n_inputs(const yolo_module_ctx *ctx) { return ctx->n_in; }
int yolo_module_nc(const yolo_module_ctx *ctx) { return ctx->model->nc; }

int yolo_module_in_channels(const yolo_module_ctx *ctx, int i) {
    return i >= 0 && i < ctx->n_in ? ctx->in_channels[i] : 0;
}

int yolo_module_in_stride(const yolo_module_ctx *ctx, int i) {
    return i >= 0 && i < ctx->layer->n_from ? ctx->layer->in_strides[i] : 0;
}

bool yolo_module_legacy_heads(const yolo_module_ctx *ctx) {
    for (int i = 0; i <= ctx->layer->index; i++)
        if (ctx->model->layers[i].type->flags & YOLO_MODULE_CURRENT_HEADS) return false;
    return true;
}

int yolo_module_reg_max(const yolo_module_ctx *ctx) { return ctx->model->spec.reg_max; }
bool yolo_module_end2end(const yolo_module_ctx *ctx) { return ctx->model->spec.end2end; }

int yolo_module_repeats(const yolo_module_ctx *ctx) {
    return (ctx->layer->type->flags & YOLO_MODULE_REPEATS_INSIDE) ? ctx->layer->repeats : 1;
}

int yolo_module_scale_width(const yolo_module_ctx *ctx, int c) {
    const yolo_model *m = ctx->model;
    double x = fmin((double)c, m->max_channels) * m->width;
    return (int)(ceil(x / 8.0) * 8.0);
}

int yolo_module_scale_channels(const yolo_module_ctx *ctx, int c) {
    return c == ctx->model->nc ? c : yolo_module_scale_width(ctx, c);
}

void yolo_module_set_out_channels(yolo_module_ctx *ctx, int c) {
    ctx->out_channels = c;
    ctx->out_set = true;
}

void yolo_module_set_args_text(yolo_module_ctx *ctx, const char *fmt, ...) {
    if (ctx->copy > 0) return; /* the table shows the first copy */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->layer->args_text, sizeof(ctx->layer->args_text), fmt, ap);
    va_end(ap);
}

void yolo_module_add_leaves(yolo_module_ctx *ctx, int n) { ctx->layer->leaves += n; }

yolo_status yolo_module_error(const yolo_module_ctx *ctx, yolo_status status, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const model_row *row = ctx->layer->row;
    return yolo_error(status, "%s:%d:%d: layer %d %s: %s", ctx->model->spec.name, row ? row->line : 0,
                      row ? row->column : 0, ctx->layer->index, ctx->layer->type ? ctx->layer->type->name : "?", msg);
}

/* ---- arguments ---- */

int yolo_module_arg_count(const yolo_module_ctx *ctx) { return ctx->layer->row ? ctx->layer->row->n_args : 0; }

const yolo_arg *yolo_module_arg(const yolo_module_ctx *ctx, int i) {
    if (i < 0 || i >= yolo_module_arg_count(ctx)) return NULL;
    return &ctx->layer->args[i];
}

static yolo_status arg_kind_error(const yolo_module_ctx *ctx, int i, const yolo_arg *a, const char *want) {
    return yolo_error(YOLO_ERR_CONFIG, "%s:%d:%d: layer %d %s: argument %d must be %s, got '%s'",
                      ctx->model->spec.name, a->line, a->column, ctx->layer->index, ctx->layer->type->name, i, want,
                      a->s ? a->s : "?");
}

yolo_status yolo_module_arg_int(const yolo_module_ctx *ctx, int i, int64_t def, int64_t *out) {
    const yolo_arg *a = yolo_module_arg(ctx, i);
    if (!a || a->kind == YOLO_ARG_NULL) {
        *out = def;
        return YOLO_OK;
    }
    if (a->kind == YOLO_ARG_FLOAT && a->f == floor(a->f) && fabs(a->f) < 1e15) {
        *out = (int64_t)a->f;
        return YOLO_OK;
    }
    if (a->kind != YOLO_ARG_INT) return arg_kind_error(ctx, i, a, "an integer");
    *out = a->i;
    return YOLO_OK;
}

yolo_status yolo_module_arg_bool(const yolo_module_ctx *ctx, int i, bool def, bool *out) {
    const yolo_arg *a = yolo_module_arg(ctx, i);
    if (!a || a->kind == YOLO_ARG_NULL) {
        *out = def;
        return YOLO_OK;
    }
    if (a->kind != YOLO_ARG_BOOL) return arg_kind_error(ctx, i, a, "True or False");
    *out = a->b;
    return YOLO_OK;
}

yolo_status yolo_module_arg_float(const yolo_module_ctx *ctx, int i, double def, double *out) {
    const yolo_arg *a = yolo_module_arg(ctx, i);
    if (!a || a->kind == YOLO_ARG_NULL) {
        *out = def;
        return YOLO_OK;
    }
    if (a->kind != YOLO_ARG_FLOAT && a->kind != YOLO_ARG_INT) return arg_kind_error(ctx, i, a, "a number");
    *out = a->kind == YOLO_ARG_INT ? (double)a->i : a->f;
    return YOLO_OK;
}

yolo_status yolo_module_arg_act(const yolo_module_ctx *ctx, int i, yolo_act *out) {
    const yolo_arg *a = yolo_module_arg(ctx, i);
    if (!a) {
        *out = YOLO_ACT_DEFAULT; /* act=True */
        return YOLO_OK;
    }
    if (a->kind == YOLO_ARG_NULL) { /* as Ultralytics' Conv: anything but True or a module is Identity */
        *out = YOLO_ACT_IDENTITY;
        return YOLO_OK;
    }
    if (a->kind == YOLO_ARG_BOOL) {
        *out = a->b ? YOLO_ACT_DEFAULT : YOLO_ACT_IDENTITY;
        return YOLO_OK;
    }
    if (a->kind != YOLO_ARG_ACT) return arg_kind_error(ctx, i, a, "True, False or an activation such as nn.ReLU()");
    *out = a->act;
    return YOLO_OK;
}

yolo_act yolo_module_resolve_act(const yolo_module_ctx *ctx, yolo_act act) {
    return act == YOLO_ACT_DEFAULT ? ctx->model->default_act : act;
}

/* ---- parameters ---- */

yolo_tensor *yolo_module_param(yolo_module_ctx *ctx, const char *name, int ndim, const int64_t *shape,
                               yolo_param_role role, bool trainable, yolo_param_init init, double value) {
    yolo_model *m = ctx->model;
    char full[YOLO_NAME_MAX];
    int len = snprintf(full, sizeof(full), "%s.%s", ctx->prefix, name);
    if (len < 0 || len >= (int)sizeof(full)) {
        yolo_module_error(ctx, YOLO_ERR_ARG, "parameter name '%s.%s' is longer than %d characters", ctx->prefix,
                          name, YOLO_NAME_MAX - 1);
        return NULL;
    }
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 1) {
            yolo_module_error(ctx, YOLO_ERR_SHAPE, "parameter '%s' has a dimension %lld < 1", full,
                              (long long)shape[d]);
            return NULL;
        }
        if (__builtin_mul_overflow(numel, shape[d], &numel)) numel = INT64_MAX;
    }
    /* the exact count, before allocating: what the yaml's estimate
     * (model_size.c) cannot know, such as a plugin head's layers */
    if (numel > YOLO_MODEL_MAX_PARAMS - m->n_param_elements) {
        yolo_module_error(ctx, YOLO_ERR_CONFIG, "parameter '%s' (%lld elements) would take the model past %.3g "
                          "parameters (%lld made before it), the most a model may have", full, (long long)numel,
                          (double)YOLO_MODEL_MAX_PARAMS, (long long)m->n_param_elements);
        return NULL;
    }
    m->n_param_elements += numel;
    bool grad = trainable && role != YOLO_PARAM_BUFFER;
    yolo_tensor *t = yolo_tensor_new(m->backend, full, YOLO_F32, ndim, shape, grad);
    if (!t) {
        yolo_error_context(YOLO_ERR_NOMEM, "%s: layer %d: creating '%s'", m->spec.name, ctx->layer->index, full);
        return NULL;
    }
    int number = m->n_params_created++;
    if (model_init_tensor(t, m->seed, number, init, value) || model_register_tensor(m, t, role, ctx->layer->index)) {
        yolo_tensor_free(t);
        return NULL;
    }
    return t;
}

/* ---- activations ---- */

const char *yolo_act_name(yolo_act act) {
    switch (act) {
    case YOLO_ACT_DEFAULT: return "default";
    case YOLO_ACT_SILU: return "SiLU";
    case YOLO_ACT_RELU: return "ReLU";
    case YOLO_ACT_SIGMOID: return "Sigmoid";
    case YOLO_ACT_IDENTITY: return "Identity";
    case YOLO_ACT_HARDSWISH: return "Hardswish";
    }
    return "?";
}

yolo_tensor *yolo_act_apply(yolo_graph *g, yolo_act act, yolo_tensor *x) {
    switch (act) {
    case YOLO_ACT_SILU: return yolo_silu(g, x);
    case YOLO_ACT_RELU: return yolo_relu(g, x);
    case YOLO_ACT_SIGMOID: return yolo_sigmoid(g, x);
    case YOLO_ACT_IDENTITY: return x;
    case YOLO_ACT_HARDSWISH: return yolo_hardswish(g, x);
    case YOLO_ACT_DEFAULT: break;
    }
    yolo_error(YOLO_ERR_ARG, "yolo_act_apply: unresolved activation");
    return NULL;
}
