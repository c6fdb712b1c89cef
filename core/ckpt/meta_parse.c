/* YAML text -> yolo_meta with libyaml's event parser (see meta.h). */
#include "ckpt/meta_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct frame {
    yolo_meta *node;
    char *key;       /* MAP: the pending key (NULL while a key is expected) */
    size_t key_len;
    size_t line;
} frame;

typedef struct pstate {
    const char *what;
    frame stack[YOLO_META_MAX_DEPTH + 1];
    int depth;
    yolo_meta *root;
} pstate;

static bool all_digits(const char *s, size_t n) {
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

/* YAML 1.2 core schema for a plain scalar. */
static yolo_status resolve_plain(pstate *p, const char *s, size_t n, size_t line, yolo_meta *m) {
    if (n == 0 || (n == 1 && s[0] == '~') || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL")) {
        m->kind = YOLO_META_NULL;
        return YOLO_OK;
    }
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) { m->kind = YOLO_META_BOOL; m->b = true; return YOLO_OK; }
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) { m->kind = YOLO_META_BOOL; m->b = false; return YOLO_OK; }
    size_t sign = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (all_digits(s + sign, n - sign)) {
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        if (errno == ERANGE)
            return yolo_error(YOLO_ERR_FORMAT, "%s: line %zu: integer %.40s is out of the 64-bit range", p->what, line, s);
        m->kind = YOLO_META_INT;
        m->i = v;
        return YOLO_OK;
    }
    const char *r = s + sign;
    if (!strcmp(r, ".inf") || !strcmp(r, ".Inf") || !strcmp(r, ".INF")) {
        m->kind = YOLO_META_FLOAT;
        m->f = s[0] == '-' ? -INFINITY : INFINITY;
        return YOLO_OK;
    }
    if (!sign && (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))) {
        m->kind = YOLO_META_FLOAT;
        m->f = NAN;
        return YOLO_OK;
    }
    /* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
    size_t i = sign, digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') { i++; digits++; }
    bool ok = true;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') { i++; digits++; }
    }
    if (digits == 0) ok = false;
    if (ok && i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n || s[i] < '0' || s[i] > '9') ok = false;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (ok && i == n) {
        m->kind = YOLO_META_FLOAT;
        m->f = strtod(s, NULL);
        return YOLO_OK;
    }
    m->kind = YOLO_META_STR;
    m->s = malloc(n + 1);
    if (!m->s) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", p->what);
    memcpy(m->s, s, n + 1);
    return YOLO_OK;
}

static int cmp_keyp(const void *a, const void *b) { return strcmp(**(char *const *const *)a, **(char *const *const *)b); }

static yolo_status check_dup_keys(pstate *p, const yolo_meta *m, size_t line) {
    if (m->n < 2) return YOLO_OK;
    char *const **idx = malloc(m->n * sizeof *idx);
    if (!idx) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", p->what);
    for (size_t i = 0; i < m->n; i++) idx[i] = &m->keys[i];
    qsort(idx, m->n, sizeof *idx, cmp_keyp);
    yolo_status st = YOLO_OK;
    for (size_t i = 1; i < m->n && !st; i++)
        if (strcmp(*idx[i - 1], *idx[i]) == 0)
            st = yolo_error(YOLO_ERR_FORMAT, "%s: duplicate key '%.200s' in the map starting at line %zu", p->what,
                            *idx[i], line);
    free(idx);
    return st;
}

/* Adds a finished node to the current container (or makes it the root). */
static yolo_status attach(pstate *p, yolo_meta *node, size_t line) {
    if (p->depth == 0) {
        if (p->root) { meta_node_free(node); return yolo_error(YOLO_ERR_FORMAT, "%s: line %zu: more than one root value", p->what, line); }
        p->root = node;
        return YOLO_OK;
    }
    frame *f = &p->stack[p->depth - 1];
    if (f->node->kind == YOLO_META_LIST) return meta_push(f->node, NULL, 0, node);
    if (!f->key) { /* this node is a key */
        if (node->kind != YOLO_META_STR) {
            meta_node_free(node);
            return yolo_error(YOLO_ERR_FORMAT, "%s: line %zu: a map key must be a scalar", p->what, line);
        }
        f->key = node->s;
        f->key_len = strlen(node->s);
        node->s = NULL;
        meta_node_free(node);
        return YOLO_OK;
    }
    yolo_status st = meta_push(f->node, f->key, f->key_len, node);
    free(f->key);
    f->key = NULL;
    return st;
}

static yolo_status on_scalar(pstate *p, const yaml_event_t *ev) {
    size_t line = ev->start_mark.line + 1;
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (strlen(s) != n) return yolo_error(YOLO_ERR_FORMAT, "%s: line %zu: NUL character in a scalar", p->what, line);
    yolo_meta *m = meta_node_new(YOLO_META_STR);
    if (!m) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", p->what);
    bool is_key = p->depth > 0 && p->stack[p->depth - 1].node->kind == YOLO_META_MAP && !p->stack[p->depth - 1].key;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !(tag && !strcmp(tag, YAML_STR_TAG));
    yolo_status st = YOLO_OK;
    if (plain && !is_key) {
        st = resolve_plain(p, s, n, line, m);
    } else {
        m->s = malloc(n + 1);
        if (!m->s) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", p->what);
        else memcpy(m->s, s, n + 1);
    }
    if (st) { meta_node_free(m); return st; }
    return attach(p, m, line);
}

static yolo_status on_start(pstate *p, yolo_meta_kind kind, size_t line) {
    if (p->depth > 0) {
        frame *f = &p->stack[p->depth - 1];
        if (f->node->kind == YOLO_META_MAP && !f->key)
            return yolo_error(YOLO_ERR_FORMAT, "%s: line %zu: a map key must be a scalar", p->what, line);
    }
    if (p->depth >= YOLO_META_MAX_DEPTH)
        return yolo_error(YOLO_ERR_FORMAT, "%s: line %zu: nesting deeper than %d", p->what, line, YOLO_META_MAX_DEPTH);
    yolo_meta *m = meta_node_new(kind);
    if (!m) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", p->what);
    p->stack[p->depth++] = (frame){.node = m, .line = line};
    return YOLO_OK;
}

static yolo_status on_end(pstate *p) {
    frame f = p->stack[--p->depth];
    free(f.key); /* cannot be pending at a well-formed end */
    yolo_status st = f.node->kind == YOLO_META_MAP ? check_dup_keys(p, f.node, f.line) : YOLO_OK;
    if (st) { meta_node_free(f.node); return st; }
    return attach(p, f.node, f.line);
}

yolo_status yolo_meta_parse(const char *text, size_t len, const char *what, yolo_meta **out) {
    *out = NULL;
    pstate p = {.what = what ? what : "meta.yaml"};
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", p.what);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yolo_status st = YOLO_OK;
    int documents = 0;
    for (bool done = false; !done && !st;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s: line %zu: %s", p.what, (size_t)parser.problem_mark.line + 1,
                            parser.problem ? parser.problem : "YAML syntax error");
            break;
        }
        size_t line = ev.start_mark.line + 1;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++documents > 1) st = yolo_error(YOLO_ERR_FORMAT, "%s: line %zu: more than one YAML document", p.what, line);
            break;
        case YAML_ALIAS_EVENT:
            st = yolo_error(YOLO_ERR_FORMAT, "%s: line %zu: aliases are not allowed", p.what, line);
            break;
        case YAML_SCALAR_EVENT: st = on_scalar(&p, &ev); break;
        case YAML_SEQUENCE_START_EVENT: st = on_start(&p, YOLO_META_LIST, line); break;
        case YAML_MAPPING_START_EVENT: st = on_start(&p, YOLO_META_MAP, line); break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: st = on_end(&p); break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    while (p.depth > 0) {
        frame *f = &p.stack[--p.depth];
        free(f->key);
        meta_node_free(f->node);
    }
    if (!st && !p.root) st = yolo_error(YOLO_ERR_FORMAT, "%s: empty document (a map was expected)", p.what);
    if (!st && p.root->kind != YOLO_META_MAP)
        st = yolo_error(YOLO_ERR_FORMAT, "%s: the document is %s, not a map", p.what, yolo_meta_kind_name(p.root->kind));
    if (st) {
        meta_node_free(p.root);
        return st;
    }
    *out = p.root;
    return YOLO_OK;
}
