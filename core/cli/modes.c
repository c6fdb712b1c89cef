/* Mode name -> mode function. */
#include "cli/modes.h"

#include <stdio.h>
#include <string.h>

const yolo_cli_mode_info yolo_cli_modes[] = {
    {"train", "train a model on a dataset", YOLO_CONFIG_TRAIN},
    {"val", "validate a model on a dataset split", YOLO_CONFIG_VAL},
    {"predict", "run a model on images, folders or archives", YOLO_CONFIG_PREDICT},
    {"export", "export a model (.pt, .ckpt, yaml) to ONNX or safetensors", 0},
    {"info", "print a model's layers, parameters and GFLOPs", 0},
    {"checks", "report the version, backends, devices, MPI and the plugins found", 0},
};
const int yolo_cli_mode_count = (int)(sizeof yolo_cli_modes / sizeof yolo_cli_modes[0]);

const char *yolo_cli_mode_names(void) {
    static char names[128];
    if (!names[0])
        for (int i = 0; i < yolo_cli_mode_count; i++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", yolo_cli_modes[i].name);
        }
    return names;
}

int yolo_cli_is_mode(const char *word) {
    for (int i = 0; i < yolo_cli_mode_count; i++)
        if (strcmp(yolo_cli_modes[i].name, word) == 0) return 1;
    return 0;
}

yolo_mode_fn yolo_cli_mode_function(const char *mode) {
    if (strcmp(mode, "train") == 0) return yolo_mode_train;
    if (strcmp(mode, "val") == 0) return yolo_mode_val;
    if (strcmp(mode, "predict") == 0) return yolo_mode_predict;
    if (strcmp(mode, "info") == 0) return yolo_mode_info;
    if (strcmp(mode, "export") == 0) return yolo_mode_export;
    return NULL;
}

int yolo_cli_exit_code(yolo_status status) {
    if (status == YOLO_OK) return YOLO_EXIT_OK;
    return status == YOLO_ERR_CONFIG ? YOLO_EXIT_USAGE : YOLO_EXIT_FAILURE;
}
