/* NMS: greedy suppression with known survivors, the > threshold rule,
 * max_det, class-aware vs agnostic, multi-label, conf, classes, max_nms. */
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"
#include "detectmath_util.h"

/* Boxes and their IoUs (intersection / union, by hand):
 *   0 A [0,0,10,10]   0.90
 *   1 B [1,0,11,10]   0.80  IoU(A,B) = 90/110 = 0.818 -> suppressed by A
 *   2 C [5,0,15,10]   0.70  IoU(A,C) = 50/150 = 0.333 -> kept
 *   3 D [6,0,16,10]   0.60  IoU(C,D) = 90/110 = 0.818 -> suppressed by C
 *   4 E [20,20,30,30] 0.95  disjoint -> kept, first
 * Survivors at IoU 0.7, best first: E, A, C. */
static void test_greedy(void) {
    const float boxes[20] = {0, 0, 10, 10, 1, 0, 11, 10, 5, 0, 15, 10, 6, 0, 16, 10, 20, 20, 30, 30};
    const float scores[5] = {0.9f, 0.8f, 0.7f, 0.6f, 0.95f};
    int keep[5], n = -1;
    DM_CHECK(yolo_nms_boxes(boxes, scores, 5, 0.7f, 100, keep, &n) == YOLO_OK, "nms");
    DM_CHECK(n == 3 && keep[0] == 4 && keep[1] == 0 && keep[2] == 2, "survivors %d: %d %d %d", n, keep[0],
             keep[1], keep[2]);
    /* At IoU 0.3 C goes too (0.333 > 0.3), and D, which only C would have
     * suppressed, now survives (IoU(A,D) = 40/160 = 0.25): greedy order
     * matters. At 0.9 everything stays. */
    DM_CHECK(yolo_nms_boxes(boxes, scores, 5, 0.3f, 100, keep, &n) == YOLO_OK && n == 3 && keep[2] == 3,
             "iou 0.3: %d", n);
    DM_CHECK(yolo_nms_boxes(boxes, scores, 5, 0.9f, 100, keep, &n) == YOLO_OK && n == 5, "iou 0.9: %d", n);
    DM_CHECK(keep[0] == 4 && keep[1] == 0 && keep[2] == 1 && keep[3] == 2 && keep[4] == 3, "score order");
    /* max_keep truncates the sorted survivors. */
    DM_CHECK(yolo_nms_boxes(boxes, scores, 5, 0.7f, 2, keep, &n) == YOLO_OK && n == 2 && keep[1] == 0, "max 2");

    /* IoU exactly at the threshold is kept (suppression needs IoU > iou):
     * [0,0,10,10] vs [0,0,10,5] is 50/100 = 0.5 exactly. */
    const float half[8] = {0, 0, 10, 10, 0, 0, 10, 5}, hs[2] = {0.9f, 0.8f};
    DM_CHECK(yolo_nms_boxes(half, hs, 2, 0.5f, 10, keep, &n) == YOLO_OK && n == 2, "IoU == thr kept");
    DM_CHECK(yolo_nms_boxes(half, hs, 2, 0.49f, 10, keep, &n) == YOLO_OK && n == 1, "IoU > thr suppressed");
    /* Equal scores keep the input order. */
    const float tie[8] = {0, 0, 1, 1, 5, 5, 6, 6}, ts[2] = {0.5f, 0.5f};
    DM_CHECK(yolo_nms_boxes(tie, ts, 2, 0.5f, 10, keep, &n) == YOLO_OK && n == 2 && keep[0] == 0 && keep[1] == 1,
             "stable ties");
    DM_CHECK(yolo_nms_boxes(NULL, NULL, 0, 0.5f, 10, keep, &n) == YOLO_OK && n == 0, "empty");
}

/* Detect's inference layout [4 + nc, A]: xywh then class scores. */
static void set_anchor(float *pred, int A, int nc, int a, const float xywh[4], const float *scores) {
    for (int k = 0; k < 4; k++) pred[k * A + a] = xywh[k];
    for (int c = 0; c < nc; c++) pred[(4 + c) * A + a] = scores[c];
}

static void test_detect(void) {
    enum { A = 5, NC = 3 };
    float pred[(4 + NC) * A];
    /* anchors 0 and 1: the same place, class 0 and class 1 (IoU 0.818);
     * anchor 2: overlaps anchor 0, class 0, lower score -> suppressed;
     * anchor 3: below conf; anchor 4: two classes above conf. */
    const float b0[4] = {5, 5, 10, 10}, b1[4] = {6, 5, 10, 10}, b2[4] = {5.5f, 5, 10, 10},
                b4[4] = {50, 50, 4, 4};
    const float s0[3] = {0.9f, 0.1f, 0}, s1[3] = {0.1f, 0.8f, 0}, s2[3] = {0.7f, 0, 0},
                s3[3] = {0.2f, 0.25f, 0};
    const float s4[3] = {0, 0.6f, 0.5f};
    set_anchor(pred, A, NC, 0, b0, s0);
    set_anchor(pred, A, NC, 1, b1, s1);
    set_anchor(pred, A, NC, 2, b2, s2);
    set_anchor(pred, A, NC, 3, b0, s3);
    set_anchor(pred, A, NC, 4, b4, s4);
    yolo_nms_params p = yolo_nms_default_params(); /* conf 0.25, iou 0.7, single label */
    yolo_detection out[300];
    int n = -1;
    DM_CHECK(yolo_nms_detect(pred, NC, A, &p, out, &n) == YOLO_OK, "yolo_nms_detect");
    /* class-aware: anchor 0 (cls 0), anchor 1 (cls 1), anchor 4 (cls 1 at 0.6) */
    DM_CHECK(n == 3, "class-aware survivors %d", n);
    if (n == 3) {
        DM_CHECK(out[0].anchor == 0 && out[0].cls == 0 && out[1].anchor == 1 && out[1].cls == 1 &&
                     out[2].anchor == 4 && out[2].cls == 1,
                 "order %d/%d %d/%d %d/%d", out[0].anchor, out[0].cls, out[1].anchor, out[1].cls,
                 out[2].anchor, out[2].cls);
        DM_NEAR(out[0].box[0], 0, 1e-6);
        DM_NEAR(out[0].box[1], 0, 1e-6);
        DM_NEAR(out[0].box[2], 10, 1e-6);
        DM_NEAR(out[0].box[3], 10, 1e-6);
        DM_NEAR(out[0].score, 0.9f, 0);
    }
    /* agnostic: anchor 1 now loses to anchor 0. */
    p.agnostic = true;
    DM_CHECK(yolo_nms_detect(pred, NC, A, &p, out, &n) == YOLO_OK && n == 2 && out[1].anchor == 4, "agnostic %d",
             n);
    p.agnostic = false;
    /* multi-label: anchor 4 gives (cls 1, 0.6) and (cls 2, 0.5); anchor 3's
     * 0.25 is not > 0.25. */
    p.multi_label = true;
    DM_CHECK(yolo_nms_detect(pred, NC, A, &p, out, &n) == YOLO_OK && n == 4, "multi-label %d", n);
    if (n == 4)
        DM_CHECK(out[3].anchor == 4 && out[3].cls == 2, "multi-label last %d/%d", out[3].anchor, out[3].cls);
    /* lower conf: anchor 3 (class 1, 0.25) overlaps anchor 1 (class 1) -> suppressed;
     * its class 0 score 0.2 overlaps anchor 0 -> suppressed; anchors 0/1's
     * second classes 0.1 also fall; anchor 2 stays suppressed by anchor 0. */
    p.conf = 0.05f;
    DM_CHECK(yolo_nms_detect(pred, NC, A, &p, out, &n) == YOLO_OK && n == 4, "conf 0.05: %d", n);
    /* max_det */
    p.max_det = 2;
    DM_CHECK(yolo_nms_detect(pred, NC, A, &p, out, &n) == YOLO_OK && n == 2 && out[0].anchor == 0 &&
                 out[1].anchor == 1,
             "max_det 2: %d", n);
    /* classes filter before NMS: only class 0 -> anchor 0 (anchor 2 still suppressed). */
    p = yolo_nms_default_params();
    const int32_t only0[1] = {0};
    p.classes = only0, p.n_classes = 1;
    DM_CHECK(yolo_nms_detect(pred, NC, A, &p, out, &n) == YOLO_OK && n == 1 && out[0].anchor == 0, "classes %d",
             n);
    /* max_nms 1: only the single best candidate enters. */
    p = yolo_nms_default_params();
    p.max_nms = 1;
    DM_CHECK(yolo_nms_detect(pred, NC, A, &p, out, &n) == YOLO_OK && n == 1 && out[0].anchor == 0, "max_nms %d",
             n);
    /* nothing above conf */
    p = yolo_nms_default_params();
    p.conf = 0.95f;
    DM_CHECK(yolo_nms_detect(pred, NC, A, &p, out, &n) == YOLO_OK && n == 0, "none %d", n);
}

/* YOLO26's selection (yolo_e2e_select, Detect.postprocess): the same five
 * anchors; no NMS, so anchor 2 stays beside anchor 0. */
static void test_e2e_select(void) {
    enum { A = 5, NC = 3 };
    float pred[(4 + NC) * A];
    const float b0[4] = {5, 5, 10, 10}, b1[4] = {6, 5, 10, 10}, b2[4] = {5.5f, 5, 10, 10}, b4[4] = {50, 50, 4, 4};
    const float s0[3] = {0.9f, 0.1f, 0}, s1[3] = {0.1f, 0.8f, 0}, s2[3] = {0.7f, 0, 0}, s3[3] = {0.2f, 0.25f, 0},
                s4[3] = {0, 0.6f, 0.5f};
    set_anchor(pred, A, NC, 0, b0, s0);
    set_anchor(pred, A, NC, 1, b1, s1);
    set_anchor(pred, A, NC, 2, b2, s2);
    set_anchor(pred, A, NC, 3, b0, s3);
    set_anchor(pred, A, NC, 4, b4, s4);
    yolo_nms_params p = yolo_nms_default_params(); /* conf 0.25, max_det 300 -> k = 5 */
    yolo_detection out[300];
    int n = -1;
    /* k = 5 anchors (0, 1, 2, 4, 3), then the 5 best of their 15 pairs: a score of 0.5 is a second class of anchor 4 */
    static const int want[5][2] = {{0, 0}, {1, 1}, {2, 0}, {4, 1}, {4, 2}};
    DM_CHECK(yolo_e2e_select(pred, NC, A, &p, out, &n) == YOLO_OK && n == 5, "k = 5: %d rows", n);
    for (int i = 0; i < n && i < 5; i++)
        DM_CHECK(out[i].anchor == want[i][0] && out[i].cls == want[i][1], "row %d: anchor %d class %d", i,
                 out[i].anchor, out[i].cls);
    if (n >= 1) {
        DM_NEAR(out[0].box[0], 0, 1e-6);
        DM_NEAR(out[0].box[3], 10, 1e-6);
        DM_NEAR(out[0].score, 0.9f, 0);
    }
    /* max_det 3: the pairs of anchors 0, 1, 2 only */
    p.max_det = 3;
    DM_CHECK(yolo_e2e_select(pred, NC, A, &p, out, &n) == YOLO_OK && n == 3 && out[2].anchor == 2 && out[2].cls == 0,
             "max_det 3: %d", n);
    /* agnostic: each anchor's best class; anchor 3's 0.25 is not > conf */
    p = yolo_nms_default_params();
    p.agnostic = true;
    DM_CHECK(yolo_e2e_select(pred, NC, A, &p, out, &n) == YOLO_OK && n == 4 && out[3].anchor == 4 && out[3].cls == 1,
             "agnostic: %d", n);
    /* classes, then conf */
    p = yolo_nms_default_params();
    const int32_t only2[1] = {2};
    p.classes = only2, p.n_classes = 1;
    DM_CHECK(yolo_e2e_select(pred, NC, A, &p, out, &n) == YOLO_OK && n == 1 && out[0].anchor == 4 && out[0].cls == 2,
             "classes [2]: %d", n);
    p = yolo_nms_default_params();
    p.conf = 0.65f;
    DM_CHECK(yolo_e2e_select(pred, NC, A, &p, out, &n) == YOLO_OK && n == 3, "conf 0.65: %d", n);
    DM_CHECK(yolo_e2e_select(pred, 0, A, &p, out, &n) == YOLO_ERR_ARG, "nc 0 is refused");
}

int main(void) {
    test_greedy();
    test_detect();
    test_e2e_select();
    return dm_result("detectmath_nms");
}
