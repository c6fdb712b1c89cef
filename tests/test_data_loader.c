/* Seeding and the loader: bit-identical batches for workers 0, 1 and 4;
 * 2-rank shards disjoint and covering, equal to the 1-rank batches; no
 * two samples with the same augmentation; seeds differ; mid-epoch resume;
 * close_mosaic; cache=ram; classification and validation batches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/fsutil.h"
#include "data/loader.h"
#include "data/sampler.h"
#include "data/shapes.h"
#include "data/warn.h"
#include "test_util.h"

#define IMGSZ 160
#define N_TRAIN 48

static char root[256];
static yolo_data_config cfg, cls_cfg;
static yolo_dataset *train, *cls_train;

/* A deep copy of the parts of a batch the tests compare. */
typedef struct snap {
    int n, side, n_ins, n_pts;
    uint8_t *images;
    int64_t *samples;
    yolo_aug_record *aug;
    int32_t *cls, *batch_idx, *image_class;
    float *boxes, *pts;
} snap;

static snap take(const yolo_batch *b) {
    snap s = {0};
    s.n = b->n, s.side = b->width, s.n_ins = b->instances.n, s.n_pts = yolo_instances_poly_points(&b->instances);
    size_t img = (size_t)b->n * 3 * b->width * b->height;
    s.images = malloc(img);
    memcpy(s.images, b->images, img);
    s.samples = malloc(sizeof(int64_t) * b->n);
    memcpy(s.samples, b->sample_index, sizeof(int64_t) * b->n);
    s.aug = malloc(sizeof(yolo_aug_record) * b->n);
    memcpy(s.aug, b->aug, sizeof(yolo_aug_record) * b->n);
    s.image_class = malloc(sizeof(int32_t) * b->n);
    memcpy(s.image_class, b->image_class, sizeof(int32_t) * b->n);
    s.cls = malloc(sizeof(int32_t) * (s.n_ins + 1));
    s.batch_idx = malloc(sizeof(int32_t) * (s.n_ins + 1));
    s.boxes = malloc(sizeof(float) * 4 * (s.n_ins + 1));
    s.pts = malloc(sizeof(float) * 2 * (s.n_pts + 1));
    if (s.n_ins) {
        memcpy(s.cls, b->instances.cls, sizeof(int32_t) * s.n_ins);
        memcpy(s.batch_idx, b->batch_idx, sizeof(int32_t) * s.n_ins);
        memcpy(s.boxes, b->instances.boxes, sizeof(float) * 4 * s.n_ins);
    }
    if (s.n_pts)
        memcpy(s.pts, b->instances.poly_xy, sizeof(float) * 2 * s.n_pts);
    return s;
}

static void drop(snap *s) {
    free(s->images), free(s->samples), free(s->aug), free(s->image_class);
    free(s->cls), free(s->batch_idx), free(s->boxes), free(s->pts);
}

static bool same(const snap *a, const snap *b) {
    return a->n == b->n && a->n_ins == b->n_ins && a->n_pts == b->n_pts &&
           memcmp(a->images, b->images, (size_t)a->n * 3 * a->side * a->side) == 0 &&
           memcmp(a->samples, b->samples, sizeof(int64_t) * a->n) == 0 &&
           memcmp(a->aug, b->aug, sizeof(yolo_aug_record) * a->n) == 0 &&
           memcmp(a->image_class, b->image_class, sizeof(int32_t) * a->n) == 0 &&
           memcmp(a->cls, b->cls, sizeof(int32_t) * a->n_ins) == 0 &&
           memcmp(a->batch_idx, b->batch_idx, sizeof(int32_t) * a->n_ins) == 0 &&
           memcmp(a->boxes, b->boxes, sizeof(float) * 4 * a->n_ins) == 0 &&
           memcmp(a->pts, b->pts, sizeof(float) * 2 * a->n_pts) == 0;
}

static yolo_loader_options options(int batch, int workers) {
    yolo_loader_options o = {0};
    o.batch = batch;
    o.workers = workers;
    o.world = 1;
    o.seed = 7;
    o.augment = true;
    o.shuffle = true;
    o.epochs = 100; /* close_mosaic (10) only bites in the last 10 */
    yolo_augment_defaults(&o.aug);
    o.aug.imgsz = IMGSZ;
    o.aug.degrees = 10;
    o.aug.mixup = 0.3f;
    o.aug.flipud = 0.2f;
    o.aug.poly_resample = 100;
    return o;
}

/* All batches of epochs [e0, e1) (from first_batch in the first). */
static int run(const yolo_dataset *ds, const yolo_loader_options *o, int e0, int e1, int64_t first_batch, snap *out) {
    yolo_loader *l;
    if (yolo_loader_create(ds, o, &l) != YOLO_OK) {
        CHECK_MSG(0, "loader: %s", yolo_last_error());
        return 0;
    }
    int n = 0;
    for (int e = e0; e < e1; e++) {
        CHECK(yolo_loader_start_epoch(l, e, e == e0 ? first_batch : 0) == YOLO_OK);
        yolo_batch *b;
        while (yolo_loader_next(l, &b) == YOLO_OK && b) {
            out[n++] = take(b);
            yolo_loader_release(l, b);
        }
    }
    yolo_loader_free(l);
    return n;
}

static void drop_all(snap *s, int n) {
    for (int i = 0; i < n; i++)
        drop(&s[i]);
}

static void test_workers(void) {
    snap a[32], b[32], c[32];
    yolo_loader_options o = options(8, 0);
    int na = run(train, &o, 0, 2, 0, a);
    o.workers = 1;
    int nb = run(train, &o, 0, 2, 0, b);
    o.workers = 4;
    o.prefetch = 3;
    int nc = run(train, &o, 0, 2, 0, c);
    CHECK_MSG(na == 12 && nb == na && nc == na, "batches %d %d %d", na, nb, nc);
    for (int i = 0; i < na && i < nb && i < nc; i++)
        CHECK_MSG(same(&a[i], &b[i]) && same(&a[i], &c[i]), "batch %d differs between workers 0/1/4", i);
    /* something was actually augmented: mosaics, polygons, instances */
    int mosaics = 0, mixups = 0;
    for (int i = 0; i < na; i++)
        for (int k = 0; k < a[i].n; k++)
            mosaics += a[i].aug[k].mosaic, mixups += a[i].aug[k].mixup;
    CHECK_MSG(mosaics == 12 * 8 && mixups > 5 && a[0].n_ins > 0 && a[0].n_pts > 0, "mosaics %d mixups %d instances %d points %d", mosaics, mixups, a[0].n_ins, a[0].n_pts);
    /* epochs differ from each other */
    CHECK(!same(&a[0], &a[6]));
    drop_all(c, nc);
    /* cache=ram gives the same batches */
    o.cache_ram = true;
    o.workers = 2;
    nc = run(train, &o, 0, 2, 0, c + 0);
    for (int i = 0; i < na && i < nc; i++)
        CHECK_MSG(same(&a[i], &c[i]), "cache=ram batch %d differs", i);
    drop_all(c, nc);
    /* resume at batch 2 of epoch 1 continues exactly */
    o.cache_ram = false;
    nc = run(train, &o, 1, 2, 2, c);
    CHECK(nc == 4);
    for (int i = 0; i < nc; i++)
        CHECK_MSG(same(&a[8 + i], &c[i]), "resumed batch %d differs", i);
    drop_all(c, nc);
    /* another seed: another order and other augmentation */
    o.seed = 8;
    nc = run(train, &o, 0, 1, 0, c);
    CHECK(nc == 6 && memcmp(a[0].samples, c[0].samples, sizeof(int64_t) * 8) != 0);
    int equal_params = 0;
    for (int i = 0; i < nc; i++)
        for (int k = 0; k < c[i].n; k++)
            for (int j = 0; j < 6; j++)
                for (int m = 0; m < a[j].n; m++)
                    if (a[j].samples[m] == c[i].samples[k])
                        equal_params += a[j].aug[m].scale == c[i].aug[k].scale;
    CHECK_MSG(equal_params == 0, "%d samples with the same scale under two seeds", equal_params);
    drop_all(c, nc);
    drop_all(a, na);
    drop_all(b, nb);
}

/* Two records describe the same random choices (everything but the sample). */
static bool same_params(const yolo_aug_record *x, const yolo_aug_record *y) {
    yolo_aug_record a = *x, b = *y;
    a.sample = b.sample = 0;
    for (int k = 0; k < 3; k++)
        a.mosaic_partners[k] = b.mosaic_partners[k] = 0;
    a.mixup_partner = b.mixup_partner = 0;
    return memcmp(&a, &b, sizeof a) == 0;
}

static void test_ranks(void) {
    snap one[16], r0[16], r1[16];
    yolo_loader_options o = options(8, 1);
    int n1 = run(train, &o, 3, 4, 0, one);
    o.batch = 4, o.world = 2, o.rank = 0;
    int n0 = run(train, &o, 3, 4, 0, r0);
    o.rank = 1, o.workers = 2;
    int nr1 = run(train, &o, 3, 4, 0, r1);
    CHECK_MSG(n1 == 6 && n0 == 6 && nr1 == 6, "batches %d %d %d", n1, n0, nr1);
    char seen[N_TRAIN] = {0};
    int dup = 0;
    for (int i = 0; i < n0 && i < nr1 && i < n1; i++) {
        for (int k = 0; k < 4; k++) {
            int64_t s0 = r0[i].samples[k], s1 = r1[i].samples[k];
            dup += seen[s0]++ > 0;
            dup += seen[s1]++ > 0;
            /* rank parts are the halves of the 1-rank batch, pixel for pixel */
            CHECK(s0 == one[i].samples[k] && s1 == one[i].samples[4 + k]);
        }
        size_t img = (size_t)3 * IMGSZ * IMGSZ;
        CHECK_MSG(memcmp(r0[i].images, one[i].images, 4 * img) == 0 && memcmp(r1[i].images, one[i].images + 4 * img, 4 * img) == 0,
                  "batch %d: ranks' images differ from the 1-rank run", i);
        CHECK(memcmp(r1[i].aug, one[i].aug + 4, 4 * sizeof(yolo_aug_record)) == 0);
    }
    int covered = 0;
    for (int s = 0; s < N_TRAIN; s++)
        covered += seen[s] > 0;
    CHECK_MSG(dup == 0 && covered == N_TRAIN, "ranks: %d duplicates, %d of %d covered", dup, covered, N_TRAIN);
    /* no two different samples get identical augmentation, across ranks */
    int clashes = 0;
    for (int i = 0; i < n0; i++)
        for (int k = 0; k < 4; k++)
            for (int j = 0; j < nr1; j++)
                for (int m = 0; m < 4; m++)
                    clashes += r0[i].samples[k] != r1[j].samples[m] && same_params(&r0[i].aug[k], &r1[j].aug[m]);
    CHECK_MSG(clashes == 0, "%d identical augmentations on different samples across ranks", clashes);
    drop_all(one, n1), drop_all(r0, n0), drop_all(r1, nr1);
}

static void test_sampler_uneven(void) {
    yolo_sampler s = {10, 2, 0, 3, true, false, 1};
    int64_t order[10];
    yolo_sampler_order(&s, 0, order, NULL);
    int counts[10] = {0}, per_rank[3] = {0};
    for (int r = 0; r < 3; r++) {
        s.rank = r;
        int64_t idx[2];
        for (int64_t b = 0; b < yolo_sampler_batches(&s); b++) {
            int n = yolo_sampler_batch(&s, order, b, idx);
            for (int k = 0; k < n; k++)
                counts[idx[k]]++;
            per_rank[r] += n;
        }
    }
    int total = 0, twice = 0;
    for (int i = 0; i < 10; i++) {
        CHECK(counts[i] >= 1);
        total += counts[i];
        twice += counts[i] == 2;
    }
    /* padded to 12 by repeating the order's start; every rank the same count */
    CHECK(total == 12 && twice == 2 && per_rank[0] == 4 && per_rank[1] == 4 && per_rank[2] == 4);
    yolo_sampler bad = {10, 0, 0, 1, true, false, 1};
    CHECK(yolo_sampler_check(&bad) == YOLO_ERR_ARG);
}

static void test_close_mosaic(void) {
    snap a[16];
    yolo_loader_options o = options(16, 2);
    o.epochs = 4;
    o.aug.close_mosaic = 2;
    int n = run(train, &o, 1, 3, 0, a); /* epoch 1: mosaic; epoch 2: closed */
    CHECK(n == 6);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < a[i].n; k++) {
            bool closed = a[i].aug[k].epoch >= 2;
            CHECK(a[i].aug[k].mosaic == !closed);
            if (closed)
                CHECK(a[i].aug[k].mixup == 0);
        }
    drop_all(a, n);
}

static void test_classify_and_val(void) {
    snap a[16], b[16];
    yolo_loader_options o = options(16, 0);
    o.aug.imgsz = 48;
    int na = run(cls_train, &o, 0, 1, 0, a);
    o.workers = 3;
    int nb = run(cls_train, &o, 0, 1, 0, b);
    CHECK(na == 3 && nb == 3);
    for (int i = 0; i < na && i < nb; i++) {
        CHECK_MSG(same(&a[i], &b[i]), "classify batch %d differs between workers", i);
        for (int k = 0; k < a[i].n; k++)
            CHECK(a[i].image_class[k] == cls_train->samples[a[i].samples[k]].image_class && a[i].aug[k].crop[2] > 0);
    }
    drop_all(a, na), drop_all(b, nb);
    /* validation: in order, letterboxed, with the mapping back to the original */
    yolo_dataset *val;
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_VAL, &(yolo_data_spec){YOLO_NEED_BOXES, NULL, NULL}, NULL, &val) == YOLO_OK);
    o = options(4, 1);
    o.augment = false, o.shuffle = false;
    o.aug.imgsz = 128;
    na = run(val, &o, 0, 1, 0, a);
    CHECK(na == 2 && a[0].samples[0] == 0 && a[1].samples[3] == 7 && a[0].aug[0].mosaic == 0);
    yolo_loader *l;
    CHECK(yolo_loader_create(val, &o, &l) == YOLO_OK);
    yolo_loader_start_epoch(l, 0, 0);
    yolo_batch *batch;
    CHECK(yolo_loader_next(l, &batch) == YOLO_OK && batch);
    if (batch) {
        const yolo_image_meta *m = &batch->meta[0];
        CHECK(m->orig_width == 320 && m->orig_height == 320 && fabsf(m->ratio_x - 0.4f) < 1e-6f && m->pad_x == 0);
        /* boxes match the labels scaled by the ratio */
        const yolo_instances *lab = &val->samples[0].labels;
        CHECK(batch->instances.n >= lab->n);
        if (lab->n)
            CHECK(fabsf(batch->instances.boxes[0] - lab->boxes[0]) < 1e-5f);
        float *fl = malloc(sizeof(float) * (size_t)batch->n * 3 * 128 * 128);
        yolo_batch_images_to_float(batch, fl, NULL, NULL);
        CHECK(fabsf(fl[0] - batch->images[0] / 255.0f) < 1e-7f);
        free(fl);
        yolo_loader_release(l, batch);
    }
    yolo_loader_free(l);
    drop_all(a, na);
    /* rect validation: square images get Ultralytics' ceil(128/32 + 0.5)*32 = 160 side */
    o.rect = true;
    CHECK(yolo_loader_create(val, &o, &l) == YOLO_OK);
    yolo_loader_start_epoch(l, 0, 0);
    CHECK(yolo_loader_next(l, &batch) == YOLO_OK && batch);
    if (batch) {
        CHECK_MSG(batch->width == 160 && batch->height == 160 && batch->meta[0].pad_x == 16 && batch->meta[0].ratio_x == 0.4f,
                  "rect batch %dx%d pad %.1f", batch->width, batch->height, batch->meta[0].pad_x);
        yolo_loader_release(l, batch);
    }
    yolo_loader_free(l);
    o.shuffle = true; /* rect is refused for a shuffled loader */
    CHECK(yolo_loader_create(val, &o, &l) == YOLO_ERR_CONFIG && test_error_mentions("rect"));
    yolo_dataset_free(val);
}

static void quiet(void *user, const char *msg) { (void)user, (void)msg; }

int main(void) {
    snprintf(root, sizeof root, "/tmp/yolo-test-loader-XXXXXX");
    if (!mkdtemp(root))
        return test_skip("cannot make a temporary folder");
    char cache[300], dir[300];
    snprintf(cache, sizeof cache, "%s/cache", root);
    snprintf(dir, sizeof dir, "%s/shapes", root);
    setenv("YOLO_CACHE_DIR", cache, 1);
    yolo_data_set_warning_handler(quiet, NULL);
    yolo_shapes_options so;
    yolo_shapes_default_options(&so);
    so.n_train = N_TRAIN, so.n_val = 8, so.cls_train = 16, so.cls_val = 4;
    CHECK(yolo_shapes_generate(dir, &so) == YOLO_OK);
    char yaml[400], cls_root[400];
    snprintf(yaml, sizeof yaml, "%s/shapes.yaml", dir);
    snprintf(cls_root, sizeof cls_root, "%s/classify", dir);
    yolo_data_spec seg = {YOLO_NEED_POLYGONS, NULL, NULL}, cls = {YOLO_NEED_IMAGE_CLASS, NULL, NULL};
    if (yolo_data_config_load(yaml, YOLO_NEED_POLYGONS, &cfg) != YOLO_OK ||
        yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &seg, NULL, &train) != YOLO_OK ||
        yolo_data_config_load(cls_root, YOLO_NEED_IMAGE_CLASS, &cls_cfg) != YOLO_OK ||
        yolo_dataset_open(&cls_cfg, YOLO_SPLIT_TRAIN, &cls, NULL, &cls_train) != YOLO_OK) {
        CHECK_MSG(0, "fixture: %s", yolo_last_error());
        return test_result("test_data_loader");
    }
    test_workers();
    test_ranks();
    test_sampler_uneven();
    test_close_mosaic();
    test_classify_and_val();
    yolo_dataset_free(train);
    yolo_dataset_free(cls_train);
    yolo_data_config_free(&cfg);
    yolo_data_config_free(&cls_cfg);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return test_result("test_data_loader");
}
