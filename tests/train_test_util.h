/* Helpers of the training tests that compare backends or precisions
 * (header-only: every test_*.c is its own program). */
#ifndef YOLO_TRAIN_TEST_UTIL_H
#define YOLO_TRAIN_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "test_util.h"
#include "train/ema.h"
#include "train/model_graph.h"
#include "train/optimizer.h"
#include "yolo/config.h"
#include "yolo/model.h"
#include "yolo/task.h"

/* Every trainable parameter's gradient, concatenated in state-dict order
 * into grads (malloc'd, *n floats). */
static inline yolo_status test_model_gradients(yolo_model *model, float **grads, int64_t *n) {
    *n = 0;
    for (int i = 0; i < yolo_model_tensor_count(model); i++) {
        const yolo_tensor *t = yolo_model_tensor_at(model, i)->tensor;
        if (t->requires_grad) *n += yolo_tensor_numel(t);
    }
    *grads = malloc((size_t)*n * sizeof(float));
    if (!*grads) return yolo_error(YOLO_ERR_NOMEM, "gradients: out of memory");
    int64_t at = 0;
    for (int i = 0; i < yolo_model_tensor_count(model); i++) {
        const yolo_tensor *t = yolo_model_tensor_at(model, i)->tensor;
        if (!t->requires_grad) continue;
        yolo_status st = yolo_tensor_download_f32(t->grad, *grads + at, yolo_tensor_numel(t));
        if (st) return st;
        at += yolo_tensor_numel(t);
    }
    return YOLO_OK;
}

/* A detect model (nc 3) training on a synthetic batch of 2 images at 64 px
 * with SGD (lr 0.001, momentum 0.9) and an EMA, as the trainer's step. */
typedef struct train_rig {
    yolo_backend *be;
    yolo_model *model, *ema_model; /* ema_model: until yolo_ema_create takes it (ema->ema) */
    yolo_ema *ema;
    yolo_optimizer *opt;
    yolo_model_graph *mg;
    const yolo_task *task;
    void *loss_state;
    yolo_batch batch;
} train_rig;

static inline yolo_status train_rig_open(train_rig *r, const char *device, bool amp, const char *yaml,
                                         const yolo_task *task, yolo_config *cfg) {
    memset(r, 0, sizeof *r);
    r->task = task;
    const yolo_task *tasks[1] = {task};
    yolo_model_options mo = {.tasks = tasks, .n_tasks = 1, .nc = 3, .seed = 7};
    yolo_status st = yolo_backend_create(device, 2, &r->be);
    if (!st && yolo_backend_set_amp(r->be, amp) != amp)
        st = yolo_error(YOLO_ERR_BACKEND, "amp=%d: %s", amp, yolo_backend_precision(r->be));
    if (!st) st = yolo_model_load(yaml, r->be, &mo, &r->model);
    if (!st) st = yolo_model_load(yaml, r->be, &mo, &r->ema_model);
    if (!st) {
        st = yolo_ema_create(r->model, r->ema_model, &r->ema);
        r->ema_model = NULL; /* the EMA's now (freed with it, or on its failure) */
    }
    if (!st) st = yolo_optimizer_create(r->model, YOLO_OPTIMIZER_SGD, 0.001f, 0.9f, 5e-4f, &r->opt);
    if (!st) yolo_grad_scaler_init(&r->opt->scaler, yolo_backend_supports(r->be, YOLO_BACKEND_CAP_LOSS_SCALING));
    if (!st) st = yolo_model_graph_build(r->model, 2, 64, 64, true, &r->mg);
    static const char *names[3] = {"a", "b", "c"};
    yolo_task_context tctx = {.cfg = cfg, .model = r->model, .nc = 3, .names = names, .imgsz = 64, .world = 1};
    if (!st) st = task->hooks->loss_create(&tctx, &r->loss_state);
    test_synthetic_batch(&r->batch, 2, 64, 3);
    return st;
}

/* Forward, then the task's loss and its gradients into mg->host_grad. */
static inline yolo_status train_rig_loss(train_rig *r, double *loss) {
    float items[YOLO_TASK_MAX_ITEMS];
    yolo_model_graph *mg = r->mg;
    yolo_status st = yolo_model_graph_forward(mg, &r->batch);
    for (int k = 0; !st && k < mg->out.n; k++)
        memset(mg->host_grad[k].data, 0, (size_t)yolo_tensor_numel(mg->out.t[k]) * sizeof(float));
    if (!st) st = r->task->hooks->loss_compute(r->loss_state, &r->batch, mg->out.n, mg->host_out, mg->host_grad, loss,
                                               items);
    return st;
}

static inline void train_rig_close(train_rig *r) {
    test_synthetic_batch_free(&r->batch);
    if (r->loss_state) r->task->hooks->loss_destroy(r->loss_state);
    yolo_model_graph_free(r->mg);
    yolo_optimizer_free(r->opt);
    yolo_ema_free(r->ema);
    yolo_model_free(r->ema_model);
    yolo_model_free(r->model);
    yolo_backend_free(r->be);
}

/* FNV-1a over a tensor's f32 values, continuing from h. */
static inline uint64_t test_hash_tensor(uint64_t h, const yolo_tensor *t) {
    const int64_t n = yolo_tensor_numel(t);
    float *v = malloc((size_t)n * sizeof *v);
    CHECK(v && yolo_tensor_download_f32(t, v, n) == YOLO_OK);
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; v && i < (size_t)n * sizeof *v; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    free(v);
    return h;
}

static inline uint64_t test_hash_model(const yolo_model *m, bool trainable_only) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < yolo_model_tensor_count(m); i++) {
        const yolo_tensor *t = yolo_model_tensor_at(m, i)->tensor;
        if (!trainable_only || t->requires_grad) h = test_hash_tensor(h, t);
    }
    return h;
}

/* 0 when the Vulkan device runs amp with fp16 kernels; else the exit code
 * (77 skip with the reason printed, 1 failure). */
static inline int test_vulkan_amp_probe(void) {
    yolo_backend *vk = NULL;
    if (yolo_backend_create("vulkan", 0, &vk) != YOLO_OK) return test_skip("no Vulkan device");
    bool fp16 = yolo_backend_set_amp(vk, true);
    printf("amp on %s: %s\n", yolo_backend_name(vk), yolo_backend_precision(vk));
    yolo_backend_free(vk);
    return fp16 ? 0 : test_skip("the Vulkan device runs amp in fp32 (no 16-bit storage or fp16 arithmetic)");
}

#endif
