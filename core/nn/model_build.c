/* Building a yolo_model from a model yaml: name resolution (file or a
 * task's embedded yaml), scale selection, Ultralytics' depth/width rules,
 * module lookup, the stride probe and the head's finalisation. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nn/exported_model.h"
#include "cfg/suggest.h"
#include "interop/pt_model.h"
#include "nn/model_internal.h"
#include "nn/model_size.h"
#include "plugin/plugin_loader.h"
#include "util/text_file.h"

#define PROBE_SIZE 256 /* Ultralytics measures strides with a 256x256 forward */

/* ---- names and scales ---- */

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Ultralytics' guess_model_scale: the letter of yolo[e-][v]<digits><n|s|m|l|x> in the stem. */
static void guess_scale(const char *path, char *scale, size_t size) {
    scale[0] = '\0';
    char stem[MODEL_NAME_MAX];
    snprintf(stem, sizeof(stem), "%s", base_name(path));
    char *dot = strrchr(stem, '.');
    if (dot) *dot = '\0';
    for (const char *p = strstr(stem, "yolo"); p; p = strstr(p + 1, "yolo")) {
        const char *q = p + 4;
        if (!strncmp(q, "e-", 2)) q += 2;
        if (*q == 'v') q++;
        if (!isdigit((unsigned char)*q)) continue;
        while (isdigit((unsigned char)*q)) q++;
        if (*q && strchr("nslmx", *q)) {
            snprintf(scale, size, "%c", *q);
            return;
        }
    }
}

/* Ultralytics' unified name: "yolov8n-seg.yaml" -> "yolov8-seg.yaml" (the
 * scale letter after the first digit run that has one). Works on the base
 * name; returns false if there is no such letter. */
static bool unified_name(const char *path, char *out, size_t size) {
    const char *base = base_name(path);
    for (const char *p = base; *p; p++) {
        if (!isdigit((unsigned char)*p)) continue;
        while (isdigit((unsigned char)p[1])) p++;
        if (p[1] && strchr("nslmx", p[1])) {
            int n = snprintf(out, size, "%.*s%s", (int)(p + 1 - path), path, p + 2);
            return n > 0 && (size_t)n < size;
        }
    }
    return false;
}

/* The YOLOv5u rule: "yolov5u.yaml" (the unified name of yolov5nu.yaml) is
 * yolov5.yaml, whose Detect is the anchor-free head that the 'u' names:
 * drops a 'u' that follows the first digit run. False if there is none. */
static bool without_u(const char *unified, char *out, size_t size) {
    const char *base = base_name(unified);
    for (const char *p = base; *p; p++) {
        if (!isdigit((unsigned char)*p)) continue;
        while (isdigit((unsigned char)p[1])) p++;
        if (p[1] != 'u' || (p[2] != '.' && p[2] != '-')) return false;
        int n = snprintf(out, size, "%.*s%s", (int)(p + 1 - unified), unified, p + 2);
        return n > 0 && (size_t)n < size;
    }
    return false;
}

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool model_yaml_file(const char *model, char *path, size_t size) {
    char unified[MODEL_NAME_MAX];
    const char *found = unified_name(model, unified, sizeof(unified)) && is_file(unified) ? unified
                        : is_file(model)                                                   ? model
                                                                                           : NULL;
    int n = found ? snprintf(path, size, "%s", found) : -1;
    return n > 0 && (size_t)n < size;
}

/* The tasks to search: the options' first, then every registered plugin
 * not already listed. */
static const yolo_task *task_at(const yolo_model_options *opt, int t) {
    int n_opt = opt ? opt->n_tasks : 0;
    if (t < n_opt) return opt->tasks[t];
    const yolo_task *tk = yolo_plugin_task_at(t - n_opt);
    for (int i = 0; tk && i < n_opt; i++)
        if (opt->tasks[i] == tk) return NULL; /* listed already */
    return tk;
}

static int task_count(const yolo_model_options *opt) { return (opt ? opt->n_tasks : 0) + yolo_plugin_task_count(); }

/* The text of the yaml a loaded task embeds as `name`; *found: that name
 * (the task table's), *task: the task's. */
static const char *find_embedded(const yolo_model_options *opt, const char *name, const char **found,
                                 const char **task) {
    for (int t = 0; t < task_count(opt); t++) {
        const yolo_task *tk = task_at(opt, t);
        if (!tk || !tk->model_yaml_names || !tk->model_yaml_texts) continue;
        for (int i = 0; i < tk->n_model_yamls; i++)
            if (tk->model_yaml_names[i] && !strcmp(tk->model_yaml_names[i], name)) {
                *found = tk->model_yaml_names[i];
                *task = tk->name;
                return tk->model_yaml_texts[i];
            }
    }
    return NULL;
}

const char *model_find_embedded(const yolo_model_options *opt, const char *model, const char **found,
                                const char **task) {
    char unified[MODEL_NAME_MAX], plain[MODEL_NAME_MAX];
    bool has_unified = unified_name(model, unified, sizeof(unified));
    const char *text = NULL;
    if (has_unified) text = find_embedded(opt, base_name(unified), found, task);
    if (!text && has_unified && without_u(unified, plain, sizeof(plain)))
        text = find_embedded(opt, base_name(plain), found, task);
    if (!text) text = find_embedded(opt, base_name(model), found, task);
    return text;
}

/* ---- module lookup ---- */

static const char *strip_nn(const char *name) {
    if (!strncmp(name, "torch.", 6)) name += 6;
    if (!strncmp(name, "nn.", 3)) name += 3;
    return name;
}

static const yolo_module_type *find_module(const yolo_model_options *opt, const char *name) {
    const char *want = strip_nn(name);
    for (int i = 0; i < yolo_core_module_count; i++)
        if (!strcmp(strip_nn(yolo_core_modules[i]->name), want)) return yolo_core_modules[i];
    for (int t = 0; t < task_count(opt); t++) {
        const yolo_task *tk = task_at(opt, t);
        for (int i = 0; tk && tk->modules && i < tk->n_modules; i++)
            if (tk->modules[i] && !strcmp(strip_nn(tk->modules[i]->name), want)) return tk->modules[i];
    }
    return NULL;
}

static yolo_status unknown_module(const yolo_model *m, const yolo_model_options *opt, const model_row *row) {
    const char *names[256] = {0};
    int n = 0;
    char known[1024] = "", tasks[512] = "";
    size_t len = 0;
    for (int i = 0; i < yolo_core_module_count && n < 256; i++) names[n++] = yolo_core_modules[i]->name;
    size_t tlen = 0;
    for (int t = 0; t < task_count(opt); t++) {
        const yolo_task *tk = task_at(opt, t);
        for (int i = 0; tk && tk->modules && i < tk->n_modules && n < 256; i++) {
            names[n++] = tk->modules[i]->name;
            tlen += (size_t)snprintf(tasks + tlen, tlen < sizeof(tasks) ? sizeof(tasks) - tlen : 0, "%s%s (%s)",
                                     tlen ? ", " : "", tk->modules[i]->name, tk->name);
        }
    }
    for (int i = 0; i < yolo_core_module_count && len < sizeof(known); i++)
        len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s", i ? ", " : "", yolo_core_modules[i]->name);
    const char *near = yolo_suggest(row->module, names, n);
    char hint[160] = "";
    if (near) snprintf(hint, sizeof(hint), " (did you mean '%s'?)", near);
    return yolo_error(YOLO_ERR_CONFIG, "%s:%d:%d: layer %d: unknown module '%s'%s; core modules: %s; %s%s", m->spec.name,
                      row->module_line, row->module_column, (int)(row - m->spec.rows), row->module, hint, known,
                      tlen ? "task modules: " : "no task plugin is loaded, so no head modules (Detect, Segment, "
                                                "Classify) are known",
                      tasks);
}

/* ---- argument resolution: `nc` is the class count ---- */

static yolo_status resolve_arg(yolo_model *m, const yolo_arg *in, yolo_arg *out) {
    *out = *in;
    if (in->kind == YOLO_ARG_STRING && !strcmp(in->s, "nc")) {
        if (m->nc < 1)
            return yolo_error(YOLO_ERR_CONFIG, "%s:%d:%d: an argument is 'nc' but the yaml sets no nc", m->spec.name,
                              in->line, in->column);
        out->kind = YOLO_ARG_INT;
        out->i = m->nc;
        out->f = m->nc;
    } else if (in->kind == YOLO_ARG_LIST) {
        yolo_arg *items = model_arena_alloc(&m->spec.arena, sizeof(yolo_arg) * (size_t)(in->n_items + 1));
        if (!items) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", m->spec.name);
        for (int i = 0; i < in->n_items; i++) {
            yolo_status st = resolve_arg(m, &in->items[i], &items[i]);
            if (st) return st;
        }
        out->items = items;
    }
    return YOLO_OK;
}

/* ---- building ---- */

static yolo_status select_scale(yolo_model *m, const yolo_model_options *opt, const char *requested) {
    const model_spec *s = &m->spec;
    if (opt && opt->scale && *opt->scale)
        snprintf(m->scale, sizeof(m->scale), "%s", opt->scale);
    else
        guess_scale(requested, m->scale, sizeof(m->scale));
    if (s->n_scales == 0) {
        m->depth = s->has_multiples ? s->depth_multiple : 1.0;
        m->width = s->has_multiples ? s->width_multiple : 1.0;
        m->max_channels = INFINITY;
        m->scale[0] = '\0';
        return YOLO_OK;
    }
    if (!m->scale[0]) {
        snprintf(m->scale, sizeof(m->scale), "%s", s->scales[0].letter);
        fprintf(opt && opt->log ? opt->log : stderr,
                "WARNING: %s: no model scale in the name (e.g. yolov8n.yaml); assuming scale='%s'\n", requested,
                m->scale);
    }
    for (int i = 0; i < s->n_scales; i++)
        if (!strcmp(s->scales[i].letter, m->scale)) {
            m->depth = s->scales[i].depth;
            m->width = s->scales[i].width;
            m->max_channels = s->scales[i].max_channels;
            return YOLO_OK;
        }
    char list[256] = "";
    size_t len = 0;
    for (int i = 0; i < s->n_scales && len < sizeof(list); i++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", s->scales[i].letter);
    return yolo_error(YOLO_ERR_CONFIG, "%s: scale '%s' is not one of its scales (%s)", s->name, m->scale, list);
}

static yolo_status build_layer(yolo_model *m, const yolo_model_options *opt, int i) {
    const model_row *row = &m->spec.rows[i];
    model_layer *L = &m->layers[i];
    L->index = i;
    L->row = row;
    L->type = find_module(opt, row->module);
    if (!L->type) return unknown_module(m, opt, row);
    if (L->type->flags & YOLO_MODULE_END2END) m->spec.end2end = true; /* before build: the head reads it */
    L->n_from = row->n_from;
    for (int j = 0; j < row->n_from; j++) {
        int f = row->from[j];
        L->from[j] = f < 0 ? i + f : f; /* -1 at layer 0: the images */
        int c = L->from[j] < 0 ? m->ch : m->layers[L->from[j]].out_channels;
        if (c < 1)
            return yolo_error(YOLO_ERR_CONFIG, "%s:%d:%d: layer %d takes layer %d as input, which has no channel output",
                              m->spec.name, row->line, row->column, i, L->from[j]);
        L->in_channels[j] = c;
    }
    int n = row->repeats;
    L->repeats = n > 1 ? (int)fmax(nearbyint(n * m->depth), 1.0) : n; /* Python round: half to even */
    L->n_copies = (L->type->flags & YOLO_MODULE_REPEATS_INSIDE) ? 1 : L->repeats;
    L->args = model_arena_alloc(&m->spec.arena, sizeof(yolo_arg) * (size_t)(row->n_args + 1));
    L->states = model_arena_alloc(&m->spec.arena, sizeof(void *) * (size_t)L->n_copies);
    if (!L->args || !L->states) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", m->spec.name);
    for (int a = 0; a < row->n_args; a++) {
        yolo_status st = resolve_arg(m, &row->args[a], &L->args[a]);
        if (st) return st;
    }
    for (int c = 0; c < L->n_copies; c++) {
        yolo_module_ctx ctx;
        model_ctx_setup(&ctx, m, L, c);
        if (c == 0) {
            ctx.n_in = L->n_from;
            memcpy(ctx.in_channels, L->in_channels, sizeof(ctx.in_channels));
        } else {
            ctx.n_in = 1;
            ctx.in_channels[0] = L->out_channels;
        }
        yolo_status st = L->type->build(&ctx);
        if (st) return st;
        if (!ctx.state) return yolo_module_error(&ctx, YOLO_ERR_ARG, "build did not allocate a state");
        L->states[c] = ctx.state;
        L->out_channels = ctx.out_set ? ctx.out_channels : 0;
        if (c + 1 < L->n_copies && L->out_channels < 1)
            return yolo_module_error(&ctx, YOLO_ERR_CONFIG, "cannot be repeated: it has no channel output");
    }
    if (!L->args_text[0]) snprintf(L->args_text, sizeof(L->args_text), "[]");
    return YOLO_OK;
}

/* Measures each layer's stride with a shape-only forward at PROBE_SIZE. */
static yolo_status probe_strides(yolo_model *m) {
    yolo_graph *g = yolo_graph_new(m->backend);
    if (!g) return yolo_error_context(YOLO_ERR_NOMEM, "%s: stride probe", m->spec.name);
    int64_t shape[4] = {1, m->ch, PROBE_SIZE, PROBE_SIZE};
    yolo_tensor *x = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    yolo_tensor **outs = calloc((size_t)m->n_layers, sizeof(*outs));
    double *bytes = calloc((size_t)m->n_layers, sizeof(*bytes));
    yolo_model_outputs out;
    yolo_status st = !x || !outs || !bytes
                         ? yolo_error(YOLO_ERR_NOMEM, "%s: stride probe: out of memory", m->spec.name)
                         : model_forward_all(m, g, x, true, false, &out, outs);
    if (st) {
        yolo_error_context(st, "%s: probe forward at %dx%d", m->spec.name, PROBE_SIZE, PROBE_SIZE);
    } else {
        /* the shapes alone (nothing is computed): each output's bytes at the
         * default imgsz (a head's anchors grow with the area too) */
        double scale = (double)YOLO_MODEL_DEFAULT_IMGSZ / PROBE_SIZE;
        for (int i = 0; i < m->n_layers; i++) {
            model_layer *L = &m->layers[i];
            yolo_tensor *t = outs[i];
            L->out_stride = t && t->ndim == 4 && t->shape[2] > 0 ? (int)(PROBE_SIZE / t->shape[2]) : 0;
            for (int j = 0; j < L->n_from; j++)
                L->in_strides[j] = L->from[j] < 0 ? 1 : m->layers[L->from[j]].out_stride;
            bytes[i] = t ? (double)yolo_tensor_numel(t) * sizeof(float) * scale * scale : 0;
        }
        st = model_activation_check(&m->spec, bytes, m->n_layers);
    }
    free(bytes);
    free(outs);
    yolo_graph_free(g);
    return st;
}

static yolo_status build_model(yolo_model *m, const yolo_model_options *opt, const char *requested) {
    yolo_status st = select_scale(m, opt, requested);
    if (st) return st;
    m->nc = opt && opt->nc > 0 ? opt->nc : m->spec.nc;
    m->ch = opt && opt->in_channels > 0 ? opt->in_channels : m->spec.ch;
    m->default_act = m->spec.has_activation ? m->spec.activation : YOLO_ACT_SILU;
    m->seed = opt ? opt->seed : 0;
    /* the size the yaml asks for, before anything is allocated */
    const model_scale *scale = NULL;
    for (int i = 0; i < m->spec.n_scales; i++)
        if (!strcmp(m->spec.scales[i].letter, m->scale)) scale = &m->spec.scales[i];
    model_scale multiples = {.depth = m->depth, .width = m->width, .max_channels = m->max_channels};
    if ((st = model_size_check(&m->spec, scale ? scale : &multiples, m->nc, m->ch))) return st;
    m->bn_eps = YOLO_BN_EPS;
    m->bn_momentum = YOLO_BN_MOMENTUM;
    m->n_layers = m->spec.n_rows;
    m->layers = calloc((size_t)m->n_layers, sizeof(*m->layers));
    if (!m->layers) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", m->spec.name);
    for (int i = 0; i < m->n_layers; i++)
        if ((st = build_layer(m, opt, i))) return st;
    if ((st = probe_strides(m))) return st;
    for (int i = 0; i < m->n_layers; i++) {
        model_layer *L = &m->layers[i];
        for (int c = 0; L->type->finalize && c < L->n_copies; c++) {
            yolo_module_ctx ctx;
            model_ctx_setup(&ctx, m, L, c);
            if ((st = L->type->finalize(&ctx, L->states[c]))) return st;
        }
    }
    model_layer *head = &m->layers[m->n_layers - 1];
    m->n_strides = head->n_from;
    memcpy(m->strides, head->in_strides, sizeof(m->strides));
    if (opt && opt->log) yolo_model_print_layers(m, opt->log);
    return YOLO_OK;
}

/* Parses and builds; `source` names the text in messages, `requested` is
 * what the user asked for (its scale letter and the summary's name). */
static yolo_status load_common(const char *source, const char *requested, const char *text, size_t size,
                               yolo_backend *backend, const yolo_model_options *opt, yolo_model **out) {
    *out = NULL;
    yolo_model *m = calloc(1, sizeof(*m));
    if (!m) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", source);
    m->backend = backend;
    snprintf(m->name, sizeof(m->name), "%s", requested);
    snprintf(m->source, sizeof(m->source), "%s", source);
    m->yaml_text = strndup(text, size);
    yolo_status st = m->yaml_text ? model_spec_parse(source, text, size, &m->spec)
                                  : yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", source);
    if (!st) st = build_model(m, opt, requested);
    if (st) {
        yolo_model_free(m);
        return st;
    }
    *out = m;
    return YOLO_OK;
}

yolo_status yolo_model_load_text(const char *name, const char *text, size_t size, yolo_backend *backend,
                                 const yolo_model_options *opt, yolo_model **out) {
    if (out) *out = NULL;
    if (!name || !text || !backend || !out) return yolo_error(YOLO_ERR_ARG, "yolo_model_load_text: NULL argument");
    return load_common(name, name, text, size, backend, opt, out);
}

yolo_status yolo_model_load(const char *model, yolo_backend *backend, const yolo_model_options *opt,
                            yolo_model **out) {
    if (out) *out = NULL;
    if (!model || !*model || !backend || !out)
        return yolo_error(YOLO_ERR_ARG, "yolo_model_load: no model name, backend or output");
    yolo_status refused = yolo_refuse_exported_model(model);
    if (refused) return refused;
    if (yolo_pt_is_path(model)) return yolo_pt_model_load(model, backend, opt, out); /* an Ultralytics .pt */
    char unified[MODEL_NAME_MAX], path[MODEL_NAME_MAX];
    bool has_unified = unified_name(model, unified, sizeof(unified));
    if (model_yaml_file(model, path, sizeof(path))) {
        char *text = NULL;
        size_t size = 0;
        yolo_status st = yolo_read_text_file(path, "the model yaml", &text, &size);
        if (st) return st;
        st = load_common(path, model, text, size, backend, opt, out);
        free(text);
        return st;
    }
    const char *task = NULL, *found = NULL, *text = model_find_embedded(opt, model, &found, &task);
    if (!text) {
        char list[512] = "";
        size_t len = 0;
        for (int t = 0; t < task_count(opt); t++) {
            const yolo_task *tk = task_at(opt, t);
            for (int i = 0; tk && tk->model_yaml_names && i < tk->n_model_yamls && len < sizeof(list); i++)
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s (%s)", len ? ", " : "",
                                        tk->model_yaml_names[i], tk->name);
        }
        return yolo_error(YOLO_ERR_IO, "model '%s': no such file%s%s, and no loaded task embeds it (embedded: %s)",
                          model, has_unified ? " or " : "", has_unified ? unified : "", len ? list : "none");
    }
    yolo_status st = load_common(found, model, text, strlen(text), backend, opt, out);
    if (!st) snprintf((*out)->source, sizeof((*out)->source), "%.200s (embedded in the %.100s plugin)", found, task);
    return st;
}

void yolo_model_free(yolo_model *m) {
    if (!m) return;
    for (int i = 0; m->layers && i < m->n_layers; i++) {
        model_layer *L = &m->layers[i];
        for (int c = 0; L->type && L->type->destroy && L->states && c < L->n_copies; c++)
            if (L->states[c]) L->type->destroy(L->states[c]);
    }
    for (int i = 0; i < m->n_tensors; i++) yolo_tensor_free(m->tensors[i].tensor);
    for (int i = 0; i < m->n_allocs; i++) free(m->allocs[i]);
    free(m->allocs);
    free(m->tensors);
    free(m->convs);
    free(m->fuse_steps);
    free(m->layers);
    model_spec_free(&m->spec);
    free(m->yaml_text);
    free(m);
}

const char *yolo_model_yaml_text(const yolo_model *m) { return m->yaml_text; }

void yolo_model_bn_constants(const yolo_model *m, double *eps, double *momentum) {
    *eps = m->bn_eps;
    *momentum = m->bn_momentum;
}

void yolo_model_set_bn_constants(yolo_model *m, double eps, double momentum) {
    m->bn_eps = (float)eps;
    m->bn_momentum = (float)momentum;
}

yolo_status yolo_model_check_head(const yolo_model *m, const yolo_task *task) {
    const model_layer *last = m->n_layers ? &m->layers[m->n_layers - 1] : NULL;
    for (int i = 0; last && i < task->n_modules; i++)
        if (task->modules[i] == last->type) return YOLO_OK;
    char heads[256] = "";
    for (int i = 0, len = 0; i < task->n_modules && len < (int)sizeof heads; i++)
        len += snprintf(heads + len, sizeof heads - (size_t)len, "%s%s", i ? ", " : "", task->modules[i]->name);
    const model_row *row = last ? &m->spec.rows[m->n_layers - 1] : NULL;
    return yolo_error(YOLO_ERR_CONFIG, "%s:%d: the last layer is %s, not a %s head (%s): a model without its task's "
                      "head cannot be trained, validated or used to predict", m->source, row ? row->line : 0,
                      last ? last->type->name : "missing", task->name, heads[0] ? heads : "the task has none");
}
