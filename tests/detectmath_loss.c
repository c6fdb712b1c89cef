/* v8DetectionLoss: values of a hand-built case, and the analytic gradient
 * against central finite differences on random heads with the assignment
 * the assigner makes for them (held fixed, as Ultralytics holds it). */
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"
#include "detectmath_util.h"

/* One image, two anchors (1x2 grid, stride 8), nc 2. All box logits 0, so
 * every side's distribution is uniform: expected distance 7.5 and, for any
 * target, CE = ln 16 on both bins (wl + wr = 1). Class logits 0: every BCE
 * term is ln 2 whatever its target. Anchor 0 is assigned with score 0.6, so
 * tss = max(0.6, 1) = 1:
 *   cls = 0.5 * (2 anchors * 2 classes * ln 2) / 1
 *   dfl = 1.5 * 0.6 * ln 16 / 1
 *   box = 7.5 * 0.6 * (1 - CIoU(pred, target)) / 1, pred = (0.5 -+ 7.5) grid
 *   total = 1 * (box + cls + dfl). */
static void test_hand_values(void) {
    yolo_det_loss_params p = yolo_det_loss_default_params(2);
    const int A = 2, C = 4 * 16 + 2;
    float head[2 * 66] = {0};
    int h[1] = {1}, w[1] = {2};
    float strides[1] = {8}, xy[4], st[2];
    yolo_det_make_anchors(1, h, w, strides, 0.5f, xy, st);
    /* gt in pixels; in grid units [0, 0, 3, 2.5] */
    const float gbox[4] = {0, 0, 24, 20};
    const int32_t bidx[1] = {0}, gcls[1] = {1};
    yolo_det_gt_batch gt = {1, bidx, gcls, gbox};
    int32_t gi[2] = {0, -1};
    float sc[2] = {0.6f, 0};
    yolo_det_assignment asg = {gi, sc};
    yolo_det_loss_value v;
    float grad[2 * 66];
    DM_CHECK(yolo_det_loss_assigned(&p, 1, A, head, xy, st, &gt, &asg, &v, grad) == YOLO_OK, "loss");
    double pred[4] = {0.5 - 7.5, 0.5 - 7.5, 0.5 + 7.5, 0.5 + 7.5}, tgt[4] = {0, 0, 3, 2.5};
    double box = 7.5 * 0.6f * (1 - yolo_box_ciou(pred, tgt));
    /* class terms are float per element (yolo/loss.h): log 2 to 2e-7 */
    DM_NEAR(v.cls, 0.5 * 4 * log(2.0), 0.5 * 4 * 2e-7);
    DM_NEAR(v.dfl, 1.5 * 0.6f * log(16.0), 1e-9);
    DM_NEAR(v.box, box, 1e-9);
    DM_NEAR(v.total, v.box + v.cls + v.dfl, 1e-12);
    DM_NEAR(v.target_score_sum, 1, 0);
    DM_CHECK(v.n_fg == 1, "n_fg %d", v.n_fg);
    /* d cls / d x = 0.5 * (sigmoid(0) - t) * batch / tss: t = 0.6 for (anchor 0, class 1). */
    DM_NEAR(grad[(64 + 1) * A + 0], 0.5 * (0.5 - 0.6f), 1e-7);
    DM_NEAR(grad[(64 + 0) * A + 0], 0.5 * 0.5, 1e-7);
    DM_NEAR(grad[(64 + 1) * A + 1], 0.5 * 0.5, 1e-7);
    for (int k = 0; k < 64; k++) DM_CHECK(grad[k * A + 1] == 0, "background box logit %d has gradient", k);

    /* Batch factor and normaliser: two images, scores summing above 1. */
    float head2[2 * 2 * 66] = {0};
    const int32_t bidx2[2] = {0, 1}, gcls2[2] = {1, 0};
    const float gbox2[8] = {0, 0, 24, 20, 0, 0, 24, 20};
    yolo_det_gt_batch gt2 = {2, bidx2, gcls2, gbox2};
    int32_t gi2[4] = {0, -1, 1, -1};
    float sc2[4] = {0.6f, 0, 0.8f, 0};
    yolo_det_assignment asg2 = {gi2, sc2};
    yolo_det_loss_value v2;
    DM_CHECK(yolo_det_loss_assigned(&p, 2, A, head2, xy, st, &gt2, &asg2, &v2, NULL) == YOLO_OK, "loss");
    double tss = (double)0.6f + (double)0.8f;
    DM_NEAR(v2.target_score_sum, tss, 1e-7);
    DM_NEAR(v2.cls, 0.5 * 8 * log(2.0) / tss, 0.5 * 8 * 2e-7 / tss);
    DM_NEAR(v2.dfl, 1.5 * tss * log(16.0) / tss, 1e-7);
    DM_NEAR(v2.total, 2 * (v2.box + v2.cls + v2.dfl), 1e-9);
    (void)C;
}

/* CIoU's alpha and v for a (pred, target) pair, as in bbox_iou. */
static void alpha_v(const double *b1, const double *b2, double *alpha, double *v) {
    const double eps = 1e-7, k = 4 / (3.14159265358979323846 * 3.14159265358979323846);
    double w1 = b1[2] - b1[0], h1 = b1[3] - b1[1] + eps, w2 = b2[2] - b2[0], h2 = b2[3] - b2[1] + eps;
    double inter =
        fmax(fmin(b1[2], b2[2]) - fmax(b1[0], b2[0]), 0) * fmax(fmin(b1[3], b2[3]) - fmax(b1[1], b2[1]), 0);
    double iou = inter / (w1 * h1 + w2 * h2 - inter + eps);
    *v = k * pow(atan(w2 / h2) - atan(w1 / h1), 2);
    *alpha = *v / (*v - iou + (1 + eps));
}

typedef struct frozen_ctx {
    const yolo_det_loss_params *p;
    int batch, n_anchors;
    const float *xy, *st;
    const yolo_det_gt_batch *gt;
    const yolo_det_assignment *asg;
    double *alpha0; /* per anchor of the batch, taken at the base point */
} frozen_ctx;

/* The loss with each positive's CIoU alpha frozen at alpha0 (what autograd
 * differentiates): loss + B * box_gain * w / tss * (alpha0 - alpha(x)) * v(x).
 * With alpha0 == NULL it records alpha(x) instead. */
static double loss_alpha_frozen(const frozen_ctx *f, const float *head, double *alpha_out) {
    yolo_det_loss_value v;
    yolo_det_loss_assigned(f->p, f->batch, f->n_anchors, head, f->xy, f->st, f->gt, f->asg, &v, NULL);
    int A = f->n_anchors, R = f->p->reg_max;
    size_t C = 4 * (size_t)R + f->p->nc;
    double total = v.total;
    for (int b = 0; b < f->batch; b++) {
        for (int a = 0; a < A; a++) {
            int gi = f->asg->gt_index[b * A + a];
            if (gi < 0) continue;
            double d[4], s = f->st[a], ax = f->xy[2 * a], ay = f->xy[2 * a + 1];
            yolo_det_dfl_distances(head + b * C * A, A, R, a, d, NULL);
            double pred[4] = {ax - d[0], ay - d[1], ax + d[2], ay + d[3]}, tgt[4];
            for (int k = 0; k < 4; k++) tgt[k] = f->gt->boxes[4 * gi + k] / s;
            double al, vv;
            alpha_v(pred, tgt, &al, &vv);
            if (alpha_out)
                alpha_out[b * A + a] = al;
            else
                total += f->batch * f->p->box_gain * f->asg->score[b * A + a] / v.target_score_sum *
                         (f->alpha0[b * A + a] - al) * vv;
        }
    }
    return total;
}

/* Random heads on two levels (4x4 stride 8, 2x2 stride 16; a 32x32 input),
 * gts drawn in pixels, the assigner's output held fixed, every head output
 * probed by central differences in double. */
/* Two levels, 4x4 stride 8 and 2x2 stride 16 (a 32x32 input): 20 anchors. */
static int two_level_anchors(float xy[2 * 20], float st[20]) {
    int h[2] = {4, 2}, w[2] = {4, 2};
    float strides[2] = {8, 16};
    yolo_det_make_anchors(2, h, w, strides, 0.5f, xy, st);
    return yolo_det_anchor_count(2, h, w);
}

static void test_gradient(void) {
    enum { B = 2, NC = 3, R = 16, C = 4 * R + NC };
    float xy[2 * 20], st[20];
    const int A = two_level_anchors(xy, st);
    size_t n = (size_t)B * C * A;
    float *head = malloc(n * sizeof(float)), *grad = malloc(n * sizeof(float));
    uint64_t rng = 1234;
    const int32_t bidx[5] = {0, 0, 1, 1, 1}, gcls[5] = {0, 2, 1, 1, 0};
    const float gbox[20] = {2, 3, 18, 21, 10, 6, 31, 27, 0, 0, 30, 30, 5, 12, 14, 30, 16, 1, 29, 15};
    yolo_det_gt_batch gt = {5, bidx, gcls, gbox};
    yolo_det_loss_params p = yolo_det_loss_default_params(NC);
    int32_t gi[B * 20];
    float sc[B * 20];
    yolo_det_assignment asg = {gi, sc};
    int checked = 0, bad = 0, rounds = 0;
    double worst = 0;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < n; i++) head[i] = (float)dm_uniform(&rng, -2, 2);
        for (int b = 0; b < B; b++) /* class logits of a young model: mostly negative */
            for (int c = 0; c < NC; c++)
                for (int a = 0; a < A; a++)
                    head[((size_t)b * C + 4 * R + c) * A + a] = (float)dm_uniform(&rng, -4, 1);
        DM_CHECK(yolo_det_assign(&p, B, A, head, xy, st, &gt, &asg) == YOLO_OK, "assign");
        yolo_det_loss_value v, v2;
        DM_CHECK(yolo_det_loss_assigned(&p, B, A, head, xy, st, &gt, &asg, &v, grad) == YOLO_OK, "loss");
        DM_CHECK(yolo_det_loss(&p, B, A, head, xy, st, &gt, &v2, NULL) == YOLO_OK, "loss (assigning)");
        DM_NEAR(v2.total, v.total, 1e-12);
        DM_CHECK(v.n_fg >= 4 && v.box > 0 && v.dfl > 0 && v.cls > 0, "a realistic case: %d positives",
                 v.n_fg);
        double alpha0[B * 20];
        frozen_ctx fz = {&p, B, A, xy, st, &gt, &asg, alpha0};
        loss_alpha_frozen(&fz, head, alpha0);
        DM_NEAR(loss_alpha_frozen(&fz, head, NULL), v.total, 1e-12);
        for (size_t i = 0; i < n; i++) {
            /* Class logits take a wider step: their loss terms are float
             * (as PyTorch's), and a float's rounding of a term near 1 over a
             * 2e-3 step would be 3e-5; BCE is smooth enough for 1e-2. */
            const bool cls = (i / A) % C >= 4 * R;
            float x = head[i], h = cls ? 1e-2f : 1e-3f;
            float xp = x + h, xm = x - h;
            head[i] = xp;
            double lp = loss_alpha_frozen(&fz, head, NULL);
            head[i] = xm;
            double lm = loss_alpha_frozen(&fz, head, NULL);
            head[i] = x;
            double fd = (lp - lm) / ((double)xp - (double)xm);
            checked++;
            double err = fabs(fd - grad[i]) / (1e-4 + fabs(fd));
            worst = err > worst ? err : worst;
            if (fabs(fd - grad[i]) > 2e-6 + 1e-4 * fabs(fd)) {
                if (bad++ < 10)
                    fprintf(stderr, "round %d output %zu (channel %zu, anchor %zu): analytic %.8g, fd %.8g\n",
                            round, i, (i / A) % C, i % A, (double)grad[i], fd);
            }
        }
        rounds++;
    }
    DM_CHECK(bad == 0, "%d of %d gradient entries disagree with finite differences", bad, checked);
    printf("gradient: %d entries over %d rounds, worst relative error %.2g\n", checked, rounds, worst);
    free(head), free(grad);
}

/* Images run on threads (YOLO_LOSS_THREADS): 1, 2 and 5 threads over 5
 * images give bit-identical assignments, loss terms and gradients. */
static void test_thread_counts(void) {
    enum { B = 5, NC = 3, R = 16, C = 4 * R + NC };
    float xy[2 * 20], st[20];
    const int A = two_level_anchors(xy, st);
    size_t n = (size_t)B * C * A;
    float *head = malloc(n * sizeof(float)), *grad[3] = {malloc(n * 4), malloc(n * 4), malloc(n * 4)};
    uint64_t rng = 99;
    for (size_t i = 0; i < n; i++) head[i] = (float)dm_uniform(&rng, -3, 2);
    const int32_t bidx[7] = {0, 0, 1, 2, 3, 3, 4}, gcls[7] = {0, 2, 1, 1, 0, 2, 1};
    const float gbox[28] = {2, 3, 18, 21, 10, 6, 31, 27, 0, 0, 30, 30, 5, 12, 14, 30,
                            16, 1, 29, 15, 1, 1, 20, 12, 8, 8, 24, 24};
    yolo_det_gt_batch gt = {7, bidx, gcls, gbox};
    yolo_det_loss_params p = yolo_det_loss_default_params(NC);
    yolo_det_loss_value v[3];
    const char *threads[3] = {"1", "2", "5"};
    for (int k = 0; k < 3; k++) {
        setenv("YOLO_LOSS_THREADS", threads[k], 1);
        DM_CHECK(yolo_det_loss(&p, B, A, head, xy, st, &gt, &v[k], grad[k]) == YOLO_OK, "loss on %s threads",
                 threads[k]);
    }
    unsetenv("YOLO_LOSS_THREADS");
    for (int k = 1; k < 3; k++) {
        DM_CHECK(v[k].box == v[0].box && v[k].cls == v[0].cls && v[k].dfl == v[0].dfl && v[k].n_fg == v[0].n_fg,
                 "loss terms on %s threads differ from 1 thread", threads[k]);
        DM_CHECK(memcmp(grad[k], grad[0], n * 4) == 0, "gradient on %s threads differs from 1 thread", threads[k]);
    }
    DM_CHECK(v[0].n_fg > 0, "the case has positives");
    free(head), free(grad[0]), free(grad[1]), free(grad[2]);
}

static void test_errors(void) {
    yolo_det_loss_params p = yolo_det_loss_default_params(2);
    float head[66 * 2] = {0}, xy[4] = {0.5f, 0.5f, 1.5f, 0.5f}, st[2] = {8, 8};
    const int32_t bidx[1] = {3}, gcls[1] = {0};
    const float gbox[4] = {0, 0, 8, 8};
    yolo_det_gt_batch gt = {1, bidx, gcls, gbox};
    yolo_det_loss_value v;
    DM_CHECK(yolo_det_loss(&p, 1, 2, head, xy, st, &gt, &v, NULL) == YOLO_ERR_ARG, "image index out of range");
    const int32_t bidx0[1] = {0}, gcls5[1] = {5};
    yolo_det_gt_batch gt2 = {1, bidx0, gcls5, gbox};
    DM_CHECK(yolo_det_loss(&p, 1, 2, head, xy, st, &gt2, &v, NULL) == YOLO_ERR_ARG, "class out of range");
    head[64 * 2] = NAN;
    yolo_det_gt_batch none = {0, NULL, NULL, NULL};
    DM_CHECK(yolo_det_loss(&p, 1, 2, head, xy, st, &none, &v, NULL) == YOLO_ERR_NUMERIC, "NaN reported");
    /* No gts: only the class term, normalised by 1. */
    head[64 * 2] = 0;
    DM_CHECK(yolo_det_loss(&p, 1, 2, head, xy, st, &none, &v, NULL) == YOLO_OK, "empty batch");
    DM_NEAR(v.box, 0, 0);
    DM_NEAR(v.dfl, 0, 0);
    DM_NEAR(v.cls, 0.5 * 4 * log(2.0), 0.5 * 4 * 2e-7);
}

int main(void) {
    test_hand_values();
    test_gradient();
    test_thread_counts();
    test_errors();
    return dm_result("detectmath_loss");
}
