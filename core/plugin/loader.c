/* Loading a task plugin: dlopen, the entry symbol, the ABI and table checks. */
#include "cfg/suggest.h"
#include "plugin/plugin_loader.h"
#include "yolo/model.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static bool valid_task_name(const char *name) {
    if (name == NULL || name[0] == '\0' || strlen(name) > 64) return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-')) return false;
    return true;
}

/* Checks the fields of a table whose ABI is accepted. */
static yolo_status check_table(const char *path, const yolo_task *t, const char *expected_task) {
    if (!valid_task_name(t->name))
        return yolo_error(YOLO_ERR_PLUGIN, "%s: the task table has no valid name (a-z, 0-9, '_', '-')", path);
    if (expected_task != NULL && strcmp(t->name, expected_task) != 0)
        return yolo_error(YOLO_ERR_PLUGIN, "%s: registers task '%s', but the file is named for task '%s' (name it %s%s%s)",
                          path, t->name, expected_task, YOLO_PLUGIN_PREFIX, t->name, YOLO_PLUGIN_SUFFIX);
    if (t->n_modules < 0 || (t->n_modules > 0 && t->modules == NULL))
        return yolo_error(YOLO_ERR_PLUGIN, "%s: task '%s' lists %d modules but no module table", path, t->name, t->n_modules);
    for (int i = 0; i < t->n_modules; i++) {
        const struct yolo_module_type *m = t->modules[i];
        if (m == NULL || m->name == NULL || m->name[0] == '\0')
            return yolo_error(YOLO_ERR_PLUGIN, "%s: task '%s': module %d has no name", path, t->name, i);
        for (int j = 0; j < i; j++)
            if (strcmp(t->modules[j]->name, m->name) == 0)
                return yolo_error(YOLO_ERR_PLUGIN, "%s: task '%s' registers module '%s' twice", path, t->name, m->name);
    }
    if (t->n_model_yamls < 0 || (t->n_model_yamls > 0 && (t->model_yaml_names == NULL || t->model_yaml_texts == NULL)))
        return yolo_error(YOLO_ERR_PLUGIN, "%s: task '%s' lists %d model yamls but no tables", path, t->name,
                          t->n_model_yamls);
    for (int i = 0; i < t->n_model_yamls; i++)
        if (t->model_yaml_names[i] == NULL || t->model_yaml_texts[i] == NULL)
            return yolo_error(YOLO_ERR_PLUGIN, "%s: task '%s': model yaml %d has no name or text", path, t->name, i);
    if (t->n_config_keys < 0 || (t->n_config_keys > 0 && t->config_keys == NULL))
        return yolo_error(YOLO_ERR_PLUGIN, "%s: task '%s' lists %d configuration keys but no table", path, t->name,
                          t->n_config_keys);
    if (t->abi.minor >= 2 && (t->n_task_keys_read < 0 || (t->n_task_keys_read > 0 && t->task_keys_read == NULL)))
        return yolo_error(YOLO_ERR_PLUGIN, "%s: task '%s' lists %d task keys read but no table", path, t->name,
                          t->n_task_keys_read);
    int n_read = 0;
    const char *const *read = yolo_plugin_task_keys_read(t, &n_read);
    for (int i = 0; i < n_read; i++)
        if (read[i] == NULL || read[i][0] == '\0')
            return yolo_error(YOLO_ERR_PLUGIN, "%s: task '%s': task key read %d has no name", path, t->name, i);
    if (t->n_config_keys > 0) {
        /* the keys must be valid and must not redefine a core key */
        yolo_config *cfg;
        yolo_status st = yolo_config_new(&cfg);
        if (st != YOLO_OK) return st;
        st = yolo_config_add_keys(cfg, t->config_keys, t->n_config_keys, path);
        yolo_config_free(cfg);
        if (st != YOLO_OK) return YOLO_ERR_PLUGIN; /* the message names the file (owner) and the key */
    }
    return YOLO_OK;
}

static yolo_status load_locked(const char *path, const char *expected_task, const yolo_task **out) {
    const yolo_task *known = yolo_plugin_find_file(path);
    if (known != NULL) {
        *out = known;
        return YOLO_OK;
    }
    if (access(path, R_OK) != 0) return yolo_error(YOLO_ERR_PLUGIN, "%s: cannot read the plugin file: %m", path);
    dlerror();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        return yolo_error(YOLO_ERR_PLUGIN, "%s: not a yolo plugin: it cannot be loaded as a shared object (%s)", path,
                          why ? why : "unknown dlopen error");
    }
    dlerror();
    void *symbol = dlsym(handle, YOLO_PLUGIN_ENTRY);
    if (symbol == NULL) {
        dlclose(handle);
        return yolo_error(YOLO_ERR_PLUGIN, "%s: not a yolo plugin: it does not export '%s' (see yolo/plugin.h)", path,
                          YOLO_PLUGIN_ENTRY);
    }
    yolo_task_register_fn entry;
    memcpy(&entry, &symbol, sizeof entry); /* object pointer to function pointer, as POSIX allows */
    const yolo_task *t = entry();
    yolo_status st = YOLO_OK;
    if (t == NULL) {
        st = yolo_error(YOLO_ERR_PLUGIN, "%s: %s() returned no task table", path, YOLO_PLUGIN_ENTRY);
    } else if (t->abi.major != YOLO_PLUGIN_ABI_MAJOR || t->abi.minor > YOLO_PLUGIN_ABI_MINOR || t->abi.minor < 0) {
        st = yolo_error(YOLO_ERR_PLUGIN,
                        "%s: built for plugin ABI %d.%d, but this yolo (%s) loads ABI %d.0 to %d.%d; rebuild the plugin "
                        "against this yolo's sdk headers",
                        path, t->abi.major, t->abi.minor, YOLO_VERSION, YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MAJOR,
                        YOLO_PLUGIN_ABI_MINOR);
    } else {
        st = check_table(path, t, expected_task);
    }
    if (st == YOLO_OK) st = yolo_plugin_register(t, path);
    if (st != YOLO_OK) {
        dlclose(handle);
        return st;
    }
    *out = t; /* the handle stays open for the life of the process */
    return YOLO_OK;
}

yolo_status yolo_plugin_load_file(const char *path, const char *expected_task, const yolo_task **out) {
    *out = NULL;
    char canonical[PATH_MAX];
    if (realpath(path, canonical) != NULL) path = canonical;
    pthread_mutex_lock(&load_lock);
    yolo_status st = load_locked(path, expected_task, out);
    pthread_mutex_unlock(&load_lock);
    return st;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every task name found in the search path, sorted, without duplicates. */
static int collect_task_names(const yolo_plugin_dirs *dirs, char names[][128], int max) {
    int n = 0;
    for (int d = 0; d < dirs->n; d++) {
        DIR *dir = opendir(dirs->dir[d]);
        if (dir == NULL) continue;
        for (struct dirent *ent; (ent = readdir(dir)) != NULL;) {
            char task[128];
            if (!yolo_plugin_task_from_file(ent->d_name, task, sizeof task)) continue;
            bool seen = false;
            for (int i = 0; i < n && !seen; i++) seen = strcmp(names[i], task) == 0;
            if (!seen && n < max) snprintf(names[n++], 128, "%s", task);
        }
        closedir(dir);
    }
    char *sorted[256];
    char copy[256][128];
    for (int i = 0; i < n; i++) {
        memcpy(copy[i], names[i], 128);
        sorted[i] = copy[i];
    }
    qsort(sorted, (size_t)n, sizeof *sorted, compare_names);
    for (int i = 0; i < n; i++) memcpy(names[i], sorted[i], 128);
    return n;
}

void yolo_plugin_list_task_names(char *buf, size_t size) {
    yolo_plugin_dirs dirs;
    yolo_plugin_search_dirs(&dirs);
    static char names[256][128];
    pthread_mutex_lock(&load_lock);
    int n = collect_task_names(&dirs, names, 256);
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len < size; i++) {
        int w = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
    pthread_mutex_unlock(&load_lock);
}

yolo_status yolo_plugin_load_task(const char *task, const yolo_task **out) {
    *out = NULL;
    if (task == NULL || task[0] == '\0') return yolo_error(YOLO_ERR_CONFIG, "no task given");
    const yolo_task *known = yolo_plugin_find_task(task);
    if (known != NULL) {
        *out = known;
        return YOLO_OK;
    }
    yolo_plugin_dirs dirs;
    yolo_plugin_search_dirs(&dirs);
    if (valid_task_name(task)) {
        for (int d = 0; d < dirs.n; d++) {
            char path[YOLO_PLUGIN_PATH_MAX + 256];
            snprintf(path, sizeof path, "%s/%s%s%s", dirs.dir[d], YOLO_PLUGIN_PREFIX, task, YOLO_PLUGIN_SUFFIX);
            if (access(path, F_OK) == 0) return yolo_plugin_load_file(path, task, out);
        }
    }
    char where[4096], found[2048];
    yolo_plugin_dirs_describe(&dirs, where, sizeof where);
    yolo_plugin_list_task_names(found, sizeof found);
    /* a near task name */
    const char *candidates[64];
    char storage[2048];
    int n = 0;
    snprintf(storage, sizeof storage, "%s", found);
    for (char *save = NULL, *tok = strtok_r(storage, ", ", &save); tok && n < 64; tok = strtok_r(NULL, ", ", &save))
        candidates[n++] = tok;
    const char *near = yolo_suggest(task, candidates, n);
    char hint[256] = "";
    if (near != NULL) snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
    return yolo_error(YOLO_ERR_PLUGIN, "task '%s' not found: no %s%s%s in %s; tasks found: %s%s", task,
                      YOLO_PLUGIN_PREFIX, task, YOLO_PLUGIN_SUFFIX, where, found[0] ? found : "none", hint);
}

yolo_status yolo_plugin_scan(yolo_plugin_found **found_out, int *n_out) {
    *found_out = NULL;
    *n_out = 0;
    yolo_plugin_dirs dirs;
    yolo_plugin_search_dirs(&dirs);
    int n = 0, cap = 0;
    yolo_plugin_found *found = NULL;
    for (int d = 0; d < dirs.n; d++) {
        DIR *dir = opendir(dirs.dir[d]);
        if (dir == NULL) continue;
        int first = n;
        for (struct dirent *ent; (ent = readdir(dir)) != NULL;) {
            char task[128];
            if (!yolo_plugin_task_from_file(ent->d_name, task, sizeof task)) continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                yolo_plugin_found *grown = realloc(found, (size_t)cap * sizeof *grown);
                if (grown == NULL) {
                    closedir(dir);
                    free(found);
                    return yolo_error(YOLO_ERR_NOMEM, "out of memory listing plugins");
                }
                found = grown;
            }
            yolo_plugin_found *f = &found[n++];
            memset(f, 0, sizeof *f);
            snprintf(f->task, sizeof f->task, "%s", task);
            snprintf(f->path, sizeof f->path, "%.*s/%s", YOLO_PLUGIN_PATH_MAX - 300, dirs.dir[d], ent->d_name);
            f->shadowed_by = -1;
        }
        closedir(dir);
        /* sort this directory's files by task name */
        for (int i = first + 1; i < n; i++)
            for (int j = i; j > first && strcmp(found[j - 1].task, found[j].task) > 0; j--) {
                yolo_plugin_found tmp = found[j];
                found[j] = found[j - 1];
                found[j - 1] = tmp;
            }
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i && found[i].shadowed_by < 0; j++)
            if (strcmp(found[j].task, found[i].task) == 0) found[i].shadowed_by = j;
        if (found[i].shadowed_by >= 0) continue;
        found[i].status = yolo_plugin_load_file(found[i].path, found[i].task, &found[i].table);
        if (found[i].status != YOLO_OK) snprintf(found[i].error, sizeof found[i].error, "%s", yolo_last_error());
    }
    yolo_error_clear();
    *found_out = found;
    *n_out = n;
    return YOLO_OK;
}
