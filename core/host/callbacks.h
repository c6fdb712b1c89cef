/* The trainer's side of the host API's events (yolo/yolo.h: yolo_callbacks). */
#ifndef YOLO_HOST_CALLBACKS_H
#define YOLO_HOST_CALLBACKS_H

#include "yolo/task.h"
#include "yolo/yolo.h"

/* Calls the callbacks added for `event` (cb NULL: none) with the epoch
 * (0-based) and a map of: train/<loss> (train_items), the task's metrics,
 * val/<loss> (val_losses), fitness; a NULL array is left out, as is
 * fitness when metrics is NULL. */
void yolo_callbacks_fire(const yolo_callbacks *cb, const char *event, int epoch, const yolo_task_hooks *hooks,
                         const float *train_items, const double *metrics, const float *val_losses, double fitness);

#endif
