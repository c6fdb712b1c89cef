/* Image and instances move together under every geometric augmentation:
 * shapes are painted in unique colours, each augmentation is applied, and
 * the pixels of each colour are compared with the rasterized polygons of
 * that class (IoU), each box with its polygon's extent, each keypoint with
 * its polygon's first vertex, and box-only instances must contain their
 * pixels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/augment.h"
#include "data/image.h"
#include "data/rng.h"
#include "test_util.h"

#define N_TILES 4
#define N_COLOURS 8
static const uint8_t palette[N_COLOURS][3] = {{255, 0, 0},   {0, 255, 0},   {0, 0, 255},     {255, 255, 0},
                                               {255, 0, 255}, {0, 255, 255}, {255, 255, 255}, {255, 128, 0}};

typedef struct fixture {
    yolo_image images[N_TILES];
    yolo_instances with_poly[N_TILES], boxes_only[N_TILES];
    bool use_poly;
    int64_t order[N_TILES], position[N_TILES];
} fixture;

static yolo_status acquire(void *ctx, int64_t i, yolo_aug_tile *t) {
    fixture *f = ctx;
    t->image = &f->images[i];
    t->labels = f->use_poly ? &f->with_poly[i] : &f->boxes_only[i];
    t->orig_width = f->images[i].width;
    t->orig_height = f->images[i].height;
    t->image_class = -1;
    return YOLO_OK;
}
static void release(void *ctx, int64_t i) { (void)ctx, (void)i; }

static void make_fixture(fixture *f) {
    static const int sizes[N_TILES][2] = {{200, 150}, {150, 200}, {180, 180}, {200, 120}};
    for (int t = 0; t < N_TILES; t++) {
        int w = sizes[t][0], h = sizes[t][1];
        yolo_image_alloc(&f->images[t], w, h);
        yolo_image_fill(&f->images[t], 0);
        yolo_instances_init(&f->with_poly[t], 1, 3);
        yolo_instances_init(&f->boxes_only[t], 1, 3);
        f->order[t] = f->position[t] = t;
        for (int k = 0; k < 2; k++) {
            int c = 2 * t + k;
            /* a triangle (k=0) or a pentagon (k=1) */
            int n = k ? 5 : 3;
            double cx = (k ? 0.68 : 0.32) * w, cy = (k ? 0.6 : 0.4) * h, r = 0.22 * (w < h ? w : h);
            float px[10], norm[10];
            for (int i = 0; i < n; i++) {
                double a = 2 * M_PI * i / n + 0.3 * t;
                px[2 * i] = (float)(cx + r * cos(a));
                px[2 * i + 1] = (float)(cy + r * sin(a));
                norm[2 * i] = px[2 * i] / w;
                norm[2 * i + 1] = px[2 * i + 1] / h;
            }
            uint8_t *mask = calloc((size_t)w * h, 1);
            yolo_polygon_fill(px, n, mask, w, h, 1);
            for (int p = 0; p < w * h; p++)
                if (mask[p])
                    memcpy(f->images[t].data + 3 * (size_t)p, palette[c], 3);
            free(mask);
            float kpt[3] = {norm[0], norm[1], 2};
            yolo_instances_add(&f->with_poly[t], c, NULL, norm, n, kpt);
            yolo_instances_add(&f->boxes_only[t], c, f->with_poly[t].boxes + 4 * k, NULL, 0, kpt);
        }
    }
}

static void free_fixture(fixture *f) {
    for (int t = 0; t < N_TILES; t++) {
        yolo_image_free(&f->images[t]);
        yolo_instances_free(&f->with_poly[t]);
        yolo_instances_free(&f->boxes_only[t]);
    }
}

/* Pixels whose nearest palette colour is c, within a margin (edges blend). */
static int nearest_colour(const uint8_t *p) {
    int best = -1, bd = 1 << 30;
    for (int c = 0; c < N_COLOURS; c++) {
        int d = 0;
        for (int k = 0; k < 3; k++)
            d += abs(p[k] - palette[c][k]);
        if (d < bd)
            bd = d, best = c;
    }
    return bd <= 90 ? best : -1;
}

static double iou_masks(const uint8_t *a, const uint8_t *b, size_t n, long *area_a, long *area_b) {
    long inter = 0, uni = 0, na = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        inter += a[i] && b[i];
        uni += a[i] || b[i];
        na += a[i] != 0;
        nb += b[i] != 0;
    }
    *area_a = na, *area_b = nb;
    return uni ? (double)inter / uni : 1.0;
}

static int checked_classes;

static void check_output(const char *name, const yolo_aug_output *o, bool polys) {
    int s = o->image.width, h = o->image.height;
    size_t n = (size_t)s * h;
    const yolo_instances *ins = &o->instances;
    uint8_t *pix = malloc(n), *poly = malloc(n);
    for (int c = 0; c < N_COLOURS; c++) {
        memset(poly, 0, n);
        int count = 0;
        for (int j = 0; j < ins->n; j++) {
            if (ins->cls[j] != c)
                continue;
            count++;
            const float *b = ins->boxes + 4 * j;
            float x0 = (b[0] - b[2] / 2) * s, x1 = (b[0] + b[2] / 2) * s, y0 = (b[1] - b[3] / 2) * h, y1 = (b[1] + b[3] / 2) * h;
            CHECK_MSG(x0 >= -1e-3f && y0 >= -1e-3f && x1 <= s + 1e-3f && y1 <= h + 1e-3f, "%s: box outside the image", name);
            if (polys) {
                int p0 = ins->poly_start[j], p1 = ins->poly_start[j + 1];
                float px[2 * 1000 + 2];
                float ex0 = 1e9f, ey0 = 1e9f, ex1 = -1e9f, ey1 = -1e9f;
                int m = p1 - p0 > 1000 ? 1000 : p1 - p0;
                for (int i = 0; i < m; i++) {
                    px[2 * i] = ins->poly_xy[2 * (p0 + i)] * s;
                    px[2 * i + 1] = ins->poly_xy[2 * (p0 + i) + 1] * h;
                    ex0 = fminf(ex0, px[2 * i]), ex1 = fmaxf(ex1, px[2 * i]);
                    ey0 = fminf(ey0, px[2 * i + 1]), ey1 = fmaxf(ey1, px[2 * i + 1]);
                }
                yolo_polygon_fill(px, m, poly, s, h, 1);
                /* the box is the polygon's extent */
                CHECK_MSG(fabsf(ex0 - x0) < 0.05f && fabsf(ex1 - x1) < 0.05f && fabsf(ey0 - y0) < 0.05f && fabsf(ey1 - y1) < 0.05f,
                          "%s: class %d box (%.1f %.1f %.1f %.1f) vs polygon extent (%.1f %.1f %.1f %.1f)", name, c, x0, y0, x1,
                          y1, ex0, ey0, ex1, ey1);
                /* the keypoint sits on the polygon's first vertex when both are inside */
                const float *kp = ins->kpts + 3 * j;
                float vx = px[0], vy = px[1];
                bool vertex_inside = vx > 0.01f && vy > 0.01f && vx < s - 0.01f && vy < h - 0.01f;
                if (kp[2] > 0 && vertex_inside)
                    CHECK_MSG(fabsf(kp[0] * s - vx) < 0.05f && fabsf(kp[1] * h - vy) < 0.05f,
                              "%s: class %d keypoint (%.2f %.2f) vs vertex (%.2f %.2f)", name, c, kp[0] * s, kp[1] * h, vx, vy);
            }
        }
        if (!polys) {
            /* box-only: the class's pixels lie in its boxes (slivers a filter dropped aside) */
            long total = 0, inside = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < s; x++) {
                    if (nearest_colour(o->image.data + 3 * ((size_t)y * s + x)) != c)
                        continue;
                    total++;
                    for (int j = 0; j < ins->n; j++) {
                        const float *b = ins->boxes + 4 * j;
                        if (ins->cls[j] == c && x + 0.5f >= (b[0] - b[2] / 2) * s - 1.5f && x + 0.5f <= (b[0] + b[2] / 2) * s + 1.5f &&
                            y + 0.5f >= (b[1] - b[3] / 2) * h - 1.5f && y + 0.5f <= (b[1] + b[3] / 2) * h + 1.5f) {
                            inside++;
                            break;
                        }
                    }
                }
            if (total >= 150) {
                checked_classes++;
                CHECK_MSG(inside >= 0.95 * total, "%s: class %d: %ld of %ld pixels inside its boxes", name, c, inside, total);
            }
            continue;
        }
        for (size_t i = 0; i < n; i++)
            pix[i] = nearest_colour(o->image.data + 3 * i) == c;
        long a_pix, a_poly;
        double iou = iou_masks(pix, poly, n, &a_pix, &a_poly);
        if (a_pix >= 150 || a_poly >= 150) {
            checked_classes++;
            CHECK_MSG(iou >= 0.8, "%s: class %d pixels %ld vs polygons %ld, IoU %.3f (%d instances)", name, c, a_pix, a_poly,
                      iou, count);
        }
    }
    free(pix), free(poly);
}

static void run_case(fixture *f, const char *name, const yolo_augment_params *p, bool augment, bool polys) {
    f->use_poly = polys;
    yolo_aug_source src = {f, acquire, release, f->order, f->position, N_TILES};
    for (int64_t i = 0; i < N_TILES; i++)
        for (int epoch = 0; epoch < 2; epoch++) {
            yolo_aug_output o;
            memset(&o, 0, sizeof o);
            yolo_instances_init(&o.instances, 1, 3);
            yolo_status st = yolo_augment_detect(p, augment, true, 1234, epoch, i, NULL, &src, &o);
            CHECK_MSG(st == YOLO_OK, "%s: %s", name, yolo_last_error());
            if (st == YOLO_OK) {
                CHECK(o.image.width == p->imgsz && o.image.height == p->imgsz);
                char label[96];
                snprintf(label, sizeof label, "%s%s (sample %lld, epoch %d)", name, polys ? "" : " boxes", (long long)i, epoch);
                check_output(label, &o, polys);
            }
            yolo_image_free(&o.image);
            yolo_instances_free(&o.instances);
        }
}

static void base_params(yolo_augment_params *p) {
    yolo_augment_defaults(p);
    p->imgsz = 192;
    p->hsv_h = p->hsv_s = p->hsv_v = 0;
    p->translate = p->scale = 0;
    p->fliplr = 0;
    p->mosaic = 0;
    p->poly_resample = 200;
}

int main(void) {
    fixture f;
    make_fixture(&f);
    yolo_augment_params p;
    for (int polys = 1; polys >= 0; polys--) {
        base_params(&p);
        run_case(&f, "letterbox", &p, false, polys);
        run_case(&f, "identity", &p, true, polys);
        base_params(&p), p.mosaic = 1;
        run_case(&f, "mosaic", &p, true, polys);
        base_params(&p), p.degrees = 45;
        run_case(&f, "rotate", &p, true, polys);
        base_params(&p), p.scale = 0.5f;
        run_case(&f, "scale", &p, true, polys);
        base_params(&p), p.shear = 20;
        run_case(&f, "shear", &p, true, polys);
        base_params(&p), p.translate = 0.3f;
        run_case(&f, "translate", &p, true, polys);
        base_params(&p), p.perspective = 0.001f;
        run_case(&f, "perspective", &p, true, polys);
        base_params(&p), p.flipud = 1;
        run_case(&f, "flipud", &p, true, polys);
        base_params(&p), p.fliplr = 1;
        run_case(&f, "fliplr", &p, true, polys);
        base_params(&p);
        p.mosaic = 1, p.degrees = 20, p.scale = 0.5f, p.shear = 10, p.translate = 0.1f, p.perspective = 0.0005f;
        p.flipud = 0.5f, p.fliplr = 0.5f;
        run_case(&f, "all", &p, true, polys);
    }
    CHECK_MSG(checked_classes > 150, "only %d class masks compared", checked_classes);
    /* mixup keeps both label sets: boxes still match polygons, the record says so */
    base_params(&p);
    p.mosaic = 1, p.mixup = 1;
    f.use_poly = true;
    yolo_aug_source src = {&f, acquire, release, f.order, f.position, N_TILES};
    yolo_aug_output o;
    memset(&o, 0, sizeof o);
    yolo_instances_init(&o.instances, 1, 3);
    CHECK(yolo_augment_detect(&p, true, true, 5, 0, 1, NULL, &src, &o) == YOLO_OK);
    CHECK(o.record.mixup == 1 && o.record.mixup_partner >= 0 && o.record.mixup_lambda > 0.2f && o.record.mixup_lambda < 0.8f);
    CHECK(o.instances.n >= 2);
    yolo_image_free(&o.image);
    /* with mosaic closed (close_mosaic), neither mosaic nor mixup happen */
    CHECK(yolo_augment_detect(&p, true, false, 5, 0, 1, NULL, &src, &o) == YOLO_OK);
    CHECK(o.record.mosaic == 0 && o.record.mixup == 0);
    yolo_image_free(&o.image);
    /* bgr=1: the same output with R and B swapped, same boxes; bgr=0 leaves the draws as they were */
    base_params(&p);
    p.degrees = 10;
    yolo_aug_output rgb, bgr;
    memset(&rgb, 0, sizeof rgb), memset(&bgr, 0, sizeof bgr);
    yolo_instances_init(&rgb.instances, 1, 3), yolo_instances_init(&bgr.instances, 1, 3);
    CHECK(yolo_augment_detect(&p, true, true, 7, 0, 2, NULL, &src, &rgb) == YOLO_OK);
    p.bgr = 1;
    CHECK(yolo_augment_detect(&p, true, true, 7, 0, 2, NULL, &src, &bgr) == YOLO_OK);
    int64_t pixels = (int64_t)rgb.image.width * rgb.image.height, swapped = 0, coloured = 0;
    CHECK(bgr.image.width == rgb.image.width && bgr.image.height == rgb.image.height && bgr.instances.n == rgb.instances.n);
    for (int64_t i = 0; i < pixels && bgr.image.width == rgb.image.width; i++) {
        const uint8_t *a = rgb.image.data + 3 * i, *b = bgr.image.data + 3 * i;
        swapped += a[0] == b[2] && a[1] == b[1] && a[2] == b[0];
        coloured += a[0] != a[2];
    }
    CHECK_MSG(swapped == pixels && coloured > 0, "bgr=1: %lld of %lld pixels swapped (%lld not grey)", (long long)swapped,
              (long long)pixels, (long long)coloured);
    yolo_image_free(&rgb.image), yolo_image_free(&bgr.image);
    yolo_instances_free(&rgb.instances), yolo_instances_free(&bgr.instances);
    yolo_instances_free(&o.instances);
    free_fixture(&f);
    return test_result("test_data_augment");
}
