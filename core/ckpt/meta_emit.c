/* yolo_meta -> block YAML (see meta.h for the guarantees). */
#include "ckpt/meta_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/grow_buf.h"

typedef yolo_grow_buf obuf;

static void put(obuf *b, const char *s, size_t n) { yolo_grow_buf_put(b, s, n); }
static void puts_(obuf *b, const char *s) { yolo_grow_buf_puts(b, s); }
static void pad(obuf *b, int n) {
    for (int i = 0; i < n; i++) put(b, " ", 1);
}

/* Shortest "%.*g" that reads back to the same double, with a '.' so that
 * YAML 1.1 (PyYAML) and 1.2 both type it as a float. */
static void fmt_float(double v, char *buf, size_t size) {
    if (isnan(v)) { snprintf(buf, size, ".nan"); return; }
    if (isinf(v)) { snprintf(buf, size, v > 0 ? ".inf" : "-.inf"); return; }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strchr(buf, '.')) {
        char *e = strchr(buf, 'e');
        char tail[32] = "";
        if (e) { snprintf(tail, sizeof tail, "%s", e); *e = '\0'; }
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, ".0%s", tail);
    }
}

/* Double-quoted, escaping what YAML would fold or refuse to read back:
 * C0/C1 controls, DEL, the line breaks NEL/LS/PS, the BOM, U+FFFE/U+FFFF.
 * `s` is valid UTF-8 (checked when it entered the tree). */
static void put_quoted(obuf *b, const char *s) {
    put(b, "\"", 1);
    const unsigned char *c = (const unsigned char *)s;
    while (*c) {
        char esc[16];
        uint32_t cp = *c;
        size_t len = 1;
        if (cp >= 0xF0) { cp = ((cp & 0x07u) << 18) | ((c[1] & 0x3Fu) << 12) | ((c[2] & 0x3Fu) << 6) | (c[3] & 0x3Fu); len = 4; }
        else if (cp >= 0xE0) { cp = ((cp & 0x0Fu) << 12) | ((c[1] & 0x3Fu) << 6) | (c[2] & 0x3Fu); len = 3; }
        else if (cp >= 0xC0) { cp = ((cp & 0x1Fu) << 6) | (c[1] & 0x3Fu); len = 2; }
        switch (cp) {
        case '"': puts_(b, "\\\""); break;
        case '\\': puts_(b, "\\\\"); break;
        case '\n': puts_(b, "\\n"); break;
        case '\t': puts_(b, "\\t"); break;
        case '\r': puts_(b, "\\r"); break;
        case 0x85: puts_(b, "\\N"); break;
        case 0x2028: puts_(b, "\\L"); break;
        case 0x2029: puts_(b, "\\P"); break;
        default:
            if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
                snprintf(esc, sizeof esc, "\\x%02X", (unsigned)cp);
                puts_(b, esc);
            } else if (cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF) {
                snprintf(esc, sizeof esc, "\\u%04X", (unsigned)cp);
                puts_(b, esc);
            } else {
                put(b, (const char *)c, len);
            }
        }
        c += len;
    }
    put(b, "\"", 1);
}

static bool plain_key_ok(const char *k) {
    static const char *const reserved[] = {"null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf"};
    if (!((k[0] >= 'A' && k[0] <= 'Z') || (k[0] >= 'a' && k[0] <= 'z') || k[0] == '_')) return false;
    for (const char *c = k; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' ||
              *c == '.' || *c == '/' || *c == '-' || *c == '(' || *c == ')'))
            return false;
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strcasecmp(k, reserved[i]) == 0) return false;
    return true;
}

static void put_scalar(obuf *b, const yolo_meta *v) {
    char t[64];
    switch (v->kind) {
    case YOLO_META_NULL: puts_(b, "null"); break;
    case YOLO_META_BOOL: puts_(b, v->b ? "true" : "false"); break;
    case YOLO_META_INT: snprintf(t, sizeof t, "%" PRId64, v->i); puts_(b, t); break;
    case YOLO_META_FLOAT: fmt_float(v->f, t, sizeof t); puts_(b, t); break;
    case YOLO_META_STR: put_quoted(b, v->s); break;
    default: break;
    }
}

static void emit_map(obuf *b, const yolo_meta *m, int indent, bool inline_first);
static void emit_list(obuf *b, const yolo_meta *l, int indent, bool inline_first);

static bool is_container(const yolo_meta *v) { return v->kind == YOLO_META_MAP || v->kind == YOLO_META_LIST; }

static void emit_after_key(obuf *b, const yolo_meta *v, int indent) {
    if (!is_container(v)) {
        put(b, " ", 1);
        put_scalar(b, v);
        put(b, "\n", 1);
    } else if (v->n == 0) {
        puts_(b, v->kind == YOLO_META_MAP ? " {}\n" : " []\n");
    } else {
        put(b, "\n", 1);
        if (v->kind == YOLO_META_MAP) emit_map(b, v, indent + 2, false);
        else emit_list(b, v, indent + 2, false);
    }
}

/* YAML limits implicit keys to 1024 characters; longer keys are written
 * in the explicit form "? key\n: value". */
#define IMPLICIT_KEY_MAX 1000

static void emit_map(obuf *b, const yolo_meta *m, int indent, bool inline_first) {
    for (size_t i = 0; i < m->n; i++) {
        if (i || !inline_first) pad(b, indent);
        obuf key = {0};
        if (plain_key_ok(m->keys[i])) puts_(&key, m->keys[i]);
        else put_quoted(&key, m->keys[i]);
        if (key.oom) b->oom = true;
        else if (key.n > IMPLICIT_KEY_MAX) {
            put(b, "? ", 2);
            put(b, key.p, key.n);
            put(b, "\n", 1);
            pad(b, indent);
        } else {
            put(b, key.p, key.n);
        }
        free(key.p);
        put(b, ":", 1);
        emit_after_key(b, m->vals[i], indent);
    }
}

static void emit_list(obuf *b, const yolo_meta *l, int indent, bool inline_first) {
    for (size_t i = 0; i < l->n; i++) {
        const yolo_meta *v = l->vals[i];
        if (i || !inline_first) pad(b, indent);
        put(b, "-", 1);
        if (!is_container(v) || v->n == 0) {
            emit_after_key(b, v, indent);
        } else {
            put(b, " ", 1);
            if (v->kind == YOLO_META_MAP) emit_map(b, v, indent + 2, true);
            else emit_list(b, v, indent + 2, true);
        }
    }
}

yolo_status yolo_meta_to_yaml(const yolo_meta *root, char **text, size_t *len) {
    *text = NULL;
    if (len) *len = 0;
    if (!root || root->kind != YOLO_META_MAP) return yolo_error(YOLO_ERR_ARG, "meta: the root must be a map");
    obuf b = {0};
    if (root->n == 0) puts_(&b, "{}\n");
    else emit_map(&b, root, 0, false);
    if (b.oom || !b.p) {
        free(b.p);
        return yolo_error(YOLO_ERR_NOMEM, "meta: out of memory writing YAML");
    }
    *text = b.p;
    if (len) *len = b.n;
    return YOLO_OK;
}
