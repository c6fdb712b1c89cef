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

/* Every layer freeze names must exist (an index past the last layer would
 * freeze nothing it names), and one layer at least must be left to train. */
static yolo_status check_layers(const yolo_model *model, const yolo_config_value *freeze) {
    if (freeze->kind != YOLO_VALUE_INT_LIST) return YOLO_OK;
    const int layers = yolo_model_layer_count(model);
    int distinct = 0;
    for (int i = 0; i < freeze->n; i++) {
        if (freeze->list[i] >= layers && freeze->b)
            return yolo_error(YOLO_ERR_CONFIG, "freeze=%lld: the model %s has %d layers (0..%d); freeze=N freezes "
                              "layers 0..N-1 and must be below %d to leave a layer to train", (long long)freeze->list[i],
                              yolo_model_name(model), layers, layers - 1, layers);
        if (freeze->list[i] >= layers)
            return yolo_error(YOLO_ERR_CONFIG, "freeze: layer %lld (item %d of the list) is past the last layer of "
                              "the model %s, which has %d layers (0..%d)", (long long)freeze->list[i], i + 1,
                              yolo_model_name(model), layers, layers - 1);
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = freeze->list[j] == freeze->list[i];
        distinct += !seen;
    }
    if (!freeze->b && distinct == layers) {
        char list[512];
        int len = 0;
        for (int i = 0; i < freeze->n && len < (int)sizeof list; i++)
            len += snprintf(list + len, sizeof list - (size_t)len, "%s%lld", i ? ", " : "", (long long)freeze->list[i]);
        return yolo_error(YOLO_ERR_CONFIG, "freeze=[%s]: lists every layer of the model %s (%d layers): nothing "
                          "would train", list, yolo_model_name(model), layers);
    }
    return YOLO_OK;
}

yolo_status yolo_trainer_apply_freeze(yolo_model *model, const yolo_config_value *freeze) {
    yolo_status st = check_layers(model, freeze);
    if (st) return st;
    for (int i = 0; i < yolo_model_tensor_count(model); i++) {
        const yolo_model_tensor *mt = yolo_model_tensor_at(model, i);
        if (mt->role == YOLO_PARAM_BUFFER || !in_frozen_layer(freeze, mt->tensor->name)) continue;
        printf("Freezing layer '%s'\n", mt->tensor->name);
        mt->tensor->requires_grad = false;
    }
    return YOLO_OK;
}
