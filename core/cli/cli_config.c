/* From parsed arguments to the task plugin and the merged configuration. */
#include "cfg/config_internal.h"
#include "cfg/suggest.h"
#include "cli/cli.h"
#include "ckpt/ckpt_file.h"
#include "data/fsutil.h"
#include "dist/dist.h"
#include "interop/pt_import.h"
#include "nn/model_task.h"
#include "plugin/plugin_loader.h"
#include "settings/settings.h"
#include "train/checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int yolo_cli_in_list(const char *list, const char *name) {
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += len) {
        bool starts = p == list || p[-1] == ' ';
        bool ends = p[len] == '\0' || p[len] == ',';
        if (starts && ends) return 1;
    }
    return 0;
}

static int is_bool_key(const yolo_config_key *key) {
    return key != NULL && (key->type == YOLO_CONFIG_BOOL || key->type == YOLO_CONFIG_BOOL_OR_STRING ||
                           key->type == YOLO_CONFIG_BOOL_OR_NUMBER);
}

/* "'x' is not a mode, a task or a key" with the nearest of all three. */
static yolo_status unknown_word(const yolo_config *cfg, const char *word, const char *tasks) {
    const char *candidates[512];
    int n = 0;
    char storage[2048];
    for (int i = 0; i < yolo_cli_mode_count; i++) candidates[n++] = yolo_cli_modes[i].name;
    snprintf(storage, sizeof storage, "%s", tasks);
    for (char *save = NULL, *tok = strtok_r(storage, ", ", &save); tok && n < 256; tok = strtok_r(NULL, ", ", &save))
        candidates[n++] = tok;
    for (int i = 0; i < yolo_config_key_count(cfg) && n < 512; i++) candidates[n++] = yolo_config_key_at(cfg, i)->name;
    /* Ultralytics' other tasks: not built, said so (a plugin can add them: sdk/) */
    static const char *const unbuilt[] = {"pose", "obb", "world", "yoloe"};
    for (size_t i = 0; i < sizeof unbuilt / sizeof *unbuilt; i++)
        if (strcmp(word, unbuilt[i]) == 0)
            return yolo_error(YOLO_ERR_CONFIG, "task '%s' is not built (tasks found: %s); a task plugin can add it "
                              "(sdk/README.md, sdk/examples/pose)", word, tasks[0] ? tasks : "none");
    const char *near = yolo_suggest(word, candidates, n);
    char hint[256] = "";
    if (near != NULL) snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
    return yolo_error(YOLO_ERR_CONFIG, "'%s' is not a mode (%s), a task found (%s) or a key%s", word,
                      yolo_cli_mode_names(), tasks[0] ? tasks : "none", hint);
}

static const char *last_value(const yolo_cli_args *a, const char *key) {
    const char *v = NULL;
    for (int i = 0; i < a->n_pairs; i++)
        if (strcmp(a->keys[i], key) == 0) v = a->values[i];
    return v;
}

/* Loads every task plugin found: a model's task is the plugin that owns
 * its head (a failed plugin is reported by the mode that needs it). */
static void load_all_plugins(void) {
    yolo_plugin_found *found = NULL;
    int n = 0;
    if (yolo_plugin_scan(&found, &n) == YOLO_OK) free(found);
    yolo_error_clear();
}

/* The task of a checkpoint, as Ultralytics takes the task from the model
 * (a .pt's head names it, so the plugins are loaded first). NULL when it is
 * no readable checkpoint: the mode then reports what is wrong with it. */
static const char *checkpoint_task(const char *model, char *buf, size_t size) {
    if (!yolo_is_file(model)) return NULL;
    if (yolo_pt_is_path(model)) load_all_plugins();
    yolo_ckpt *ck = NULL;
    if (yolo_ckpt_read_meta(model, &ck) != YOLO_OK) {
        yolo_error_clear();
        return NULL;
    }
    snprintf(buf, size, "%s", yolo_ckpt_get_info(ck)->task);
    yolo_ckpt_free(ck);
    return buf[0] ? buf : NULL;
}

/* No task given: the model's (model= on the command line, else in cfg=),
 * a checkpoint's or a model yaml's, as Ultralytics' YOLO(model).task. */
static const char *model_task(const yolo_cli_args *args, const yolo_config *cfg, char *buf, size_t size) {
    const char *model = last_value(args, "model");
    if (!model && yolo_config_layer_of(cfg, "model") == YOLO_CONFIG_LAYER_CFG &&
        yolo_config_get_string(cfg, "model", &model) != YOLO_OK)
        model = NULL;
    if (!model) return NULL;
    if (yolo_is_checkpoint_path(model)) return checkpoint_task(model, buf, size);
    if (!yolo_path_has_ext(model, ".yaml") && !yolo_path_has_ext(model, ".yml")) return NULL;
    load_all_plugins();
    return yolo_model_yaml_task(model, buf, size);
}

/* Keys given on the command line that the mode does not read are said
 * (Ultralytics ignores them without a word): a training key in val, a
 * predict or export key in train, val's save_txt in train, ... Only the
 * command line's: a cfg= file (an args.yaml) repeats every key. */
static void warn_other_mode_keys(const yolo_config *cfg, const char *mode) {
    static const struct {
        const char *mode; /* the one mode that reads the keys, or (not_in) the one that does not */
        bool not_in;
        const char *what;
        const char *const *keys;
    } groups[] = {{"train", false, "a training key", yolo_core_train_only_keys},
                  {"predict", false, "a predict key", yolo_core_predict_only_keys},
                  {"export", false, "an export key", yolo_core_export_only_keys},
                  {"train", true, "a val and predict output key", yolo_core_not_train_keys}};
    for (size_t g = 0; mode && g < sizeof groups / sizeof *groups; g++) {
        if ((strcmp(mode, groups[g].mode) == 0) != groups[g].not_in) continue;
        const char *given[64];
        int n = 0;
        for (int i = 0; groups[g].keys[i] && n < 64; i++)
            if (yolo_config_layer_of(cfg, groups[g].keys[i]) == YOLO_CONFIG_LAYER_CLI) given[n++] = groups[g].keys[i];
        char why[128];
        snprintf(why, sizeof why, "%s, and the mode is %s", groups[g].what, mode);
        if (n > 0) yolo_settings_warn_no_effect(cfg, given, n, why, stderr);
    }
}

yolo_status yolo_cli_build_config(const yolo_cli_args *args, yolo_config **cfg_out, const yolo_task **task_out,
                                  int *exit_code) {
    *cfg_out = NULL;
    *task_out = NULL;
    *exit_code = YOLO_EXIT_USAGE; /* every failure but a plugin that exists and fails to load */
    yolo_config *cfg;
    yolo_status st = yolo_config_new(&cfg);
    if (st != YOLO_OK) {
        *exit_code = YOLO_EXIT_FAILURE;
        return st;
    }
    char tasks[2048];
    yolo_plugin_list_task_names(tasks, sizeof tasks);
    const char *const given_in = args->source ? args->source : "command line"; /* the pairs' origin, for messages */

    /* bare words: core bool keys, the task, or (later) plugin bool keys */
    const char *task = args->task, *task_from = args->task_from;
    for (int i = 0; i < args->n_words; i++) {
        const char *word = args->words[i];
        const yolo_config_key *key = yolo_config_find_key(cfg, word);
        if (key != NULL && !is_bool_key(key)) {
            st = yolo_error(YOLO_ERR_CONFIG, "'%s' needs a value (e.g. %s=%s)", word, word,
                            key->default_value ? key->default_value : "VALUE");
            goto fail;
        }
        if (key != NULL) continue; /* set below with the pairs */
        if (task == NULL) {
            if (!yolo_cli_in_list(tasks, word)) {
                st = unknown_word(cfg, word, tasks);
                goto fail;
            }
            task = word;
            task_from = "argument";
            continue;
        }
        if (yolo_cli_in_list(tasks, word)) {
            st = yolo_error(YOLO_ERR_CONFIG, "two tasks given: '%s' (%s) and '%s'", task, task_from, word);
            goto fail;
        }
    }

    /* cfg=FILE may name the task: read its core keys first */
    const char *cfg_file = last_value(args, "cfg");
    if (cfg_file != NULL && (st = yolo_config_merge_yaml_file(cfg, YOLO_CONFIG_LAYER_CFG, cfg_file, YOLO_CONFIG_KNOWN_ONLY)))
        goto fail;
    char task_buf[64];
    if (task == NULL && yolo_config_layer_of(cfg, "task") == YOLO_CONFIG_LAYER_DEFAULT &&
        (task = model_task(args, cfg, task_buf, sizeof task_buf)) != NULL)
        task_from = "model";
    if (task == NULL && (st = yolo_config_get_string(cfg, "task", &task)) != YOLO_OK) goto fail;

    /* the task plugin: its keys and defaults */
    const yolo_task *plugin;
    char task_name[128];
    snprintf(task_name, sizeof task_name, "%s", task);
    st = yolo_plugin_load_task(task_name, &plugin);
    if (st != YOLO_OK) {
        const char *model = last_value(args, "model");
        if (task_from != NULL && strcmp(task_from, "model") == 0)
            st = yolo_error_context(st, "the task of model=%s", model ? model : "(in cfg=)");
        *exit_code = yolo_cli_in_list(tasks, task_name) ? YOLO_EXIT_FAILURE : YOLO_EXIT_USAGE;
        yolo_config_free(cfg);
        return st;
    }
    const char *file = yolo_plugin_task_file(plugin);
    char source[YOLO_PLUGIN_PATH_MAX + 64];
    snprintf(source, sizeof source, "task plugin %s", file ? file : task_name);
    if ((st = yolo_config_add_keys(cfg, plugin->config_keys, plugin->n_config_keys, source)) != YOLO_OK) goto fail;
    if ((st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_TASK, "task", plugin->name, source)) != YOLO_OK) goto fail;
    if (plugin->default_model != NULL &&
        (st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_TASK, "model", plugin->default_model, source)) != YOLO_OK)
        goto fail;
    if (plugin->default_data != NULL &&
        (st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_TASK, "data", plugin->default_data, source)) != YOLO_OK)
        goto fail;

    /* cfg=FILE again, now with the plugin's keys, then the command line */
    if (cfg_file != NULL &&
        (st = yolo_config_merge_yaml_file(cfg, YOLO_CONFIG_LAYER_CFG, cfg_file, YOLO_CONFIG_ARGS_YAML)) != YOLO_OK)
        goto fail;
    for (int i = 0; i < args->n_pairs; i++)
        if ((st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, args->keys[i], args->values[i], given_in)) != YOLO_OK)
            goto fail;
    /* bare words: bool keys (the core's and now the plugin's) mean key=true */
    for (int i = 0; i < args->n_words; i++) {
        const char *word = args->words[i];
        if (task_from != NULL && strcmp(task_from, "argument") == 0 && word == task) continue;
        const yolo_config_key *key = yolo_config_find_key(cfg, word);
        if (key == NULL) {
            st = unknown_word(cfg, word, tasks);
            goto fail;
        }
        if (!is_bool_key(key)) {
            st = yolo_error(YOLO_ERR_CONFIG, "'%s' needs a value (e.g. %s=%s)", word, word,
                            key->default_value ? key->default_value : "VALUE");
            goto fail;
        }
        if ((st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, word, "true", given_in)) != YOLO_OK) goto fail;
    }
    if (task_from != NULL && strcmp(task_from, "task=") != 0 &&
        (st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "task", plugin->name, given_in)) != YOLO_OK)
        goto fail;
    if (args->mode != NULL && (st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "mode", args->mode, given_in)))
        goto fail;
    int n_read = 0;
    const char *const *read = yolo_plugin_task_keys_read(plugin, &n_read);
    if (yolo_dist_env_detect().rank == 0) { /* once per run, not once per rank */
        yolo_settings_warn_unread_task_keys(cfg, plugin->name, read, n_read, stderr);
        warn_other_mode_keys(cfg, args->mode);
    }
    *cfg_out = cfg;
    *task_out = plugin;
    *exit_code = YOLO_EXIT_OK;
    return YOLO_OK;
fail:
    yolo_config_free(cfg);
    return st;
}
