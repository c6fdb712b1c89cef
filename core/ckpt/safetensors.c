/* safetensors encode/decode (see safetensors.h). */
#include "ckpt/safetensors.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/json.h"
#include "util/grow_buf.h"

static const struct {
    const char *name;
    size_t size;
} st_dtypes[YOLO_ST_DTYPE_COUNT] = {
    [YOLO_ST_BOOL] = {"BOOL", 1}, [YOLO_ST_U8] = {"U8", 1},     [YOLO_ST_I8] = {"I8", 1},
    [YOLO_ST_F8_E5M2] = {"F8_E5M2", 1}, [YOLO_ST_F8_E4M3] = {"F8_E4M3", 1},
    [YOLO_ST_I16] = {"I16", 2},   [YOLO_ST_U16] = {"U16", 2},   [YOLO_ST_F16] = {"F16", 2},
    [YOLO_ST_BF16] = {"BF16", 2}, [YOLO_ST_I32] = {"I32", 4},   [YOLO_ST_U32] = {"U32", 4},
    [YOLO_ST_F32] = {"F32", 4},   [YOLO_ST_F64] = {"F64", 8},   [YOLO_ST_I64] = {"I64", 8},
    [YOLO_ST_U64] = {"U64", 8},
};

size_t yolo_st_dtype_size(yolo_st_dtype dtype) {
    return (unsigned)dtype < YOLO_ST_DTYPE_COUNT ? st_dtypes[dtype].size : 0;
}

const char *yolo_st_dtype_name(yolo_st_dtype dtype) {
    return (unsigned)dtype < YOLO_ST_DTYPE_COUNT ? st_dtypes[dtype].name : "?";
}

bool yolo_st_dtype_parse(const char *name, yolo_st_dtype *out) {
    for (int i = 0; i < YOLO_ST_DTYPE_COUNT; i++)
        if (strcmp(name, st_dtypes[i].name) == 0) {
            *out = (yolo_st_dtype)i;
            return true;
        }
    return false;
}

int64_t yolo_st_numel(const yolo_st_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

const char *yolo_st_shape_str(const yolo_st_tensor *t, char *buf, size_t size) {
    size_t o = (size_t)snprintf(buf, size, "%s[", yolo_st_dtype_name(t->dtype));
    for (int i = 0; i < t->ndim && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%" PRId64, i ? "," : "", t->shape[i]);
    if (o < size) snprintf(buf + o, size - o, "]");
    return buf;
}

/* ---------------------------------------------------------------- encode */

typedef yolo_grow_buf sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) { yolo_grow_buf_put(b, s, n); }
static void sb_str(sbuf *b, const char *s) { yolo_grow_buf_puts(b, s); }
static void sb_u64(sbuf *b, uint64_t v) {
    char t[24];
    sb_put(b, t, (size_t)snprintf(t, sizeof t, "%" PRIu64, v));
}
/* A JSON string as serde_json writes it: escapes for '"', '\\' and control
 * characters only, UTF-8 kept as is. */
static void sb_jstr(sbuf *b, const char *s) {
    sb_put(b, "\"", 1);
    for (const char *c = s; *c; c++) {
        unsigned char u = (unsigned char)*c;
        switch (u) {
        case '"': sb_str(b, "\\\""); break;
        case '\\': sb_str(b, "\\\\"); break;
        case '\b': sb_str(b, "\\b"); break;
        case '\f': sb_str(b, "\\f"); break;
        case '\n': sb_str(b, "\\n"); break;
        case '\r': sb_str(b, "\\r"); break;
        case '\t': sb_str(b, "\\t"); break;
        default:
            if (u < 0x20) {
                char t[8];
                snprintf(t, sizeof t, "\\u%04x", u);
                sb_str(b, t);
            } else {
                sb_put(b, c, 1);
            }
        }
    }
    sb_put(b, "\"", 1);
}

typedef struct order_key {
    const char *name;
    int dtype;
    size_t index;
} order_key;
static int cmp_file_order(const void *a, const void *b) {
    const order_key *x = a, *y = b;
    if (x->dtype != y->dtype) return x->dtype > y->dtype ? -1 : 1; /* alignment descending */
    return strcmp(x->name, y->name);
}
static int cmp_name_order(const void *a, const void *b) {
    return strcmp(((const order_key *)a)->name, ((const order_key *)b)->name);
}
static int cmp_kv(const void *a, const void *b) {
    return strcmp((*(const yolo_st_kv *const *)a)->key, (*(const yolo_st_kv *const *)b)->key);
}

static yolo_status check_tensor(const yolo_st_tensor *t, const char *what) {
    if (!t->name || !t->name[0]) return yolo_error(YOLO_ERR_ARG, "%s: a tensor has an empty name", what);
    if (strcmp(t->name, "__metadata__") == 0)
        return yolo_error(YOLO_ERR_ARG, "%s: \"__metadata__\" is reserved, not a tensor name", what);
    if (!yolo_json_valid_utf8(t->name, strlen(t->name)))
        return yolo_error(YOLO_ERR_ARG, "%s: tensor name \"%.200s\" is not valid UTF-8", what, t->name);
    if ((unsigned)t->dtype >= YOLO_ST_DTYPE_COUNT)
        return yolo_error(YOLO_ERR_ARG, "%s: tensor '%s' has an invalid dtype %d", what, t->name, (int)t->dtype);
    if (t->ndim < 0 || t->ndim > YOLO_ST_MAX_DIMS)
        return yolo_error(YOLO_ERR_ARG, "%s: tensor '%s' has %d dims (0..%d)", what, t->name, t->ndim, YOLO_ST_MAX_DIMS);
    uint64_t numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0 || __builtin_mul_overflow(numel, (uint64_t)t->shape[i], &numel))
            return yolo_error(YOLO_ERR_ARG, "%s: tensor '%s' has an invalid shape (dim %d = %" PRId64 ")", what,
                              t->name, i, t->shape[i]);
    }
    uint64_t bytes;
    if (__builtin_mul_overflow(numel, (uint64_t)yolo_st_dtype_size(t->dtype), &bytes) || bytes != t->nbytes)
        return yolo_error(YOLO_ERR_ARG, "%s: tensor '%s': %zu bytes given for %" PRIu64 " %s elements", what, t->name,
                          t->nbytes, numel, yolo_st_dtype_name(t->dtype));
    if (t->nbytes && !t->data) return yolo_error(YOLO_ERR_ARG, "%s: tensor '%s' has no data", what, t->name);
    return YOLO_OK;
}

void yolo_st_plan_free(yolo_st_plan *plan) {
    if (!plan) return;
    free(plan->head);
    free(plan->order);
    memset(plan, 0, sizeof *plan);
}

yolo_status yolo_st_plan_build(const yolo_st_tensor *tensors, size_t n, const yolo_st_kv *meta, size_t n_meta,
                               const char *what, yolo_st_plan *out) {
    memset(out, 0, sizeof *out);
    what = what ? what : "safetensors";
    for (size_t i = 0; i < n; i++) {
        yolo_status st = check_tensor(&tensors[i], what);
        if (st) return st;
    }
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    order_key *keys = malloc((n ? n : 1) * sizeof *keys);
    const yolo_st_kv **kv = malloc((n_meta ? n_meta : 1) * sizeof *kv);
    if (!order || !keys || !kv) {
        free(order);
        free(keys);
        free(kv);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what);
    }
    for (size_t i = 0; i < n; i++) keys[i] = (order_key){tensors[i].name, (int)tensors[i].dtype, i};
    qsort(keys, n, sizeof *keys, cmp_name_order);
    for (size_t i = 1; i < n; i++)
        if (strcmp(keys[i - 1].name, keys[i].name) == 0) {
            yolo_status dup = yolo_error(YOLO_ERR_ARG, "%s: duplicate tensor name '%s'", what, keys[i].name);
            free(order);
            free(keys);
            free(kv);
            return dup;
        }
    qsort(keys, n, sizeof *keys, cmp_file_order);
    for (size_t i = 0; i < n; i++) order[i] = keys[i].index;
    free(keys);
    for (size_t i = 0; i < n_meta; i++) {
        kv[i] = &meta[i];
        if (!meta[i].key || !meta[i].value || !yolo_json_valid_utf8(meta[i].key, strlen(meta[i].key)) ||
            !yolo_json_valid_utf8(meta[i].value, strlen(meta[i].value))) {
            free(order);
            free(kv);
            return yolo_error(YOLO_ERR_ARG, "%s: metadata entry %zu is NULL or not UTF-8", what, i);
        }
    }
    qsort(kv, n_meta, sizeof *kv, cmp_kv);
    yolo_status st = YOLO_OK;
    for (size_t i = 1; i < n_meta; i++)
        if (strcmp(kv[i - 1]->key, kv[i]->key) == 0)
            st = yolo_error(YOLO_ERR_ARG, "%s: duplicate metadata key '%s'", what, kv[i]->key);

    sbuf b = {0};
    sb_put(&b, "\0\0\0\0\0\0\0\0{", 9);
    bool first = true;
    if (n_meta) {
        sb_str(&b, "\"__metadata__\":{");
        for (size_t i = 0; i < n_meta; i++) {
            if (i) sb_str(&b, ",");
            sb_jstr(&b, kv[i]->key);
            sb_str(&b, ":");
            sb_jstr(&b, kv[i]->value);
        }
        sb_str(&b, "}");
        first = false;
    }
    uint64_t off = 0;
    for (size_t k = 0; k < n; k++) {
        const yolo_st_tensor *t = &tensors[order[k]];
        if (!first) sb_str(&b, ",");
        first = false;
        sb_jstr(&b, t->name);
        sb_str(&b, ":{\"dtype\":\"");
        sb_str(&b, yolo_st_dtype_name(t->dtype));
        sb_str(&b, "\",\"shape\":[");
        for (int d = 0; d < t->ndim; d++) {
            if (d) sb_str(&b, ",");
            sb_u64(&b, (uint64_t)t->shape[d]);
        }
        sb_str(&b, "],\"data_offsets\":[");
        sb_u64(&b, off);
        sb_str(&b, ",");
        off += t->nbytes;
        sb_u64(&b, off);
        sb_str(&b, "]}");
    }
    sb_str(&b, "}");
    while ((b.n - 8) % 8) sb_str(&b, " ");
    free(kv);
    if (!st && b.oom) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what);
    if (!st && b.n - 8 > YOLO_ST_MAX_HEADER)
        st = yolo_error(YOLO_ERR_ARG, "%s: header of %zu bytes exceeds the format's 100 MB limit", what, b.n - 8);
    if (st) {
        free(b.p);
        free(order);
        return st;
    }
    uint64_t hn = b.n - 8;
    for (int i = 0; i < 8; i++) b.p[i] = (char)((hn >> (8 * i)) & 0xFFu);
    out->head = (uint8_t *)b.p;
    out->head_size = b.n;
    out->order = order;
    out->n = n;
    out->data_size = off;
    return YOLO_OK;
}

yolo_status yolo_st_encode(const yolo_st_tensor *tensors, size_t n, const yolo_st_kv *meta, size_t n_meta,
                           const char *what, uint8_t **out, size_t *size) {
    *out = NULL;
    *size = 0;
    yolo_st_plan plan;
    yolo_status st = yolo_st_plan_build(tensors, n, meta, n_meta, what, &plan);
    if (st) return st;
    size_t total = plan.head_size + (size_t)plan.data_size;
    uint8_t *buf = malloc(total);
    if (!buf) {
        yolo_st_plan_free(&plan);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory for %zu bytes", what ? what : "safetensors", total);
    }
    memcpy(buf, plan.head, plan.head_size);
    size_t o = plan.head_size;
    for (size_t k = 0; k < plan.n; k++) {
        const yolo_st_tensor *t = &tensors[plan.order[k]];
        if (t->nbytes) memcpy(buf + o, t->data, t->nbytes);
        o += t->nbytes;
    }
    yolo_st_plan_free(&plan);
    *out = buf;
    *size = total;
    return YOLO_OK;
}

/* ---------------------------------------------------------------- decode */

struct yolo_st_file {
    yolo_json *json;          /* owns the names and metadata strings */
    size_t n;
    yolo_st_tensor *tensors;  /* file (offset) order */
    size_t *by_name;          /* indices sorted by name */
    size_t n_meta;
    yolo_st_kv *meta;         /* sorted by key */
    size_t header_size;
};

void yolo_st_file_free(yolo_st_file *f) {
    if (!f) return;
    yolo_json_free(f->json);
    free(f->tensors);
    free(f->by_name);
    free(f->meta);
    free(f);
}

size_t yolo_st_count(const yolo_st_file *f) { return f->n; }
const yolo_st_tensor *yolo_st_at(const yolo_st_file *f, size_t i) { return i < f->n ? &f->tensors[i] : NULL; }
size_t yolo_st_meta_count(const yolo_st_file *f) { return f->n_meta; }
const yolo_st_kv *yolo_st_meta_at(const yolo_st_file *f, size_t i) { return i < f->n_meta ? &f->meta[i] : NULL; }
size_t yolo_st_header_size(const yolo_st_file *f) { return f->header_size; }

const yolo_st_tensor *yolo_st_find(const yolo_st_file *f, const char *name) {
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->tensors[f->by_name[mid]].name, name);
        if (c == 0) return &f->tensors[f->by_name[mid]];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const char *yolo_st_meta_get(const yolo_st_file *f, const char *key) {
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[i].key, key) == 0) return f->meta[i].value;
    return NULL;
}

typedef struct span {
    uint64_t begin, end;
    size_t index;
} span;

static int cmp_span(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

static int cmp_kv_plain(const void *a, const void *b) {
    return strcmp(((const yolo_st_kv *)a)->key, ((const yolo_st_kv *)b)->key);
}

static yolo_status parse_tensor(const char *what, const char *name, const yolo_json *v, yolo_st_tensor *t,
                                span *sp) {
    if (!name[0]) return yolo_error(YOLO_ERR_FORMAT, "%s: a tensor has an empty name", what);
    if (v->kind != YOLO_JSON_OBJECT)
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s' is %s, not an object", what, name,
                          yolo_json_kind_name(v->kind));
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], "dtype") && strcmp(v->keys[i], "shape") && strcmp(v->keys[i], "data_offsets"))
            return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s' has an unknown field \"%.100s\"", what, name,
                              v->keys[i]);
    const yolo_json *dt = yolo_json_get(v, "dtype"), *sh = yolo_json_get(v, "shape"),
                    *off = yolo_json_get(v, "data_offsets");
    if (!dt || !sh || !off)
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s' lacks \"%s\"", what, name,
                          !dt ? "dtype" : !sh ? "shape" : "data_offsets");
    if (dt->kind != YOLO_JSON_STRING || !yolo_st_dtype_parse(dt->s, &t->dtype))
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s' has an unknown dtype %s%.40s%s", what, name,
                          dt->kind == YOLO_JSON_STRING ? "\"" : "(", dt->kind == YOLO_JSON_STRING ? dt->s :
                          yolo_json_kind_name(dt->kind), dt->kind == YOLO_JSON_STRING ? "\"" : ")");
    if (sh->kind != YOLO_JSON_ARRAY)
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s': shape is %s, not an array", what, name,
                          yolo_json_kind_name(sh->kind));
    if (sh->n > YOLO_ST_MAX_DIMS)
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s' has %zu dims (at most %d supported)", what, name,
                          sh->n, YOLO_ST_MAX_DIMS);
    t->name = name;
    t->ndim = (int)sh->n;
    uint64_t numel = 1;
    for (size_t i = 0; i < sh->n; i++) {
        const yolo_json *d = &sh->items[i];
        if (d->kind != YOLO_JSON_NUMBER || !d->is_uint || d->u > (uint64_t)INT64_MAX)
            return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s': shape[%zu] is not a non-negative integer", what,
                              name, i);
        t->shape[i] = (int64_t)d->u;
        if (__builtin_mul_overflow(numel, d->u, &numel))
            return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s': shape overflows", what, name);
    }
    uint64_t nbytes;
    if (__builtin_mul_overflow(numel, (uint64_t)yolo_st_dtype_size(t->dtype), &nbytes))
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s': shape overflows", what, name);
    if (off->kind != YOLO_JSON_ARRAY || off->n != 2 || off->items[0].kind != YOLO_JSON_NUMBER ||
        !off->items[0].is_uint || off->items[1].kind != YOLO_JSON_NUMBER || !off->items[1].is_uint)
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s': data_offsets must be [begin, end] integers", what,
                          name);
    sp->begin = off->items[0].u;
    sp->end = off->items[1].u;
    if (sp->end < sp->begin)
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s': data_offsets [%" PRIu64 ", %" PRIu64 "] end before they begin",
                          what, name, sp->begin, sp->end);
    if (sp->end - sp->begin != nbytes) {
        char sbuf_[160];
        return yolo_error(YOLO_ERR_FORMAT,
                          "%s: tensor '%.200s': %s needs %" PRIu64 " bytes but data_offsets [%" PRIu64 ", %" PRIu64
                          "] span %" PRIu64,
                          what, name, yolo_st_shape_str(t, sbuf_, sizeof sbuf_), nbytes, sp->begin, sp->end,
                          sp->end - sp->begin);
    }
    t->nbytes = (size_t)nbytes;
    return YOLO_OK;
}

static int cmp_by_name_idx(const void *a, const void *b, void *ctx) {
    const yolo_st_tensor *t = ctx;
    return strcmp(t[*(const size_t *)a].name, t[*(const size_t *)b].name);
}

/* by_name sorted over f->tensors; a name twice would leave yolo_st_find's answer open. */
static yolo_status index_names(yolo_st_file *f, const char *what) {
    for (size_t i = 0; i < f->n; i++) f->by_name[i] = i;
    qsort_r(f->by_name, f->n, sizeof *f->by_name, cmp_by_name_idx, f->tensors);
    for (size_t i = 1; i < f->n; i++)
        if (!strcmp(f->tensors[f->by_name[i]].name, f->tensors[f->by_name[i - 1]].name))
            return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%.200s' appears twice", what,
                              f->tensors[f->by_name[i]].name);
    return YOLO_OK;
}

yolo_status yolo_st_file_view(const yolo_st_tensor *tensors, size_t n, const char *what, yolo_st_file **out) {
    *out = NULL;
    what = what ? what : "tensors";
    yolo_st_file *f = calloc(1, sizeof *f);
    if (f) f->tensors = malloc((n ? n : 1) * sizeof *f->tensors);
    if (f && f->tensors) f->by_name = malloc((n ? n : 1) * sizeof *f->by_name);
    if (!f || !f->by_name) {
        yolo_st_file_free(f);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what);
    }
    if (n) memcpy(f->tensors, tensors, n * sizeof *tensors);
    f->n = n;
    yolo_status st = index_names(f, what);
    if (st) {
        yolo_st_file_free(f);
        return st;
    }
    *out = f;
    return YOLO_OK;
}

yolo_status yolo_st_decode(const void *buf, size_t size, const char *what, yolo_st_file **out) {
    *out = NULL;
    what = what ? what : "safetensors";
    const uint8_t *b = buf;
    if (size < 8)
        return yolo_error(YOLO_ERR_FORMAT, "%s: %zu bytes, too short for the 8-byte header length", what, size);
    uint64_t hn = 0;
    for (int i = 7; i >= 0; i--) hn = (hn << 8) | b[i];
    if (hn > YOLO_ST_MAX_HEADER)
        return yolo_error(YOLO_ERR_FORMAT, "%s: header length %" PRIu64 " exceeds the format's 100 MB limit", what, hn);
    if (hn > size - 8)
        return yolo_error(YOLO_ERR_FORMAT, "%s: header length %" PRIu64 " passes the end of the blob (%zu bytes)",
                          what, hn, size);
    if (hn < 2 || b[8] != '{')
        return yolo_error(YOLO_ERR_FORMAT, "%s: the header does not start with '{' (not a safetensors blob)", what);
    span *spans = NULL;
    yolo_st_tensor *tmp = NULL;
    yolo_st_file *f = calloc(1, sizeof *f);
    if (!f) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what);
/* The error is formatted before anything is freed (it may quote the header). */
#define FAIL(expr)                \
    do {                          \
        yolo_status fail_ = (expr); \
        free(spans);              \
        free(tmp);                \
        yolo_st_file_free(f);     \
        return fail_;             \
    } while (0)
    f->header_size = 8 + (size_t)hn;
    yolo_status st = yolo_json_parse((const char *)b + 8, (size_t)hn, what, &f->json);
    if (st) FAIL(st);
    const yolo_json *root = f->json;
    if (root->kind != YOLO_JSON_OBJECT)
        FAIL(yolo_error(YOLO_ERR_FORMAT, "%s: the header is %s, not an object", what, yolo_json_kind_name(root->kind)));
    size_t n_tensors = root->n;
    const yolo_json *meta = yolo_json_get(root, "__metadata__");
    if (meta) n_tensors--;
    f->tensors = calloc(n_tensors ? n_tensors : 1, sizeof *f->tensors);
    f->by_name = malloc((n_tensors ? n_tensors : 1) * sizeof *f->by_name);
    spans = malloc((n_tensors ? n_tensors : 1) * sizeof *spans);
    tmp = malloc((n_tensors ? n_tensors : 1) * sizeof *tmp);
    if (!f->tensors || !f->by_name || !spans || !tmp) FAIL(yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what));
    if (meta) {
        if (meta->kind != YOLO_JSON_OBJECT)
            FAIL(yolo_error(YOLO_ERR_FORMAT, "%s: __metadata__ is %s, not an object of strings", what,
                            yolo_json_kind_name(meta->kind)));
        f->meta = malloc((meta->n ? meta->n : 1) * sizeof *f->meta);
        if (!f->meta) FAIL(yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what));
        for (size_t i = 0; i < meta->n; i++) {
            if (meta->items[i].kind != YOLO_JSON_STRING)
                FAIL(yolo_error(YOLO_ERR_FORMAT, "%s: __metadata__ value of \"%.100s\" is %s, not a string", what,
                                meta->keys[i], yolo_json_kind_name(meta->items[i].kind)));
            f->meta[i] = (yolo_st_kv){meta->keys[i], meta->items[i].s};
        }
        f->n_meta = meta->n;
        qsort(f->meta, f->n_meta, sizeof *f->meta, cmp_kv_plain);
    }
    size_t k = 0;
    for (size_t i = 0; i < root->n; i++) {
        if (&root->items[i] == meta) continue;
        memset(&tmp[k], 0, sizeof tmp[k]);
        spans[k].index = k;
        if ((st = parse_tensor(what, root->keys[i], &root->items[i], &tmp[k], &spans[k]))) FAIL(st);
        k++;
    }
    /* The offsets must tile [0, data size) exactly, as the crate checks. */
    qsort(spans, n_tensors, sizeof *spans, cmp_span);
    uint64_t data_size = size - f->header_size, pos = 0;
    for (size_t i = 0; i < n_tensors; i++) {
        const span *s = &spans[i];
        const char *nm = tmp[s->index].name;
        if (s->begin != pos) {
            st = yolo_error(YOLO_ERR_FORMAT,
                            s->begin < pos ? "%s: tensor '%.200s': data_offsets [%" PRIu64 ", %" PRIu64
                                             "] overlap the previous tensor (which ends at %" PRIu64 ")"
                                           : "%s: tensor '%.200s': data_offsets [%" PRIu64 ", %" PRIu64
                                             "] leave a gap after byte %" PRIu64,
                            what, nm, s->begin, s->end, pos);
            break;
        }
        if (s->end > data_size) {
            st = yolo_error(YOLO_ERR_FORMAT,
                            "%s: tensor '%.200s': data_offsets [%" PRIu64 ", %" PRIu64
                            "] pass the end of the data (%" PRIu64 " bytes; blob truncated?)",
                            what, nm, s->begin, s->end, data_size);
            break;
        }
        pos = s->end;
        f->tensors[i] = tmp[s->index];
        f->tensors[i].data = b + f->header_size + s->begin;
    }
    if (!st && pos != data_size)
        st = yolo_error(YOLO_ERR_FORMAT, "%s: the tensors cover %" PRIu64 " of the %" PRIu64 " data bytes", what, pos,
                        data_size);
    if (st) FAIL(st);
#undef FAIL
    free(spans);
    free(tmp);
    f->n = n_tensors;
    if ((st = index_names(f, what))) { /* not here: the JSON parser refuses a key twice */
        yolo_st_file_free(f);
        return st;
    }
    *out = f;
    return YOLO_OK;
}
