/* Hostile data inputs (issue 14): each problem class of the hostile-input
 * run has a case here that must end in a clear error or warning naming
 * what was given, never a crash, a runaway allocation or silent use:
 *   - label caches: a changed byte (checksum), resealed caches with wrong
 *     polygon offsets, counts or class ids (structure checks); each is
 *     reported naming the cache and rebuilt; Ultralytics' <split>.cache
 *     next to ours is never read or touched;
 *   - a label path that is a folder, a symlink loop or a dangling link is
 *     not a background;
 *   - data yaml integers: nc: -3, a huge nc, kpt_shape out of range, a
 *     class id too large for an int in a label file;
 *   - decode limits: a PNG or JPEG header declaring 20000x20000, an
 *     archive member declaring 300 MB. */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/archive.h"
#include "data/dataset.h"
#include "data/fsutil.h"
#include "data/image.h"
#include "data/label_cache.h"
#include "test_util.h"

static char root[256];
static char warned[8192];

static char *at(const char *rel) { return yolo_path_join(root, rel); }
static void write_text(const char *rel, const char *text) { test_write_text(root, rel, text); }
static void write_jpeg(const char *rel) { test_write_jpeg(root, rel, 48, 32, 1); }
static void write_all(const char *rel, const uint8_t *b, size_t n) { test_write_file(root, rel, b, n); }
static uint8_t *read_all(const char *rel, size_t *n) {
    uint8_t *b = test_read_file(root, rel, n);
    CHECK_MSG(b, "cannot read %s", rel);
    return b;
}

static yolo_dataset *open_train(yolo_data_config *cfg, unsigned needs) {
    yolo_dataset *ds = NULL;
    yolo_data_spec spec = {needs, NULL, NULL};
    if (yolo_dataset_open(cfg, YOLO_SPLIT_TRAIN, &spec, NULL, &ds) != YOLO_OK)
        CHECK_MSG(0, "open: %s", yolo_last_error());
    return ds;
}

/* A segment dataset, opened once to write its cache; returns the config. */
static void seg_fixture(yolo_data_config *cfg) {
    write_text("seg.yaml", "path: seg\ntrain: images/train\nnames: [a, b]\n");
    write_jpeg("seg/images/train/a.jpg");
    write_jpeg("seg/images/train/b.jpg");
    write_text("seg/labels/train/a.txt", "0 0.1 0.1 0.9 0.1 0.5 0.9\n1 0.2 0.2 0.3 0.2 0.3 0.3 0.2 0.3\n");
    write_text("seg/labels/train/b.txt", "1 0.4 0.4 0.6 0.4 0.5 0.6\n");
    char *yaml = at("seg.yaml");
    CHECK_MSG(yolo_data_config_load(yaml, YOLO_NEED_POLYGONS, cfg) == YOLO_OK, "%s", yolo_last_error());
    free(yaml);
}

/* Rewrites the cache with `edit` applied, resealed or not, then checks the
 * next open warns naming the cache and what, rebuilds, and is right. */
static void damaged_cache(yolo_data_config *cfg, const char *what, void (*edit)(uint8_t *, size_t), bool reseal,
                          const char *expect) {
    size_t n;
    uint8_t *b = read_all("seg/labels/train.yolo-cache", &n);
    if (!b) return;
    edit(b, n);
    if (reseal) yolo_label_cache_seal(b, n);
    write_all("seg/labels/train.yolo-cache", b, n);
    free(b);
    warned[0] = 0;
    yolo_dataset *ds = open_train(cfg, YOLO_NEED_POLYGONS);
    CHECK_MSG(ds && !ds->from_cache, "%s: the damaged cache was used", what);
    CHECK_MSG(strstr(warned, "train.yolo-cache") && strstr(warned, expect) && strstr(warned, "rebuilding"),
              "%s: warnings: %s", what, warned);
    CHECK_MSG(ds && ds->n == 2 && ds->stats.instances == 3, "%s: rebuilt with %lld images", what,
              ds ? (long long)ds->n : -1LL);
    yolo_dataset_free(ds);
    ds = open_train(cfg, YOLO_NEED_POLYGONS); /* the rebuilt cache is good */
    CHECK_MSG(ds && ds->from_cache, "%s: the rebuilt cache is not used", what);
    yolo_dataset_free(ds);
}

/* Offsets into the cache: magic 8, key 8, n 8, stats 40, kc 8, kd 8, then
 * sample 0: its path's length (8) and bytes, head 16 (w h class m), the
 * classes (4 each), boxes (16 each), the polygon flag (4), poly_start. */
#define SAMPLE0 (8 + 8 + 8 + 40 + 8 + 8)
static size_t sample0_head(const uint8_t *b) {
    int64_t len;
    memcpy(&len, b + SAMPLE0, 8);
    return SAMPLE0 + 8 + (size_t)len;
}
#define SAMPLE0_CLS(b) (sample0_head(b) + 16)
#define SAMPLE0_POLY_START(b) (SAMPLE0_CLS(b) + 2 * 4 + 2 * 16 + 4)

static void flip_middle(uint8_t *b, size_t n) { b[n / 2] ^= 0x10; }
static void bad_poly_offsets(uint8_t *b, size_t n) {
    (void)n;
    int32_t huge = 1 << 28; /* poly_start[1]: instance 0 would own 2^28 points */
    memcpy(b + SAMPLE0_POLY_START(b) + 4, &huge, 4);
}
static void decreasing_offsets(uint8_t *b, size_t n) {
    (void)n;
    int32_t v = 2; /* poly_start = {0, 3, 7} -> {0, 3, 2} */
    memcpy(b + SAMPLE0_POLY_START(b) + 8, &v, 4);
}
static void bad_class(uint8_t *b, size_t n) {
    (void)n;
    int32_t v = 7; /* nc is 2 */
    memcpy(b + SAMPLE0_CLS(b), &v, 4);
}
static void huge_count(uint8_t *b, size_t n) {
    (void)n;
    int32_t v = 0x7fffffff; /* sample 0's instance count */
    memcpy(b + sample0_head(b) + 12, &v, 4);
}
static void zero_width(uint8_t *b, size_t n) {
    (void)n;
    memset(b + sample0_head(b), 0, 4);
}

static void test_label_cache(void) {
    yolo_data_config cfg;
    seg_fixture(&cfg);
    /* Ultralytics' cache beside ours: any bytes, never read nor touched */
    const char junk[] = "\x93NUMPY this is Ultralytics' pickle, not ours";
    write_text("seg/labels/train.cache", junk);
    warned[0] = 0;
    yolo_dataset *ds = open_train(&cfg, YOLO_NEED_POLYGONS);
    CHECK_MSG(ds && ds->cache_path && strstr(ds->cache_path, "seg/labels/train.yolo-cache"), "cache at %s",
              ds ? ds->cache_path : "");
    yolo_dataset_free(ds);
    CHECK_MSG(!strstr(warned, "train.cache"), "Ultralytics' cache was read: %s", warned);
    size_t n;
    uint8_t *b = read_all("seg/labels/train.cache", &n);
    CHECK(b && n == strlen(junk) && memcmp(b, junk, n) == 0);
    free(b);
    ds = open_train(&cfg, YOLO_NEED_POLYGONS);
    CHECK(ds && ds->from_cache);
    yolo_dataset_free(ds);
    damaged_cache(&cfg, "changed byte", flip_middle, false, "checksum mismatch");
    damaged_cache(&cfg, "polygon offsets past the points", bad_poly_offsets, true, "polygon offsets");
    damaged_cache(&cfg, "decreasing polygon offsets", decreasing_offsets, true, "decreasing polygon offsets");
    damaged_cache(&cfg, "class id >= nc", bad_class, true, "class id outside");
    damaged_cache(&cfg, "huge instance count", huge_count, true, "instance count larger than the file");
    damaged_cache(&cfg, "zero image width", zero_width, true, "image size out of range");
    /* cut short, and not a cache at all */
    b = read_all("seg/labels/train.yolo-cache", &n);
    write_all("seg/labels/train.yolo-cache", b, n / 3);
    free(b);
    warned[0] = 0;
    ds = open_train(&cfg, YOLO_NEED_POLYGONS);
    CHECK_MSG(ds && !ds->from_cache && strstr(warned, "train.yolo-cache") && strstr(warned, "checksum"), "cut: %s", warned);
    yolo_dataset_free(ds);
    b = read_all("seg/labels/train.cache", &n);
    CHECK(b && n == strlen(junk) && memcmp(b, junk, n) == 0);
    free(b);
    yolo_data_config_free(&cfg);
}

static void test_label_paths(void) {
    write_text("paths.yaml", "path: paths\ntrain: images\nnames: [a]\n");
    const char *names[] = {"ok", "folder", "loop", "dangling", "missing"};
    for (int i = 0; i < 5; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "paths/images/%s.jpg", names[i]);
        write_jpeg(rel);
    }
    write_text("paths/labels/ok.txt", "0 0.5 0.5 0.2 0.2\n");
    char *folder = at("paths/labels/folder.txt"), *loop = at("paths/labels/loop.txt"), *dangling = at("paths/labels/dangling.txt");
    CHECK(yolo_mkdirs(folder) == YOLO_OK);
    CHECK(symlink(loop, loop) == 0);
    CHECK(symlink("nowhere.txt", dangling) == 0);
    yolo_data_config cfg;
    char *yaml = at("paths.yaml");
    CHECK(yolo_data_config_load(yaml, YOLO_NEED_BOXES, &cfg) == YOLO_OK);
    warned[0] = 0;
    yolo_dataset *ds = open_train(&cfg, YOLO_NEED_BOXES);
    /* ok and missing (a background) are kept; the other three are skipped, each named */
    CHECK_MSG(ds && ds->n == 2 && ds->stats.corrupt == 3 && ds->stats.backgrounds == 1, "%lld images, %lld corrupt",
              ds ? (long long)ds->n : -1LL, ds ? (long long)ds->stats.corrupt : -1LL);
    CHECK_MSG(strstr(warned, "folder.txt: is a folder, not a label file"), "%s", warned);
    CHECK_MSG(strstr(warned, "loop.txt") && strstr(warned, "symbolic link loop"), "%s", warned);
    CHECK_MSG(strstr(warned, "dangling.txt: a symbolic link to nothing"), "%s", warned);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
    free(folder), free(loop), free(dangling), free(yaml);
}

static void expect_yaml_error(const char *text, const char *needle) {
    write_text("bad.yaml", text);
    write_jpeg("bad/images/a.jpg");
    char *yaml = at("bad.yaml");
    yolo_data_config cfg;
    yolo_status st = yolo_data_config_load(yaml, YOLO_NEED_BOXES, &cfg);
    CHECK_MSG(st == YOLO_ERR_CONFIG && test_error_mentions("bad.yaml") && test_error_mentions(needle),
              "'%s': status %d: %s", text, st, yolo_last_error());
    if (st == YOLO_OK) yolo_data_config_free(&cfg);
    free(yaml);
}

static void test_data_yaml_integers(void) {
    expect_yaml_error("path: bad\ntrain: images\nnc: -3\n", "nc: -3 is outside [1, 65536]");
    expect_yaml_error("path: bad\ntrain: images\nnc: 2000000000\n", "nc: 2000000000 is outside");
    expect_yaml_error("path: bad\ntrain: images\nnc: 99999999999999999999\n", "is outside");
    expect_yaml_error("path: bad\ntrain: images\nnames: [a]\nkpt_shape: [4294967313, 3]\n", "kpt_shape: 4294967313 is outside");
    expect_yaml_error("path: bad\ntrain: images\nnames: {4294967296: a}\n", "names: 4294967296 is outside");
    /* a class id too large for an int: an error with the value, no (int) cast */
    yolo_label_context ctx = {"big.txt", 3, YOLO_NEED_BOXES, 0, 0, 0};
    yolo_instances ins;
    yolo_instances_init(&ins, 0, 0);
    yolo_label_repairs rep = {0};
    const char *text = "1e30 0.5 0.5 0.1 0.1\n";
    CHECK(yolo_label_parse_yolo(&ctx, text, strlen(text), &ins, &rep) == YOLO_ERR_FORMAT);
    CHECK_MSG(test_error_mentions("big.txt:1: class id 1e+30 >= nc 3"), "%s", yolo_last_error());
    yolo_instances_free(&ins);
}

/* A PNG of `w` x `h` whose only IDAT is empty: tiny, declares anything. */
static void png_header(uint32_t w, uint32_t h, uint8_t *out, size_t *n) {
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    uint8_t ihdr[25] = {0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    for (int i = 0; i < 4; i++) ihdr[8 + i] = (uint8_t)(w >> (24 - 8 * i)), ihdr[12 + i] = (uint8_t)(h >> (24 - 8 * i));
    ihdr[16] = 8, ihdr[17] = 2; /* 8-bit RGB */
    uint32_t crc = 0xffffffffu; /* CRC-32 of type + data */
    for (int i = 4; i < 21; i++) {
        crc ^= ihdr[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
    }
    crc ^= 0xffffffffu;
    for (int i = 0; i < 4; i++) ihdr[21 + i] = (uint8_t)(crc >> (24 - 8 * i));
    static const uint8_t iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    memcpy(out, sig, 8), memcpy(out + 8, ihdr, 25), memcpy(out + 33, iend, 12);
    *n = 45;
}

static void test_decode_limits(void) {
    uint8_t png[64];
    size_t n;
    png_header(20000, 20000, png, &n);
    yolo_image_info info;
    CHECK(yolo_image_probe(png, n, "bomb.png", &info) == YOLO_ERR_FORMAT);
    CHECK_MSG(test_error_mentions("bomb.png: image of 20000x20000 pixels is larger than the 178956970-pixel limit"),
              "%s", yolo_last_error());
    yolo_image img;
    CHECK(yolo_image_decode(png, n, "bomb.png", 0, &img, NULL) == YOLO_ERR_FORMAT && img.data == NULL);
    CHECK(test_error_mentions("bomb.png") && test_error_mentions("pixel limit"));
    /* a JPEG whose SOF says 20000x20000 (the frame header edited in place) */
    uint8_t pixels[16 * 16 * 3] = {0}, *jpg;
    size_t jn;
    CHECK(yolo_image_encode_pixels(pixels, 16, 16, 3, YOLO_IMAGE_JPEG, 90, &jpg, &jn) == YOLO_OK);
    for (size_t i = 2; i + 9 < jn; i++)
        if (jpg[i] == 0xFF && jpg[i + 1] == 0xC0) {
            jpg[i + 5] = 20000 >> 8, jpg[i + 6] = 20000 & 255, jpg[i + 7] = 20000 >> 8, jpg[i + 8] = 20000 & 255;
            break;
        }
    CHECK(yolo_image_decode(jpg, jn, "bomb.jpg", 0, &img, NULL) == YOLO_ERR_FORMAT && img.data == NULL);
    CHECK_MSG(test_error_mentions("bomb.jpg: image of 20000x20000") && test_error_mentions("pixel limit"), "%s",
              yolo_last_error());
    free(jpg);
    /* an archive member of 300 MB of zeros (about 300 kB deflated) */
    char *zip = at("zeros.zip");
    struct archive *a = archive_write_new();
    archive_write_set_format_zip(a);
    CHECK(archive_write_open_filename(a, zip) == ARCHIVE_OK);
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_pathname(e, "zeros/images/zero.jpg");
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, (la_int64_t)300 << 20);
    archive_write_header(a, e);
    static uint8_t zeros[1 << 20];
    for (int i = 0; i < 300; i++) archive_write_data(a, zeros, sizeof zeros);
    archive_entry_free(e);
    archive_write_close(a);
    archive_write_free(a);
    yolo_archive *ar = NULL;
    CHECK_MSG(yolo_archive_open(zip, &ar) == YOLO_OK, "%s", yolo_last_error());
    uint8_t *bytes = NULL;
    size_t len = 0;
    if (ar) {
        CHECK(yolo_archive_read(ar, 0, &bytes, &len) == YOLO_ERR_FORMAT && bytes == NULL);
        CHECK_MSG(test_error_mentions("zeros.zip: member zeros/images/zero.jpg declares 314572800 bytes") &&
                  test_error_mentions("256 MiB"), "%s", yolo_last_error());
        yolo_archive_close(ar);
    }
    free(zip);
}

int main(void) {
    if (!test_temp_dir(root, sizeof root)) return test_skip("cannot make a temporary folder");
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", root);
    setenv("YOLO_CACHE_DIR", cache, 1);
    test_capture_warnings(warned, sizeof warned);
    test_label_cache();
    test_label_paths();
    test_data_yaml_integers();
    test_decode_limits();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return test_result("test_data_hostile");
}
