/* classify_task.h — the classify task's training, validation and
 * prediction hooks (yolo/task.h), for the task table in plugin.c:
 *
 *     .hooks = &classify_task_hooks,
 *
 * Cross-entropy (with label_smoothing) on the head's logits, top-1 and
 * top-5 accuracy, and predict's top-5 classes. Internal to the plugin
 * (hidden symbol). */
#ifndef YOLO_CLASSIFY_TASK_H
#define YOLO_CLASSIFY_TASK_H

#include <yolo/task.h>

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

extern const yolo_task_hooks classify_task_hooks;

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif
