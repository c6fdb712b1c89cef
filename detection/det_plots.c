/* Detection's validation pictures (yolo/detection.h): Ultralytics'
 * ConfusionMatrix.process_batch for boxes, and the P, R, F1 and PR curves
 * of an AP summary (DetMetrics' plots: <prefix>PR_curve.png, ...). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"

typedef struct cm_match {
    int gt, det;
    float iou;
} cm_match;

static int by_iou_desc(const void *pa, const void *pb) {
    const cm_match *a = pa, *b = pb;
    if (a->iou != b->iou) return a->iou < b->iou ? 1 : -1;
    return (a->det > b->det) - (a->det < b->det);
}

/* Keeps the first (highest-IoU) match of each gt (by_gt) or detection. */
static int unique_first(cm_match *m, int n, bool by_gt) {
    int kept = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < kept && !seen; j++) seen = by_gt ? m[j].gt == m[i].gt : m[j].det == m[i].det;
        if (!seen) m[kept++] = m[i];
    }
    return kept;
}

yolo_status yolo_det_confusion_add_image(yolo_confusion *m, const yolo_detection *dets, int n_det, int n_gt,
                                         const int32_t *gt_cls, const float *gt_boxes, float conf, float iou_thres) {
    if (!m || !m->counts || m->n != m->nc + 1)
        return yolo_error(YOLO_ERR_ARG, "detection confusion matrix: needs a background row (init with background)");
    int nc = m->nc, n_keep = 0;
    float *boxes = malloc(((size_t)n_det + 1) * 4 * sizeof *boxes);
    int32_t *cls = malloc(((size_t)n_det + 1) * sizeof *cls);
    float *iou = malloc(((size_t)n_gt * n_det + 1) * sizeof *iou);
    cm_match *match = malloc(((size_t)n_gt * n_det + 1) * sizeof *match);
    bool *matched = calloc((size_t)n_det + 1, sizeof *matched);
    if (!boxes || !cls || !iou || !match || !matched) {
        free(boxes), free(cls), free(iou), free(match), free(matched);
        return yolo_error(YOLO_ERR_NOMEM, "detection confusion matrix: out of memory for %d x %d", n_gt, n_det);
    }
    for (int d = 0; d < n_det; d++)
        if (dets[d].score > conf) {
            memcpy(boxes + 4 * (size_t)n_keep, dets[d].box, 4 * sizeof(float));
            cls[n_keep++] = dets[d].cls;
        }
    int n_match = 0;
    if (n_gt > 0 && n_keep > 0) {
        yolo_box_iou_matrix(gt_boxes, n_gt, boxes, n_keep, iou);
        for (int g = 0; g < n_gt; g++)
            for (int d = 0; d < n_keep; d++)
                if (iou[(size_t)g * n_keep + d] > iou_thres) match[n_match++] = (cm_match){g, d, iou[(size_t)g * n_keep + d]};
        qsort(match, (size_t)n_match, sizeof *match, by_iou_desc);
        n_match = unique_first(match, n_match, false);
        n_match = unique_first(match, n_match, true);
    }
    for (int g = 0; g < n_gt; g++) {
        int found = -1;
        for (int k = 0; k < n_match && found < 0; k++)
            if (match[k].gt == g) found = match[k].det;
        if (found >= 0) yolo_confusion_add(m, cls[found], gt_cls[g]); /* correct class or confused */
        else yolo_confusion_add(m, nc, gt_cls[g]);                  /* missed: background */
    }
    for (int k = 0; k < n_match; k++) matched[match[k].det] = true;
    for (int d = 0; d < n_keep; d++)
        if (!matched[d]) yolo_confusion_add(m, cls[d], nc); /* nothing there: a background prediction */
    free(boxes), free(cls), free(iou), free(match), free(matched);
    return YOLO_OK;
}

/* Ultralytics' smooth(y, f=0.05): a box filter of 51 with edge padding. */
static void smooth_box(const double *y, int n, double *out) {
    const int nf = 51, half = nf / 2;
    for (int k = 0; k < n; k++) {
        double acc = 0;
        for (int m = -half; m <= half; m++) acc += y[k + m < 0 ? 0 : k + m >= n ? n - 1 : k + m];
        out[k] = acc / nf;
    }
}

yolo_status yolo_det_plot_curves(const yolo_ap_summary *sum, const char *prefix, const char *const *names, int nc,
                                 const char *dir) {
    if (!sum || sum->n_curves < 1 || !sum->curves) return YOLO_OK; /* nothing found: no curves to draw */
    const int P = YOLO_AP_CURVE_POINTS, n = sum->n_curves;
    double *py = malloc((size_t)n * P * sizeof *py), *mean = malloc(2 * (size_t)P * sizeof *mean);
    double *ap50 = malloc((size_t)n * sizeof *ap50);
    if (!py || !mean || !ap50) {
        free(py), free(mean), free(ap50);
        return yolo_error(YOLO_ERR_NOMEM, "%s curves: out of memory", prefix);
    }
    static const char *const files[4] = {"P_curve", "R_curve", "F1_curve", "PR_curve"};
    static const char *const ylabels[4] = {"Precision", "Recall", "F1", "Precision"};
    yolo_status st = YOLO_OK;
    for (int k = 0; k < 4 && !st; k++) {
        memset(mean, 0, 2 * (size_t)P * sizeof *mean);
        for (int i = 0; i < n; i++) {
            const double *curve = sum->curves + ((size_t)i * 4 + k) * P;
            memcpy(py + (size_t)i * P, curve, (size_t)P * sizeof *py);
            for (int j = 0; j < P; j++) mean[j] += curve[j] / n;
            ap50[i] = sum->ap[(size_t)sum->curve_cls[i] * sum->n_iou];
        }
        char path[2048], label[128];
        snprintf(path, sizeof path, "%s/%s%s.png", dir, prefix, files[k]);
        const double *shown = mean;
        if (k == 3) snprintf(label, sizeof label, "all classes %.3f mAP@0.5", sum->map50);
        else {
            smooth_box(mean, P, mean + P);
            shown = mean + P;
            int best = 0;
            for (int j = 1; j < P; j++) best = shown[j] > shown[best] ? j : best;
            snprintf(label, sizeof label, "all classes %.2f at %.3f", shown[best], sum->px[best]);
        }
        yolo_curve_plot plot = {.path = path, .xlabel = k == 3 ? "Recall" : "Confidence", .ylabel = ylabels[k],
                                .n_points = P, .px = sum->px, .n_curves = n, .py = py, .class_ids = sum->curve_cls,
                                .curve_values = k == 3 ? ap50 : NULL, .names = names, .nc = nc, .mean = shown,
                                .mean_label = label};
        st = yolo_plot_curves(&plot);
    }
    free(py), free(mean), free(ap50);
    return st;
}

void yolo_det_draw_detection(yolo_canvas *c, const yolo_det_eval *e, const yolo_detection *d,
                             const yolo_draw_options *opt, yolo_drawn_object *objects, int *n) {
    char name_buf[16];
    yolo_draw_object(c, d->box, d->cls, yolo_det_eval_class_name(e, d->cls, name_buf, sizeof name_buf), d->score, opt);
    if (objects && n) {
        objects[*n] = (yolo_drawn_object){d->cls, d->score, {d->box[0], d->box[1], d->box[2], d->box[3]}};
        (*n)++;
    }
}
