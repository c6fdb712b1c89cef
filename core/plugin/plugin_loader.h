/* Finding, loading and registering task plugins (libyolo-<task>.so).
 * The search order and the ABI rule are documented in yolo/plugin.h. */
#ifndef YOLO_PLUGIN_LOADER_H
#define YOLO_PLUGIN_LOADER_H

#include "yolo/plugin.h"

#include <stdbool.h>
#include <stddef.h>

#define YOLO_PLUGIN_MAX_DIRS 32
#define YOLO_PLUGIN_PATH_MAX 1024
#define YOLO_PLUGIN_PREFIX "libyolo-"
#define YOLO_PLUGIN_SUFFIX ".so"

/* ---- search path (core/plugin/search_path.c) ---- */
typedef struct yolo_plugin_dirs {
    int n;
    char dir[YOLO_PLUGIN_MAX_DIRS][YOLO_PLUGIN_PATH_MAX];
    const char *origin[YOLO_PLUGIN_MAX_DIRS]; /* "next to the executable", "install prefix", "YOLO_PLUGIN_PATH" */
} yolo_plugin_dirs;

/* The directories to search, in order, without duplicates (existing or not). */
void yolo_plugin_search_dirs(yolo_plugin_dirs *dirs);
/* "DIR (origin), DIR (origin), ..." for messages. */
void yolo_plugin_dirs_describe(const yolo_plugin_dirs *dirs, char *buf, size_t size);
/* The task named by a plugin file name ("libyolo-detect.so" -> "detect");
 * false if the name does not have that form. */
bool yolo_plugin_task_from_file(const char *file_name, char *task, size_t size);

/* ---- loading (core/plugin/loader.c) ---- */
/* Loads the plugin at `path`: dlopen, the entry symbol, the ABI check and
 * the table's checks. expected_task (or NULL) must equal the table's name.
 * Registers the task; loading a registered file again returns its table. */
yolo_status yolo_plugin_load_file(const char *path, const char *expected_task, const yolo_task **out);
/* The plugin of `task`: the registered one, else the first
 * libyolo-<task>.so in the search path. If there is none, the error lists
 * the tasks found and the directories searched. */
yolo_status yolo_plugin_load_task(const char *task, const yolo_task **out);

/* Every libyolo-*.so in the search path, each loaded (except those
 * shadowed by a file of the same task earlier in the path). */
typedef struct yolo_plugin_found {
    char path[YOLO_PLUGIN_PATH_MAX];
    char task[128];          /* from the file name */
    const yolo_task *table;  /* NULL if loading failed or it is shadowed */
    yolo_status status;      /* YOLO_OK or why it failed */
    char error[1536];
    int shadowed_by;         /* index of the entry that wins, or -1 */
} yolo_plugin_found;
yolo_status yolo_plugin_scan(yolo_plugin_found **found, int *n);
/* The task names found (without loading), sorted, comma-separated. */
void yolo_plugin_list_task_names(char *buf, size_t size);

/* ---- registry (core/plugin/registry.c) ---- */
/* Adds a loaded task; fails if a task of the same name is registered
 * from another file. */
yolo_status yolo_plugin_register(const yolo_task *task, const char *path);
/* The registered task of that name (NULL if none). */
const yolo_task *yolo_plugin_find_task(const char *name);
/* The registered task loaded from `path` (NULL if none). */
const yolo_task *yolo_plugin_find_file(const char *path);
int yolo_plugin_task_count(void);
const yolo_task *yolo_plugin_task_at(int index);
/* The file a registered task was loaded from. */
const char *yolo_plugin_task_file(const yolo_task *task);
/* The task's task_keys_read (yolo/plugin.h) and their count; NULL (and
 * 0) when it declares none, or its table predates ABI minor 2. */
const char *const *yolo_plugin_task_keys_read(const yolo_task *task, int *n);
/* A head module type registered by any loaded task (first registered
 * wins); *owner (if not NULL) gets its task. */
const struct yolo_module_type *yolo_plugin_find_module(const char *name, const yolo_task **owner);

#endif
