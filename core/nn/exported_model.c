/* Exported model files given as model= (exported_model.h). */
#include "nn/exported_model.h"

#include <string.h>
#include <strings.h>

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
    return YOLO_OK;
}

