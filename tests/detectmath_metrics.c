/* AP machinery: match_predictions semantics, the 101-point interpolated AP
 * on cases computed by hand, mAP50 / mAP50-95 / P / R / fitness, and the
 * accumulate-merge-summarize path. */
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"
#include "detectmath_util.h"

static yolo_detection det(float x1, float y1, float x2, float y2, float score, int cls) {
    yolo_detection d = {{x1, y1, x2, y2}, score, cls, 0};
    return d;
}

/* Matching on a crafted IoU matrix (gts g0, g1 of class 0; p0..p2 class 0,
 * p3 class 1):
 *          p0    p1    p2    p3
 *   g0    0.60  0.91  0.56  0.95
 *   g1    0.81  0.30  0.52  0
 * At 0.50: p0 -> g1 (0.81), p1 -> g0 (0.91), p2 -> g0 (0.56 > 0.52) but g0
 * keeps its lowest-index chooser p1, and p2 is not re-matched to g1; p3 is
 * of another class. So p0 is a TP up to 0.80 (7 thresholds), p1 up to 0.90
 * (9), p2 and p3 never. */
static void test_matching(void) {
    const float iou[8] = {0.60f, 0.91f, 0.56f, 0.95f, 0.81f, 0.30f, 0.52f, 0};
    const int32_t pc[4] = {0, 0, 0, 1}, gc[2] = {0, 0};
    float thr[YOLO_AP_N_IOU];
    yolo_ap_iou_thresholds(thr);
    DM_NEAR(thr[0], 0.5, 1e-7);
    DM_NEAR(thr[9], 0.95, 1e-7);
    uint8_t correct[4 * YOLO_AP_N_IOU];
    DM_CHECK(yolo_ap_match_predictions(4, pc, 2, gc, iou, YOLO_AP_N_IOU, thr, correct) == YOLO_OK, "match");
    const int want_count[4] = {7, 9, 0, 0};
    for (int p = 0; p < 4; p++) {
        int n = 0;
        for (int t = 0; t < YOLO_AP_N_IOU; t++) {
            n += correct[p * YOLO_AP_N_IOU + t];
            /* true positives form a prefix of the thresholds */
            if (t > 0) DM_CHECK(correct[p * YOLO_AP_N_IOU + t] <= correct[p * YOLO_AP_N_IOU + t - 1], "p%d t%d", p, t);
        }
        DM_CHECK(n == want_count[p], "prediction %d is a TP at %d thresholds, want %d", p, n, want_count[p]);
    }
    /* No gts: all false; no predictions: nothing to do. */
    DM_CHECK(yolo_ap_match_predictions(4, pc, 0, NULL, NULL, YOLO_AP_N_IOU, thr, correct) == YOLO_OK, "no gts");
    for (int i = 0; i < 4 * YOLO_AP_N_IOU; i++) DM_CHECK(correct[i] == 0, "no gts -> FP");
}

/* Perfect predictions: every gt found once, exactly. Ultralytics' AP caps
 * at 0.995, not 1: compute_ap appends the sentinel (recall 1, precision 0),
 * np.interp at r = 1.0 returns the last point's precision (0), and the last
 * trapezoid of the 101-point rule is (1 + 0) / 2 * 0.01; so AP = 0.99 +
 * 0.005 at every threshold, mAP50 = mAP50-95 = 0.995, and P = R = 1. */
static void test_perfect(void) {
    yolo_ap_stats s;
    yolo_ap_stats_init(&s, YOLO_AP_N_IOU);
    uint64_t rng = 3;
    for (int img = 0; img < 4; img++) {
        float gb[12];
        int32_t gc[3];
        yolo_detection d[3];
        for (int i = 0; i < 3; i++) {
            float x = (float)dm_uniform(&rng, 0, 300), y = (float)dm_uniform(&rng, 0, 300);
            gb[4 * i] = x, gb[4 * i + 1] = y, gb[4 * i + 2] = x + 20 + 10 * i, gb[4 * i + 3] = y + 30;
            gc[i] = (img + i) % 3;
            d[i] = det(gb[4 * i], gb[4 * i + 1], gb[4 * i + 2], gb[4 * i + 3], 0.5f + 0.1f * i, gc[i]);
        }
        DM_CHECK(yolo_det_metrics_add_image(&s, d, 3, 3, gc, gb) == YOLO_OK, "add");
    }
    yolo_ap_summary sum;
    DM_CHECK(yolo_ap_summarize(&s, 3, &sum) == YOLO_OK, "summarize");
    DM_NEAR(sum.map50, 0.995, 1e-12);
    DM_NEAR(sum.map, 0.995, 1e-12);
    DM_NEAR(sum.mp, 1, 1e-12);
    DM_NEAR(sum.mr, 1, 1e-12);
    DM_NEAR(yolo_det_fitness(&sum), 0.995, 1e-12);
    DM_CHECK(sum.n_images == 4 && sum.n_instances == 12, "counts %lld %lld", (long long)sum.n_images,
             (long long)sum.n_instances);
    DM_CHECK(sum.n_targets[0] == 4 && sum.n_target_img[0] == 4, "per-class counts");
    yolo_ap_summary_free(&sum);
    yolo_ap_stats_free(&s);
}

/* One class, 4 gts, predictions by confidence: TP, FP, TP, FP, TP.
 *   recall    0.25 0.25 0.50 0.50 0.75
 *   precision 1    0.50 0.667 0.50 0.60
 * With sentinels and the envelope (running max from the right):
 *   mrec 0  0.25 0.25  0.50  0.50 0.75 1
 *   mpre 1  1    0.667 0.667 0.60 0.60 0
 * np.interp at r = k/100 (the last of equal recalls wins at r = 0.25, 0.5):
 *   r < 0.25: 1; 0.25 <= r < 0.5: 2/3; 0.5 <= r <= 0.75: 0.6;
 *   0.75 < r <= 1: 0.6 (1 - r) / 0.25 (down to the sentinel's 0).
 * Trapezoids of width 0.01:
 *   [0, 0.24]: 0.24, [0.24, 0.25]: (1 + 2/3)/2 * 0.01,
 *   [0.25, 0.49]: 0.16, [0.49, 0.50]: (2/3 + 0.6)/2 * 0.01,
 *   [0.50, 0.75]: 0.15, [0.75, 1]: 0.6 * 0.25 / 2 = 0.075
 *   AP = 0.625 + (5/3 + 19/15) / 200 = 0.6396667 (the continuous area would
 *   be 0.5667: the interpolation is what this checks).
 * Every TP is exact, so AP is the same at all thresholds. P and R at the
 * max-F1 confidence: F1 is largest (0.667) on the plateau conf <= 0.5, where
 * P = 0.6 and R = 0.75. */
static void test_interpolation(void) {
    yolo_ap_stats s;
    yolo_ap_stats_init(&s, YOLO_AP_N_IOU);
    const float gb[16] = {0, 0, 10, 10, 20, 0, 30, 10, 40, 0, 50, 10, 60, 0, 70, 10};
    const int32_t gc[4] = {0, 0, 0, 0};
    yolo_detection d[5] = {det(0, 0, 10, 10, 0.9f, 0), det(100, 100, 110, 110, 0.8f, 0),
                      det(20, 0, 30, 10, 0.7f, 0), det(200, 100, 210, 110, 0.6f, 0),
                      det(40, 0, 50, 10, 0.5f, 0)};
    /* Split over two images to exercise accumulation; image 2 holds the
     * missed gt and two of the predictions. */
    DM_CHECK(yolo_det_metrics_add_image(&s, d, 3, 2, gc, gb) == YOLO_OK, "add 1");
    DM_CHECK(yolo_det_metrics_add_image(&s, d + 3, 2, 2, gc, gb + 8) == YOLO_OK, "add 2");
    yolo_ap_summary sum;
    DM_CHECK(yolo_ap_summarize(&s, 1, &sum) == YOLO_OK, "summarize");
    double want = 0.625 + (5.0 / 3 + 19.0 / 15) / 200;
    for (int t = 0; t < YOLO_AP_N_IOU; t++) DM_NEAR(sum.ap[t], want, 1e-9);
    DM_NEAR(sum.map50, want, 1e-9);
    DM_NEAR(sum.map, want, 1e-9);
    DM_NEAR(sum.mp, 0.6, 1e-9);
    DM_NEAR(sum.mr, 0.75, 1e-9);
    DM_NEAR(sum.f1[0], 2 * 0.6 * 0.75 / 1.35, 1e-9);
    yolo_ap_summary_free(&sum);
    yolo_ap_stats_free(&s);
}

/* Two thresholds regimes: gts g1, g2; p1 (0.9) exact on g1, p2 (0.8) has
 * IoU 0.72 with g2: a TP at 0.50..0.70 (5 thresholds), an FP at 0.75..0.95.
 *   TP, TP: AP = 0.995 (as the perfect case).
 *   TP, FP: recall 0.5 0.5, precision 1 0.5 -> mpre 1 1 0.5 0 over mrec
 *     0 0.5 0.5 1: r < 0.5 -> 1, r = 0.5 -> 0.5, then 1 - r down to 0.
 *     AP = 0.49 + (1 + 0.5)/2 * 0.01 + 0.5 * 0.5 / 2 = 0.6225.
 * mAP50 = 0.995, mAP75 = 0.6225, mAP50-95 = (5 * 0.995 + 5 * 0.6225) / 10
 * = 0.80875, fitness = 0.1 * 0.995 + 0.9 * 0.80875 = 0.827375. */
static void test_thresholds(void) {
    yolo_ap_stats s;
    yolo_ap_stats_init(&s, YOLO_AP_N_IOU);
    const float gb[8] = {0, 0, 10, 10, 50, 50, 60, 60};
    const int32_t gc[2] = {0, 0};
    yolo_detection d[2] = {det(0, 0, 10, 10, 0.9f, 0), det(50, 50, 60, 57.2f, 0.8f, 0)};
    DM_CHECK(yolo_det_metrics_add_image(&s, d, 2, 2, gc, gb) == YOLO_OK, "add");
    yolo_ap_summary sum;
    DM_CHECK(yolo_ap_summarize(&s, 1, &sum) == YOLO_OK, "summarize");
    for (int t = 0; t < YOLO_AP_N_IOU; t++) DM_NEAR(sum.ap[t], t < 5 ? 0.995 : 0.6225, 1e-9);
    DM_NEAR(sum.map50, 0.995, 1e-9);
    DM_NEAR(sum.map75, 0.6225, 1e-9);
    DM_NEAR(sum.map, 0.80875, 1e-9);
    DM_NEAR(yolo_det_fitness(&sum), 0.827375, 1e-9);
    yolo_ap_summary_free(&sum);
    yolo_ap_stats_free(&s);
}

/* Classes: class 0 perfect (0.995), class 1 has gts and no predictions (0),
 * class 2 has predictions and no gts (ignored): mAP50 = 0.4975. Split over
 * two accumulators and merged, the answer is the same as one accumulator. */
static void test_classes_and_merge(void) {
    yolo_ap_stats a, b, one;
    yolo_ap_stats_init(&a, YOLO_AP_N_IOU), yolo_ap_stats_init(&b, YOLO_AP_N_IOU), yolo_ap_stats_init(&one, YOLO_AP_N_IOU);
    const float gb[8] = {0, 0, 10, 10, 30, 30, 40, 40};
    const int32_t gc[2] = {0, 1};
    yolo_detection d[2] = {det(0, 0, 10, 10, 0.8f, 0), det(100, 100, 120, 120, 0.9f, 2)};
    for (int img = 0; img < 6; img++) {
        yolo_ap_stats *half = img < 3 ? &a : &b;
        DM_CHECK(yolo_det_metrics_add_image(half, d, 2, 2, gc, gb) == YOLO_OK, "add");
        DM_CHECK(yolo_det_metrics_add_image(&one, d, 2, 2, gc, gb) == YOLO_OK, "add");
    }
    /* an empty image (no gts, no predictions) counts as an image */
    DM_CHECK(yolo_det_metrics_add_image(&b, NULL, 0, 0, NULL, NULL) == YOLO_OK, "empty");
    DM_CHECK(yolo_det_metrics_add_image(&one, NULL, 0, 0, NULL, NULL) == YOLO_OK, "empty");
    DM_CHECK(yolo_ap_stats_merge(&a, &b) == YOLO_OK, "merge");
    yolo_ap_summary s1, s2;
    DM_CHECK(yolo_ap_summarize(&a, 3, &s1) == YOLO_OK && yolo_ap_summarize(&one, 3, &s2) == YOLO_OK, "summarize");
    DM_NEAR(s1.map50, 0.4975, 1e-12);
    DM_NEAR(s1.ap[0 * YOLO_AP_N_IOU], 0.995, 1e-12);
    DM_NEAR(s1.ap[1 * YOLO_AP_N_IOU], 0, 0);
    DM_NEAR(s1.ap[2 * YOLO_AP_N_IOU], 0, 0);
    DM_CHECK(s1.n_images == 7 && s1.n_instances == 12 && s1.n_targets[2] == 0, "merged counts");
    DM_CHECK(s1.map50 == s2.map50 && s1.map == s2.map && s1.mp == s2.mp && s1.mr == s2.mr, "merge == single");
    /* class 1: no predictions -> P 0, R 0; class 0: P 1, R 1 -> means 0.5 */
    DM_NEAR(s1.mp, 0.5, 1e-12);
    DM_NEAR(s1.mr, 0.5, 1e-12);
    yolo_ap_summary_free(&s1), yolo_ap_summary_free(&s2);

    /* No true positive anywhere: all metrics 0 (Ultralytics skips process). */
    yolo_ap_stats z;
    yolo_ap_stats_init(&z, YOLO_AP_N_IOU);
    yolo_detection miss = det(500, 500, 510, 510, 0.9f, 0);
    DM_CHECK(yolo_det_metrics_add_image(&z, &miss, 1, 2, gc, gb) == YOLO_OK, "add");
    DM_CHECK(yolo_ap_summarize(&z, 3, &s1) == YOLO_OK, "summarize");
    DM_CHECK(s1.map50 == 0 && s1.map == 0 && s1.mp == 0 && s1.mr == 0 && s1.n_targets[0] == 1, "zeros");
    yolo_ap_summary_free(&s1);
    /* a target class outside [0, nc) is an error */
    DM_CHECK(yolo_ap_summarize(&z, 1, &s1) == YOLO_ERR_ARG, "class range");
    yolo_ap_stats_free(&z);
    yolo_ap_stats_free(&a), yolo_ap_stats_free(&b), yolo_ap_stats_free(&one);
}

/* Random per-prediction statistics (4 classes, 300 predictions, 120 gts),
 * summarized here and by a pure-python transcription of Ultralytics'
 * ap_per_class (numpy's interp/linspace/trapz/convolve spelled out; the same
 * splitmix64 stream generates the data). Its answers, with the max-F1
 * confidence inside (0, 1) so the smoothed-F1 path is exercised:
 *   seed, mp, mr, map50, map50-95, best confidence */
static const double ap_reference[3][6] = {
    {11, 0.280739676594552, 0.44820361229208, 0.307989065909342, 0.15908716038619, 0.342342342342342},
    {12, 0.285854454611698, 0.435471931719396, 0.303426013407835, 0.180347089613032, 0.407407407407407},
    {13, 0.257201639945012, 0.444134174889969, 0.308075395790063, 0.14702085553305, 0.32032032032032},
};

static void test_random_reference(void) {
    for (int r = 0; r < 3; r++) {
        uint64_t rng = (uint64_t)ap_reference[r][0];
        enum { N = 300, NT = 120 };
        uint8_t tp[N * YOLO_AP_N_IOU];
        float conf[N];
        int32_t pc[N], tc[NT];
        for (int i = 0; i < N; i++) {
            pc[i] = (int32_t)(dm_next(&rng) % 4);
            bool hit = dm_next(&rng) % 5 == 0;
            int level = hit ? 1 + (int)(dm_next(&rng) % 10) : 0;
            conf[i] = (float)(hit ? dm_uniform(&rng, 0.3, 1.0) : dm_uniform(&rng, 0.0, 0.8));
            for (int t = 0; t < YOLO_AP_N_IOU; t++) tp[i * YOLO_AP_N_IOU + t] = t < level;
        }
        for (int i = 0; i < NT; i++) tc[i] = (int32_t)(dm_next(&rng) % 4);
        yolo_ap_stats s;
        yolo_ap_stats_init(&s, YOLO_AP_N_IOU);
        DM_CHECK(yolo_ap_stats_add_image(&s, N, tp, conf, pc, NT, tc) == YOLO_OK, "add");
        yolo_ap_summary sum;
        DM_CHECK(yolo_ap_summarize(&s, 4, &sum) == YOLO_OK, "summarize");
        DM_NEAR(sum.mp, ap_reference[r][1], 1e-9);
        DM_NEAR(sum.mr, ap_reference[r][2], 1e-9);
        DM_NEAR(sum.map50, ap_reference[r][3], 1e-9);
        DM_NEAR(sum.map, ap_reference[r][4], 1e-9);
        DM_NEAR(sum.best_conf, ap_reference[r][5], 1e-12);
        yolo_ap_summary_free(&sum);
        yolo_ap_stats_free(&s);
    }
}

int main(void) {
    test_matching();
    test_perfect();
    test_interpolation();
    test_thresholds();
    test_classes_and_merge();
    test_random_reference();
    return dm_result("detectmath_metrics");
}
