/* nms.c — Ultralytics' non_max_suppression for one image, on top of a
 * greedy NMS that behaves as torchvision.ops.nms (stable score sort, float
 * IoU without epsilon, suppression at IoU > threshold).
 *
 * Stopping after max_keep survivors gives the same survivors as running to
 * the end and truncating, because a box's fate depends only on
 * higher-scored boxes; it keeps early-training validation (thousands of
 * low-confidence candidates) linear in max_det. */
#include <stdlib.h>

#include "yolo/detection.h"

yolo_nms_params yolo_nms_default_params(void) {
    yolo_nms_params p = {.conf = 0.25f,
                    .iou = 0.7f,
                    .max_det = 300,
                    .max_nms = 30000,
                    .max_wh = 7680.0f,
                    .multi_label = false,
                    .agnostic = false,
                    .classes = NULL,
                    .n_classes = 0};
    return p;
}

typedef struct scored_index {
    float score;
    int index;
} scored_index;

/* Descending score, then ascending index: a stable sort from qsort. */
static int by_score_desc(const void *pa, const void *pb) {
    const scored_index *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? 1 : -1;
    return (a->index > b->index) - (a->index < b->index);
}

static scored_index *sorted_by_score(const float *scores, int n) {
    scored_index *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
    if (!s) return NULL;
    for (int i = 0; i < n; i++) s[i] = (scored_index){scores[i], i};
    qsort(s, (size_t)n, sizeof *s, by_score_desc);
    return s;
}

yolo_status yolo_nms_boxes(const float *boxes, const float *scores, int n, float iou_thres, int max_keep,
                      int *keep, int *n_keep) {
    if (n < 0 || (n > 0 && (!boxes || !scores || !keep)) || !n_keep)
        return yolo_error(YOLO_ERR_ARG, "yolo_nms_boxes: bad arguments (%d boxes)", n);
    *n_keep = 0;
    if (n == 0 || max_keep <= 0) return YOLO_OK;
    scored_index *order = sorted_by_score(scores, n);
    unsigned char *suppressed = calloc((size_t)n, 1);
    float *area = malloc((size_t)n * sizeof *area);
    if (!order || !suppressed || !area) {
        free(order), free(suppressed), free(area);
        return yolo_error(YOLO_ERR_NOMEM, "yolo_nms_boxes: out of memory for %d boxes", n);
    }
    for (int i = 0; i < n; i++) {
        const float *b = boxes + 4 * (size_t)i;
        area[i] = (b[2] - b[0]) * (b[3] - b[1]);
    }
    int kept = 0;
    for (int oi = 0; oi < n && kept < max_keep; oi++) {
        int i = order[oi].index;
        if (suppressed[i]) continue;
        keep[kept++] = i;
        const float *bi = boxes + 4 * (size_t)i;
        for (int oj = oi + 1; oj < n; oj++) {
            int j = order[oj].index;
            if (suppressed[j]) continue;
            const float *bj = boxes + 4 * (size_t)j;
            float xx1 = bi[0] > bj[0] ? bi[0] : bj[0], yy1 = bi[1] > bj[1] ? bi[1] : bj[1];
            float xx2 = bi[2] < bj[2] ? bi[2] : bj[2], yy2 = bi[3] < bj[3] ? bi[3] : bj[3];
            float w = xx2 - xx1 > 0 ? xx2 - xx1 : 0, h = yy2 - yy1 > 0 ? yy2 - yy1 : 0;
            float inter = w * h;
            float ovr = inter / (area[i] + area[j] - inter);
            if (ovr > iou_thres) suppressed[j] = 1;
        }
    }
    *n_keep = kept;
    free(order), free(suppressed), free(area);
    return YOLO_OK;
}

static bool class_wanted(const yolo_nms_params *p, int c) {
    if (!p->classes) return true;
    for (int i = 0; i < p->n_classes; i++)
        if (p->classes[i] == c) return true;
    return false;
}

yolo_status yolo_e2e_select(const float *pred, int nc, int n_anchors, const yolo_nms_params *p, yolo_detection *out,
                            int *n_out) {
    if (!pred || !p || !out || !n_out || nc <= 0 || n_anchors < 0)
        return yolo_error(YOLO_ERR_ARG, "yolo_e2e_select: bad arguments (nc %d, anchors %d)", nc, n_anchors);
    *n_out = 0;
    const size_t A = (size_t)n_anchors;
    const int k = p->max_det < n_anchors ? p->max_det : n_anchors;
    if (k <= 0) return YOLO_OK;
    const float *cls = pred + 4 * A;
    float *best = malloc(A * sizeof *best), *cand = malloc((size_t)k * (size_t)nc * sizeof *cand);
    int *arg = malloc(A * sizeof *arg);
    scored_index *anchors = NULL, *pairs = NULL;
    yolo_status st = YOLO_OK;
    if (!best || !cand || !arg) goto nomem;
    for (size_t a = 0; a < A; a++) {
        best[a] = cls[a], arg[a] = 0;
        for (int c = 1; c < nc; c++)
            if (cls[c * A + a] > best[a]) best[a] = cls[c * A + a], arg[a] = c;
    }
    if (!(anchors = sorted_by_score(best, n_anchors))) goto nomem; /* topk over the anchors' best scores */
    if (!p->agnostic) { /* then topk over the k x nc (anchor, class) scores of those anchors */
        for (int i = 0; i < k; i++)
            for (int c = 0; c < nc; c++) cand[(size_t)i * nc + c] = cls[(size_t)c * A + (size_t)anchors[i].index];
        if (!(pairs = sorted_by_score(cand, k * nc))) goto nomem;
    }
    int n = 0;
    for (int i = 0; i < k; i++) {
        const int a = pairs ? anchors[pairs[i].index / nc].index : anchors[i].index;
        const int c = pairs ? pairs[i].index % nc : arg[a];
        const float score = pairs ? pairs[i].score : anchors[i].score;
        if (!(score > p->conf) || !class_wanted(p, c)) continue;
        float xywh[4];
        for (int j = 0; j < 4; j++) xywh[j] = pred[(size_t)j * A + (size_t)a];
        yolo_box_xywh_to_xyxy(xywh, out[n].box, 1);
        out[n].score = score, out[n].cls = c, out[n].anchor = a;
        n++;
    }
    *n_out = n;
    goto done;
nomem:
    st = yolo_error(YOLO_ERR_NOMEM, "yolo_e2e_select: out of memory for %d anchors x %d classes", n_anchors, nc);
done:
    free(best), free(cand), free(arg), free(anchors), free(pairs);
    return st;
}

yolo_status yolo_nms_detect(const float *pred, int nc, int n_anchors, const yolo_nms_params *p, yolo_detection *out,
                       int *n_out) {
    if (!pred || !p || !out || !n_out || nc <= 0 || n_anchors < 0)
        return yolo_error(YOLO_ERR_ARG, "yolo_nms_detect: bad arguments (nc %d, anchors %d)", nc, n_anchors);
    *n_out = 0;
    size_t A = (size_t)n_anchors;
    bool multi = p->multi_label && nc > 1;
    const float *cls = pred + 4 * A;

    /* Count, then fill, the (anchor, class) candidates in anchor-major order. */
    size_t n = 0; /* an upper bound: the class filter comes in the fill */
    for (size_t a = 0; a < A; a++) {
        float best = cls[a];
        for (int c = 1; c < nc; c++) best = cls[c * A + a] > best ? cls[c * A + a] : best;
        if (!(best > p->conf)) continue;
        if (multi) {
            for (int c = 0; c < nc; c++) n += cls[c * A + a] > p->conf && class_wanted(p, c);
        } else {
            n++;
        }
    }
    int *anchor = malloc((n ? n : 1) * sizeof *anchor), *label = malloc((n ? n : 1) * sizeof *label);
    float *score = malloc((n ? n : 1) * sizeof *score);
    if (!anchor || !label || !score) {
        free(anchor), free(label), free(score);
        return yolo_error(YOLO_ERR_NOMEM, "yolo_nms_detect: out of memory for %zu candidates", n);
    }
    size_t m = 0;
    for (size_t a = 0; a < A; a++) {
        int arg = 0;
        float best = cls[a];
        for (int c = 1; c < nc; c++)
            if (cls[c * A + a] > best) best = cls[c * A + a], arg = c;
        if (!(best > p->conf)) continue;
        if (multi) {
            for (int c = 0; c < nc; c++)
                if (cls[c * A + a] > p->conf && class_wanted(p, c))
                    anchor[m] = (int)a, label[m] = c, score[m] = cls[c * A + a], m++;
        } else if (class_wanted(p, arg)) {
            anchor[m] = (int)a, label[m] = arg, score[m] = best, m++;
        }
    }
    n = m;

    /* More than max_nms: only the best-scored go in (kept in score order). */
    int *pick = NULL;
    scored_index *order = NULL;
    float *boxes = NULL, *sc = NULL;
    int *keep = NULL;
    yolo_status st = YOLO_OK;
    size_t n_in = p->max_nms > 0 && n > (size_t)p->max_nms ? (size_t)p->max_nms : n;
    pick = malloc((n_in ? n_in : 1) * sizeof *pick);
    boxes = malloc((n_in ? n_in : 1) * 4 * sizeof *boxes);
    sc = malloc((n_in ? n_in : 1) * sizeof *sc);
    keep = malloc((size_t)(p->max_det > 0 ? p->max_det : 1) * sizeof *keep);
    if (!pick || !boxes || !sc || !keep) {
        st = yolo_error(YOLO_ERR_NOMEM, "yolo_nms_detect: out of memory for %zu candidates", n);
        goto done;
    }
    if (n_in < n) {
        if (!(order = sorted_by_score(score, (int)n))) {
            st = yolo_error(YOLO_ERR_NOMEM, "yolo_nms_detect: out of memory for %zu candidates", n);
            goto done;
        }
        for (size_t i = 0; i < n_in; i++) pick[i] = order[i].index;
    } else {
        for (size_t i = 0; i < n_in; i++) pick[i] = (int)i;
    }
    for (size_t i = 0; i < n_in; i++) {
        int k = pick[i];
        float xywh[4];
        for (int c = 0; c < 4; c++) xywh[c] = pred[c * A + anchor[k]];
        yolo_box_xywh_to_xyxy(xywh, boxes + 4 * i, 1);
        float off = p->agnostic ? 0.0f : (float)label[k] * p->max_wh; /* classes never overlap */
        for (int c = 0; c < 4; c++) boxes[4 * i + c] += off;
        sc[i] = score[k];
    }
    int kept = 0;
    st = yolo_nms_boxes(boxes, sc, (int)n_in, p->iou, p->max_det, keep, &kept);
    if (st) goto done;
    for (int i = 0; i < kept; i++) {
        int k = pick[keep[i]];
        float xywh[4];
        for (int c = 0; c < 4; c++) xywh[c] = pred[c * A + anchor[k]];
        yolo_box_xywh_to_xyxy(xywh, out[i].box, 1);
        out[i].score = score[k];
        out[i].cls = label[k];
        out[i].anchor = anchor[k];
    }
    *n_out = kept;
done:
    free(anchor), free(label), free(score), free(pick), free(order), free(boxes), free(sc), free(keep);
    return st;
}
