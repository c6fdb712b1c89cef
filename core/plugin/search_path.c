/* The plugin search path: next to the executable, next to libyolo.so, the
 * install prefix, then YOLO_PLUGIN_PATH (see yolo/plugin.h). */
#include "plugin/plugin_loader.h"

#include <dlfcn.h>
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

/* <directory of path>/<rel> as a search directory (path: a file). */
static void add_beside(yolo_plugin_dirs *dirs, const char *path, const char *rel, const char *origin) {
    const char *slash = strrchr(path, '/');
    if (slash == NULL) return;
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%.*s/%s", (int)(slash - path), path, rel);
    add_dir(dirs, dir, origin);
}

void yolo_plugin_search_dirs(yolo_plugin_dirs *dirs) {
    dirs->n = 0;
    char exe[PATH_MAX], lib[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    if (len > 0) add_beside(dirs, exe, "../lib/yolo/plugins", "next to the executable");
    /* a program linking libyolo.so (the host API, yolo/yolo.h) lives anywhere:
     * the plugins installed with the library are found from its own path */
    Dl_info info;
    if (dladdr((void *)yolo_plugin_search_dirs, &info) && info.dli_fname && strstr(info.dli_fname, ".so") &&
        realpath(info.dli_fname, lib) && strcmp(lib, exe) != 0)
        add_beside(dirs, lib, "yolo/plugins", "next to libyolo");
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
