/* CPU kernels of the in-place update ops: SGD and AdamW steps, the EMA
 * update, gradient accumulation and zeroing (formulas in yolo/graph.h).
 *
 * `out` is a view of src[0] and shares its storage, so every kernel writes
 * through src[0]. Hyper-parameters are read from their small tensors at run
 * time, so a recorded graph follows the learning-rate schedule. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "backend/cpu/cpu_backend.h"

/* The optional grad_scale source at position `index` (1 when absent). */
static float grad_scale_of(const yolo_tensor *out, int index) {
    if (out->node->n_src > index && out->node->src[index]) return yolo_cpu_f32(out->node->src[index])[0];
    return 1.0f;
}

/* ---- SGD_UPDATE: src param, grad, momentum_buf, hyper[4], (grad_scale) ---- */

typedef struct sgd_job {
    float *p, *buf;
    const float *g;
    float lr, momentum, wd, scale;
    int nesterov;
} sgd_job;

static void sgd_range(void *arg, int64_t begin, int64_t end) {
    const sgd_job *j = arg;
    float *restrict p = j->p, *restrict buf = j->buf;
    const float *restrict grad = j->g;
    for (int64_t i = begin; i < end; i++) {
        const float g = grad[i] * j->scale + j->wd * p[i];
        const float b = j->momentum * buf[i] + g;
        buf[i] = b;
        p[i] -= j->lr * (j->nesterov ? g + j->momentum * b : b);
    }
}

static yolo_status sgd_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const float *h = yolo_cpu_f32(out->node->src[3]);
    if (grad_scale_of(out, 4) == 0.0f) return YOLO_OK; /* a skipped step (GRAD_CLIP_SCALE) */
    sgd_job j = {yolo_cpu_f32(out->node->src[0]), yolo_cpu_f32(out->node->src[2]), yolo_cpu_f32(out->node->src[1]),
                 h[YOLO_SGD_LR], h[YOLO_SGD_MOMENTUM], h[YOLO_SGD_WEIGHT_DECAY], grad_scale_of(out, 4),
                 h[YOLO_SGD_NESTEROV] != 0.0f};
    yolo_cpu_run_elements(ctx, yolo_tensor_numel(out->node->src[0]), sgd_range, &j);
    return YOLO_OK;
}

/* ---- ADAMW_UPDATE: src param, grad, m, v, hyper[6], (grad_scale) ----
 * Written as PyTorch's single-tensor AdamW: p *= 1-lr*wd; m.lerp_(g, 1-b1);
 * v = b2*v + (1-b2)*g^2; p -= (lr/bc1) * m / (sqrt(v)/sqrt(bc2) + eps). */

typedef struct adamw_job {
    float *p, *m, *v;
    const float *g;
    float decay, b1, b2, eps, step_size, bc2_sqrt, scale;
} adamw_job;

static void adamw_range(void *arg, int64_t begin, int64_t end) {
    const adamw_job *j = arg;
    float *restrict p = j->p, *restrict m = j->m, *restrict v = j->v;
    const float *restrict grad = j->g;
    for (int64_t i = begin; i < end; i++) {
        const float g = grad[i] * j->scale;
        const float mi = m[i] + (1.0f - j->b1) * (g - m[i]);
        const float vi = j->b2 * v[i] + (1.0f - j->b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        p[i] = p[i] * j->decay - j->step_size * mi / (sqrtf(vi) / j->bc2_sqrt + j->eps);
    }
}

static yolo_status adamw_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const float *h = yolo_cpu_f32(out->node->src[4]);
    if (grad_scale_of(out, 5) == 0.0f) return YOLO_OK; /* a skipped step (GRAD_CLIP_SCALE) */
    const double lr = h[YOLO_ADAMW_LR], b1 = h[YOLO_ADAMW_BETA1], b2 = h[YOLO_ADAMW_BETA2];
    const double t = h[YOLO_ADAMW_STEP];
    if (!(t >= 1.0))
        return yolo_error(YOLO_ERR_ARG, "ADAMW_UPDATE of %s: step %g must be >= 1 (hyper[%d])", out->node->src[0]->name,
                          t, YOLO_ADAMW_STEP);
    const double bc1 = 1.0 - pow(b1, t), bc2 = 1.0 - pow(b2, t);
    adamw_job j = {yolo_cpu_f32(out->node->src[0]), yolo_cpu_f32(out->node->src[2]), yolo_cpu_f32(out->node->src[3]),
                   yolo_cpu_f32(out->node->src[1]), (float)(1.0 - lr * h[YOLO_ADAMW_WEIGHT_DECAY]), (float)b1, (float)b2,
                   h[YOLO_ADAMW_EPS], (float)(lr / bc1), (float)sqrt(bc2), grad_scale_of(out, 5)};
    yolo_cpu_run_elements(ctx, yolo_tensor_numel(out->node->src[0]), adamw_range, &j);
    return YOLO_OK;
}

/* ---- EMA_UPDATE: src ema, param, hyper[1], (step_scale); ACCUMULATE ---- */

typedef struct axpy_job {
    float *dst;
    const float *x;
    float keep, take; /* dst = keep*dst + take*x */
} axpy_job;

static void ema_range(void *arg, int64_t begin, int64_t end) {
    const axpy_job *j = arg;
    float *restrict d = j->dst;
    const float *restrict x = j->x;
    for (int64_t i = begin; i < end; i++) d[i] = j->keep * d[i] + j->take * x[i];
}

static void accumulate_range(void *arg, int64_t begin, int64_t end) {
    const axpy_job *j = arg;
    float *restrict d = j->dst;
    const float *restrict x = j->x;
    for (int64_t i = begin; i < end; i++) d[i] += x[i];
}

static yolo_status ema_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    if (grad_scale_of(out, 3) == 0.0f) return YOLO_OK; /* its optimizer step was skipped */
    const float decay = yolo_cpu_f32(out->node->src[2])[0];
    axpy_job j = {yolo_cpu_f32(out->node->src[0]), yolo_cpu_f32(out->node->src[1]), decay, 1.0f - decay};
    yolo_cpu_run_elements(ctx, yolo_tensor_numel(out->node->src[0]), ema_range, &j);
    return YOLO_OK;
}

static yolo_status accumulate_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    axpy_job j = {yolo_cpu_f32(out->node->src[0]), yolo_cpu_f32(out->node->src[1]), 1.0f, 1.0f};
    yolo_cpu_run_elements(ctx, yolo_tensor_numel(out->node->src[0]), accumulate_range, &j);
    return YOLO_OK;
}

/* ---- MuSGD (yolo/graph.h): MUON_MOMENTUM, MUON_NORMALIZE, MUSGD_UPDATE ----
 * torch's lerp a + w*(b - a), operation for operation. */

typedef struct musgd_job {
    float *p, *buf, *u; /* MUON_MOMENTUM: buf, u; MUSGD_UPDATE: p, buf (the SGD one) */
    const float *g, *o;
    float lr, momentum, wd, muon, sgd, scale;
    int nesterov;
} musgd_job;

static void muon_momentum_range(void *arg, int64_t begin, int64_t end) {
    const musgd_job *j = arg;
    for (int64_t i = begin; i < end; i++) {
        const float g = j->g[i] * j->scale;
        const float m = j->buf[i] + (1.0f - j->momentum) * (g - j->buf[i]);
        j->buf[i] = m;
        j->u[i] = j->nesterov ? g + j->momentum * (m - g) : m;
    }
}

static void musgd_range(void *arg, int64_t begin, int64_t end) {
    const musgd_job *j = arg;
    for (int64_t i = begin; i < end; i++) {
        const float p = j->p[i] - j->lr * j->muon * j->o[i];
        const float g = j->g[i] * j->scale + j->wd * p;
        const float b = j->momentum * j->buf[i] + g;
        j->buf[i] = b;
        j->p[i] = p - j->lr * j->sgd * (j->nesterov ? g + j->momentum * b : b);
    }
}

static void muon_normalize_range(void *arg, int64_t begin, int64_t end) {
    const musgd_job *j = arg;
    for (int64_t i = begin; i < end; i++) j->u[i] = j->g[i] / j->scale; /* scale: the divisor */
}

static musgd_job musgd_job_of(const float *h, float scale) {
    return (musgd_job){.lr = h[YOLO_MUSGD_LR], .momentum = h[YOLO_MUSGD_MOMENTUM], .wd = h[YOLO_MUSGD_WEIGHT_DECAY],
                       .muon = h[YOLO_MUSGD_MUON], .sgd = h[YOLO_MUSGD_SGD], .scale = scale,
                       .nesterov = h[YOLO_MUSGD_NESTEROV] != 0.0f};
}

static yolo_status muon_momentum_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const int64_t n = yolo_tensor_numel(out);
    const float scale = grad_scale_of(out, 3);
    if (scale == 0.0f) { /* a skipped step: the buffer stays, the update is 0 */
        memset(yolo_cpu_f32(out), 0, sizeof(float) * (size_t)n);
        return YOLO_OK;
    }
    musgd_job j = musgd_job_of(yolo_cpu_f32(out->node->src[2]), scale);
    j.g = yolo_cpu_f32(out->node->src[0]), j.buf = yolo_cpu_f32(out->node->src[1]), j.u = yolo_cpu_f32(out);
    yolo_cpu_run_elements(ctx, n, muon_momentum_range, &j);
    return YOLO_OK;
}

/* x / (sqrt(sum_sq) + eps): the divisor in float, as torch's x /= x.norm() + eps */
static yolo_status muon_normalize_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const float norm = sqrtf(yolo_cpu_f32(out->node->src[1])[0]) + out->node->fparams[0];
    musgd_job j = {.g = yolo_cpu_f32(out->node->src[0]), .u = yolo_cpu_f32(out), .scale = norm};
    yolo_cpu_run_elements(ctx, yolo_tensor_numel(out), muon_normalize_range, &j);
    return YOLO_OK;
}

static yolo_status musgd_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    const float scale = grad_scale_of(out, 5);
    if (scale == 0.0f) return YOLO_OK;
    musgd_job j = musgd_job_of(yolo_cpu_f32(out->node->src[4]), scale);
    j.p = yolo_cpu_f32(out->node->src[0]), j.g = yolo_cpu_f32(out->node->src[1]);
    j.o = yolo_cpu_f32(out->node->src[2]), j.buf = yolo_cpu_f32(out->node->src[3]);
    yolo_cpu_run_elements(ctx, yolo_tensor_numel(out->node->src[0]), musgd_range, &j);
    return YOLO_OK;
}

/* ---- GRAD_CLIP_SCALE: src norm_sq[1], hyper {max_norm, unscale} -> [1] ----
 * In double, as the host computed it before the step moved to the device. */

static yolo_status clip_scale_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    (void)ctx;
    const double sq = yolo_cpu_f32(out->node->src[0])[0];
    const float *h = yolo_cpu_f32(out->node->src[1]);
    const double max_norm = h[YOLO_CLIP_MAX_NORM], unscale = h[YOLO_CLIP_UNSCALE];
    const double norm = sqrt(sq) * unscale;
    float scale = 0.0f;
    if (isfinite(norm))
        scale = (float)(unscale * (max_norm > 0.0 && norm + 1e-6 > max_norm ? max_norm / (norm + 1e-6) : 1.0));
    yolo_cpu_f32(out)[0] = scale;
    return YOLO_OK;
}

/* ---- ZERO: any dtype, all-zero bits ---- */

static yolo_status zero_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    (void)ctx;
    const yolo_tensor *t = out->node->src[0];
    size_t size = t->dtype == YOLO_F16 ? 2 : t->dtype == YOLO_U8 ? 1 : 4;
    memset(yolo_cpu_data(t), 0, (size_t)yolo_tensor_numel(t) * size);
    return YOLO_OK;
}

yolo_cpu_kernel yolo_cpu_optim_kernel(int op) {
    switch (op) {
    case YOLO_OP_SGD_UPDATE: return sgd_kernel;
    case YOLO_OP_ADAMW_UPDATE: return adamw_kernel;
    case YOLO_OP_EMA_UPDATE: return ema_kernel;
    case YOLO_OP_ACCUMULATE: return accumulate_kernel;
    case YOLO_OP_ZERO: return zero_kernel;
    case YOLO_OP_GRAD_CLIP_SCALE: return clip_scale_kernel;
    case YOLO_OP_MUON_MOMENTUM: return muon_momentum_kernel;
    case YOLO_OP_MUON_NORMALIZE: return muon_normalize_kernel;
    case YOLO_OP_MUSGD_UPDATE: return musgd_kernel;
    default: return NULL;
    }
}
