/* Exported model files given as model= (exported_model.h). */
#include "nn/exported_model.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static bool is_kind(const char *path, mode_t kind) {
    struct stat sb;
    return stat(path, &sb) == 0 && (sb.st_mode & S_IFMT) == kind;
}

yolo_status yolo_refuse_exported_model(const char *model) {
    static const char *const exported[] = {".onnx", ".engine", ".torchscript", ".tflite", ".pb", ".mlpackage",
                                           ".mlmodel", "_openvino_model", "_openvino_model/", "_ncnn_model",
                                           "_ncnn_model/", "_saved_model", "_saved_model/", "_paddle_model",
                                           "_paddle_model/", ".safetensors"};
    size_t n = strlen(model);
    for (size_t i = 0; i < sizeof exported / sizeof *exported; i++) {
        size_t e = strlen(exported[i]);
        if (n > e && strcasecmp(model + n - e, exported[i]) == 0)
            return yolo_error(YOLO_ERR_CONFIG, "model=%s: running an exported model is not built (this build "
                              "exports ONNX and safetensors; it runs .pt, .ckpt and model yamls): give the .pt or "
                              ".ckpt it was exported from", model);
    }
    /* any other folder: the loader would look for an embedded yaml of that name and say "no such file" */
    if (!is_kind(model, S_IFDIR)) return YOLO_OK;
    char best[4200];
    snprintf(best, sizeof best, "%s/weights/best.ckpt", model);
    bool run = is_kind(best, S_IFREG);
    return yolo_error(YOLO_ERR_CONFIG, "model=%s is a folder, not a model: give a .pt, .ckpt or model yaml file%s%s",
                      model, run ? ", e.g. model=" : "", run ? best : "");
}

