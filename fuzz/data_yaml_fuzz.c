/* Fuzzing the data yaml loader (yolo_data_config_load) and, for what loads,
 * the train split's index (yolo_dataset_open: label files through the
 * parser, image headers; the label cache off). The first byte picks the
 * task's needs (boxes, polygons, keypoints, image classes); the rest is
 * the yaml text, resolved in a fixture tree made once in a temporary
 * folder (images/, labels/, a class folder tree cls/, list.txt and ds.zip
 * holding the same), which is also YOLO_DATASETS_DIR and the working
 * directory (so give the fuzzer absolute corpus paths). Inputs that could
 * name paths outside it (a '/' that starts a name, "..", '~', '$', yaml
 * escapes) are skipped, so no mutant makes the fuzzer walk the machine.
 * Corpus: fuzz/corpus/data_yaml. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "data/archive.h"
#include "data/dataset.h"
#include "data/fsutil.h"
#include "data/image.h"
#include "fuzz_check.h"

static char root[256];

static void put_file(const char *rel, const void *data, size_t len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *dir = yolo_path_dirname(path);
    if (!dir || yolo_mkdirs(dir) != YOLO_OK || yolo_write_file(path, data, len) != YOLO_OK) abort();
    free(dir);
}

static void put_image(const char *rel, yolo_image_format format) {
    uint8_t pixels[8 * 6 * 3];
    for (size_t i = 0; i < sizeof pixels; i++) pixels[i] = (uint8_t)(i * 7);
    uint8_t *bytes;
    size_t len;
    if (yolo_image_encode_pixels(pixels, 8, 6, 3, format, 90, &bytes, &len) != YOLO_OK) abort();
    put_file(rel, bytes, len);
    free(bytes);
}

static void make_fixture(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/yolo-data-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) abort();
    char ds[300];
    snprintf(ds, sizeof ds, "%s/ds", root);
    const char *label = "0 0.5 0.5 0.2 0.2\n1 0.1 0.1 0.3 0.1 0.2 0.3\n";
    const char *pose = "0 0.5 0.5 0.2 0.2 0.5 0.5 2 0.4 0.4 1\n";
    put_image("ds/images/train/a.jpg", YOLO_IMAGE_JPEG);
    put_file("ds/labels/train/a.txt", label, strlen(label));
    put_image("ds/images/train/b.png", YOLO_IMAGE_PNG);
    put_file("ds/labels/train/b.txt", pose, strlen(pose));
    put_image("ds/images/val/c.jpg", YOLO_IMAGE_JPEG);
    put_file("ds/images/val/notes.txt", "x", 1);
    put_image("ds/cls/train/cat/d.jpg", YOLO_IMAGE_JPEG);
    put_image("ds/cls/train/dog/e.png", YOLO_IMAGE_PNG);
    put_image("ds/cls/val/cat/f.jpg", YOLO_IMAGE_JPEG);
    const char *list = "./images/train/a.jpg\nimages/train/b.png\nmissing.jpg\n";
    put_file("ds/list.txt", list, strlen(list));
    char zip[320];
    snprintf(zip, sizeof zip, "%s/ds.zip", root);
    if (yolo_archive_pack(ds, zip, "ds") != YOLO_OK) abort();
    setenv("YOLO_DATASETS_DIR", root, 1);
    if (chdir(root) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    for (size_t i = 1; i < size; i++) {
        uint8_t c = data[i], before = data[i - 1];
        bool inside_name = (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
                           (before >= '0' && before <= '9') || before == '_' || before == '-' || before == '.';
        if ((c == '/' && !inside_name) || c == '~' || c == '$' || c == '\\' || (c == '.' && before == '.'))
            return 0;
    }
    if (!root[0]) make_fixture();
    static const unsigned needs[4] = {YOLO_NEED_BOXES, YOLO_NEED_POLYGONS, YOLO_NEED_KEYPOINTS, YOLO_NEED_IMAGE_CLASS};
    unsigned need = needs[data[0] & 3];
    char path[320];
    snprintf(path, sizeof path, "%s/fuzz.yaml", root);
    if (yolo_write_file_nosync(path, data + 1, size - 1) != YOLO_OK) abort();
    yolo_data_config cfg;
    if (yolo_data_config_load(path, need, &cfg) == YOLO_OK) {
        FUZZ_INVARIANT(cfg.nc > 0 && cfg.names);
        for (int i = 0; i < cfg.nc; i++) FUZZ_INVARIANT(cfg.names[i] != NULL);
        yolo_data_spec spec = {.needs = need};
        yolo_dataset_options opt = {.threads = 1, .no_cache = true};
        yolo_dataset *ds = NULL;
        if (yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &spec, &opt, &ds) == YOLO_OK) {
            for (int64_t i = 0; i < ds->n; i++) fuzz_check_instances(&ds->samples[i].labels, cfg.nc);
            yolo_dataset_free(ds);
        }
    }
    yolo_data_config_free(&cfg);
    return 0;
}
