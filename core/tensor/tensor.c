/* Persistent tensors and host <-> backend copies (see yolo/tensor.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "graph/node.h"

size_t yolo_dtype_size(yolo_dtype dtype) {
    switch (dtype) {
    case YOLO_F32: return 4;
    case YOLO_F16: return 2;
    case YOLO_I32: return 4;
    case YOLO_U8: return 1;
    case YOLO_BF16: return 2;
    default: return 0;
    }
}

const char *yolo_dtype_name(yolo_dtype dtype) {
    switch (dtype) {
    case YOLO_F32: return "f32";
    case YOLO_F16: return "f16";
    case YOLO_I32: return "i32";
    case YOLO_U8: return "u8";
    case YOLO_BF16: return "bf16";
    default: return "invalid";
    }
}

int64_t yolo_tensor_numel(const yolo_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

size_t yolo_tensor_bytes(const yolo_tensor *t) {
    return (size_t)yolo_tensor_numel(t) * yolo_dtype_size(t->dtype);
}

const char *yolo_tensor_shape_str(const yolo_tensor *t, char *buf, size_t size) {
    if (!t) {
        snprintf(buf, size, "(null)");
        return buf;
    }
    size_t used = (size_t)snprintf(buf, size, "%s[", yolo_dtype_name(t->dtype));
    for (int i = 0; i < t->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ",%lld" : "%lld", (long long)t->shape[i]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

bool yolo_tensor_same_shape(const yolo_tensor *a, const yolo_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

static yolo_tensor *tensor_alloc(yolo_backend *backend, const char *name, yolo_dtype dtype, int ndim,
                                 const int64_t *shape) {
    if (!backend) {
        yolo_error(YOLO_ERR_ARG, "tensor '%s': no backend", name ? name : "");
        return NULL;
    }
    if (ndim < 1 || ndim > YOLO_MAX_DIMS || (int)dtype < 0 || dtype >= YOLO_DTYPE_COUNT) {
        yolo_error(YOLO_ERR_ARG, "tensor '%s': invalid ndim %d or dtype %d", name ? name : "", ndim, (int)dtype);
        return NULL;
    }
    yolo_tensor *t = yolo_tensor_alloc_with_node();
    if (!t) {
        yolo_error(YOLO_ERR_NOMEM, "tensor '%s': out of host memory", name ? name : "");
        return NULL;
    }
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < YOLO_MAX_DIMS; i++) t->shape[i] = i < ndim ? shape[i] : 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1) {
            yolo_error(YOLO_ERR_ARG, "tensor '%s': dimension %d is %lld", name ? name : "", i, (long long)shape[i]);
            free(t);
            return NULL;
        }
    }
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    t->kind = YOLO_TENSOR_PERSISTENT;
    t->backend = backend;
    t->node->index = -1;
    size_t bytes = yolo_tensor_bytes(t);
    if (backend->ops->buffer_alloc(backend, bytes, &t->buffer) != YOLO_OK) {
        yolo_error_context(YOLO_ERR_NOMEM, "tensor '%s' (%zu bytes)", t->name, bytes);
        free(t);
        return NULL;
    }
    if (backend->ops->zero(backend, t->buffer, 0, bytes) != YOLO_OK) {
        backend->ops->buffer_free(backend, t->buffer);
        free(t);
        return NULL;
    }
    return t;
}

yolo_tensor *yolo_tensor_new(yolo_backend *backend, const char *name, yolo_dtype dtype, int ndim,
                             const int64_t *shape, bool requires_grad) {
    yolo_tensor *t = tensor_alloc(backend, name, dtype, ndim, shape);
    if (!t || !requires_grad) return t;
    char grad_name[YOLO_NAME_MAX + 8];
    snprintf(grad_name, sizeof grad_name, "%s.grad", t->name);
    t->grad = tensor_alloc(backend, grad_name, dtype, ndim, shape);
    if (!t->grad) {
        yolo_tensor_free(t);
        return NULL;
    }
    t->requires_grad = true;
    return t;
}

void yolo_tensor_free(yolo_tensor *t) {
    if (!t) return;
    if (t->kind != YOLO_TENSOR_PERSISTENT) return; /* graph tensors belong to their graph */
    if (t->grad) yolo_tensor_free(t->grad);
    if (t->buffer) t->backend->ops->buffer_free(t->backend, t->buffer);
    free(t);
}

static yolo_status check_access(const yolo_tensor *t, size_t bytes, const char *what) {
    if (!t) return yolo_error(YOLO_ERR_ARG, "%s: NULL tensor", what);
    if (!t->buffer)
        return yolo_error(YOLO_ERR_ARG, "%s of '%s': the tensor has no storage yet (plan its graph first)", what,
                          t->name);
    if (bytes != yolo_tensor_bytes(t)) {
        char s[96];
        return yolo_error(YOLO_ERR_SHAPE, "%s of '%s' %s: %zu bytes given, %zu expected", what, t->name,
                          yolo_tensor_shape_str(t, s, sizeof s), bytes, yolo_tensor_bytes(t));
    }
    return YOLO_OK;
}

yolo_status yolo_tensor_upload(yolo_tensor *t, const void *data, size_t bytes) {
    yolo_status st = check_access(t, bytes, "upload");
    if (st) return st;
    yolo_backend_traffic *c = &t->backend->traffic;
    double t0 = yolo_backend_seconds();
    st = t->backend->ops->upload(t->backend, t->buffer, t->offset, data, bytes);
    c->seconds_up += yolo_backend_seconds() - t0;
    c->uploads++;
    c->bytes_up += bytes;
    return st;
}

yolo_status yolo_tensor_download(const yolo_tensor *t, void *data, size_t bytes) {
    yolo_status st = check_access(t, bytes, "download");
    if (st) return st;
    yolo_backend_traffic *c = &t->backend->traffic;
    double t0 = yolo_backend_seconds();
    st = t->backend->ops->download(t->backend, t->buffer, t->offset, data, bytes);
    c->seconds_down += yolo_backend_seconds() - t0;
    c->downloads++;
    c->bytes_down += bytes;
    return st;
}

/* At most this many tensors per batched copy (a model's heads: 3 to 5). */
#define MAX_BATCHED_COPIES 16

/* Tensors of another dtype are converted on the host, one at a time. */
static yolo_status copy_one_by_one(int n, yolo_tensor *const *t, void *const *host, bool upload) {
    yolo_status st = YOLO_OK;
    for (int i = 0; i < n && !st; i++)
        st = upload ? yolo_tensor_upload_f32(t[i], host[i], yolo_tensor_numel(t[i]))
                    : yolo_tensor_download_f32(t[i], host[i], yolo_tensor_numel(t[i]));
    return st;
}

static yolo_status copy_tensors(int n, yolo_tensor *const *t, void *const *host, bool upload) {
    const char *what = upload ? "upload" : "download";
    if (n <= 0) return YOLO_OK;
    if (n > MAX_BATCHED_COPIES)
        return yolo_error(YOLO_ERR_ARG, "batched %s of %d tensors: at most %d", what, n, MAX_BATCHED_COPIES);
    yolo_backend_copy copies[MAX_BATCHED_COPIES];
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        yolo_status st = check_access(t[i], t[i] ? yolo_tensor_bytes(t[i]) : 0, what);
        if (st) return st;
        if (t[i]->backend != t[0]->backend)
            return yolo_error(YOLO_ERR_ARG, "batched %s of '%s': on %s, the others on %s", what, t[i]->name,
                              yolo_backend_name(t[i]->backend), yolo_backend_name(t[0]->backend));
        if (t[i]->dtype != YOLO_F32) return copy_one_by_one(n, t, host, upload);
        copies[i] = (yolo_backend_copy){t[i]->buffer, t[i]->offset, host[i], yolo_tensor_bytes(t[i])};
        total += copies[i].bytes;
    }
    yolo_backend *be = t[0]->backend;
    yolo_status st = YOLO_OK;
    double t0 = yolo_backend_seconds();
    if (be->ops->copy_many) {
        st = be->ops->copy_many(be, upload, copies, n);
    } else {
        for (int i = 0; i < n && !st; i++)
            st = upload ? be->ops->upload(be, copies[i].buffer, copies[i].offset, copies[i].host, copies[i].bytes)
                        : be->ops->download(be, copies[i].buffer, copies[i].offset, copies[i].host, copies[i].bytes);
    }
    double seconds = yolo_backend_seconds() - t0;
    yolo_backend_traffic *c = &be->traffic;
    if (upload) {
        c->seconds_up += seconds, c->uploads++, c->bytes_up += total;
    } else {
        c->seconds_down += seconds, c->downloads++, c->bytes_down += total;
    }
    return st;
}

yolo_status yolo_tensors_download_f32(int n, yolo_tensor *const *t, float *const *host) {
    return copy_tensors(n, t, (void *const *)host, false);
}

yolo_status yolo_tensors_upload_f32(int n, yolo_tensor *const *t, const float *const *host) {
    void *h[MAX_BATCHED_COPIES];
    for (int i = 0; i < n && i < MAX_BATCHED_COPIES; i++) h[i] = (void *)host[i]; /* read only on upload */
    return copy_tensors(n, t, h, true);
}

yolo_status yolo_tensor_zero(yolo_tensor *t) {
    yolo_status st = check_access(t, t ? yolo_tensor_bytes(t) : 0, "zero");
    if (st) return st;
    return t->backend->ops->zero(t->backend, t->buffer, t->offset, yolo_tensor_bytes(t));
}

yolo_status yolo_tensor_upload_f32(yolo_tensor *t, const float *data, int64_t count) {
    if (!t) return yolo_error(YOLO_ERR_ARG, "upload: NULL tensor");
    if (count != yolo_tensor_numel(t))
        return yolo_error(YOLO_ERR_SHAPE, "upload of '%s': %lld values given, %lld expected", t->name,
                          (long long)count, (long long)yolo_tensor_numel(t));
    if (t->dtype == YOLO_F32) return yolo_tensor_upload(t, data, (size_t)count * 4);
    size_t bytes = yolo_tensor_bytes(t);
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp) return yolo_error(YOLO_ERR_NOMEM, "upload of '%s': out of host memory", t->name);
    for (int64_t i = 0; i < count; i++) {
        switch (t->dtype) {
        case YOLO_F16: ((uint16_t *)tmp)[i] = yolo_f32_to_f16(data[i]); break;
        case YOLO_BF16: ((uint16_t *)tmp)[i] = yolo_f32_to_bf16(data[i]); break;
        case YOLO_I32: ((int32_t *)tmp)[i] = (int32_t)lrintf(data[i]); break;
        case YOLO_U8: ((uint8_t *)tmp)[i] = (uint8_t)fminf(fmaxf(lrintf(data[i]), 0.0f), 255.0f); break;
        default: break;
        }
    }
    yolo_status st = yolo_tensor_upload(t, tmp, bytes);
    free(tmp);
    return st;
}

yolo_status yolo_tensor_download_f32(const yolo_tensor *t, float *data, int64_t count) {
    if (!t) return yolo_error(YOLO_ERR_ARG, "download: NULL tensor");
    if (count != yolo_tensor_numel(t))
        return yolo_error(YOLO_ERR_SHAPE, "download of '%s': room for %lld values, %lld needed", t->name,
                          (long long)count, (long long)yolo_tensor_numel(t));
    if (t->dtype == YOLO_F32) return yolo_tensor_download(t, data, (size_t)count * 4);
    size_t bytes = yolo_tensor_bytes(t);
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp) return yolo_error(YOLO_ERR_NOMEM, "download of '%s': out of host memory", t->name);
    yolo_status st = yolo_tensor_download(t, tmp, bytes);
    for (int64_t i = 0; st == YOLO_OK && i < count; i++) {
        switch (t->dtype) {
        case YOLO_F16: data[i] = yolo_f16_to_f32(((uint16_t *)tmp)[i]); break;
        case YOLO_BF16: data[i] = yolo_bf16_to_f32(((uint16_t *)tmp)[i]); break;
        case YOLO_I32: data[i] = (float)((int32_t *)tmp)[i]; break;
        case YOLO_U8: data[i] = (float)((uint8_t *)tmp)[i]; break;
        default: break;
        }
    }
    free(tmp);
    return st;
}

uint16_t yolo_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t mant = x & 0x7fffffu;
    if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0)); /* inf / nan */
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u); /* overflow -> inf */
    if (e <= 0) {                                      /* subnormal or zero */
        if (e < -10) return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++; /* may carry into the exponent: correct */
    return (uint16_t)half;
}

float yolo_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else { /* subnormal: normalize */
            int e = -1;
            do {
                mant <<= 1;
                e++;
            } while (!(mant & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 0x1f) {
        x = sign | 0x7f800000u | (mant << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* As the CPU's VCVTNEPS2BF16 (and so oneDNN's reorders): NaN quiet,
 * denormals to a signed zero, the rest rounded to nearest even. */
uint16_t yolo_f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float yolo_bf16_to_f32(uint16_t b) {
    const uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
