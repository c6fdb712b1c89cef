/* What the detect plugin contributes to the model builder: its head
 * module (detect_head.c) and its model yamls (models/, embedded at
 * build time as detect_model_yamls.h), for the task table in plugin.c:
 *
 *     .modules = detect_modules, .n_modules = DETECT_N_MODULES,
 *     .model_yaml_names = detect_model_yaml_names,
 *     .model_yaml_texts = detect_model_yaml_texts,
 *     .n_model_yamls = DETECT_N_MODEL_YAMLS, */
#ifndef YOLO_DETECT_MODULES_H
#define YOLO_DETECT_MODULES_H

#include "yolo/model.h"

#define DETECT_N_MODULES 2
extern const yolo_module_type *const detect_modules[DETECT_N_MODULES];

#endif
