/* Which task a model yaml is for, as Ultralytics guesses it, asked of the
 * loaded task plugins. */
#ifndef YOLO_NN_MODEL_TASK_H
#define YOLO_NN_MODEL_TASK_H

#include <stddef.h>

/* Ultralytics' guess_model_task for model=NAME.yaml, so that `yolo train
 * model=yolov8n-seg.yaml` runs the segment task without task=. A yaml file
 * (as the loader resolves the name) is for the task whose plugin provides
 * its head's last module (Segment: the segment plugin); a name that is no
 * file, for the task whose plugin embeds it. Load the plugins first
 * (yolo_plugin_scan). Writes the task into buf and returns it; NULL when
 * the yaml cannot be read or parsed or no loaded task owns it (the mode
 * then reports what is wrong). Sets no error. */
const char *yolo_model_yaml_task(const char *model, char *buf, size_t size);

#endif
