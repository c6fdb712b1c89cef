/* Binary label cache (format and checks in label_cache.h). Little-endian
 * host layout; the magic carries a version so a format change reads as a
 * miss. */
#include "data/label_cache.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/fsutil.h"
#include "data/image.h"
#include "data/warn.h"
#include "util/grow_buf.h"

#define CACHE_MAGIC "YOLOLC03"
#define CACHE_MAGIC_FAMILY "YOLOLC" /* older versions: a quiet miss */
#define CHECKSUM_BYTES 8

typedef yolo_grow_buf wbuf;

static void put(wbuf *b, const void *data, size_t len) { yolo_grow_buf_put(b, data, len); }

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

static size_t left(const rbuf *b) { return b->n - b->pos; }

static char *get_str(rbuf *b) {
    int64_t n = get_i64(b);
    if (n < 0 || b->failed || (uint64_t)n > left(b)) {
        b->failed = true; /* a NULL string is never written for what is read back */
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
        /* labels/<split folder>.yolo-cache; image folders: <split>.yolo-cache */
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
                size_t size = n + sizeof YOLO_LABEL_CACHE_SUFFIX;
                near = malloc(size);
                if (near)
                    snprintf(near, size, "%s%s", dir, YOLO_LABEL_CACHE_SUFFIX);
            }
            free(parent);
            free(dir);
        }
    }
    if (near)
        return near;
    char *cache = yolo_cache_dir();
    char name[64];
    snprintf(name, sizeof name, "labels/%016llx%s", (unsigned long long)location_key, YOLO_LABEL_CACHE_SUFFIX);
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
        put_str(&b, s->path ? s->path : "");
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
        put_str(&b, warnings[i] ? warnings[i] : "");
    uint64_t sum = 0;
    put(&b, &sum, sizeof sum);
    if (!b.oom)
        yolo_label_cache_seal((uint8_t *)b.p, b.n);
    yolo_status st;
    if (b.oom) {
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

void yolo_label_cache_seal(uint8_t *data, size_t len) {
    if (len < CHECKSUM_BYTES)
        return;
    uint64_t sum = yolo_hash64(0, data, len - CHECKSUM_BYTES);
    memcpy(data + len - CHECKSUM_BYTES, &sum, sizeof sum);
}

/* Reads `count` items of `size` bytes into a fresh array, or fails when
 * the bytes left cannot hold them (so a damaged count never allocates). */
static void *get_array(rbuf *b, int64_t count, size_t size) {
    if (b->failed || count < 0 || (uint64_t)count > left(b) / size) {
        b->failed = true;
        return NULL;
    }
    void *p = malloc((size_t)count * size + 1);
    if (!p || !get(b, p, (size_t)count * size)) {
        b->failed = true;
        free(p);
        return NULL;
    }
    return p;
}

static bool all_finite(const float *v, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++)
        if (!(v[i] >= lo && v[i] <= hi)) /* also rejects NaN */
            return false;
    return true;
}

/* One sample's instances; NULL when fine, else what is wrong. */
static const char *get_instances(rbuf *b, int nc, yolo_instances *l) {
    int32_t m = l->n;
    l->n = 0;
    if (m == 0)
        return NULL; /* a background: nothing else was written */
    /* per instance at least a class and a box */
    if (m < 0 || (uint64_t)m > left(b) / (sizeof(int32_t) + 4 * sizeof(float)))
        return "an instance count larger than the file";
    l->cls = get_array(b, m, sizeof(int32_t));
    l->boxes = get_array(b, m, 4 * sizeof(float));
    int32_t has_poly = 0;
    get(b, &has_poly, sizeof has_poly);
    l->n = l->cap = b->failed ? 0 : m;
    if (b->failed)
        return "truncated instances";
    for (int k = 0; k < m; k++)
        if (l->cls[k] < 0 || l->cls[k] >= nc)
            return "a class id outside [0, nc)";
    if (!all_finite(l->boxes, 4 * (size_t)m, 0, 1))
        return "a box outside the unit square";
    if (has_poly != 0 && has_poly != 1)
        return "a bad polygon flag";
    if (has_poly) {
        l->poly_start = get_array(b, (int64_t)m + 1, sizeof(int32_t));
        if (!l->poly_start)
            return "truncated polygon offsets";
        if (l->poly_start[0] != 0)
            return "polygon offsets that do not start at 0";
        for (int k = 0; k < m; k++)
            if (l->poly_start[k + 1] < l->poly_start[k])
                return "decreasing polygon offsets";
        l->poly_cap = l->poly_start[m];
        l->poly_xy = get_array(b, l->poly_start[m], 2 * sizeof(float));
        if (!l->poly_xy)
            return "polygon offsets past the end of the points";
        if (!all_finite(l->poly_xy, 2 * (size_t)l->poly_cap, 0, 1))
            return "a polygon point outside the unit square";
    }
    if (l->kpt_count) {
        size_t per = (size_t)l->kpt_count * (size_t)l->kpt_dims;
        l->kpts = get_array(b, m, per * sizeof(float));
        if (!l->kpts)
            return "truncated keypoints";
        if (!all_finite(l->kpts, per * (size_t)m, -FLT_MAX, FLT_MAX))
            return "a keypoint that is not finite";
    }
    return NULL;
}

static void free_samples(yolo_sample *samples, int64_t n) {
    for (int64_t i = 0; samples && i < n; i++) {
        free(samples[i].path);
        yolo_instances_free(&samples[i].labels);
    }
    free(samples);
}

yolo_cache_result yolo_label_cache_decode(const uint8_t *data, size_t len, const char *path, uint64_t key,
                                          yolo_dataset *ds, char ***warnings, int64_t *n_warnings) {
    size_t fixed = 8 + sizeof key + CHECKSUM_BYTES;
    if (len >= 6 && memcmp(data, CACHE_MAGIC_FAMILY, 6) == 0 && (len < 8 || memcmp(data, CACHE_MAGIC, 8) != 0))
        return YOLO_CACHE_MISS; /* our own cache in an older format */
    if (len < fixed || memcmp(data, CACHE_MAGIC, 8) != 0) {
        yolo_error(YOLO_ERR_FORMAT, "%s: not a yolo label cache (%zu bytes, no %s header)", path, len, CACHE_MAGIC);
        return YOLO_CACHE_DAMAGED;
    }
    uint64_t sum, stored;
    memcpy(&sum, data + len - CHECKSUM_BYTES, sizeof sum);
    if (sum != yolo_hash64(0, data, len - CHECKSUM_BYTES)) {
        yolo_error(YOLO_ERR_FORMAT, "%s: label cache checksum mismatch (the file was changed or cut short)", path);
        return YOLO_CACHE_DAMAGED;
    }
    memcpy(&stored, data + 8, sizeof stored);
    if (stored != key)
        return YOLO_CACHE_MISS;
    rbuf b = {data, len - CHECKSUM_BYTES, 8 + sizeof key, false};
    int64_t n = get_i64(&b);
    yolo_dataset_stats stats;
    get(&b, &stats, sizeof stats);
    int64_t kc = get_i64(&b), kd = get_i64(&b);
    const char *why = NULL;
    int nc = ds->cfg->nc;
    yolo_sample *samples = NULL;
    int64_t done = 0;
    if (b.failed)
        why = "a truncated header";
    else if (kc != ds->kpt_count || kd != ds->kpt_dims)
        why = "another keypoint layout";
    else if (n < 0 || (uint64_t)n > left(&b) / (sizeof(int64_t) + 4 * sizeof(int32_t)))
        why = "an image count larger than the file";
    else if (!(samples = calloc((size_t)n + 1, sizeof *samples)))
        why = "out of memory";
    for (; !why && done < n; done++) {
        yolo_sample *s = &samples[done];
        yolo_instances_init(&s->labels, (int)kc, (int)kd);
        s->path = get_str(&b);
        int32_t head[4] = {0};
        get(&b, head, sizeof head);
        s->width = head[0], s->height = head[1], s->image_class = head[2], s->labels.n = head[3];
        if (b.failed || !s->path[0])
            why = "a truncated or empty image path";
        else if (yolo_image_check_size(head[0], head[1], s->path) != YOLO_OK)
            why = "an image size out of range";
        else if (head[2] < -1 || head[2] >= nc)
            why = "an image class outside [0, nc)";
        else
            why = get_instances(&b, nc, &s->labels);
    }
    int64_t nw = why ? 0 : get_i64(&b);
    char **w = NULL;
    if (!why && (b.failed || nw < 0 || (uint64_t)nw > left(&b) / sizeof(int64_t)))
        why = "a warning count larger than the file";
    else if (!why && !(w = calloc((size_t)nw + 1, sizeof(char *))))
        why = "out of memory";
    for (int64_t i = 0; !why && i < nw; i++)
        if (!(w[i] = get_str(&b)))
            why = "a truncated warning";
    if (!why && b.pos != b.n)
        why = "bytes after the end";
    if (!why && (stats.images != n || stats.corrupt < 0 || stats.repaired < 0 || stats.backgrounds < 0))
        why = "counts that do not match its images";
    if (why) {
        free_samples(samples, done);
        yolo_free_strings(w, w ? nw : 0);
        yolo_error(YOLO_ERR_FORMAT, "%s: damaged label cache: %s (at byte %zu of %zu)", path, why, b.pos, len);
        return YOLO_CACHE_DAMAGED;
    }
    ds->samples = samples;
    ds->n = n;
    ds->stats = stats;
    *warnings = w;
    *n_warnings = nw;
    return YOLO_CACHE_HIT;
}

yolo_cache_result yolo_label_cache_load(const char *path, uint64_t key, yolo_dataset *ds, char ***warnings,
                                        int64_t *n_warnings) {
    uint8_t *data;
    size_t len;
    if (!yolo_is_file(path))
        return YOLO_CACHE_MISS;
    if (yolo_read_file(path, &data, &len) != YOLO_OK)
        return YOLO_CACHE_DAMAGED;
    yolo_cache_result r = yolo_label_cache_decode(data, len, path, key, ds, warnings, n_warnings);
    free(data);
    return r;
}
