/* The segment task plugin: its entry point and task table (yolo/plugin.h).
 * It includes only sdk headers. Head modules live in their own files in
 * this directory (segment_modules.h), model yamls in models/; both are listed
 * in the table below. */
#include "segment_model_yamls.h" /* generated from the yamls in models/ */
#include "segment_modules.h"
#include "segment_task.h"
#include "yolo/detection.h"
#include "yolo/plugin.h"

#include <stddef.h>

#define YOLO_SEGMENT_VERSION "0.1.0"

/* the core keys for some tasks only that this one reads (yolo/plugin.h) */
static const char *const keys_read[] = {YOLO_DETECTION_KEYS_READ, "overlap_mask", "mask_ratio"};

static const yolo_task segment_task = {
    .abi = {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR},
    .name = "segment",
    .version = YOLO_SEGMENT_VERSION,
    .description = "instance segmentation: a box, a class and a mask per object",
    .default_model = "yolov8n-seg.yaml",
    .default_data = "coco8-seg.yaml",
    .modules = segment_modules, /* segment_modules.h */
    .n_modules = SEGMENT_N_MODULES,
    .model_yaml_names = segment_model_yaml_names,
    .model_yaml_texts = segment_model_yaml_texts,
    .n_model_yamls = SEGMENT_N_MODEL_YAMLS,
    .config_keys = NULL, /* no keys of its own: the core's default.yaml holds Ultralytics' */
    .n_config_keys = 0, /* overlap_mask and mask_ratio included */
    .hooks = &segment_task_hooks, /* segment_task.h */
    .task_keys_read = keys_read,
    .n_task_keys_read = (int)(sizeof keys_read / sizeof keys_read[0]),
};

__attribute__((visibility("default"))) const yolo_task *yolo_task_register(void) { return &segment_task; }
