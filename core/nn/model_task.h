/* Which task a model yaml is for, as Ultralytics guesses it. */
#ifndef YOLO_NN_MODEL_TASK_H
#define YOLO_NN_MODEL_TASK_H

#include <stddef.h>

/* Ultralytics' guess_model_task for model=NAME.yaml, so that `yolo train
 * model=yolov8n-seg.yaml` runs the segment task without task=: a yaml file
 * (as the loader resolves the name) is for the task its head's last module
 * names (Detect -> detect, Segment -> segment, Classify -> classify, Pose,
 * OBB); a name that is no file (an embedded yaml) by its stem: -seg, -cls,
 * -pose, -obb, else detect. Writes the task into buf and returns it; NULL
 * when the yaml cannot be read or parsed, or its head names no task (the
 * mode then reports what is wrong with it). Sets no error. */
const char *yolo_model_yaml_task(const char *model, char *buf, size_t size);

#endif
