/* Ultralytics' guess_model_task for a model yaml, answered by the loaded
 * task plugins (the core names no task). */
#include "nn/model_task.h"

#include <stdio.h>
#include <stdlib.h>

#include "nn/model_internal.h"
#include "plugin/plugin_loader.h"
#include "util/text_file.h"
#include "yolo/error.h"
#include "yolo/plugin.h"

/* cfg2task: the head's last module; its plugin is the task. */
static const char *task_of_file(const char *path) {
    char *text = NULL;
    size_t len = 0;
    model_spec spec;
    const char *task = NULL;
    if (yolo_read_text_file(path, "the model yaml", &text, &len) == YOLO_OK &&
        model_spec_parse(path, text, len, &spec) == YOLO_OK) {
        const yolo_task *owner = NULL;
        if (spec.n_rows > 0 && spec.rows[spec.n_rows - 1].module &&
            yolo_plugin_find_module(spec.rows[spec.n_rows - 1].module, &owner) && owner)
            task = owner->name;
        model_spec_free(&spec);
    }
    free(text);
    yolo_error_clear();
    return task;
}

const char *yolo_model_yaml_task(const char *model, char *buf, size_t size) {
    char path[MODEL_NAME_MAX];
    const char *task = NULL, *found = NULL;
    if (model_yaml_file(model, path, sizeof(path))) task = task_of_file(path);
    else model_find_embedded(NULL, model, &found, &task);
    if (!task || (size_t)snprintf(buf, size, "%s", task) >= size) return NULL;
    return buf;
}
