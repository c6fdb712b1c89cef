/* What the classify plugin contributes to the model builder: its head
 * module (classify_head.c) and its model yamls (models/, embedded at
 * build time as classify_model_yamls.h), for the task table in plugin.c:
 *
 *     .modules = classify_modules, .n_modules = CLASSIFY_N_MODULES,
 *     .model_yaml_names = classify_model_yaml_names,
 *     .model_yaml_texts = classify_model_yaml_texts,
 *     .n_model_yamls = CLASSIFY_N_MODEL_YAMLS, */
#ifndef YOLO_CLASSIFY_MODULES_H
#define YOLO_CLASSIFY_MODULES_H

#include "yolo/model.h"

#define CLASSIFY_N_MODULES 1
extern const yolo_module_type *const classify_modules[CLASSIFY_N_MODULES];

/* Sets the Classify head's dropout rate (state = yolo_model_layer_state(model, -1)). */
yolo_status classify_head_set_dropout(void *state, double p);

#endif
