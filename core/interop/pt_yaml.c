/* The model yaml of a .pt (a pickled dict) written back as yaml text, in
 * flow style: scalars as Ultralytics' yaml held them (ints, floats, None,
 * bools, names such as Conv, nc or nn.Upsample), so the ordinary model
 * builder reads the architecture exactly as from the original file. One
 * row is rewritten: a bare SPPF row ([c2] or [c2, k]) whose pickled cv1 is
 * unactivated, which Ultralytics built so from January to September 2026
 * (its PR 26040), becomes [c2, k, 3, false], the 8.4 form that builds it
 * so here and in every checkpoint that keeps this yaml. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop/pt_internal.h"
#include "interop/strbuf.h"
#include "util/text_file.h"

#define MAX_NEST 8

/* A string as a plain scalar when it is a name-like token, else quoted. */
static bool plain_safe(const char *s, size_t len) {
    if (!len || strlen(s) != len) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_.()=-", c)))
            return false;
    }
    return true;
}

static yolo_status emit(strbuf *o, const yolo_pk_value *v, int depth, const char *what) {
    if (depth > MAX_NEST) return yolo_error(YOLO_ERR_FORMAT, "%s: the model yaml nests deeper than %d", what, MAX_NEST);
    /* memo GETs can list one list many times at every level: the text is
     * bounded as a yaml file is (each call writes at least a byte) */
    if (o->len > YOLO_TEXT_MAX)
        return yolo_error(YOLO_ERR_FORMAT, "%s: the model yaml it holds is larger than " YOLO_TEXT_MAX_TEXT
                          " as text (lists repeated by reference?)", what);
    char buf[96];
    switch (v->kind) {
    case YOLO_PK_NONE: strbuf_printf(o, "null"); return YOLO_OK;
    case YOLO_PK_BOOL: strbuf_printf(o, v->b ? "true" : "false"); return YOLO_OK;
    case YOLO_PK_INT: strbuf_printf(o, "%lld", (long long)v->i); return YOLO_OK;
    case YOLO_PK_FLOAT: {
        if (!isfinite(v->f)) return yolo_error(YOLO_ERR_FORMAT, "%s: the model yaml holds a non-finite number", what);
        char num[40];
        snprintf(num, sizeof num, "%.15g", v->f);
        if (strtod(num, NULL) != v->f) snprintf(num, sizeof num, "%.17g", v->f);
        strbuf_printf(o, "%s%s", num, strpbrk(num, ".eE") ? "" : ".0");
        return YOLO_OK;
    }
    case YOLO_PK_STR:
        if (plain_safe(v->s, v->len)) {
            strbuf_printf(o, "%s", v->s);
        } else {
            strbuf_printf(o, "\"");
            for (size_t i = 0; i < v->len; i++) {
                unsigned char c = (unsigned char)v->s[i];
                if (c == '"' || c == '\\') strbuf_printf(o, "\\%c", c);
                else if (c < 0x20) strbuf_printf(o, "\\x%02x", c);
                else strbuf_printf(o, "%c", c);
            }
            strbuf_printf(o, "\"");
        }
        return YOLO_OK;
    case YOLO_PK_LIST:
    case YOLO_PK_TUPLE:
        strbuf_printf(o, "[");
        for (size_t i = 0; i < v->n; i++) {
            if (i) strbuf_printf(o, ", ");
            yolo_status st = emit(o, v->items[i], depth + 1, what);
            if (st) return st;
        }
        strbuf_printf(o, "]");
        return YOLO_OK;
    case YOLO_PK_DICT:
        strbuf_printf(o, "{");
        for (size_t i = 0; i + 1 < v->n; i += 2) {
            if (i) strbuf_printf(o, ", ");
            if (v->items[i]->kind != YOLO_PK_STR && v->items[i]->kind != YOLO_PK_INT)
                return yolo_error(YOLO_ERR_FORMAT, "%s: the model yaml has a key that is %s", what,
                                  yolo_pk_describe(v->items[i], buf, sizeof buf));
            yolo_status st = emit(o, v->items[i], depth + 1, what);
            if (!st) strbuf_printf(o, ": ");
            if (!st) st = emit(o, v->items[i + 1], depth + 1, what);
            if (st) return st;
        }
        strbuf_printf(o, "}");
        return YOLO_OK;
    default:
        return yolo_error(YOLO_ERR_FORMAT, "%s: the model yaml holds %s, not a yaml value", what,
                          yolo_pk_describe(v, buf, sizeof buf));
    }
}

/* Whether layer `index`'s row is a bare SPPF row whose cv1 the file holds unactivated. */
static bool unactivated_bare_sppf(const yolo_pk_value *row, int index, const yolo_pt_model *pt) {
    if (row->kind != YOLO_PK_LIST || row->n != 4 || row->items[2]->kind != YOLO_PK_STR ||
        strcmp(row->items[2]->s, "SPPF") || row->items[3]->kind != YOLO_PK_LIST || row->items[3]->n < 1 ||
        row->items[3]->n > 2)
        return false;
    char cv1[48];
    snprintf(cv1, sizeof cv1, "model.%d.cv1", index);
    const char *act = yolo_pt_act_of(pt, cv1);
    return act && !strcmp(act, "Identity");
}

/* The rows of `backbone` or `head`, layer numbers from `first` on. */
static yolo_status emit_rows(strbuf *o, const yolo_pk_value *rows, int first, const yolo_pt_model *pt,
                             const char *what) {
    if (rows->kind != YOLO_PK_LIST) return emit(o, rows, 0, what);
    strbuf_printf(o, "[");
    for (size_t i = 0; i < rows->n; i++) {
        const yolo_pk_value *row = rows->items[i];
        if (i) strbuf_printf(o, ", ");
        if (!unactivated_bare_sppf(row, first + (int)i, pt)) {
            yolo_status st = emit(o, row, 1, what);
            if (st) return st;
            continue;
        }
        const yolo_pk_value *args = row->items[3];
        strbuf_printf(o, "[");
        for (int k = 0; k < 3; k++) {
            yolo_status st = emit(o, row->items[k], 2, what);
            if (st) return st;
            strbuf_printf(o, ", ");
        }
        strbuf_printf(o, "[");
        yolo_status st = emit(o, args->items[0], 3, what);
        strbuf_printf(o, ", ");
        if (!st && args->n > 1) st = emit(o, args->items[1], 3, what);
        else strbuf_printf(o, "5");
        if (st) return st;
        strbuf_printf(o, ", 3, false]]");
    }
    strbuf_printf(o, "]");
    return YOLO_OK;
}

yolo_status yolo_pt_yaml_text(const yolo_pk_value *yaml, const yolo_pt_model *pt, const char *what, char **text,
                              size_t *len) {
    *text = NULL;
    *len = 0;
    char buf[96];
    if (!yaml || yaml->kind != YOLO_PK_DICT)
        return yolo_error(YOLO_ERR_FORMAT, "%s: the model's `yaml` is %s, not the model yaml dict", what,
                          yolo_pk_describe(yaml, buf, sizeof buf));
    strbuf o = {0};
    yolo_status st = YOLO_OK;
    const yolo_pk_value *backbone = yolo_pk_dict_get(yaml, "backbone");
    const int n_backbone = backbone && backbone->kind == YOLO_PK_LIST ? (int)backbone->n : 0;
    /* one top-level key per line, so messages point at a line */
    for (size_t i = 0; !st && i + 1 < yaml->n; i += 2) {
        const yolo_pk_value *k = yaml->items[i];
        if (k->kind != YOLO_PK_STR) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s: the model yaml has a key that is %s", what,
                            yolo_pk_describe(k, buf, sizeof buf));
            break;
        }
        if (!plain_safe(k->s, k->len)) continue; /* not a key the builder reads */
        strbuf_printf(&o, "%s: ", k->s);
        if (!strcmp(k->s, "backbone"))
            st = emit_rows(&o, yaml->items[i + 1], 0, pt, what);
        else if (!strcmp(k->s, "head")) /* layer numbers go on from the backbone's */
            st = emit_rows(&o, yaml->items[i + 1], n_backbone, pt, what);
        else
            st = emit(&o, yaml->items[i + 1], 0, what);
        strbuf_printf(&o, "\n");
    }
    if (!st && o.oom) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what);
    if (st) {
        free(o.text);
        return st;
    }
    *text = o.text;
    *len = o.len;
    return YOLO_OK;
}
