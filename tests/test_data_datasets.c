/* The real datasets of YOLO_DATASETS_DIR (skipped when absent): summaries,
 * polygons, keypoints, image folders with odd names, val falling back to
 * test/, and a cache kept out of the read-only tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/fsutil.h"
#include "data/loader.h"
#include "data/warn.h"
#include "test_util.h"

static char datasets[512], root[256];
static int warnings_seen;
static void count_warning(void *user, const char *msg) {
    (void)user;
    warnings_seen++;
    fprintf(stderr, "warning: %s\n", msg);
}

static yolo_dataset *open_set(const char *yaml, unsigned needs, yolo_split split, yolo_data_config *cfg) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s", datasets, yaml);
    if (yolo_data_config_load(path, needs, cfg) != YOLO_OK) {
        CHECK_MSG(0, "%s: %s", yaml, yolo_last_error());
        return NULL;
    }
    yolo_dataset *ds = NULL;
    if (yolo_dataset_open(cfg, split, &(yolo_data_spec){needs, NULL, NULL}, NULL, &ds) != YOLO_OK) {
        CHECK_MSG(0, "%s: %s", yaml, yolo_last_error());
        yolo_data_config_free(cfg);
    }
    return ds;
}

static void expect_summary(const yolo_dataset *ds, const char *want) {
    char line[256];
    yolo_dataset_summary(ds, line, sizeof line);
    CHECK_MSG(strcmp(line, want) == 0, "summary '%s', expected '%s'", line, want);
}

static void test_coco128(void) {
    yolo_data_config cfg;
    yolo_dataset *ds = open_set("coco128.yaml", YOLO_NEED_BOXES, YOLO_SPLIT_TRAIN, &cfg);
    if (!ds)
        return;
    expect_summary(ds, "train: 128 images, 2 backgrounds, 0 corrupt");
    CHECK(cfg.nc == 80 && strcmp(cfg.names[0], "person") == 0);
    CHECK_MSG(ds->stats.instances > 900, "%lld instances", (long long)ds->stats.instances);
    char *cache_root = yolo_cache_dir();
    CHECK_MSG(strncmp(ds->cache_path, cache_root, strlen(cache_root)) == 0, "cache at %s (read-only tree)", ds->cache_path);
    free(cache_root);
    /* one mosaic batch */
    yolo_loader_options o = {0};
    o.batch = 8, o.workers = 2, o.world = 1, o.seed = 0, o.augment = true, o.shuffle = true;
    yolo_augment_defaults(&o.aug);
    o.aug.imgsz = 320;
    yolo_loader *l;
    CHECK(yolo_loader_create(ds, &o, &l) == YOLO_OK);
    yolo_loader_start_epoch(l, 0, 0);
    yolo_batch *b;
    CHECK(yolo_loader_next(l, &b) == YOLO_OK && b && b->n == 8 && b->instances.n > 0 && b->aug[0].mosaic);
    yolo_loader_release(l, b);
    yolo_loader_free(l);
    /* rect validation batches: aspect-ratio order, one side 352 = ceil(320/32 + 0.5) * 32 */
    o.augment = false, o.shuffle = false, o.rect = true, o.workers = 1;
    CHECK(yolo_loader_create(ds, &o, &l) == YOLO_OK);
    yolo_loader_start_epoch(l, 0, 0);
    double last_ar = 0;
    int batches = 0;
    while (yolo_loader_next(l, &b) == YOLO_OK && b) {
        batches++;
        CHECK_MSG((b->width == 352 || b->height == 352) && b->width <= 352 && b->height <= 352 && b->width % 32 == 0 &&
                      b->height % 32 == 0, "rect batch %dx%d", b->width, b->height);
        for (int k = 0; k < b->n; k++) {
            const yolo_sample *s = &ds->samples[b->sample_index[k]];
            double ar = (double)s->height / s->width;
            CHECK(ar >= last_ar);
            last_ar = ar;
        }
        yolo_loader_release(l, b);
    }
    CHECK(batches == 16);
    yolo_loader_free(l);
    yolo_dataset_free(ds);
    /* the second open hits the cache */
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &(yolo_data_spec){YOLO_NEED_BOXES, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds->from_cache);
    expect_summary(ds, "train: 128 images, 2 backgrounds, 0 corrupt");
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
}

static void test_segments_and_pose(void) {
    yolo_data_config cfg;
    yolo_dataset *ds = open_set("coco128-seg.yaml", YOLO_NEED_POLYGONS, YOLO_SPLIT_TRAIN, &cfg);
    if (ds) {
        expect_summary(ds, "train: 128 images, 2 backgrounds, 0 corrupt");
        const yolo_instances *l = &ds->samples[0].labels;
        CHECK(l->n > 0 && l->poly_start && l->poly_start[1] >= 3);
        yolo_dataset_free(ds);
        yolo_data_config_free(&cfg);
    }
    ds = open_set("coco8-pose.yaml", YOLO_NEED_BOXES | YOLO_NEED_KEYPOINTS, YOLO_SPLIT_VAL, &cfg);
    if (ds) {
        expect_summary(ds, "val: 4 images, 0 backgrounds, 0 corrupt");
        CHECK(ds->kpt_count == 17 && ds->kpt_dims == 3 && cfg.flip_idx && cfg.flip_idx[1] == 2);
        yolo_dataset_free(ds);
        yolo_data_config_free(&cfg);
    }
}

static void test_image_folders(void) {
    yolo_data_config cfg;
    yolo_dataset *ds = open_set("imagenet10.yaml", YOLO_NEED_IMAGE_CLASS, YOLO_SPLIT_TRAIN, &cfg);
    if (ds) {
        expect_summary(ds, "train: 12 images, 0 backgrounds, 0 corrupt");
        CHECK(cfg.nc == 10 && strcmp(cfg.names[0], "tench") == 0 && strcmp(cfg.class_dirs[0], "n01440764") == 0);
        int spaces = 0;
        for (int64_t i = 0; i < ds->n; i++)
            spaces += strchr(yolo_path_basename(ds->samples[i].path), ' ') != NULL;
        CHECK(spaces == 2 && ds->samples[0].image_class == 0);
        yolo_dataset_free(ds);
        yolo_data_config_free(&cfg);
    }
    ds = open_set("mnist160.yaml", YOLO_NEED_IMAGE_CLASS, YOLO_SPLIT_VAL, &cfg);
    if (ds) {
        expect_summary(ds, "val: 80 images, 0 backgrounds, 0 corrupt");
        CHECK(strstr(ds->samples[0].path, "/test/") != NULL && ds->samples[0].width == 28);
        yolo_dataset_free(ds);
        yolo_data_config_free(&cfg);
    }
    ds = open_set("cifar10-subset.yaml", YOLO_NEED_IMAGE_CLASS, YOLO_SPLIT_TRAIN, &cfg);
    if (ds) {
        expect_summary(ds, "train: 1000 images, 0 backgrounds, 0 corrupt");
        yolo_dataset_free(ds);
        yolo_data_config_free(&cfg);
    }
}

int main(void) {
    const char *env = getenv("YOLO_DATASETS_DIR");
    snprintf(datasets, sizeof datasets, "%s", env && env[0] ? env : "../shared/datasets");
    char probe[600];
    snprintf(probe, sizeof probe, "%s/coco128.yaml", datasets);
    if (!yolo_is_file(probe)) {
        char why[700];
        snprintf(why, sizeof why, "no real datasets at %s (set YOLO_DATASETS_DIR)", datasets);
        return test_skip(why);
    }
    snprintf(root, sizeof root, "/tmp/yolo-test-datasets-XXXXXX");
    if (!mkdtemp(root))
        return test_skip("cannot make a temporary folder");
    setenv("YOLO_CACHE_DIR", root, 1);
    yolo_data_set_warning_handler(count_warning, NULL);
    test_coco128();
    test_segments_and_pose();
    test_image_folders();
    CHECK_MSG(warnings_seen == 0, "%d warnings on clean datasets", warnings_seen);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return test_result("test_data_datasets");
}
