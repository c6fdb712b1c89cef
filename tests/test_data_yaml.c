/* Data yamls in the Ultralytics format and the path rules: `path`
 * relative to the yaml (then YOLO_DATASETS_DIR), splits relative to
 * `path` then to the yaml's folder, list files, lists of folders, names as
 * list or mapping, errors naming file, line and key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/archive.h"
#include "data/dataset.h"
#include "data/datasets_dir.h"
#include "data/fsutil.h"
#include "data/image.h"
#include "data/warn.h"
#include "test_util.h"

static char root[256];

static char *at(const char *rel) { return yolo_path_join(root, rel); }

static void write_text(const char *rel, const char *text) {
    char *p = at(rel), *d = yolo_path_dirname(p);
    yolo_mkdirs(d);
    CHECK(yolo_write_file(p, text, strlen(text)) == YOLO_OK);
    free(p), free(d);
}

static void write_jpeg(const char *rel) {
    yolo_image img;
    yolo_image_alloc(&img, 32, 24);
    yolo_image_fill(&img, 60);
    char *p = at(rel), *d = yolo_path_dirname(p);
    yolo_mkdirs(d);
    CHECK(yolo_image_save(&img, p) == YOLO_OK);
    free(p), free(d);
    yolo_image_free(&img);
}

static void quiet(void *user, const char *msg) { (void)user, (void)msg; }

static int64_t count_images(const char *yaml_rel, yolo_split split, yolo_status *status) {
    char *p = at(yaml_rel);
    yolo_data_config cfg;
    int64_t n = -1;
    *status = yolo_data_config_load(p, YOLO_NEED_BOXES, &cfg);
    free(p);
    if (*status != YOLO_OK)
        return -1;
    yolo_dataset *ds;
    *status = yolo_dataset_open(&cfg, split, &(yolo_data_spec){YOLO_NEED_BOXES, NULL, NULL}, NULL, &ds);
    if (*status == YOLO_OK) {
        n = ds->n;
        yolo_dataset_free(ds);
    }
    yolo_data_config_free(&cfg);
    return n;
}

static void test_paths(void) {
    for (int i = 0; i < 3; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "sets/ds/images/train/%d.jpg", i);
        write_jpeg(rel);
        snprintf(rel, sizeof rel, "sets/ds/images/extra/%d.jpg", i);
        write_jpeg(rel);
    }
    write_jpeg("sets/ds/images/val/v.jpg");
    write_jpeg("sets/outside/o.jpg");
    /* path relative to the yaml; names as a list */
    write_text("sets/a.yaml", "path: ds\ntrain: images/train\nval: images/val\nnames: [x, y]\n");
    yolo_status st;
    CHECK(count_images("sets/a.yaml", YOLO_SPLIT_TRAIN, &st) == 3);
    CHECK(count_images("sets/a.yaml", YOLO_SPLIT_VAL, &st) == 1);
    /* a list of folders, and an entry only found relative to the yaml's folder */
    write_text("sets/b.yaml", "path: ds\ntrain: [images/train, images/extra, outside]\nval: images/val\nnames: {0: x}\n");
    CHECK(count_images("sets/b.yaml", YOLO_SPLIT_TRAIN, &st) == 7);
    /* a list file of images ("./" lines relative to the list, absolute lines as they are) */
    char *abs_img = at("sets/outside/o.jpg"), text[600];
    snprintf(text, sizeof text, "./images/train/0.jpg\n./images/train/1.jpg\n%s\n\n", abs_img);
    write_text("sets/ds/list.txt", text);
    write_text("sets/c.yaml", "path: ds\ntrain: list.txt\nval: images/val\nnames: {0: x}\n");
    CHECK(count_images("sets/c.yaml", YOLO_SPLIT_TRAIN, &st) == 3);
    free(abs_img);
    /* no path: the yaml's folder is the root; an absolute path works too */
    write_text("sets/ds/d.yaml", "train: images/train\nval: images/val\nnames: [x]\n");
    CHECK(count_images("sets/ds/d.yaml", YOLO_SPLIT_TRAIN, &st) == 3);
    char *abs_root = at("sets/ds");
    snprintf(text, sizeof text, "path: %s\ntrain: images/train\nval: images/val\nnames: [x]\n", abs_root);
    write_text("elsewhere/e.yaml", text);
    CHECK(count_images("elsewhere/e.yaml", YOLO_SPLIT_TRAIN, &st) == 3);
    free(abs_root);
    /* Roboflow's export: data.yaml in the dataset folder, train: ../train/images (found without the ../, as
     * Ultralytics does), an unused test split that is absent, and its roboflow: mapping */
    write_jpeg("rf/train/images/a.jpg");
    write_jpeg("rf/train/images/b.jpg");
    write_jpeg("rf/valid/images/c.jpg");
    write_text("rf/data.yaml", "train: ../train/images\nval: ../valid/images\ntest: ../test/images\n\nnc: 2\n"
                               "names: ['x', 'y']\n\nroboflow:\n  workspace: w\n  project: p\n  version: 3\n"
                               "  license: CC BY 4.0\n  url: https://universe.roboflow.com/w/p/dataset/3\n");
    CHECK_MSG(count_images("rf/data.yaml", YOLO_SPLIT_TRAIN, &st) == 2, "%s", yolo_last_error());
    CHECK(count_images("rf/data.yaml", YOLO_SPLIT_VAL, &st) == 1);
    CHECK(count_images("rf/data.yaml", YOLO_SPLIT_TEST, &st) < 0 && test_error_mentions("test/images"));
    /* a relative path not beside the yaml is looked up in YOLO_DATASETS_DIR */
    char *sets = at("sets");
    setenv("YOLO_DATASETS_DIR", sets, 1);
    write_text("elsewhere/f.yaml", "path: ds\ntrain: images/train\nval: images/val\nnames: [x]\n");
    CHECK(count_images("elsewhere/f.yaml", YOLO_SPLIT_TRAIN, &st) == 3);
    /* a bare name finds <name>.yaml there */
    yolo_data_config cfg;
    CHECK(yolo_data_config_load("a", YOLO_NEED_BOXES, &cfg) == YOLO_OK && cfg.nc == 2);
    yolo_data_config_free(&cfg);
    unsetenv("YOLO_DATASETS_DIR");
    /* without it, the datasets_dir of Ultralytics' settings.json (read, never written) */
    char *config = at("config"), json[1200];
    setenv("YOLO_CONFIG_DIR", config, 1);
    snprintf(json, sizeof json, "{\n  \"settings_version\": \"0.0.6\",\n  \"datasets_dir\" : \"%s\",\n  \"runs_dir\": "
             "\"runs\"\n}\n", sets);
    write_text("config/Ultralytics/settings.json", json);
    CHECK_MSG(yolo_data_config_load("a", YOLO_NEED_BOXES, &cfg) == YOLO_OK && cfg.nc == 2, "%s", yolo_last_error());
    yolo_data_config_free(&cfg);
    CHECK(count_images("elsewhere/f.yaml", YOLO_SPLIT_TRAIN, &st) == 3);
    const char *from = NULL;
    char *dir = yolo_datasets_dir(&from);
    CHECK(dir && strcmp(dir, sets) == 0 && from && strstr(from, "config/Ultralytics/settings.json"));
    free(dir);
    setenv("YOLO_DATASETS_DIR", config, 1); /* the variable wins */
    dir = yolo_datasets_dir(&from);
    CHECK(dir && strcmp(dir, config) == 0 && strcmp(from, "YOLO_DATASETS_DIR") == 0);
    free(dir);
    unsetenv("YOLO_DATASETS_DIR");
    unsetenv("YOLO_CONFIG_DIR");
    free(config);
    free(sets);
    /* path: X where only X.zip exists: the archive is used */
    char *ds_dir = at("sets/ds"), *zip = at("zipped/ds.zip"), *zdir = at("zipped");
    yolo_mkdirs(zdir);
    CHECK(yolo_archive_pack(ds_dir, zip, "ds") == YOLO_OK);
    write_text("zipped/z.yaml", "path: ds\ntrain: images/train\nval: images/val\nnames: [x]\n");
    CHECK(count_images("zipped/z.yaml", YOLO_SPLIT_TRAIN, &st) == 3);
    free(ds_dir), free(zip), free(zdir);
    /* a folder as data=: the default images/{train,val} layout */
    char *dsd = at("sets/ds");
    CHECK(yolo_data_config_load(dsd, YOLO_NEED_BOXES, &cfg) != YOLO_OK); /* no names anywhere */
    free(dsd);
}

/* settings.json strings: escapes decoded, a key's text inside a value skipped, malformed refused */
static void test_json_strings(void) {
    char *v = yolo_json_string_value("{\"a\": \"x\", \"datasets_dir\": \"\\/d\\u00fcr\\ud83d\\ude00 \\\"q\\\"\"}", "datasets_dir");
    CHECK_MSG(v && strcmp(v, "/d\xc3\xbcr\xf0\x9f\x98\x80 \"q\"") == 0, "decoded: %s", v ? v : "(null)");
    free(v);
    v = yolo_json_string_value("{\"note\": \"datasets_dir\", \"datasets_dir\": \"/ok\"}", "datasets_dir");
    CHECK(v && strcmp(v, "/ok") == 0);
    free(v);
    CHECK(yolo_json_string_value("{\"datasets_dir\": 3}", "datasets_dir") == NULL);
    CHECK(yolo_json_string_value("{\"datasets_dir\": \"/cut", "datasets_dir") == NULL);
    CHECK(yolo_json_string_value("{\"datasets_dir\": \"\\u12\"}", "datasets_dir") == NULL);
    CHECK(yolo_json_string_value("{\"datasets_dir\": \"\\ud83d\"}", "datasets_dir") == NULL); /* a lone surrogate */
    CHECK(yolo_json_string_value("{}", "datasets_dir") == NULL);
}

static void test_errors(void) {
    yolo_status st;
    write_text("err/nc.yaml", "path: .\ntrain: .\nval: .\nnc: 3\nnames: [a, b]\n");
    CHECK(count_images("err/nc.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && st == YOLO_ERR_CONFIG);
    CHECK(test_error_mentions("nc.yaml:4") && test_error_mentions("nc: 3"));
    write_text("err/names.yaml", "path: .\ntrain: .\nnames: {0: a, 2: c}\n");
    CHECK(count_images("err/names.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && test_error_mentions("names"));
    write_text("err/syntax.yaml", "path: .\ntrain: [a, b\nnames: [x]\n");
    CHECK(count_images("err/syntax.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && st == YOLO_ERR_FORMAT);
    CHECK(test_error_mentions("syntax.yaml:"));
    write_text("err/missing.yaml", "path: .\ntrain: nowhere\nval: nowhere\nnames: [x]\n");
    CHECK(count_images("err/missing.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && test_error_mentions("nowhere"));
    write_text("err/nopath.yaml", "path: no/such/dir\ntrain: a\nnames: [x]\n");
    CHECK(count_images("err/nopath.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && test_error_mentions("no/such/dir"));
    /* a missing root whose yaml has download: (Ultralytics would fetch it): what to fetch, a script named as such */
    write_text("err/dl.yaml", "path: no/such/dir\ntrain: a\nnames: [x]\ndownload: https://x.org/d.zip\n");
    CHECK(count_images("err/dl.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && st == YOLO_ERR_IO &&
          test_error_mentions("no/such/dir") && test_error_mentions("download: https://x.org/d.zip is not run here"));
    write_text("err/dls.yaml", "path: no/such/dir\ntrain: a\nnames: [x]\ndownload: |\n  import os\n  os.x()\n");
    CHECK(count_images("err/dls.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && test_error_mentions("download: script is not run"));
    write_text("err/kpt.yaml", "path: .\ntrain: .\nnames: [x]\nkpt_shape: [17, 5]\n");
    CHECK(count_images("err/kpt.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && test_error_mentions("kpt_shape"));
    write_text("err/list.yaml", "- a\n- b\n");
    CHECK(count_images("err/list.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && test_error_mentions("mapping"));
    yolo_data_config cfg;
    CHECK(yolo_data_config_load("/no/such/data.yaml", YOLO_NEED_BOXES, &cfg) != YOLO_OK);
    CHECK(test_error_mentions("/no/such/data.yaml"));
    /* a val split with no images */
    write_jpeg("err/imgs/train/a.jpg");
    char *empty = at("err/imgs/empty");
    yolo_mkdirs(empty);
    free(empty);
    write_text("err/empty.yaml", "path: imgs\ntrain: train\nval: empty\nnames: [x]\n");
    CHECK(count_images("err/empty.yaml", YOLO_SPLIT_TRAIN, &st) == 1);
    CHECK(count_images("err/empty.yaml", YOLO_SPLIT_VAL, &st) < 0 && test_error_mentions("no usable images"));
    /* Ultralytics' channels: 3 is what images are here; 1 (grayscale) is not built, said with the line */
    write_text("err/rgb.yaml", "path: imgs\ntrain: train\nval: train\nnames: [x]\nchannels: 3\n");
    CHECK(count_images("err/rgb.yaml", YOLO_SPLIT_TRAIN, &st) == 1);
    write_text("err/grey.yaml", "path: imgs\ntrain: train\nval: train\nnames: [x]\nchannels: 1\n");
    CHECK(count_images("err/grey.yaml", YOLO_SPLIT_TRAIN, &st) < 0 && st == YOLO_ERR_UNSUPPORTED &&
          test_error_mentions("grey.yaml:5: channels: 1 is not built"));
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/yolo-test-yaml-XXXXXX");
    if (!mkdtemp(root))
        return test_skip("cannot make a temporary folder");
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", root);
    setenv("YOLO_CACHE_DIR", cache, 1);
    yolo_data_set_warning_handler(quiet, NULL);
    test_paths();
    test_errors();
    test_json_strings();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return test_result("test_data_yaml");
}
