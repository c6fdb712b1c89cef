/* cls_pw's class weights (core/train/class_weights.c), as Ultralytics 8.4's
 * DetectionTrainer.set_class_weights computes them: (1 / instances)^cls_pw
 * with an empty class counted 1, scaled to mean 1; the power checked; the
 * printed line. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"
#include "train/class_weights.h"

static void check_weights(const int64_t *counts, int nc, double power, const double *want) {
    float w[8];
    CHECK_MSG(yolo_class_weights_from_counts(counts, nc, power, w) == YOLO_OK, "%s", yolo_last_error());
    double mean = 0;
    for (int c = 0; c < nc; c++) {
        CHECK_MSG(fabs(w[c] - want[c]) <= 1e-6 * want[c], "power %g, class %d: %.9g, expected %.9g", power, c,
                  (double)w[c], want[c]);
        mean += w[c] / nc;
    }
    CHECK_MSG(fabs(mean - 1) < 1e-6, "power %g: mean %.9g", power, mean);
}

int main(void) {
    /* counts 10, 40 and none (counted 1): inverse 0.1, 0.025, 1 (mean 0.375) */
    const int64_t counts[3] = {10, 40, 0};
    check_weights(counts, 3, 1.0, (const double[]){0.1 / 0.375, 0.025 / 0.375, 1 / 0.375});
    const double s = (sqrt(0.1) + sqrt(0.025) + 1) / 3;
    check_weights(counts, 3, 0.5, (const double[]){sqrt(0.1) / s, sqrt(0.025) / s, 1 / s});
    check_weights(counts, 3, 0.0, (const double[]){1, 1, 1});
    check_weights((const int64_t[]){7, 7}, 2, 1.0, (const double[]){1, 1}); /* balanced: all 1 */

    float w[3];
    CHECK(yolo_class_weights_from_counts(counts, 3, 1.5, w) == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "cls_pw=1.5"));
    CHECK(yolo_class_weights_from_counts(counts, 3, -0.1, w) == YOLO_ERR_CONFIG);
    CHECK(yolo_class_weights_from_counts(counts, 3, NAN, w) == YOLO_ERR_CONFIG);
    CHECK(yolo_class_weights_from_counts(counts, 0, 1.0, w) == YOLO_ERR_ARG);
    CHECK(yolo_class_weights_from_counts((const int64_t[]){3, -1, 2}, 3, 1.0, w) == YOLO_ERR_ARG);

    char text[128] = "";
    FILE *f = tmpfile();
    yolo_class_weights_print((const float[]){0.26666f, 0.0666666f, 2.6666667f}, 3, f);
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    CHECK_MSG(strcmp(text, "Class weights: [0.267 0.067 2.667]\n") == 0, "printed: %s", text);
    return test_result("test_class_weights");
}
