/* Batch mosaics (plots.h): Ultralytics' plot_images for train_batchN.jpg
 * and val_batchN_{labels,pred}.jpg, and the batch snapshots they draw from. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "draw/canvas_internal.h"
#include "data/image.h"
#include "draw/plots.h"

#define MOSAIC_MAX_IMAGES 16
#define MOSAIC_MAX_SIZE 1920

void yolo_batch_snapshot_free(yolo_batch_snapshot *s) {
    if (!s) return;
    for (int i = 0; s->paths && i < s->batch.n; i++) free(s->paths[i]);
    free(s->paths);
    free(s->batch.images), free(s->batch.sample_index), free(s->batch.image_class), free(s->batch.meta);
    free(s->batch.batch_idx);
    yolo_instances_free(&s->batch.instances);
    free(s);
}

yolo_status yolo_batch_snapshot_take(const yolo_batch *b, const yolo_dataset *ds, int max_images,
                                     yolo_batch_snapshot **out) {
    *out = NULL;
    yolo_batch_snapshot *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "batch plot: out of memory");
    int n = b->n < max_images ? b->n : max_images;
    size_t image_bytes = (size_t)3 * b->height * b->width;
    yolo_batch *c = &s->batch;
    *c = (yolo_batch){.n = n, .height = b->height, .width = b->width, .epoch = b->epoch, .batch_number = b->batch_number};
    yolo_instances_init(&c->instances, b->instances.kpt_count, b->instances.kpt_dims);
    c->images = malloc(image_bytes * (size_t)(n ? n : 1));
    c->sample_index = calloc((size_t)n + 1, sizeof *c->sample_index);
    c->image_class = calloc((size_t)n + 1, sizeof *c->image_class);
    c->meta = calloc((size_t)n + 1, sizeof *c->meta);
    c->batch_idx = calloc((size_t)b->instances.n + 1, sizeof *c->batch_idx);
    s->paths = calloc((size_t)n + 1, sizeof *s->paths);
    yolo_status st = c->images && c->sample_index && c->image_class && c->meta && c->batch_idx && s->paths
                         ? YOLO_OK
                         : yolo_error(YOLO_ERR_NOMEM, "batch plot: out of memory");
    if (!st) {
        memcpy(c->images, b->images, image_bytes * (size_t)n);
        for (int i = 0; i < n; i++) {
            c->sample_index[i] = b->sample_index ? b->sample_index[i] : i;
            c->image_class[i] = b->image_class ? b->image_class[i] : -1;
            if (b->meta) c->meta[i] = b->meta[i];
            else c->meta[i] = (yolo_image_meta){b->width, b->height, 1, 1, 0, 0};
            int64_t k = c->sample_index[i];
            const char *p = ds && k >= 0 && k < ds->n ? ds->samples[k].path : NULL;
            const char *base = p ? strrchr(p, '/') : NULL;
            if (p) s->paths[i] = strdup(base ? base + 1 : p);
        }
    }
    /* instances of the kept images (sorted by image), one at a time */
    const yolo_instances *in = &b->instances;
    for (int k = 0; !st && k < in->n && b->batch_idx && b->batch_idx[k] < n; k++) {
        const float *poly = NULL;
        int np = 0;
        if (in->poly_start) poly = in->poly_xy + 2 * (size_t)in->poly_start[k], np = in->poly_start[k + 1] - in->poly_start[k];
        const float *kp = in->kpt_count ? in->kpts + (size_t)k * in->kpt_count * in->kpt_dims : NULL;
        st = yolo_instances_add(&c->instances, in->cls[k], in->boxes + 4 * (size_t)k, poly, np, kp);
        if (!st) c->batch_idx[k] = b->batch_idx[k];
    }
    if (st) {
        yolo_batch_snapshot_free(s);
        return st;
    }
    *out = s;
    return YOLO_OK;
}

/* Batch image i (NCHW) as an RGB image. */
static yolo_status tile_image(const yolo_batch *b, int i, yolo_image *out) {
    yolo_status st = yolo_image_alloc(out, b->width, b->height);
    if (st) return st;
    size_t plane = (size_t)b->width * b->height;
    const uint8_t *src = b->images + 3 * plane * (size_t)i;
    for (size_t p = 0; p < plane; p++)
        for (int ch = 0; ch < 3; ch++) out->data[3 * p + ch] = src[ch * plane + p];
    return YOLO_OK;
}

static const char *name_of(const char *const *names, int nc, int k, char *buf, size_t size) {
    if (names && k >= 0 && k < nc && names[k]) return names[k];
    snprintf(buf, size, "%d", k);
    return buf;
}

/* The labels of image i, in batch pixels (the tile's transform). */
static void draw_labels(yolo_canvas *c, const yolo_batch *b, int i, const char *const *names, int nc, double lw) {
    const yolo_instances *in = &b->instances;
    char buf[16];
    for (int k = 0; k < in->n; k++) {
        if (b->batch_idx[k] != i) continue;
        yolo_color color = yolo_class_color(in->cls[k]);
        if (in->poly_start && in->poly_start[k + 1] - in->poly_start[k] >= 3) {
            int np = in->poly_start[k + 1] - in->poly_start[k];
            float *xy = malloc(2 * (size_t)np * sizeof *xy);
            for (int p = 0; xy && p < np; p++) {
                xy[2 * p] = in->poly_xy[2 * ((size_t)in->poly_start[k] + p)] * b->width;
                xy[2 * p + 1] = in->poly_xy[2 * ((size_t)in->poly_start[k] + p) + 1] * b->height;
            }
            if (xy) yolo_draw_polygon_fill(c, xy, np, color, 0.5);
            free(xy);
        }
        const float *bx = in->boxes + 4 * (size_t)k;
        float xyxy[4] = {(bx[0] - bx[2] / 2) * b->width, (bx[1] - bx[3] / 2) * b->height,
                         (bx[0] + bx[2] / 2) * b->width, (bx[1] + bx[3] / 2) * b->height};
        yolo_draw_box_label(c, xyxy, name_of(names, nc, in->cls[k], buf, sizeof buf), color, lw);
        if (in->kpt_count > 0) {
            int n = in->kpt_count, d = in->kpt_dims;
            float *kp = malloc((size_t)n * d * sizeof *kp);
            for (int p = 0; kp && p < n; p++) {
                const float *q = in->kpts + ((size_t)k * n + p) * d;
                kp[p * d] = q[0] * b->width, kp[p * d + 1] = q[1] * b->height;
                if (d == 3) kp[p * d + 2] = q[2];
            }
            if (kp) yolo_draw_keypoints(c, kp, n, d, NULL, 0, NULL, NULL, color, fmax(lw, 2), lw);
            free(kp);
        }
    }
}

yolo_status yolo_plot_batch(const yolo_batch *b, const char *const *names, int nc, const char *const *paths,
                            yolo_plot_pred_fn pred, void *pred_ctx, const char *path) {
    int n = b->n < MOSAIC_MAX_IMAGES ? b->n : MOSAIC_MAX_IMAGES;
    if (n < 1) return YOLO_OK;
    int ns = (int)ceil(sqrt((double)n));
    double scale = (double)MOSAIC_MAX_SIZE / ns / (b->width > b->height ? b->width : b->height);
    if (scale > 1) scale = 1;
    int tw = (int)ceil(b->width * scale), th = (int)ceil(b->height * scale);
    yolo_canvas *c = yolo_canvas_create(ns * tw, ns * th, (yolo_color){255, 255, 255});
    if (!c) return yolo_error_context(YOLO_ERR_NOMEM, "%s", path);
    /* Ultralytics: fs = (h + w) * ns * 0.01, line width fs / 10 (at least 1) */
    double fs = (int)((th + tw) * ns * 0.01), lw = fmax(round(fs / 10), 1.0);
    yolo_status st = YOLO_OK;
    char buf[16];
    for (int i = 0; i < n && !st; i++) {
        double x = tw * (double)(i / ns), y = th * (double)(i % ns); /* column by column */
        yolo_image tile = {0};
        st = tile_image(b, i, &tile);
        if (st) break;
        yolo_canvas_draw_image(c, &tile, x, y, tw, th);
        yolo_image_free(&tile);
        double clip[4] = {x, y, tw, th};
        if (pred) {
            const yolo_image_meta *m = &b->meta[i];
            yolo_canvas_set_transform(c, m->ratio_x * scale, m->ratio_y * scale, x + m->pad_x * scale,
                                      y + m->pad_y * scale, clip);
            st = pred(pred_ctx, b, i, c, lw);
        } else {
            yolo_canvas_set_transform(c, scale, scale, x, y, clip);
            draw_labels(c, b, i, names, nc, lw);
        }
        if (!pred && b->image_class && b->image_class[i] >= 0) /* classify's class below the file name */
            yolo_draw_label_at(c, 5 / scale, (8 + fs) / scale, name_of(names, nc, b->image_class[i], buf, sizeof buf),
                               yolo_class_color(b->image_class[i]), lw);
        yolo_canvas_set_transform(c, 1, 1, 0, 0, NULL);
        if (paths && paths[i]) { /* the file name */
            char shown[41];
            snprintf(shown, sizeof shown, "%s", paths[i]);
            canvas_raw_text(c, x + 5, y + 5 + fs * 0.75, shown, fs, (yolo_color){220, 220, 220});
        }
        yolo_draw_rect(c, x, y, x + tw, y + th, 2, (yolo_color){255, 255, 255}, 1);
    }
    if (!st) st = yolo_canvas_save(c, path);
    yolo_canvas_free(c);
    return st;
}
