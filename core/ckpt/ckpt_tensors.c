/* yolo_tensor <-> checkpoint blob helpers (see ckpt_tensors.h). */
#include "ckpt/ckpt_tensors.h"

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

static const char *shape_of(const yolo_tensor *t, char *buf, size_t n) { return yolo_tensor_shape_str(t, buf, n); }

yolo_status yolo_ckpt_load_tensor(const yolo_st_tensor *src, yolo_tensor *dst, const char *what) {
    what = what ? what : "checkpoint";
    char a[160], b[160];
    if (!yolo_ckpt_tensor_matches(src, dst))
        return yolo_error(YOLO_ERR_SHAPE, "%s: tensor '%s' is %s, the model's is %s", what, src->name,
                          yolo_st_shape_str(src, a, sizeof a), shape_of(dst, b, sizeof b));
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

yolo_status yolo_ckpt_load_all(const yolo_st_file *blob, yolo_tensor *const *tensors, const char *const *names,
                               size_t n, const char *what) {
    what = what ? what : "checkpoint";
    if (!blob) return yolo_error(YOLO_ERR_FORMAT, "%s: missing", what);
    /* Everything is checked before anything is loaded. */
    for (size_t i = 0; i < n; i++) {
        const char *name = names && names[i] ? names[i] : tensors[i]->name;
        const yolo_st_tensor *src = yolo_st_find(blob, name);
        if (!src) return yolo_error(YOLO_ERR_FORMAT, "%s: tensor '%s' is missing", what, name);
        if (!yolo_ckpt_tensor_matches(src, tensors[i])) {
            char a[160], b[160];
            return yolo_error(YOLO_ERR_SHAPE, "%s: tensor '%s' is %s, the model's is %s", what, name,
                              yolo_st_shape_str(src, a, sizeof a), shape_of(tensors[i], b, sizeof b));
        }
    }
    if (yolo_st_count(blob) != n) {
        /* Something in the blob is not among the tensors: name it. */
        for (size_t k = 0; k < yolo_st_count(blob); k++) {
            const char *bn = yolo_st_at(blob, k)->name;
            bool found = false;
            for (size_t i = 0; i < n && !found; i++)
                found = strcmp(bn, names && names[i] ? names[i] : tensors[i]->name) == 0;
            if (!found)
                return yolo_error(YOLO_ERR_FORMAT, "%s: holds tensor '%s' that the model does not have (%zu stored, %zu expected)",
                                  what, bn, yolo_st_count(blob), n);
        }
        return yolo_error(YOLO_ERR_FORMAT, "%s: %zu tensors stored, %zu expected", what, yolo_st_count(blob), n);
    }
    for (size_t i = 0; i < n; i++) {
        yolo_status st = yolo_ckpt_load_tensor(yolo_st_find(blob, names && names[i] ? names[i] : tensors[i]->name),
                                               tensors[i], what);
        if (st) return st;
    }
    return YOLO_OK;
}

yolo_status yolo_ckpt_load_matching(const yolo_st_file *blob, yolo_tensor *const *tensors, size_t n,
                                    const char *what, size_t *transferred) {
    *transferred = 0;
    what = what ? what : "checkpoint";
    if (!blob) return yolo_error(YOLO_ERR_FORMAT, "%s: missing", what);
    for (size_t i = 0; i < n; i++) {
        const yolo_st_tensor *src = yolo_st_find(blob, tensors[i]->name);
        if (!src || !yolo_ckpt_tensor_matches(src, tensors[i])) continue;
        yolo_status st = yolo_ckpt_load_tensor(src, tensors[i], what);
        if (st) return st;
        (*transferred)++;
    }
    return YOLO_OK;
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
    return st ? st : yolo_ckpt_load_all(blob, tensors, names, n, what);
}

yolo_status yolo_ckpt_transfer(const yolo_ckpt *ck, yolo_ckpt_blob_id id, yolo_tensor *const *tensors, size_t n,
                               size_t *transferred) {
    char what[1100];
    const yolo_st_file *blob;
    *transferred = 0;
    yolo_status st = member_of(ck, id, &blob, what, sizeof what);
    return st ? st : yolo_ckpt_load_matching(blob, tensors, n, what, transferred);
}

yolo_ckpt_blob_id yolo_ckpt_weights_member(const yolo_ckpt *ck) {
    return yolo_ckpt_get_blob(ck, YOLO_CKPT_EMA) ? YOLO_CKPT_EMA : YOLO_CKPT_MODEL;
}
