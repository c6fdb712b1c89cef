/* `yolo predict`: a trained model over images (a file, a folder or an
 * archive). Writes one YOLO-format txt per image under <run>/labels/ and
 * <run>/predictions.json (one object per image), as the task formats them. */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli/modes.h"
#include "data/fsutil.h"
#include "data/image.h"
#include "data/vfs.h"
#include "modes/load_model.h"
#include "train/model_graph.h"
#include "train/prediction_txt.h"
#include "train/predict_pictures.h"
#include "train/train_log.h"
#include "util/json_write.h"

/* batch= in predict: images per forward pass (Ultralytics' LoadImages batch). */
#define YOLO_PREDICT_BATCH_MAX 256

static yolo_status video_refused(const char *source) {
    return yolo_error(YOLO_ERR_CONFIG, "source=%s: videos are not built (no video decoder); extract its frames "
                      "(e.g. ffmpeg -i %s frames/%%06d.jpg) and give the folder", source, source);
}

/* The model's input: Ultralytics' LetterBox. The image is scaled to fit
 * imgsz, th x tw (bilinear both ways, cv2.INTER_LINEAR), then padded with grey
 * on both sides: to th x tw (auto=False), or only to the next multiple
 * of the grid stride (auto=True: what Model.predict's rect=True gives a .pt
 * model when the batch's images share one size; a 640x480 photo runs at
 * 640x480, not 640x640). letterbox_size gives the canvas, letterbox_into
 * fills a CHW plane set of that size. */
static void letterbox_fit(const yolo_image *src, int th, int tw, int *nw, int *nh) {
    double r = fmin((double)tw / src->width, (double)th / src->height);
    *nw = (int)lround(src->width * r), *nh = (int)lround(src->height * r);
    if (*nw < 1) *nw = 1;
    if (*nh < 1) *nh = 1;
}

static void letterbox_size(const yolo_image *src, int th, int tw, int stride, int *cw, int *ch) {
    int nw, nh;
    letterbox_fit(src, th, tw, &nw, &nh);
    *cw = stride > 0 ? nw + (tw - nw) % stride : tw;
    *ch = stride > 0 ? nh + (th - nh) % stride : th;
}

static yolo_status letterbox_into(const yolo_image *src, int th, int tw, int cw, int ch, uint8_t *chw,
                                  yolo_image_meta *meta) {
    int nw, nh;
    letterbox_fit(src, th, tw, &nw, &nh);
    int left = (int)lround((cw - nw) / 2.0 - 0.1), top = (int)lround((ch - nh) / 2.0 - 0.1);
    yolo_image resized = {0}, canvas = {0};
    yolo_status st = yolo_image_resize(src, nw, nh, false, &resized);
    if (!st) st = yolo_image_alloc(&canvas, cw, ch);
    if (!st) {
        yolo_image_fill(&canvas, YOLO_PAD_VALUE);
        yolo_image_blit(&resized, 0, 0, &canvas, left, top, nw, nh);
        size_t plane = (size_t)cw * ch;
        for (size_t p = 0; p < plane; p++)
            for (int c = 0; c < 3; c++) chw[c * plane + p] = canvas.data[3 * p + c];
        *meta = (yolo_image_meta){src->width, src->height, (float)nw / src->width, (float)nh / src->height,
                                  (float)left, (float)top};
    }
    yolo_image_free(&resized);
    yolo_image_free(&canvas);
    return st;
}

/* Classification input (Ultralytics' classify transforms at inference):
 * resize the short side to `size`, then crop the centre square. */
static yolo_status center_crop(const yolo_image *src, int size, uint8_t *chw, yolo_image_meta *meta) {
    double r = (double)size / (src->width < src->height ? src->width : src->height);
    int nw = (int)lround(src->width * r), nh = (int)lround(src->height * r);
    if (nw < size) nw = size;
    if (nh < size) nh = size;
    int left = (nw - size) / 2, top = (nh - size) / 2;
    yolo_image resized = {0};
    yolo_status st = yolo_image_resize(src, nw, nh, r < 1.0, &resized);
    if (!st) {
        size_t plane = (size_t)size * size;
        for (int y = 0; y < size; y++)
            for (int x = 0; x < size; x++)
                for (int c = 0; c < 3; c++)
                    chw[c * plane + (size_t)y * size + x] = resized.data[3 * ((size_t)(y + top) * nw + x + left) + c];
        *meta = (yolo_image_meta){src->width, src->height, (float)nw / src->width, (float)nh / src->height,
                                  (float)-left, (float)-top};
    }
    yolo_image_free(&resized);
    return st;
}

static void stem_of(const char *path, char *out, size_t size) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(out, size, "%s", base);
    char *dot = strrchr(out, '.');
    if (dot) *dot = '\0';
}

typedef struct stem_entry {
    char *stem;
    int64_t file;
} stem_entry;

static int cmp_stem(const void *a, const void *b) {
    const stem_entry *x = a, *y = b;
    int c = strcmp(x->stem, y->stem);
    return c ? c : (x->file > y->file) - (x->file < y->file);
}

static bool stem_taken(const stem_entry *sorted, int64_t n, const char *stem) {
    stem_entry key = {(char *)stem, -1};
    int64_t lo = 0, hi = n;
    while (lo < hi) { /* first entry >= (stem, -1) */
        int64_t mid = (lo + hi) / 2;
        if (cmp_stem(&sorted[mid], &key) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && strcmp(sorted[lo].stem, stem) == 0;
}

/* One output name per source file: its stem, or stem_2, stem_3, ... (a
 * name no source file has) for the second and later files sharing it
 * (a/x.jpg and b/x.jpg, x.jpg and x.png), so no output overwrites another. */
static yolo_status unique_stems(char *const *files, int64_t n, char ***out) {
    stem_entry *e = calloc((size_t)(n ? n : 1), sizeof *e);
    char **names = calloc((size_t)(n ? n : 1), sizeof *names);
    yolo_status st = e && names ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; !st && i < n; i++) {
        char stem[512];
        stem_of(files[i], stem, sizeof stem);
        if (!(e[i].stem = strdup(stem))) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
        e[i].file = i;
    }
    if (!st) qsort(e, (size_t)n, sizeof *e, cmp_stem);
    for (int64_t i = 0, suffix = 1; !st && i < n; i++) {
        char name[560];
        if (i == 0 || strcmp(e[i].stem, e[i - 1].stem) != 0) {
            suffix = 1;
            snprintf(name, sizeof name, "%s", e[i].stem);
        } else {
            do snprintf(name, sizeof name, "%s_%lld", e[i].stem, (long long)++suffix);
            while (stem_taken(e, n, name));
            printf("WARNING: %s and %s share the name '%s': its outputs are named '%s'\n", files[e[i - 1].file],
                   files[e[i].file], e[i].stem, name);
        }
        if (!(names[e[i].file] = strdup(name))) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; e && i < n; i++) free(e[i].stem);
    free(e);
    if (st) {
        for (int64_t i = 0; names && i < n; i++) free(names[i]);
        free(names);
        return st;
    }
    *out = names;
    return YOLO_OK;
}

typedef struct predictor {
    yolo_session s;
    yolo_vfs *vfs;
    char **files;
    char **out_names; /* unique_stems */
    int64_t n_files;
    int64_t n_predicted, n_skipped;
    yolo_graph_cache graphs; /* a graph per input shape (rect: one per padded size met) */
    int stride;              /* letterbox padding multiple; 0: imgsz squares (rect=False) */
    int batch;               /* images per forward: 1 unless batch= is given (Model.predict's default) */
    void *state;
    FILE *json;
    yolo_predict_pictures pictures;
} predictor;

/* One line for what listing the source skipped (links back into the tree, files reached twice). */
static void warn_skips(const char *source, const yolo_walk_skips *skips) {
    char where[1100], line[1600];
    snprintf(where, sizeof where, "source=%s", source);
    if (yolo_walk_skips_describe(where, skips, line, sizeof line)) printf("WARNING: %s\n", line);
}

/* source=images/IMG_*.jpg, a pattern (Ultralytics expands it with glob): the images
 * it matches, in glob's sorted order. */
static yolo_status list_pattern(predictor *p, const char *source) {
    glob_t g;
    int rc = glob(source, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) return yolo_error(YOLO_ERR_IO, "source=%s: the pattern matches no file", source);
    if (rc != 0) return yolo_error(YOLO_ERR_IO, "source=%s: cannot expand the pattern", source);
    yolo_status st = yolo_vfs_open(NULL, &p->vfs);
    p->files = st ? NULL : calloc(g.gl_pathc, sizeof *p->files);
    bool *keep = st ? NULL : malloc(g.gl_pathc);
    if (!st && (!p->files || !keep)) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
    yolo_walk_skips skips = {0}; /* a pattern may match one file by two paths (a folder and a link to it) */
    if (!st) st = yolo_files_once(g.gl_pathv, (int64_t)g.gl_pathc, keep, &skips);
    if (!st) warn_skips(source, &skips);
    for (size_t i = 0; !st && i < g.gl_pathc; i++) {
        if (!keep[i] || !yolo_path_is_image(g.gl_pathv[i])) continue;
        if (!(p->files[p->n_files] = strdup(g.gl_pathv[i]))) st = yolo_error(YOLO_ERR_NOMEM, "out of memory");
        else p->n_files++;
    }
    globfree(&g);
    free(keep);
    if (!st && p->n_files == 0) st = yolo_error(YOLO_ERR_ARG, "source=%s: the pattern matches no image", source);
    return st;
}

/* What a source that is no file may be meant as: a pattern, or a URL,
 * stream, camera or screen (not built: said so). */
static yolo_status list_missing(predictor *p, const char *source) {
    static const char *const schemes[] = {"http://", "https://", "rtsp://", "rtmp://", "tcp://"};
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
        if (strncasecmp(source, schemes[i], strlen(schemes[i])) == 0)
            return yolo_error(YOLO_ERR_CONFIG, "source=%s: URLs and streams are not built (no network code); "
                              "download the file and give its path", source);
    if (source[0] && strspn(source, "0123456789") == strlen(source))
        return yolo_error(YOLO_ERR_CONFIG, "source=%s: cameras are not built; give image files, a folder, a "
                          "pattern or an archive", source);
    if (strncasecmp(source, "screen", 6) == 0) /* Ultralytics' screenshot source: "screen", "screen 0 10 20 640 480" */
        return yolo_error(YOLO_ERR_CONFIG, "source=%s: screen capture is not built; save a screenshot and give "
                          "its path", source);
    if (strpbrk(source, "*?[")) return list_pattern(p, source);
    return yolo_error(YOLO_ERR_IO, "source=%s: no such file or folder", source);
}

static yolo_status list_sources(predictor *p, const char *source) {
    struct stat sb;
    bool archive = yolo_path_is_archive(source);
    if (stat(source, &sb) != 0) return list_missing(p, source);
    yolo_status st = yolo_vfs_open(archive ? source : NULL, &p->vfs);
    if (st) return st;
    if (!archive && S_ISREG(sb.st_mode)) {
        if (yolo_path_is_video(source)) return video_refused(source);
        p->files = malloc(sizeof *p->files);
        if (!p->files || !(p->files[0] = strdup(source))) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
        p->n_files = 1;
        return YOLO_OK;
    }
    char **all = NULL;
    int64_t n = 0;
    yolo_walk_skips skips;
    st = yolo_vfs_walk(p->vfs, archive ? "" : source, &all, &n, &skips);
    if (st) return st;
    warn_skips(source, &skips);
    p->files = calloc((size_t)(n ? n : 1), sizeof *p->files);
    int64_t videos = 0;
    for (int64_t i = 0; i < n; i++) {
        videos += yolo_path_is_video(all[i]);
        if (p->files && yolo_path_is_image(all[i])) p->files[p->n_files++] = all[i];
        else free(all[i]);
    }
    free(all);
    if (videos && p->n_files)
        printf("WARNING: source=%s: %lld video file%s skipped (videos are not built; extract their frames)\n", source,
               (long long)videos, videos == 1 ? "" : "s");
    if (videos && !p->n_files) return video_refused(source);
    if (!p->files) return yolo_error(YOLO_ERR_NOMEM, "out of memory");
    if (p->n_files == 0) return yolo_error(YOLO_ERR_ARG, "source=%s: no images found", source);
    return YOLO_OK;
}

/* One result: the task's text, the picture, labels/<stem>.txt and the json row. */
static yolo_status emit_one(predictor *p, const yolo_batch *batch, int i, const yolo_model_graph *mg,
                            const yolo_image *image, int64_t k, const double times[3], const char *labels_dir) {
    const char *path = p->files[k];
    yolo_prediction_text text = {0};
    yolo_status st = p->s.hooks->predict(p->state, batch, i, mg->out.n, mg->host_out, &text);
    if (!st)
        st = yolo_predict_pictures_image(&p->pictures, p->state, batch, i, mg->out.n, mg->host_out, image, path,
                                         p->out_names[k], k, p->n_files, times);
    if (!st && labels_dir) st = yolo_prediction_txt_write(labels_dir, p->out_names[k], text.txt);
    if (!st) p->n_predicted++;
    if (!st && p->json) {
        fprintf(p->json, "%s{\"image\": ", p->n_predicted > 1 ? ",\n " : "");
        yolo_json_write_string(p->json, path);
        fprintf(p->json, ", \"width\": %d, \"height\": %d, \"result\": %s}", image->width, image->height,
                text.json ? text.json : "null");
    }
    return st;
}

/* Files first..first+count-1 as one batch (Ultralytics' batch=N): the ones
 * that decode, letterboxed to their shared stride-padded size when they
 * all have one size (rect), else to the imgsz square, as Ultralytics'
 * pre_transform; a bad file is reported and skipped. */
static yolo_status predict_batch(predictor *p, int64_t first, int count, const char *labels_dir) {
    yolo_image images[YOLO_PREDICT_BATCH_MAX] = {{0}};
    int64_t which[YOLO_PREDICT_BATCH_MAX];
    int n = 0;
    for (int j = 0; j < count; j++) {
        const char *path = p->files[first + j];
        uint8_t *bytes = NULL;
        size_t len = 0;
        yolo_status st = yolo_vfs_read(p->vfs, path, &bytes, &len);
        if (!st) st = yolo_image_decode(bytes, len, path, 0, &images[n], NULL);
        free(bytes);
        if (st) { /* a bad image is reported and skipped (and counted so); the others go on */
            fprintf(stderr, "WARNING: %s; skipped\n", yolo_last_error());
            p->n_skipped++;
            continue;
        }
        which[n++] = first + j;
    }
    if (n == 0) return YOLO_OK;
    double t0 = yolo_seconds_now(); /* preprocess: letterbox and layout (decoding is the loader's, as Ultralytics') */
    bool classify = (p->s.hooks->data.needs & YOLO_NEED_IMAGE_CLASS) != 0, same = true;
    for (int i = 1; i < n; i++)
        same = same && images[i].width == images[0].width && images[i].height == images[0].height;
    const int size = p->s.set.run.imgsz, th = p->s.set.run.imgsz_h, tw = p->s.set.run.imgsz_w;
    int w = size, h = size;
    if (!classify) letterbox_size(&images[0], th, tw, same ? p->stride : 0, &w, &h);
    int32_t cls[YOLO_PREDICT_BATCH_MAX];
    yolo_aug_record aug[YOLO_PREDICT_BATCH_MAX] = {{0}};
    yolo_image_meta meta[YOLO_PREDICT_BATCH_MAX];
    yolo_batch batch = {.n = n, .width = w, .height = h, .sample_index = which, .image_class = cls, .aug = aug,
                        .meta = meta};
    yolo_instances_init(&batch.instances, 0, 0);
    size_t per_image = (size_t)3 * w * h;
    batch.images = malloc(per_image * (size_t)n);
    yolo_status st = batch.images ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "out of memory");
    /* image-level tasks see a centre crop, instance tasks the whole image letterboxed */
    for (int i = 0; !st && i < n; i++) {
        cls[i] = -1;
        uint8_t *chw = batch.images + per_image * (size_t)i;
        st = classify ? center_crop(&images[i], size, chw, &meta[i])
                      : letterbox_into(&images[i], th, tw, w, h, chw, &meta[i]);
    }
    yolo_model_graph *mg = NULL;
    if (!st) st = yolo_graph_cache_get(&p->graphs, &batch, &mg);
    double t1 = yolo_seconds_now();
    if (!st) st = yolo_model_graph_forward(mg, &batch);
    double t2 = yolo_seconds_now();
    for (int i = 0; !st && i < n; i++) {
        double t3 = yolo_seconds_now();
        double times[3] = {(t1 - t0) / n, (t2 - t1) / n, 0};
        st = emit_one(p, &batch, i, mg, &images[i], which[i], times, labels_dir);
        p->pictures.seconds[2] += yolo_seconds_now() - t3; /* postprocess: the task's predict and the drawing */
    }
    free(batch.images);
    for (int i = 0; i < n; i++) yolo_image_free(&images[i]);
    return st;
}

yolo_status yolo_mode_predict(const yolo_mode_context *ctx) {
    predictor p;
    memset(&p, 0, sizeof p);
    yolo_session_options so = {.need_data = false, .concerns = YOLO_SETTINGS_PREDICT | YOLO_SETTINGS_PICTURES,
                               .checkpoint_args = true};
    yolo_status st = yolo_session_open(ctx, &p.s, &so);
    const char *source = st ? NULL : p.s.set.predict.source;
    if (!st && !source)
        st = yolo_error(YOLO_ERR_CONFIG, "source: nothing to predict on (source=images/, a file or an archive)");
    if (!st) st = yolo_session_load_model(&p.s);
    if (!st) st = yolo_session_apply_half(&p.s);
    if (!st) st = list_sources(&p, source);
    if (!st) st = unique_stems(p.files, p.n_files, &p.out_names);
    bool rect = true;
    if (!st) st = yolo_session_eval_rect(&p.s, &rect);
    if (!st) {
        p.graphs = (yolo_graph_cache){.model = p.s.model, .training = false, .inference = true};
        p.stride = rect ? yolo_model_grid_stride(p.s.model) : 0;
        const yolo_run_settings *run = &p.s.set.run;
        if (!rect) printf("rect=False: every image letterboxed to %dx%d\n", run->imgsz_h, run->imgsz_w);
        if (run->imgsz_h != run->imgsz_w && (p.s.hooks->data.needs & YOLO_NEED_IMAGE_CLASS))
            st = yolo_error(YOLO_ERR_CONFIG, "imgsz=[%d, %d] (%s): classify predicts on a centre-cropped square; give "
                            "one size (e.g. imgsz=%d)", run->imgsz_h, run->imgsz_w, yolo_config_source(p.s.cfg, "imgsz"),
                            run->imgsz);
        p.batch = yolo_config_layer_of(p.s.cfg, "batch") > YOLO_CONFIG_LAYER_TASK ? p.s.set.run.batch : 1;
        char given[64] = "";
        yolo_config_format(p.s.cfg, "batch", given, sizeof given);
        if (p.batch < 1 || p.batch > YOLO_PREDICT_BATCH_MAX)
            st = yolo_error(YOLO_ERR_CONFIG, "batch=%s (%s): predict takes 1 to %d images per batch", given,
                            yolo_config_source(p.s.cfg, "batch"), YOLO_PREDICT_BATCH_MAX);
    }
    if (!st) st = p.s.hooks->metrics_create(&p.s.tctx, &p.state);
    /* save_txt: labels/; save: predictions.json and the drawn images; neither: no run directory (Ultralytics) */
    const yolo_predict_settings *ps = &p.s.set.predict;
    bool save = p.s.set.pictures.save, writes = save || ps->save_txt || p.s.set.pictures.save_crop;
    if (!st && writes) st = yolo_session_make_run_dir(&p.s);
    if (!st) st = yolo_predict_pictures_open(&p.pictures, p.s.task, &p.s.tctx, &p.s.set.pictures, p.s.run_dir);
    char labels_dir[1200], json_path[1200];
    snprintf(json_path, sizeof json_path, "%s/predictions.json", p.s.run_dir);
    if (!st && ps->save_txt) st = yolo_prediction_txt_dir(p.s.run_dir, labels_dir, sizeof labels_dir);
    if (!st && save && !(p.json = fopen(json_path, "w"))) st = yolo_error(YOLO_ERR_IO, "%s: cannot create", json_path);
    if (!st && p.json) fputs("[", p.json);
    for (int64_t k = 0; !st && k < p.n_files; k += p.batch)
        st = predict_batch(&p, k, (int)(p.n_files - k < p.batch ? p.n_files - k : p.batch), ps->save_txt ? labels_dir : NULL);
    if (p.json) {
        fputs("]\n", p.json);
        if (fclose(p.json) != 0 && !st) st = yolo_error(YOLO_ERR_IO, "%s: write failed", json_path);
    }
    yolo_predict_pictures_close(&p.pictures, stdout);
    if (!st && p.n_predicted == 0)
        st = yolo_error(YOLO_ERR_FORMAT, "source=%s: none of its %lld files decoded as an image", source,
                        (long long)p.n_files);
    if (!st)
        printf("%lld images predicted, %lld skipped (not images or unreadable). %s%s\n", (long long)p.n_predicted,
               (long long)p.n_skipped, writes ? "Results saved to " : "save=False save_txt=False: nothing written",
               writes ? p.s.run_dir : "");
    if (p.state) p.s.hooks->metrics_destroy(p.state);
    yolo_graph_cache_clear(&p.graphs);
    for (int64_t i = 0; i < p.n_files; i++) free(p.files[i]);
    for (int64_t i = 0; p.out_names && i < p.n_files; i++) free(p.out_names[i]);
    free(p.files);
    free(p.out_names);
    yolo_vfs_free(p.vfs);
    yolo_session_close(&p.s);
    return st;
}
