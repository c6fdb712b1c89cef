/* Strict recursive-descent JSON parser (see json.h). */
#include "ckpt/json.h"

#include <stdlib.h>
#include <string.h>

typedef struct jparser {
    const char *t;
    size_t len, pos;
    const char *what;
} jparser;

static yolo_status jerr(const jparser *p, const char *msg) {
    if (p->pos >= p->len)
        return yolo_error(YOLO_ERR_FORMAT, "%s: JSON header: %s at the end of the header (byte %zu)", p->what, msg,
                          p->pos);
    unsigned char c = (unsigned char)p->t[p->pos];
    if (c >= 0x20 && c < 0x7F)
        return yolo_error(YOLO_ERR_FORMAT, "%s: JSON header: %s at byte %zu ('%c')", p->what, msg, p->pos, c);
    return yolo_error(YOLO_ERR_FORMAT, "%s: JSON header: %s at byte %zu (0x%02X)", p->what, msg, p->pos, c);
}

static void skip_ws(jparser *p) {
    while (p->pos < p->len) {
        char c = p->t[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static void json_clear(yolo_json *v) {
    if (!v) return;
    free(v->s);
    for (size_t i = 0; i < v->n; i++) {
        json_clear(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

void yolo_json_free(yolo_json *v) {
    json_clear(v);
    free(v);
}

const char *yolo_json_kind_name(yolo_json_kind kind) {
    switch (kind) {
    case YOLO_JSON_NULL: return "null";
    case YOLO_JSON_BOOL: return "a boolean";
    case YOLO_JSON_NUMBER: return "a number";
    case YOLO_JSON_STRING: return "a string";
    case YOLO_JSON_ARRAY: return "an array";
    case YOLO_JSON_OBJECT: return "an object";
    }
    return "?";
}

const yolo_json *yolo_json_get(const yolo_json *obj, const char *key) {
    if (!obj || obj->kind != YOLO_JSON_OBJECT) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool read_hex4(jparser *p, unsigned *out) {
    if (p->len - p->pos < 4) return false;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p->t[p->pos + (size_t)i]);
        if (h < 0) return false;
        v = v * 16u + (unsigned)h;
    }
    p->pos += 4;
    *out = v;
    return true;
}

/* Length of the valid UTF-8 sequence at s (n bytes available), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1Fu; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0Fu; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07u; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0u) != 0x80u) return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return len;
}

bool yolo_json_valid_utf8(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t k = utf8_seq((const unsigned char *)s + i, n - i);
        if (k == 0) return false;
        i += k;
    }
    return true;
}

static size_t put_utf8(char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* At the opening quote. The decoded string is never longer than the raw one. */
static yolo_status parse_string(jparser *p, char **out) {
    p->pos++; /* '"' */
    size_t start = p->pos, end = start;
    while (end < p->len && p->t[end] != '"') end += (p->t[end] == '\\' && end + 1 < p->len) ? 2 : 1;
    if (end >= p->len) {
        p->pos = p->len;
        return jerr(p, "unterminated string");
    }
    char *s = malloc(end - start + 1);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "%s: JSON header: out of memory", p->what);
    size_t o = 0;
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->t[p->pos];
        if (c < 0x20) { free(s); return jerr(p, "control character in string"); }
        if (c == '\\') {
            p->pos++;
            char e = p->t[p->pos++];
            switch (e) {
            case '"': s[o++] = '"'; break;
            case '\\': s[o++] = '\\'; break;
            case '/': s[o++] = '/'; break;
            case 'b': s[o++] = '\b'; break;
            case 'f': s[o++] = '\f'; break;
            case 'n': s[o++] = '\n'; break;
            case 'r': s[o++] = '\r'; break;
            case 't': s[o++] = '\t'; break;
            case 'u': {
                unsigned u, lo;
                if (!read_hex4(p, &u)) { free(s); return jerr(p, "bad \\u escape"); }
                uint32_t cp = u;
                if (u >= 0xDC00 && u <= 0xDFFF) { free(s); return jerr(p, "lone low surrogate in \\u escape"); }
                if (u >= 0xD800 && u <= 0xDBFF) {
                    if (p->pos + 2 > end || p->t[p->pos] != '\\' || p->t[p->pos + 1] != 'u') {
                        free(s);
                        return jerr(p, "lone high surrogate in \\u escape");
                    }
                    p->pos += 2;
                    if (!read_hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                        free(s);
                        return jerr(p, "bad low surrogate in \\u escape");
                    }
                    cp = 0x10000u + ((u - 0xD800u) << 10) + (lo - 0xDC00u);
                }
                if (cp == 0) { free(s); return jerr(p, "\\u0000 in string"); }
                if (p->pos > end) { free(s); return jerr(p, "bad \\u escape"); }
                o += put_utf8(s + o, cp);
                break;
            }
            default:
                p->pos--;
                free(s);
                return jerr(p, "unknown escape in string");
            }
            continue;
        }
        size_t n = utf8_seq((const unsigned char *)p->t + p->pos, end - p->pos);
        if (n == 0) { free(s); return jerr(p, "invalid UTF-8 in string"); }
        memcpy(s + o, p->t + p->pos, n);
        o += n;
        p->pos += n;
    }
    s[o] = '\0';
    p->pos = end + 1;
    *out = s;
    return YOLO_OK;
}

static yolo_status parse_number(jparser *p, yolo_json *v) {
    size_t start = p->pos;
    bool neg = false, integral = true;
    if (p->t[p->pos] == '-') { neg = true; p->pos++; }
    if (p->pos >= p->len || p->t[p->pos] < '0' || p->t[p->pos] > '9') return jerr(p, "bad number");
    if (p->t[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->len && p->t[p->pos] >= '0' && p->t[p->pos] <= '9') return jerr(p, "leading zero in number");
    } else {
        while (p->pos < p->len && p->t[p->pos] >= '0' && p->t[p->pos] <= '9') p->pos++;
    }
    size_t int_end = p->pos;
    if (p->pos < p->len && p->t[p->pos] == '.') {
        integral = false;
        p->pos++;
        if (p->pos >= p->len || p->t[p->pos] < '0' || p->t[p->pos] > '9') return jerr(p, "digit expected after '.'");
        while (p->pos < p->len && p->t[p->pos] >= '0' && p->t[p->pos] <= '9') p->pos++;
    }
    if (p->pos < p->len && (p->t[p->pos] == 'e' || p->t[p->pos] == 'E')) {
        integral = false;
        p->pos++;
        if (p->pos < p->len && (p->t[p->pos] == '+' || p->t[p->pos] == '-')) p->pos++;
        if (p->pos >= p->len || p->t[p->pos] < '0' || p->t[p->pos] > '9') return jerr(p, "digit expected in exponent");
        while (p->pos < p->len && p->t[p->pos] >= '0' && p->t[p->pos] <= '9') p->pos++;
    }
    v->kind = YOLO_JSON_NUMBER;
    v->is_uint = false;
    if (integral && !neg) {
        uint64_t u = 0;
        bool fits = true;
        for (size_t i = start; i < int_end; i++) {
            unsigned d = (unsigned)(p->t[i] - '0');
            if (u > (UINT64_MAX - d) / 10u) { fits = false; break; }
            u = u * 10u + d;
        }
        if (fits) { v->is_uint = true; v->u = u; v->num = (double)u; return YOLO_OK; }
    }
    size_t n = p->pos - start;
    char small[64];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) return yolo_error(YOLO_ERR_NOMEM, "%s: JSON header: out of memory", p->what);
    memcpy(buf, p->t + start, n);
    buf[n] = '\0';
    v->num = strtod(buf, NULL);
    if (buf != small) free(buf);
    return YOLO_OK;
}

static int cmp_keyptr(const void *a, const void *b) { return strcmp(**(char *const *const *)a, **(char *const *const *)b); }

static yolo_status check_unique_keys(jparser *p, yolo_json *v) {
    if (v->n < 2) return YOLO_OK;
    char ***idx = malloc(v->n * sizeof *idx);
    if (!idx) return yolo_error(YOLO_ERR_NOMEM, "%s: JSON header: out of memory", p->what);
    for (size_t i = 0; i < v->n; i++) idx[i] = &v->keys[i];
    qsort(idx, v->n, sizeof *idx, cmp_keyptr);
    yolo_status st = YOLO_OK;
    for (size_t i = 1; i < v->n; i++)
        if (strcmp(*idx[i - 1], *idx[i]) == 0) {
            size_t at = (size_t)(idx[i] - v->keys);
            st = yolo_error(YOLO_ERR_FORMAT, "%s: JSON header: duplicate key \"%.200s\" (object at byte %zu, value at byte %zu)",
                            p->what, *idx[i], v->offset, v->items[at].offset);
            break;
        }
    free(idx);
    return st;
}

static yolo_status parse_value(jparser *p, yolo_json *v, int depth);

static yolo_status grow(jparser *p, yolo_json *v, size_t *cap, bool with_keys) {
    if (v->n < *cap) return YOLO_OK;
    size_t nc = *cap ? *cap * 2 : 8;
    yolo_json *items = realloc(v->items, nc * sizeof *items);
    if (!items) return yolo_error(YOLO_ERR_NOMEM, "%s: JSON header: out of memory", p->what);
    v->items = items;
    if (with_keys) {
        char **keys = realloc(v->keys, nc * sizeof *keys);
        if (!keys) return yolo_error(YOLO_ERR_NOMEM, "%s: JSON header: out of memory", p->what);
        v->keys = keys;
    }
    *cap = nc;
    return YOLO_OK;
}

static yolo_status parse_container(jparser *p, yolo_json *v, int depth, bool object) {
    char close = object ? '}' : ']';
    v->kind = object ? YOLO_JSON_OBJECT : YOLO_JSON_ARRAY;
    if (depth >= YOLO_JSON_MAX_DEPTH) return jerr(p, "nesting too deep");
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->t[p->pos] == close) { p->pos++; return YOLO_OK; }
    size_t cap = 0;
    for (;;) {
        yolo_status st = grow(p, v, &cap, object);
        if (st) return st;
        char *key = NULL;
        if (object) {
            skip_ws(p);
            if (p->pos >= p->len || p->t[p->pos] != '"') return jerr(p, "expected a string key");
            if ((st = parse_string(p, &key))) return st;
            skip_ws(p);
            if (p->pos >= p->len || p->t[p->pos] != ':') { free(key); return jerr(p, "expected ':'"); }
            p->pos++;
        }
        yolo_json *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        if (object) v->keys[v->n] = key;
        v->n++; /* counted now so that a failure below frees it */
        if ((st = parse_value(p, item, depth + 1))) return st;
        skip_ws(p);
        if (p->pos >= p->len) return jerr(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
        char c = p->t[p->pos];
        if (c == ',') { p->pos++; continue; }
        if (c == close) { p->pos++; break; }
        return jerr(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    return object ? check_unique_keys(p, v) : YOLO_OK;
}

static bool match_word(jparser *p, const char *w) {
    size_t n = strlen(w);
    if (p->len - p->pos < n || memcmp(p->t + p->pos, w, n) != 0) return false;
    p->pos += n;
    return true;
}

static yolo_status parse_value(jparser *p, yolo_json *v, int depth) {
    skip_ws(p);
    v->offset = p->pos;
    if (p->pos >= p->len) return jerr(p, "value expected");
    char c = p->t[p->pos];
    switch (c) {
    case '{': return parse_container(p, v, depth, true);
    case '[': return parse_container(p, v, depth, false);
    case '"': v->kind = YOLO_JSON_STRING; return parse_string(p, &v->s);
    case 't': if (match_word(p, "true")) { v->kind = YOLO_JSON_BOOL; v->b = true; return YOLO_OK; } break;
    case 'f': if (match_word(p, "false")) { v->kind = YOLO_JSON_BOOL; v->b = false; return YOLO_OK; } break;
    case 'n': if (match_word(p, "null")) { v->kind = YOLO_JSON_NULL; return YOLO_OK; } break;
    default:
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p, v);
        break;
    }
    return jerr(p, "value expected");
}

yolo_status yolo_json_parse(const char *text, size_t len, const char *what, yolo_json **out) {
    *out = NULL;
    jparser p = {.t = text, .len = len, .pos = 0, .what = what ? what : "JSON"};
    yolo_json *v = calloc(1, sizeof *v);
    if (!v) return yolo_error(YOLO_ERR_NOMEM, "%s: JSON header: out of memory", p.what);
    yolo_status st = parse_value(&p, v, 0);
    if (!st) {
        skip_ws(&p);
        if (p.pos != p.len) st = jerr(&p, "trailing characters after the JSON value");
    }
    if (st) {
        yolo_json_free(v);
        return st;
    }
    *out = v;
    return YOLO_OK;
}
