/* copy_paste (Ultralytics' CopyPaste), unit and pipeline:
 *   - flip mode pastes the mirrored instances that overlap no instance by
 *     ioa >= 0.30: classes kept, polygons mirrored (x -> W - x), and the
 *     pixels inside the pasted polygons are the mirror image's, the rest
 *     untouched; round(p * candidates) of them (half to even), least
 *     overlapping first; a centred instance (its mirror overlaps it) and
 *     an image without polygons get nothing;
 *   - mixup mode pastes another image's instances with its pixels;
 *   - in the detect pipeline (letterbox path, no warp) copy_paste=1 adds
 *     the mirrored instances, the record counts them, mosaic closed
 *     (close_mosaic) turns it off, the mosaic path and the mixup mode add
 *     instances too, and a run is bit-identical for a fixed seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/augment.h"
#include "data/image.h"
#include "data/instance_ops.h"
#include "aug_tiles.h"
#include "test_util.h"

#define W 160
#define H 120
#define N_TILES 3

/* Tile t: a square at the left (class 10 t), a small triangle at the top
 * right (class 10 t + 1), and for tile 2 a centred square (class 29),
 * which its mirror overlaps. Pixels: a gradient, so mirrored pixels differ. */
typedef aug_tiles fixture;

static void add_poly(yolo_instances *ins, int cls, const float *px, int n, bool normalize) {
    float xy[16];
    for (int i = 0; i < n; i++)
        xy[2 * i] = normalize ? px[2 * i] / W : px[2 * i], xy[2 * i + 1] = normalize ? px[2 * i + 1] / H : px[2 * i + 1];
    CHECK(yolo_instances_add(ins, cls, NULL, xy, n, NULL) == YOLO_OK);
}

static void make_fixture(fixture *f) {
    f->n = N_TILES;
    for (int t = 0; t < N_TILES; t++) {
        yolo_image *im = &f->images[t];
        yolo_image_alloc(im, W, H);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                uint8_t *p = im->data + 3 * ((size_t)y * W + x);
                p[0] = (uint8_t)(x + 40 * t), p[1] = (uint8_t)(2 * y), p[2] = (uint8_t)(x ^ y);
            }
        yolo_instances_init(&f->labels[t], 0, 0);
        const float square[8] = {10, 40, 50, 40, 50, 80, 10, 80};
        const float tri[6] = {120, 10, 150, 10, 135, 30};
        add_poly(&f->labels[t], 10 * t, square, 4, true);
        add_poly(&f->labels[t], 10 * t + 1, tri, 3, true);
        if (t == 2) {
            const float centre[8] = {70, 50, 90, 50, 90, 70, 70, 70};
            add_poly(&f->labels[t], 29, centre, 4, true);
        }
    }
}

/* A pixel copy of tile t with its instances in pixels. */
static void pixel_copy(const fixture *f, int t, yolo_image *img, yolo_instances *ins) {
    yolo_image_alloc(img, W, H);
    memcpy(img->data, f->images[t].data, (size_t)W * H * 3);
    yolo_instances_init(ins, 0, 0);
    CHECK(yolo_instances_append(ins, &f->labels[t]) == YOLO_OK);
    yolo_ins_to_pixels(ins, W, H);
}

static void test_flip_unit(const fixture *f) {
    yolo_image img;
    yolo_instances ins;
    pixel_copy(f, 0, &img, &ins);
    int pasted = -1;
    CHECK(yolo_copy_paste(1.0f, &img, &ins, NULL, NULL, &pasted) == YOLO_OK);
    CHECK_MSG(pasted == 2 && ins.n == 4, "flip p=1: %d pasted, %d instances", pasted, ins.n);
    uint8_t *mask = calloc((size_t)W * H, 1);
    for (int k = 2; k < ins.n && ins.n == 4; k++) {
        int j = k - 2, p0 = ins.poly_start[k], m = ins.poly_start[k + 1] - p0, q0 = ins.poly_start[j];
        CHECK(ins.cls[k] == ins.cls[j] && m == ins.poly_start[j + 1] - q0);
        for (int i = 0; i < m; i++)
            CHECK_MSG(ins.poly_xy[2 * (p0 + i)] == W - ins.poly_xy[2 * (q0 + i)] &&
                          ins.poly_xy[2 * (p0 + i) + 1] == ins.poly_xy[2 * (q0 + i) + 1],
                      "instance %d point %d is not the mirror of instance %d's", k, i, j);
        CHECK(ins.boxes[4 * k] == W - ins.boxes[4 * j + 2] && ins.boxes[4 * k + 2] == W - ins.boxes[4 * j]);
        yolo_polygon_fill(ins.poly_xy + 2 * (size_t)p0, m, mask, W, H, 1);
    }
    long inside = 0, mirrored = 0, kept = 0, outside = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *now = img.data + 3 * ((size_t)y * W + x);
            if (mask[y * W + x]) {
                inside++;
                mirrored += memcmp(now, f->images[0].data + 3 * ((size_t)y * W + W - 1 - x), 3) == 0;
            } else {
                outside++;
                kept += memcmp(now, f->images[0].data + 3 * ((size_t)y * W + x), 3) == 0;
            }
        }
    CHECK_MSG(inside > 1000 && mirrored == inside && kept == outside,
              "pasted pixels: %ld inside (%ld mirrored), %ld of %ld outside kept", inside, mirrored, kept, outside);
    free(mask);
    yolo_image_free(&img), yolo_instances_free(&ins);

    /* p = 0.5 of 2 candidates: round(1.0) = 1, the least overlapping first (a tie: the first) */
    pixel_copy(f, 0, &img, &ins);
    CHECK(yolo_copy_paste(0.5f, &img, &ins, NULL, NULL, &pasted) == YOLO_OK);
    CHECK_MSG(pasted == 1 && ins.n == 3 && ins.cls[2] == 0, "p=0.5: %d pasted, class %d", pasted, ins.cls[2]);
    yolo_image_free(&img), yolo_instances_free(&ins);
    /* p = 0.25 of 2: round(0.5) = 0 (half to even, as Python) */
    pixel_copy(f, 0, &img, &ins);
    CHECK(yolo_copy_paste(0.25f, &img, &ins, NULL, NULL, &pasted) == YOLO_OK && pasted == 0 && ins.n == 2);
    CHECK(memcmp(img.data, f->images[0].data, (size_t)W * H * 3) == 0);
    yolo_image_free(&img), yolo_instances_free(&ins);

    /* tile 2: the centred square overlaps its own mirror, and the mirrored
     * square/triangle do not overlap it: 2 of 3 pasted */
    pixel_copy(f, 2, &img, &ins);
    CHECK(yolo_copy_paste(1.0f, &img, &ins, NULL, NULL, &pasted) == YOLO_OK);
    CHECK_MSG(pasted == 2 && ins.n == 5 && ins.cls[3] != 29 && ins.cls[4] != 29, "centred: %d pasted", pasted);
    yolo_image_free(&img), yolo_instances_free(&ins);

    /* boxes only (a detect dataset): nothing to paste */
    pixel_copy(f, 0, &img, &ins);
    yolo_instances boxes;
    yolo_instances_init(&boxes, 0, 0);
    for (int k = 0; k < ins.n; k++)
        yolo_instances_add(&boxes, ins.cls[k], ins.boxes + 4 * k, NULL, 0, NULL);
    CHECK(yolo_copy_paste(1.0f, &img, &boxes, NULL, NULL, &pasted) == YOLO_OK && pasted == 0 && boxes.n == 2);
    yolo_instances_free(&boxes);
    yolo_image_free(&img), yolo_instances_free(&ins);
}

/* mixup mode's core: another image's instances, with its pixels. */
static void test_source_unit(const fixture *f) {
    yolo_image img, other;
    yolo_instances ins, theirs;
    pixel_copy(f, 0, &img, &ins);
    pixel_copy(f, 1, &other, &theirs);
    /* in place, tile 1's square and triangle cover tile 0's: no candidate */
    int pasted = -1;
    CHECK(yolo_copy_paste(1.0f, &img, &ins, &other, &theirs, &pasted) == YOLO_OK && pasted == 0 && ins.n == 2);
    /* its square alone, moved right by 60 (x 70..110), overlaps nothing: pasted with tile 1's pixels */
    const bool keep[2] = {true, false};
    yolo_ins_filter(&theirs, keep);
    yolo_ins_affine_axis(&theirs, 1, 1, 60, 0);
    CHECK(yolo_copy_paste(1.0f, &img, &ins, &other, &theirs, &pasted) == YOLO_OK);
    CHECK_MSG(pasted == 1 && ins.n == 3 && ins.cls[2] == 10, "source: %d pasted, class %d", pasted,
              ins.n > 2 ? ins.cls[2] : -1);
    const uint8_t *at = img.data + 3 * ((size_t)60 * W + 90), *want = other.data + 3 * ((size_t)60 * W + 90);
    const uint8_t *left = img.data + 3 * ((size_t)60 * W + 30), *was = f->images[0].data + 3 * ((size_t)60 * W + 30);
    CHECK(memcmp(at, want, 3) == 0 && memcmp(at, f->images[0].data + 3 * ((size_t)60 * W + 90), 3) != 0);
    CHECK(memcmp(left, was, 3) == 0);
    yolo_image_free(&img), yolo_instances_free(&ins);
    yolo_image_free(&other), yolo_instances_free(&theirs);
}

static void params(yolo_augment_params *p) {
    yolo_augment_defaults(p);
    p->imgsz = 160;
    p->hsv_h = p->hsv_s = p->hsv_v = 0;
    p->translate = p->scale = 0;
    p->fliplr = 0;
    p->mosaic = 0;
    p->poly_resample = 0;
}

static yolo_status run(fixture *f, const yolo_augment_params *p, bool mosaic_on, int64_t index, yolo_aug_output *o) {
    yolo_aug_source src = aug_tiles_source(f);
    memset(o, 0, sizeof *o);
    yolo_instances_init(&o->instances, 0, 0);
    return yolo_augment_detect(p, true, mosaic_on, 99, 0, index, NULL, &src, o);
}

static void free_output(yolo_aug_output *o) {
    yolo_image_free(&o->image);
    yolo_instances_free(&o->instances);
}

static void test_pipeline(fixture *f) {
    yolo_augment_params p;
    params(&p);
    yolo_aug_output off, on, again, closed;
    CHECK(run(f, &p, true, 0, &off) == YOLO_OK);
    p.copy_paste = 1.0f;
    CHECK(run(f, &p, true, 0, &on) == YOLO_OK);
    CHECK(run(f, &p, true, 0, &again) == YOLO_OK);
    CHECK(run(f, &p, false, 0, &closed) == YOLO_OK);
    CHECK_MSG(off.instances.n == 2 && on.instances.n == 4 && on.record.copy_pasted == 2 && off.record.copy_pasted == 0,
              "copy_paste=1: %d -> %d instances (record %d)", off.instances.n, on.instances.n, on.record.copy_pasted);
    CHECK_MSG(closed.instances.n == 2 && closed.record.copy_pasted == 0, "close_mosaic: %d instances", closed.instances.n);
    CHECK(memcmp(off.image.data, closed.image.data, (size_t)160 * 160 * 3) == 0);
    CHECK(memcmp(on.image.data, again.image.data, (size_t)160 * 160 * 3) == 0 && again.instances.n == on.instances.n);
    CHECK(memcmp(on.image.data, off.image.data, (size_t)160 * 160 * 3) != 0);
    /* the pasted polygons are the mirrored ones: in the letterboxed output
     * (the 160 x 120 tile centred at top 20), x_pasted = 160 - x_original */
    for (int k = 2; k < on.instances.n && on.instances.n == 4; k++) {
        const yolo_instances *ins = &on.instances;
        int j = k - 2, p0 = ins->poly_start[k], q0 = ins->poly_start[j];
        for (int i = 0; i < ins->poly_start[k + 1] - p0; i++)
            CHECK_MSG(fabsf(ins->poly_xy[2 * (p0 + i)] * 160 - (160 - ins->poly_xy[2 * (q0 + i)] * 160)) < 1e-3f &&
                          fabsf(ins->poly_xy[2 * (p0 + i) + 1] - ins->poly_xy[2 * (q0 + i) + 1]) < 1e-6f,
                      "pipeline: instance %d point %d not mirrored", k, i);
    }
    free_output(&off), free_output(&on), free_output(&again), free_output(&closed);

    /* on the mosaic canvas, and from another sample (mixup mode): more instances than without */
    for (int mode = 0; mode < 2; mode++) {
        params(&p);
        p.mosaic = 1;
        p.copy_paste_mode = mode ? YOLO_COPY_PASTE_MIXUP : YOLO_COPY_PASTE_FLIP;
        int pasted = 0, more = 0;
        for (int64_t i = 0; i < N_TILES; i++) {
            p.copy_paste = 0;
            CHECK(run(f, &p, true, i, &off) == YOLO_OK);
            p.copy_paste = 1;
            CHECK(run(f, &p, true, i, &on) == YOLO_OK);
            pasted += on.record.copy_pasted;
            more += on.instances.n > off.instances.n;
            if (mode == 1) /* the partner's draws come after the sample's: the warp is the same */
                CHECK(on.record.degrees == off.record.degrees && on.record.mosaic_center[0] == off.record.mosaic_center[0]);
            free_output(&off), free_output(&on);
        }
        CHECK_MSG(pasted > 0 && more > 0, "%s mode on the mosaic: %d pasted, %d samples with more instances",
                  mode ? "mixup" : "flip", pasted, more);
    }
}

int main(void) {
    fixture f;
    make_fixture(&f);
    test_flip_unit(&f);
    test_source_unit(&f);
    test_pipeline(&f);
    aug_tiles_free(&f);
    return test_result("test_augment_copy_paste");
}
