/* COCO-format predictions.json of a validation run (val_json.h). */
#include "train/val_json.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/prediction_txt.h"
#include "train/run_plots.h"
#include "util/json_write.h"

yolo_status yolo_val_json_open(yolo_val_json *j, const yolo_task *task, const char *run_dir) {
    memset(j, 0, sizeof *j);
    j->hooks = yolo_picture_hooks(task);
    if (j->hooks && !j->hooks->draw_predictions) j->hooks = NULL;
    snprintf(j->path, sizeof j->path, "%s/predictions.json", run_dir);
    if (!(j->f = fopen(j->path, "w"))) return yolo_error(YOLO_ERR_IO, "%s: cannot create", j->path);
    if (j->hooks && !(j->canvas = yolo_canvas_create(1, 1, (yolo_color){0, 0, 0}))) {
        fclose(j->f);
        j->f = NULL;
        return yolo_error_context(YOLO_ERR_NOMEM, "%s", j->path);
    }
    fputc('[', j->f);
    return YOLO_OK;
}

/* The stem of path into out; *numeric when it is all digits. */
static void stem_of(const char *path, char *out, size_t size, bool *numeric) {
    yolo_path_stem(path, out, size);
    *numeric = out[0] != '\0';
    for (const char *c = out; *c; c++) *numeric &= isdigit((unsigned char)*c) != 0;
}

static double round_to(double x, double scale) { return round(x * scale) / scale; }

yolo_status yolo_val_json_add(yolo_val_json *j, void *metrics, const yolo_dataset *ds, const yolo_batch *batch,
                              int n_outputs, const yolo_host_tensor *outputs) {
    if (!j->f || !j->hooks) return YOLO_OK;
    yolo_draw_options opt = {.conf = 0, .report_only = true};
    for (int i = 0; i < batch->n; i++) {
        yolo_drawn_result r = {0};
        yolo_status st = j->hooks->draw_predictions(metrics, batch, i, n_outputs, outputs, &opt, j->canvas, &r);
        if (st) return st;
        int64_t k = batch->sample_index ? batch->sample_index[i] : -1;
        char stem[512];
        bool numeric = false;
        stem_of(k >= 0 && k < ds->n ? ds->samples[k].path : "", stem, sizeof stem, &numeric);
        for (int d = 0; d < r.n; d++) {
            const yolo_drawn_object *o = &r.objects[d];
            fprintf(j->f, "%s\n {\"image_id\": ", j->written++ ? "," : "");
            if (numeric) fprintf(j->f, "%lld", atoll(stem));
            else yolo_json_write_string(j->f, stem);
            fprintf(j->f, ", \"category_id\": %d, \"bbox\": [%.10g, %.10g, %.10g, %.10g], \"score\": %.10g}", o->cls,
                    round_to(o->box[0], 1e3), round_to(o->box[1], 1e3), round_to(o->box[2] - o->box[0], 1e3),
                    round_to(o->box[3] - o->box[1], 1e3), round_to(o->conf, 1e5));
        }
    }
    return YOLO_OK;
}

yolo_status yolo_val_json_close(yolo_val_json *j) {
    yolo_canvas_free(j->canvas);
    j->canvas = NULL;
    if (!j->f) return YOLO_OK;
    fputs(j->written ? "\n]\n" : "]\n", j->f);
    bool bad = fclose(j->f) != 0;
    j->f = NULL;
    return bad ? yolo_error(YOLO_ERR_IO, "%s: write failed", j->path) : YOLO_OK;
}
