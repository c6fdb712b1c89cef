/* What the detect plugin contributes to the model builder: its head
 * modules and its embedded model yamls, for the task table in plugin.c:
 *
 *     .modules = detect_modules, .n_modules = DETECT_N_MODULES,
 *     .model_yaml_names = detect_model_yaml_names,
 *     .model_yaml_texts = detect_model_yaml_texts,
 *     .n_model_yamls = DETECT_N_MODEL_YAMLS, */
#ifndef YOLO_DETECT_MODULES_H
#define YOLO_DETECT_MODULES_H

#include "detect_model_yamls.h" /* generated from plugins/detect/models/ (the .yaml files) */
#include "yolo/model.h"

/* The Detect module type (detect_head.c), internal to the plugin. */
#if defined(__GNUC__)
__attribute__((visibility("hidden")))
#endif
extern const yolo_module_type detect_module_type;

#define DETECT_N_MODULES 1
extern const yolo_module_type *const detect_modules[DETECT_N_MODULES];

#define DETECT_N_MODEL_YAMLS (2 + DETECT_MODEL_YAML_COUNT) /* yolov8.yaml, yolov5u.yaml, the files */
extern const char *const detect_model_yaml_names[DETECT_N_MODEL_YAMLS];
extern const char *const detect_model_yaml_texts[DETECT_N_MODEL_YAMLS];

#endif
