/* eval.c — what box-based validators and predictors share
 * (yolo/detection.h, "Evaluation settings"): the NMS settings of val and
 * predict from the configuration, boxes back to the original image, the
 * eval-output check, the validator table and predict's JSON members. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/detection.h"

/* ---- configuration (a key the configuration lacks keeps the default) ---- */

static bool cfg_has(const yolo_config *cfg, const char *key) {
    return cfg && yolo_config_find_key(cfg, key) != NULL && !yolo_config_is_null(cfg, key);
}

static yolo_status cfg_float(const yolo_config *cfg, const char *key, double def, double *out) {
    *out = def;
    return cfg_has(cfg, key) ? yolo_config_get_float(cfg, key, out) : YOLO_OK;
}

static yolo_status cfg_int(const yolo_config *cfg, const char *key, int64_t def, int64_t *out) {
    *out = def;
    return cfg_has(cfg, key) ? yolo_config_get_int(cfg, key, out) : YOLO_OK;
}

static yolo_status cfg_bool(const yolo_config *cfg, const char *key, bool def, bool *out) {
    *out = def;
    return cfg_has(cfg, key) ? yolo_config_get_bool(cfg, key, out) : YOLO_OK;
}

static bool same_word(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = (*a >= 'A' && *a <= 'Z') ? (char)(*a - 'A' + 'a') : *a;
        char y = (*b >= 'A' && *b <= 'Z') ? (char)(*b - 'A' + 'a') : *b;
        if (x != y) return false;
    }
    return *a == *b;
}

static yolo_status eval_settings(yolo_det_eval *e, const yolo_config *cfg, const char *who) {
    const char *mode = "val";
    if (cfg_has(cfg, "mode")) {
        yolo_status st = yolo_config_get_string(cfg, "mode", &mode);
        if (st) return st;
        if (!mode) mode = "val";
    }
    e->predict = same_word(mode, "predict");
    double conf, iou;
    int64_t max_det;
    bool verbose, agnostic;
    yolo_status st = cfg_float(cfg, "conf", e->predict ? 0.25 : 0.001, &conf);
    if (!st) st = cfg_float(cfg, "iou", 0.7, &iou);
    if (!st) st = cfg_int(cfg, "max_det", 300, &max_det);
    if (!st) st = cfg_bool(cfg, "verbose", true, &verbose);
    if (!st) st = cfg_bool(cfg, "single_cls", false, &e->single_cls);
    if (!st) st = cfg_bool(cfg, "agnostic_nms", false, &agnostic);
    if (!st) st = cfg_bool(cfg, "save_conf", false, &e->save_conf);
    if (st) return st;
    if (max_det < 1 || max_det > 1000000)
        return yolo_error(YOLO_ERR_CONFIG, "%s: max_det=%lld, expected 1..1000000", who, (long long)max_det);
    e->nms = yolo_nms_default_params();
    e->nms.conf = (float)conf;
    e->nms.iou = (float)iou;
    e->nms.max_det = (int)max_det;
    if (e->predict) {
        /* Ultralytics' predictors: single-label, agnostic_nms, classes. */
        e->nms.multi_label = false;
        e->nms.agnostic = agnostic;
        if (cfg_has(cfg, "classes")) {
            const int64_t *items;
            int n;
            st = yolo_config_get_int_list(cfg, "classes", &items, &n);
            if (st) return st;
            e->classes = malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
            if (!e->classes) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
            for (int i = 0; i < n; i++) e->classes[i] = (int32_t)items[i];
            e->nms.classes = e->classes;
            e->nms.n_classes = n;
        }
    } else {
        /* Validators: multi-label (when nc > 1), agnostic with single_cls. */
        e->nms.multi_label = true;
        e->nms.agnostic = e->single_cls || agnostic;
    }
    /* Per-class rows as the validator prints them: verbose, and not the
     * per-epoch validation of a training run. */
    e->per_class = verbose && !same_word(mode, "train");
    return YOLO_OK;
}

yolo_status yolo_det_eval_init(yolo_det_eval *e, const yolo_task_context *ctx, const char *who) {
    if (!who) who = "detection";
    if (!e) return yolo_error(YOLO_ERR_ARG, "%s: NULL evaluation settings", who);
    memset(e, 0, sizeof *e);
    e->nc = ctx && ctx->nc > 0 ? ctx->nc : 0;
    yolo_status st = eval_settings(e, ctx ? ctx->cfg : NULL, who);
    e->nms.end2end = ctx && ctx->model && yolo_model_end2end(ctx->model); /* YOLO26's selection, not NMS */
    if (!st && ctx && ctx->names && e->nc > 0) {
        e->names = calloc((size_t)e->nc, sizeof(char *));
        if (!e->names) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
        for (int c = 0; !st && c < e->nc; c++) {
            const char *name = ctx->names[c] ? ctx->names[c] : "";
            e->names[c] = malloc(strlen(name) + 1);
            if (!e->names[c]) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", who);
            else strcpy(e->names[c], name);
        }
    }
    if (st) {
        yolo_det_eval_free(e);
        return yolo_error_context(st, "%s", who);
    }
    return YOLO_OK;
}

void yolo_det_eval_free(yolo_det_eval *e) {
    if (!e) return;
    if (e->names)
        for (int i = 0; i < e->nc; i++) free(e->names[i]);
    free(e->names), free(e->classes);
    e->names = NULL, e->classes = NULL;
    e->nms.classes = NULL, e->nms.n_classes = 0;
}

const char *yolo_det_eval_class_name(const yolo_det_eval *e, int c, char *buf, size_t size) {
    if (e && e->names && c >= 0 && c < e->nc && e->names[c]) return e->names[c];
    snprintf(buf, size, "%d", c);
    return buf;
}

int yolo_det_eval_nc(const yolo_det_eval *e, const yolo_ap_stats *s) {
    if (e && e->nc > 0) return e->nc;
    int nc = 1; /* no class count from the context: the largest class seen */
    for (size_t i = 0; s && i < s->n_target; i++)
        if (s->target_cls[i] >= nc) nc = s->target_cls[i] + 1;
    return nc;
}

/* ---- boxes and outputs ---- */

yolo_status yolo_box_to_original(const yolo_batch *batch, int image, float *xyxy, size_t n) {
    if (!batch->meta) {
        yolo_box_unletterbox(xyxy, n, 1.0f, 0.0f, 0.0f, (float)batch->width, (float)batch->height);
        return YOLO_OK;
    }
    const yolo_image_meta *m = &batch->meta[image];
    if (!(m->ratio_x > 0) || !(m->ratio_y > 0) || m->orig_width <= 0 || m->orig_height <= 0)
        return yolo_error(YOLO_ERR_ARG, "image %d of the batch has ratio %g x %g, original %dx%d", image,
                          (double)m->ratio_x, (double)m->ratio_y, m->orig_width, m->orig_height);
    float W = (float)m->orig_width, H = (float)m->orig_height;
    if (m->ratio_x == m->ratio_y) {
        yolo_box_unletterbox(xyxy, n, m->ratio_x, m->pad_x, m->pad_y, W, H);
        return YOLO_OK;
    }
    for (size_t i = 0; i < n; i++) {
        float *b = xyxy + 4 * i;
        for (int k = 0; k < 4; k++) {
            float v = k % 2 == 0 ? (b[k] - m->pad_x) / m->ratio_x : (b[k] - m->pad_y) / m->ratio_y;
            float hi = k % 2 == 0 ? W : H;
            b[k] = v < 0 ? 0 : (v > hi ? hi : v);
        }
    }
    return YOLO_OK;
}

yolo_status yolo_points_to_original(const yolo_batch *batch, int image, float *xy, size_t n, float *width,
                                    float *height) {
    const yolo_image_meta *m = batch->meta ? &batch->meta[image] : NULL;
    if (m && (!(m->ratio_x > 0) || !(m->ratio_y > 0) || m->orig_width <= 0 || m->orig_height <= 0))
        return yolo_error(YOLO_ERR_ARG, "image %d of the batch has ratio %g x %g, original %dx%d", image,
                          (double)m->ratio_x, (double)m->ratio_y, m->orig_width, m->orig_height);
    float W = m ? (float)m->orig_width : (float)batch->width, H = m ? (float)m->orig_height : (float)batch->height;
    for (size_t i = 0; i < n; i++) {
        float x = xy[2 * i], y = xy[2 * i + 1];
        if (m) x = (x - m->pad_x) / m->ratio_x, y = (y - m->pad_y) / m->ratio_y;
        xy[2 * i] = x < 0 ? 0 : (x > W ? W : x);
        xy[2 * i + 1] = y < 0 ? 0 : (y > H ? H : y);
    }
    if (width) *width = W;
    if (height) *height = H;
    return YOLO_OK;
}

yolo_status yolo_det_check_eval_output(const char *who, const yolo_batch *batch, const yolo_host_tensor *t,
                                       int n_extra, int *nc, int *n_anchors) {
    if (!who) who = "detection";
    if (!batch || !t) return yolo_error(YOLO_ERR_ARG, "%s: no batch or no outputs", who);
    if (!t->data || t->ndim != 3 || t->shape[0] != batch->n || n_extra < 0 || t->shape[1] < 5 + n_extra ||
        t->shape[1] > INT32_MAX || t->shape[2] < 0 || t->shape[2] > INT32_MAX)
        return yolo_error(YOLO_ERR_SHAPE,
                          "%s: output 0 must be the decoded predictions [%d, 4 + nc%s, A], got ndim %d "
                          "[%lld, %lld, %lld]",
                          who, batch->n, n_extra ? " + extra" : "", t->ndim, (long long)t->shape[0],
                          (long long)(t->ndim > 1 ? t->shape[1] : 0), (long long)(t->ndim > 2 ? t->shape[2] : 0));
    *nc = (int)t->shape[1] - 4 - n_extra;
    *n_anchors = (int)t->shape[2];
    return YOLO_OK;
}

/* ---- the table ---- */

void yolo_det_print_table(FILE *f, const yolo_det_eval *e, const yolo_ap_stats *stats, int n_kinds,
                          const char *const *kinds, const yolo_ap_summary *sums) {
    if (!f || n_kinds < 1 || !sums) return;
    fprintf(f, "%22s%11s%11s", "Class", "Images", "Instances");
    for (int k = 0; k < n_kinds; k++) {
        char first[64];
        snprintf(first, sizeof first, "%s(P", kinds && kinds[k] ? kinds[k] : "Box");
        fprintf(f, "%11s%11s%11s%11s", first, "R", "mAP50", "mAP50-95)");
    }
    fprintf(f, "\n%22s%11lld%11lld", "all", (long long)sums[0].n_images, (long long)sums[0].n_instances);
    for (int k = 0; k < n_kinds; k++)
        fprintf(f, "%11.3g%11.3g%11.3g%11.3g", sums[k].mp, sums[k].mr, sums[k].map50, sums[k].map);
    fprintf(f, "\n");
    if (sums[0].n_instances == 0)
        fprintf(f, "WARNING no labels found in val set, can not compute metrics without labels\n");
    bool any_tp = false;
    for (size_t i = 0; stats && i < stats->n_pred * (size_t)stats->n_iou && !any_tp; i++) any_tp = stats->tp[i];
    int nc = sums[0].nc;
    if (!(e && e->per_class && nc > 1 && any_tp)) return;
    for (int c = 0; c < nc; c++) {
        if (sums[0].n_targets[c] == 0) continue;
        char buf[32];
        fprintf(f, "%22s%11lld%11lld", yolo_det_eval_class_name(e, c, buf, sizeof buf),
                (long long)sums[0].n_target_img[c], (long long)sums[0].n_targets[c]);
        for (int k = 0; k < n_kinds; k++) {
            const yolo_ap_summary *s = &sums[k];
            double ap = 0;
            for (int t = 0; t < s->n_iou; t++) ap += s->ap[(size_t)c * s->n_iou + t];
            ap /= s->n_iou;
            fprintf(f, "%11.3g%11.3g%11.3g%11.3g", s->p[c], s->r[c], s->ap[(size_t)c * s->n_iou], ap);
        }
        fprintf(f, "\n");
    }
}

/* ---- JSON ---- */

void yolo_write_json_string(FILE *f, const char *text) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void yolo_det_write_json(FILE *f, const yolo_det_eval *e, const yolo_detection *d) {
    char buf[32];
    fprintf(f, "\"class\": %d, \"name\": ", (int)d->cls);
    yolo_write_json_string(f, yolo_det_eval_class_name(e, d->cls, buf, sizeof buf));
    fprintf(f, ", \"confidence\": %.10g, \"box\": [%.10g, %.10g, %.10g, %.10g]", yolo_round5(d->score),
            yolo_round5(d->box[0]), yolo_round5(d->box[1]), yolo_round5(d->box[2]), yolo_round5(d->box[3]));
}

yolo_status yolo_ap_kinds_pack(const char *who, yolo_ap_stats *const *kinds, int n, void **bytes, size_t *size) {
    if (!kinds || n < 1 || !bytes || !size) return yolo_error(YOLO_ERR_ARG, "%s metrics_pack: bad arguments", who);
    unsigned char *out = NULL;
    size_t total = 0;
    yolo_status st = YOLO_OK;
    for (int k = 0; k < n && !st; k++) {
        void *part = NULL;
        size_t len = 0;
        st = yolo_ap_stats_pack(kinds[k], &part, &len);
        unsigned char *grown = st ? NULL : realloc(out, total + len + 1);
        if (!st && !grown) st = yolo_error(YOLO_ERR_NOMEM, "%s metrics_pack: out of memory", who);
        if (!st) {
            out = grown;
            memcpy(out + total, part, len);
            total += len;
        }
        free(part);
    }
    if (st) {
        free(out);
        return st;
    }
    *bytes = out;
    *size = total;
    return YOLO_OK;
}

yolo_status yolo_ap_kinds_merge(const char *who, yolo_ap_stats *const *kinds, int n, const void *bytes, size_t size) {
    if (!kinds || n < 1 || (!bytes && size)) return yolo_error(YOLO_ERR_ARG, "%s metrics_merge: bad arguments", who);
    size_t offset = 0;
    for (int k = 0; k < n; k++) {
        size_t used = 0;
        yolo_status st = yolo_ap_stats_unpack_merge(kinds[k], (const unsigned char *)bytes + offset, size - offset,
                                                    k + 1 < n ? &used : NULL);
        if (st) return yolo_error_context(st, "%s", who);
        offset += used;
    }
    return YOLO_OK;
}

yolo_status yolo_ap_kinds_summarize(const char *who, const yolo_det_eval *e, yolo_ap_stats *const *kinds,
                                    const char *const *names, int n, double *values, double *fitness, FILE *table) {
    if (!e || !kinds || n < 1 || n > 8) return yolo_error(YOLO_ERR_ARG, "%s metrics_summarize: bad arguments", who);
    yolo_ap_summary sums[8];
    int nc = yolo_det_eval_nc(e, kinds[0]), done = 0;
    yolo_status st = YOLO_OK;
    for (; done < n && !st; done++) st = yolo_ap_summarize(kinds[done], nc, &sums[done]);
    if (st) done--; /* the failed one holds nothing */
    if (!st) {
        double fit = 0.0;
        for (int k = 0; k < n; k++) {
            if (values) {
                values[4 * k] = sums[k].mp, values[4 * k + 1] = sums[k].mr;
                values[4 * k + 2] = sums[k].map50, values[4 * k + 3] = sums[k].map;
            }
            fit += yolo_det_fitness(&sums[k]);
        }
        if (fitness) *fitness = fit;
        if (table) yolo_det_print_table(table, e, kinds[0], n, names, sums);
    }
    for (int k = 0; k < done; k++) yolo_ap_summary_free(&sums[k]);
    return st ? yolo_error_context(st, "%s metrics", who) : YOLO_OK;
}
