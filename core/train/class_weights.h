/* Ultralytics' cls_pw class weights (its DetectionTrainer.set_class_weights,
 * Ultralytics 8.4): w_c = (1 / n_c)^cls_pw over the training labels'
 * instances n_c of each class (a class without instances counts 1), scaled
 * so that their mean is 1. The task's classification loss multiplies class
 * c's terms by w_c (yolo_task_context.class_weights). */
#ifndef YOLO_TRAIN_CLASS_WEIGHTS_H
#define YOLO_TRAIN_CLASS_WEIGHTS_H

#include <stdint.h>
#include <stdio.h>

#include "yolo/error.h"

/* out[nc] from counts[nc]; power in [0, 1] (0: all 1). */
yolo_status yolo_class_weights_from_counts(const int64_t *counts, int nc, double power, float *out);

/* "Class weights: [2.667 0.267 ...]" (three decimals, as Ultralytics logs them). */
void yolo_class_weights_print(const float *w, int nc, FILE *f);

#endif
