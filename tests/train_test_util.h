/* Helpers of the training tests that compare backends or precisions
 * (header-only: every test_*.c is its own program). */
#ifndef YOLO_TRAIN_TEST_UTIL_H
#define YOLO_TRAIN_TEST_UTIL_H

#include <stdlib.h>

#include "yolo/model.h"

/* Every trainable parameter's gradient, concatenated in state-dict order into grads (malloc'd, *n floats). */
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

#endif
