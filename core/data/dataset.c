/* Indexing and checking one split (see dataset.h). */
#include "data/dataset.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/fsutil.h"
#include "data/image.h"
#include "data/label_cache.h"
#include "data/vfs.h"
#include "data/warn.h"

#define MIN_IMAGE_SIDE 10

typedef struct listed {
    char *path;
    int32_t image_class;
} listed;

typedef struct list {
    listed *v;
    int64_t n, cap;
} list;

static yolo_status list_add(list *l, const char *path, int32_t cls) {
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 1024;
        listed *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v)
            return yolo_error(YOLO_ERR_NOMEM, "image list");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].path = strdup(path);
    l->v[l->n].image_class = cls;
    if (!l->v[l->n].path)
        return yolo_error(YOLO_ERR_NOMEM, "image list");
    l->n++;
    return YOLO_OK;
}

static void list_free(list *l) {
    for (int64_t i = 0; i < l->n; i++)
        free(l->v[i].path);
    free(l->v);
}

static int cmp_listed(const void *a, const void *b) {
    return strcmp(((const listed *)a)->path, ((const listed *)b)->path);
}

static int32_t class_of(const yolo_data_config *c, const char *split_dir, const char *image) {
    size_t dl = strlen(split_dir);
    while (dl > 0 && split_dir[dl - 1] == '/')
        dl--;
    const char *rel = image + dl + (dl > 0 ? 1 : 0);
    const char *slash = strchr(rel, '/');
    if (!slash)
        return -1;
    size_t len = (size_t)(slash - rel);
    for (int i = 0; i < c->nc; i++)
        if (strlen(c->class_dirs[i]) == len && strncmp(c->class_dirs[i], rel, len) == 0)
            return i;
    return -2; /* a folder the train split does not have */
}

/* A .txt list of images: "./x" and other relative lines resolve against the list's folder. */
static yolo_status read_list_file(const yolo_data_config *c, const char *path, list *out) {
    uint8_t *text;
    size_t len;
    yolo_status st = yolo_vfs_read(c->vfs, path, &text, &len);
    if (st != YOLO_OK)
        return st;
    char *dir = yolo_path_dirname(path);
    char *save = NULL;
    for (char *line = strtok_r((char *)text, "\r\n", &save); st == YOLO_OK && line; line = strtok_r(NULL, "\r\n", &save)) {
        while (*line == ' ' || *line == '\t')
            line++;
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
            line[--n] = 0;
        if (!n || line[0] == '#')
            continue;
        char *p = line[0] == '/' ? strdup(line) : yolo_path_join(dir, line);
        if (p && !yolo_vfs_is_file(c->vfs, p) && line[0] != '/' && !yolo_vfs_is_archive(c->vfs)) {
            free(p);
            p = strdup(line);
        }
        if (!p)
            st = yolo_error(YOLO_ERR_NOMEM, "list");
        else if (yolo_path_is_image(p))
            st = list_add(out, p, -1);
        free(p);
    }
    free(dir);
    free(text);
    return st;
}

/* Drops the images of a sorted list that name a file listed before (a list
 * file or a second folder reaching it again), with one warning. */
static yolo_status drop_same_files(yolo_split split, list *l) {
    char **paths = malloc(sizeof *paths * (size_t)(l->n + 1));
    bool *keep = malloc((size_t)(l->n + 1));
    yolo_walk_skips skips = {0};
    yolo_status st = paths && keep ? YOLO_OK
                                   : yolo_error(YOLO_ERR_NOMEM, "%s split: %lld images", yolo_split_name(split),
                                                (long long)l->n);
    for (int64_t i = 0; st == YOLO_OK && i < l->n; i++)
        paths[i] = l->v[i].path;
    if (st == YOLO_OK)
        st = yolo_files_once(paths, l->n, keep, &skips);
    int64_t w = 0;
    for (int64_t i = 0; st == YOLO_OK && i < l->n; i++) {
        if (keep[i])
            l->v[w++] = l->v[i];
        else
            free(l->v[i].path);
    }
    if (st == YOLO_OK)
        l->n = w;
    char where[64], line[1200];
    snprintf(where, sizeof where, "%s split", yolo_split_name(split));
    if (st == YOLO_OK && yolo_walk_skips_describe(where, &skips, line, sizeof line))
        yolo_data_warn("%s", line);
    free(paths);
    free(keep);
    return st;
}

static yolo_status enumerate(const yolo_data_config *c, yolo_split split, list *out) {
    if (c->n_split_paths[split] == 0)
        return yolo_error(YOLO_ERR_CONFIG, "%s: no %s split", c->yaml_path ? c->yaml_path : c->source, yolo_split_name(split));
    /* one folder's walk lists each file once; a list file or several entries may name one twice */
    bool gathered = c->n_split_paths[split] > 1;
    for (int e = 0; e < c->n_split_paths[split]; e++) {
        const char *p = c->split_paths[split][e];
        yolo_status st = YOLO_OK;
        if (yolo_vfs_is_dir(c->vfs, p)) {
            char **files;
            int64_t n;
            yolo_walk_skips skips;
            char line[1200];
            st = yolo_vfs_walk(c->vfs, p, &files, &n, &skips);
            if (st == YOLO_OK && yolo_walk_skips_describe(p, &skips, line, sizeof line))
                yolo_data_warn("%s", line);
            for (int64_t i = 0; st == YOLO_OK && i < n; i++) {
                if (!yolo_path_is_image(files[i]))
                    continue;
                int32_t cls = -1;
                if (c->image_folder) {
                    cls = class_of(c, p, files[i]);
                    if (cls == -1)
                        continue; /* an image beside the class folders */
                }
                st = list_add(out, files[i], cls);
            }
            if (st == YOLO_OK)
                yolo_free_strings(files, n);
        } else if (yolo_vfs_is_file(c->vfs, p) && yolo_path_has_ext(p, ".txt")) {
            st = read_list_file(c, p, out);
            gathered = true;
        } else if (yolo_vfs_is_file(c->vfs, p) && yolo_path_is_image(p)) {
            st = list_add(out, p, -1);
        } else {
            st = yolo_error(YOLO_ERR_IO, "%s split: %s%s%s does not exist", yolo_split_name(split),
                            yolo_vfs_is_archive(c->vfs) ? yolo_vfs_name(c->vfs) : "", yolo_vfs_is_archive(c->vfs) ? ":" : "", p);
        }
        if (st != YOLO_OK)
            return st;
    }
    /* sorted and de-duplicated: the same order from folders and archives */
    if (out->n)
        qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_listed);
    int64_t w = 0;
    for (int64_t i = 0; i < out->n; i++) {
        if (w > 0 && strcmp(out->v[w - 1].path, out->v[i].path) == 0) {
            free(out->v[i].path);
            continue;
        }
        out->v[w++] = out->v[i];
    }
    out->n = w;
    return gathered && !yolo_vfs_is_archive(c->vfs) ? drop_same_files(split, out) : YOLO_OK;
}

/* ---- checking one image --------------------------------------------------- */

typedef enum { CHECK_OK = 0, CHECK_REPAIRED, CHECK_CORRUPT } check_result;

typedef struct job {
    yolo_dataset *ds;
    const list *images;
    yolo_sample *samples;
    check_result *results;
    char **messages;
    int64_t next;
    pthread_mutex_t lock;
} job;

static char *message_from_error(void) { return strdup(yolo_last_error()); }

static check_result check_one(yolo_dataset *ds, const listed *item, yolo_sample *s, char **message) {
    const yolo_data_config *c = ds->cfg;
    s->image_class = item->image_class;
    s->path = strdup(item->path);
    yolo_instances_init(&s->labels, ds->kpt_count, ds->kpt_dims);
    if (item->image_class == -2) {
        char buf[1200];
        snprintf(buf, sizeof buf, "%s: class folder not in the train split, image skipped", item->path);
        *message = strdup(buf);
        return CHECK_CORRUPT;
    }
    uint8_t *bytes;
    size_t len;
    if (yolo_vfs_read(c->vfs, item->path, &bytes, &len) != YOLO_OK) {
        *message = message_from_error();
        return CHECK_CORRUPT;
    }
    yolo_image_info info;
    bool repaired = false;
    check_result result = CHECK_OK;
    char why[1400] = "";
    if (yolo_image_probe(bytes, len, item->path, &info) != YOLO_OK) {
        snprintf(why, sizeof why, "%s, image skipped", yolo_last_error());
        result = CHECK_CORRUPT;
    } else if (info.width < MIN_IMAGE_SIDE || info.height < MIN_IMAGE_SIDE) {
        snprintf(why, sizeof why, "%s: image %dx%d is smaller than %d px, skipped", item->path, info.width, info.height,
                 MIN_IMAGE_SIDE);
        result = CHECK_CORRUPT;
    } else if (info.truncated) {
        /* a truncated file: usable if the decoder only warns */
        yolo_image img;
        if (yolo_image_decode(bytes, len, item->path, 0, &img, &repaired) != YOLO_OK) {
            snprintf(why, sizeof why, "%s, image skipped", yolo_last_error());
            result = CHECK_CORRUPT;
        } else {
            yolo_image_free(&img);
            snprintf(why, sizeof why, "%s: truncated image restored (missing end marker)", item->path);
            result = CHECK_REPAIRED;
        }
    }
    free(bytes);
    if (result == CHECK_CORRUPT) {
        *message = strdup(why);
        return result;
    }
    s->width = info.width;
    s->height = info.height;
    if (c->image_folder)
        goto done;
    /* labels: a missing or empty file is a background image */
    char *label = yolo_label_path_for(item->path);
    if (!label) {
        *message = strdup("out of memory");
        return CHECK_CORRUPT;
    }
    bool has_label;
    yolo_status st = yolo_vfs_optional_file(c->vfs, label, &has_label);
    if (st != YOLO_OK) { /* a folder or a link loop where the label file goes is not a background */
        snprintf(why, sizeof why, "%s; image skipped", yolo_last_error());
        free(label);
        *message = strdup(why);
        return CHECK_CORRUPT;
    }
    if (has_label) {
        uint8_t *text;
        size_t tlen;
        st = yolo_vfs_read(c->vfs, label, &text, &tlen);
        yolo_label_repairs rep = {0};
        if (st == YOLO_OK) {
            yolo_label_context ctx = {label, c->nc, ds->spec.needs, c->kpt_count, c->kpt_dims, ds->tolerance};
            yolo_label_parse_fn parse = ds->spec.parse_labels ? ds->spec.parse_labels : yolo_label_parse_yolo;
            st = parse(&ctx, (const char *)text, tlen, &s->labels, &rep);
            free(text);
        }
        if (st != YOLO_OK) {
            snprintf(why, sizeof why, "%s, image skipped", yolo_last_error());
            free(label);
            *message = strdup(why);
            return CHECK_CORRUPT;
        }
        if (rep.count) {
            size_t used = strlen(why);
            snprintf(why + used, sizeof why - used, "%s%s: %d row%s repaired (%s)", used ? "; " : "", label, rep.count,
                     rep.count == 1 ? "" : "s", rep.message);
            result = CHECK_REPAIRED;
        }
    }
    free(label);
done:
    if (result == CHECK_REPAIRED)
        *message = strdup(why);
    return result;
}

static void *index_worker(void *arg) {
    job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        int64_t i = j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->images->n)
            break;
        j->results[i] = check_one(j->ds, &j->images->v[i], &j->samples[i], &j->messages[i]);
    }
    return NULL;
}

static uint64_t cache_key(const yolo_dataset *ds, const list *images, float tol) {
    const yolo_data_config *c = ds->cfg;
    /* The salt changes when what a scan accepts changes, so no cache written
     * before says otherwise (3: BMP, WebP and TIFF images are decoded). */
    uint64_t h = yolo_hash_str(0, "yolo-label-cache-3");
    h = yolo_hash_str(h, ds->spec.label_format ? ds->spec.label_format : "yolo-v1");
    h = yolo_hash64(h, &ds->spec.needs, sizeof ds->spec.needs);
    int32_t ints[5] = {c->nc, c->kpt_count, c->kpt_dims, ds->kpt_count, c->image_folder};
    h = yolo_hash64(h, ints, sizeof ints);
    h = yolo_hash64(h, &tol, sizeof tol);
    for (int i = 0; c->image_folder && i < c->nc; i++)
        h = yolo_hash_str(h, c->class_dirs[i]);
    if (yolo_vfs_is_archive(c->vfs))
        h = yolo_hash_str(h, yolo_vfs_name(c->vfs));
    for (int64_t i = 0; i < images->n; i++) {
        const char *p = images->v[i].path;
        h = yolo_hash_str(h, p);
        uint64_t s = yolo_vfs_stamp(c->vfs, p);
        h = yolo_hash64(h, &s, sizeof s);
        if (!c->image_folder) {
            char *label = yolo_label_path_for(p);
            if (label) {
                s = yolo_vfs_stamp(c->vfs, label);
                h = yolo_hash64(h, &s, sizeof s);
                free(label);
            }
        }
    }
    return h;
}

/* fraction in (0,1): the first round(n * fraction) images of the sorted
 * list, as Ultralytics' dataset (im_files[:round(len * fraction)]). A
 * fraction that keeps none of a split's images is refused by name: the
 * split's own "no usable images" would blame the data. */
static yolo_status keep_fraction(list *images, double fraction, yolo_split split) {
    if (!(fraction > 0.0 && fraction < 1.0))
        return YOLO_OK;
    int64_t keep = (int64_t)nearbyint((double)images->n * fraction); /* Python round(): halves to even */
    if (keep == 0 && images->n > 0)
        return yolo_error(YOLO_ERR_CONFIG, "fraction=%g keeps round(%lld * %g) = 0 of the %s split's %lld images: give "
                          "a fraction above %.3g", fraction, (long long)images->n, fraction,
                          yolo_split_name(split), (long long)images->n, 0.5 / (double)images->n);
    for (int64_t i = keep; i < images->n; i++)
        free(images->v[i].path);
    if (keep < images->n)
        images->n = keep;
    return YOLO_OK;
}

static void emit_warnings(char *const *w, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (w[i])
            yolo_data_warn("%s", w[i]);
}

yolo_status yolo_dataset_open(const yolo_data_config *cfg, yolo_split split, const yolo_data_spec *spec,
                              const yolo_dataset_options *opt, yolo_dataset **out) {
    *out = NULL;
    yolo_dataset_options defaults = {0};
    if (!opt)
        opt = &defaults;
    yolo_dataset *ds = calloc(1, sizeof *ds);
    if (!ds)
        return yolo_error(YOLO_ERR_NOMEM, "dataset");
    ds->cfg = cfg;
    ds->split = split;
    if (spec)
        ds->spec = *spec;
    if (cfg->image_folder)
        ds->spec.needs |= YOLO_NEED_IMAGE_CLASS;
    if ((ds->spec.needs & YOLO_NEED_KEYPOINTS) && cfg->kpt_count > 0) {
        ds->kpt_count = cfg->kpt_count;
        ds->kpt_dims = cfg->kpt_dims;
    }
    float tol = opt->tolerance > 0 ? opt->tolerance : 0.01f;
    ds->tolerance = tol;
    list images = {0};
    yolo_status st = enumerate(cfg, split, &images);
    if (st == YOLO_OK)
        st = keep_fraction(&images, opt->fraction, split);
    if (st != YOLO_OK) {
        list_free(&images);
        free(ds);
        return st;
    }
    uint64_t key = cache_key(ds, &images, tol);
    uint64_t where = yolo_hash_str(yolo_hash_str(yolo_hash_str(0, cfg->source), cfg->root), yolo_split_name(split));
    where = yolo_hash_str(where, yolo_vfs_name(cfg->vfs));
    ds->cache_path = yolo_label_cache_path(ds, images.n ? images.v[0].path : NULL, where);
    char **warnings = NULL;
    int64_t n_warnings = 0;
    yolo_cache_result cached = YOLO_CACHE_MISS;
    if (!opt->no_cache && ds->cache_path)
        cached = yolo_label_cache_load(ds->cache_path, key, ds, &warnings, &n_warnings);
    if (cached == YOLO_CACHE_DAMAGED)
        yolo_data_warn("%s; rebuilding it", yolo_last_error());
    if (cached == YOLO_CACHE_HIT) {
        ds->from_cache = true;
        emit_warnings(warnings, n_warnings);
        yolo_free_strings(warnings, n_warnings);
        list_free(&images);
        yolo_error_clear();
        *out = ds;
        return YOLO_OK;
    }
    /* scan: every image and label file, in parallel, results kept in order */
    job j = {ds, &images, NULL, NULL, NULL, 0, PTHREAD_MUTEX_INITIALIZER};
    j.samples = calloc((size_t)images.n + 1, sizeof *j.samples);
    j.results = calloc((size_t)images.n + 1, sizeof *j.results);
    j.messages = calloc((size_t)images.n + 1, sizeof *j.messages);
    if (!j.samples || !j.results || !j.messages) {
        st = yolo_error(YOLO_ERR_NOMEM, "dataset index of %lld images", (long long)images.n);
    } else {
        int threads = opt->threads > 0 ? opt->threads : 2;
        if (threads > 64)
            threads = 64;
        pthread_t tids[64];
        int started = 0;
        for (int t = 1; t < threads && images.n > 64; t++)
            if (pthread_create(&tids[started], NULL, index_worker, &j) == 0)
                started++;
        index_worker(&j);
        for (int t = 0; t < started; t++)
            pthread_join(tids[t], NULL);
    }
    if (st == YOLO_OK) {
        int64_t w = 0;
        for (int64_t i = 0; i < images.n; i++) {
            if (j.messages[i])
                j.messages[w++] = j.messages[i];
            if (j.results[i] == CHECK_CORRUPT) {
                ds->stats.corrupt++;
                free(j.samples[i].path);
                yolo_instances_free(&j.samples[i].labels);
                continue;
            }
            ds->stats.repaired += j.results[i] == CHECK_REPAIRED;
            j.samples[ds->n++] = j.samples[i]; /* compact in place */
        }
        n_warnings = w;
        ds->samples = j.samples;
        j.samples = NULL;
        for (int64_t i = 0; i < ds->n; i++) {
            ds->stats.images++;
            ds->stats.instances += ds->samples[i].labels.n;
            ds->stats.backgrounds += !cfg->image_folder && ds->samples[i].labels.n == 0;
        }
        emit_warnings(j.messages, n_warnings);
        if (!opt->no_cache && ds->cache_path &&
            yolo_label_cache_save(ds->cache_path, key, ds, j.messages, n_warnings) != YOLO_OK)
            yolo_data_warn("label cache not saved: %s", yolo_last_error());
        yolo_free_strings(j.messages, n_warnings);
        j.messages = NULL;
    }
    free(j.samples);
    free(j.results);
    free(j.messages);
    list_free(&images);
    if (st != YOLO_OK) {
        yolo_dataset_free(ds);
        return st;
    }
    if (ds->n == 0) {
        yolo_dataset_free(ds);
        return yolo_error(YOLO_ERR_FORMAT, "%s: %s split has no usable images", cfg->yaml_path ? cfg->yaml_path : cfg->source,
                          yolo_split_name(split));
    }
    *out = ds;
    return YOLO_OK;
}

void yolo_dataset_free(yolo_dataset *ds) {
    if (!ds)
        return;
    for (int64_t i = 0; i < ds->n; i++) {
        free(ds->samples[i].path);
        yolo_instances_free(&ds->samples[i].labels);
    }
    free(ds->samples);
    free(ds->cache_path);
    free(ds);
}

void yolo_dataset_summary(const yolo_dataset *ds, char *buf, size_t size) {
    int n = snprintf(buf, size, "%s: %lld images, %lld backgrounds, %lld corrupt", yolo_split_name(ds->split),
                     (long long)ds->stats.images, (long long)ds->stats.backgrounds, (long long)ds->stats.corrupt);
    if (ds->stats.repaired && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ", %lld repaired", (long long)ds->stats.repaired);
}

void yolo_dataset_class_counts(const yolo_dataset *ds, int nc, int64_t *counts) {
    memset(counts, 0, (size_t)(nc > 0 ? nc : 0) * sizeof *counts);
    for (int64_t i = 0; i < ds->n; i++) {
        const yolo_sample *s = &ds->samples[i];
        if (s->image_class >= 0 && s->image_class < nc) counts[s->image_class]++;
        for (int k = 0; k < s->labels.n; k++)
            if (s->labels.cls[k] >= 0 && s->labels.cls[k] < nc) counts[s->labels.cls[k]]++;
    }
}

yolo_status yolo_dataset_read_image(const yolo_dataset *ds, int64_t i, int min_long_side, yolo_image *out) {
    if (i < 0 || i >= ds->n)
        return yolo_error(YOLO_ERR_ARG, "sample %lld out of range (%lld images)", (long long)i, (long long)ds->n);
    uint8_t *bytes;
    size_t len;
    yolo_status st = yolo_vfs_read(ds->cfg->vfs, ds->samples[i].path, &bytes, &len);
    if (st != YOLO_OK)
        return st;
    st = yolo_image_decode(bytes, len, ds->samples[i].path, min_long_side, out, NULL);
    free(bytes);
    return st;
}
