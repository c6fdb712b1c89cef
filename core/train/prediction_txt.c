/* The save_txt files of predict and val (prediction_txt.h). */
#include "train/prediction_txt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

yolo_status yolo_prediction_txt_dir(const char *run_dir, char *dir, size_t size) {
    snprintf(dir, size, "%s/labels", run_dir);
    struct stat sb;
    if (mkdir(dir, 0777) != 0 && (errno != EEXIST || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
        return yolo_error(YOLO_ERR_IO, "save_txt: %s: cannot create the folder (%s)", dir,
                          errno == EEXIST ? "a file of that name exists" : strerror(errno));
    return YOLO_OK;
}

yolo_status yolo_prediction_txt_write(const char *dir, const char *stem, const char *txt) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s.txt", dir, stem);
    FILE *f = fopen(path, "w");
    if (!f) return yolo_error(YOLO_ERR_IO, "%s: cannot write (%s)", path, strerror(errno));
    if (txt) fputs(txt, f);
    return fclose(f) != 0 ? yolo_error(YOLO_ERR_IO, "%s: write failed", path) : YOLO_OK;
}

void yolo_path_stem(const char *path, char *out, size_t size) {
    const char *base = strrchr(path, '/');
    snprintf(out, size, "%s", base ? base + 1 : path);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = '\0';
}

yolo_status yolo_prediction_txt_batch(const char *dir, const yolo_task_hooks *hooks, void *metrics,
                                      const yolo_dataset *ds, const yolo_batch *batch, int n_outputs,
                                      const yolo_host_tensor *outputs) {
    if (!hooks->predict) return yolo_error(YOLO_ERR_UNSUPPORTED, "save_txt: the task's plugin has no predict hook");
    for (int i = 0; i < batch->n; i++) {
        int64_t k = batch->sample_index[i];
        if (k < 0 || k >= ds->n) return yolo_error(YOLO_ERR_ARG, "save_txt: sample %lld of %lld", (long long)k, (long long)ds->n);
        yolo_prediction_text text = {0};
        yolo_status st = hooks->predict(metrics, batch, i, n_outputs, outputs, &text);
        char stem[512];
        yolo_path_stem(ds->samples[k].path, stem, sizeof stem);
        if (!st) st = yolo_prediction_txt_write(dir, stem, text.txt);
        if (st) return st;
    }
    return YOLO_OK;
}
