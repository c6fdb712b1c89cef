/* The command line: `yolo [--task T] [T] MODE [key=value | bare-bool-key]...`.
 *
 * core/cli/main.c only calls yolo_cli_main; everything else is library code
 * that returns exit codes: 0 success, 2 usage or configuration error,
 * 1 runtime failure. */
#ifndef YOLO_CLI_H
#define YOLO_CLI_H

#include "yolo/config.h"
#include "yolo/plugin.h"

#include <stdio.h>

#define YOLO_EXIT_OK 0
#define YOLO_EXIT_FAILURE 1
#define YOLO_EXIT_USAGE 2

/* What a mode function gets. */
typedef struct yolo_mode_context {
    const char *mode;     /* "train", "val", "predict", "info" */
    /* The merged configuration: default.yaml < task plugin (its keys, its
     * default model and data) < cfg=FILE < command line, validated. The
     * mode merges the later layers itself as it resolves them:
     *   yolo_config_merge_yaml(cfg, YOLO_CONFIG_LAYER_MODEL, text, size, "yolov8n.yaml", YOLO_CONFIG_KNOWN_ONLY)
     *   yolo_config_merge_yaml_file(cfg, YOLO_CONFIG_LAYER_DATA, path, YOLO_CONFIG_KNOWN_ONLY)
     *   yolo_config_merge_yaml(cfg, YOLO_CONFIG_LAYER_CHECKPOINT, args, n, "last.ckpt", resume ? YOLO_CONFIG_RESUME : 0)
     * and the layer order holds whatever the call order. */
    yolo_config *config;
    const yolo_task *task; /* the task plugin (config's `task`) */
    int argc;              /* the original command line (a DDP re-launch) */
    char **argv;
    /* the host API's training events (yolo/yolo.h), NULL from the command line */
    const struct yolo_callbacks *callbacks;
    /* the host API: where a mode names what it wrote (yolo_last_output):
     * train and val their run directory, export its file; NULL from the
     * command line */
    char *wrote;
    size_t wrote_size;
} yolo_mode_context;

/* A mode's function (cli/modes.h). Errors: YOLO_ERR_CONFIG exits 2, any
 * other failure exits 1. */
typedef yolo_status (*yolo_mode_fn)(const yolo_mode_context *ctx);

/* ---- parsing (core/cli/cli_args.c) ---- */
#define YOLO_CLI_MAX_ARGS 256

typedef struct yolo_cli_args {
    const char *task;       /* --task T, task=T or a bare task word; NULL if none */
    const char *task_from;  /* "--task", "task=", "word": how it was given */
    const char *mode;       /* NULL if none */
    const char *help_topic; /* `yolo help X`: X */
    int help;               /* help asked for */
    int version;            /* `yolo version` / --version */
    int n_pairs;
    const char *keys[YOLO_CLI_MAX_ARGS]; /* key=value pairs in order (pointers into storage) */
    const char *values[YOLO_CLI_MAX_ARGS];
    int n_words;
    const char *words[YOLO_CLI_MAX_ARGS]; /* bare words not yet classified (bool keys, the task) */
    const char *source; /* what messages call the pairs' origin: NULL "command line" (the host API: "keys") */
    char storage[16384];
} yolo_cli_args;

/* Splits argv into task, mode, pairs and bare words. Usage errors are
 * YOLO_ERR_CONFIG with a message naming the argument. */
yolo_status yolo_cli_parse(int argc, char **argv, yolo_cli_args *out);
/* Whether `word` names a mode, and the modes' table. */
int yolo_cli_is_mode(const char *word);
typedef struct yolo_cli_mode_info {
    const char *name;
    const char *summary;
    unsigned key_flag; /* YOLO_CONFIG_TRAIN, ... or 0 */
} yolo_cli_mode_info;
extern const yolo_cli_mode_info yolo_cli_modes[];
extern const int yolo_cli_mode_count;
/* "train, val, predict, export, info, checks": the table's names, for messages. */
const char *yolo_cli_mode_names(void);

/* ---- building the configuration (core/cli/cli_config.c) ---- */
/* Whether `name` is an entry of the comma-separated `list` ("detect, segment"). */
int yolo_cli_in_list(const char *list, const char *name);
/* The task plugin and merged configuration for a run: resolves the task
 * (command line, cfg=, default.yaml), loads its plugin, then merges the
 * plugin's keys and defaults, cfg= and the command line. On failure *exit
 * is 2 (usage/config) or 1 (runtime) and yolo_last_error() says why. */
yolo_status yolo_cli_build_config(const yolo_cli_args *args, yolo_config **cfg, const yolo_task **task, int *exit_code);

/* ---- modes ---- */
int yolo_cli_main(int argc, char **argv);                      /* core/cli/cli_main.c */
int yolo_cli_help(const yolo_cli_args *args, FILE *out);        /* core/cli/cli_help.c */
void yolo_cli_usage(FILE *out);
int yolo_cli_checks(FILE *out);                                 /* core/cli/cli_checks.c */
/* settings, cfg, copy-cfg: Ultralytics' special commands (core/cli/cli_settings.c) */
int yolo_cli_is_command(const char *word);
int yolo_cli_command(const yolo_cli_args *args, FILE *out);
/* The mode's function, NULL for `checks` and unknown names (core/cli/modes.c). */
yolo_mode_fn yolo_cli_mode_function(const char *mode);
/* Exit code for a failure status: 2 for configuration errors, else 1. */
int yolo_cli_exit_code(yolo_status status);

#endif
