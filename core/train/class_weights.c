/* cls_pw's class weights (class_weights.h). Computed in double and rounded
 * once: Ultralytics computes them in float32 numpy, whose last bit may
 * differ; the weights scale loss terms, so an ulp is immaterial. */
#include "train/class_weights.h"

#include <math.h>

yolo_status yolo_class_weights_from_counts(const int64_t *counts, int nc, double power, float *out) {
    if (!counts || !out || nc < 1) return yolo_error(YOLO_ERR_ARG, "class weights: no classes");
    if (!(power >= 0 && power <= 1))
        return yolo_error(YOLO_ERR_CONFIG, "cls_pw=%g: the class weights' power must be in [0, 1]", power);
    double sum = 0;
    for (int c = 0; c < nc; c++) {
        if (counts[c] < 0) return yolo_error(YOLO_ERR_ARG, "class weights: class %d counts %lld", c, (long long)counts[c]);
        double n = counts[c] > 0 ? (double)counts[c] : 1.0;
        out[c] = (float)pow(1.0 / n, power); /* stored, then scaled from the stored values */
        sum += out[c];
    }
    const double mean = sum / nc;
    for (int c = 0; c < nc; c++) out[c] = (float)(out[c] / mean);
    return YOLO_OK;
}

void yolo_class_weights_print(const float *w, int nc, FILE *f) {
    fputs("Class weights: [", f);
    for (int c = 0; c < nc; c++) fprintf(f, "%s%.3f", c ? " " : "", (double)w[c]);
    fputs("]\n", f);
}
