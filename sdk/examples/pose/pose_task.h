/* pose_task.h — the pose task's hooks and configuration keys (pose_task.c),
 * referenced by the task table in pose.c. */
#ifndef POSE_TASK_H
#define POSE_TASK_H

#include <yolo/config.h>
#include <yolo/task.h>

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* loss (detect + keypoint OKS + visibility), box and pose metrics, predict */
extern const yolo_task_hooks pose_task_hooks;
/* `pose` (12.0) and `kobj` (1.0): v8PoseLoss's keypoint gains */
extern const yolo_config_key pose_config_keys[2];

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#endif
