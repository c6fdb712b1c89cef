/* Binary label cache (see label_cache.h). Little-endian host layout; the
 * magic carries a version so a format change reads as a miss. */
#include "data/label_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/fsutil.h"

#define CACHE_MAGIC "YOLOLC02"

typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
    bool failed;
} wbuf;

static void put(wbuf *b, const void *data, size_t len) {
    if (b->failed)
        return;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (cap < b->n + len)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
}

static void put_i64(wbuf *b, int64_t v) { put(b, &v, sizeof v); }
static void put_str(wbuf *b, const char *s) {
    int64_t n = s ? (int64_t)strlen(s) : -1;
    put_i64(b, n);
    if (s)
        put(b, s, (size_t)n);
}

typedef struct rbuf {
    const uint8_t *p;
    size_t n, pos;
    bool failed;
} rbuf;

static bool get(rbuf *b, void *out, size_t len) {
    if (b->failed || b->pos + len > b->n) {
        b->failed = true;
        return false;
    }
    memcpy(out, b->p + b->pos, len);
    b->pos += len;
    return true;
}

static int64_t get_i64(rbuf *b) {
    int64_t v = 0;
    get(b, &v, sizeof v);
    return v;
}

static char *get_str(rbuf *b) {
    int64_t n = get_i64(b);
    if (n < 0 || b->failed || (size_t)n > b->n - b->pos) {
        b->failed = b->failed || n != -1;
        return NULL;
    }
    char *s = strndup((const char *)b->p + b->pos, (size_t)n);
    b->pos += (size_t)n;
    if (!s)
        b->failed = true;
    return s;
}

char *yolo_label_cache_path(const yolo_dataset *ds, const char *first_image, uint64_t location_key) {
    const yolo_data_config *c = ds->cfg;
    char *near = NULL;
    if (!yolo_vfs_is_archive(c->vfs) && first_image) {
        /* Ultralytics' place: labels/<split folder>.cache; image folders: <split>.cache */
        char *dir;
        if (c->image_folder) {
            dir = strdup(c->split_paths[ds->split][0]);
        } else {
            char *label = yolo_label_path_for(first_image);
            dir = label ? yolo_path_dirname(label) : NULL;
            free(label);
        }
        if (dir) {
            size_t n = strlen(dir);
            while (n > 1 && dir[n - 1] == '/')
                dir[--n] = 0;
            char *parent = yolo_path_dirname(dir);
            if (parent && yolo_dir_writable(parent)) {
                near = malloc(n + 8);
                if (near)
                    snprintf(near, n + 8, "%s.cache", dir);
            }
            free(parent);
            free(dir);
        }
    }
    if (near)
        return near;
    char *cache = yolo_cache_dir();
    char name[64];
    snprintf(name, sizeof name, "labels/%016llx.cache", (unsigned long long)location_key);
    char *path = cache ? yolo_path_join(cache, name) : NULL;
    free(cache);
    return path;
}

yolo_status yolo_label_cache_save(const char *path, uint64_t key, const yolo_dataset *ds, char *const *warnings,
                                  int64_t n_warnings) {
    wbuf b = {0};
    put(&b, CACHE_MAGIC, 8);
    put(&b, &key, sizeof key);
    put_i64(&b, ds->n);
    put(&b, &ds->stats, sizeof ds->stats);
    put_i64(&b, ds->kpt_count);
    put_i64(&b, ds->kpt_dims);
    for (int64_t i = 0; i < ds->n; i++) {
        const yolo_sample *s = &ds->samples[i];
        const yolo_instances *l = &s->labels;
        put_str(&b, s->path);
        int32_t head[4] = {s->width, s->height, s->image_class, l->n};
        put(&b, head, sizeof head);
        if (l->n) {
            put(&b, l->cls, sizeof(int32_t) * (size_t)l->n);
            put(&b, l->boxes, sizeof(float) * 4 * (size_t)l->n);
            int32_t has_poly = l->poly_start != NULL;
            put(&b, &has_poly, sizeof has_poly);
            if (has_poly) {
                put(&b, l->poly_start, sizeof(int32_t) * ((size_t)l->n + 1));
                put(&b, l->poly_xy, sizeof(float) * 2 * (size_t)yolo_instances_poly_points(l));
            }
            if (l->kpt_count)
                put(&b, l->kpts, sizeof(float) * (size_t)l->n * l->kpt_count * l->kpt_dims);
        }
    }
    put_i64(&b, n_warnings);
    for (int64_t i = 0; i < n_warnings; i++)
        put_str(&b, warnings[i]);
    yolo_status st;
    if (b.failed) {
        st = yolo_error(YOLO_ERR_NOMEM, "%s: building the label cache", path);
    } else {
        char *dir = yolo_path_dirname(path);
        st = dir ? yolo_mkdirs(dir) : YOLO_ERR_NOMEM;
        free(dir);
        if (st == YOLO_OK)
            st = yolo_write_file(path, b.p, b.n);
    }
    free(b.p);
    return st;
}

yolo_status yolo_label_cache_load(const char *path, uint64_t key, yolo_dataset *ds, char ***warnings,
                                  int64_t *n_warnings) {
    uint8_t *data;
    size_t len;
    yolo_status st = yolo_read_file(path, &data, &len);
    if (st != YOLO_OK)
        return st;
    rbuf b = {data, len, 0, false};
    char magic[8];
    uint64_t stored = 0;
    get(&b, magic, 8);
    get(&b, &stored, sizeof stored);
    if (b.failed || memcmp(magic, CACHE_MAGIC, 8) != 0 || stored != key) {
        free(data);
        return yolo_error(YOLO_ERR_FORMAT, "%s: stale or foreign label cache", path);
    }
    int64_t n = get_i64(&b);
    yolo_dataset_stats stats;
    get(&b, &stats, sizeof stats);
    int kc = (int)get_i64(&b), kd = (int)get_i64(&b);
    yolo_sample *samples = (!b.failed && n >= 0 && (size_t)n <= len) ? calloc((size_t)n + 1, sizeof *samples) : NULL;
    if (!samples)
        b.failed = true;
    int64_t done = 0;
    for (; !b.failed && done < n; done++) {
        yolo_sample *s = &samples[done];
        yolo_instances_init(&s->labels, kc, kd);
        s->path = get_str(&b);
        int32_t head[4];
        if (!get(&b, head, sizeof head) || head[3] < 0) {
            b.failed = true;
            break;
        }
        s->width = head[0], s->height = head[1], s->image_class = head[2];
        int m = head[3];
        if (m == 0)
            continue;
        int32_t *cls = malloc(sizeof(int32_t) * (size_t)m);
        float *boxes = malloc(sizeof(float) * 4 * (size_t)m);
        int32_t has_poly = 0;
        if (!cls || !boxes || !get(&b, cls, sizeof(int32_t) * (size_t)m) || !get(&b, boxes, sizeof(float) * 4 * (size_t)m) ||
            !get(&b, &has_poly, sizeof has_poly)) {
            free(cls), free(boxes);
            b.failed = true;
            break;
        }
        int32_t *ps = NULL;
        float *xy = NULL, *kp = NULL;
        if (has_poly) {
            ps = malloc(sizeof(int32_t) * ((size_t)m + 1));
            if (!ps || !get(&b, ps, sizeof(int32_t) * ((size_t)m + 1)) || ps[m] < 0 || (size_t)ps[m] > len) {
                b.failed = true;
            } else {
                xy = malloc(sizeof(float) * 2 * ((size_t)ps[m] + 1));
                if (!xy || !get(&b, xy, sizeof(float) * 2 * (size_t)ps[m]))
                    b.failed = true;
            }
        }
        if (!b.failed && kc) {
            kp = malloc(sizeof(float) * (size_t)m * kc * kd);
            if (!kp || !get(&b, kp, sizeof(float) * (size_t)m * kc * kd))
                b.failed = true;
        }
        /* hand the arrays over to the instances */
        s->labels.cls = cls, s->labels.boxes = boxes, s->labels.poly_start = ps, s->labels.poly_xy = xy;
        s->labels.kpts = kp, s->labels.n = m, s->labels.cap = m, s->labels.poly_cap = ps ? ps[m] : 0;
    }
    int64_t nw = b.failed ? 0 : get_i64(&b);
    char **w = (!b.failed && nw >= 0 && (size_t)nw <= len) ? calloc((size_t)nw + 1, sizeof(char *)) : NULL;
    if (!w)
        b.failed = true;
    for (int64_t i = 0; !b.failed && i < nw; i++)
        w[i] = get_str(&b);
    free(data);
    if (b.failed) {
        for (int64_t i = 0; samples && i < n && i <= done; i++) {
            free(samples[i].path);
            yolo_instances_free(&samples[i].labels);
        }
        free(samples);
        yolo_free_strings(w, w ? nw : 0);
        return yolo_error(YOLO_ERR_FORMAT, "%s: damaged label cache", path);
    }
    ds->samples = samples;
    ds->n = n;
    ds->stats = stats;
    *warnings = w;
    *n_warnings = nw;
    return YOLO_OK;
}
