/* Model yaml parsing with libyaml's document API (see model_yaml.h). */
#include "nn/model_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* The largest reg_max: the detection heads' per-side arrays (yolo/detection.h's YOLO_DET_REG_MAX). */
#define MODEL_REG_MAX_LIMIT 16
/* The range of a scale's multiples and max_channels. Ultralytics' own
 * span depth 0.33-1.33, width 0.25-1.5 and max_channels 512-1280; past
 * these a yaml only asks for memory (a model's size is checked on its own,
 * model_size.c, but these keep every product in range). */
#define MODEL_MULTIPLE_LIMIT 4.0
#define MODEL_MAX_CHANNELS_LIMIT 8192

/* ---- arena ---- */

struct model_arena_block {
    model_arena_block *next;
    size_t used, cap;
    max_align_t data[];
};

void *model_arena_alloc(model_arena *arena, size_t size) {
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (size == 0) size = sizeof(max_align_t);
    model_arena_block *b = arena->head;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > 16384 ? size : 16384;
        b = calloc(1, sizeof(*b) + cap);
        if (!b) return NULL;
        b->cap = cap;
        b->next = arena->head;
        arena->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    return p; /* calloc'd and never reused: already zero */
}

char *model_arena_strdup(model_arena *arena, const char *s, size_t len) {
    char *p = model_arena_alloc(arena, len + 1);
    if (p) memcpy(p, s, len), p[len] = '\0';
    return p;
}

void model_arena_free(model_arena *arena) {
    model_arena_block *b = arena->head;
    while (b) {
        model_arena_block *next = b->next;
        free(b);
        b = next;
    }
    arena->head = NULL;
}

/* ---- scalars ---- */

static bool parse_int(const char *s, int64_t *out) {
    if (!*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno) return false;
    *out = v;
    return true;
}

static bool parse_float(const char *s, double *out) {
    if (!*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !isfinite(v)) return false;
    /* strtod also takes "inf", "nan", hex: keep to decimal forms */
    for (const char *p = s; *p; p++)
        if (!(isdigit((unsigned char)*p) || strchr("+-.eE", *p))) return false;
    *out = v;
    return true;
}

/* What model_parse_activation knows, for the messages of what it does not. */
#define BUILT_ACTIVATIONS "nn.SiLU(), nn.ReLU(), nn.Sigmoid(), nn.Identity(), nn.Hardswish()"

bool model_parse_activation(const char *text, yolo_act *act, bool *known) {
    const char *p = text;
    if (strncmp(p, "torch.", 6) == 0) p += 6;
    if (strncmp(p, "nn.", 3) != 0) return false;
    p += 3;
    const char *name = p;
    while (isalnum((unsigned char)*p) || *p == '_') p++;
    size_t len = (size_t)(p - name);
    if (len == 0) return false;
    if (*p == '(') {
        const char *close = strchr(p, ')');
        if (!close || close[1]) return false;
    } else if (*p) {
        return false;
    }
    static const struct { const char *name; yolo_act act; } table[] = {
        {"SiLU", YOLO_ACT_SILU},         {"ReLU", YOLO_ACT_RELU},          {"Sigmoid", YOLO_ACT_SIGMOID},
        {"Identity", YOLO_ACT_IDENTITY}, {"Hardswish", YOLO_ACT_HARDSWISH}};
    *known = false;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strlen(table[i].name) == len && strncmp(name, table[i].name, len) == 0) {
            *act = table[i].act;
            *known = true;
        }
    return true;
}

yolo_status model_arg_from_scalar(const char *name, const char *text, bool quoted, int line, int column,
                                  model_arena *arena, yolo_arg *out) {
    memset(out, 0, sizeof(*out));
    out->line = line;
    out->column = column;
    out->s = model_arena_strdup(arena, text, strlen(text));
    if (!out->s) return yolo_error(YOLO_ERR_NOMEM, "%s:%d:%d: out of memory", name, line, column);
    bool plain = !quoted;
    if ((plain && (!*text || !strcmp(text, "~") || !strcmp(text, "null") || !strcmp(text, "Null") ||
                   !strcmp(text, "NULL"))) ||
        !strcmp(text, "None")) {
        out->kind = YOLO_ARG_NULL;
    } else if (!strcmp(text, "True") || !strcmp(text, "true") || !strcmp(text, "TRUE")) {
        out->kind = YOLO_ARG_BOOL, out->b = true;
    } else if (!strcmp(text, "False") || !strcmp(text, "false") || !strcmp(text, "FALSE")) {
        out->kind = YOLO_ARG_BOOL, out->b = false;
    } else if (parse_int(text, &out->i)) {
        out->kind = YOLO_ARG_INT, out->f = (double)out->i;
    } else if (parse_float(text, &out->f)) {
        out->kind = YOLO_ARG_FLOAT;
    } else {
        bool known;
        if (model_parse_activation(text, &out->act, &known)) {
            if (!known)
                return yolo_error(YOLO_ERR_UNSUPPORTED,
                                  "%s:%d:%d: activation '%s' is not built yet (built: " BUILT_ACTIVATIONS ")",
                                  name, line, column, text);
            out->kind = YOLO_ARG_ACT;
        } else {
            out->kind = YOLO_ARG_STRING;
        }
    }
    return YOLO_OK;
}

/* ---- document walking ---- */

typedef struct parse_state {
    const char *name;
    yaml_document_t *doc;
    model_spec *spec;
} parse_state;

static int line_of(const yaml_node_t *n) { return (int)n->start_mark.line + 1; }
static int col_of(const yaml_node_t *n) { return (int)n->start_mark.column + 1; }

static yolo_status fail_at(const parse_state *ps, const yaml_node_t *n, yolo_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static yolo_status fail_at(const parse_state *ps, const yaml_node_t *n, yolo_status status, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return yolo_error(status, "%s:%d:%d: %s", ps->name, line_of(n), col_of(n), msg);
}

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }
static bool is_quoted(const yaml_node_t *n) {
    return n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
           n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
}
static int seq_len(const yaml_node_t *n) { return (int)(n->data.sequence.items.top - n->data.sequence.items.start); }
static yaml_node_t *seq_item(const parse_state *ps, const yaml_node_t *n, int i) {
    return yaml_document_get_node(ps->doc, n->data.sequence.items.start[i]);
}

static yolo_status read_int(const parse_state *ps, const yaml_node_t *n, const char *what, int64_t *out) {
    if (n->type != YAML_SCALAR_NODE || !parse_int(scalar(n), out))
        return fail_at(ps, n, YOLO_ERR_FORMAT, "%s must be an integer, got %s", what,
                       n->type == YAML_SCALAR_NODE ? scalar(n) : "a collection");
    return YOLO_OK;
}

static yolo_status read_number(const parse_state *ps, const yaml_node_t *n, const char *what, double *out) {
    int64_t i;
    if (n->type == YAML_SCALAR_NODE && parse_int(scalar(n), &i)) {
        *out = (double)i;
        return YOLO_OK;
    }
    if (n->type != YAML_SCALAR_NODE || !parse_float(scalar(n), out))
        return fail_at(ps, n, YOLO_ERR_FORMAT, "%s must be a number, got %s", what,
                       n->type == YAML_SCALAR_NODE ? scalar(n) : "a collection");
    return YOLO_OK;
}

static yolo_status parse_arg(const parse_state *ps, const yaml_node_t *n, int depth, yolo_arg *out) {
    if (n->type == YAML_SCALAR_NODE)
        return model_arg_from_scalar(ps->name, scalar(n), is_quoted(n), line_of(n), col_of(n), &ps->spec->arena,
                                     out);
    if (n->type != YAML_SEQUENCE_NODE || depth > 0)
        return fail_at(ps, n, YOLO_ERR_FORMAT, "a module argument must be a scalar or a list of scalars");
    memset(out, 0, sizeof(*out));
    out->kind = YOLO_ARG_LIST;
    out->line = line_of(n);
    out->column = col_of(n);
    out->s = "[list]";
    int k = seq_len(n);
    yolo_arg *items = model_arena_alloc(&ps->spec->arena, sizeof(yolo_arg) * (size_t)(k ? k : 1));
    if (!items) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", ps->name);
    for (int i = 0; i < k; i++) {
        yolo_status st = parse_arg(ps, seq_item(ps, n, i), depth + 1, &items[i]);
        if (st) return st;
    }
    out->items = items;
    out->n_items = k;
    return YOLO_OK;
}

static yolo_status parse_row(const parse_state *ps, const yaml_node_t *n, int index, bool in_head, model_row *row) {
    if (n->type != YAML_SEQUENCE_NODE || seq_len(n) != 4)
        return fail_at(ps, n, YOLO_ERR_FORMAT, "layer %d must be a list [from, repeats, module, args]", index);
    row->line = line_of(n);
    row->column = col_of(n);
    row->in_head = in_head;
    /* from */
    yaml_node_t *from = seq_item(ps, n, 0);
    if (from->type == YAML_SEQUENCE_NODE) {
        row->from_list = true;
        row->n_from = seq_len(from);
        if (row->n_from < 1 || row->n_from > YOLO_MODULE_MAX_INPUTS)
            return fail_at(ps, from, YOLO_ERR_FORMAT, "layer %d: 'from' lists %d inputs (1 to %d allowed)", index,
                           row->n_from, YOLO_MODULE_MAX_INPUTS);
    } else {
        row->n_from = 1;
    }
    for (int i = 0; i < row->n_from; i++) {
        yaml_node_t *item = row->from_list ? seq_item(ps, from, i) : from;
        int64_t v;
        yolo_status st = read_int(ps, item, "'from'", &v);
        if (st) return st;
        int64_t abs = v < 0 ? index + v : v;
        bool ok = v < 0 ? (abs >= 0 || (index == 0 && v == -1 && row->n_from == 1)) : v < index;
        if (!ok)
            return fail_at(ps, item, YOLO_ERR_FORMAT, "layer %d: 'from' %lld does not name an earlier layer", index,
                           (long long)v);
        row->from[i] = (int)v;
    }
    /* repeats */
    int64_t rep;
    yolo_status st = read_int(ps, seq_item(ps, n, 1), "repeats", &rep);
    if (st) return st;
    if (rep < 1 || rep > 1000)
        return fail_at(ps, seq_item(ps, n, 1), YOLO_ERR_FORMAT, "layer %d: repeats %lld must be in [1, 1000]", index,
                       (long long)rep);
    row->repeats = (int)rep;
    /* module */
    yaml_node_t *mod = seq_item(ps, n, 2);
    if (mod->type != YAML_SCALAR_NODE || !*scalar(mod))
        return fail_at(ps, mod, YOLO_ERR_FORMAT, "layer %d: the module must be a name such as Conv", index);
    row->module = model_arena_strdup(&ps->spec->arena, scalar(mod), strlen(scalar(mod)));
    row->module_line = line_of(mod);
    row->module_column = col_of(mod);
    /* args */
    yaml_node_t *args = seq_item(ps, n, 3);
    if (args->type == YAML_SCALAR_NODE && !is_quoted(args) && !*scalar(args)) {
        row->n_args = 0; /* [-1, 1, Foo, ] or null */
    } else {
        if (args->type != YAML_SEQUENCE_NODE)
            return fail_at(ps, args, YOLO_ERR_FORMAT, "layer %d: args must be a list, e.g. [64, 3, 2]", index);
        row->n_args = seq_len(args);
        row->args = model_arena_alloc(&ps->spec->arena, sizeof(yolo_arg) * (size_t)(row->n_args ? row->n_args : 1));
        if (!row->args || !row->module) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", ps->name);
        for (int i = 0; i < row->n_args; i++) {
            st = parse_arg(ps, seq_item(ps, args, i), 0, &row->args[i]);
            if (st) return st;
        }
    }
    return YOLO_OK;
}

/* A depth or width multiple (of a scale, or YOLOv5's depth_multiple and
 * width_multiple) inside (0, MODEL_MULTIPLE_LIMIT]: channels and repeats
 * grow with it, and memory with their product. */
static yolo_status check_multiple(const parse_state *ps, const yaml_node_t *n, const char *scale, const char *key,
                                  double v) {
    if (v > 0 && v <= MODEL_MULTIPLE_LIMIT) return YOLO_OK;
    return fail_at(ps, n, YOLO_ERR_FORMAT, "%s%s%s%s %g is outside (0, %g] (Ultralytics' own are %s)",
                   scale ? "scales: " : "", scale ? scale : "", scale ? ": " : "", key, v, MODEL_MULTIPLE_LIMIT,
                   strncmp(key, "depth", 5) ? "0.25 to 1.5" : "0.33 to 1.33");
}

static yolo_status parse_scales(const parse_state *ps, const yaml_node_t *n) {
    if (n->type != YAML_MAPPING_NODE)
        return fail_at(ps, n, YOLO_ERR_FORMAT, "'scales' must map a letter to [depth, width, max_channels]");
    int count = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    model_spec *spec = ps->spec;
    /* a second 'scales:' replaces the first (PyYAML keeps the last duplicate
     * key); counting on from the first overran the new array */
    spec->n_scales = 0;
    spec->scales = model_arena_alloc(&spec->arena, sizeof(model_scale) * (size_t)(count ? count : 1));
    if (!spec->scales) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", ps->name);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(ps->doc, p->key), *v = yaml_document_get_node(ps->doc, p->value);
        if (k->type != YAML_SCALAR_NODE || strlen(scalar(k)) >= sizeof(spec->scales[0].letter) || !*scalar(k))
            return fail_at(ps, k, YOLO_ERR_FORMAT, "a scale name must be a short scalar such as n");
        if (v->type != YAML_SEQUENCE_NODE || seq_len(v) != 3)
            return fail_at(ps, v, YOLO_ERR_FORMAT, "scale '%s' must be [depth, width, max_channels]", scalar(k));
        model_scale *s = &spec->scales[spec->n_scales++];
        snprintf(s->letter, sizeof(s->letter), "%s", scalar(k));
        yolo_status st;
        if ((st = read_number(ps, seq_item(ps, v, 0), "depth", &s->depth)) ||
            (st = read_number(ps, seq_item(ps, v, 1), "width", &s->width)) ||
            (st = read_number(ps, seq_item(ps, v, 2), "max_channels", &s->max_channels)))
            return st;
        s->line = line_of(k);
        s->column = col_of(k);
        if ((st = check_multiple(ps, seq_item(ps, v, 0), s->letter, "depth", s->depth)) ||
            (st = check_multiple(ps, seq_item(ps, v, 1), s->letter, "width", s->width)))
            return st;
        if (!(s->max_channels >= 1 && s->max_channels <= MODEL_MAX_CHANNELS_LIMIT))
            return fail_at(ps, seq_item(ps, v, 2), YOLO_ERR_FORMAT,
                           "scales: %s: max_channels %g is outside [1, %d] (Ultralytics' scales use 512 to 1280)",
                           s->letter, s->max_channels, MODEL_MAX_CHANNELS_LIMIT);
    }
    return YOLO_OK;
}

static yolo_status parse_layers(const parse_state *ps, const yaml_node_t *n, const char *key, bool in_head) {
    if (n->type == YAML_SCALAR_NODE && !*scalar(n)) return YOLO_OK; /* "head:" with nothing */
    if (n->type != YAML_SEQUENCE_NODE)
        return fail_at(ps, n, YOLO_ERR_FORMAT, "'%s' must be a list of [from, repeats, module, args] rows", key);
    model_spec *spec = ps->spec;
    int k = seq_len(n);
    model_row *rows = model_arena_alloc(&spec->arena, sizeof(model_row) * (size_t)(spec->n_rows + k + 1));
    if (!rows) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", ps->name);
    if (spec->n_rows) memcpy(rows, spec->rows, sizeof(model_row) * (size_t)spec->n_rows);
    spec->rows = rows;
    for (int i = 0; i < k; i++) {
        yolo_status st = parse_row(ps, seq_item(ps, n, i), spec->n_rows, in_head, &spec->rows[spec->n_rows]);
        if (st) return st;
        spec->n_rows++;
    }
    return YOLO_OK;
}

static yolo_status parse_root(const parse_state *ps, const yaml_node_t *root) {
    model_spec *spec = ps->spec;
    if (root->type != YAML_MAPPING_NODE)
        return fail_at(ps, root, YOLO_ERR_FORMAT, "a model yaml must be a mapping with nc, scales, backbone, head");
    const yaml_node_t *backbone = NULL, *head = NULL;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(ps->doc, p->key), *v = yaml_document_get_node(ps->doc, p->value);
        if (k->type != YAML_SCALAR_NODE) return fail_at(ps, k, YOLO_ERR_FORMAT, "keys must be scalars");
        const char *key = scalar(k);
        yolo_status st = YOLO_OK;
        int64_t iv;
        if (!strcmp(key, "nc")) {
            if (!(st = read_int(ps, v, "nc", &iv))) {
                if (iv < 1 || iv > 1000000) return fail_at(ps, v, YOLO_ERR_FORMAT, "nc %lld must be >= 1", (long long)iv);
                spec->nc = (int)iv;
            }
        } else if (!strcmp(key, "ch") || !strcmp(key, "channels")) {
            if (!(st = read_int(ps, v, key, &iv))) {
                if (iv < 1 || iv > 4096) return fail_at(ps, v, YOLO_ERR_FORMAT, "%s %lld must be >= 1", key, (long long)iv);
                spec->ch = (int)iv;
            }
        } else if (!strcmp(key, "scales")) {
            st = parse_scales(ps, v);
        } else if (!strcmp(key, "depth_multiple")) {
            spec->has_multiples = true;
            if (!(st = read_number(ps, v, key, &spec->depth_multiple)))
                st = check_multiple(ps, v, NULL, key, spec->depth_multiple);
        } else if (!strcmp(key, "width_multiple")) {
            spec->has_multiples = true;
            if (!(st = read_number(ps, v, key, &spec->width_multiple)))
                st = check_multiple(ps, v, NULL, key, spec->width_multiple);
        } else if (!strcmp(key, "activation")) {
            if (v->type != YAML_SCALAR_NODE) return fail_at(ps, v, YOLO_ERR_FORMAT, "activation must be e.g. nn.ReLU()");
            if (!*scalar(v) || !strcmp(scalar(v), "null") || !strcmp(scalar(v), "None")) continue;
            bool known;
            if (!model_parse_activation(scalar(v), &spec->activation, &known))
                return fail_at(ps, v, YOLO_ERR_FORMAT, "activation '%s' is not of the form nn.ReLU()", scalar(v));
            if (!known)
                return fail_at(ps, v, YOLO_ERR_UNSUPPORTED,
                               "activation '%s' is not built yet (built: " BUILT_ACTIVATIONS ")",
                               scalar(v));
            spec->has_activation = true;
            spec->activation_text = model_arena_strdup(&spec->arena, scalar(v), strlen(scalar(v)));
        } else if (!strcmp(key, "reg_max")) { /* Ultralytics 8.4: YOLO26's 1 regresses boxes without DFL */
            if (!(st = read_int(ps, v, key, &iv))) {
                if (iv < 1 || iv > MODEL_REG_MAX_LIMIT)
                    return fail_at(ps, v, YOLO_ERR_FORMAT, "reg_max %lld must be 1..%d", (long long)iv,
                                   MODEL_REG_MAX_LIMIT);
                spec->reg_max = (int)iv;
            }
        } else if (!strcmp(key, "end2end")) { /* Ultralytics 8.4: YOLO26's NMS-free one-to-one head */
            const char *t = v->type == YAML_SCALAR_NODE ? scalar(v) : NULL;
            if (t && (!strcasecmp(t, "true")))
                spec->end2end = true;
            else if (!t || (strcasecmp(t, "false") && strcasecmp(t, "null") && strcasecmp(t, "none") && *t))
                return fail_at(ps, v, YOLO_ERR_FORMAT, "end2end must be True or False, got %s", t ? t : "(not a scalar)");
        } else if (!strcmp(key, "backbone")) {
            backbone = v;
        } else if (!strcmp(key, "head")) {
            head = v;
        }
        /* other keys (kpt_shape, yaml comments turned keys, ...) are not the builder's */
        if (st) return st;
    }
    if (!backbone) return fail_at(ps, root, YOLO_ERR_FORMAT, "no 'backbone' list");
    yolo_status st = parse_layers(ps, backbone, "backbone", false);
    if (!st && head) st = parse_layers(ps, head, "head", true);
    if (!st && spec->n_rows == 0) st = fail_at(ps, root, YOLO_ERR_FORMAT, "the model has no layers");
    return st;
}

yolo_status model_spec_parse(const char *name, const char *text, size_t size, model_spec *spec) {
    memset(spec, 0, sizeof(*spec));
    spec->nc = -1;
    spec->ch = 3;
    spec->reg_max = 16;
    spec->depth_multiple = spec->width_multiple = 1.0;
    spec->name = model_arena_strdup(&spec->arena, name, strlen(name));
    if (!spec->name) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", name);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        model_spec_free(spec);
        return yolo_error(YOLO_ERR_NOMEM, "%s: cannot initialise the yaml parser", name);
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    if (!yaml_parser_load(&parser, &doc)) {
        yolo_status st = yolo_error(YOLO_ERR_FORMAT, "%s:%d:%d: malformed yaml: %s%s%s", name,
                                    (int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1,
                                    parser.problem ? parser.problem : "error",
                                    parser.context ? " " : "", parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        model_spec_free(spec);
        return st;
    }
    yaml_parser_delete(&parser);
    yolo_status st;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        st = yolo_error(YOLO_ERR_FORMAT, "%s:1:1: empty model yaml", name);
    } else {
        parse_state ps = {name, &doc, spec};
        st = parse_root(&ps, root);
    }
    yaml_document_delete(&doc);
    if (st) model_spec_free(spec);
    return st;
}

void model_spec_free(model_spec *spec) {
    model_arena_free(&spec->arena);
    memset(spec, 0, sizeof(*spec));
}
