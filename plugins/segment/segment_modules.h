/* What the segment plugin contributes to the model builder: its head
 * module and its embedded model yamls, for the task table in plugin.c:
 *
 *     .modules = segment_modules, .n_modules = SEGMENT_N_MODULES,
 *     .model_yaml_names = segment_model_yaml_names,
 *     .model_yaml_texts = segment_model_yaml_texts,
 *     .n_model_yamls = SEGMENT_N_MODEL_YAMLS, */
#ifndef YOLO_SEGMENT_MODULES_H
#define YOLO_SEGMENT_MODULES_H

#include "segment_model_yamls.h" /* generated from plugins/segment/models/ (the .yaml files) */
#include "yolo/model.h"

#define SEGMENT_N_MODULES 1
extern const yolo_module_type *const segment_modules[SEGMENT_N_MODULES];

#define SEGMENT_N_MODEL_YAMLS (1 + SEGMENT_MODEL_YAML_COUNT) /* the yolov8 one, the files */
extern const char *const segment_model_yaml_names[SEGMENT_N_MODEL_YAMLS];
extern const char *const segment_model_yaml_texts[SEGMENT_N_MODEL_YAMLS];

#endif
