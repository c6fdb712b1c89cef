/* yolo/plugin.h — the task plugin ABI.
 *
 * A task plugin is a shared object named libyolo-<task>.so that exports
 *
 *     const yolo_task *yolo_task_register(void);
 *
 * returning a static table whose first field is the ABI version it was
 * built against (YOLO_PLUGIN_ABI_MAJOR/MINOR of the headers it saw). The
 * loader accepts the same major and an equal or lower minor.
 *
 * The loader looks for libyolo-<task>.so in, in this order:
 *   1. <directory of the executable>/../lib/yolo/plugins (the build tree
 *      and an installed tree alike),
 *   2. <directory of libyolo.so>/yolo/plugins, when libyolo is a shared
 *      library apart from the executable (a program using yolo/yolo.h),
 *   3. <install prefix>/lib/yolo/plugins,
 *   4. each directory of YOLO_PLUGIN_PATH (colon-separated);
 * the first file found for a task wins. A file that cannot be loaded, lacks
 * the entry symbol, was built for another ABI or returns a bad table is an
 * error naming the file; a plugin is never unloaded. */
#ifndef YOLO_PLUGIN_H
#define YOLO_PLUGIN_H

#include "yolo/config.h"
#include "yolo/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define YOLO_PLUGIN_ABI_MAJOR 1
#define YOLO_PLUGIN_ABI_MINOR 6
#define YOLO_PLUGIN_ENTRY "yolo_task_register"

struct yolo_module_type; /* yolo/model.h */
struct yolo_task_hooks;  /* yolo/task.h */

typedef struct yolo_abi_version {
    int major;
    int minor;
} yolo_abi_version;

/* The task table. Fields are only ever appended: a field added in minor N
 * is read by the loader only from plugins whose abi.minor >= N, so an
 * older plugin's shorter table stays valid. Fields are minor 1 unless
 * marked. */
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
    /* Configuration keys the task adds (yolo/config.h): they merge, are
     * validated and show in `yolo help` like the core's. A name the core
     * already defines is an error naming the plugin file. */
    const yolo_config_key *config_keys;
    int n_config_keys;
    /* Training, validation and prediction hooks (yolo/task.h); NULL while a
     * task has only its model (those modes then say so). */
    const struct yolo_task_hooks *hooks;
    /* Minor 2. Of the core's keys that only task plugins read (box, cls,
     * dfl, overlap_mask, mask_ratio, dropout, label_smoothing, and the box
     * tasks' verbose, single_cls, conf, iou, max_det, agnostic_nms, classes,
     * save_conf), the ones this task reads: a value other than the default
     * given for another is a warning that it has no effect on this task.
     * NULL: not declared, no warnings; a task that reads none gives an
     * empty list (n 0, a non-NULL pointer). Minor 3: "cls_pw" in the list
     * says the task's loss applies yolo_task_context.class_weights; for a
     * task without it cls_pw > 0 is refused. */
    const char *const *task_keys_read;
    int n_task_keys_read;
} yolo_task;

typedef const yolo_task *(*yolo_task_register_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
