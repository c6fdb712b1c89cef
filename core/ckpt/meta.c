/* yolo_meta: the value tree, typed lookups and the YAML emitter (meta.h). */
#include "ckpt/meta_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/json.h"

yolo_meta *meta_node_new(yolo_meta_kind kind) {
    yolo_meta *m = calloc(1, sizeof *m);
    if (m) m->kind = kind;
    return m;
}

void meta_node_free(yolo_meta *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        if (m->keys) free(m->keys[i]);
        meta_node_free(m->vals[i]);
    }
    free(m->keys);
    free(m->vals);
    free(m->s);
    free(m);
}

yolo_meta *yolo_meta_new_map(void) {
    yolo_meta *m = meta_node_new(YOLO_META_MAP);
    if (!m) yolo_error(YOLO_ERR_NOMEM, "meta: out of memory");
    return m;
}

void yolo_meta_free(yolo_meta *root) { meta_node_free(root); }

yolo_status meta_push(yolo_meta *c, const char *key, size_t key_len, yolo_meta *node) {
    if (!node) return yolo_error(YOLO_ERR_NOMEM, "meta: out of memory");
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        yolo_meta **vals = realloc(c->vals, cap * sizeof *vals);
        if (!vals) { meta_node_free(node); return yolo_error(YOLO_ERR_NOMEM, "meta: out of memory"); }
        c->vals = vals;
        if (c->kind == YOLO_META_MAP) {
            char **keys = realloc(c->keys, cap * sizeof *keys);
            if (!keys) { meta_node_free(node); return yolo_error(YOLO_ERR_NOMEM, "meta: out of memory"); }
            c->keys = keys;
        }
        c->cap = cap;
    }
    if (c->kind == YOLO_META_MAP) {
        char *k = malloc(key_len + 1);
        if (!k) { meta_node_free(node); return yolo_error(YOLO_ERR_NOMEM, "meta: out of memory"); }
        memcpy(k, key, key_len);
        k[key_len] = '\0';
        c->keys[c->n] = k;
    }
    c->vals[c->n++] = node;
    return YOLO_OK;
}

static yolo_meta *meta_clone(const yolo_meta *v) {
    yolo_meta *m = meta_node_new(v->kind);
    if (!m) return NULL;
    m->b = v->b;
    m->i = v->i;
    m->f = v->f;
    if (v->s && !(m->s = strdup(v->s))) { meta_node_free(m); return NULL; }
    for (size_t i = 0; i < v->n; i++) {
        const char *k = v->kind == YOLO_META_MAP ? v->keys[i] : NULL;
        if (meta_push(m, k, k ? strlen(k) : 0, meta_clone(v->vals[i]))) { meta_node_free(m); return NULL; }
    }
    return m;
}

/* Puts node at key (replacing in place) or appends; takes ownership. */
static yolo_status map_put(yolo_meta *map, const char *key, yolo_meta *node) {
    if (!node) return yolo_error(YOLO_ERR_NOMEM, "meta: out of memory");
    if (!map || map->kind != YOLO_META_MAP) {
        meta_node_free(node);
        return yolo_error(YOLO_ERR_ARG, "meta: setting key '%s' on something that is not a map", key ? key : "(null)");
    }
    if (!key || !yolo_json_valid_utf8(key, strlen(key))) {
        meta_node_free(node);
        return yolo_error(YOLO_ERR_ARG, "meta: a key is NULL or not valid UTF-8");
    }
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0) {
            meta_node_free(map->vals[i]);
            map->vals[i] = node;
            return YOLO_OK;
        }
    return meta_push(map, key, strlen(key), node);
}

static yolo_status list_put(yolo_meta *list, yolo_meta *node) {
    if (!node) return yolo_error(YOLO_ERR_NOMEM, "meta: out of memory");
    if (!list || list->kind != YOLO_META_LIST) {
        meta_node_free(node);
        return yolo_error(YOLO_ERR_ARG, "meta: appending to something that is not a list");
    }
    return meta_push(list, NULL, 0, node);
}

static yolo_meta *scalar(yolo_meta_kind kind, bool b, int64_t i, double f) {
    yolo_meta *m = meta_node_new(kind);
    if (m) { m->b = b; m->i = i; m->f = f; }
    return m;
}

static yolo_meta *str_node(const char *v, yolo_status *st) {
    *st = YOLO_OK;
    if (!v || !yolo_json_valid_utf8(v, strlen(v))) {
        *st = yolo_error(YOLO_ERR_ARG, "meta: a string value is NULL or not valid UTF-8");
        return NULL;
    }
    yolo_meta *m = meta_node_new(YOLO_META_STR);
    if (m && !(m->s = strdup(v))) { free(m); m = NULL; }
    if (!m) *st = yolo_error(YOLO_ERR_NOMEM, "meta: out of memory");
    return m;
}

yolo_status yolo_meta_set_null(yolo_meta *map, const char *key) { return map_put(map, key, scalar(YOLO_META_NULL, 0, 0, 0)); }
yolo_status yolo_meta_set_bool(yolo_meta *map, const char *key, bool v) { return map_put(map, key, scalar(YOLO_META_BOOL, v, 0, 0)); }
yolo_status yolo_meta_set_int(yolo_meta *map, const char *key, int64_t v) { return map_put(map, key, scalar(YOLO_META_INT, 0, v, 0)); }
yolo_status yolo_meta_set_float(yolo_meta *map, const char *key, double v) { return map_put(map, key, scalar(YOLO_META_FLOAT, 0, 0, v)); }
yolo_status yolo_meta_set_str(yolo_meta *map, const char *key, const char *v) {
    yolo_status st;
    yolo_meta *m = str_node(v, &st);
    return m ? map_put(map, key, m) : st;
}
yolo_status yolo_meta_set_copy(yolo_meta *map, const char *key, const yolo_meta *value) {
    if (!value) return yolo_error(YOLO_ERR_ARG, "meta: copying NULL into key '%s'", key ? key : "(null)");
    return map_put(map, key, meta_clone(value));
}
yolo_meta *yolo_meta_set_map(yolo_meta *map, const char *key) {
    yolo_meta *m = meta_node_new(YOLO_META_MAP);
    return map_put(map, key, m) ? NULL : m;
}
yolo_meta *yolo_meta_set_list(yolo_meta *map, const char *key) {
    yolo_meta *m = meta_node_new(YOLO_META_LIST);
    return map_put(map, key, m) ? NULL : m;
}

yolo_status yolo_meta_append_null(yolo_meta *list) { return list_put(list, scalar(YOLO_META_NULL, 0, 0, 0)); }
yolo_status yolo_meta_append_bool(yolo_meta *list, bool v) { return list_put(list, scalar(YOLO_META_BOOL, v, 0, 0)); }
yolo_status yolo_meta_append_int(yolo_meta *list, int64_t v) { return list_put(list, scalar(YOLO_META_INT, 0, v, 0)); }
yolo_status yolo_meta_append_float(yolo_meta *list, double v) { return list_put(list, scalar(YOLO_META_FLOAT, 0, 0, v)); }
yolo_status yolo_meta_append_str(yolo_meta *list, const char *v) {
    yolo_status st;
    yolo_meta *m = str_node(v, &st);
    return m ? list_put(list, m) : st;
}
yolo_status yolo_meta_append_copy(yolo_meta *list, const yolo_meta *value) {
    if (!value) return yolo_error(YOLO_ERR_ARG, "meta: appending a copy of NULL");
    return list_put(list, meta_clone(value));
}
yolo_meta *yolo_meta_append_map(yolo_meta *list) {
    yolo_meta *m = meta_node_new(YOLO_META_MAP);
    return list_put(list, m) ? NULL : m;
}
yolo_meta *yolo_meta_append_list(yolo_meta *list) {
    yolo_meta *m = meta_node_new(YOLO_META_LIST);
    return list_put(list, m) ? NULL : m;
}

void yolo_meta_remove(yolo_meta *map, const char *key) {
    if (!map || map->kind != YOLO_META_MAP) return;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0) {
            free(map->keys[i]);
            meta_node_free(map->vals[i]);
            memmove(&map->keys[i], &map->keys[i + 1], (map->n - i - 1) * sizeof *map->keys);
            memmove(&map->vals[i], &map->vals[i + 1], (map->n - i - 1) * sizeof *map->vals);
            map->n--;
            return;
        }
}

/* ---- reading ---- */
yolo_meta_kind yolo_meta_kind_of(const yolo_meta *m) { return m ? m->kind : YOLO_META_NULL; }

const char *yolo_meta_kind_name(yolo_meta_kind kind) {
    switch (kind) {
    case YOLO_META_NULL: return "null";
    case YOLO_META_BOOL: return "a boolean";
    case YOLO_META_INT: return "an integer";
    case YOLO_META_FLOAT: return "a float";
    case YOLO_META_STR: return "a string";
    case YOLO_META_MAP: return "a map";
    case YOLO_META_LIST: return "a list";
    }
    return "?";
}

size_t yolo_meta_size(const yolo_meta *m) {
    return m && (m->kind == YOLO_META_MAP || m->kind == YOLO_META_LIST) ? m->n : 0;
}
const char *yolo_meta_key_at(const yolo_meta *map, size_t i) {
    return map && map->kind == YOLO_META_MAP && i < map->n ? map->keys[i] : NULL;
}
const yolo_meta *yolo_meta_at(const yolo_meta *m, size_t i) {
    return m && (m->kind == YOLO_META_MAP || m->kind == YOLO_META_LIST) && i < m->n ? m->vals[i] : NULL;
}
yolo_meta *yolo_meta_get_mut(yolo_meta *map, const char *key) {
    if (!map || map->kind != YOLO_META_MAP || !key) return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0) return map->vals[i];
    return NULL;
}
const yolo_meta *yolo_meta_get(const yolo_meta *map, const char *key) {
    return yolo_meta_get_mut((yolo_meta *)map, key);
}

bool yolo_meta_bool(const yolo_meta *m) { return m && m->kind == YOLO_META_BOOL && m->b; }
int64_t yolo_meta_int(const yolo_meta *m) { return m && m->kind == YOLO_META_INT ? m->i : 0; }
double yolo_meta_float(const yolo_meta *m) {
    if (!m) return 0;
    return m->kind == YOLO_META_FLOAT ? m->f : m->kind == YOLO_META_INT ? (double)m->i : 0;
}
const char *yolo_meta_str(const yolo_meta *m) { return m && m->kind == YOLO_META_STR ? m->s : NULL; }

static yolo_status typed(const yolo_meta *map, const char *key, const char *what, yolo_meta_kind want,
                         const yolo_meta **out) {
    const yolo_meta *v = yolo_meta_get(map, key);
    if (!v) return yolo_error(YOLO_ERR_FORMAT, "%s: required key '%s' is missing", what, key);
    if (v->kind != want && !(want == YOLO_META_FLOAT && v->kind == YOLO_META_INT))
        return yolo_error(YOLO_ERR_FORMAT, "%s: key '%s' is %s, expected %s", what, key, yolo_meta_kind_name(v->kind),
                          yolo_meta_kind_name(want));
    *out = v;
    return YOLO_OK;
}

yolo_status yolo_meta_get_int(const yolo_meta *map, const char *key, const char *what, int64_t *out) {
    const yolo_meta *v = NULL;
    yolo_status st = typed(map, key, what, YOLO_META_INT, &v);
    if (!st) *out = v->i;
    return st;
}
yolo_status yolo_meta_get_float(const yolo_meta *map, const char *key, const char *what, double *out) {
    const yolo_meta *v = NULL;
    yolo_status st = typed(map, key, what, YOLO_META_FLOAT, &v);
    if (!st) *out = yolo_meta_float(v);
    return st;
}
yolo_status yolo_meta_get_bool(const yolo_meta *map, const char *key, const char *what, bool *out) {
    const yolo_meta *v = NULL;
    yolo_status st = typed(map, key, what, YOLO_META_BOOL, &v);
    if (!st) *out = v->b;
    return st;
}
yolo_status yolo_meta_get_str(const yolo_meta *map, const char *key, const char *what, const char **out) {
    const yolo_meta *v = NULL;
    yolo_status st = typed(map, key, what, YOLO_META_STR, &v);
    if (!st) *out = v->s;
    return st;
}
yolo_status yolo_meta_get_map(const yolo_meta *map, const char *key, const char *what, const yolo_meta **out) {
    return typed(map, key, what, YOLO_META_MAP, out);
}
yolo_status yolo_meta_get_list(const yolo_meta *map, const char *key, const char *what, const yolo_meta **out) {
    return typed(map, key, what, YOLO_META_LIST, out);
}

bool yolo_meta_equal(const yolo_meta *a, const yolo_meta *b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case YOLO_META_NULL: return true;
    case YOLO_META_BOOL: return a->b == b->b;
    case YOLO_META_INT: return a->i == b->i;
    case YOLO_META_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0 || (isnan(a->f) && isnan(b->f));
    case YOLO_META_STR: return strcmp(a->s, b->s) == 0;
    case YOLO_META_MAP:
    case YOLO_META_LIST:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++) {
            if (a->kind == YOLO_META_MAP && strcmp(a->keys[i], b->keys[i]) != 0) return false;
            if (!yolo_meta_equal(a->vals[i], b->vals[i])) return false;
        }
        return true;
    }
    return false;
}
