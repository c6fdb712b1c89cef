/* predict's pictures and lines (predict_pictures.h). */
#include "train/predict_pictures.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/fsutil.h"
#include "data/image.h"
#include "train/run_plots.h"

yolo_status yolo_predict_pictures_open(yolo_predict_pictures *p, const yolo_task *task, const yolo_task_context *tctx,
                                       const yolo_picture_settings *set, const char *run_dir) {
    memset(p, 0, sizeof *p);
    p->hooks = yolo_picture_hooks(task);
    if (p->hooks && !p->hooks->draw_predictions) p->hooks = NULL;
    p->tctx = tctx, p->run_dir = run_dir;
    p->save = set->save, p->save_crop = set->save_crop;
    p->labels = set->show_labels, p->show_conf = set->show_conf, p->boxes = set->show_boxes;
    p->retina_masks = set->retina_masks;
    yolo_config_value lw = {0}; /* null, or pixels >= 1 (the key's own check) */
    yolo_status st = yolo_config_get(tctx->cfg, "line_width", &lw);
    if (st) return st;
    p->line_width = lw.kind == YOLO_VALUE_INT ? (double)lw.i : lw.kind == YOLO_VALUE_FLOAT ? lw.f : 0;
    if ((p->save || p->save_crop) && !p->hooks)
        printf("WARNING: the %s plugin draws no pictures (plugin ABI < 1.1): save=%s save_crop=%s write no images\n",
               task->name, p->save ? "True" : "False", p->save_crop ? "True" : "False");
    return YOLO_OK;
}

/* out_stem (unique among the sources: mode_predict's unique_stems, so a
 * picture and its labels/<stem>.txt keep one name) with path's extension. */
static void output_name(const char *path, const char *out_stem, char *out, size_t size) {
    const char *dot = strrchr(yolo_path_basename(path), '.');
    snprintf(out, size, "%s%s", out_stem, dot ? dot : "");
}

/* Only JPEG and PNG are encoded here: other sources are saved as .jpg. */
static void encodable(char *name, size_t size) {
    char *dot = strrchr(name, '.');
    if (dot && (yolo_path_has_ext(name, ".jpg") || yolo_path_has_ext(name, ".jpeg") || yolo_path_has_ext(name, ".png")))
        return;
    if (dot) *dot = '\0';
    size_t n = strlen(name);
    snprintf(name + n, size - n, ".jpg");
}

/* save_one_box: the box grown by 2% + 10 px, clipped, into crops/<class>/<name>. */
static yolo_status save_crop(yolo_predict_pictures *p, const yolo_image *image, const yolo_drawn_object *o,
                             const char *name) {
    float w = (o->box[2] - o->box[0]) * 1.02f + 10, h = (o->box[3] - o->box[1]) * 1.02f + 10;
    float cx = (o->box[0] + o->box[2]) / 2, cy = (o->box[1] + o->box[3]) / 2;
    int x0 = (int)fmaxf(0, cx - w / 2), y0 = (int)fmaxf(0, cy - h / 2);
    int x1 = (int)fminf((float)image->width, cx + w / 2), y1 = (int)fminf((float)image->height, cy + h / 2);
    if (x1 <= x0 || y1 <= y0) return YOLO_OK;
    char number[16], dir[1400], file[2600];
    snprintf(number, sizeof number, "%d", o->cls);
    const char *cls = o->cls >= 0 && o->cls < p->tctx->nc && p->tctx->names && p->tctx->names[o->cls]
                          ? p->tctx->names[o->cls]
                          : number;
    snprintf(dir, sizeof dir, "%s/crops/%s", p->run_dir, cls);
    yolo_status st = yolo_mkdirs(dir);
    yolo_image crop = {0};
    if (!st) st = yolo_image_alloc(&crop, x1 - x0, y1 - y0);
    if (!st) {
        yolo_image_blit(image, x0, y0, &crop, 0, 0, x1 - x0, y1 - y0);
        snprintf(file, sizeof file, "%s/%s", dir, name);
        struct stat sb;
        char stem[600];
        snprintf(stem, sizeof stem, "%s", name);
        char *dot = strrchr(stem, '.');
        if (dot) *dot = '\0';
        for (int k = 2; stat(file, &sb) == 0; k++) snprintf(file, sizeof file, "%s/%s%d.jpg", dir, stem, k);
        st = yolo_image_save(&crop, file);
    }
    yolo_image_free(&crop);
    return st;
}

yolo_status yolo_predict_pictures_image(yolo_predict_pictures *p, void *state, const yolo_batch *batch, int i,
                                        int n_outputs, const yolo_host_tensor *outputs, const yolo_image *image,
                                        const char *path, const char *out_stem, int64_t k, int64_t n,
                                        const double times[3]) {
    for (int t = 0; t < 3; t++) p->seconds[t] += times[t];
    p->images++;
    p->batch = batch->n, p->height = batch->height, p->width = batch->width;
    char summary[1024] = "";
    yolo_status st = YOLO_OK;
    if (p->hooks) {
        yolo_canvas *canvas = yolo_canvas_from_image(image);
        if (!canvas) return yolo_error_context(YOLO_ERR_NOMEM, "%s", path);
        yolo_draw_options opt = {.conf = 0, .labels = p->labels, .show_conf = p->show_conf, .boxes = p->boxes,
                                 .line_width = yolo_draw_line_width(image->width, image->height, p->line_width),
                                 .retina_masks = p->retina_masks};
        yolo_drawn_result drawn = {0};
        st = p->hooks->draw_predictions(state, batch, i, n_outputs, outputs, &opt, canvas, &drawn);
        if (!st && drawn.summary) snprintf(summary, sizeof summary, "%s", drawn.summary);
        else if (!st) yolo_draw_count_summary(drawn.objects, drawn.n, p->tctx->names, p->tctx->nc, summary, sizeof summary);
        char name[600], file[2048];
        output_name(path, out_stem, name, sizeof name);
        encodable(name, sizeof name);
        if (!st && p->save) {
            snprintf(file, sizeof file, "%s/%s", p->run_dir, name);
            st = yolo_canvas_save(canvas, file);
        }
        for (int j = 0; !st && p->save_crop && j < drawn.n; j++) st = save_crop(p, image, &drawn.objects[j], name);
        yolo_canvas_free(canvas);
    }
    if (st) return st;
    printf("image %lld/%lld %s: %dx%d %s%s%.1fms\n", (long long)k + 1, (long long)n, path, batch->height,
           batch->width, summary, summary[0] ? ", " : "", 1e3 * times[1]);
    return YOLO_OK;
}

void yolo_predict_pictures_close(yolo_predict_pictures *p, FILE *out) {
    if (p->images > 0)
        fprintf(out, "Speed: %.1fms preprocess, %.1fms inference, %.1fms postprocess per image at shape (%d, 3, %d, %d)\n",
                1e3 * p->seconds[0] / (double)p->images, 1e3 * p->seconds[1] / (double)p->images,
                1e3 * p->seconds[2] / (double)p->images, p->batch, p->height, p->width);
}
