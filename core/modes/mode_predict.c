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
#include "modes/predict_input.h"
#include "train/model_graph.h"
#include "train/prediction_txt.h"
#include "train/predict_pictures.h"
#include "train/train_log.h"
#include "util/json_write.h"

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
    yolo_predict_sources src; /* vfs, files, n_files */
    char **out_names;         /* unique_stems */
    int64_t n_predicted, n_skipped;
    yolo_graph_cache graphs; /* a graph per input shape (rect: one per padded size met) */
    int stride;              /* letterbox padding multiple; 0: imgsz squares (rect=False) */
    int batch;               /* images per forward: 1 unless batch= is given (Model.predict's default) */
    void *state;
    FILE *json;
    yolo_predict_pictures pictures;
} predictor;

/* One result: the task's text, the picture, labels/<stem>.txt and the json row. */
static yolo_status emit_one(predictor *p, const yolo_batch *batch, int i, const yolo_model_graph *mg,
                            const yolo_image *image, int64_t k, const double times[3], const char *labels_dir) {
    const char *path = p->src.files[k];
    yolo_prediction_text text = {0};
    yolo_status st = p->s.hooks->predict(p->state, batch, i, mg->out.n, mg->host_out, &text);
    if (!st)
        st = yolo_predict_pictures_image(&p->pictures, p->state, batch, i, mg->out.n, mg->host_out, image, path,
                                         p->out_names[k], k, p->src.n_files, times);
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
        if (yolo_predict_sources_decode(&p->src, first + j, &images[n])) { /* a bad image is reported and skipped (and counted so); the others go on */
            fprintf(stderr, "WARNING: %s; skipped\n", yolo_last_error());
            p->n_skipped++;
            continue;
        }
        which[n++] = first + j;
    }
    if (n == 0) return YOLO_OK;
    double t0 = yolo_seconds_now(); /* preprocess: letterbox and layout (decoding is the loader's, as Ultralytics') */
    yolo_predict_input in;
    yolo_status st = yolo_predict_input_fill(&in, &p->s, p->stride, images, which, n);
    yolo_batch *batch = &in.batch;
    yolo_model_graph *mg = NULL;
    if (!st) st = yolo_graph_cache_get(&p->graphs, batch, &mg);
    double t1 = yolo_seconds_now();
    if (!st) st = yolo_model_graph_forward(mg, batch);
    double t2 = yolo_seconds_now();
    for (int i = 0; !st && i < n; i++) {
        double t3 = yolo_seconds_now();
        double times[3] = {(t1 - t0) / n, (t2 - t1) / n, 0};
        st = emit_one(p, batch, i, mg, &images[i], which[i], times, labels_dir);
        p->pictures.seconds[2] += yolo_seconds_now() - t3; /* postprocess: the task's predict and the drawing */
    }
    yolo_predict_input_free(&in);
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
    if (!st) st = yolo_predict_sources_list(&p.src, source);
    if (!st) st = unique_stems(p.src.files, p.src.n_files, &p.out_names);
    bool rect = true;
    if (!st) st = yolo_session_eval_rect(&p.s, &rect);
    if (!st) {
        p.graphs = (yolo_graph_cache){.model = p.s.model, .training = false, .inference = true};
        p.stride = rect ? yolo_model_grid_stride(p.s.model) : 0;
        const yolo_run_settings *run = &p.s.set.run;
        if (!rect) printf("rect=False: every image letterboxed to %dx%d\n", run->imgsz_h, run->imgsz_w);
        st = yolo_predict_check_imgsz(&p.s);
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
    for (int64_t k = 0; !st && k < p.src.n_files; k += p.batch)
        st = predict_batch(&p, k, (int)(p.src.n_files - k < p.batch ? p.src.n_files - k : p.batch), ps->save_txt ? labels_dir : NULL);
    if (p.json) {
        fputs("]\n", p.json);
        if (fclose(p.json) != 0 && !st) st = yolo_error(YOLO_ERR_IO, "%s: write failed", json_path);
    }
    yolo_predict_pictures_close(&p.pictures, stdout);
    if (!st && p.n_predicted == 0)
        st = yolo_error(YOLO_ERR_FORMAT, "source=%s: none of its %lld files decoded as an image", source,
                        (long long)p.src.n_files);
    if (!st)
        printf("%lld images predicted, %lld skipped (not images or unreadable). %s%s\n", (long long)p.n_predicted,
               (long long)p.n_skipped, writes ? "Results saved to " : "save=False save_txt=False: nothing written",
               writes ? p.s.run_dir : "");
    if (p.state) p.s.hooks->metrics_destroy(p.state);
    yolo_graph_cache_clear(&p.graphs);
    for (int64_t i = 0; p.out_names && i < p.src.n_files; i++) free(p.out_names[i]);
    free(p.out_names);
    yolo_predict_sources_free(&p.src);
    yolo_session_close(&p.s);
    return st;
}
