/* yolo_tensor <-> checkpoint blob helpers (see ckpt_tensors.h). */
#include "ckpt/ckpt_tensors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

yolo_st_dtype yolo_ckpt_st_dtype(yolo_dtype dtype) {
    switch (dtype) {
    case YOLO_F16: return YOLO_ST_F16;
    case YOLO_I32: return YOLO_ST_I32;
    case YOLO_U8: return YOLO_ST_U8;
    default: return YOLO_ST_F32;
    }
}

static bool is_float_st(yolo_st_dtype d) { return d == YOLO_ST_F16 || d == YOLO_ST_F32 || d == YOLO_ST_F64; }
static bool is_float_yolo(yolo_dtype d) { return d == YOLO_F16 || d == YOLO_F32; }

void yolo_ckpt_tensors_free(yolo_ckpt_tensors *ts) {
    if (!ts) return;
    for (size_t i = 0; i < ts->count; i++) {
        free(ts->names[i]);
        free(ts->data[i]);
    }
    free(ts->items);
    free(ts->names);
    free(ts->data);
    memset(ts, 0, sizeof *ts);
}

const yolo_ckpt_blob *yolo_ckpt_tensors_blob(yolo_ckpt_tensors *ts) {
    ts->blob.tensors = ts->items;
    ts->blob.count = ts->count;
    return &ts->blob;
}

/* Appends an entry that takes ownership of `data` (freed on failure). */
static yolo_status push(yolo_ckpt_tensors *ts, const char *name, yolo_st_dtype dtype, int ndim, const int64_t *shape,
                        void *data, size_t nbytes) {
    if (ts->count == ts->cap) {
        size_t cap = ts->cap ? ts->cap * 2 : 64;
        yolo_st_tensor *items = realloc(ts->items, cap * sizeof *items);
        if (items) ts->items = items;
        char **names = items ? realloc(ts->names, cap * sizeof *names) : NULL;
        if (names) ts->names = names;
        void **datas = names ? realloc(ts->data, cap * sizeof *datas) : NULL;
        if (!datas) {
            free(data);
            return yolo_error(YOLO_ERR_NOMEM, "checkpoint tensors: out of memory");
        }
        ts->data = datas;
        ts->cap = cap;
    }
    char *nm = strdup(name);
    if (!nm) {
        free(data);
        return yolo_error(YOLO_ERR_NOMEM, "checkpoint tensors: out of memory");
    }
    yolo_st_tensor *t = &ts->items[ts->count];
    memset(t, 0, sizeof *t);
    t->name = nm;
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->data = data;
    t->nbytes = nbytes;
    ts->names[ts->count] = nm;
    ts->data[ts->count] = data;
    ts->count++;
    return YOLO_OK;
}

yolo_status yolo_ckpt_tensors_add_host(yolo_ckpt_tensors *ts, const char *name, yolo_st_dtype dtype, int ndim,
                                       const int64_t *shape, const void *data) {
    if (!ts || !name || (unsigned)dtype >= YOLO_ST_DTYPE_COUNT || ndim < 0 || ndim > YOLO_ST_MAX_DIMS || (ndim && !shape))
        return yolo_error(YOLO_ERR_ARG, "checkpoint tensors: bad arguments adding '%s'", name ? name : "(null)");
    size_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || __builtin_mul_overflow(numel, (size_t)shape[i], &numel))
            return yolo_error(YOLO_ERR_ARG, "checkpoint tensors: '%s' has an invalid shape", name);
    }
    size_t nbytes;
    if (__builtin_mul_overflow(numel, yolo_st_dtype_size(dtype), &nbytes))
        return yolo_error(YOLO_ERR_ARG, "checkpoint tensors: '%s' is too large", name);
    if (nbytes && !data) return yolo_error(YOLO_ERR_ARG, "checkpoint tensors: '%s' has no data", name);
    void *copy = malloc(nbytes ? nbytes : 1);
    if (!copy) return yolo_error(YOLO_ERR_NOMEM, "checkpoint tensors: out of memory for '%s' (%zu bytes)", name, nbytes);
    if (nbytes) memcpy(copy, data, nbytes);
    return push(ts, name, dtype, ndim, shape, copy, nbytes);
}

yolo_status yolo_ckpt_tensors_add(yolo_ckpt_tensors *ts, const char *name, const yolo_tensor *t, yolo_dtype store) {
    if (!ts || !t) return yolo_error(YOLO_ERR_ARG, "checkpoint tensors: NULL tensor");
    if (!name) name = t->name;
    if (t->ndim < 0 || t->ndim > YOLO_MAX_DIMS)
        return yolo_error(YOLO_ERR_ARG, "checkpoint tensors: '%s' has %d dims", name, t->ndim);
    int64_t numel = yolo_tensor_numel(t);
    yolo_status st;
    if (!is_float_yolo(t->dtype)) {
        size_t bytes = yolo_tensor_bytes(t);
        void *buf = malloc(bytes ? bytes : 1);
        if (!buf) return yolo_error(YOLO_ERR_NOMEM, "checkpoint tensors: out of memory for '%s'", name);
        if ((st = yolo_tensor_download(t, buf, bytes))) {
            free(buf);
            return yolo_error_context(st, "saving tensor '%s'", name);
        }
        return push(ts, name, yolo_ckpt_st_dtype(t->dtype), t->ndim, t->shape, buf, bytes);
    }
    if (store == YOLO_F16 && t->dtype == YOLO_F16) {
        size_t bytes = (size_t)numel * 2;
        void *buf = malloc(bytes ? bytes : 1);
        if (!buf) return yolo_error(YOLO_ERR_NOMEM, "checkpoint tensors: out of memory for '%s'", name);
        if ((st = yolo_tensor_download(t, buf, bytes))) {
            free(buf);
            return yolo_error_context(st, "saving tensor '%s'", name);
        }
        return push(ts, name, YOLO_ST_F16, t->ndim, t->shape, buf, bytes);
    }
    float *f = malloc((size_t)(numel ? numel : 1) * sizeof *f);
    if (!f) return yolo_error(YOLO_ERR_NOMEM, "checkpoint tensors: out of memory for '%s'", name);
    if ((st = yolo_tensor_download_f32(t, f, numel))) {
        free(f);
        return yolo_error_context(st, "saving tensor '%s'", name);
    }
    if (store != YOLO_F16) return push(ts, name, YOLO_ST_F32, t->ndim, t->shape, f, (size_t)numel * sizeof *f);
    uint16_t *h = malloc((size_t)(numel ? numel : 1) * sizeof *h);
    if (!h) {
        free(f);
        return yolo_error(YOLO_ERR_NOMEM, "checkpoint tensors: out of memory for '%s'", name);
    }
    for (int64_t i = 0; i < numel; i++) h[i] = yolo_f32_to_f16(f[i]);
    free(f);
    return push(ts, name, YOLO_ST_F16, t->ndim, t->shape, h, (size_t)numel * sizeof *h);
}

static bool same_shape(const yolo_st_tensor *src, const yolo_tensor *dst) {
    if (src->ndim != dst->ndim) return false;
    for (int i = 0; i < src->ndim; i++)
        if (src->shape[i] != dst->shape[i]) return false;
    return true;
}

bool yolo_ckpt_tensor_matches(const yolo_st_tensor *src, const yolo_tensor *dst) {
    if (!src || !dst || !same_shape(src, dst)) return false;
    if (is_float_yolo(dst->dtype)) return is_float_st(src->dtype);
    return src->dtype == yolo_ckpt_st_dtype(dst->dtype);
}

yolo_status yolo_ckpt_load_tensor(const yolo_st_tensor *src, yolo_tensor *dst, const char *what) {
    what = what ? what : "checkpoint";
    char a[160], b[160];
    if (!yolo_ckpt_tensor_matches(src, dst))
        return yolo_error(YOLO_ERR_SHAPE, "%s: tensor '%s' is %s, the model's is %s", what, src->name,
                          yolo_st_shape_str(src, a, sizeof a), yolo_tensor_shape_str(dst, b, sizeof b));
    int64_t numel = yolo_st_numel(src);
    yolo_status st;
    if (!is_float_yolo(dst->dtype) || (src->dtype == YOLO_ST_F32 && dst->dtype == YOLO_F32) ||
        (src->dtype == YOLO_ST_F16 && dst->dtype == YOLO_F16)) {
        st = yolo_tensor_upload(dst, src->data, src->nbytes);
    } else {
        float *f = malloc((size_t)(numel ? numel : 1) * sizeof *f);
        if (!f) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory loading '%s'", what, src->name);
        const uint8_t *p = src->data;
        for (int64_t i = 0; i < numel; i++) {
            if (src->dtype == YOLO_ST_F16) {
                uint16_t h;
                memcpy(&h, p + 2 * i, 2);
                f[i] = yolo_f16_to_f32(h);
            } else if (src->dtype == YOLO_ST_F32) {
                memcpy(&f[i], p + 4 * i, 4);
            } else {
                double d;
                memcpy(&d, p + 8 * i, 8);
                f[i] = (float)d;
            }
        }
        st = yolo_tensor_upload_f32(dst, f, numel);
        free(f);
    }
    if (st) return yolo_error_context(st, "%s: loading tensor '%s'", what, src->name);
    return YOLO_OK;
}

/* ---- the loading rules ---- */

/* The one name a file may hold that no model of ours has: BatchNorm2d's
 * num_batches_tracked counts the batches trained, and PyTorch reads it only
 * for momentum=None (Ultralytics' batch norms have a momentum), so nothing
 * is computed from it. Every Ultralytics state dict holds one per batch
 * norm: the .pt reader drops them (counting them for "Transferred N/M"), a
 * safetensors converted from a state dict keeps them. Everything else is
 * exact: the DFL's fixed conv weight and YOLOv10/YOLO26's one2one branches
 * are in the files and in our models alike, and the head's anchors and
 * strides are plain attributes in Ultralytics, not state. */
static bool ignored_extra(const char *name) {
    static const char suffix[] = ".num_batches_tracked";
    size_t n = strlen(name), s = sizeof suffix - 1;
    return n >= s && !strcmp(name + n - s, suffix);
}

/* NaN and ±Inf among the values of a tensor that yolo_ckpt_tensor_matches
 * (all exponent bits set); *first: the first one's index. */
static int64_t count_nonfinite(const yolo_st_tensor *t, int64_t *first) {
    size_t es = yolo_st_dtype_size(t->dtype);
    uint64_t mask;
    switch (t->dtype) {
    case YOLO_ST_F16: mask = 0x7c00u; break;
    case YOLO_ST_F32: mask = 0x7f800000u; break;
    case YOLO_ST_F64: mask = 0x7ff0000000000000ull; break;
    default: return 0;
    }
    int64_t bad = 0, numel = yolo_st_numel(t);
    const uint8_t *p = t->data;
    for (int64_t i = 0; i < numel; i++) {
        uint64_t bits = 0;
        memcpy(&bits, p + (size_t)i * es, es); /* little-endian hosts, as the format */
        if ((bits & mask) == mask && !bad++) *first = i;
    }
    return bad;
}

static const char *name_at(yolo_tensor *const *tensors, const char *const *names, size_t i) {
    return names && names[i] ? names[i] : tensors[i]->name;
}

/* One line of the report: the first YOLO_CKPT_REPORT_LINES are kept. */
static void report_add(yolo_ckpt_report *r, yolo_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report_add(yolo_ckpt_report *r, yolo_status st, const char *fmt, ...) {
    if (!r->n_listed) r->first = st;
    if (r->n_listed < YOLO_CKPT_REPORT_LINES) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->lines[r->n_listed], sizeof r->lines[0], fmt, ap);
        va_end(ap);
    }
    r->n_listed++;
}

/* How each of the n tensors fits the blob (fits[i]), and what does not:
 * a tensor missing from the blob, of another shape or a dtype that does not
 * convert, holding NaN or Inf (when `finite`), and a tensor of the blob
 * that none of them is (ignored_extra aside). */
static void survey(const yolo_st_file *blob, yolo_tensor *const *tensors, const char *const *names, size_t n,
                   bool finite, bool *fits, yolo_ckpt_report *r) {
    memset(r, 0, sizeof *r);
    size_t found = 0;
    char a[160], b[160];
    for (size_t i = 0; i < n; i++) {
        const char *name = name_at(tensors, names, i);
        const yolo_st_tensor *src = yolo_st_find(blob, name);
        int64_t first = 0, bad = 0;
        fits[i] = false;
        found += src != NULL;
        if (!src)
            report_add(r, YOLO_ERR_FORMAT, "tensor '%s' is missing (the model's is %s)", name,
                       yolo_tensor_shape_str(tensors[i], b, sizeof b));
        else if (!yolo_ckpt_tensor_matches(src, tensors[i]))
            report_add(r, YOLO_ERR_SHAPE, "tensor '%s' is %s in the file, the model's is %s", name,
                       yolo_st_shape_str(src, a, sizeof a), yolo_tensor_shape_str(tensors[i], b, sizeof b));
        else if (finite && (bad = count_nonfinite(src, &first)) > 0) {
            r->n_nonfinite++;
            report_add(r, YOLO_ERR_FORMAT, "tensor '%s' holds %lld non-finite value%s (NaN or Inf; the first at "
                       "element %lld of %lld)", name, (long long)bad, bad == 1 ? "" : "s", (long long)first,
                       (long long)yolo_st_numel(src));
        } else
            fits[i] = true;
    }
    /* the blob's other tensors, looked for only when there are some */
    for (size_t k = 0; found < yolo_st_count(blob) && k < yolo_st_count(blob); k++) {
        const yolo_st_tensor *t = yolo_st_at(blob, k);
        bool known = ignored_extra(t->name);
        for (size_t i = 0; i < n && !known; i++) known = !strcmp(t->name, name_at(tensors, names, i));
        if (!known)
            report_add(r, YOLO_ERR_FORMAT, "tensor '%s' (%s) is unexpected: the model has no tensor of that name",
                       t->name, yolo_st_shape_str(t, a, sizeof a));
    }
}

void yolo_ckpt_report_print(const yolo_ckpt_report *r, const char *heading, FILE *out) {
    if (!r->n_listed) return;
    fprintf(out, "%s (%zu):\n", heading, r->n_listed);
    size_t shown = r->n_listed < YOLO_CKPT_REPORT_LINES ? r->n_listed : YOLO_CKPT_REPORT_LINES;
    for (size_t i = 0; i < shown; i++) fprintf(out, "  %s\n", r->lines[i]);
    if (r->n_listed > shown) fprintf(out, "  and %zu more\n", r->n_listed - shown);
}

/* The strict forms: everything is checked before anything is loaded. */
static yolo_status load_exact(const yolo_st_file *blob, yolo_tensor *const *tensors, const char *const *names,
                              size_t n, const char *what, bool finite) {
    what = what ? what : "checkpoint";
    if (!blob) return yolo_error(YOLO_ERR_FORMAT, "%s: missing", what);
    bool *fits = malloc(n ? n : 1);
    if (!fits) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what);
    yolo_ckpt_report r;
    survey(blob, tensors, names, n, finite, fits, &r);
    free(fits);
    if (r.n_listed > 1)
        return yolo_error(r.first, "%s: %s; and %zu more tensor%s that do%s not load exactly (a model loads every "
                          "tensor of its file or none)", what, r.lines[0], r.n_listed - 1, r.n_listed > 2 ? "s" : "",
                          r.n_listed > 2 ? "" : "es");
    if (r.n_listed) return yolo_error(r.first, "%s: %s", what, r.lines[0]);
    for (size_t i = 0; i < n; i++) {
        yolo_status st = yolo_ckpt_load_tensor(yolo_st_find(blob, name_at(tensors, names, i)), tensors[i], what);
        if (st) return st;
    }
    return YOLO_OK;
}

yolo_status yolo_ckpt_load_all(const yolo_st_file *blob, yolo_tensor *const *tensors, const char *const *names,
                               size_t n, const char *what) {
    return load_exact(blob, tensors, names, n, what, false);
}

yolo_status yolo_ckpt_load_weights(const yolo_st_file *blob, yolo_tensor *const *tensors, size_t n,
                                   const char *what) {
    return load_exact(blob, tensors, NULL, n, what, true);
}

yolo_status yolo_ckpt_load_matching_report(const yolo_st_file *blob, yolo_tensor *const *tensors, size_t n,
                                           const char *what, size_t *transferred, yolo_ckpt_report *report) {
    *transferred = 0;
    what = what ? what : "checkpoint";
    if (!blob) return yolo_error(YOLO_ERR_FORMAT, "%s: missing", what);
    bool *fits = malloc(n ? n : 1);
    yolo_ckpt_report *r = report ? report : malloc(sizeof *r);
    if (!fits || !r) {
        free(fits);
        if (r != report) free(r);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", what);
    }
    /* NaN or Inf is not transferred: one such weight turns every loss NaN from the first batch on, where a
     * tensor left at its initialisation trains as the head's new classes do (Ultralytics copies it as is) */
    survey(blob, tensors, NULL, n, true, fits, r);
    size_t fitting = 0;
    for (size_t i = 0; i < n; i++) fitting += fits[i];
    yolo_status st = YOLO_OK;
    if (n && !fitting)
        st = yolo_error(YOLO_ERR_FORMAT, "%s: none of the model's %zu tensors matches one of the file by name and "
                        "shape (%s%s): nothing to transfer, these are another model's weights", what, n,
                        r->lines[0], r->n_listed > 1 ? ", ..." : "");
    for (size_t i = 0; !st && i < n; i++) {
        if (!fits[i]) continue;
        st = yolo_ckpt_load_tensor(yolo_st_find(blob, tensors[i]->name), tensors[i], what);
        if (!st) (*transferred)++;
    }
    free(fits);
    if (r != report) free(r);
    return st;
}

yolo_status yolo_ckpt_load_matching(const yolo_st_file *blob, yolo_tensor *const *tensors, size_t n,
                                    const char *what, size_t *transferred) {
    return yolo_ckpt_load_matching_report(blob, tensors, n, what, transferred, NULL);
}

static yolo_status member_of(const yolo_ckpt *ck, yolo_ckpt_blob_id id, const yolo_st_file **blob, char *what,
                             size_t size) {
    snprintf(what, size, "%s of %s", yolo_ckpt_member_name(id), yolo_ckpt_path(ck));
    *blob = yolo_ckpt_get_blob(ck, id);
    if (!*blob)
        return yolo_error(YOLO_ERR_FORMAT, "%s has no member %s", yolo_ckpt_path(ck), yolo_ckpt_member_name(id));
    return YOLO_OK;
}

yolo_status yolo_ckpt_restore(const yolo_ckpt *ck, yolo_ckpt_blob_id id, yolo_tensor *const *tensors,
                              const char *const *names, size_t n) {
    char what[1100];
    const yolo_st_file *blob;
    yolo_status st = member_of(ck, id, &blob, what, sizeof what);
    /* weights are finite; the optimizer's pending gradients may hold the Inf of an fp16 step the loss
     * scaler is about to skip */
    return st ? st : load_exact(blob, tensors, names, n, what, id != YOLO_CKPT_OPTIMIZER);
}

yolo_status yolo_ckpt_transfer_report(const yolo_ckpt *ck, yolo_ckpt_blob_id id, yolo_tensor *const *tensors,
                                      size_t n, size_t *transferred, yolo_ckpt_report *report) {
    char what[1100];
    const yolo_st_file *blob;
    *transferred = 0;
    if (report) memset(report, 0, sizeof *report);
    yolo_status st = member_of(ck, id, &blob, what, sizeof what);
    return st ? st : yolo_ckpt_load_matching_report(blob, tensors, n, what, transferred, report);
}

yolo_status yolo_ckpt_transfer(const yolo_ckpt *ck, yolo_ckpt_blob_id id, yolo_tensor *const *tensors, size_t n,
                               size_t *transferred) {
    return yolo_ckpt_transfer_report(ck, id, tensors, n, transferred, NULL);
}

yolo_ckpt_blob_id yolo_ckpt_weights_member(const yolo_ckpt *ck) {
    return yolo_ckpt_get_blob(ck, YOLO_CKPT_EMA) ? YOLO_CKPT_EMA : YOLO_CKPT_MODEL;
}
