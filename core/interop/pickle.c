/* A strict protocol-2 pickle reader that executes nothing (pickle.h). */
#include "interop/pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STACK (1u << 20)
/* Every value costs about 250 bytes here, whatever the bytes that made it
 * ('N' and 'a' make one in two bytes, and a deflated run of those is a
 * thousand times smaller): the values are capped, not only the pickle's
 * size. A YOLOv8n checkpoint's pickle makes 24 thousand (a last.pt too,
 * YOLO26n-seg 33 thousand; an x model, three times the blocks, about 100
 * thousand); a million, about 250 MB, is the most a pickle may cost. */
#define MAX_VALUES ((size_t)1 << 20)
/* Container slots cost 8 bytes each and a memo GET refills one without a new
 * value (set(list) copies a list per call): 16 million, 128 MB, at most. */
#define MAX_ITEMS ((size_t)16 << 20)
/* The largest tensor dimension, stride or storage a pickle may declare
 * (2^40 elements, terabytes: sums of a few million stay inside int64). */
#define MAX_ELEMENTS (1ll << 40)

struct yolo_pickle {
    yolo_pk_value **values; /* every value made, for freeing */
    size_t n_values, cap_values;
    size_t n_items;         /* container slots filled, all containers together */
    yolo_pk_value *root;
};

/* What a global may be used as. */
typedef enum global_use {
    USE_NONE = 0,
    USE_ORDERED_DICT, /* REDUCE() -> dict */
    USE_SET,          /* REDUCE(list) -> list */
    USE_REBUILD_TENSOR,
    USE_REBUILD_PARAMETER,
    USE_SIZE,         /* REDUCE(tuple) -> tuple */
    USE_STORAGE,      /* only inside a persistent id */
    USE_OPAQUE,       /* REDUCE or NEWOBJ -> an opaque object, never run */
} global_use;

static const struct {
    const char *name;
    global_use use;
    yolo_pk_dtype dtype;
} known_globals[] = {
    {"collections.OrderedDict", USE_ORDERED_DICT, 0},
    {"__builtin__.set", USE_SET, 0},
    {"builtins.set", USE_SET, 0},
    {"torch._utils._rebuild_tensor_v2", USE_REBUILD_TENSOR, 0},
    {"torch._utils._rebuild_parameter", USE_REBUILD_PARAMETER, 0},
    {"torch.Size", USE_SIZE, 0},
    {"torch.FloatStorage", USE_STORAGE, YOLO_PK_F32},
    {"torch.HalfStorage", USE_STORAGE, YOLO_PK_F16},
    {"torch.DoubleStorage", USE_STORAGE, YOLO_PK_F64},
    {"torch.LongStorage", USE_STORAGE, YOLO_PK_I64},
    {"torch.IntStorage", USE_STORAGE, YOLO_PK_I32},
    {"torch.BFloat16Storage", USE_STORAGE, YOLO_PK_BF16},
    /* values Ultralytics' training state holds; recorded, never interpreted */
    {"torch.device", USE_OPAQUE, 0},
    {"__builtin__.getattr", USE_OPAQUE, 0},
    {"builtins.getattr", USE_OPAQUE, 0},
    {"_codecs.encode", USE_OPAQUE, 0},
    {"numpy.dtype", USE_OPAQUE, 0},
    {"numpy.core.multiarray.scalar", USE_OPAQUE, 0},  /* a NumPy scalar (best_fitness) as NumPy 1.x names it */
    {"numpy._core.multiarray.scalar", USE_OPAQUE, 0}, /* ... and as NumPy 2 does */
};

/* Classes of these modules are opaque names (module objects, losses,
 * transforms, namespaces): instances record their state, nothing runs. */
static const char *const opaque_class_prefixes[] = {"torch.nn.modules.", "ultralytics.nn.", "ultralytics.utils.",
                                                    "torchvision.transforms."};

static global_use lookup_global(const char *name, yolo_pk_dtype *dtype) {
    for (size_t i = 0; i < sizeof known_globals / sizeof known_globals[0]; i++)
        if (!strcmp(known_globals[i].name, name)) {
            *dtype = known_globals[i].dtype;
            return known_globals[i].use;
        }
    for (size_t i = 0; i < sizeof opaque_class_prefixes / sizeof opaque_class_prefixes[0]; i++) {
        size_t n = strlen(opaque_class_prefixes[i]);
        if (!strncmp(name, opaque_class_prefixes[i], n) && name[n] && !strchr(name + n, ' ')) return USE_OPAQUE;
    }
    return USE_NONE;
}

/* ---- values ---- */

typedef struct reader {
    yolo_pickle *p;
    const uint8_t *data;
    size_t size, pos, op_pos;
    const char *what;
    yolo_pk_value **stack;
    size_t depth, cap;
    size_t *marks;
    size_t n_marks, cap_marks;
    yolo_pk_value **memo;
    size_t memo_cap;
} reader;

static yolo_status fail(const reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static yolo_status fail(const reader *r, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return yolo_error(YOLO_ERR_FORMAT, "%s: pickle byte %zu (opcode 0x%02x): %s", r->what, r->op_pos,
                      r->op_pos < r->size ? r->data[r->op_pos] : 0, msg);
}

static yolo_pk_value *new_value(reader *r, yolo_pk_kind kind) {
    yolo_pickle *p = r->p;
    if (p->n_values == MAX_VALUES) return NULL; /* reported as such by yolo_pickle_parse */
    if (p->n_values == p->cap_values) {
        size_t cap = p->cap_values ? p->cap_values * 2 : 1024;
        yolo_pk_value **v = realloc(p->values, cap * sizeof *v);
        if (!v) return NULL;
        p->values = v;
        p->cap_values = cap;
    }
    yolo_pk_value *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->kind = kind;
    p->values[p->n_values++] = v;
    return v;
}

static bool add_item(reader *r, yolo_pk_value *c, yolo_pk_value *item) {
    if (r->p->n_items == MAX_ITEMS) return false; /* reported as such by yolo_pickle_parse */
    r->p->n_items++;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4;
        yolo_pk_value **items = realloc(c->items, cap * sizeof *items);
        if (!items) return false;
        c->items = items;
        c->cap = cap;
    }
    c->items[c->n++] = item;
    return true;
}

/* ---- stack ---- */

static yolo_status push(reader *r, yolo_pk_value *v) {
    if (!v) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory reading the pickle", r->what);
    if (r->depth == r->cap) {
        if (r->cap >= MAX_STACK) return fail(r, "the stack passes %u entries", MAX_STACK);
        size_t cap = r->cap ? r->cap * 2 : 64;
        yolo_pk_value **s = realloc(r->stack, cap * sizeof *s);
        if (!s) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory reading the pickle", r->what);
        r->stack = s;
        r->cap = cap;
    }
    r->stack[r->depth++] = v;
    return YOLO_OK;
}

static size_t floor_of_stack(const reader *r) { return r->n_marks ? r->marks[r->n_marks - 1] : 0; }

static yolo_status pop(reader *r, yolo_pk_value **out, const char *op) {
    if (r->depth <= floor_of_stack(r)) return fail(r, "%s on an empty stack (or across a MARK)", op);
    *out = r->stack[--r->depth];
    return YOLO_OK;
}

static yolo_status top(reader *r, yolo_pk_value **out, const char *op) {
    if (r->depth <= floor_of_stack(r)) return fail(r, "%s on an empty stack (or across a MARK)", op);
    *out = r->stack[r->depth - 1];
    return YOLO_OK;
}

/* Pops back to the last MARK: the items are r->stack[*first .. r->depth). */
static yolo_status pop_mark(reader *r, size_t *first, const char *op) {
    if (!r->n_marks) return fail(r, "%s without a MARK", op);
    *first = r->marks[--r->n_marks];
    return YOLO_OK;
}

/* ---- reading bytes ---- */

static yolo_status need(const reader *r, size_t n) {
    if (r->size - r->pos < n) return fail(r, "truncated: %zu more bytes needed, %zu left", n, r->size - r->pos);
    return YOLO_OK;
}

static uint64_t read_le(reader *r, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)r->data[r->pos + (size_t)i] << (8 * i);
    r->pos += (size_t)n;
    return v;
}

/* One "\n"-terminated line of GLOBAL (printable ASCII). */
static yolo_status read_line(reader *r, char *buf, size_t size) {
    size_t n = 0;
    while (r->pos < r->size && r->data[r->pos] != '\n') {
        uint8_t c = r->data[r->pos++];
        if (c < 0x20 || c > 0x7e || n + 1 >= size) return fail(r, "GLOBAL name is not a short printable line");
        buf[n++] = (char)c;
    }
    if (r->pos >= r->size) return fail(r, "truncated GLOBAL name");
    r->pos++;
    buf[n] = '\0';
    return YOLO_OK;
}

/* ---- calls (never executed) ---- */

static yolo_status rebuild_tensor(reader *r, const yolo_pk_value *args, yolo_pk_value **out) {
    if (args->kind != YOLO_PK_TUPLE || args->n < 6 || args->n > 7)
        return fail(r, "_rebuild_tensor_v2 takes 6 or 7 arguments, got %zu", args->n);
    const yolo_pk_value *st = args->items[0], *off = args->items[1], *size = args->items[2], *stride = args->items[3];
    if (st->kind != YOLO_PK_STORAGE) return fail(r, "_rebuild_tensor_v2: the first argument is not a storage");
    if (off->kind != YOLO_PK_INT || off->i < 0) return fail(r, "_rebuild_tensor_v2: bad storage offset");
    if (size->kind != YOLO_PK_TUPLE || stride->kind != YOLO_PK_TUPLE || size->n != stride->n ||
        size->n > YOLO_PK_MAX_DIMS)
        return fail(r, "_rebuild_tensor_v2: size and stride must be tuples of the same length (at most %d)",
                    YOLO_PK_MAX_DIMS);
    yolo_pk_value *t = new_value(r, YOLO_PK_TENSOR);
    if (!t) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
    t->storage = (yolo_pk_value *)st;
    t->offset = off->i;
    t->ndim = (int)size->n;
    /* the last element a view touches must lie inside the storage */
    int64_t last = off->i, numel = 1;
    for (size_t d = 0; d < size->n; d++) {
        const yolo_pk_value *a = size->items[d], *b = stride->items[d];
        if (a->kind != YOLO_PK_INT || b->kind != YOLO_PK_INT || a->i < 0 || b->i < 0 || a->i > MAX_ELEMENTS ||
            b->i > MAX_ELEMENTS)
            return fail(r, "_rebuild_tensor_v2: dimension %zu has a bad size or stride", d);
        t->shape[d] = a->i;
        t->stride[d] = b->i;
        if (a->i > 0) last += (a->i - 1) * b->i;
        if (numel > 0 && __builtin_mul_overflow(numel, a->i, &numel)) numel = INT64_MAX;
    }
    if (numel > 0 && last >= st->numel)
        return fail(r, "_rebuild_tensor_v2: the view reaches element %lld of a storage of %lld", (long long)last,
                    (long long)st->numel);
    /* torch.save writes the storage a tensor views, so a tensor of more
     * elements than its storage repeats elements (a stride-0 expand or an
     * overlapping view). PyTorch state dicts hold none; refused, because
     * reading one would turn a few stored bytes into any amount of memory. */
    if (numel > st->numel)
        return fail(r, "_rebuild_tensor_v2: a view of %lld elements over storage '%s' of %lld (a view that repeats "
                    "its storage's elements, such as a stride-0 expand, is not read)", (long long)numel, st->s,
                    (long long)st->numel);
    *out = t;
    return YOLO_OK;
}

static yolo_status make_persistent(reader *r, const yolo_pk_value *pid, yolo_pk_value **out) {
    if (pid->kind != YOLO_PK_TUPLE || pid->n != 5 || !yolo_pk_is_str(pid->items[0], "storage") ||
        pid->items[1]->kind != YOLO_PK_GLOBAL || pid->items[2]->kind != YOLO_PK_STR ||
        pid->items[3]->kind != YOLO_PK_STR || pid->items[4]->kind != YOLO_PK_INT || pid->items[4]->i < 0 ||
        pid->items[4]->i > MAX_ELEMENTS)
        return fail(r, "a persistent id must be ('storage', <torch storage type>, key, location, numel <= 2^40)");
    yolo_pk_dtype dtype = YOLO_PK_F32;
    if (lookup_global(pid->items[1]->s, &dtype) != USE_STORAGE)
        return fail(r, "persistent id names %s, not a torch storage type", pid->items[1]->s);
    const char *key = pid->items[2]->s;
    if (!*key || strspn(key, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(key))
        return fail(r, "storage key '%.40s' is not a plain name", key);
    yolo_pk_value *s = new_value(r, YOLO_PK_STORAGE);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
    s->dtype = dtype;
    s->s = key;
    s->len = pid->items[2]->len;
    s->numel = pid->items[4]->i;
    *out = s;
    return YOLO_OK;
}

static yolo_status call(reader *r, const yolo_pk_value *fn, yolo_pk_value *args, bool newobj, yolo_pk_value **out) {
    const char *op = newobj ? "NEWOBJ" : "REDUCE";
    if (fn->kind != YOLO_PK_GLOBAL) {
        char buf[96];
        return fail(r, "%s calls %s, not a global", op, yolo_pk_describe(fn, buf, sizeof buf));
    }
    if (args->kind != YOLO_PK_TUPLE) return fail(r, "%s of %s without an argument tuple", op, fn->s);
    yolo_pk_dtype dtype;
    global_use use = lookup_global(fn->s, &dtype);
    if (newobj && use != USE_OPAQUE) return fail(r, "NEWOBJ of %s, which is not a class this reader knows", fn->s);
    switch (use) {
    case USE_ORDERED_DICT:
        if (args->n) return fail(r, "OrderedDict() with arguments");
        return (*out = new_value(r, YOLO_PK_DICT)) ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
    case USE_SET:
    case USE_SIZE: {
        if (args->n != 1 || args->items[0]->kind != (use == USE_SET ? YOLO_PK_LIST : YOLO_PK_TUPLE))
            return fail(r, "%s takes one %s", fn->s, use == USE_SET ? "list" : "tuple");
        yolo_pk_value *v = new_value(r, use == USE_SET ? YOLO_PK_LIST : YOLO_PK_TUPLE);
        if (!v) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
        for (size_t i = 0; i < args->items[0]->n; i++)
            if (!add_item(r, v, args->items[0]->items[i]))
                return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
        *out = v;
        return YOLO_OK;
    }
    case USE_REBUILD_TENSOR:
        return rebuild_tensor(r, args, out);
    case USE_REBUILD_PARAMETER:
        if (args->n < 1 || args->items[0]->kind != YOLO_PK_TENSOR) return fail(r, "_rebuild_parameter without a tensor");
        *out = args->items[0];
        return YOLO_OK;
    case USE_OPAQUE: {
        yolo_pk_value *o = new_value(r, YOLO_PK_OBJECT);
        if (!o) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
        o->s = fn->s;
        o->len = fn->len;
        o->args = args;
        *out = o;
        return YOLO_OK;
    }
    case USE_STORAGE:
        return fail(r, "%s is called outside a persistent id", fn->s);
    case USE_NONE:
        break;
    }
    return fail(r, "%s of %s, which is not on the allow-list", op, fn->s);
}

/* ---- the opcode loop ---- */

static yolo_status memo_put(reader *r, uint64_t id) {
    yolo_pk_value *v;
    yolo_status st = top(r, &v, "PUT");
    if (st) return st;
    /* Python's pickler numbers the memo 0, 1, 2, ... as it makes values: an
     * id past the values made would only grow the memo */
    if (id > r->p->n_values + 1024) return fail(r, "memo id %llu is out of range", (unsigned long long)id);
    if (id >= r->memo_cap) {
        size_t cap = r->memo_cap ? r->memo_cap : 256;
        while (cap <= id) cap *= 2;
        yolo_pk_value **m = realloc(r->memo, cap * sizeof *m);
        if (!m) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
        memset(m + r->memo_cap, 0, (cap - r->memo_cap) * sizeof *m);
        r->memo = m;
        r->memo_cap = cap;
    }
    r->memo[id] = v;
    return YOLO_OK;
}

static yolo_status memo_get(reader *r, uint64_t id) {
    if (id >= r->memo_cap || !r->memo[id]) return fail(r, "GET of memo id %llu, never PUT", (unsigned long long)id);
    return push(r, r->memo[id]);
}

static yolo_status tuple_of(reader *r, size_t first) {
    yolo_pk_value *t = new_value(r, YOLO_PK_TUPLE);
    if (!t) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
    for (size_t i = first; i < r->depth; i++)
        if (!add_item(r, t, r->stack[i])) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
    r->depth = first;
    return push(r, t);
}

static yolo_status set_items(reader *r, size_t first, const char *op) {
    if ((r->depth - first) % 2) return fail(r, "%s with an odd number of items", op);
    if (first <= floor_of_stack(r) || first == 0) return fail(r, "%s without a dict below", op);
    yolo_pk_value *d = r->stack[first - 1];
    if (d->kind != YOLO_PK_DICT) return fail(r, "%s on a value that is not a dict", op);
    for (size_t i = first; i < r->depth; i++)
        if (!add_item(r, d, r->stack[i])) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
    r->depth = first;
    return YOLO_OK;
}

static yolo_status append_items(reader *r, size_t first, const char *op) {
    if (first <= floor_of_stack(r) || first == 0) return fail(r, "%s without a list below", op);
    yolo_pk_value *l = r->stack[first - 1];
    if (l->kind != YOLO_PK_LIST) return fail(r, "%s on a value that is not a list", op);
    for (size_t i = first; i < r->depth; i++)
        if (!add_item(r, l, r->stack[i])) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
    r->depth = first;
    return YOLO_OK;
}

static yolo_status scalar(reader *r, yolo_pk_kind kind, int64_t i, double f) {
    yolo_pk_value *v = new_value(r, kind);
    if (v) v->i = i, v->f = f, v->b = i != 0;
    return push(r, v);
}

static yolo_status step(reader *r, uint8_t op, bool *stop) {
    yolo_status st = YOLO_OK;
    yolo_pk_value *a = NULL, *b = NULL, *v = NULL;
    size_t first = 0;
    switch (op) {
    case 0x80: /* PROTO */
        if ((st = need(r, 1))) return st;
        if (r->data[r->pos] > 2) return fail(r, "pickle protocol %d (PyTorch writes 2)", r->data[r->pos]);
        r->pos++;
        return YOLO_OK;
    case '.': /* STOP */
        if (r->depth != 1 || r->n_marks) return fail(r, "STOP with %zu values and %zu marks on the stack", r->depth, r->n_marks);
        r->p->root = r->stack[0];
        *stop = true;
        return YOLO_OK;
    case 'N': return scalar(r, YOLO_PK_NONE, 0, 0);
    case 0x88: return scalar(r, YOLO_PK_BOOL, 1, 0);
    case 0x89: return scalar(r, YOLO_PK_BOOL, 0, 0);
    case 'K': if ((st = need(r, 1))) return st; return scalar(r, YOLO_PK_INT, (int64_t)read_le(r, 1), 0);
    case 'M': if ((st = need(r, 2))) return st; return scalar(r, YOLO_PK_INT, (int64_t)read_le(r, 2), 0);
    case 'J': if ((st = need(r, 4))) return st; return scalar(r, YOLO_PK_INT, (int32_t)(uint32_t)read_le(r, 4), 0);
    case 0x8a: { /* LONG1: little-endian two's complement */
        if ((st = need(r, 1))) return st;
        int n = r->data[r->pos++];
        if (n > 8) return fail(r, "LONG1 of %d bytes (at most 8 here)", n);
        if ((st = need(r, (size_t)n))) return st;
        uint64_t u = read_le(r, n);
        if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1) u |= ~0ull << (8 * n);
        return scalar(r, YOLO_PK_INT, (int64_t)u, 0);
    }
    case 'G': { /* BINFLOAT, big-endian */
        if ((st = need(r, 8))) return st;
        uint64_t u = 0;
        for (int i = 0; i < 8; i++) u = u << 8 | r->data[r->pos++];
        double d;
        memcpy(&d, &u, sizeof d);
        return scalar(r, YOLO_PK_FLOAT, 0, d);
    }
    case 'X': { /* BINUNICODE */
        if ((st = need(r, 4))) return st;
        uint64_t n = read_le(r, 4);
        if ((st = need(r, (size_t)n))) return st;
        v = new_value(r, YOLO_PK_STR);
        char *s = v ? malloc((size_t)n + 1) : NULL;
        if (!s) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
        memcpy(s, r->data + r->pos, (size_t)n);
        s[n] = '\0';
        r->pos += (size_t)n;
        v->s = s;
        v->len = (size_t)n;
        return push(r, v);
    }
    case 'c': { /* GLOBAL "module\nname\n" */
        char mod[256], name[256];
        if ((st = read_line(r, mod, sizeof mod)) || (st = read_line(r, name, sizeof name))) return st;
        v = new_value(r, YOLO_PK_GLOBAL);
        char *s = v ? malloc(strlen(mod) + strlen(name) + 2) : NULL;
        if (!s) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
        sprintf(s, "%s.%s", mod, name);
        v->s = s;
        v->len = strlen(s);
        yolo_pk_dtype dtype;
        if (lookup_global(s, &dtype) == USE_NONE)
            return yolo_error(YOLO_ERR_FORMAT,
                              "%s: the pickle asks for the global %s (byte %zu), which is not allowed: only PyTorch "
                              "tensors, containers and torch/Ultralytics module classes are read (nothing is run)",
                              r->what, s, r->op_pos);
        return push(r, v);
    }
    case '(': /* MARK */
        if (r->n_marks == r->cap_marks) {
            size_t cap = r->cap_marks ? r->cap_marks * 2 : 32;
            if (cap > MAX_STACK) return fail(r, "more than %u nested MARKs", MAX_STACK);
            size_t *m = realloc(r->marks, cap * sizeof *m);
            if (!m) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", r->what);
            r->marks = m;
            r->cap_marks = cap;
        }
        r->marks[r->n_marks++] = r->depth;
        return YOLO_OK;
    case ')': return push(r, new_value(r, YOLO_PK_TUPLE));
    case ']': return push(r, new_value(r, YOLO_PK_LIST));
    case '}': return push(r, new_value(r, YOLO_PK_DICT));
    case 't': if ((st = pop_mark(r, &first, "TUPLE"))) return st; return tuple_of(r, first);
    case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
        size_t n = (size_t)(op - 0x84);
        if (r->depth < floor_of_stack(r) + n) return fail(r, "TUPLE%zu with fewer values on the stack", n);
        return tuple_of(r, r->depth - n);
    }
    case 'a': /* APPEND */
        if (r->depth < floor_of_stack(r) + 2) return fail(r, "APPEND without a list and a value");
        return append_items(r, r->depth - 1, "APPEND");
    case 'e': if ((st = pop_mark(r, &first, "APPENDS"))) return st; return append_items(r, first, "APPENDS");
    case 's': /* SETITEM */
        if (r->depth < floor_of_stack(r) + 3) return fail(r, "SETITEM without a dict, key and value");
        return set_items(r, r->depth - 2, "SETITEM");
    case 'u': if ((st = pop_mark(r, &first, "SETITEMS"))) return st; return set_items(r, first, "SETITEMS");
    case 'q': if ((st = need(r, 1))) return st; return memo_put(r, read_le(r, 1));
    case 'r': if ((st = need(r, 4))) return st; return memo_put(r, read_le(r, 4));
    case 'h': if ((st = need(r, 1))) return st; return memo_get(r, read_le(r, 1));
    case 'j': if ((st = need(r, 4))) return st; return memo_get(r, read_le(r, 4));
    case 'Q': /* BINPERSID */
        if ((st = pop(r, &a, "BINPERSID")) || (st = make_persistent(r, a, &v))) return st;
        return push(r, v);
    case 'R': /* REDUCE: callable, args */
    case 0x81: /* NEWOBJ: cls, args */
        if ((st = pop(r, &b, op == 'R' ? "REDUCE" : "NEWOBJ")) || (st = pop(r, &a, op == 'R' ? "REDUCE" : "NEWOBJ")) ||
            (st = call(r, a, b, op == 0x81, &v)))
            return st;
        return push(r, v);
    case 'b': /* BUILD: object, state */
        if ((st = pop(r, &b, "BUILD")) || (st = top(r, &a, "BUILD"))) return st;
        if (a->kind != YOLO_PK_OBJECT) {
            char buf[96];
            return fail(r, "BUILD on %s (only opaque objects take a state)", yolo_pk_describe(a, buf, sizeof buf));
        }
        a->state = b;
        return YOLO_OK;
    default:
        return fail(r, "opcode 0x%02x is not one PyTorch's protocol-2 pickles use", op);
    }
}

yolo_status yolo_pickle_parse(const uint8_t *data, size_t size, const char *what, yolo_pickle **out) {
    *out = NULL;
    yolo_pickle *p = calloc(1, sizeof *p);
    if (!p) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what);
    reader r = {.p = p, .data = data, .size = size, .what = what};
    yolo_status st = YOLO_OK;
    bool stop = false;
    while (!st && !stop) {
        r.op_pos = r.pos;
        if (r.pos >= size) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s: the pickle ends at byte %zu without STOP (truncated?)", what, size);
            break;
        }
        st = step(&r, data[r.pos++], &stop);
    }
    if (!st && r.pos != size)
        st = yolo_error(YOLO_ERR_FORMAT, "%s: %zu bytes after the pickle's STOP", what, size - r.pos);
    if (st && (p->n_values == MAX_VALUES || p->n_items == MAX_ITEMS)) /* the caps, not a failed allocation */
        st = yolo_error(YOLO_ERR_FORMAT, "%s: the pickle makes more than %zu values or %zu container items by byte "
                        "%zu (a checkpoint's makes tens of thousands)", what, MAX_VALUES, MAX_ITEMS, r.op_pos);
    free(r.stack);
    free(r.marks);
    free(r.memo);
    if (st) {
        yolo_pickle_free(p);
        return st;
    }
    *out = p;
    return YOLO_OK;
}

void yolo_pickle_free(yolo_pickle *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n_values; i++) {
        yolo_pk_value *v = p->values[i];
        free(v->items);
        if (v->kind == YOLO_PK_STR || v->kind == YOLO_PK_GLOBAL) free((char *)v->s);
        free(v);
    }
    free(p->values);
    free(p);
}

const yolo_pk_value *yolo_pickle_root(const yolo_pickle *p) { return p->root; }

size_t yolo_pickle_value_count(const yolo_pickle *p) { return p->n_values; }

bool yolo_pk_is_str(const yolo_pk_value *v, const char *s) {
    return v && v->kind == YOLO_PK_STR && strlen(s) == v->len && !memcmp(v->s, s, v->len);
}

const yolo_pk_value *yolo_pk_dict_get(const yolo_pk_value *dict, const char *key) {
    if (!dict || dict->kind != YOLO_PK_DICT) return NULL;
    const yolo_pk_value *found = NULL;
    for (size_t i = 0; i + 1 < dict->n; i += 2)
        if (yolo_pk_is_str(dict->items[i], key)) found = dict->items[i + 1]; /* the last one wins, as in Python */
    return found;
}

const yolo_pk_value *yolo_pk_attr(const yolo_pk_value *object, const char *key) {
    if (!object || object->kind != YOLO_PK_OBJECT) return NULL;
    return yolo_pk_dict_get(object->state, key);
}

size_t yolo_pk_dtype_size(yolo_pk_dtype dtype) {
    switch (dtype) {
    case YOLO_PK_F16: case YOLO_PK_BF16: return 2;
    case YOLO_PK_F32: case YOLO_PK_I32: return 4;
    case YOLO_PK_F64: case YOLO_PK_I64: return 8;
    }
    return 0;
}

const char *yolo_pk_dtype_name(yolo_pk_dtype dtype) {
    static const char *const names[] = {"float32", "float16", "float64", "int64", "int32", "bfloat16"};
    return (unsigned)dtype < 6 ? names[dtype] : "?";
}

const char *yolo_pk_describe(const yolo_pk_value *v, char *buf, size_t size) {
    static const char *const kinds[] = {"None", "bool", "int", "float", "str", "tuple", "list",
                                        "dict", "global", "object", "storage", "tensor"};
    if (!v) snprintf(buf, size, "nothing");
    else if (v->kind == YOLO_PK_STR) snprintf(buf, size, "str '%.60s'", v->s);
    else if (v->kind == YOLO_PK_GLOBAL || v->kind == YOLO_PK_OBJECT) snprintf(buf, size, "%s %.120s", kinds[v->kind], v->s);
    else if (v->kind == YOLO_PK_INT) snprintf(buf, size, "int %lld", (long long)v->i);
    else if (v->kind == YOLO_PK_TUPLE || v->kind == YOLO_PK_LIST || v->kind == YOLO_PK_DICT)
        snprintf(buf, size, "%s of %zu", kinds[v->kind], v->kind == YOLO_PK_DICT ? v->n / 2 : v->n);
    else snprintf(buf, size, "%s", (unsigned)v->kind < 12 ? kinds[v->kind] : "?");
    return buf;
}
