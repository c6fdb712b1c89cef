/* rect=True and multi_scale=True in training (issue 14), on 8 non-square
 * images (64x32, 64x48, 32x64) at imgsz 64 with a tiny model:
 *   loader   rect training batches come in aspect-ratio order, each at
 *            Ultralytics' ceil(shape * imgsz / stride + 0.0) * stride
 *            (validation keeps pad 0.5), with normalized labels in [0, 1];
 *            a shuffled rect loader and classify data are refused;
 *            multi_scale gives several stride-multiple sizes in
 *            [0.5 imgsz, 1.5 imgsz + stride) over an epoch, bit-identical
 *            for the same seed and different for another, and a fraction
 *            f (Ultralytics 8.4) sizes in [(1 - f) imgsz, (1 + f) imgsz];
 *   train    `rect=True` warns that shuffle is off and trains on the
 *            non-square shapes it lists; two multi_scale runs with one seed
 *            log identical losses and shapes over several sizes; segment
 *            trains with both; classify refuses both by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/loader.h"
#include "data/warn.h"
#include "test_util.h"

#define IMGSZ 64
#define STRIDE 32

static char dir[512];

/* width x height of image i: 3 wide (ar 0.5), 2 less wide (0.75), 3 tall (2). */
static void image_size(int i, int *w, int *h) {
    static const int sizes[8][2] = {{32, 64}, {64, 32}, {64, 48}, {64, 32}, {32, 64}, {64, 48}, {64, 32}, {32, 64}};
    *w = sizes[i][0], *h = sizes[i][1];
}

static void fixture(void) {
    test_write_tiny_models(dir);
    for (int i = 0; i < 8; i++) {
        char rel[128];
        int w, h;
        image_size(i, &w, &h);
        test_write_tiny_sample(dir, i, w, h);
        snprintf(rel, sizeof rel, "classes/%s/%s/%d.jpg", i < 6 ? "train" : "val", i % 2 ? "cat" : "dog", i);
        test_write_jpeg(dir, rel, w, h, (unsigned)i);
    }
    test_write_jpeg(dir, "classes/val/dog/x.jpg", 64, 48, 11);
    test_write_jpeg(dir, "classes/val/cat/x.jpg", 64, 48, 12);
}

static yolo_loader_options loader_options(void) {
    yolo_loader_options o = {.batch = 2, .world = 1, .seed = 5, .augment = true, .shuffle = false, .epochs = 10,
                             .stride = STRIDE};
    yolo_augment_defaults(&o.aug);
    o.aug.imgsz = IMGSZ;
    return o;
}

/* Ultralytics' rect shape of a batch, computed here from the image sizes. */
static void expected_rect(const yolo_dataset *ds, const yolo_batch *b, double pad, int *w, int *h) {
    double lo = 1e9, hi = 0;
    for (int k = 0; k < b->n; k++) {
        const yolo_sample *s = &ds->samples[b->sample_index[k]];
        double ar = (double)s->height / s->width;
        lo = fmin(lo, ar), hi = fmax(hi, ar);
    }
    double sh = hi < 1 ? hi : 1, sw = lo > 1 ? 1 / lo : 1;
    *h = (int)ceil(sh * IMGSZ / STRIDE + pad) * STRIDE;
    *w = (int)ceil(sw * IMGSZ / STRIDE + pad) * STRIDE;
}

static bool labels_normalized(const yolo_batch *b) {
    for (int k = 0; k < 4 * b->instances.n; k++)
        if (!(b->instances.boxes[k] >= 0 && b->instances.boxes[k] <= 1)) return false;
    return true;
}

static void test_rect_loader(const yolo_dataset *ds) {
    for (int val = 0; val < 2; val++) {
        yolo_loader_options o = loader_options();
        o.rect = true;
        o.augment = !val;
        yolo_loader *l = NULL;
        CHECK_MSG(yolo_loader_create(ds, &o, &l) == YOLO_OK, "%s", yolo_last_error());
        if (!l) return;
        CHECK(yolo_loader_start_epoch(l, 1, 0) == YOLO_OK);
        yolo_batch *b;
        double last_ar = 0;
        int batches = 0, non_square = 0;
        while (yolo_loader_next(l, &b) == YOLO_OK && b) {
            int w, h;
            expected_rect(ds, b, val ? 0.5 : 0.0, &w, &h);
            CHECK_MSG(b->width == w && b->height == h, "%s batch %d: %dx%d, Ultralytics' shape %dx%d",
                      val ? "val" : "train", batches, b->width, b->height, w, h);
            non_square += b->width != b->height;
            for (int k = 0; k < b->n; k++) { /* aspect-ratio order */
                const yolo_sample *s = &ds->samples[b->sample_index[k]];
                double ar = (double)s->height / s->width;
                CHECK_MSG(ar >= last_ar, "rect order: aspect %g after %g", ar, last_ar);
                last_ar = ar;
                CHECK(b->aug[k].mosaic == 0 && b->aug[k].mixup == 0);
            }
            CHECK_MSG(labels_normalized(b), "rect batch %d: labels outside [0, 1]", batches);
            batches++;
            yolo_loader_release(l, b);
        }
        /* train (pad 0): 64x32, 64x64, 64x64, 32x64; val (pad 0.5): 96x64, 96x64, 96x96, 64x96 */
        CHECK_MSG(batches == 4 && non_square == (val ? 3 : 2), "%d rect batches, %d of them non-square", batches,
                  non_square);
        yolo_loader_free(l);
    }
    yolo_loader_options o = loader_options();
    o.rect = true;
    o.shuffle = true;
    yolo_loader *l = NULL;
    CHECK(yolo_loader_create(ds, &o, &l) == YOLO_ERR_CONFIG && test_error_mentions("shuffle"));
}

/* The (w, h) of every batch of epochs 0..2 at multi_scale = f, and their bytes hashed. */
static int multi_scale_sizes(const yolo_dataset *ds, uint64_t seed, bool rect, double f, int imgsz, int (*sizes)[2],
                             uint64_t *hash) {
    yolo_loader_options o = loader_options();
    o.multi_scale = f;
    o.aug.imgsz = imgsz;
    o.rect = rect;
    o.shuffle = !rect;
    o.seed = seed;
    o.workers = 2;
    yolo_loader *l = NULL;
    if (yolo_loader_create(ds, &o, &l) != YOLO_OK) {
        CHECK_MSG(0, "%s", yolo_last_error());
        return 0;
    }
    int n = 0;
    *hash = 1469598103934665603ull;
    for (int e = 0; e < 3; e++) {
        CHECK(yolo_loader_start_epoch(l, e, 0) == YOLO_OK);
        yolo_batch *b;
        while (yolo_loader_next(l, &b) == YOLO_OK && b) {
            sizes[n][0] = b->width, sizes[n][1] = b->height;
            n++;
            size_t bytes = (size_t)b->n * 3 * b->width * b->height;
            for (size_t i = 0; i < bytes; i++) *hash = (*hash ^ b->images[i]) * 1099511628211ull;
            CHECK_MSG(labels_normalized(b), "multi_scale batch %d: labels outside [0, 1]", n);
            yolo_loader_release(l, b);
        }
    }
    yolo_loader_free(l);
    return n;
}

static void test_multi_scale_loader(const yolo_dataset *ds) {
    int a[12][2], b[12][2], c[12][2];
    uint64_t ha, hb, hc;
    int na = multi_scale_sizes(ds, 5, false, 0.5, IMGSZ, a, &ha), nb = multi_scale_sizes(ds, 5, false, 0.5, IMGSZ, b, &hb);
    int nc = multi_scale_sizes(ds, 6, false, 0.5, IMGSZ, c, &hc);
    CHECK(na == 12 && nb == 12 && nc == 12);
    int distinct = 0, seen[8] = {0};
    for (int i = 0; i < na; i++) {
        int s = a[i][0];
        /* randrange(int(0.5 * 64), int(1.5 * 64 + 32)) // 32 * 32: 32, 64 or 96 */
        CHECK_MSG(a[i][0] == a[i][1] && s % STRIDE == 0 && s >= 32 && s <= 96, "multi_scale batch %d: %dx%d", i,
                  a[i][0], a[i][1]);
        if (s % STRIDE == 0 && s / STRIDE < 8 && !seen[s / STRIDE]++) distinct++;
        CHECK(a[i][0] == b[i][0] && a[i][1] == b[i][1]);
    }
    CHECK_MSG(distinct >= 2, "multi_scale: %d distinct sizes in 12 batches", distinct);
    CHECK_MSG(ha == hb, "multi_scale: the same seed gave other images");
    CHECK_MSG(ha != hc, "multi_scale: seeds 5 and 6 gave the same images");
    /* with rect: the rect shape scaled by sz / its long side, stride multiples */
    int r[12][2];
    uint64_t hr;
    int nr = multi_scale_sizes(ds, 5, true, 0.5, IMGSZ, r, &hr);
    int non_square = 0;
    for (int i = 0; i < nr; i++) {
        CHECK_MSG(r[i][0] % STRIDE == 0 && r[i][1] % STRIDE == 0 && r[i][0] <= 96 && r[i][1] <= 96,
                  "rect multi_scale batch %d: %dx%d", i, r[i][0], r[i][1]);
        non_square += r[i][0] != r[i][1];
    }
    CHECK_MSG(nr == 12 && non_square > 0, "rect multi_scale: %d batches, %d non-square", nr, non_square);
    /* Ultralytics 8.4's fraction at imgsz 256: f = 0.25 draws from
     * randrange(192, 352) // 32 * 32, sizes 192 to 320; f = 0.5 from
     * randrange(128, 416), which these 12 batches leave [192, 320] for */
    int q[12][2], h[12][2];
    uint64_t hq, hh;
    int nq = multi_scale_sizes(ds, 5, false, 0.25, 256, q, &hq), nh = multi_scale_sizes(ds, 5, false, 0.5, 256, h, &hh);
    int q_distinct = 0, outside = 0, q_seen[16] = {0};
    for (int i = 0; i < nq; i++) {
        CHECK_MSG(q[i][0] == q[i][1] && q[i][0] % STRIDE == 0 && q[i][0] >= 192 && q[i][0] <= 320,
                  "multi_scale=0.25 batch %d: %dx%d", i, q[i][0], q[i][1]);
        if (q[i][0] / STRIDE < 16 && !q_seen[q[i][0] / STRIDE]++) q_distinct++;
    }
    for (int i = 0; i < nh; i++) outside += h[i][0] < 192 || h[i][0] > 320;
    CHECK_MSG(nq == 12 && q_distinct >= 2, "multi_scale=0.25: %d batches, %d sizes", nq, q_distinct);
    CHECK_MSG(nh == 12 && outside > 0, "multi_scale=0.5 at 256: every size in [192, 320]");
}

static char *read_log(void) {
    size_t len = 0;
    char *text = (char *)test_read_file(dir, "log.txt", &len);
    return text;
}

/* The "Batch shapes ..." line of the last run's log (malloc'd, "" if none). */
static char *shapes_line(void) {
    char *log = read_log();
    const char *at = log ? strstr(log, "Batch shapes") : NULL;
    size_t n = at ? strcspn(at, "\n") : 0;
    char *line = calloc(1, n + 1);
    if (line && at) memcpy(line, at, n);
    free(log);
    return line;
}

static void test_rect_training(void) {
    const char *base = "train model=det.yaml data=boxes.yaml epochs=1 imgsz=64 batch=2 nbs=2 workers=1 val=False "
                       "plots=False project=runs";
    char args[1024];
    snprintf(args, sizeof args, "detect %s rect=True name=rect", base);
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "rect=True exited %d (see %s/log.txt)", rc, dir);
    char *log = read_log();
    CHECK_MSG(log && strstr(log, "'rect=True' is incompatible with DataLoader shuffle, setting shuffle=False"),
              "no shuffle warning: %s", log ? log : "");
    free(log);
    char *line = shapes_line();
    /* 2 wide batches (h 32), then 64x64, then the tall batch (w 32) */
    CHECK_MSG(strstr(line, "2x3x32x64: 1") && strstr(line, "2x3x64x64: 2") && strstr(line, "2x3x64x32: 1"),
              "rect shapes: %s", line);
    free(line);

    /* multi_scale: the same seed twice gives the same losses and shapes */
    char steps[2][700], *lines[2];
    for (int k = 0; k < 2; k++) {
        snprintf(steps[k], sizeof steps[k], "%s/ms%d.steps", dir, k);
        setenv("YOLO_STEP_LOG", steps[k], 1);
        snprintf(args, sizeof args, "detect %s epochs=3 multi_scale=True seed=3 name=ms%d", base, k);
        rc = test_run_yolo(dir, args);
        CHECK_MSG(rc == 0, "multi_scale=True exited %d (see %s/log.txt)", rc, dir);
        lines[k] = shapes_line();
    }
    unsetenv("YOLO_STEP_LOG");
    size_t la = 0, lb = 0;
    uint8_t *a = test_read_file(dir, "ms0.steps", &la), *b = test_read_file(dir, "ms1.steps", &lb);
    CHECK_MSG(a && b && la > 0 && la == lb && memcmp(a, b, la) == 0, "multi_scale seed=3 twice: step logs differ");
    free(a), free(b);
    CHECK_MSG(strcmp(lines[0], lines[1]) == 0, "shapes differ: '%s' vs '%s'", lines[0], lines[1]);
    int sizes = 0;
    for (const char *p = lines[0]; (p = strstr(p, "x3x")); p++) sizes++;
    CHECK_MSG(sizes >= 2, "multi_scale over 12 batches: %s", lines[0]);
    free(lines[0]), free(lines[1]);

    /* segment with both (non-square masks), classify refuses them */
    snprintf(args, sizeof args,
             "segment train model=seg.yaml data=polys.yaml epochs=1 imgsz=64 batch=2 nbs=2 workers=1 val=True "
             "plots=False project=runs rect=True multi_scale=True name=seg");
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "segment rect multi_scale exited %d (see %s/log.txt)", rc, dir);
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args,
                 "classify train model=cls.yaml data=classes epochs=1 imgsz=32 batch=2 workers=0 project=runs %s=True",
                 k ? "multi_scale" : "rect");
        rc = test_run_yolo(dir, args);
        log = read_log();
        CHECK_MSG(rc != 0 && rc < 128 && log && strstr(log, k ? "multi_scale=true" : "rect=true") &&
                      strstr(log, "classify"),
                  "classify %s: exit %d, %s", k ? "multi_scale" : "rect", rc, log ? log : "");
        free(log);
    }
}

static void quiet(void *user, const char *msg) { (void)user, (void)msg; }

int main(void) {
    if (!test_temp_run_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    char yaml[700];
    fixture();
    yolo_data_set_warning_handler(quiet, NULL);
    snprintf(yaml, sizeof yaml, "%s/boxes.yaml", dir);
    yolo_data_config cfg;
    yolo_dataset *ds = NULL;
    yolo_data_spec spec = {YOLO_NEED_BOXES, NULL, NULL};
    if (yolo_data_config_load(yaml, YOLO_NEED_BOXES, &cfg) != YOLO_OK ||
        yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &spec, NULL, &ds) != YOLO_OK) {
        CHECK_MSG(0, "fixture: %s", yolo_last_error());
        return test_result("test_train_shapes");
    }
    test_rect_loader(ds);
    test_multi_scale_loader(ds);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
    if (getenv("YOLO_SANITIZED")) printf("training runs skipped under the sanitizers (test_train_tiny covers the loop)\n");
    else test_rect_training();
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!test_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_result("test_train_shapes");
}
