/* ap_metrics.c — average precision as Ultralytics computes it
 * (BaseValidator.match_predictions, ap_per_class, compute_ap, smooth), for
 * any IoU matrix: box mAP here, mask mAP for segment.
 *
 * numpy's semantics are reproduced where they change numbers: np.interp
 * (the last of equal xp wins, xp[-1] maps to fp[-1]), linspace (x_k = k*step,
 * last = stop), the trapezoid rule, and so the well-known 0.995 ceiling of
 * AP (the sentinel recall 1.0 carries precision 0). Sorting by confidence is
 * stable here (numpy's quicksort is not), which only matters for ties. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"

void yolo_ap_iou_thresholds(float thr[YOLO_AP_N_IOU]) {
    for (int i = 0; i < YOLO_AP_N_IOU; i++) thr[i] = (float)(0.5 + 0.05 * i);
}

yolo_status yolo_ap_match_predictions(int n_pred, const int32_t *pred_cls, int n_gt, const int32_t *gt_cls,
                                 const float *iou, int n_thr, const float *thr, uint8_t *correct) {
    if (n_pred < 0 || n_gt < 0 || n_thr <= 0 || !thr || (n_pred > 0 && (!pred_cls || !correct)) ||
        (n_gt > 0 && n_pred > 0 && (!gt_cls || !iou)))
        return yolo_error(YOLO_ERR_ARG, "yolo_ap_match_predictions: bad arguments (%d preds, %d gts)", n_pred,
                          n_gt);
    if (n_pred == 0) return YOLO_OK;
    memset(correct, 0, (size_t)n_pred * n_thr);
    if (n_gt == 0) return YOLO_OK;
    int *best_gt = malloc((size_t)n_pred * sizeof *best_gt);
    if (!best_gt) return yolo_error(YOLO_ERR_NOMEM, "yolo_ap_match_predictions: out of memory");
    for (int t = 0; t < n_thr; t++) {
        /* Each prediction keeps its highest-IoU qualifying gt (a tie goes to
         * the later gt, as numpy's reversed argsort leaves it). */
        for (int p = 0; p < n_pred; p++) {
            int arg = -1;
            float top = 0;
            for (int g = 0; g < n_gt; g++) {
                float v = gt_cls[g] == pred_cls[p] ? iou[(size_t)g * n_pred + p] : 0;
                if (v >= thr[t] && (arg < 0 || v >= top)) arg = g, top = v;
            }
            best_gt[p] = arg;
        }
        /* Each gt then keeps the lowest-index prediction that chose it. */
        for (int g = 0; g < n_gt; g++) {
            for (int p = 0; p < n_pred; p++) {
                if (best_gt[p] == g) {
                    correct[(size_t)p * n_thr + t] = 1;
                    break;
                }
            }
        }
    }
    free(best_gt);
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* The accumulator                                                     */

void yolo_ap_stats_init(yolo_ap_stats *s, int n_iou) {
    memset(s, 0, sizeof *s);
    s->n_iou = n_iou;
}

void yolo_ap_stats_free(yolo_ap_stats *s) {
    free(s->tp), free(s->conf), free(s->pred_cls), free(s->target_cls), free(s->target_img);
    yolo_ap_stats_init(s, s->n_iou);
}

void yolo_ap_stats_reset(yolo_ap_stats *s) {
    s->n_pred = s->n_target = s->n_target_img = 0;
    s->n_images = 0;
}

/* Capacities double so that appends stay amortised O(1). */
static size_t grown_cap(size_t cap, size_t need) {
    size_t c = cap ? cap : 256;
    while (c < need) c *= 2;
    return c;
}

static bool reserve_preds(yolo_ap_stats *s, size_t need) {
    if (need <= s->cap_pred) return true;
    size_t c = grown_cap(s->cap_pred, need);
    uint8_t *tp = realloc(s->tp, c * (size_t)s->n_iou);
    if (!tp) return false;
    s->tp = tp;
    float *conf = realloc(s->conf, c * sizeof *conf);
    if (!conf) return false;
    s->conf = conf;
    int32_t *cls = realloc(s->pred_cls, c * sizeof *cls);
    if (!cls) return false;
    s->pred_cls = cls;
    s->cap_pred = c;
    return true;
}

static bool reserve_i32(int32_t **arr, size_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t c = grown_cap(*cap, need);
    int32_t *p = realloc(*arr, c * sizeof *p);
    if (!p) return false;
    *arr = p;
    *cap = c;
    return true;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

yolo_status yolo_ap_stats_add_image(yolo_ap_stats *s, int n_pred, const uint8_t *tp, const float *conf,
                               const int32_t *pred_cls, int n_gt, const int32_t *gt_cls) {
    if (!s || s->n_iou <= 0 || n_pred < 0 || n_gt < 0 || (n_pred > 0 && (!tp || !conf || !pred_cls)) ||
        (n_gt > 0 && !gt_cls))
        return yolo_error(YOLO_ERR_ARG, "yolo_ap_stats_add_image: bad arguments (%d preds, %d gts)", n_pred, n_gt);
    size_t np = s->n_pred + n_pred, nt = s->n_target + n_gt;
    if (!reserve_preds(s, np) || !reserve_i32(&s->target_cls, &s->cap_target, nt) ||
        !reserve_i32(&s->target_img, &s->cap_target_img, s->n_target_img + n_gt))
        return yolo_error(YOLO_ERR_NOMEM, "yolo_ap_stats_add_image: out of memory at %zu predictions", np);
    if (n_pred > 0) {
        memcpy(s->tp + s->n_pred * s->n_iou, tp, (size_t)n_pred * s->n_iou);
        memcpy(s->conf + s->n_pred, conf, (size_t)n_pred * sizeof(float));
        memcpy(s->pred_cls + s->n_pred, pred_cls, (size_t)n_pred * sizeof(int32_t));
    }
    if (n_gt > 0) {
        memcpy(s->target_cls + s->n_target, gt_cls, (size_t)n_gt * sizeof(int32_t));
        /* The image's distinct classes (np.unique), for per-class image counts. */
        int32_t *u = s->target_img + s->n_target_img;
        memcpy(u, gt_cls, (size_t)n_gt * sizeof(int32_t));
        qsort(u, (size_t)n_gt, sizeof *u, cmp_i32);
        size_t k = 0;
        for (int i = 0; i < n_gt; i++)
            if (i == 0 || u[i] != u[k - 1]) u[k++] = u[i];
        s->n_target_img += k;
    }
    s->n_pred = np;
    s->n_target = nt;
    s->n_images++;
    return YOLO_OK;
}

yolo_status yolo_ap_stats_merge(yolo_ap_stats *dst, const yolo_ap_stats *src) {
    if (!dst || !src || dst->n_iou != src->n_iou)
        return yolo_error(YOLO_ERR_ARG, "yolo_ap_stats_merge: accumulators of %d and %d IoU thresholds",
                          dst ? dst->n_iou : -1, src ? src->n_iou : -1);
    size_t np = dst->n_pred + src->n_pred, nt = dst->n_target + src->n_target;
    size_t ni = dst->n_target_img + src->n_target_img;
    if (!reserve_preds(dst, np) || !reserve_i32(&dst->target_cls, &dst->cap_target, nt) ||
        !reserve_i32(&dst->target_img, &dst->cap_target_img, ni))
        return yolo_error(YOLO_ERR_NOMEM, "yolo_ap_stats_merge: out of memory at %zu predictions", np);
    if (src->n_pred) {
        memcpy(dst->tp + dst->n_pred * dst->n_iou, src->tp, src->n_pred * src->n_iou);
        memcpy(dst->conf + dst->n_pred, src->conf, src->n_pred * sizeof(float));
        memcpy(dst->pred_cls + dst->n_pred, src->pred_cls, src->n_pred * sizeof(int32_t));
    }
    if (src->n_target)
        memcpy(dst->target_cls + dst->n_target, src->target_cls, src->n_target * sizeof(int32_t));
    if (src->n_target_img)
        memcpy(dst->target_img + dst->n_target_img, src->target_img, src->n_target_img * sizeof(int32_t));
    dst->n_pred = np;
    dst->n_target = nt;
    dst->n_target_img = ni;
    dst->n_images += src->n_images;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* ap_per_class                                                        */

/* np.interp(x, xp, fp, left, right) for increasing xp (equal values allowed). */
static double np_interp(double x, const double *xp, const double *fp, int n, double left, double right) {
    if (x > xp[n - 1]) return right;
    if (x < xp[0]) return left;
    int lo = 0, hi = n; /* j = the last index with xp[j] <= x */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (x >= xp[mid])
            lo = mid + 1;
        else
            hi = mid;
    }
    int j = lo - 1;
    if (j == n - 1 || xp[j] == x) return fp[j];
    double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
    double r = slope * (x - xp[j]) + fp[j];
    if (isnan(r)) {
        r = slope * (x - xp[j + 1]) + fp[j + 1];
        if (isnan(r) && fp[j] == fp[j + 1]) r = fp[j];
    }
    return r;
}

/* compute_ap: sentinels, precision envelope, 101-point interpolation and
 * trapezoid integration. mrec/mpre have room for n + 2 values. */
static double compute_ap(const double *recall, const double *precision, int n, double *mrec, double *mpre) {
    mrec[0] = 0, mpre[0] = 1;
    for (int i = 0; i < n; i++) mrec[i + 1] = recall[i], mpre[i + 1] = precision[i];
    mrec[n + 1] = 1, mpre[n + 1] = 0;
    for (int i = n; i >= 0; i--) mpre[i] = fmax(mpre[i], mpre[i + 1]);
    double ap = 0, x0 = 0, y0 = np_interp(0, mrec, mpre, n + 2, mpre[0], mpre[n + 1]);
    for (int k = 1; k <= 100; k++) {
        double x1 = k == 100 ? 1.0 : k * 0.01;
        double y1 = np_interp(x1, mrec, mpre, n + 2, mpre[0], mpre[n + 1]);
        ap += (x1 - x0) * (y0 + y1) / 2.0;
        x0 = x1, y0 = y1;
    }
    return ap;
}

typedef struct conf_index {
    float conf;
    size_t index;
} conf_index;

static int by_conf_desc(const void *pa, const void *pb) {
    const conf_index *a = pa, *b = pb;
    if (a->conf != b->conf) return a->conf < b->conf ? 1 : -1;
    return (a->index > b->index) - (a->index < b->index);
}

void yolo_ap_summary_free(yolo_ap_summary *out) {
    if (!out) return;
    free(out->ap), free(out->p), free(out->r), free(out->f1), free(out->n_targets), free(out->n_target_img);
    free(out->curve_cls), free(out->px), free(out->curves);
    memset(out, 0, sizeof *out);
}

#define AP_CURVE_POINTS YOLO_AP_CURVE_POINTS

/* Per class (with predictions): recall/precision over the sorted
 * predictions, the AP per threshold, and the recall and precision curves
 * sampled at the confidences px (np.interp on negated confidences). */
static void class_curves(const yolo_ap_stats *s, const conf_index *sorted, const size_t *idx, int n_p, int64_t n_l,
                         double *rec, double *prec, double *negconf, double *mrec, double *mpre,
                         const double *px, double *ap, double *r_curve, double *p_curve, double *pr_curve) {
    int T = s->n_iou;
    for (int t = 0; t < T; t++) {
        double tpc = 0, fpc = 0;
        for (int i = 0; i < n_p; i++) {
            double tp = s->tp[sorted[idx[i]].index * T + t];
            tpc += tp, fpc += 1 - tp;
            rec[(size_t)t * n_p + i] = tpc / ((double)n_l + 1e-16);
            prec[(size_t)t * n_p + i] = tpc / (tpc + fpc);
        }
        ap[t] = compute_ap(rec + (size_t)t * n_p, prec + (size_t)t * n_p, n_p, mrec, mpre);
        for (int k = 0; t == 0 && k < AP_CURVE_POINTS; k++) /* the PR curve at IoU 0.5 */
            pr_curve[k] = np_interp(px[k], mrec, mpre, n_p + 2, mpre[0], mpre[n_p + 1]);
    }
    for (int i = 0; i < n_p; i++) negconf[i] = -(double)sorted[idx[i]].conf;
    for (int k = 0; k < AP_CURVE_POINTS; k++) {
        r_curve[k] = np_interp(-px[k], negconf, rec, n_p, 0, rec[n_p - 1]);
        p_curve[k] = np_interp(-px[k], negconf, prec, n_p, 1, prec[n_p - 1]);
    }
}

yolo_status yolo_ap_summarize(const yolo_ap_stats *s, int nc, yolo_ap_summary *out) {
    if (!s || !out || nc <= 0 || s->n_iou <= 0)
        return yolo_error(YOLO_ERR_ARG, "yolo_ap_summarize: bad arguments (nc %d)", nc);
    memset(out, 0, sizeof *out);
    int T = s->n_iou;
    out->nc = nc, out->n_iou = T, out->n_images = s->n_images, out->n_instances = (int64_t)s->n_target;
    out->ap = calloc((size_t)nc * T, sizeof(double));
    out->p = calloc((size_t)nc, sizeof(double)), out->r = calloc((size_t)nc, sizeof(double));
    out->f1 = calloc((size_t)nc, sizeof(double));
    out->n_targets = calloc((size_t)nc, sizeof(int64_t));
    out->n_target_img = calloc((size_t)nc, sizeof(int64_t));
    if (!out->ap || !out->p || !out->r || !out->f1 || !out->n_targets || !out->n_target_img) {
        yolo_ap_summary_free(out);
        return yolo_error(YOLO_ERR_NOMEM, "yolo_ap_summarize: out of memory for %d classes", nc);
    }
    for (size_t i = 0; i < s->n_target; i++) {
        int32_t c = s->target_cls[i];
        if (c < 0 || c >= nc) {
            yolo_ap_summary_free(out);
            return yolo_error(YOLO_ERR_ARG, "yolo_ap_summarize: target class %d outside [0, %d)", (int)c, nc);
        }
        out->n_targets[c]++;
    }
    for (size_t i = 0; i < s->n_target_img; i++)
        if (s->target_img[i] >= 0 && s->target_img[i] < nc) out->n_target_img[s->target_img[i]]++;

    bool any_tp = false;
    for (size_t i = 0; i < s->n_pred * T && !any_tp; i++) any_tp = s->tp[i] != 0;
    if (!any_tp) return YOLO_OK; /* Ultralytics reports zeros then */

    /* Sort by confidence, then bucket by class keeping that order. */
    size_t n = s->n_pred;
    conf_index *sorted = malloc(n * sizeof *sorted);
    size_t *start = calloc((size_t)nc + 1, sizeof *start), *idx = malloc(n * sizeof *idx);
    int nu = 0;
    for (int c = 0; c < nc; c++) nu += out->n_targets[c] > 0;
    double *curves = calloc((size_t)nu * 4 * AP_CURVE_POINTS + 2 * AP_CURVE_POINTS, sizeof(double));
    out->curve_cls = calloc((size_t)nu + 1, sizeof *out->curve_cls);
    out->px = malloc(AP_CURVE_POINTS * sizeof *out->px);
    double *work = malloc((n * (2 * (size_t)T + 1) + 2 * (n + 2)) * sizeof(double));
    yolo_status st = YOLO_OK;
    if (!sorted || !start || !idx || !curves || !work || !out->curve_cls || !out->px) {
        st = yolo_error(YOLO_ERR_NOMEM, "yolo_ap_summarize: out of memory for %zu predictions", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++) sorted[i] = (conf_index){s->conf[i], i};
    qsort(sorted, n, sizeof *sorted, by_conf_desc);
    for (size_t i = 0; i < n; i++) {
        int32_t c = s->pred_cls[sorted[i].index]; /* classes outside [0, nc) have no gts: ignored */
        if (c >= 0 && c < nc) start[c + 1]++;
    }
    for (int c = 0; c < nc; c++) start[c + 1] += start[c];
    {
        size_t *fill = malloc(((size_t)nc + 1) * sizeof *fill);
        if (!fill) {
            st = yolo_error(YOLO_ERR_NOMEM, "yolo_ap_summarize: out of memory");
            goto done;
        }
        memcpy(fill, start, ((size_t)nc + 1) * sizeof *fill);
        for (size_t i = 0; i < n; i++) {
            int32_t c = s->pred_cls[sorted[i].index];
            if (c >= 0 && c < nc) idx[fill[c]++] = i;
        }
        free(fill);
    }

    double px[AP_CURVE_POINTS];
    for (int k = 0; k < AP_CURVE_POINTS; k++)
        px[k] = k == AP_CURVE_POINTS - 1 ? 1.0 : k * (1.0 / (AP_CURVE_POINTS - 1));
    double *rec = work, *prec = work + n * T, *negconf = work + 2 * n * T;
    double *mrec = negconf + n, *mpre = mrec + n + 2;
    double *f1_mean = curves + (size_t)nu * 4 * AP_CURVE_POINTS, *smooth = f1_mean + AP_CURVE_POINTS;
    int ci = 0;
    for (int c = 0; c < nc; c++) {
        if (out->n_targets[c] == 0) continue;
        double *p_curve = curves + (size_t)ci * 4 * AP_CURVE_POINTS, *r_curve = p_curve + AP_CURVE_POINTS;
        double *f1_curve = r_curve + AP_CURVE_POINTS;
        int n_p = (int)(start[c + 1] - start[c]);
        if (n_p > 0)
            class_curves(s, sorted, idx + start[c], n_p, out->n_targets[c], rec, prec, negconf, mrec, mpre,
                         px, out->ap + (size_t)c * T, r_curve, p_curve, f1_curve + AP_CURVE_POINTS);
        for (int k = 0; k < AP_CURVE_POINTS; k++) {
            f1_curve[k] = 2 * p_curve[k] * r_curve[k] / (p_curve[k] + r_curve[k] + 1e-16);
            f1_mean[k] += f1_curve[k];
        }
        out->curve_cls[ci++] = c;
    }
    out->n_curves = nu;
    memcpy(out->px, px, sizeof px);
    for (int k = 0; k < AP_CURVE_POINTS; k++) f1_mean[k] /= nu;
    /* smooth(f1, 0.1): a 101-wide box filter with edge padding, then argmax. */
    const int nf = 101, half = nf / 2;
    int best = 0;
    for (int k = 0; k < AP_CURVE_POINTS; k++) {
        double acc = 0;
        for (int m = -half; m <= half; m++) {
            int q = k + m < 0 ? 0 : (k + m >= AP_CURVE_POINTS ? AP_CURVE_POINTS - 1 : k + m);
            acc += f1_mean[q] * (1.0 / nf);
        }
        smooth[k] = acc;
        if (acc > smooth[best]) best = k;
    }
    out->best_conf = px[best];
    ci = 0;
    for (int c = 0; c < nc; c++) {
        if (out->n_targets[c] == 0) continue;
        const double *p_curve = curves + (size_t)ci * 4 * AP_CURVE_POINTS,
                     *r_curve = p_curve + AP_CURVE_POINTS;
        out->p[c] = p_curve[best];
        out->r[c] = r_curve[best];
        out->f1[c] = 2 * out->p[c] * out->r[c] / (out->p[c] + out->r[c] + 1e-16);
        out->mp += out->p[c];
        out->mr += out->r[c];
        out->map50 += out->ap[(size_t)c * T];
        if (T > 5) out->map75 += out->ap[(size_t)c * T + 5];
        for (int t = 0; t < T; t++) out->map += out->ap[(size_t)c * T + t];
        ci++;
    }
    out->mp /= nu, out->mr /= nu, out->map50 /= nu, out->map75 /= nu;
    out->map /= (double)nu * T;
    out->curves = curves; /* kept: the plots draw them */
    curves = NULL;
done:
    free(sorted), free(start), free(idx), free(curves), free(work);
    if (st) yolo_ap_summary_free(out);
    return st;
}

/* ------------------------------------------------------------------ */
/* Packing for the reduction across ranks: a header, then the arrays.  */

#define AP_PACK_MAGIC 0x314d4459u /* "YDM1" */

typedef struct ap_pack_header {
    uint32_t magic;
    int32_t n_iou;
    int64_t n_images;
    uint64_t n_pred, n_target, n_target_img;
} ap_pack_header;

yolo_status yolo_ap_stats_pack(const yolo_ap_stats *a, void **bytes, size_t *size) {
    if (!a || !bytes || !size) return yolo_error(YOLO_ERR_ARG, "yolo_ap_stats_pack: NULL argument");
    ap_pack_header h = {AP_PACK_MAGIC, a->n_iou, a->n_images, a->n_pred, a->n_target, a->n_target_img};
    size_t n = sizeof h + a->n_pred * (size_t)a->n_iou + a->n_pred * (sizeof(float) + sizeof(int32_t)) +
               (a->n_target + a->n_target_img) * sizeof(int32_t);
    unsigned char *out = malloc(n), *p = out;
    if (!out) return yolo_error(YOLO_ERR_NOMEM, "yolo_ap_stats_pack: out of memory for %zu bytes", n);
    memcpy(p, &h, sizeof h), p += sizeof h;
    if (a->n_pred) {
        memcpy(p, a->tp, a->n_pred * (size_t)a->n_iou), p += a->n_pred * (size_t)a->n_iou;
        memcpy(p, a->conf, a->n_pred * sizeof(float)), p += a->n_pred * sizeof(float);
        memcpy(p, a->pred_cls, a->n_pred * sizeof(int32_t)), p += a->n_pred * sizeof(int32_t);
    }
    if (a->n_target) memcpy(p, a->target_cls, a->n_target * sizeof(int32_t)), p += a->n_target * sizeof(int32_t);
    if (a->n_target_img) memcpy(p, a->target_img, a->n_target_img * sizeof(int32_t));
    *bytes = out;
    *size = n;
    return YOLO_OK;
}

yolo_status yolo_ap_stats_unpack_merge(yolo_ap_stats *dst, const void *bytes, size_t size, size_t *used) {
    if (!dst || (!bytes && size)) return yolo_error(YOLO_ERR_ARG, "yolo_ap_stats_unpack_merge: NULL argument");
    ap_pack_header h;
    if (size < sizeof h) return yolo_error(YOLO_ERR_FORMAT, "metrics merge: %zu bytes is no packed state", size);
    memcpy(&h, bytes, sizeof h);
    if (h.magic != AP_PACK_MAGIC || h.n_iou != dst->n_iou || h.n_images < 0)
        return yolo_error(YOLO_ERR_FORMAT,
                          "metrics merge: not a packed AP state (magic %08x, %d IoU thresholds, want %d)",
                          (unsigned)h.magic, (int)h.n_iou, dst->n_iou);
    size_t body = size - sizeof h;
    size_t per_pred = (size_t)h.n_iou + sizeof(float) + sizeof(int32_t);
    bool fits = h.n_pred <= body / per_pred && h.n_target <= body / 4 && h.n_target_img <= body / 4;
    size_t need = fits ? h.n_pred * per_pred + (h.n_target + h.n_target_img) * 4 : 0;
    if (!fits || need > body || (!used && need != body))
        return yolo_error(YOLO_ERR_FORMAT,
                          "metrics merge: %zu bytes do not hold %llu predictions and %llu + %llu targets", size,
                          (unsigned long long)h.n_pred, (unsigned long long)h.n_target,
                          (unsigned long long)h.n_target_img);
    yolo_ap_stats src;
    yolo_ap_stats_init(&src, h.n_iou);
    src.n_pred = src.cap_pred = h.n_pred;
    src.n_target = src.cap_target = h.n_target;
    src.n_target_img = src.cap_target_img = h.n_target_img;
    src.n_images = h.n_images;
    src.tp = malloc(h.n_pred * (size_t)h.n_iou + 1);
    src.conf = malloc(h.n_pred * sizeof(float) + 1);
    src.pred_cls = malloc(h.n_pred * sizeof(int32_t) + 1);
    src.target_cls = malloc(h.n_target * sizeof(int32_t) + 1);
    src.target_img = malloc(h.n_target_img * sizeof(int32_t) + 1);
    yolo_status st = YOLO_OK;
    if (!src.tp || !src.conf || !src.pred_cls || !src.target_cls || !src.target_img) {
        st = yolo_error(YOLO_ERR_NOMEM, "metrics merge: out of memory for %zu bytes", size);
    } else {
        const unsigned char *p = (const unsigned char *)bytes + sizeof h;
        memcpy(src.tp, p, h.n_pred * (size_t)h.n_iou), p += h.n_pred * (size_t)h.n_iou;
        memcpy(src.conf, p, h.n_pred * sizeof(float)), p += h.n_pred * sizeof(float);
        memcpy(src.pred_cls, p, h.n_pred * sizeof(int32_t)), p += h.n_pred * sizeof(int32_t);
        memcpy(src.target_cls, p, h.n_target * sizeof(int32_t)), p += h.n_target * sizeof(int32_t);
        memcpy(src.target_img, p, h.n_target_img * sizeof(int32_t));
        st = yolo_ap_stats_merge(dst, &src);
    }
    yolo_ap_stats_free(&src);
    if (!st && used) *used = sizeof h + need;
    return st;
}
