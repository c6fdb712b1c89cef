/* Ultralytics' guess_model_task (cfg2task for a yaml, the stem otherwise). */
#include "nn/model_task.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/fsutil.h"
#include "nn/model_internal.h"
#include "yolo/error.h"

/* cfg2task: the head's last module, lower-cased. */
static const char *task_of_module(const char *module) {
    char m[64];
    size_t n = 0;
    for (; module[n] && n + 1 < sizeof(m); n++) m[n] = (char)tolower((unsigned char)module[n]);
    m[n] = '\0';
    if (!strcmp(m, "classify") || !strcmp(m, "classifier") || !strcmp(m, "cls") || !strcmp(m, "fc"))
        return "classify";
    if (strstr(m, "detect")) return "detect";
    if (strstr(m, "segment")) return "segment";
    if (!strcmp(m, "pose")) return "pose";
    if (!strcmp(m, "obb")) return "obb";
    return NULL;
}

static const char *task_of_file(const char *path) {
    uint8_t *text = NULL;
    size_t len = 0;
    model_spec spec;
    const char *task = NULL;
    if (yolo_read_file(path, &text, &len) == YOLO_OK &&
        model_spec_parse(path, (const char *)text, len, &spec) == YOLO_OK) {
        if (spec.n_rows > 0 && spec.rows[spec.n_rows - 1].module)
            task = task_of_module(spec.rows[spec.n_rows - 1].module);
        model_spec_free(&spec);
    }
    free(text);
    yolo_error_clear();
    return task;
}

static const char *task_of_stem(const char *model) {
    const char *base = strrchr(model, '/');
    base = base ? base + 1 : model;
    if (strstr(base, "-seg")) return "segment";
    if (strstr(base, "-cls")) return "classify";
    if (strstr(base, "-pose")) return "pose";
    if (strstr(base, "-obb")) return "obb";
    return "detect";
}

const char *yolo_model_yaml_task(const char *model, char *buf, size_t size) {
    char path[MODEL_NAME_MAX];
    const char *task = model_yaml_file(model, path, sizeof(path)) ? task_of_file(path) : task_of_stem(model);
    if (!task || (size_t)snprintf(buf, size, "%s", task) >= size) return NULL;
    return buf;
}
