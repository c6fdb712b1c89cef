/* The built-in `shapes` dataset: deterministic (two generations are
 * byte-identical), labels inside the image, shapes visible against their
 * background, both splits, and data=shapes generating on first use. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"
#include "data/fsutil.h"
#include "data/image.h"
#include "data/shapes.h"
#include "data/warn.h"
#include "test_util.h"

static char root[256];

static void quiet(void *user, const char *msg) { (void)user, (void)msg; }

static void test_deterministic(void) {
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/a", root);
    snprintf(b, sizeof b, "%s/b", root);
    yolo_shapes_options o;
    yolo_shapes_default_options(&o);
    o.n_train = 12, o.n_val = 4, o.cls_train = 3, o.cls_val = 1;
    CHECK(yolo_shapes_generate(a, &o) == YOLO_OK);
    CHECK(yolo_shapes_generate(b, &o) == YOLO_OK);
    char **fa, **fb;
    int64_t na, nb;
    CHECK(yolo_list_files(a, &fa, &na) == YOLO_OK && yolo_list_files(b, &fb, &nb) == YOLO_OK);
    /* 12 + 4 images, their labels (backgrounds have none), 3 x (3 + 1) classify images, the yaml */
    CHECK_MSG(na == nb && na >= 12 + 4 + 12 + 1, "%lld vs %lld files", (long long)na, (long long)nb);
    for (int64_t i = 0; i < na && i < nb; i++) {
        uint8_t *x, *y;
        size_t lx, ly;
        CHECK(strcmp(fa[i] + strlen(a), fb[i] + strlen(b)) == 0);
        if (yolo_read_file(fa[i], &x, &lx) == YOLO_OK && yolo_read_file(fb[i], &y, &ly) == YOLO_OK) {
            CHECK_MSG(lx == ly && memcmp(x, y, lx) == 0, "%s differs between two generations", fa[i] + strlen(a));
            free(x), free(y);
        }
    }
    yolo_free_strings(fa, na);
    yolo_free_strings(fb, nb);
}

/* Mean colour inside a polygon against a ring around its box. */
static double contrast(const yolo_image *img, const float *xy_norm, int n) {
    int w = img->width, h = img->height;
    float *xy = malloc(sizeof(float) * 2 * n);
    float x0 = 1e9f, y0 = 1e9f, x1 = -1e9f, y1 = -1e9f;
    for (int i = 0; i < n; i++) {
        xy[2 * i] = xy_norm[2 * i] * w, xy[2 * i + 1] = xy_norm[2 * i + 1] * h;
        x0 = fminf(x0, xy[2 * i]), x1 = fmaxf(x1, xy[2 * i]), y0 = fminf(y0, xy[2 * i + 1]), y1 = fmaxf(y1, xy[2 * i + 1]);
    }
    uint8_t *mask = calloc((size_t)w * h, 1);
    yolo_polygon_fill(xy, n, mask, w, h, 1);
    double in[3] = {0}, out[3] = {0};
    long nin = 0, nout = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *p = img->data + ((size_t)y * w + x) * 3;
            bool ring = x >= x0 - 6 && x <= x1 + 6 && y >= y0 - 6 && y <= y1 + 6 && !(x >= x0 - 1 && x <= x1 + 1 && y >= y0 - 1 && y <= y1 + 1);
            if (mask[(size_t)y * w + x]) {
                for (int c = 0; c < 3; c++)
                    in[c] += p[c];
                nin++;
            } else if (ring) {
                for (int c = 0; c < 3; c++)
                    out[c] += p[c];
                nout++;
            }
        }
    free(mask), free(xy);
    if (!nin || !nout)
        return 0;
    double d = 0;
    for (int c = 0; c < 3; c++)
        d += fabs(in[c] / nin - out[c] / nout);
    return d;
}

static void test_builtin(void) {
    yolo_data_config cfg;
    CHECK(yolo_data_config_load("shapes", YOLO_NEED_POLYGONS, &cfg) == YOLO_OK);
    CHECK(cfg.nc == 3 && strcmp(cfg.names[2], "triangle") == 0);
    yolo_dataset *ds;
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_TRAIN, &(yolo_data_spec){YOLO_NEED_POLYGONS, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds->stats.images == 128 && ds->stats.corrupt == 0 && ds->stats.backgrounds > 0 && ds->stats.backgrounds < 20);
    int per_class[3] = {0};
    int low_contrast = 0, checked = 0;
    for (int64_t i = 0; i < ds->n; i++) {
        const yolo_instances *l = &ds->samples[i].labels;
        CHECK(ds->samples[i].width == 320 && ds->samples[i].height == 320);
        yolo_image img = {0};
        if (i < 16)
            CHECK(yolo_dataset_read_image(ds, i, 0, &img) == YOLO_OK);
        for (int k = 0; k < l->n; k++) {
            per_class[l->cls[k]]++;
            const float *b = l->boxes + 4 * k;
            CHECK(b[2] > 0.05f && b[3] > 0.05f && b[0] - b[2] / 2 >= 0 && b[0] + b[2] / 2 <= 1);
            int np = l->poly_start[k + 1] - l->poly_start[k];
            CHECK(np == (l->cls[k] == 0 ? 48 : l->cls[k] == 1 ? 4 : 3));
            if (img.data) {
                checked++;
                low_contrast += contrast(&img, l->poly_xy + 2 * l->poly_start[k], np) < 60;
            }
        }
        yolo_image_free(&img);
    }
    CHECK_MSG(per_class[0] > 40 && per_class[1] > 40 && per_class[2] > 40, "classes %d %d %d", per_class[0], per_class[1],
              per_class[2]);
    CHECK_MSG(checked > 20 && low_contrast == 0, "%d of %d shapes hard to see", low_contrast, checked);
    yolo_dataset_free(ds);
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_VAL, &(yolo_data_spec){YOLO_NEED_POLYGONS, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds->stats.images == 32);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
    /* the classification split of the same data=shapes */
    CHECK(yolo_data_config_load("shapes", YOLO_NEED_IMAGE_CLASS, &cfg) == YOLO_OK);
    CHECK(cfg.image_folder && cfg.nc == 3 && strcmp(cfg.names[1], "rectangle") == 0);
    CHECK(yolo_dataset_open(&cfg, YOLO_SPLIT_VAL, &(yolo_data_spec){YOLO_NEED_IMAGE_CLASS, NULL, NULL}, NULL, &ds) == YOLO_OK);
    CHECK(ds->stats.images == 48 && ds->samples[47].image_class == 2 && ds->samples[0].width == 64);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/yolo-test-shapes-XXXXXX");
    if (!mkdtemp(root))
        return test_skip("cannot make a temporary folder");
    setenv("YOLO_CACHE_DIR", root, 1);
    yolo_data_set_warning_handler(quiet, NULL);
    test_deterministic();
    test_builtin();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return test_result("test_data_shapes");
}
