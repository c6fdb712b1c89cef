/* yolo/config.h — typed configuration keys and the merged run configuration.
 *
 * Every key has a type, optional range or choices, a default and a help
 * line. The core's keys and defaults are in the embedded default.yaml; a
 * task plugin adds its own keys through its yolo_task table (yolo/plugin.h),
 * and they then merge, validate and show in `yolo help` like the core's.
 *
 * A configuration is built in layers; a value set at a layer replaces the
 * current one only if it comes from the same or a later layer, so the
 * layers may be merged in any order:
 *
 *     default.yaml < task plugin < cfg=FILE < model yaml < data yaml
 *                  < checkpoint args < command line
 *
 * An unknown key, an ill-typed or out-of-range value is YOLO_ERR_CONFIG with
 * a message naming the source (file:line or "command line"), the key and
 * the value, and suggesting the nearest known key or choice. A failed set or
 * merge changes nothing.
 *
 * Lifetimes: the strings and lists a getter returns stay valid until that
 * key is set again (by yolo_config_set or a merge that sets it); the key
 * pointers of yolo_config_key_at/find_key until yolo_config_add_keys. */
#ifndef YOLO_CONFIG_H
#define YOLO_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/export.h"
#include "yolo/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum yolo_config_type {
    YOLO_CONFIG_BOOL = 1,       /* true / false (any case) */
    YOLO_CONFIG_INT,            /* a 64-bit integer; 1.5 is a type error */
    YOLO_CONFIG_FLOAT,          /* a finite number; integers are accepted */
    YOLO_CONFIG_STRING,         /* any scalar, kept as text */
    YOLO_CONFIG_BOOL_OR_STRING, /* true / false, or any other text (resume=path, cache=ram) */
    YOLO_CONFIG_INT_LIST,       /* an integer or a list of them: 3, [0, 2], 0,2 */
    YOLO_CONFIG_NUMBER,         /* an integer, kept one (16), or a finite number with a fraction (0.7) */
    YOLO_CONFIG_BOOL_OR_NUMBER, /* true / false, or a finite number (multi_scale: 8.3's bool, 8.4's fraction) */
} yolo_config_type;

/* yolo_config_key.flags */
enum {
    YOLO_CONFIG_NULLABLE = 1u << 0,      /* null (None, ~, empty) is allowed */
    YOLO_CONFIG_MIN = 1u << 1,           /* numbers (and list items) >= min */
    YOLO_CONFIG_MAX = 1u << 2,           /* numbers (and list items) <= max */
    YOLO_CONFIG_MIN_EXCLUSIVE = 1u << 3, /* with YOLO_CONFIG_MIN: > min */
    YOLO_CONFIG_RESUMABLE = 1u << 4,     /* the command line may change it on resume */
    YOLO_CONFIG_MAX_EXCLUSIVE = 1u << 5, /* with YOLO_CONFIG_MAX: < max */
    YOLO_CONFIG_TRAIN = 1u << 8,         /* modes the key applies to (`yolo MODE help`) */
    YOLO_CONFIG_VAL = 1u << 9,
    YOLO_CONFIG_PREDICT = 1u << 10,
};
#define YOLO_CONFIG_ALL_MODES (YOLO_CONFIG_TRAIN | YOLO_CONFIG_VAL | YOLO_CONFIG_PREDICT)

/* A key definition. Plugins list theirs in yolo_task.config_keys. */
typedef struct yolo_config_key {
    const char *name;          /* [a-z_][a-z0-9_]* */
    yolo_config_type type;
    unsigned flags;            /* YOLO_CONFIG_* above */
    double min, max;           /* used with YOLO_CONFIG_MIN / YOLO_CONFIG_MAX */
    const char *choices;       /* NULL, or "a|b|c": the text must be one of them (any case) */
    const char *default_value; /* as written on the command line: "0.5", "true", "[0,2]"; NULL = null */
    const char *help;          /* one line for `yolo help` */
} yolo_config_key;

typedef enum yolo_config_layer {
    YOLO_CONFIG_LAYER_DEFAULT = 0, /* default.yaml */
    YOLO_CONFIG_LAYER_TASK,        /* the task plugin: its keys, default model and data */
    YOLO_CONFIG_LAYER_CFG,         /* cfg=FILE.yaml */
    YOLO_CONFIG_LAYER_MODEL,       /* the model yaml */
    YOLO_CONFIG_LAYER_DATA,        /* the data yaml */
    YOLO_CONFIG_LAYER_CHECKPOINT,  /* a checkpoint's train args */
    YOLO_CONFIG_LAYER_CLI,         /* the command line */
} yolo_config_layer;

/* The kind of a value held (a BOOL_OR_STRING key holds a bool or a string). */
typedef enum yolo_config_kind {
    YOLO_VALUE_NULL = 0,
    YOLO_VALUE_BOOL,
    YOLO_VALUE_INT,
    YOLO_VALUE_FLOAT,
    YOLO_VALUE_STRING,
    YOLO_VALUE_INT_LIST,
} yolo_config_kind;

typedef struct yolo_config_value {
    yolo_config_kind kind;
    bool b;              /* BOOL; INT_LIST: written as one bare integer (freeze=3, not [3]) */
    int64_t i;
    double f;
    const char *s;       /* owned by the config */
    const int64_t *list; /* owned by the config */
    int n;               /* list length */
} yolo_config_value;

typedef struct yolo_config yolo_config;

/* A configuration holding the core keys at their default.yaml values. */
YOLO_API yolo_status yolo_config_new(yolo_config **out);
YOLO_API void yolo_config_free(yolo_config *cfg);
/* An independent copy (e.g. a validator's config derived from a trainer's). */
YOLO_API yolo_status yolo_config_copy(const yolo_config *cfg, yolo_config **out);

/* Adds keys at their defaults (layer TASK). A name already defined, an
 * invalid definition or a default that does not validate is an error
 * naming `owner` (e.g. the plugin's file) and the key. */
YOLO_API yolo_status yolo_config_add_keys(yolo_config *cfg, const yolo_config_key *keys, int n, const char *owner);

/* Sets one key from text as written on the command line ("3", "true",
 * "[0,2]", "None"). `source` names where it came from in messages. */
YOLO_API yolo_status yolo_config_set(yolo_config *cfg, yolo_config_layer layer, const char *key, const char *value,
                            const char *source);

/* Flags of the yaml merges. */
enum {
    /* Skip keys that are not configuration keys: model and data yamls hold
     * their own (nc, scales, backbone, path, names, ...). Known keys are
     * still validated. */
    YOLO_CONFIG_KNOWN_ONLY = 1u << 0,
    /* Checkpoint args on resume: keys without YOLO_CONFIG_RESUMABLE take
     * the checkpoint's value even over the command line, and a command-line
     * value that differs from it is an error naming both. */
    YOLO_CONFIG_RESUME = 1u << 1,
    /* A data yaml: its dataset keys (path, train, val, test, names, nc,
     * download, kpt_shape, flip_idx, channels) describe the data, not the run, and
     * are skipped even where a configuration key has the same name (`val`). */
    YOLO_CONFIG_DATA_YAML = 1u << 2,
    /* A cfg= yaml, which may be an args.yaml that Ultralytics wrote: its
     * save_dir (a record of that run) is skipped, and so are its pose
     * task's loss gains pose and kobj at their defaults where no loaded
     * task defines them (another value is an error). Every other unknown
     * key is still an error. */
    YOLO_CONFIG_ARGS_YAML = 1u << 3,
};

/* Merges a yaml mapping of key: value pairs (`source` names it in messages,
 * e.g. the file name; lines are added). */
YOLO_API yolo_status yolo_config_merge_yaml(yolo_config *cfg, yolo_config_layer layer, const char *text, size_t size,
                                   const char *source, unsigned flags);
YOLO_API yolo_status yolo_config_merge_yaml_file(yolo_config *cfg, yolo_config_layer layer, const char *path, unsigned flags);

/* ---- reading values ----
 * Each getter fails with YOLO_ERR_CONFIG (naming the key) if the key is
 * unknown or its value is not of the asked kind (null included).
 * yolo_config_get_float accepts an int; yolo_config_get_string accepts the
 * text of a BOOL_OR_STRING key and gives NULL for null. */
YOLO_API yolo_status yolo_config_get(const yolo_config *cfg, const char *key, yolo_config_value *out);
YOLO_API yolo_status yolo_config_get_bool(const yolo_config *cfg, const char *key, bool *out);
/* get_int also reads an integer-list key given as one bare integer (imgsz=640). */
YOLO_API yolo_status yolo_config_get_int(const yolo_config *cfg, const char *key, int64_t *out);
YOLO_API yolo_status yolo_config_get_float(const yolo_config *cfg, const char *key, double *out);
YOLO_API yolo_status yolo_config_get_string(const yolo_config *cfg, const char *key, const char **out);
YOLO_API yolo_status yolo_config_get_int_list(const yolo_config *cfg, const char *key, const int64_t **items, int *n);
/* True if the key holds null (false for an unknown key). */
YOLO_API bool yolo_config_is_null(const yolo_config *cfg, const char *key);
/* Where the value came from: "default.yaml:21", "command line", ... (NULL if unknown key). */
YOLO_API const char *yolo_config_source(const yolo_config *cfg, const char *key);
/* The layer the value came from (-1 if unknown key). */
YOLO_API int yolo_config_layer_of(const yolo_config *cfg, const char *key);
/* The value as args.yaml writes it ("0.01", "true", "null", "[0, 2]"). */
YOLO_API yolo_status yolo_config_format(const yolo_config *cfg, const char *key, char *buf, size_t size);

/* The keys, in definition order (core keys first). */
YOLO_API int yolo_config_key_count(const yolo_config *cfg);
YOLO_API const yolo_config_key *yolo_config_key_at(const yolo_config *cfg, int index);
YOLO_API const yolo_config_key *yolo_config_find_key(const yolo_config *cfg, const char *name);

/* ---- output ---- */
/* The whole configuration as a yaml text (malloc'd, NUL-terminated; free()),
 * as args.yaml: the core keys that Ultralytics 8.3 lacks (threads, world,
 * dist_timeout, dist_bucket_mb, sync_bn, label_smoothing, crop_fraction)
 * only where they differ from the default, so that Ultralytics takes it as
 * cfg=; every key left out reads back as its default. */
YOLO_API yolo_status yolo_config_to_yaml(const yolo_config *cfg, char **text, size_t *size);
/* Creates the run directory <project>/<name> (project: runs/<task> if null;
 * name: the mode if null), trying name2, name3, ... while it exists unless
 * exist_ok, and records the name used in the config. dir gets its path. */
YOLO_API yolo_status yolo_config_make_run_dir(yolo_config *cfg, char *dir, size_t size);
/* Writes the configuration to <dir>/args.yaml (atomically). */
YOLO_API yolo_status yolo_config_save_args(const yolo_config *cfg, const char *dir);

#ifdef __cplusplus
}
#endif
#endif
