/* `yolo help`, `yolo help TOPIC`, `yolo MODE help`, `yolo TASK help`. */
#include "cfg/config_internal.h"
#include "cfg/suggest.h"
#include "cli/cli.h"
#include "plugin/plugin_loader.h"
#include "settings/settings.h"
#include "yolo/model.h"

#include <stdlib.h>
#include <string.h>

void yolo_cli_usage(FILE *out) {
    fprintf(out,
            "usage: yolo [--task TASK] MODE [key=value ...]\n"
            "       yolo TASK MODE [key=value ...]\n"
            "       yolo help [MODE | TASK | KEY]   yolo MODE help   yolo checks   yolo version\n"
            "       yolo settings   yolo cfg   yolo copy-cfg\n");
}

/* "int >= 1", "float in [0, 1]", "SGD|Adam|auto", "bool|text", ... */
static void describe_type(const yolo_config_key *key, char *buf, size_t size) {
    const char *base = "";
    switch (key->type) {
    case YOLO_CONFIG_BOOL: base = "bool"; break;
    case YOLO_CONFIG_INT: base = "int"; break;
    case YOLO_CONFIG_FLOAT: base = "float"; break;
    case YOLO_CONFIG_STRING: base = key->choices ? key->choices : "text"; break;
    case YOLO_CONFIG_BOOL_OR_STRING: base = "bool|"; break;
    case YOLO_CONFIG_INT_LIST: base = "int list"; break;
    case YOLO_CONFIG_NUMBER: base = "int|float"; break;
    case YOLO_CONFIG_BOOL_OR_NUMBER: base = "bool|float"; break;
    }
    char range[100] = " ";
    yolo_config_describe_range(key, range + 1, sizeof range - 1);
    if (!range[1]) range[0] = '\0';
    const char *tail = key->type == YOLO_CONFIG_BOOL_OR_STRING ? (key->choices ? key->choices : "text") : "";
    snprintf(buf, size, "%s%s%s%s", base, tail, range, (key->flags & YOLO_CONFIG_NULLABLE) ? " or null" : "");
}

static void print_key(FILE *out, const yolo_config_key *key) {
    char left[160], type[200];
    snprintf(left, sizeof left, "%s=%s", key->name, key->default_value ? key->default_value : "null");
    describe_type(key, type, sizeof type);
    fprintf(out, "  %-26s %-24s %s\n", left, type, key->help ? key->help : "");
    /* the settings table says which keys are refused or have no effect yet */
    int at = 0;
    const yolo_key_reader *row;
    while ((row = yolo_settings_find_key(key->name, &at)) != NULL) {
        if (row->use == YOLO_KEY_REFUSED) fprintf(out, "  %-26s not supported, only the default: %s\n", "", row->reader);
    }
}

/* Keys of `cfg` (core) whose modes include mode_flag (0: all). */
static void print_core_keys(FILE *out, const yolo_config *cfg, unsigned mode_flag) {
    for (int i = 0; i < yolo_config_key_count(cfg); i++) {
        const yolo_config_key *key = yolo_config_key_at(cfg, i);
        if (mode_flag == 0 || (key->flags & mode_flag)) print_key(out, key);
    }
}

static void print_task_keys(FILE *out, const yolo_task *t, unsigned mode_flag) {
    int shown = 0;
    for (int i = 0; i < t->n_config_keys; i++) {
        const yolo_config_key *key = &t->config_keys[i];
        if (mode_flag != 0 && !(key->flags & mode_flag)) continue;
        if (shown++ == 0) fprintf(out, "\nkeys of task '%s' (%s):\n", t->name, yolo_plugin_task_file(t));
        print_key(out, key);
    }
}

/* Loads every plugin found; prints their keys (or only `only_task`'s). */
static void print_plugin_keys(FILE *out, unsigned mode_flag, const yolo_task *only_task) {
    if (only_task != NULL) {
        print_task_keys(out, only_task, mode_flag);
        return;
    }
    yolo_plugin_found *found;
    int n, failed = 0;
    if (yolo_plugin_scan(&found, &n) != YOLO_OK) return;
    for (int i = 0; i < n; i++) {
        if (found[i].table != NULL) print_task_keys(out, found[i].table, mode_flag);
        else if (found[i].shadowed_by < 0) failed++;
    }
    if (failed) fprintf(out, "\n(%d plugin file%s failed to load: see 'yolo checks')\n", failed, failed > 1 ? "s" : "");
    free(found);
}

static void print_tasks_line(FILE *out) {
    char tasks[2048];
    yolo_plugin_list_task_names(tasks, sizeof tasks);
    fprintf(out, "\ntasks found: %s (task plugins; 'yolo checks' shows where)\n", tasks[0] ? tasks : "none");
}

static void print_general(FILE *out, const yolo_config *cfg) {
    yolo_cli_usage(out);
    fprintf(out, "\nmodes:\n");
    for (int i = 0; i < yolo_cli_mode_count; i++)
        fprintf(out, "  %-9s %s\n", yolo_cli_modes[i].name, yolo_cli_modes[i].summary);
    print_tasks_line(out);
    fprintf(out,
            "\nexamples:\n"
            "  yolo --task detect train data=coco8.yaml model=yolov8n.yaml epochs=50 imgsz=320\n"
            "  yolo detect train data=coco8.yaml                 (Ultralytics' word order works too)\n"
            "  yolo --task segment train resume model=runs/segment/train/weights/last.ckpt\n"
            "  yolo --task classify val model=runs/classify/train/weights/best.ckpt data=imagenet10\n"
            "  yolo info model=yolov8n.yaml\n"
            "\narguments are key=value without dashes; a bare bool key means key=true (resume = resume=true).\n"
            "configuration, later wins: default.yaml < task plugin < cfg=FILE < model yaml < data yaml\n"
            "  < checkpoint args (resume) < command line. exit codes: 0 ok, 2 usage or configuration error, 1 failure.\n"
            "\nkeys (key=default, type, help):\n");
    print_core_keys(out, cfg, 0);
    print_plugin_keys(out, 0, NULL);
}

static const yolo_cli_mode_info *find_mode(const char *name) {
    for (int i = 0; i < yolo_cli_mode_count; i++)
        if (strcmp(yolo_cli_modes[i].name, name) == 0) return &yolo_cli_modes[i];
    return NULL;
}

static void print_mode(FILE *out, const yolo_config *cfg, const yolo_cli_mode_info *mode, const yolo_task *task) {
    if (strcmp(mode->name, "checks") == 0) {
        fprintf(out, "usage: yolo checks\n\n%s: the version, the CPU backend (threads, oneDNN, OpenBLAS),\n"
                     "Vulkan devices, MPI, and every task plugin found with its version and ABI.\n"
                     "Exits 1 if a plugin file in the search path fails to load.\n", mode->name);
        return;
    }
    fprintf(out, "usage: yolo [--task TASK] %s [key=value ...]\n\n%s: %s\n", mode->name, mode->name, mode->summary);
    if (mode->key_flag == 0) {
        fprintf(out, "\nkeys: model=MODEL (a model yaml or checkpoint), imgsz=SIZE\n");
        return;
    }
    fprintf(out, "\nkeys for %s (key=default, type, help):\n", mode->name);
    print_core_keys(out, cfg, mode->key_flag);
    print_plugin_keys(out, mode->key_flag, task);
}

static void print_task(FILE *out, const yolo_task *t) {
    fprintf(out, "task %s %s (plugin ABI %d.%d): %s\n  file: %s\n", t->name, t->version ? t->version : "?", t->abi.major,
            t->abi.minor, t->description ? t->description : "", yolo_plugin_task_file(t));
    fprintf(out, "  default model: %s\n  default data: %s\n", t->default_model ? t->default_model : "(none)",
            t->default_data ? t->default_data : "(none)");
    fprintf(out, "  head modules:");
    for (int i = 0; i < t->n_modules; i++) fprintf(out, " %s", t->modules[i]->name);
    fprintf(out, "%s\n", t->n_modules ? "" : " (none)");
    if (t->n_config_keys == 0) fprintf(out, "  keys: none of its own\n");
    print_task_keys(out, t, 0);
}

static void print_key_detail(FILE *out, const yolo_config_key *key, const char *owner) {
    char type[200];
    describe_type(key, type, sizeof type);
    fprintf(out, "%s\n  type: %s\n  default: %s (%s)\n  %s\n", key->name, type,
            key->default_value ? key->default_value : "null", owner, key->help ? key->help : "");
    const yolo_config_rule *rule = yolo_config_find_rule(key->name);
    if (rule) fprintf(out, "  values: %s\n", rule->values);
    if (rule && rule->where) fprintf(out, "  checked by: %s\n", rule->where);
    fprintf(out, "  modes:%s%s%s%s\n", (key->flags & YOLO_CONFIG_TRAIN) ? " train" : "",
            (key->flags & YOLO_CONFIG_VAL) ? " val" : "", (key->flags & YOLO_CONFIG_PREDICT) ? " predict" : "",
            (key->flags & YOLO_CONFIG_RESUMABLE) ? " (may change on resume)" : "");
}

/* A key of any plugin found (loads them all); NULL if none. */
static const yolo_config_key *find_plugin_key(const char *name, const yolo_task **owner) {
    yolo_plugin_found *found;
    int n;
    const yolo_config_key *key = NULL;
    if (yolo_plugin_scan(&found, &n) != YOLO_OK) return NULL;
    for (int i = 0; i < n && key == NULL; i++) {
        const yolo_task *t = found[i].table;
        for (int k = 0; t != NULL && k < t->n_config_keys && key == NULL; k++)
            if (strcmp(t->config_keys[k].name, name) == 0) {
                key = &t->config_keys[k];
                *owner = t;
            }
    }
    free(found);
    return key;
}

static int help_topic(FILE *out, const yolo_config *cfg, const char *topic) {
    const yolo_cli_mode_info *mode = find_mode(topic);
    if (mode != NULL) {
        print_mode(out, cfg, mode, NULL);
        return YOLO_EXIT_OK;
    }
    const yolo_config_key *key = yolo_config_find_key(cfg, topic);
    if (key != NULL) {
        print_key_detail(out, key, "default.yaml");
        return YOLO_EXIT_OK;
    }
    const yolo_task *owner = NULL;
    if ((key = find_plugin_key(topic, &owner)) != NULL) {
        print_key_detail(out, key, yolo_plugin_task_file(owner));
        return YOLO_EXIT_OK;
    }
    char tasks[2048];
    yolo_plugin_list_task_names(tasks, sizeof tasks);
    const yolo_task *t;
    if (yolo_plugin_load_task(topic, &t) == YOLO_OK) {
        print_task(out, t);
        return YOLO_EXIT_OK;
    }
    const char *candidates[512];
    int n = 0;
    for (int i = 0; i < yolo_cli_mode_count; i++) candidates[n++] = yolo_cli_modes[i].name;
    for (int i = 0; i < yolo_config_key_count(cfg) && n < 400; i++) candidates[n++] = yolo_config_key_at(cfg, i)->name;
    for (char *save = NULL, *tok = strtok_r(tasks, ", ", &save); tok && n < 512; tok = strtok_r(NULL, ", ", &save))
        candidates[n++] = tok;
    const char *near = yolo_suggest(topic, candidates, n);
    fprintf(stderr, "yolo: configuration error: no help on '%s': not a mode, a task found or a key%s%s%s\n", topic,
            near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    return YOLO_EXIT_USAGE;
}

int yolo_cli_help(const yolo_cli_args *args, FILE *out) {
    yolo_config *cfg;
    yolo_status st = yolo_config_new(&cfg);
    if (st != YOLO_OK) {
        fprintf(stderr, "yolo: %s: %s\n", yolo_status_name(st), yolo_last_error());
        return YOLO_EXIT_FAILURE;
    }
    int code = YOLO_EXIT_OK;
    const char *task_name = args->task ? args->task : (args->n_words > 0 ? args->words[0] : NULL);
    const yolo_task *task = NULL;
    if (task_name != NULL && (st = yolo_plugin_load_task(task_name, &task)) != YOLO_OK) {
        fprintf(stderr, "yolo: %s: %s\n", yolo_status_name(st), yolo_last_error());
        yolo_config_free(cfg);
        return YOLO_EXIT_USAGE;
    }
    if (args->help_topic != NULL) code = help_topic(out, cfg, args->help_topic);
    else if (args->mode != NULL) print_mode(out, cfg, find_mode(args->mode), task);
    else if (task != NULL) print_task(out, task);
    else print_general(out, cfg);
    yolo_config_free(cfg);
    return code;
}
