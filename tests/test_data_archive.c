/* Datasets read straight from archives (.zip, .tar, .tar.gz) give the
 * same batches as the same files in folders; bad archives are errors
 * naming the file. With YOLO_DATASETS_DIR, coco8.zip is checked against
 * coco8/ too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/archive.h"
#include "data/fsutil.h"
#include "data/loader.h"
#include "data/shapes.h"
#include "data/warn.h"
#include "test_util.h"

static char root[256];

static void quiet(void *user, const char *msg) { (void)user, (void)msg; }

/* All batches of one epoch, hashed image by image plus instances. */
typedef struct digest {
    int n_batches, n_images, n_instances;
    uint64_t hash;
} digest;

static bool epoch_digest(const char *data, unsigned needs, int imgsz, digest *d) {
    memset(d, 0, sizeof *d);
    yolo_data_config cfg;
    if (yolo_data_config_load(data, needs, &cfg) != YOLO_OK) {
        CHECK_MSG(0, "%s: %s", data, yolo_last_error());
        return false;
    }
    yolo_dataset *ds;
    if (yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &(yolo_data_spec){needs, NULL, NULL}, NULL, &ds) != YOLO_OK) {
        CHECK_MSG(0, "%s: %s", data, yolo_last_error());
        yolo_data_config_free(&cfg);
        return false;
    }
    yolo_loader_options o = {0};
    o.batch = 4, o.workers = 2, o.world = 1, o.seed = 3, o.augment = true, o.shuffle = true, o.epochs = 100;
    yolo_augment_defaults(&o.aug);
    o.aug.imgsz = imgsz;
    o.aug.poly_resample = 64;
    yolo_loader *l;
    bool ok = yolo_loader_create(ds, &o, &l) == YOLO_OK;
    if (ok) {
        yolo_loader_start_epoch(l, 2, 0);
        yolo_batch *b;
        uint64_t h = 0;
        while (yolo_loader_next(l, &b) == YOLO_OK && b) {
            d->n_batches++;
            d->n_images += b->n;
            d->n_instances += b->instances.n;
            h = yolo_hash64(h, b->images, (size_t)b->n * 3 * b->width * b->height);
            h = yolo_hash64(h, b->sample_index, sizeof(int64_t) * b->n);
            h = yolo_hash64(h, b->image_class, sizeof(int32_t) * b->n);
            h = yolo_hash64(h, b->instances.cls, sizeof(int32_t) * b->instances.n);
            h = yolo_hash64(h, b->instances.boxes, sizeof(float) * 4 * b->instances.n);
            h = yolo_hash64(h, b->instances.poly_xy, sizeof(float) * 2 * yolo_instances_poly_points(&b->instances));
            yolo_loader_release(l, b);
        }
        d->hash = h;
        yolo_loader_free(l);
    }
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
    return ok;
}

static void test_synthetic(void) {
    char dir[300], path[400];
    snprintf(dir, sizeof dir, "%s/shapes", root);
    yolo_shapes_options so;
    yolo_shapes_default_options(&so);
    so.n_train = 16, so.n_val = 4, so.cls_train = 4, so.cls_val = 2, so.imgsz = 160;
    CHECK(yolo_shapes_generate(dir, &so) == YOLO_OK);
    snprintf(path, sizeof path, "%s/shapes.yaml", dir);
    digest folder, arch;
    CHECK(epoch_digest(path, YOLO_NEED_POLYGONS, 128, &folder));
    CHECK(folder.n_images == 16 && folder.n_instances > 0);
    const char *kinds[] = {"zip", "tar", "tar.gz"};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/shapes.%s", root, kinds[k]);
        CHECK_MSG(yolo_archive_pack(dir, path, "shapes") == YOLO_OK, "%s", yolo_last_error());
        /* data=<archive> with the yaml inside */
        CHECK(epoch_digest(path, YOLO_NEED_POLYGONS, 128, &arch));
        CHECK_MSG(arch.hash == folder.hash && arch.n_images == folder.n_images && arch.n_instances == folder.n_instances,
                  "%s: batches differ from the folder's", kinds[k]);
    }
    /* a yaml outside whose path: names the archive */
    char yaml[400];
    snprintf(yaml, sizeof yaml, "%s/outer.yaml", root);
    const char *text = "path: shapes.tar.gz\ntrain: images/train\nval: images/val\nnames: [circle, rectangle, triangle]\n";
    CHECK(yolo_write_file(yaml, text, strlen(text)) == YOLO_OK);
    CHECK(epoch_digest(yaml, YOLO_NEED_POLYGONS, 128, &arch) && arch.hash == folder.hash);
    /* image folders in an archive (classification) */
    snprintf(path, sizeof path, "%s/classify", dir);
    CHECK(epoch_digest(path, YOLO_NEED_IMAGE_CLASS, 32, &folder));
    snprintf(yaml, sizeof yaml, "%s/cls.zip", root);
    CHECK(yolo_archive_pack(path, yaml, "") == YOLO_OK);
    CHECK(epoch_digest(yaml, YOLO_NEED_IMAGE_CLASS, 32, &arch));
    CHECK(arch.hash == folder.hash && arch.n_images == 12);
}

static void test_bad_archives(void) {
    char path[400];
    yolo_archive *a;
    snprintf(path, sizeof path, "%s/junk.zip", root);
    static const char zip_junk[] = "PK\x03\x04" " but nothing else";
    CHECK(yolo_write_file(path, zip_junk, sizeof zip_junk - 1) == YOLO_OK);
    CHECK(yolo_archive_open(path, &a) != YOLO_OK && test_error_mentions("junk.zip"));
    snprintf(path, sizeof path, "%s/junk.tar.gz", root);
    static const char gz_junk[] = "definitely not gzip data";
    CHECK(yolo_write_file(path, gz_junk, sizeof gz_junk - 1) == YOLO_OK);
    CHECK(yolo_archive_open(path, &a) != YOLO_OK && test_error_mentions("junk.tar.gz"));
    /* a truncated zip loses its directory */
    char src[400];
    snprintf(src, sizeof src, "%s/shapes.zip", root);
    uint8_t *bytes;
    size_t len;
    if (yolo_read_file(src, &bytes, &len) == YOLO_OK) {
        snprintf(path, sizeof path, "%s/cut.zip", root);
        CHECK(yolo_write_file(path, bytes, len / 2) == YOLO_OK);
        CHECK(yolo_archive_open(path, &a) != YOLO_OK && test_error_mentions("cut.zip"));
        free(bytes);
    }
    yolo_data_config cfg;
    snprintf(path, sizeof path, "%s/missing.zip", root);
    CHECK(yolo_data_config_load(path, YOLO_NEED_BOXES, &cfg) != YOLO_OK && test_error_mentions("missing.zip"));
}

static void test_coco8(void) {
    const char *dir = getenv("YOLO_DATASETS_DIR");
    char zip[512], folder[512];
    snprintf(zip, sizeof zip, "%s/coco8.zip", dir ? dir : "");
    snprintf(folder, sizeof folder, "%s/coco8.yaml", dir ? dir : "");
    if (!dir || !yolo_is_file(zip) || !yolo_is_file(folder)) {
        printf("coco8.zip part skipped: YOLO_DATASETS_DIR (%s) has no coco8.zip and coco8.yaml\n", dir ? dir : "unset");
        return;
    }
    digest a, b;
    CHECK(epoch_digest(zip, YOLO_NEED_BOXES, 160, &a));
    CHECK(epoch_digest(folder, YOLO_NEED_BOXES, 160, &b));
    CHECK_MSG(a.hash == b.hash && a.n_images == 4 && b.n_images == 4, "coco8.zip and coco8/ give different batches");
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/yolo-test-archive-XXXXXX");
    if (!mkdtemp(root))
        return test_skip("cannot make a temporary folder");
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", root);
    setenv("YOLO_CACHE_DIR", cache, 1);
    yolo_data_set_warning_handler(quiet, NULL);
    test_synthetic();
    test_bad_archives();
    test_coco8();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return test_result("test_data_archive");
}
