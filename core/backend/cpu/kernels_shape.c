/* CPU kernels of the shape ops: concat, slice (and its backward),
 * broadcast_to and sum_to (contracts in graph/ops.h).
 *
 * Concat and slice move whole rows with memcpy and work for any dtype.
 * sum_to gives each output element to one thread, summing in double in a
 * fixed order, so its result does not depend on the thread count. */
#include <stdint.h>
#include <string.h>

#include "backend/cpu/cpu_backend.h"

static size_t elem_size(yolo_dtype dt) {
    switch (dt) {
    case YOLO_F16:
    case YOLO_BF16: return 2;
    case YOLO_U8: return 1;
    default: return 4;
    }
}

/* Product of shape[from..to). */
static int64_t dims_product(const yolo_tensor *t, int from, int to) {
    int64_t n = 1;
    for (int i = from; i < to; i++) n *= t->shape[i];
    return n;
}

static int axis_of(const yolo_tensor *out) {
    int axis = out->node->iparams[0];
    return axis < 0 ? axis + out->ndim : axis;
}

/* ---- CONCAT: n srcs along axis i0 ---- */

typedef struct concat_job {
    const yolo_tensor *out;
    char *dst;
    int64_t inner_bytes; /* bytes of one index step along the axis */
    int64_t out_row;     /* bytes of one outer row of the output */
} concat_job;

/* Task t copies source t % n_src's block of outer row t / n_src. */
static void concat_range(void *arg, int64_t begin, int64_t end) {
    const concat_job *j = arg;
    const int n = j->out->node->n_src;
    const int axis = axis_of(j->out);
    for (int64_t t = begin; t < end; t++) {
        const int64_t o = t / n;
        const int k = (int)(t % n);
        int64_t offset = 0; /* position of source k along the axis */
        for (int i = 0; i < k; i++) offset += j->out->node->src[i]->shape[axis];
        const yolo_tensor *s = j->out->node->src[k];
        const int64_t bytes = s->shape[axis] * j->inner_bytes;
        memcpy(j->dst + o * j->out_row + offset * j->inner_bytes, (const char *)yolo_cpu_data(s) + o * bytes,
               (size_t)bytes);
    }
}

static yolo_status concat_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const int axis = axis_of(out);
    if (axis < 0 || axis >= out->ndim)
        return yolo_error(YOLO_ERR_ARG, "CONCAT: axis %d out of range for a %d-d output", out->node->iparams[0], out->ndim);
    for (int k = 0; k < out->node->n_src; k++)
        if (out->node->src[k]->dtype != out->dtype)
            return yolo_error(YOLO_ERR_SHAPE, "CONCAT '%s': source %d is %s, the output %s", out->name, k,
                              yolo_dtype_name(out->node->src[k]->dtype), yolo_dtype_name(out->dtype));
    concat_job j;
    j.out = out;
    j.dst = yolo_cpu_data(out);
    j.inner_bytes = dims_product(out, axis + 1, out->ndim) * (int64_t)elem_size(out->dtype);
    j.out_row = out->shape[axis] * j.inner_bytes;
    const int64_t outer = dims_product(out, 0, axis);
    yolo_cpu_run_ranges(ctx, outer * out->node->n_src, yolo_tensor_numel(out), concat_range, &j);
    return YOLO_OK;
}

/* ---- SLICE and SLICE_BWD: rows of the smaller tensor inside the larger ---- */

typedef struct slice_job {
    const char *src;
    char *dst;
    int64_t small_row, big_row, start_bytes; /* bytes */
    int backward;                            /* 0: big -> small; 1: small -> big with zeros around */
} slice_job;

static void slice_range(void *arg, int64_t begin, int64_t end) {
    const slice_job *j = arg;
    for (int64_t o = begin; o < end; o++) {
        if (!j->backward) {
            memcpy(j->dst + o * j->small_row, j->src + o * j->big_row + j->start_bytes, (size_t)j->small_row);
        } else {
            char *row = j->dst + o * j->big_row;
            memset(row, 0, (size_t)j->start_bytes);
            memcpy(row + j->start_bytes, j->src + o * j->small_row, (size_t)j->small_row);
            memset(row + j->start_bytes + j->small_row, 0, (size_t)(j->big_row - j->start_bytes - j->small_row));
        }
    }
}

static yolo_status slice_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *src = out->node->src[0];
    const int backward = out->node->op == YOLO_OP_SLICE_BWD;
    const yolo_tensor *big = backward ? out : src, *small = backward ? src : out;
    const int axis = axis_of(out);
    if (axis < 0 || axis >= out->ndim)
        return yolo_error(YOLO_ERR_ARG, "%s: axis %d out of range for a %d-d output", yolo_op_name(out->node->op),
                          out->node->iparams[0], out->ndim);
    if (src->dtype != out->dtype)
        return yolo_error(YOLO_ERR_SHAPE, "%s '%s': source is %s, the output %s", yolo_op_name(out->node->op),
                          out->name, yolo_dtype_name(src->dtype), yolo_dtype_name(out->dtype));
    const int64_t start = out->node->iparams[1];
    if (start < 0 || start + small->shape[axis] > big->shape[axis])
        return yolo_error(YOLO_ERR_ARG, "%s: [%lld, %lld) outside axis %d of length %lld", yolo_op_name(out->node->op),
                          (long long)start, (long long)(start + small->shape[axis]), axis,
                          (long long)big->shape[axis]);
    const int64_t inner = dims_product(out, axis + 1, out->ndim) * (int64_t)elem_size(out->dtype);
    slice_job j = {yolo_cpu_data(src), yolo_cpu_data(out), small->shape[axis] * inner, big->shape[axis] * inner,
                   start * inner, backward};
    yolo_cpu_run_ranges(ctx, dims_product(out, 0, axis), yolo_tensor_numel(big), slice_range, &j);
    return YOLO_OK;
}

/* ---- BROADCAST_TO and SUM_TO ----
 * Both pair a "small" tensor (dims 1 or equal, right-aligned) with a "big"
 * one. Big dims of size 1 are dropped and neighbours with the same
 * broadcast flag merged, leaving at most 4 alternating groups. */

typedef struct bcast_plan {
    int nd;
    int64_t dim[YOLO_MAX_DIMS];
    int bcast[YOLO_MAX_DIMS];       /* 1: small has size 1 here */
    int64_t big_stride[YOLO_MAX_DIMS];
    int64_t small_stride[YOLO_MAX_DIMS]; /* 0 where broadcast */
} bcast_plan;

static void bcast_plan_make(bcast_plan *p, const yolo_tensor *big, const yolo_tensor *small) {
    int nd = 0;
    for (int i = 0; i < big->ndim; i++) {
        const int64_t bd = big->shape[i];
        if (bd == 1) continue;
        const int is = i - (big->ndim - small->ndim);
        const int flag = (is >= 0 ? small->shape[is] : 1) != bd;
        if (nd > 0 && p->bcast[nd - 1] == flag) {
            p->dim[nd - 1] *= bd;
        } else {
            p->dim[nd] = bd;
            p->bcast[nd] = flag;
            nd++;
        }
    }
    if (nd == 0) {
        p->dim[0] = 1;
        p->bcast[0] = 0;
        nd = 1;
    }
    int64_t sb = 1, ss = 1;
    for (int d = nd - 1; d >= 0; d--) {
        p->big_stride[d] = sb;
        p->small_stride[d] = p->bcast[d] ? 0 : ss;
        sb *= p->dim[d];
        if (!p->bcast[d]) ss *= p->dim[d];
    }
    p->nd = nd;
}

typedef struct bcast_job {
    bcast_plan p;
    const float *src;
    float *dst;
} bcast_job;

/* BROADCAST_TO over a flat range of output elements. */
static void broadcast_range(void *arg, int64_t begin, int64_t end) {
    const bcast_job *j = arg;
    const bcast_plan *p = &j->p;
    const int last = p->nd - 1;
    int64_t idx[YOLO_MAX_DIMS], rem = begin;
    for (int d = last; d >= 0; d--) {
        idx[d] = rem % p->dim[d];
        rem /= p->dim[d];
    }
    int64_t i = begin;
    while (i < end) {
        int64_t off = 0;
        for (int d = 0; d < p->nd; d++) off += idx[d] * p->small_stride[d];
        int64_t len = p->dim[last] - idx[last];
        if (len > end - i) len = end - i;
        const float *restrict s = j->src + off;
        float *restrict o = j->dst + i;
        if (p->small_stride[last]) {
            memcpy(o, s, (size_t)len * sizeof(float));
        } else {
            const float v = s[0];
            for (int64_t k = 0; k < len; k++) o[k] = v;
        }
        i += len;
        idx[last] += len;
        for (int d = last; d > 0 && idx[d] == p->dim[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

static yolo_status broadcast_to_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    bcast_job j;
    bcast_plan_make(&j.p, out, out->node->src[0]);
    j.src = yolo_cpu_f32(out->node->src[0]);
    j.dst = yolo_cpu_f32(out);
    yolo_cpu_run_ranges(ctx, yolo_tensor_numel(out), yolo_tensor_numel(out), broadcast_range, &j);
    return YOLO_OK;
}

/* SUM_TO: output element o is the double sum over the broadcast groups of
 * the input, walked in row-major order (innermost group contiguous when it
 * is the input's last dimension). */
typedef struct sum_to_job {
    int nk, nr;
    int64_t kdim[YOLO_MAX_DIMS], kstride[YOLO_MAX_DIMS]; /* kept groups */
    int64_t rdim[YOLO_MAX_DIMS], rstride[YOLO_MAX_DIMS]; /* reduced groups */
    int64_t outer_r;                                     /* product of rdim except the last */
    const float *src;
    float *dst;
} sum_to_job;

static double sum_run(const float *p, int64_t len, int64_t step) {
    double a0 = 0, a1 = 0;
    if (step == 1) {
        int64_t i = 0;
        for (; i + 1 < len; i += 2) {
            a0 += p[i];
            a1 += p[i + 1];
        }
        if (i < len) a0 += p[i];
    } else {
        for (int64_t i = 0; i < len; i++) a0 += p[i * step];
    }
    return a0 + a1;
}

static void sum_to_range(void *arg, int64_t begin, int64_t end) {
    const sum_to_job *j = arg;
    for (int64_t o = begin; o < end; o++) {
        int64_t base = 0, rem = o;
        for (int d = j->nk - 1; d >= 0; d--) {
            base += (rem % j->kdim[d]) * j->kstride[d];
            rem /= j->kdim[d];
        }
        double acc = 0;
        for (int64_t q = 0; q < j->outer_r; q++) {
            int64_t off = base;
            rem = q;
            for (int d = j->nr - 2; d >= 0; d--) {
                off += (rem % j->rdim[d]) * j->rstride[d];
                rem /= j->rdim[d];
            }
            acc += sum_run(j->src + off, j->rdim[j->nr - 1], j->rstride[j->nr - 1]);
        }
        j->dst[o] = (float)acc;
    }
}

static yolo_status sum_to_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const yolo_tensor *x = out->node->src[0];
    bcast_plan p;
    bcast_plan_make(&p, x, out);
    sum_to_job j = {0};
    for (int d = 0; d < p.nd; d++) {
        if (p.bcast[d]) {
            j.rdim[j.nr] = p.dim[d];
            j.rstride[j.nr++] = p.big_stride[d];
        } else {
            j.kdim[j.nk] = p.dim[d];
            j.kstride[j.nk++] = p.big_stride[d];
        }
    }
    j.src = yolo_cpu_f32(x);
    j.dst = yolo_cpu_f32(out);
    if (j.nr == 0) { /* nothing to reduce: same elements */
        memcpy(j.dst, j.src, (size_t)yolo_tensor_numel(out) * sizeof(float));
        return YOLO_OK;
    }
    j.outer_r = 1;
    for (int d = 0; d < j.nr - 1; d++) j.outer_r *= j.rdim[d];
    yolo_cpu_run_ranges(ctx, yolo_tensor_numel(out), yolo_tensor_numel(x), sum_to_range, &j);
    return YOLO_OK;
}

yolo_cpu_kernel yolo_cpu_shape_kernel(int op) {
    switch (op) {
    case YOLO_OP_CONCAT: return concat_kernel;
    case YOLO_OP_SLICE:
    case YOLO_OP_SLICE_BWD: return slice_kernel;
    case YOLO_OP_BROADCAST_TO: return broadcast_to_kernel;
    case YOLO_OP_SUM_TO: return sum_to_kernel;
    default: return NULL;
    }
}
