/* Ultralytics' learning-rate schedule and warmup interpolation. */
#ifndef YOLO_TRAIN_SCHEDULE_H
#define YOLO_TRAIN_SCHEDULE_H

#include <math.h>
#include <stdbool.h>

/* f(epoch) multiplying lr0: linear max(1 - e/E, 0)*(1 - lrf) + lrf, or
 * cosine ((1 - cos(pi*e/E))/2)*(lrf - 1) + 1. */
static inline double yolo_lr_factor(int epoch, int epochs, double lrf, bool cosine) {
    double x = (double)epoch / (double)epochs;
    if (cosine) return ((1.0 - cos(x * M_PI)) / 2.0) * (lrf - 1.0) + 1.0;
    double lin = 1.0 - x;
    return (lin > 0.0 ? lin : 0.0) * (1.0 - lrf) + lrf;
}

/* numpy.interp(x, [x0, x1], [y0, y1]) with clamping. */
static inline double yolo_interp(double x, double x0, double x1, double y0, double y1) {
    if (x <= x0) return y0;
    if (x >= x1) return y1;
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

#endif
