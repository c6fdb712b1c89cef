/* What the segment plugin contributes to the model builder: its head
 * module (segment_head.c) and its model yamls (models/, embedded at
 * build time as segment_model_yamls.h), for the task table in plugin.c:
 *
 *     .modules = segment_modules, .n_modules = SEGMENT_N_MODULES,
 *     .model_yaml_names = segment_model_yaml_names,
 *     .model_yaml_texts = segment_model_yaml_texts,
 *     .n_model_yamls = SEGMENT_N_MODEL_YAMLS, */
#ifndef YOLO_SEGMENT_MODULES_H
#define YOLO_SEGMENT_MODULES_H

#include "yolo/model.h"

#define SEGMENT_N_MODULES 2
extern const yolo_module_type *const segment_modules[SEGMENT_N_MODULES];

#endif
