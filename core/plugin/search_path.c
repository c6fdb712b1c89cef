/* The plugin search path: next to the executable, the install prefix,
 * then YOLO_PLUGIN_PATH (see yolo/plugin.h). */
#include "plugin/plugin_loader.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef YOLO_INSTALL_PLUGIN_DIR
#error "YOLO_INSTALL_PLUGIN_DIR (the installed plugin directory) is defined by CMakeLists.txt"
#endif

static void add_dir(yolo_plugin_dirs *dirs, const char *dir, const char *origin) {
    if (dir[0] == '\0' || dirs->n == YOLO_PLUGIN_MAX_DIRS) return;
    char canonical[PATH_MAX];
    const char *path = realpath(dir, canonical) ? canonical : dir;
    size_t len = strlen(path);
    if (len >= YOLO_PLUGIN_PATH_MAX) return;
    for (int i = 0; i < dirs->n; i++)
        if (strcmp(dirs->dir[i], path) == 0) return;
    memcpy(dirs->dir[dirs->n], path, len + 1);
    dirs->origin[dirs->n] = origin;
    dirs->n++;
}

void yolo_plugin_search_dirs(yolo_plugin_dirs *dirs) {
    dirs->n = 0;
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            char dir[PATH_MAX + 32];
            snprintf(dir, sizeof dir, "%s/../lib/yolo/plugins", exe);
            add_dir(dirs, dir, "next to the executable");
        }
    }
    add_dir(dirs, YOLO_INSTALL_PLUGIN_DIR, "install prefix");
    const char *env = getenv("YOLO_PLUGIN_PATH");
    if (env != NULL) {
        char *copy = strdup(env);
        if (copy != NULL) {
            for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
                add_dir(dirs, tok, "YOLO_PLUGIN_PATH");
            free(copy);
        }
    }
}

void yolo_plugin_dirs_describe(const yolo_plugin_dirs *dirs, char *buf, size_t size) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < dirs->n && len < size; i++) {
        int w = snprintf(buf + len, size - len, "%s%s (%s)", i ? ", " : "", dirs->dir[i], dirs->origin[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
    if (dirs->n == 0) snprintf(buf, size, "(no directories)");
}

bool yolo_plugin_task_from_file(const char *file_name, char *task, size_t size) {
    size_t prefix = strlen(YOLO_PLUGIN_PREFIX), suffix = strlen(YOLO_PLUGIN_SUFFIX);
    size_t len = strlen(file_name);
    if (len <= prefix + suffix || strncmp(file_name, YOLO_PLUGIN_PREFIX, prefix) != 0 ||
        strcmp(file_name + len - suffix, YOLO_PLUGIN_SUFFIX) != 0)
        return false;
    size_t n = len - prefix - suffix;
    if (n >= size) return false;
    memcpy(task, file_name + prefix, n);
    task[n] = '\0';
    return true;
}
