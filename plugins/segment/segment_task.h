/* segment_task.h — the segment task's training, validation and prediction
 * hooks (yolo/task.h), for the task table in plugin.c:
 *
 *     .hooks = &segment_task_hooks,
 *
 * Detect's box, class and DFL terms, validation and NMS come from the core
 * (yolo/detection.h); this plugin adds the masks (segment_mask.h): polygon
 * targets, the mask loss into the coefficients and the prototypes, mask
 * mAP and predict's polygons. Internal to the plugin (hidden symbol). */
#ifndef YOLO_SEGMENT_TASK_H
#define YOLO_SEGMENT_TASK_H

#include <yolo/task.h>

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

extern const yolo_task_hooks segment_task_hooks;

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif
