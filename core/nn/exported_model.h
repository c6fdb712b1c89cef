/* Ultralytics runs its exported models (model=best.onnx, an
 * _openvino_model/ folder, ...); this build exports ONNX and safetensors
 * but runs only .pt, .ckpt and model yamls. */
#ifndef YOLO_NN_EXPORTED_MODEL_H
#define YOLO_NN_EXPORTED_MODEL_H

#include "yolo/error.h"

/* YOLO_ERR_CONFIG naming the file and what to give instead when `model`
 * names an exported format (by its suffix) or any other folder; else
 * YOLO_OK. */
yolo_status yolo_refuse_exported_model(const char *model);

#endif
