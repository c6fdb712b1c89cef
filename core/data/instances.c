/* The instance container of yolo/data.h: growable parallel arrays. */
#include "yolo/data.h"

#include <stdlib.h>
#include <string.h>

void yolo_image_free(yolo_image *image) {
    if (!image)
        return;
    free(image->data);
    image->data = NULL;
    image->width = image->height = 0;
}

void yolo_instances_init(yolo_instances *ins, int kpt_count, int kpt_dims) {
    memset(ins, 0, sizeof *ins);
    ins->kpt_count = kpt_count > 0 ? kpt_count : 0;
    ins->kpt_dims = kpt_count > 0 ? kpt_dims : 0;
}

void yolo_instances_free(yolo_instances *ins) {
    if (!ins)
        return;
    free(ins->cls);
    free(ins->boxes);
    free(ins->poly_start);
    free(ins->poly_xy);
    free(ins->kpts);
    int kc = ins->kpt_count, kd = ins->kpt_dims;
    yolo_instances_init(ins, kc, kd);
}

void yolo_instances_clear(yolo_instances *ins) {
    ins->n = 0;
    if (ins->poly_start)
        ins->poly_start[0] = 0;
}

int yolo_instances_poly_points(const yolo_instances *ins) {
    return ins->poly_start ? ins->poly_start[ins->n] : 0;
}

static yolo_status grow_instances(yolo_instances *ins, int need) {
    if (need <= ins->cap)
        return YOLO_OK;
    int cap = ins->cap ? ins->cap : 8;
    while (cap < need)
        cap *= 2;
    int32_t *cls = realloc(ins->cls, (size_t)cap * sizeof *cls);
    if (cls)
        ins->cls = cls;
    float *boxes = realloc(ins->boxes, (size_t)cap * 4 * sizeof *boxes);
    if (boxes)
        ins->boxes = boxes;
    int32_t *ps = ins->poly_start;
    if (ps) {
        ps = realloc(ins->poly_start, ((size_t)cap + 1) * sizeof *ps);
        if (ps)
            ins->poly_start = ps;
    }
    float *kpts = ins->kpts;
    size_t kn = (size_t)ins->kpt_count * (size_t)ins->kpt_dims;
    if (kn) {
        kpts = realloc(ins->kpts, (size_t)cap * kn * sizeof *kpts);
        if (kpts)
            ins->kpts = kpts;
    }
    if (!cls || !boxes || (ins->poly_start && !ps) || (kn && !kpts))
        return yolo_error(YOLO_ERR_NOMEM, "instances: cannot grow to %d", cap);
    ins->cap = cap;
    return YOLO_OK;
}

static yolo_status grow_points(yolo_instances *ins, int need) {
    if (!ins->poly_start) {
        /* Polygons appear: give every earlier instance 0 points. */
        ins->poly_start = calloc((size_t)(ins->cap > 0 ? ins->cap : 8) + 1, sizeof(int32_t));
        if (!ins->poly_start)
            return yolo_error(YOLO_ERR_NOMEM, "instances: polygon index");
        if (ins->cap == 0 && grow_instances(ins, 8) != YOLO_OK)
            return YOLO_ERR_NOMEM;
    }
    if (need <= ins->poly_cap)
        return YOLO_OK;
    int cap = ins->poly_cap ? ins->poly_cap : 64;
    while (cap < need)
        cap *= 2;
    float *xy = realloc(ins->poly_xy, (size_t)cap * 2 * sizeof *xy);
    if (!xy)
        return yolo_error(YOLO_ERR_NOMEM, "instances: cannot grow polygons to %d points", cap);
    ins->poly_xy = xy;
    ins->poly_cap = cap;
    return YOLO_OK;
}

yolo_status yolo_instances_add(yolo_instances *ins, int32_t cls, const float box[4],
                               const float *poly_xy, int n_points, const float *kpts) {
    if (n_points < 0 || (n_points > 0 && !poly_xy) || (!box && n_points < 1))
        return yolo_error(YOLO_ERR_ARG, "yolo_instances_add: need a box or a polygon");
    if (ins->kpt_count > 0 && !kpts)
        return yolo_error(YOLO_ERR_ARG, "yolo_instances_add: keypoints required (%d per instance)",
                          ins->kpt_count);
    yolo_status st = grow_instances(ins, ins->n + 1);
    if (st != YOLO_OK)
        return st;
    int total = yolo_instances_poly_points(ins);
    if (n_points > 0 || ins->poly_start) {
        st = grow_points(ins, total + n_points);
        if (st != YOLO_OK)
            return st;
        memcpy(ins->poly_xy + 2 * (size_t)total, poly_xy, (size_t)n_points * 2 * sizeof(float));
        ins->poly_start[ins->n + 1] = total + n_points;
    }
    int k = ins->n;
    ins->cls[k] = cls;
    if (box) {
        memcpy(ins->boxes + 4 * k, box, 4 * sizeof(float));
    } else {
        float x0 = poly_xy[0], x1 = poly_xy[0], y0 = poly_xy[1], y1 = poly_xy[1];
        for (int i = 1; i < n_points; i++) {
            float x = poly_xy[2 * i], y = poly_xy[2 * i + 1];
            x0 = x < x0 ? x : x0;
            x1 = x > x1 ? x : x1;
            y0 = y < y0 ? y : y0;
            y1 = y > y1 ? y : y1;
        }
        float *b = ins->boxes + 4 * k;
        b[0] = 0.5f * (x0 + x1);
        b[1] = 0.5f * (y0 + y1);
        b[2] = x1 - x0;
        b[3] = y1 - y0;
    }
    size_t kn = (size_t)ins->kpt_count * (size_t)ins->kpt_dims;
    if (kn)
        memcpy(ins->kpts + (size_t)k * kn, kpts, kn * sizeof(float));
    ins->n++;
    return YOLO_OK;
}

yolo_status yolo_instances_append(yolo_instances *dst, const yolo_instances *src) {
    if (src->kpt_count != dst->kpt_count || (src->kpt_count && src->kpt_dims != dst->kpt_dims))
        return yolo_error(YOLO_ERR_ARG, "yolo_instances_append: keypoint layouts differ (%dx%d vs %dx%d)",
                          src->kpt_count, src->kpt_dims, dst->kpt_count, dst->kpt_dims);
    size_t kn = (size_t)src->kpt_count * (size_t)src->kpt_dims;
    for (int k = 0; k < src->n; k++) {
        int p0 = src->poly_start ? src->poly_start[k] : 0;
        int np = src->poly_start ? src->poly_start[k + 1] - p0 : 0;
        yolo_status st = yolo_instances_add(dst, src->cls[k], src->boxes + 4 * k,
                                            np ? src->poly_xy + 2 * (size_t)p0 : NULL, np,
                                            kn ? src->kpts + k * kn : NULL);
        if (st != YOLO_OK)
            return st;
    }
    return YOLO_OK;
}
