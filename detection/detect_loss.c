/* detect_loss.c — Ultralytics' v8DetectionLoss and its exact gradient.
 *
 *   tss  = max(sum of the soft targets, 1)
 *   cls  = cls_gain * sum over anchors x classes c of w_c * BCEWithLogits(x, t) / tss
 *   box  = box_gain * sum over positives of (1 - CIoU(pred, target)) * w / tss
 *   dfl  = dfl_gain * sum over positives of mean over 4 sides of
 *          [CE(left bin) * wl + CE(right bin) * wr] * w / tss
 *   loss = batch * (box + cls + dfl)
 * with w the anchor's soft-target sum, boxes in grid units (pixels / stride)
 * and DFL targets clamped to [0, reg_max - 1 - 0.01]. The assignment and the
 * soft targets are constants, as Ultralytics computes them under no_grad.
 * w_c is class c's cls_pw weight (loss_internal.h), 1 without one.
 * reg_max 1 (YOLO26): the distances are the four box channels themselves
 * and dfl is an L1 term (loss_internal.h, det_loss_assigned).
 *
 * Everything accumulates in double; the gradient goes out as float. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"
#include "yolo/loss.h"
#include "loss_internal.h"

yolo_det_loss_params yolo_det_loss_default_params(int nc) {
    yolo_det_loss_params p = {.nc = nc,
                            .reg_max = 16,
                            .box_gain = 7.5f,
                            .cls_gain = 0.5f,
                            .dfl_gain = 1.5f,
                            .tal = yolo_tal_default_params()};
    return p;
}

/* min_reg_max: 2 for the public entry points, 1 where the options carry
 * what reg_max 1 needs (the image size). */
static yolo_status check_args(const char *fn, const yolo_det_loss_params *p, int min_reg_max, int batch, int n_anchors,
                              const float *head, const float *anchor_xy, const float *anchor_stride,
                              const yolo_det_gt_batch *gt) {
    if (!p || !head || !anchor_xy || !anchor_stride || !gt)
        return yolo_error(YOLO_ERR_ARG, "%s: NULL argument", fn);
    if (batch <= 0 || n_anchors <= 0 || p->nc <= 0 || p->reg_max < min_reg_max || p->reg_max > 64)
        return yolo_error(YOLO_ERR_ARG, "%s: batch %d, anchors %d, nc %d, reg_max %d (need %d..64)", fn, batch,
                          n_anchors, p->nc, p->reg_max, min_reg_max);
    if (gt->n < 0 || (gt->n > 0 && (!gt->batch_idx || !gt->cls || !gt->boxes)))
        return yolo_error(YOLO_ERR_ARG, "%s: gt batch of %d instances lacks arrays", fn, gt->n);
    for (int i = 0; i < gt->n; i++) {
        if (gt->batch_idx[i] < 0 || gt->batch_idx[i] >= batch)
            return yolo_error(YOLO_ERR_ARG, "%s: instance %d has image index %d, batch is %d", fn, i,
                              (int)gt->batch_idx[i], batch);
        if (gt->cls[i] < 0 || gt->cls[i] >= p->nc)
            return yolo_error(YOLO_ERR_ARG, "%s: instance %d has class %d, outside [0, %d)", fn, i,
                              (int)gt->cls[i], p->nc);
    }
    return YOLO_OK;
}

/* The assignment of one image (yolo_det_for_each_image). */
typedef struct assign_job {
    const yolo_det_loss_params *p;
    const det_assign_options *o;
    int n_anchors;
    const float *head, *anchor_xy, *anchor_stride, *anchor_px;
    const yolo_det_gt_batch *gt;
    yolo_det_assignment *out;
} assign_job;

/* Image b's assignment, with scratch arrays for A anchors and n instances. */
static yolo_status assign_one(const assign_job *j, int b, float *pred_px, int32_t *local, int32_t *map, int32_t *gcls,
                              float *gbox) {
    const yolo_det_loss_params *p = j->p;
    const yolo_det_gt_batch *gt = j->gt;
    size_t A = (size_t)j->n_anchors, C = 4 * (size_t)p->reg_max + p->nc;
    const float *hb = j->head + (size_t)b * C * A, *anchor_px = j->anchor_px;
    int ng = 0; /* this image's instances, in batch order */
    for (int i = 0; i < gt->n; i++) {
        if (gt->batch_idx[i] != b) continue;
        map[ng] = i;
        gcls[ng] = gt->cls[i];
        memcpy(gbox + 4 * ng, gt->boxes + 4 * (size_t)i, 4 * sizeof(float));
        ng++;
    }
    if (ng > 0) {
        const bool widened = j->o && j->o->stal_min > 0; /* STAL's regions reach past the gts */
        for (size_t a = 0; a < A; a++) {
            /* Only anchors inside some gt are ever compared with one: skip
             * the softmaxes of the rest (most of the image). */
            const float *c = anchor_px + 2 * a;
            bool inside = widened;
            for (int g = 0; g < ng && !inside; g++) {
                const float *q = gbox + 4 * g;
                inside = c[0] > q[0] && c[1] > q[1] && c[0] < q[2] && c[1] < q[3];
            }
            if (!inside) {
                memset(pred_px + 4 * a, 0, 4 * sizeof(float));
                continue;
            }
            double d[4], ax = j->anchor_xy[2 * a], ay = j->anchor_xy[2 * a + 1], s = j->anchor_stride[a];
            yolo_det_dfl_distances(hb, j->n_anchors, p->reg_max, (int)a, d, NULL);
            pred_px[4 * a] = (float)((ax - d[0]) * s);
            pred_px[4 * a + 1] = (float)((ay - d[1]) * s);
            pred_px[4 * a + 2] = (float)((ax + d[2]) * s);
            pred_px[4 * a + 3] = (float)((ay + d[3]) * s);
        }
    }
    yolo_status st = det_tal_assign(&p->tal, j->o, j->n_anchors, p->nc, hb + 4 * (size_t)p->reg_max * A, pred_px,
                                    anchor_px, ng, gcls, gbox, local, j->out->score + (size_t)b * A, NULL);
    if (!st)
        for (size_t a = 0; a < A; a++) j->out->gt_index[(size_t)b * A + a] = local[a] >= 0 ? map[local[a]] : -1;
    return st;
}

static yolo_status assign_image(void *arg, int b) {
    const assign_job *j = arg;
    size_t A = (size_t)j->n_anchors, n = j->gt->n > 0 ? (size_t)j->gt->n : 1;
    float *pred_px = calloc(A * 4, sizeof(float)), *gbox = malloc(n * 4 * sizeof(float));
    int32_t *local = malloc(A * sizeof(int32_t));
    int32_t *map = malloc(n * sizeof(int32_t)), *gcls = malloc(n * sizeof(int32_t));
    yolo_status st = pred_px && gbox && local && map && gcls
                         ? assign_one(j, b, pred_px, local, map, gcls, gbox)
                         : yolo_error(YOLO_ERR_NOMEM, "yolo_det_assign: out of memory for %zu anchors", A);
    free(pred_px), free(local), free(map), free(gcls), free(gbox);
    return st;
}

yolo_status yolo_det_assign(const yolo_det_loss_params *p, int batch, int n_anchors, const float *head,
                          const float *anchor_xy, const float *anchor_stride, const yolo_det_gt_batch *gt,
                          yolo_det_assignment *out) {
    return det_assign(p, NULL, batch, n_anchors, head, anchor_xy, anchor_stride, gt, out);
}

yolo_status det_assign(const yolo_det_loss_params *p, const det_assign_options *o, int batch, int n_anchors,
                       const float *head, const float *anchor_xy, const float *anchor_stride,
                       const yolo_det_gt_batch *gt, yolo_det_assignment *out) {
    yolo_status st = check_args("yolo_det_assign", p, 1, batch, n_anchors, head, anchor_xy, anchor_stride, gt);
    if (st) return st;
    if (!out || !out->gt_index || !out->score)
        return yolo_error(YOLO_ERR_ARG, "yolo_det_assign: NULL assignment arrays");
    size_t A = (size_t)n_anchors;
    float *anchor_px = malloc(A * 2 * sizeof(float));
    if (!anchor_px) return yolo_error(YOLO_ERR_NOMEM, "yolo_det_assign: out of memory for %d anchors", n_anchors);
    for (size_t a = 0; a < A; a++) {
        anchor_px[2 * a] = anchor_xy[2 * a] * anchor_stride[a];
        anchor_px[2 * a + 1] = anchor_xy[2 * a + 1] * anchor_stride[a];
    }
    assign_job j = {p, o, n_anchors, head, anchor_xy, anchor_stride, anchor_px, gt, out};
    st = yolo_det_for_each_image(batch, assign_image, &j);
    free(anchor_px);
    return st;
}

/* Softmax of one side's bins: p, the expected bin, and log-sum-exp. */
static double side_softmax(const float *z, size_t step, int reg_max, double *p, double *lse) {
    double mx = z[0];
    for (int j = 1; j < reg_max; j++) mx = fmax(mx, z[j * step]);
    double sum = 0, d = 0;
    for (int j = 0; j < reg_max; j++) sum += p[j] = exp(z[j * step] - mx);
    for (int j = 0; j < reg_max; j++) d += j * (p[j] /= sum);
    *lse = mx + log(sum);
    return d;
}

/* The CIoU term of one positive anchor whose distances (l, t, r, b, grid
 * units) are d: adds (1 - CIoU) * w to *box_sum, gives the target in grid
 * units (tgt) and d(box_gain * box sum)/d(distance) in gd. */
static void box_term(const yolo_det_loss_params *p, const float *anchor, double stride, const float *tbox_px,
                     const double d[4], double w, double *box_sum, double tgt[4], double gd[4]) {
    double ax = anchor[0], ay = anchor[1];
    double pred[4] = {ax - d[0], ay - d[1], ax + d[2], ay + d[3]};
    for (int k = 0; k < 4; k++) tgt[k] = tbox_px[k] / stride;
    double dciou[4];
    double ciou = yolo_box_ciou_grad(pred, tgt, dciou);
    *box_sum += (1 - ciou) * w;
    /* x1 = ax - l, y1 = ay - t, x2 = ax + r, y2 = ay + b */
    double gbox = -p->box_gain * w;
    gd[0] = -gbox * dciou[0], gd[1] = -gbox * dciou[1], gd[2] = gbox * dciou[2], gd[3] = gbox * dciou[3];
}

/* Box and L1 terms of one positive anchor at reg_max 1: the distances are
 * the channels; the L1 compares them with the target's as fractions of the
 * image side (x sides / width, y sides / height). g as positive_anchor's. */
static void positive_anchor_l1(const yolo_det_loss_params *p, const float *hb, size_t A, size_t a,
                               const float *anchor, double stride, const float *tbox_px, double w,
                               const det_loss_options *o, double *box_sum, double *l1_sum, double *g) {
    double d[4], tgt[4], gd[4];
    for (int k = 0; k < 4; k++) d[k] = hb[(size_t)k * A + a];
    box_term(p, anchor, stride, tbox_px, d, w, box_sum, tgt, gd);
    double ax = anchor[0], ay = anchor[1];
    double tdist[4] = {ax - tgt[0], ay - tgt[1], tgt[2] - ax, tgt[3] - ay}, l1 = 0, sgn[4], unit[4];
    for (int k = 0; k < 4; k++) {
        unit[k] = stride / (k % 2 ? o->image_h : o->image_w);
        double e = d[k] * unit[k] - tdist[k] * unit[k];
        l1 += fabs(e);
        sgn[k] = e > 0 ? 1 : e < 0 ? -1 : 0; /* torch's l1_loss gradient: sign, 0 at 0 */
    }
    *l1_sum += l1 / 4 * w;
    if (!g) return;
    double gl1 = p->dfl_gain * w / 4;
    for (int k = 0; k < 4; k++) g[k] = gd[k] + gl1 * sgn[k] * unit[k];
}

/* Box and DFL terms of one positive anchor. When g is not NULL it receives
 * d(box_gain * box + dfl_gain * dfl sums)/d(its 4 * reg_max logits). */
static void positive_anchor(const yolo_det_loss_params *p, const float *hb, size_t A, size_t a,
                            const float *anchor, double stride, const float *tbox_px, double w,
                            double *box_sum, double *dfl_sum, double *g) {
    int R = p->reg_max;
    double prob[4][64], d[4], lse[4];
    for (int k = 0; k < 4; k++) d[k] = side_softmax(hb + (size_t)k * R * A + a, A, R, prob[k], &lse[k]);
    double tgt[4], gd[4];
    box_term(p, anchor, stride, tbox_px, d, w, box_sum, tgt, gd);
    double ax = anchor[0], ay = anchor[1];

    /* bbox2dist, clamped as DFLoss does. */
    double tdist[4] = {ax - tgt[0], ay - tgt[1], tgt[2] - ax, tgt[3] - ay};
    double hi = R - 1 - 0.01, dfl = 0;
    int tl[4];
    double wl[4], wr[4];
    for (int k = 0; k < 4; k++) {
        double t = tdist[k] < 0 ? 0 : (tdist[k] > hi ? hi : tdist[k]);
        tl[k] = (int)t;
        wl[k] = tl[k] + 1 - t;
        wr[k] = 1 - wl[k];
        const float *z = hb + (size_t)k * R * A + a;
        dfl += (lse[k] - z[(size_t)tl[k] * A]) * wl[k] + (lse[k] - z[(size_t)(tl[k] + 1) * A]) * wr[k];
    }
    *dfl_sum += dfl / 4 * w;
    if (!g) return;

    double gdfl = p->dfl_gain * w / 4;
    for (int k = 0; k < 4; k++) {
        for (int j = 0; j < R; j++) {
            double pj = prob[k][j];
            double v = gd[k] * pj * (j - d[k]); /* through the expected bin */
            v += gdfl * (pj * (wl[k] + wr[k]) - (j == tl[k] ? wl[k] : 0) - (j == tl[k] + 1 ? wr[k] : 0));
            g[k * R + j] = v;
        }
    }
}

/* The loss terms and gradient of one image (yolo_det_for_each_image). */
typedef struct loss_job {
    const yolo_det_loss_params *p;
    size_t A;
    const float *head, *anchor_xy, *anchor_stride;
    const yolo_det_gt_batch *gt;
    const yolo_det_assignment *asg;
    const det_loss_options *o;
    const float *class_weights; /* [nc] or NULL (loss_internal.h) */
    float *grad;
    double scale;
    double *sums; /* [batch][3]: cls, box, dfl */
} loss_job;

static yolo_status loss_image(void *arg, int b) {
    const loss_job *j = arg;
    const yolo_det_loss_params *p = j->p;
    const yolo_det_gt_batch *gt = j->gt;
    const yolo_det_assignment *asg = j->asg;
    const float *head = j->head, *anchor_xy = j->anchor_xy, *anchor_stride = j->anchor_stride;
    float *grad = j->grad;
    size_t A = j->A, R = (size_t)p->reg_max, C = 4 * R + p->nc;
    double scale = j->scale, cls_sum = 0, box_sum = 0, dfl_sum = 0;
    const float *hb = head + (size_t)b * C * A;
    float *gb = grad ? grad + (size_t)b * C * A : NULL;
    const int32_t *gi = asg->gt_index + (size_t)b * A;
    const float *sc = asg->score + (size_t)b * A;

    /* BCE-with-logits against one-hot * soft score: every class row against
     * 0 first, then each positive's own class corrected for its target t
     * (the loss loses x * t, the gradient gain * t). Class c's terms are
     * multiplied by its weight (1 without cls_pw: the same bits). */
    const float gain = (float)(scale * p->cls_gain);
    const float *cw = j->class_weights;
    for (int c = 0; c < p->nc; c++) {
        const size_t row = (4 * R + (size_t)c) * A;
        const float w = cw ? cw[c] : 1.0f;
        cls_sum += (double)w * yolo_bce_with_logits(hb + row, NULL, A, gain * w, gb ? gb + row : NULL);
    }
    for (size_t a = 0; a < A; a++) {
        if (gi[a] < 0) continue;
        const int32_t c = gt->cls[gi[a]];
        const float w = cw ? cw[c] : 1.0f;
        const size_t at = (4 * R + (size_t)c) * A + a;
        cls_sum -= (double)w * ((double)hb[at] * sc[a]);
        if (gb) gb[at] -= gain * w * sc[a];
    }

    if (gb) memset(gb, 0, 4 * R * A * sizeof(float));
    for (size_t a = 0; a < A; a++) {
        if (gi[a] < 0) continue;
        double g[4 * 64];
        if (R == 1)
            positive_anchor_l1(p, hb, A, a, anchor_xy + 2 * a, anchor_stride[a], gt->boxes + 4 * (size_t)gi[a], sc[a],
                               j->o, &box_sum, &dfl_sum, gb ? g : NULL);
        else
            positive_anchor(p, hb, A, a, anchor_xy + 2 * a, anchor_stride[a], gt->boxes + 4 * (size_t)gi[a],
                            sc[a], &box_sum, &dfl_sum, gb ? g : NULL);
        if (gb)
            for (size_t k = 0; k < 4 * R; k++) gb[k * A + a] = (float)(scale * g[k]);
    }
    j->sums[3 * b] = cls_sum, j->sums[3 * b + 1] = box_sum, j->sums[3 * b + 2] = dfl_sum;
    return YOLO_OK;
}

yolo_status yolo_det_loss_assigned(const yolo_det_loss_params *p, int batch, int n_anchors, const float *head,
                                 const float *anchor_xy, const float *anchor_stride,
                                 const yolo_det_gt_batch *gt, const yolo_det_assignment *asg,
                                 yolo_det_loss_value *out, float *grad) {
    return det_loss_assigned(p, NULL, batch, n_anchors, head, anchor_xy, anchor_stride, gt, asg, out, grad);
}

yolo_status det_loss_assigned(const yolo_det_loss_params *p, const det_loss_options *o, int batch, int n_anchors,
                              const float *head, const float *anchor_xy, const float *anchor_stride,
                              const yolo_det_gt_batch *gt, const yolo_det_assignment *asg, yolo_det_loss_value *out,
                              float *grad) {
    const bool sized = o && o->image_w > 0 && o->image_h > 0; /* what reg_max 1's L1 term needs */
    yolo_status st =
        check_args("yolo_det_loss_assigned", p, sized ? 1 : 2, batch, n_anchors, head, anchor_xy, anchor_stride, gt);
    if (st) return st;
    if (!asg || !asg->gt_index || !asg->score || !out)
        return yolo_error(YOLO_ERR_ARG, "yolo_det_loss_assigned: NULL assignment or output");
    size_t A = (size_t)n_anchors, BA = (size_t)batch * A;

    double tss = 0;
    int n_fg = 0;
    for (size_t i = 0; i < BA; i++) {
        int32_t gi = asg->gt_index[i];
        if (gi < -1 || gi >= gt->n)
            return yolo_error(YOLO_ERR_ARG, "yolo_det_loss_assigned: anchor %zu assigned to instance %d of %d",
                              i, (int)gi, gt->n);
        if (gi >= 0) tss += asg->score[i], n_fg++;
    }
    double floor = 1; /* Ultralytics' max(tss, 1), on the global batch's sum */
    if (p->ranks && p->ranks->rank_mean && p->ranks->world > 1) { /* the global batch's normaliser (yolo/task.h) */
        if ((st = p->ranks->rank_mean(p->ranks, &tss, 1))) return st;
        floor = 1.0 / p->ranks->world;
    }
    tss = tss > floor ? tss : floor;
    double scale = batch / tss; /* d total / d(gained sums) */

    double *sums = calloc((size_t)batch * 3, sizeof(double)); /* per image: cls, box, dfl */
    if (!sums) return yolo_error(YOLO_ERR_NOMEM, "yolo_det_loss_assigned: out of memory for %d images", batch);
    loss_job j = {p, A, head, anchor_xy, anchor_stride, gt, asg, o, o ? o->class_weights : NULL, grad, scale, sums};
    st = yolo_det_for_each_image(batch, loss_image, &j);
    double cls_sum = 0, box_sum = 0, dfl_sum = 0;
    for (int b = 0; b < batch; b++) /* in image order: the same sums for any thread count */
        cls_sum += sums[3 * b], box_sum += sums[3 * b + 1], dfl_sum += sums[3 * b + 2];
    free(sums);
    if (st) return st;

    out->box = p->box_gain * box_sum / tss;
    out->cls = p->cls_gain * cls_sum / tss;
    out->dfl = p->dfl_gain * dfl_sum / tss;
    out->total = batch * (out->box + out->cls + out->dfl);
    out->target_score_sum = tss;
    out->n_fg = n_fg;
    if (!isfinite(out->total))
        return yolo_error(YOLO_ERR_NUMERIC, "detect loss is not finite (box %g, cls %g, dfl %g)", out->box,
                          out->cls, out->dfl);
    return YOLO_OK;
}

yolo_status yolo_det_loss(const yolo_det_loss_params *p, int batch, int n_anchors, const float *head,
                        const float *anchor_xy, const float *anchor_stride, const yolo_det_gt_batch *gt,
                        yolo_det_loss_value *out, float *grad) {
    if (batch <= 0 || n_anchors <= 0)
        return yolo_error(YOLO_ERR_ARG, "yolo_det_loss: batch %d, anchors %d", batch, n_anchors);
    size_t BA = (size_t)batch * n_anchors;
    yolo_det_assignment asg = {malloc(BA * sizeof(int32_t)), malloc(BA * sizeof(float))};
    yolo_status st;
    if (!asg.gt_index || !asg.score)
        st = yolo_error(YOLO_ERR_NOMEM, "yolo_det_loss: out of memory for %zu anchors", BA);
    else
        st = yolo_det_assign(p, batch, n_anchors, head, anchor_xy, anchor_stride, gt, &asg);
    if (!st)
        st = yolo_det_loss_assigned(p, batch, n_anchors, head, anchor_xy, anchor_stride, gt, &asg, out, grad);
    free(asg.gt_index), free(asg.score);
    return st;
}
