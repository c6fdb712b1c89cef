/* TaskAlignedAssigner: a hand-made case with a known assignment, and random
 * images checked against a dense transcription of Ultralytics' algorithm
 * ([n_gt, A] matrices, torch.topk with lower-index ties, scatter/argmax). */
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"
#include "detectmath_util.h"

static float logit(double s) { return (float)log(s / (1 - s)); }

static double ciou_f(const float *a, const float *b) {
    double x[4], y[4];
    for (int k = 0; k < 4; k++) x[k] = a[k], y[k] = b[k];
    return yolo_box_ciou(x, y);
}

/* 4x4 grid, stride 8 (a 32x32 image), anchor centres at 4 + 8i px, 2 classes.
 *   GT0 class 0 [0,0,20,20]  holds anchors 0, 1, 4, 5
 *   GT1 class 1 [6,6,30,30]  holds anchors 5, 6, 7, 9, 10, 11, 13, 14, 15
 * Predictions (CIoU with GT0 / GT1 from the definition, python3):
 *   anchor 0 [0,0,18,20]  0.898738 / -     class-0 score 0.9
 *   anchor 1 [0,0,20,20]  1        / -     class-0 score 1e-4
 *   anchor 4 [0,0,20,20]  1        / -     class-0 score 0.7
 *   anchor 5 [2,2,24,24]  0.562946 / 0.408330, class-0 0.99, class-1 0.9
 *   anchor 6 [6,6,30,30]  -        / 1     class-1 score 0.6
 *   anchor 9 [6,6,30,30]  -        / 1     class-1 score 0.8
 *   others far away (CIoU < 0 -> 0).
 * Metrics s^0.5 u^6: GT0: a4 0.8367 > a0 0.4998 > a5 0.0316 > a1 0.0100;
 * GT1: a9 0.8944 > a6 0.7746 > a5 0.0044. With topk 3 anchor 5 is in both
 * top-3s and goes to GT0, its higher CIoU. Final positives: GT0 {4, 0, 5},
 * GT1 {9, 6}. Soft targets: metric * max CIoU of the gt / max metric of the
 * gt, i.e. a4 ~ 1, a0 = 0.4998/0.8367, a5 = m5/m4, a9 ~ 1, a6 = sqrt(0.6/0.8). */
static void test_hand_made(void) {
    enum { A = 16, NC = 2 };
    float anchor[2 * A], pred[4 * A], logits[NC * A];
    for (int a = 0; a < A; a++) {
        anchor[2 * a] = 4.0f + 8 * (a % 4), anchor[2 * a + 1] = 4.0f + 8 * (a / 4);
        const float far[4] = {100, 100, 101, 101};
        memcpy(pred + 4 * a, far, sizeof far);
        logits[a] = logits[A + a] = -5;
    }
    const float p0[4] = {0, 0, 18, 20}, g0[4] = {0, 0, 20, 20}, p5[4] = {2, 2, 24, 24},
                g1[4] = {6, 6, 30, 30};
    memcpy(pred + 0, p0, 16), memcpy(pred + 4, g0, 16), memcpy(pred + 16, g0, 16);
    memcpy(pred + 20, p5, 16), memcpy(pred + 24, g1, 16), memcpy(pred + 36, g1, 16);
    logits[0] = logit(0.9), logits[1] = logit(1e-4), logits[4] = logit(0.7), logits[5] = logit(0.99);
    logits[A + 5] = logit(0.9), logits[A + 6] = logit(0.6), logits[A + 9] = logit(0.8);
    const int32_t gcls[2] = {0, 1};
    float gbox[8];
    memcpy(gbox, g0, 16), memcpy(gbox + 4, g1, 16);

    yolo_tal_params p = yolo_tal_default_params();
    p.topk = 3;
    int32_t tg[A];
    float ts[A];
    int n_fg = -1;
    DM_CHECK(yolo_tal_assign(&p, A, NC, logits, pred, anchor, 2, gcls, gbox, tg, ts, &n_fg) == YOLO_OK, "assign");
    const int32_t want_gt[A] = {0, -1, -1, -1, 0, 0, 1, -1, -1, 1, -1, -1, -1, -1, -1, -1};
    for (int a = 0; a < A; a++)
        DM_CHECK(tg[a] == want_gt[a], "anchor %d -> gt %d, want %d", a, tg[a], want_gt[a]);
    DM_CHECK(n_fg == 5, "n_fg %d", n_fg);

    double m4 = sqrt(0.7) * pow(ciou_f(g0, g0), 6), m0 = sqrt(0.9) * pow(ciou_f(g0, p0), 6);
    double m5 = sqrt(0.99) * pow(ciou_f(g0, p5), 6);
    double m9 = sqrt(0.8) * pow(ciou_f(g1, g1), 6), m6 = sqrt(0.6) * pow(ciou_f(g1, g1), 6);
    double pom0 = ciou_f(g0, g0), pom1 = ciou_f(g1, g1);
    DM_NEAR(ts[4], m4 * pom0 / m4, 1e-5);
    DM_NEAR(ts[0], m0 * pom0 / m4, 1e-5);
    DM_NEAR(ts[0], 0.4998 / 0.8367, 2e-4); /* the rounded numbers of the comment */
    DM_NEAR(ts[5], m5 * pom0 / m4, 1e-5);
    DM_NEAR(ts[9], m9 * pom1 / m9, 1e-5);
    DM_NEAR(ts[6], sqrt(0.6 / 0.8), 1e-5);
    DM_NEAR(ts[6], m6 * pom1 / m9, 1e-5);
    for (int a = 0; a < A; a++)
        if (tg[a] < 0) DM_CHECK(ts[a] == 0, "background anchor %d has score %g", a, ts[a]);

    /* With topk 10, GT1 has only 3 positive metrics: anchor 5 still goes to
     * GT0, anchors 9 and 6 keep their scores, zero-metric ones carry 0. */
    p.topk = 10;
    DM_CHECK(yolo_tal_assign(&p, A, NC, logits, pred, anchor, 2, gcls, gbox, tg, ts, &n_fg) == YOLO_OK, "assign");
    DM_CHECK(tg[5] == 0 && tg[9] == 1 && tg[6] == 1 && tg[0] == 0 && tg[1] == 0 && tg[4] == 0, "topk 10");
    DM_NEAR(ts[6], sqrt(0.6 / 0.8), 1e-5);
    DM_NEAR(ts[1], 0.01 / 0.8367 * 1.0, 1e-3); /* a1 joins GT0: sqrt(1e-4) * 1 / m4 */
    for (int a = 0; a < A; a++)
        if (tg[a] == 1 && a != 6 && a != 9) DM_CHECK(ts[a] == 0, "zero-metric positive %d has %g", a, ts[a]);

    /* A padded (all-zero) gt is ignored; no gts -> all background. */
    float gpad[8] = {0};
    memcpy(gpad, g0, 16);
    p.topk = 3;
    DM_CHECK(yolo_tal_assign(&p, A, NC, logits, pred, anchor, 2, gcls, gpad, tg, ts, &n_fg) == YOLO_OK, "pad");
    DM_CHECK(tg[9] == -1 && tg[6] == -1 && tg[5] == 0 && n_fg == 3, "padding gt ignored (n_fg %d)", n_fg);
    DM_CHECK(yolo_tal_assign(&p, A, NC, logits, pred, anchor, 0, NULL, NULL, tg, ts, &n_fg) == YOLO_OK, "none");
    DM_CHECK(n_fg == 0 && tg[0] == -1, "no gts");
    const int32_t badcls[2] = {0, 2};
    DM_CHECK(yolo_tal_assign(&p, A, NC, logits, pred, anchor, 2, badcls, gbox, tg, ts, &n_fg) == YOLO_ERR_ARG,
             "class out of range");
}

/* Dense reference, step by step as the tensor code. */
static void dense_tal(const yolo_tal_params *p, int A, const float *logits, const float *pred, const float *anc,
                      int G, const int32_t *gcls, const float *gbox, int32_t *tg, float *ts) {
    float *ov = calloc((size_t)G * A, 4), *mt = calloc((size_t)G * A, 4);
    uint8_t *pos = calloc((size_t)G * A, 1), *in = calloc((size_t)G * A, 1);
    for (int g = 0; g < G; g++) {
        const float *b = gbox + 4 * g;
        bool valid = b[0] + b[1] + b[2] + b[3] > 0;
        for (int a = 0; a < A; a++) {
            const float *c = anc + 2 * a;
            float d = fminf(fminf(c[0] - b[0], c[1] - b[1]), fminf(b[2] - c[0], b[3] - c[1]));
            in[g * A + a] = d > p->eps && valid;
            if (!in[g * A + a]) continue;
            float o = (float)ciou_f(b, pred + 4 * a);
            ov[g * A + a] = o < 0 ? 0 : o;
            float s = 1.0f / (1.0f + expf(-logits[gcls[g] * A + a]));
            mt[g * A + a] = powf(s, p->alpha) * powf(ov[g * A + a], p->beta);
        }
        /* topk over all anchors: metric desc, index asc */
        for (int k = 0; k < p->topk && valid; k++) {
            int arg = -1;
            for (int a = 0; a < A; a++) {
                if (pos[g * A + a] & 2) continue;
                if (arg < 0 || mt[g * A + a] > mt[g * A + arg]) arg = a;
            }
            pos[g * A + arg] |= 2;
        }
        for (int a = 0; a < A; a++) pos[g * A + a] = (pos[g * A + a] & 2) && in[g * A + a];
    }
    for (int a = 0; a < A; a++) {
        int cnt = 0;
        for (int g = 0; g < G; g++) cnt += pos[g * A + a];
        if (cnt > 1) {
            int arg = 0;
            for (int g = 1; g < G; g++)
                if (ov[g * A + a] > ov[arg * A + a]) arg = g;
            for (int g = 0; g < G; g++) pos[g * A + a] = g == arg;
        }
    }
    float *pam = calloc((size_t)G, 4), *pom = calloc((size_t)G, 4);
    for (int g = 0; g < G; g++)
        for (int a = 0; a < A; a++)
            if (pos[g * A + a]) pam[g] = fmaxf(pam[g], mt[g * A + a]), pom[g] = fmaxf(pom[g], ov[g * A + a]);
    for (int a = 0; a < A; a++) {
        tg[a] = -1, ts[a] = 0;
        for (int g = 0; g < G; g++)
            if (pos[g * A + a]) tg[a] = g, ts[a] = mt[g * A + a] * pom[g] / (pam[g] + p->eps);
    }
    free(ov), free(mt), free(pos), free(in), free(pam), free(pom);
}

static void test_random_vs_dense(void) {
    uint64_t rng = 7;
    enum { W = 8, H = 6, A = W * H, NC = 3, G = 6 };
    float anc[2 * A], pred[4 * A], logits[NC * A], gbox[4 * G];
    int32_t gcls[G], tg[A], rg[A];
    float ts[A], rs[A];
    for (int a = 0; a < A; a++) anc[2 * a] = 8.0f * (a % W) + 4, anc[2 * a + 1] = 8.0f * (a / W) + 4;
    int total_fg = 0;
    for (int trial = 0; trial < 200; trial++) {
        for (int a = 0; a < A; a++) {
            float cx = anc[2 * a] + (float)dm_uniform(&rng, -6, 6),
                  cy = anc[2 * a + 1] + (float)dm_uniform(&rng, -6, 6);
            float w = (float)dm_uniform(&rng, 4, 40), h = (float)dm_uniform(&rng, 4, 40);
            pred[4 * a] = cx - w / 2, pred[4 * a + 1] = cy - h / 2, pred[4 * a + 2] = cx + w / 2,
                     pred[4 * a + 3] = cy + h / 2;
        }
        for (int i = 0; i < NC * A; i++) logits[i] = (float)dm_uniform(&rng, -4, 4);
        int ng = (int)(dm_next(&rng) % (G + 1));
        for (int g = 0; g < ng; g++) {
            float x1 = (float)dm_uniform(&rng, 0, 50), y1 = (float)dm_uniform(&rng, 0, 36);
            gbox[4 * g] = x1, gbox[4 * g + 1] = y1;
            gbox[4 * g + 2] = x1 + (float)dm_uniform(&rng, 2, 30),
                         gbox[4 * g + 3] = y1 + (float)dm_uniform(&rng, 2, 24);
            gcls[g] = (int32_t)(dm_next(&rng) % NC);
        }
        yolo_tal_params p = yolo_tal_default_params();
        p.topk = 1 + (int)(dm_next(&rng) % 10);
        int n_fg;
        DM_CHECK(yolo_tal_assign(&p, A, NC, logits, pred, anc, ng, gcls, gbox, tg, ts, &n_fg) == YOLO_OK,
                 "assign");
        dense_tal(&p, A, logits, pred, anc, ng, gcls, gbox, rg, rs);
        for (int a = 0; a < A; a++) {
            DM_CHECK(tg[a] == rg[a], "trial %d anchor %d: gt %d, dense %d", trial, a, tg[a], rg[a]);
            DM_NEAR(ts[a], rs[a], 1e-6);
        }
        total_fg += n_fg;
    }
    DM_CHECK(total_fg > 500, "the random cases exercise the assigner (%d positives)", total_fg);
}

int main(void) {
    test_hand_made();
    test_random_vs_dense();
    return dm_result("detectmath_assigner");
}
