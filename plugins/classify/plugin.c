/* The classify task plugin: its entry point and task table (yolo/plugin.h).
 * It includes only sdk headers. Head modules live in their own files in
 * this directory (classify_modules.h), model yamls in models/; both are listed
 * in the table below. */
#include "classify_model_yamls.h" /* generated from the yamls in models/ */
#include "classify_modules.h"
#include "classify_task.h"
#include "yolo/plugin.h"

#include <stddef.h>

#define YOLO_CLASSIFY_VERSION "0.1.0"

/* the core keys for some tasks only that this one reads (yolo/plugin.h) */
static const char *const keys_read[] = {"classes", "dropout", "label_smoothing"};

static const yolo_task classify_task = {
    .abi = {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR},
    .name = "classify",
    .version = YOLO_CLASSIFY_VERSION,
    .description = "image classification: one class per image",
    .default_model = "yolov8n-cls.yaml",
    .default_data = "imagenet10",
    .modules = classify_modules, /* classify_modules.h */
    .n_modules = CLASSIFY_N_MODULES,
    .model_yaml_names = classify_model_yaml_names,
    .model_yaml_texts = classify_model_yaml_texts,
    .n_model_yamls = CLASSIFY_N_MODEL_YAMLS,
    .config_keys = NULL, /* no keys of its own: the core's default.yaml holds Ultralytics' */
    .n_config_keys = 0,
    .hooks = &classify_task_hooks, /* classify_task.h */
    .task_keys_read = keys_read,
    .n_task_keys_read = (int)(sizeof keys_read / sizeof keys_read[0]),
};

__attribute__((visibility("default"))) const yolo_task *yolo_task_register(void) { return &classify_task; }
