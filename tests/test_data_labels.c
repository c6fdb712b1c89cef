/* Bad input never stops a dataset and is never used silently: every case
 * (empty files, classes out of range, negative or fractional, coordinates
 * out of [0, 1] beyond the tolerance, malformed numbers, NaN, wrong column
 * counts, duplicate rows, zero-size boxes, polygons, labels without an
 * image) with fixtures made here, one warning per file, the summary
 * counts, the label cache (hit, invalidation, read-only fallback), the
 * parse hook, polygons and keypoints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/dataset.h"
#include "data/fsutil.h"
#include "data/image.h"
#include "data/warn.h"
#include "test_util.h"

static char root[256];

static void write_text(const char *rel, const char *text) {
    char *p = yolo_path_join(root, rel), *d = yolo_path_dirname(p);
    yolo_mkdirs(d);
    CHECK_MSG(yolo_write_file(p, text, strlen(text)) == YOLO_OK, "%s", yolo_last_error());
    free(p), free(d);
}

static void write_bytes(const char *rel, const uint8_t *b, size_t n) {
    char *p = yolo_path_join(root, rel), *d = yolo_path_dirname(p);
    yolo_mkdirs(d);
    CHECK(yolo_write_file(p, b, n) == YOLO_OK);
    free(p), free(d);
}

/* A noisy JPEG (noise keeps entropy data larger than the headers). */
static void jpeg_bytes(int w, int h, unsigned seed, uint8_t **out, size_t *len) {
    yolo_image img;
    yolo_image_alloc(&img, w, h);
    uint64_t st = seed;
    for (size_t i = 0; i < (size_t)w * h * 3; i++)
        img.data[i] = (uint8_t)test_uniform(&st, 0, 255);
    CHECK(yolo_image_encode_jpeg(&img, 90, out, len) == YOLO_OK);
    yolo_image_free(&img);
}

static void write_jpeg(const char *rel, int w, int h) {
    uint8_t *b;
    size_t n;
    jpeg_bytes(w, h, (unsigned)strlen(rel), &b, &n);
    write_bytes(rel, b, n);
    free(b);
}

/* warnings captured */
static char warnings[64][512];
static int n_warnings;
static void capture(void *user, const char *msg) {
    (void)user;
    if (n_warnings < 64)
        snprintf(warnings[n_warnings++], 512, "%s", msg);
}

static int warnings_naming(const char *name) {
    int n = 0;
    for (int i = 0; i < n_warnings; i++)
        n += strstr(warnings[i], name) != NULL;
    return n;
}

static const yolo_sample *find(const yolo_dataset *ds, const char *name) {
    for (int64_t i = 0; i < ds->n; i++)
        if (strcmp(yolo_path_basename(ds->samples[i].path), name) == 0)
            return &ds->samples[i];
    return NULL;
}

static const char *bad_files[] = {"corrupt.jpg", "truncpng.png", "tiny.jpg", "format.bmp", "cls_big.txt", "cls_neg.txt",
                                  "cls_frac.txt", "coord_out.txt", "malformed.txt", "columns.txt", "nan.txt", "bom.txt"};
static const char *repaired_files[] = {"truncated.jpg", "dup.txt", "zero.txt"};

static void make_detect_fixture(void) {
    write_text("data.yaml", "path: ds\ntrain: images/train\nval: images/train\nnames: [a, b, c]\n");
    const char *images[] = {"good", "bg_missing", "bg_empty", "cls_big", "cls_neg", "cls_frac", "coord_out", "coord_tol",
                            "malformed", "columns", "dup", "zero", "poly", "nan", "bom", "windows"};
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "ds/images/train/%s.jpg", images[i]);
        write_jpeg(rel, 48, 32);
    }
    write_text("ds/labels/train/good.txt", "0 0.5 0.5 0.2 0.2\n1 0.3 0.3 0.1 0.1\n");
    write_text("ds/labels/train/bg_empty.txt", "\n");
    write_text("ds/labels/train/cls_big.txt", "0 0.5 0.5 0.2 0.2\n3 0.5 0.5 0.1 0.1\n");
    write_text("ds/labels/train/cls_neg.txt", "-1 0.5 0.5 0.1 0.1\n");
    write_text("ds/labels/train/cls_frac.txt", "0.5 0.5 0.5 0.1 0.1\n");
    write_text("ds/labels/train/coord_out.txt", "0 1.5 0.5 0.1 0.1\n");
    write_text("ds/labels/train/coord_tol.txt", "0 1.005 0.5 0.1 0.1\n");
    write_text("ds/labels/train/malformed.txt", "0 0.5 abc 0.1 0.1\n");
    write_text("ds/labels/train/columns.txt", "0 0.5 0.5 0.1\n");
    write_text("ds/labels/train/dup.txt", "2 0.5 0.5 0.2 0.2\n2 0.5 0.5 0.2 0.2\n");
    write_text("ds/labels/train/zero.txt", "0 0.5 0.5 0 0.1\n1 0.5 0.5 0.3 0.3\n");
    write_text("ds/labels/train/poly.txt", "1 0.1 0.1 0.9 0.2 0.5 0.8\n");
    write_text("ds/labels/train/nan.txt", "0 nan 0.5 0.1 0.1\n");
    write_text("ds/labels/train/bom.txt", "\xEF\xBB\xBF" "0 0.5 0.5 0.1 0.1\n"); /* Ultralytics rejects it too */
    write_text("ds/labels/train/windows.txt", "0\t5e-1 0.5 1E-1 0.1\r\n2 0.25 0.25 0.1 0.1\r\n"); /* all fine */
    write_text("ds/labels/train/orphan.txt", "0 0.5 0.5 0.1 0.1\n"); /* a label without an image */
    write_text("ds/images/train/corrupt.jpg", "not a jpeg at all, just text");
    uint8_t bmp[64] = {'B', 'M'};
    write_bytes("ds/images/train/format.bmp", bmp, sizeof bmp);
    write_jpeg("ds/images/train/tiny.jpg", 8, 8);
    uint8_t *b;
    size_t n;
    jpeg_bytes(64, 64, 7, &b, &n);
    write_bytes("ds/images/train/truncated.jpg", b, n * 2 / 3);
    free(b);
    yolo_image img;
    yolo_image_alloc(&img, 40, 40);
    yolo_image_fill(&img, 9);
    CHECK(yolo_image_encode_png(&img, &b, &n) == YOLO_OK);
    write_bytes("ds/images/train/truncpng.png", b, n - 30);
    free(b);
    yolo_image_free(&img);
}

static yolo_dataset *open_split(const char *yaml, unsigned needs, yolo_data_config *cfg, const yolo_data_spec *spec_in) {
    char *path = yolo_path_join(root, yaml);
    yolo_dataset *ds = NULL;
    if (yolo_data_config_load(path, needs, cfg) != YOLO_OK) {
        CHECK_MSG(0, "config %s: %s", path, yolo_last_error());
        free(path);
        return NULL;
    }
    free(path);
    yolo_data_spec spec = {needs, NULL, NULL};
    if (yolo_dataset_open(cfg, YOLO_SPLIT_TRAIN, spec_in ? spec_in : &spec, NULL, &ds) != YOLO_OK)
        CHECK_MSG(0, "open: %s", yolo_last_error());
    return ds;
}

static void test_bad_inputs(void) {
    make_detect_fixture();
    yolo_data_config cfg;
    n_warnings = 0;
    yolo_dataset *ds = open_split("data.yaml", YOLO_NEED_BOXES, &cfg, NULL);
    if (!ds)
        return;
    char line[256];
    yolo_dataset_summary(ds, line, sizeof line);
    CHECK_MSG(strcmp(line, "train: 9 images, 3 backgrounds, 12 corrupt, 3 repaired") == 0, "summary: %s", line);
    CHECK(!ds->from_cache);
    /* one warning per bad or repaired file, naming it */
    CHECK_MSG(n_warnings == 15, "%d warnings", n_warnings);
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++)
        CHECK_MSG(warnings_naming(bad_files[i]) == 1, "warnings naming %s: %d", bad_files[i], warnings_naming(bad_files[i]));
    for (size_t i = 0; i < sizeof repaired_files / sizeof repaired_files[0]; i++)
        CHECK_MSG(warnings_naming(repaired_files[i]) == 1, "warnings naming %s", repaired_files[i]);
    CHECK(warnings_naming("orphan") == 0);
    CHECK(warnings_naming("cls_big.txt:2") == 1); /* the message names file and line */
    CHECK(warnings_naming("byte-order mark") == 1);
    /* what was kept */
    const yolo_sample *s = find(ds, "good.jpg");
    CHECK(s && s->labels.n == 2 && s->width == 48 && s->height == 32);
    s = find(ds, "dup.jpg");
    CHECK(s && s->labels.n == 1);
    s = find(ds, "windows.jpg"); /* CRLF, a tab, exponents */
    CHECK(s && s->labels.n == 2 && fabsf(s->labels.boxes[0] - 0.5f) < 1e-6f && fabsf(s->labels.boxes[2] - 0.1f) < 1e-6f);
    s = find(ds, "zero.jpg");
    CHECK(s && s->labels.n == 1 && s->labels.cls[0] == 1);
    s = find(ds, "coord_tol.jpg"); /* within tolerance: clamped, edges clipped to the image */
    CHECK(s && s->labels.n == 1 && s->labels.boxes[0] + s->labels.boxes[2] / 2 <= 1.0f + 1e-6f);
    s = find(ds, "poly.jpg"); /* box from the polygon's extent; no polygon kept for a box task */
    CHECK(s && s->labels.n == 1 && s->labels.poly_start == NULL);
    if (s)
        CHECK(fabsf(s->labels.boxes[0] - 0.5f) < 1e-6f && fabsf(s->labels.boxes[2] - 0.8f) < 1e-6f &&
              fabsf(s->labels.boxes[3] - 0.7f) < 1e-6f);
    CHECK(find(ds, "bg_missing.jpg") && find(ds, "bg_empty.jpg") && !find(ds, "corrupt.jpg"));
    /* the cache sits next to the labels; the next open reads it and repeats the warnings */
    char *near = yolo_path_join(root, "ds/labels/train.yolo-cache"); /* not Ultralytics' train.cache */
    CHECK_MSG(ds->cache_path && strcmp(ds->cache_path, near) == 0, "cache at %s", ds->cache_path);
    CHECK(yolo_is_file(near));
    yolo_dataset_free(ds);
    n_warnings = 0;
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &(yolo_data_spec){YOLO_NEED_BOXES, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds && ds->from_cache && n_warnings == 15);
    yolo_dataset_summary(ds, line, sizeof line);
    CHECK_MSG(strcmp(line, "train: 9 images, 3 backgrounds, 12 corrupt, 3 repaired") == 0, "cached summary: %s", line);
    s = ds ? find(ds, "good.jpg") : NULL;
    CHECK(s && s->labels.n == 2);
    yolo_dataset_free(ds);
    /* a changed label file invalidates the cache */
    sleep(0); /* sizes differ, so mtime granularity does not matter */
    write_text("ds/labels/train/good.txt", "0 0.5 0.5 0.2 0.2\n1 0.3 0.3 0.1 0.1\n2 0.7 0.7 0.1 0.1\n");
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &(yolo_data_spec){YOLO_NEED_BOXES, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds && !ds->from_cache);
    s = ds ? find(ds, "good.jpg") : NULL;
    CHECK(s && s->labels.n == 3);
    yolo_dataset_free(ds);
    /* a different task (polygons) is another cache key and keeps polygons */
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &(yolo_data_spec){YOLO_NEED_POLYGONS, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds && !ds->from_cache);
    s = ds ? find(ds, "poly.jpg") : NULL;
    CHECK(s && s->labels.poly_start && yolo_instances_poly_points(&s->labels) == 3);
    s = ds ? find(ds, "good.jpg") : NULL; /* box rows become 4-corner polygons */
    CHECK(s && s->labels.poly_start && s->labels.poly_start[1] == 4);
    yolo_dataset_free(ds);
    /* a read-only dataset: the cache goes to YOLO_CACHE_DIR instead */
    unlink(near);
    char *labels_dir = yolo_path_join(root, "ds/labels");
    chmod(labels_dir, 0555);
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &(yolo_data_spec){YOLO_NEED_BOXES, NULL, NULL}, NULL, &ds) == YOLO_OK);
    char *cache_root = yolo_cache_dir();
    CHECK_MSG(ds && strncmp(ds->cache_path, cache_root, strlen(cache_root)) == 0, "read-only cache at %s", ds ? ds->cache_path : "");
    CHECK(ds && yolo_is_file(ds->cache_path) && !yolo_is_file(near));
    yolo_dataset_free(ds);
    chmod(labels_dir, 0755);
    free(cache_root), free(labels_dir), free(near);
    yolo_data_config_free(&cfg);
}

/* A plugin's parse hook: rejects files containing "reject", else the core parser. */
static int hook_calls;
static yolo_status hook(const yolo_label_context *ctx, const char *text, size_t len, yolo_instances *out,
                        yolo_label_repairs *repairs) {
    hook_calls++;
    if (len >= 6 && memmem(text, len, "reject", 6))
        return yolo_error(YOLO_ERR_FORMAT, "%s:1: the hook says no", ctx->path);
    return yolo_label_parse_yolo(ctx, text, len, out, repairs);
}

static void test_parse_hook(void) {
    write_text("hook.yaml", "path: hookds\ntrain: images\nnames: {0: x}\n");
    write_jpeg("hookds/images/a.jpg", 32, 32);
    write_jpeg("hookds/images/b.jpg", 32, 32);
    write_text("hookds/labels/a.txt", "0 0.5 0.5 0.5 0.5\n");
    write_text("hookds/labels/b.txt", "reject\n");
    yolo_data_config cfg;
    yolo_data_spec spec = {YOLO_NEED_BOXES, hook, "test-hook-v1"};
    n_warnings = 0;
    hook_calls = 0;
    yolo_dataset *ds = open_split("hook.yaml", YOLO_NEED_BOXES, &cfg, &spec);
    CHECK(ds && ds->n == 1 && ds->stats.corrupt == 1 && hook_calls == 2);
    CHECK(warnings_naming("the hook says no") == 1);
    yolo_dataset_free(ds);
    /* another parser (format name) never reuses this cache */
    hook_calls = 0;
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &spec, NULL, &ds) == YOLO_OK && ds->from_cache && hook_calls == 0);
    yolo_dataset_free(ds);
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &(yolo_data_spec){YOLO_NEED_BOXES, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds && !ds->from_cache && ds->stats.corrupt == 1); /* "reject" is a malformed row for the core parser */
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
}

static void test_keypoints(void) {
    write_text("pose.yaml", "path: poseds\ntrain: images\nnames: [person]\nkpt_shape: [2, 3]\nflip_idx: [1, 0]\n");
    write_jpeg("poseds/images/a.jpg", 32, 32);
    write_jpeg("poseds/images/b.jpg", 32, 32);
    write_text("poseds/labels/a.txt", "0 0.5 0.5 0.4 0.4 0.4 0.4 2 0.6 0.6 1\n");
    write_text("poseds/labels/b.txt", "0 0.5 0.5 0.4 0.4\n"); /* keypoints missing */
    yolo_data_config cfg;
    yolo_dataset *ds = open_split("pose.yaml", YOLO_NEED_BOXES | YOLO_NEED_KEYPOINTS, &cfg, NULL);
    CHECK(ds && ds->n == 1 && ds->kpt_count == 2 && ds->kpt_dims == 3);
    if (ds && ds->n == 1) {
        const yolo_instances *l = &ds->samples[0].labels;
        CHECK(l->n == 1 && l->kpt_count == 2 && fabsf(l->kpts[3] - 0.6f) < 1e-6f && l->kpts[5] == 1);
    }
    CHECK(cfg.flip_idx && cfg.flip_idx[0] == 1);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
}

static void test_image_folder(void) {
    write_jpeg("cls/train/cat/1.jpg", 32, 32);
    write_jpeg("cls/train/cat/2.jpg", 32, 32);
    write_jpeg("cls/train/dog/1.jpg", 32, 32);
    write_text("cls/train/dog/broken.jpg", "garbage");
    write_jpeg("cls/train/stray.jpg", 32, 32); /* beside the class folders: ignored */
    write_jpeg("cls/val/cat/1.jpg", 32, 32);
    write_jpeg("cls/val/zebra/1.jpg", 32, 32); /* a class train does not have */
    char *dir = yolo_path_join(root, "cls");
    yolo_data_config cfg;
    CHECK(yolo_data_config_load(dir, YOLO_NEED_IMAGE_CLASS, &cfg) == YOLO_OK);
    CHECK(cfg.image_folder && cfg.nc == 2 && strcmp(cfg.names[1], "dog") == 0);
    yolo_dataset *ds;
    n_warnings = 0;
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &(yolo_data_spec){YOLO_NEED_IMAGE_CLASS, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds->n == 3 && ds->stats.corrupt == 1 && ds->samples[2].image_class == 1 && warnings_naming("broken.jpg") == 1);
    yolo_dataset_free(ds);
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_VAL, &(yolo_data_spec){YOLO_NEED_IMAGE_CLASS, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds->n == 1 && ds->stats.corrupt == 1 && warnings_naming("zebra") == 1);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
    free(dir);
    /* no val/: validation/ (Ultralytics' check_cls_dataset), before test/ */
    write_jpeg("cls2/train/cat/1.jpg", 32, 32);
    write_jpeg("cls2/validation/cat/2.jpg", 32, 32);
    write_jpeg("cls2/validation/cat/3.jpg", 32, 32);
    write_jpeg("cls2/test/cat/4.jpg", 32, 32);
    dir = yolo_path_join(root, "cls2");
    CHECK(yolo_data_config_load(dir, YOLO_NEED_IMAGE_CLASS, &cfg) == YOLO_OK);
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_VAL, &(yolo_data_spec){YOLO_NEED_IMAGE_CLASS, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK_MSG(ds && ds->n == 2 && strstr(ds->samples[0].path, "/validation/"), "val from validation/: %lld images",
              ds ? (long long)ds->n : -1LL);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
    free(dir);
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/yolo-test-labels-XXXXXX");
    if (!mkdtemp(root))
        return test_skip("cannot make a temporary folder");
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", root);
    setenv("YOLO_CACHE_DIR", cache, 1);
    yolo_data_set_warning_handler(capture, NULL);
    test_bad_inputs();
    test_parse_hook();
    test_keypoints();
    test_image_folder();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return test_result("test_data_labels");
}
