/* tal_assigner.c — Ultralytics' TaskAlignedAssigner for one image.
 *
 * Dense [n_gt, A] matrices in the reference are mostly zeros (metrics exist
 * only where an anchor centre lies inside a gt), so this works on per-gt
 * candidate lists and per-anchor counts, computing the same quantities:
 *   candidates   anchor centre strictly inside the gt (min edge distance > eps)
 *   metric       score^alpha * CIoU(gt, pred)^beta, CIoU clamped at 0
 *   top-k        per gt, the k largest metrics over all anchors (non-candidates
 *                count as 0), intersected with the candidates
 *   conflicts    an anchor chosen by several gts goes to the gt of highest
 *                CIoU among all gts (first on ties, index 0 if all are 0),
 *                even one whose top-k it was not in (select_highest_overlaps)
 *   soft target  metric * max CIoU of the gt / (max metric of the gt + eps),
 *                maxima over the gt's final positives.
 * Ultralytics 8.4's options (loss_internal.h): STAL widens small gts for the
 * candidate test only; topk2 then keeps each gt's topk2 best positives.
 * Values are float as in the reference (CIoU itself is computed in double).
 * torch.topk leaves the order of equal values unspecified; here ties go to
 * the lower anchor index, which only matters for zero-metric positives
 * (they carry no loss weight). */
#include <math.h>
#include <stdlib.h>

#include "loss_internal.h"
#include "yolo/detection.h"

yolo_tal_params yolo_tal_default_params(void) {
    yolo_tal_params p = {.topk = 10, .alpha = 0.5f, .beta = 6.0f, .eps = 1e-9f};
    return p;
}

typedef struct tal_image {
    const yolo_tal_params *p;
    int n_anchors;
    const float *cls_logits, *pred_boxes, *anchor_px;
    int n_gt;
    const int32_t *gt_cls;
    const float *gt_boxes;
    const float *region; /* [n_gt, 4] the candidate regions: gt_boxes, or STAL's */
} tal_image;

typedef struct tal_cand {
    int32_t anchor;
    float metric;
} tal_cand;

static bool gt_valid(const float *box) { return box[0] + box[1] + box[2] + box[3] > 0; }

static bool anchor_in_gt(const tal_image *t, int g, int a) {
    const float *b = t->region + 4 * g, *pt = t->anchor_px + 2 * a;
    float m = fminf(fminf(pt[0] - b[0], pt[1] - b[1]), fminf(b[2] - pt[0], b[3] - pt[1]));
    return m > t->p->eps;
}

/* The overlap and align metric of (gt g, anchor a), 0 where the anchor is
 * not a candidate of g: one function so every use sees identical values. */
static void pair_metric(const tal_image *t, int g, int a, float *overlap, float *metric) {
    *overlap = *metric = 0;
    if (!gt_valid(t->gt_boxes + 4 * g) || !anchor_in_gt(t, g, a)) return;
    double gb[4], pb[4];
    for (int k = 0; k < 4; k++) {
        gb[k] = t->gt_boxes[4 * g + k];
        pb[k] = t->pred_boxes[4 * (size_t)a + k];
    }
    float ov = (float)yolo_box_ciou(gb, pb);
    if (ov < 0) ov = 0;
    float x = t->cls_logits[(size_t)t->gt_cls[g] * t->n_anchors + a];
    float s = 1.0f / (1.0f + expf(-x));
    *overlap = ov;
    *metric = powf(s, t->p->alpha) * powf(ov, t->p->beta);
}

/* c into best[0..*n) (at most k of them), kept sorted by metric desc,
 * anchor asc (candidates come in anchor order; equal metrics keep it). */
static void insert_best(tal_cand *best, int k, int *n, tal_cand c) {
    if (*n == k && !(c.metric > best[k - 1].metric)) return;
    int j = *n < k ? (*n)++ : k - 1;
    while (j > 0 && c.metric > best[j - 1].metric) {
        best[j] = best[j - 1];
        j--;
    }
    best[j] = c;
}

/* Marks gt g's top-k candidates: count[a]++ and, for a first claim, the gt. */
static void select_topk(const tal_image *t, int g, tal_cand *cand, tal_cand *best, int32_t *count,
                        int32_t *target_gt) {
    int n_cand = 0, k = t->p->topk;
    for (int a = 0; a < t->n_anchors; a++) {
        if (!anchor_in_gt(t, g, a)) continue;
        float ov;
        cand[n_cand].anchor = a;
        pair_metric(t, g, a, &ov, &cand[n_cand].metric);
        n_cand++;
    }
    /* Positive metrics: keep the k best, sorted (metric desc, anchor asc). */
    int n_best = 0;
    for (int i = 0; i < n_cand; i++)
        if (cand[i].metric > 0) insert_best(best, k, &n_best, cand[i]);
    /* Remaining slots go to the lowest-index zero-metric anchors; only the
     * candidates among them survive the mask. */
    int zero_slots = k - n_best, pos_before = 0;
    for (int i = 0; i < n_cand && zero_slots > 0; i++) {
        if (cand[i].metric > 0) {
            pos_before++;
            continue;
        }
        if (cand[i].anchor - pos_before >= zero_slots) break; /* ranks only grow */
        best[n_best++] = cand[i];
    }
    for (int i = 0; i < n_best; i++) {
        int a = best[i].anchor;
        if (count[a]++ == 0) target_gt[a] = g;
    }
}

/* STAL's regions: every valid gt through xyxy -> xywh -> xyxy in float as
 * torch does it (the round trip's rounding included), a side < stal_min
 * replaced by stal_size. */
static void stal_regions(const det_assign_options *o, int n_gt, const float *gt, float *region) {
    for (int g = 0; g < n_gt; g++) {
        const float *b = gt + 4 * g;
        float *r = region + 4 * g;
        if (!gt_valid(b)) {
            for (int k = 0; k < 4; k++) r[k] = b[k];
            continue;
        }
        float xywh[4];
        yolo_box_xyxy_to_xywh(b, xywh, 1);
        if (xywh[2] < o->stal_min) xywh[2] = o->stal_size;
        if (xywh[3] < o->stal_min) xywh[3] = o->stal_size;
        yolo_box_xywh_to_xyxy(xywh, r, 1);
    }
}

/* topk2: each gt keeps its topk2 positives of highest metric (ties: lower
 * anchor). A positive of metric 0 is dropped: torch's topk over the gt's
 * row of zeros picks some anchor, and its weight would be 0 anyway. */
static yolo_status keep_topk2(const tal_image *t, int topk2, int32_t *target_gt) {
    tal_cand *best = malloc((size_t)topk2 * sizeof *best);
    if (!best) return yolo_error(YOLO_ERR_NOMEM, "yolo_tal_assign: out of memory for topk2 %d", topk2);
    for (int g = 0; g < t->n_gt; g++) {
        int n_best = 0;
        for (int a = 0; a < t->n_anchors; a++) {
            if (target_gt[a] != g) continue;
            float ov, m;
            pair_metric(t, g, a, &ov, &m);
            target_gt[a] = -1; /* back below if it is among the best */
            if (m > 0) insert_best(best, topk2, &n_best, (tal_cand){a, m});
        }
        for (int i = 0; i < n_best; i++) target_gt[best[i].anchor] = g;
    }
    free(best);
    return YOLO_OK;
}

yolo_status yolo_tal_assign(const yolo_tal_params *p, int n_anchors, int nc, const float *cls_logits,
                       const float *pred_boxes, const float *anchor_px, int n_gt, const int32_t *gt_cls,
                       const float *gt_boxes, int32_t *target_gt, float *target_score, int *n_fg) {
    return det_tal_assign(p, NULL, n_anchors, nc, cls_logits, pred_boxes, anchor_px, n_gt, gt_cls, gt_boxes,
                          target_gt, target_score, n_fg);
}

yolo_status det_tal_assign(const yolo_tal_params *p, const det_assign_options *o, int n_anchors, int nc,
                           const float *cls_logits, const float *pred_boxes, const float *anchor_px, int n_gt,
                           const int32_t *gt_cls, const float *gt_boxes, int32_t *target_gt, float *target_score,
                           int *n_fg) {
    if (!p || n_anchors <= 0 || nc <= 0 || n_gt < 0 || !cls_logits || !pred_boxes || !anchor_px ||
        !target_gt || !target_score || (n_gt > 0 && (!gt_cls || !gt_boxes)))
        return yolo_error(YOLO_ERR_ARG, "yolo_tal_assign: bad arguments (anchors %d, nc %d, gts %d)", n_anchors,
                          nc, n_gt);
    if (p->topk <= 0) return yolo_error(YOLO_ERR_ARG, "yolo_tal_assign: topk %d must be > 0", p->topk);
    for (int g = 0; g < n_gt; g++)
        if (gt_cls[g] < 0 || gt_cls[g] >= nc)
            return yolo_error(YOLO_ERR_ARG, "yolo_tal_assign: gt %d has class %d, outside [0, %d)", g,
                              (int)gt_cls[g], nc);
    for (int a = 0; a < n_anchors; a++) {
        target_gt[a] = -1;
        target_score[a] = 0;
    }
    if (n_fg) *n_fg = 0;
    if (n_gt == 0) return YOLO_OK;

    const bool stal = o && o->stal_min > 0;
    tal_image t = {p, n_anchors, cls_logits, pred_boxes, anchor_px, n_gt, gt_cls, gt_boxes, gt_boxes};
    tal_cand *cand = malloc((size_t)n_anchors * sizeof *cand);
    tal_cand *best = malloc((size_t)p->topk * sizeof *best);
    int32_t *count = calloc((size_t)n_anchors, sizeof *count);
    float *gt_max = calloc(2 * (size_t)n_gt, sizeof *gt_max); /* max metric, max overlap */
    float *region = stal ? malloc(4 * (size_t)n_gt * sizeof *region) : NULL;
    if (!cand || !best || !count || !gt_max || (stal && !region)) {
        free(cand), free(best), free(count), free(gt_max), free(region);
        return yolo_error(YOLO_ERR_NOMEM, "yolo_tal_assign: out of memory for %d anchors x %d gts", n_anchors,
                          n_gt);
    }

    if (stal) {
        stal_regions(o, n_gt, gt_boxes, region);
        t.region = region;
    }
    for (int g = 0; g < n_gt; g++)
        if (gt_valid(gt_boxes + 4 * g)) select_topk(&t, g, cand, best, count, target_gt);

    /* Anchors claimed twice: the gt with the highest overlap over all gts. */
    for (int a = 0; a < n_anchors; a++) {
        if (count[a] <= 1) continue;
        int arg = 0;
        float top = -1;
        for (int g = 0; g < n_gt; g++) {
            float ov, m;
            pair_metric(&t, g, a, &ov, &m);
            if (ov > top) top = ov, arg = g;
        }
        target_gt[a] = arg;
    }
    if (o && o->topk2 > 0 && o->topk2 != p->topk) {
        yolo_status st = keep_topk2(&t, o->topk2, target_gt);
        if (st) {
            free(cand), free(best), free(count), free(gt_max), free(region);
            return st;
        }
    }

    /* Normalise by each gt's maxima over its final positives. */
    int fg = 0;
    for (int a = 0; a < n_anchors; a++) {
        int g = target_gt[a];
        if (g < 0) continue;
        float ov, m;
        pair_metric(&t, g, a, &ov, &m);
        target_score[a] = m; /* the raw metric until the maxima are known */
        gt_max[2 * g] = fmaxf(gt_max[2 * g], m);
        gt_max[2 * g + 1] = fmaxf(gt_max[2 * g + 1], ov);
        fg++;
    }
    for (int a = 0; a < n_anchors; a++) {
        int g = target_gt[a];
        if (g >= 0) target_score[a] = target_score[a] * gt_max[2 * g + 1] / (gt_max[2 * g] + p->eps);
    }
    if (n_fg) *n_fg = fg;
    free(cand), free(best), free(count), free(gt_max), free(region);
    return YOLO_OK;
}
