/* What the classify plugin contributes to the model builder: its head
 * module and its embedded model yamls, for the task table in plugin.c:
 *
 *     .modules = classify_modules, .n_modules = CLASSIFY_N_MODULES,
 *     .model_yaml_names = classify_model_yaml_names,
 *     .model_yaml_texts = classify_model_yaml_texts,
 *     .n_model_yamls = CLASSIFY_N_MODEL_YAMLS, */
#ifndef YOLO_CLASSIFY_MODULES_H
#define YOLO_CLASSIFY_MODULES_H

#include "classify_model_yamls.h" /* generated from plugins/classify/models/ (the .yaml files) */
#include "yolo/model.h"

#define CLASSIFY_N_MODULES 1
extern const yolo_module_type *const classify_modules[CLASSIFY_N_MODULES];

#define CLASSIFY_N_MODEL_YAMLS (1 + CLASSIFY_MODEL_YAML_COUNT) /* the yolov8 one, the files */
extern const char *const classify_model_yaml_names[CLASSIFY_N_MODEL_YAMLS];
extern const char *const classify_model_yaml_texts[CLASSIFY_N_MODEL_YAMLS];

/* Sets the Classify head's dropout rate (state = yolo_model_layer_state(model, -1)). */
yolo_status classify_head_set_dropout(void *state, double p);

#endif
