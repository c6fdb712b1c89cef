/* detect_task.h — the detect task's training, validation and prediction
 * hooks (yolo/task.h), for the task table in plugin.c:
 *
 *     .hooks = &detect_task_hooks,
 *
 * The glue between the core trainer and yolo/detection.h: it turns the head's
 * host outputs and a yolo_batch into the v8 detection loss and its
 * gradient, the validator's statistics (NMS, original-image boxes, AP) and
 * predict's text results. Internal to the plugin (hidden symbol). */
#ifndef YOLO_DETECT_TASK_H
#define YOLO_DETECT_TASK_H

#include <yolo/task.h>

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

extern const yolo_task_hooks detect_task_hooks;

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif
