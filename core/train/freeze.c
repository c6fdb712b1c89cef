/* freeze (trainer.h): Ultralytics' trainer freezes every parameter whose
 * name contains "model.<i>." for a frozen layer i (freeze=N: layers 0..N-1;
 * freeze=[i, j]: those layers), and always ".dfl". A frozen parameter gets
 * requires_grad=false before the optimizer, the EMA and the training graphs
 * are built: no gradient, no update, no weight decay. Its batch norm keeps
 * its running statistics (yolo_conv_block_forward runs it in eval mode, as
 * Ultralytics' _model_train puts frozen BatchNorm2d modules in eval). */
#include <stdio.h>
#include <string.h>

#include "train/trainer.h"

static bool in_frozen_layer(const yolo_config_value *freeze, const char *name) {
    if (strstr(name, ".dfl")) return true;
    if (freeze->kind != YOLO_VALUE_INT_LIST || freeze->n < 1) return false;
    /* a bare integer N is range(N); a list names the layers */
    int64_t count = freeze->b ? freeze->list[0] : freeze->n;
    for (int64_t k = 0; k < count; k++) {
        char prefix[40];
        snprintf(prefix, sizeof prefix, "model.%lld.", (long long)(freeze->b ? k : freeze->list[k]));
        if (strstr(name, prefix)) return true;
    }
    return false;
}

yolo_status yolo_trainer_apply_freeze(yolo_model *model, const yolo_config_value *freeze) {
    for (int i = 0; i < yolo_model_tensor_count(model); i++) {
        const yolo_model_tensor *mt = yolo_model_tensor_at(model, i);
        if (mt->role == YOLO_PARAM_BUFFER || !in_frozen_layer(freeze, mt->tensor->name)) continue;
        printf("Freezing layer '%s'\n", mt->tensor->name);
        mt->tensor->requires_grad = false;
    }
    return YOLO_OK;
}
