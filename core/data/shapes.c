/* The synthetic `shapes` dataset (see shapes.h). */
#include "data/shapes.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/fsutil.h"
#include "data/image.h"
#include "data/rng.h"

#define SHAPES_SEED 0x5ea5e5ull
#define SHAPES_DIR "shapes-v1"
#define CIRCLE_POINTS 48

static const char *class_names[YOLO_SHAPES_NC] = {"circle", "rectangle", "triangle"};

void yolo_shapes_default_options(yolo_shapes_options *opt) {
    opt->n_train = 128;
    opt->n_val = 32;
    opt->imgsz = 320;
    opt->cls_train = 64;
    opt->cls_val = 16;
    opt->cls_imgsz = 64;
}

/* A textured background: a two-colour gradient, low-contrast stripes, noise. */
static void draw_background(yolo_image *img, yolo_rng *rng, float mean[3]) {
    float c0[3], c1[3];
    for (int c = 0; c < 3; c++) {
        c0[c] = (float)yolo_rng_range(rng, 30, 225);
        c1[c] = (float)yolo_rng_range(rng, 30, 225);
    }
    double ang = yolo_rng_range(rng, 0, M_PI), freq = yolo_rng_range(rng, 0.05, 0.4);
    double amp = yolo_rng_range(rng, 0, 25), gx = cos(ang + 1.0), gy = sin(ang + 1.0);
    double norm = fabs(gx) * img->width + fabs(gy) * img->height;
    int noise = 6 + (int)yolo_rng_below(rng, 14);
    double sum[3] = {0, 0, 0};
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++) {
            double t = ((gx >= 0 ? x : x - img->width) * gx + (gy >= 0 ? y : y - img->height) * gy) / norm;
            t = t < 0 ? -t : t;
            double stripe = amp * sin((x * cos(ang) + y * sin(ang)) * freq);
            uint32_t r = yolo_rng_u32(rng);
            uint8_t *p = img->data + ((size_t)y * img->width + x) * 3;
            for (int c = 0; c < 3; c++) {
                int n = (int)((r >> (8 * c)) & 0xFF) % (2 * noise + 1) - noise;
                double v = c0[c] + (c1[c] - c0[c]) * t + stripe + n;
                p[c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                sum[c] += p[c];
            }
        }
    for (int c = 0; c < 3; c++)
        mean[c] = (float)(sum[c] / ((double)img->width * img->height));
}

/* A colour far enough from the background mean to be seen. */
static void pick_colour(yolo_rng *rng, const float bg[3], uint8_t out[3]) {
    for (int attempt = 0; attempt < 32; attempt++) {
        float d = 0;
        for (int c = 0; c < 3; c++) {
            out[c] = (uint8_t)yolo_rng_below(rng, 256);
            d += fabsf(out[c] - bg[c]);
        }
        if (d >= 180)
            return;
    }
    for (int c = 0; c < 3; c++)
        out[c] = bg[c] > 127 ? 20 : 235;
}

/* The outline of shape `cls` centred at (cx, cy) with size r; returns points. */
static int make_outline(yolo_rng *rng, int cls, double cx, double cy, double r, float *xy) {
    double rot = yolo_rng_range(rng, 0, 2 * M_PI);
    if (cls == 0) {
        for (int i = 0; i < CIRCLE_POINTS; i++) {
            double a = 2 * M_PI * i / CIRCLE_POINTS;
            xy[2 * i] = (float)(cx + r * cos(a));
            xy[2 * i + 1] = (float)(cy + r * sin(a));
        }
        return CIRCLE_POINTS;
    }
    if (cls == 1) {
        double aspect = yolo_rng_range(rng, 0.5, 1.0), hw = r, hh = r * aspect;
        rot = yolo_rng_range(rng, 0, M_PI / 2);
        double dx[4] = {-hw, hw, hw, -hw}, dy[4] = {-hh, -hh, hh, hh};
        for (int i = 0; i < 4; i++) {
            xy[2 * i] = (float)(cx + dx[i] * cos(rot) - dy[i] * sin(rot));
            xy[2 * i + 1] = (float)(cy + dx[i] * sin(rot) + dy[i] * cos(rot));
        }
        return 4;
    }
    double a[3] = {rot, rot + 2 * M_PI / 3 + yolo_rng_range(rng, -0.35, 0.35),
                   rot + 4 * M_PI / 3 + yolo_rng_range(rng, -0.35, 0.35)};
    for (int i = 0; i < 3; i++) {
        double rr = r * yolo_rng_range(rng, 0.85, 1.0);
        xy[2 * i] = (float)(cx + rr * cos(a[i]));
        xy[2 * i + 1] = (float)(cy + rr * sin(a[i]));
    }
    return 3;
}

static void outline_box(const float *xy, int n, float box[4]) {
    box[0] = box[2] = xy[0];
    box[1] = box[3] = xy[1];
    for (int i = 1; i < n; i++) {
        box[0] = fminf(box[0], xy[2 * i]), box[2] = fmaxf(box[2], xy[2 * i]);
        box[1] = fminf(box[1], xy[2 * i + 1]), box[3] = fmaxf(box[3], xy[2 * i + 1]);
    }
}

/* Fills the polygon with the colour plus a little noise. */
static void paint(yolo_image *img, yolo_rng *rng, const float *xy, int n, const uint8_t colour[3]) {
    uint8_t *mask = calloc((size_t)img->width * img->height, 1);
    if (!mask)
        return;
    yolo_polygon_fill(xy, n, mask, img->width, img->height, 1);
    for (size_t i = 0; i < (size_t)img->width * img->height; i++) {
        if (!mask[i])
            continue;
        uint32_t r = yolo_rng_u32(rng);
        for (int c = 0; c < 3; c++) {
            int v = colour[c] + (int)((r >> (8 * c)) & 15) - 8;
            img->data[3 * i + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    free(mask);
}

static yolo_status write_text(const char *path, const char *text) {
    return yolo_write_file_nosync(path, text, strlen(text));
}

static yolo_status save_jpeg(const yolo_image *img, const char *path) {
    uint8_t *bytes;
    size_t len;
    yolo_status st = yolo_image_encode_jpeg(img, 92, &bytes, &len);
    if (st == YOLO_OK)
        st = yolo_write_file_nosync(path, bytes, len);
    free(bytes);
    return st;
}

static yolo_status detection_image(const char *dir, const char *split, int index, uint32_t stream, int size) {
    yolo_rng rng;
    yolo_rng_init(&rng, SHAPES_SEED, YOLO_RNG_SHAPES, stream, (uint32_t)index);
    yolo_image img;
    yolo_status st = yolo_image_alloc(&img, size, size);
    if (st != YOLO_OK)
        return st;
    float bg[3];
    draw_background(&img, &rng, bg);
    /* 1 in 16 images is a background; else 1-4 shapes that do not touch */
    int want = yolo_rng_below(&rng, 16) == 0 ? 0 : 1 + (int)yolo_rng_below(&rng, 4);
    float boxes[4][4];
    int placed = 0;
    char *label = malloc(16384);
    size_t used = 0;
    if (!label) {
        yolo_image_free(&img);
        return yolo_error(YOLO_ERR_NOMEM, "shapes");
    }
    label[0] = 0;
    for (int attempt = 0; attempt < 40 && placed < want; attempt++) {
        int cls = (int)yolo_rng_below(&rng, YOLO_SHAPES_NC);
        double r = yolo_rng_range(&rng, size * 0.07, size * 0.2);
        double cx = yolo_rng_range(&rng, r + 2, size - r - 2), cy = yolo_rng_range(&rng, r + 2, size - r - 2);
        float xy[2 * CIRCLE_POINTS], box[4];
        int n = make_outline(&rng, cls, cx, cy, r, xy);
        outline_box(xy, n, box);
        bool clash = box[0] < 1 || box[1] < 1 || box[2] > size - 1 || box[3] > size - 1;
        for (int k = 0; k < placed && !clash; k++)
            clash = !(box[2] + 4 < boxes[k][0] || boxes[k][2] + 4 < box[0] || box[3] + 4 < boxes[k][1] ||
                      boxes[k][3] + 4 < box[1]);
        if (clash)
            continue;
        memcpy(boxes[placed++], box, sizeof box);
        uint8_t colour[3];
        pick_colour(&rng, bg, colour);
        paint(&img, &rng, xy, n, colour);
        used += (size_t)snprintf(label + used, 16384 - used, "%d", cls);
        for (int i = 0; i < n; i++)
            used += (size_t)snprintf(label + used, 16384 - used, " %.6f %.6f", xy[2 * i] / size, xy[2 * i + 1] / size);
        used += (size_t)snprintf(label + used, 16384 - used, "\n");
    }
    char name[64], path_buf[64];
    snprintf(name, sizeof name, "images/%s/%06d.jpg", split, index);
    char *ipath = yolo_path_join(dir, name);
    snprintf(path_buf, sizeof path_buf, "labels/%s/%06d.txt", split, index);
    char *lpath = yolo_path_join(dir, path_buf);
    st = ipath && lpath ? save_jpeg(&img, ipath) : yolo_error(YOLO_ERR_NOMEM, "shapes");
    if (st == YOLO_OK && placed > 0)
        st = write_text(lpath, label);
    free(ipath), free(lpath), free(label);
    yolo_image_free(&img);
    return st;
}

static yolo_status classify_image(const char *dir, const char *split, int cls, int index, uint32_t stream, int size) {
    yolo_rng rng;
    yolo_rng_init(&rng, SHAPES_SEED, YOLO_RNG_SHAPES, stream, (uint32_t)(cls * 1000000 + index));
    yolo_image img;
    yolo_status st = yolo_image_alloc(&img, size, size);
    if (st != YOLO_OK)
        return st;
    float bg[3];
    draw_background(&img, &rng, bg);
    double r = yolo_rng_range(&rng, size * 0.22, size * 0.4);
    double cx = size / 2.0 + yolo_rng_range(&rng, -0.1, 0.1) * size, cy = size / 2.0 + yolo_rng_range(&rng, -0.1, 0.1) * size;
    float xy[2 * CIRCLE_POINTS];
    int n = make_outline(&rng, cls, cx, cy, r, xy);
    uint8_t colour[3];
    pick_colour(&rng, bg, colour);
    paint(&img, &rng, xy, n, colour);
    char name[128];
    snprintf(name, sizeof name, "classify/%s/%s/%06d.jpg", split, class_names[cls], index);
    char *path = yolo_path_join(dir, name);
    st = path ? save_jpeg(&img, path) : yolo_error(YOLO_ERR_NOMEM, "shapes");
    free(path);
    yolo_image_free(&img);
    return st;
}

static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *child = yolo_path_join(path, e->d_name);
            if (child)
                remove_tree(child);
            free(child);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

yolo_status yolo_shapes_generate(const char *dir, const yolo_shapes_options *opt) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", dir, (long)getpid());
    remove_tree(tmp);
    const char *sub[] = {"images/train", "images/val", "labels/train", "labels/val"};
    yolo_status st = YOLO_OK;
    for (size_t i = 0; st == YOLO_OK && i < sizeof sub / sizeof sub[0]; i++) {
        char *p = yolo_path_join(tmp, sub[i]);
        st = p ? yolo_mkdirs(p) : YOLO_ERR_NOMEM;
        free(p);
    }
    for (int s = 0; st == YOLO_OK && s < 2; s++)
        for (int c = 0; st == YOLO_OK && c < YOLO_SHAPES_NC; c++) {
            char rel[128];
            snprintf(rel, sizeof rel, "classify/%s/%s", s ? "val" : "train", class_names[c]);
            char *p = yolo_path_join(tmp, rel);
            st = p ? yolo_mkdirs(p) : YOLO_ERR_NOMEM;
            free(p);
        }
    for (int i = 0; st == YOLO_OK && i < opt->n_train; i++)
        st = detection_image(tmp, "train", i, 0, opt->imgsz);
    for (int i = 0; st == YOLO_OK && i < opt->n_val; i++)
        st = detection_image(tmp, "val", i, 1, opt->imgsz);
    for (int c = 0; st == YOLO_OK && c < YOLO_SHAPES_NC; c++) {
        for (int i = 0; st == YOLO_OK && i < opt->cls_train; i++)
            st = classify_image(tmp, "train", c, i, 2, opt->cls_imgsz);
        for (int i = 0; st == YOLO_OK && i < opt->cls_val; i++)
            st = classify_image(tmp, "val", c, i, 3, opt->cls_imgsz);
    }
    if (st == YOLO_OK) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "# yolo built-in synthetic dataset (generated; seed 0x%llx)\n"
                 "path: .\ntrain: images/train # %d images\nval: images/val # %d images\n"
                 "names:\n  0: %s\n  1: %s\n  2: %s\n",
                 (unsigned long long)SHAPES_SEED, opt->n_train, opt->n_val, class_names[0], class_names[1], class_names[2]);
        char *p = yolo_path_join(tmp, "shapes.yaml");
        st = p ? write_text(p, yaml) : YOLO_ERR_NOMEM;
        free(p);
    }
    if (st == YOLO_OK && rename(tmp, dir) != 0) {
        /* another process finished first: theirs is identical */
        if (!yolo_is_dir(dir))
            st = yolo_error(YOLO_ERR_IO, "%s: cannot rename into place: %s", dir, strerror(errno));
    }
    remove_tree(tmp);
    return st;
}

yolo_status yolo_shapes_ensure(char **yaml_path, char **classify_root) {
    *yaml_path = NULL;
    *classify_root = NULL;
    char *cache = yolo_cache_dir();
    char *dir = cache ? yolo_path_join(cache, SHAPES_DIR) : NULL;
    yolo_status st = dir ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "cache path");
    if (st == YOLO_OK && !yolo_is_dir(dir)) {
        st = yolo_mkdirs(cache);
        yolo_shapes_options opt;
        yolo_shapes_default_options(&opt);
        if (st == YOLO_OK)
            st = yolo_shapes_generate(dir, &opt);
    }
    if (st == YOLO_OK) {
        *yaml_path = yolo_path_join(dir, "shapes.yaml");
        *classify_root = yolo_path_join(dir, "classify");
    }
    free(cache);
    free(dir);
    return st;
}
