/* yolo/plugin.h — the task plugin ABI.
 *
 * A task plugin is a shared object named libyolo-<task>.so that exports
 *
 *     const yolo_task *yolo_task_register(void);
 *
 * returning a static table whose first field is the ABI version it was
 * built against (YOLO_PLUGIN_ABI_MAJOR/MINOR of the headers it saw). The
 * loader accepts the same major and an equal or lower minor. */
#ifndef YOLO_PLUGIN_H
#define YOLO_PLUGIN_H

#include "yolo/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define YOLO_PLUGIN_ABI_MAJOR 0
#define YOLO_PLUGIN_ABI_MINOR 1
#define YOLO_PLUGIN_ENTRY "yolo_task_register"

struct yolo_module_type; /* yolo/model.h */

typedef struct yolo_abi_version {
    int major;
    int minor;
} yolo_abi_version;

/* The task table. Fields after `modules` are added by later minors; a
 * plugin built against an older minor leaves them zero. */
typedef struct yolo_task {
    yolo_abi_version abi;               /* must be first: {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR} */
    const char *name;                   /* task name: "detect", "pose", ... */
    const char *version;                /* the plugin's own version string */
    const char *description;            /* one line for `yolo checks` */
    const char *default_model;          /* default model yaml name, e.g. "yolov8n.yaml" */
    const char *default_data;           /* default data, e.g. "shapes" */
    /* Head modules the task contributes to the model builder, by name. */
    const struct yolo_module_type *const *modules;
    int n_modules;
    /* Embedded model yamls: names[i] -> texts[i] (e.g. "yolov8.yaml"). */
    const char *const *model_yaml_names;
    const char *const *model_yaml_texts;
    int n_model_yamls;
} yolo_task;

typedef const yolo_task *(*yolo_task_register_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
