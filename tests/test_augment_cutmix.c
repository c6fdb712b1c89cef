/* CutMix (Ultralytics 8.3's CutMix), unit and pipeline:
 *   - over many draws: the pasted pixels form one rectangle, which overlaps
 *     none of the image's boxes; inside it the pixels are the partner's,
 *     outside the image's own; the appended instances are exactly the
 *     partner's that overlap it by ioa >= 0.1 (0.01 with polygons), with
 *     their classes, clipped to it; a draw that pastes nothing changes
 *     nothing;
 *   - an image whose box covers it all has no free region: never applied;
 *   - in the detect pipeline: cutmix=1 pastes in some samples and says so in
 *     the record, cutmix=0 and a closed mosaic (close_mosaic) never do, and
 *     a run is bit-identical for a fixed seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/augment.h"
#include "data/image.h"
#include "data/instance_ops.h"
#include "data/rng.h"
#include "aug_tiles.h"
#include "test_util.h"

#define W 96
#define H 64
#define N_TILES 4

static void fill(yolo_image *img, int salt) {
    yolo_image_alloc(img, W, H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *p = img->data + 3 * ((size_t)y * W + x);
            p[0] = (uint8_t)(x + salt), p[1] = (uint8_t)(3 * y + salt), p[2] = (uint8_t)(salt ^ 0x5a);
        }
}

static void add_box(yolo_instances *ins, int cls, float x1, float y1, float x2, float y2) {
    const float box[4] = {x1, y1, x2, y2};
    CHECK(yolo_instances_add(ins, cls, box, NULL, 0, NULL) == YOLO_OK);
}

/* The bounding rectangle of the pixels where a and b differ; false if none. */
static bool changed_rect(const yolo_image *a, const yolo_image *b, int r[4]) {
    r[0] = W, r[1] = H, r[2] = 0, r[3] = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (memcmp(a->data + 3 * ((size_t)y * W + x), b->data + 3 * ((size_t)y * W + x), 3) != 0) {
                if (x < r[0]) r[0] = x;
                if (y < r[1]) r[1] = y;
                if (x + 1 > r[2]) r[2] = x + 1;
                if (y + 1 > r[3]) r[3] = y + 1;
            }
    return r[2] > r[0];
}

static void test_unit(void) {
    yolo_image base, partner;
    fill(&base, 0);
    fill(&partner, 100); /* differs from base at every pixel */
    yolo_instances own, theirs;
    yolo_instances_init(&own, 0, 0);
    yolo_instances_init(&theirs, 0, 0);
    add_box(&own, 1, 4, 4, 20, 20);
    add_box(&theirs, 7, 0, 0, W, H);     /* covers it all: kept when the region is >= 10% of the image */
    add_box(&theirs, 8, 60, 30, 90, 60); /* the lower right */
    add_box(&theirs, 9, 40, 2, 44, 6);   /* small, near the top */
    int applied_draws = 0;
    for (uint32_t seed = 0; seed < 300; seed++) {
        yolo_rng rng, again_rng;
        yolo_rng_init(&rng, seed, YOLO_RNG_USER, 0, 0);
        again_rng = rng;
        yolo_image img;
        fill(&img, 0);
        yolo_instances ins;
        yolo_instances_init(&ins, 0, 0);
        CHECK(yolo_instances_append(&ins, &own) == YOLO_OK);
        bool applied = false;
        CHECK(yolo_cutmix(&rng, &img, &ins, &partner, &theirs, &applied) == YOLO_OK);
        int r[4];
        bool changed = changed_rect(&img, &base, r);
        if (!applied) {
            CHECK_MSG(!changed && ins.n == 1, "seed %u: nothing applied but %d instances, pixels changed %d", seed,
                      ins.n, changed);
        } else {
            applied_draws++;
            /* the region: free of the image's box; the partner's pixels inside, the image's outside */
            const float region[4] = {(float)r[0], (float)r[1], (float)r[2], (float)r[3]};
            CHECK_MSG(yolo_box_ioa(region, own.boxes) <= 0, "seed %u: region [%d %d %d %d] covers the image's box",
                      seed, r[0], r[1], r[2], r[3]);
            for (int y = r[1]; y < r[3]; y++)
                for (int x = r[0]; x < r[2]; x++)
                    if (memcmp(img.data + 3 * ((size_t)y * W + x), partner.data + 3 * ((size_t)y * W + x), 3)) {
                        CHECK_MSG(0, "seed %u: pixel (%d, %d) inside the region is not the partner's", seed, x, y);
                        y = H, x = W;
                    }
            /* the appended instances: the partner's with ioa >= 0.1, in order, clipped to the region */
            int k = 1;
            for (int j = 0; j < theirs.n; j++) {
                if (yolo_box_ioa(region, theirs.boxes + 4 * j) < 0.1f) continue;
                CHECK_MSG(k < ins.n && ins.cls[k] == theirs.cls[j], "seed %u: partner instance %d (class %d) missing",
                          seed, j, theirs.cls[j]);
                for (int c = 0; k < ins.n && c < 4; c++) {
                    float lo = c % 2 ? region[1] : region[0], hi = c % 2 ? region[3] : region[2];
                    float want = fminf(fmaxf(theirs.boxes[4 * j + c], lo), hi);
                    CHECK_MSG(fabsf(ins.boxes[4 * k + c] - want) < 1e-4f, "seed %u: instance %d coordinate %d %g, want %g",
                              seed, k, c, ins.boxes[4 * k + c], want);
                }
                k++;
            }
            CHECK_MSG(k == ins.n, "seed %u: %d instances, expected %d", seed, ins.n, k);
            CHECK(ins.cls[0] == 1 && ins.n >= 2); /* its own first, then at least one of the partner's */
        }
        /* the same draws give the same result */
        yolo_image img2;
        fill(&img2, 0);
        yolo_instances ins2;
        yolo_instances_init(&ins2, 0, 0);
        CHECK(yolo_instances_append(&ins2, &own) == YOLO_OK);
        bool applied2 = false;
        CHECK(yolo_cutmix(&again_rng, &img2, &ins2, &partner, &theirs, &applied2) == YOLO_OK);
        CHECK(applied2 == applied && ins2.n == ins.n && memcmp(img.data, img2.data, (size_t)W * H * 3) == 0);
        yolo_image_free(&img), yolo_image_free(&img2);
        yolo_instances_free(&ins), yolo_instances_free(&ins2);
    }
    CHECK_MSG(applied_draws > 50 && applied_draws < 300, "%d of 300 draws applied", applied_draws);

    /* no free region: the image's own box covers it */
    yolo_instances full;
    yolo_instances_init(&full, 0, 0);
    add_box(&full, 3, 0, 0, W, H);
    for (uint32_t seed = 0; seed < 50; seed++) {
        yolo_rng rng;
        yolo_rng_init(&rng, seed, YOLO_RNG_USER, 1, 0);
        yolo_image img;
        fill(&img, 0);
        bool applied = true;
        CHECK(yolo_cutmix(&rng, &img, &full, &partner, &theirs, &applied) == YOLO_OK);
        CHECK(!applied && full.n == 1 && memcmp(img.data, base.data, (size_t)W * H * 3) == 0);
        yolo_image_free(&img);
    }
    /* a partner of another size is an error, not a crash */
    yolo_image small;
    yolo_image_alloc(&small, W / 2, H);
    bool applied = true;
    yolo_rng rng;
    yolo_rng_init(&rng, 1, YOLO_RNG_USER, 2, 0);
    CHECK(yolo_cutmix(&rng, &base, &own, &small, &theirs, &applied) == YOLO_ERR_ARG && !applied &&
          test_error_mentions("cutmix"));
    yolo_image_free(&small);
    yolo_instances_free(&full);
    yolo_image_free(&base), yolo_image_free(&partner);
    yolo_instances_free(&own), yolo_instances_free(&theirs);
}

/* ---- pipeline ---- */

static yolo_status run(aug_tiles *f, float cutmix, bool mosaic_on, uint64_t seed, int64_t index, yolo_aug_output *o) {
    yolo_augment_params p;
    yolo_augment_defaults(&p);
    p.imgsz = 96, p.mosaic = 0, p.cutmix = cutmix;
    yolo_aug_source src = aug_tiles_source(f);
    memset(o, 0, sizeof *o);
    yolo_instances_init(&o->instances, 0, 0);
    return yolo_augment_detect(&p, true, mosaic_on, seed, 0, index, NULL, &src, o);
}

static void free_output(yolo_aug_output *o) {
    yolo_image_free(&o->image);
    yolo_instances_free(&o->instances);
}

static void test_pipeline(void) {
    aug_tiles f = {.n = N_TILES};
    for (int t = 0; t < N_TILES; t++) {
        fill(&f.images[t], 40 * t);
        yolo_instances_init(&f.labels[t], 0, 0);
        /* two boxes per tile at places that depend on the tile (pixel xyxy, then normalized as tiles are) */
        add_box(&f.labels[t], t, (0.1f + 0.2f * (float)t) * W, 0.2f * H, (0.25f + 0.2f * (float)t) * W, 0.5f * H);
        add_box(&f.labels[t], 10 + t, 0.05f * W, (0.6f + 0.1f * (float)t) * H, 0.3f * W, 0.95f * H);
        yolo_ins_to_normalized(&f.labels[t], W, H);
    }
    int pasted = 0, more = 0, runs = 0;
    for (uint64_t seed = 0; seed < 8; seed++)
        for (int64_t i = 0; i < N_TILES; i++, runs++) {
            yolo_aug_output off, on, again, closed;
            CHECK(run(&f, 0, true, seed, i, &off) == YOLO_OK);
            CHECK(run(&f, 1, true, seed, i, &on) == YOLO_OK);
            CHECK(run(&f, 1, true, seed, i, &again) == YOLO_OK);
            CHECK(run(&f, 1, false, seed, i, &closed) == YOLO_OK);
            CHECK(off.record.cutmix == 0 && closed.record.cutmix == 0);
            CHECK(closed.instances.n == off.instances.n &&
                  memcmp(closed.image.data, off.image.data, (size_t)96 * 96 * 3) == 0);
            CHECK(again.record.cutmix == on.record.cutmix && again.instances.n == on.instances.n &&
                  memcmp(again.image.data, on.image.data, (size_t)96 * 96 * 3) == 0);
            pasted += on.record.cutmix;
            more += on.instances.n > off.instances.n;
            CHECK_MSG(on.record.cutmix || on.instances.n == off.instances.n, "seed %llu sample %lld: instances added "
                      "without CutMix", (unsigned long long)seed, (long long)i);
            free_output(&off), free_output(&on), free_output(&again), free_output(&closed);
        }
    CHECK_MSG(pasted > 0 && more > 0, "cutmix=1: %d of %d samples pasted, %d with more instances", pasted, runs, more);
    aug_tiles_free(&f);
}

int main(void) {
    test_unit();
    test_pipeline();
    return test_result("test_augment_cutmix");
}
