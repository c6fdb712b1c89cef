/* The registry of loaded task plugins and of the head modules they add. */
#include "plugin/plugin_loader.h"
#include "yolo/model.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TASKS 64

typedef struct registered_task {
    const yolo_task *table;
    char path[YOLO_PLUGIN_PATH_MAX];
} registered_task;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static registered_task registry[MAX_TASKS];
static int registry_count;

yolo_status yolo_plugin_register(const yolo_task *task, const char *path) {
    yolo_status st = YOLO_OK;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < registry_count; i++) {
        if (registry[i].table == task) goto out;
        if (strcmp(registry[i].table->name, task->name) == 0) {
            st = yolo_error(YOLO_ERR_PLUGIN, "%s: task '%s' is already registered from %s", path, task->name,
                            registry[i].path);
            goto out;
        }
    }
    if (registry_count == MAX_TASKS) {
        st = yolo_error(YOLO_ERR_PLUGIN, "%s: more than %d task plugins", path, MAX_TASKS);
        goto out;
    }
    registry[registry_count].table = task;
    snprintf(registry[registry_count].path, YOLO_PLUGIN_PATH_MAX, "%s", path);
    registry_count++;
out:
    pthread_mutex_unlock(&registry_lock);
    return st;
}

const yolo_task *yolo_plugin_find_task(const char *name) {
    const yolo_task *found = NULL;
    if (name == NULL) return NULL;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < registry_count && !found; i++)
        if (strcmp(registry[i].table->name, name) == 0) found = registry[i].table;
    pthread_mutex_unlock(&registry_lock);
    return found;
}

const yolo_task *yolo_plugin_find_file(const char *path) {
    const yolo_task *found = NULL;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < registry_count && !found; i++)
        if (strcmp(registry[i].path, path) == 0) found = registry[i].table;
    pthread_mutex_unlock(&registry_lock);
    return found;
}

int yolo_plugin_task_count(void) {
    pthread_mutex_lock(&registry_lock);
    int n = registry_count;
    pthread_mutex_unlock(&registry_lock);
    return n;
}

const yolo_task *yolo_plugin_task_at(int index) {
    const yolo_task *t = NULL;
    pthread_mutex_lock(&registry_lock);
    if (index >= 0 && index < registry_count) t = registry[index].table;
    pthread_mutex_unlock(&registry_lock);
    return t;
}

const char *yolo_plugin_task_file(const yolo_task *task) {
    const char *path = NULL;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < registry_count && !path; i++)
        if (registry[i].table == task) path = registry[i].path; /* entries are never removed */
    pthread_mutex_unlock(&registry_lock);
    return path;
}

const char *const *yolo_plugin_task_keys_read(const yolo_task *task, int *n) {
    bool declared = task->abi.major == 1 && task->abi.minor >= 2 && task->task_keys_read != NULL;
    *n = declared ? task->n_task_keys_read : 0;
    return declared ? task->task_keys_read : NULL;
}

const struct yolo_module_type *yolo_plugin_find_module(const char *name, const yolo_task **owner) {
    const struct yolo_module_type *found = NULL;
    if (name == NULL) return NULL;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < registry_count && !found; i++) {
        const yolo_task *t = registry[i].table;
        for (int m = 0; m < t->n_modules && !found; m++) {
            if (t->modules[m] != NULL && strcmp(t->modules[m]->name, name) == 0) {
                found = t->modules[m];
                if (owner != NULL) *owner = t;
            }
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return found;
}
