/* The detect task plugin: its entry point and task table (yolo/plugin.h).
 * It includes only sdk headers. Head modules live in their own files in
 * this directory (detect_modules.h), model yamls in models/; both are listed
 * in the table below. */
#include "detect_model_yamls.h" /* generated from the yamls in models/ */
#include "detect_modules.h"
#include "detect_task.h"
#include "yolo/detection.h"
#include "yolo/plugin.h"

#include <stddef.h>

#define YOLO_DETECT_VERSION "0.1.0"

/* the core keys for some tasks only that this one reads (yolo/plugin.h) */
static const char *const keys_read[] = {YOLO_DETECTION_KEYS_READ};

static const yolo_task detect_task = {
    .abi = {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR},
    .name = "detect",
    .version = YOLO_DETECT_VERSION,
    .description = "object detection: a box and a class per object",
    .default_model = "yolov8n.yaml",
    .default_data = "coco8.yaml",
    .modules = detect_modules, /* detect_modules.h */
    .n_modules = DETECT_N_MODULES,
    .model_yaml_names = detect_model_yaml_names,
    .model_yaml_texts = detect_model_yaml_texts,
    .n_model_yamls = DETECT_N_MODEL_YAMLS,
    .config_keys = NULL, /* no keys of its own: the core's default.yaml holds Ultralytics' */
    .n_config_keys = 0,
    .hooks = &detect_task_hooks, /* detect_task.h */
    .task_keys_read = keys_read,
    .n_task_keys_read = (int)(sizeof keys_read / sizeof keys_read[0]),
};

__attribute__((visibility("default"))) const yolo_task *yolo_task_register(void) { return &detect_task; }
