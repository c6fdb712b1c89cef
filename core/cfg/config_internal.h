/* Configuration internals shared by the files of core/cfg. */
#ifndef YOLO_CONFIG_INTERNAL_H
#define YOLO_CONFIG_INTERNAL_H

#include "yolo/config.h"

#include <stdbool.h>
#include <stddef.h>

/* core/cfg/keys.c: the core keys (defaults and help come from default.yaml). */
extern const yolo_config_key yolo_core_keys[];
extern const int yolo_core_key_count;
/* The core keys that only one mode reads (NULL-terminated): training's
 * schedule, optimizer and augmentation; predict's source and pictures;
 * export's format options. */
extern const char *const yolo_core_train_only_keys[];
extern const char *const yolo_core_predict_only_keys[];
extern const char *const yolo_core_export_only_keys[];
/* Val's and predict's output keys that training never reads (its per-epoch
 * validation writes no labels/ and draws no masks), NULL-terminated. */
extern const char *const yolo_core_not_train_keys[];
/* The core keys that Ultralytics 8.3's default.yaml lacks (NULL-terminated). */
extern const char *const yolo_core_keys_beyond_ultralytics[];

/* core/cfg/keys.c: what a core key takes beyond its type, range and
 * choices, for `yolo help KEY`: a text's grammar, which `check` (when set)
 * enforces wherever a value is parsed (yolo_config_parse_value), or a rule
 * that needs more than the value, enforced by `where`. */
typedef struct yolo_config_rule {
    const char *key;
    const char *values;                  /* "cpu, vulkan, vulkan:N ..." */
    yolo_status (*check)(const char *s); /* a text value (not null); its error names the value */
    const char *where;                   /* NULL when check enforces it */
} yolo_config_rule;
/* The rule of a core key, NULL if it has none. */
const yolo_config_rule *yolo_config_find_rule(const char *key);

/* core/cfg/value.c: parses `text` (as written on a command line or as a
 * yaml scalar; `quoted`: a quoted yaml scalar, always text) into `out` for
 * `key`, checking type, range and choices. Errors name source, key and
 * value. `out` owns its memory (yolo_config_value_clear). */
yolo_status yolo_config_parse_value(const yolo_config_key *key, const char *text, bool quoted, const char *source,
                                    yolo_config_value *out);
void yolo_config_value_clear(yolo_config_value *v);
yolo_status yolo_config_value_copy(yolo_config_value *dst, const yolo_config_value *src);
bool yolo_config_value_equal(const yolo_config_value *a, const yolo_config_value *b);
/* The value as yaml text; returns the length it needs, like snprintf. */
int yolo_config_value_format(const yolo_config_value *v, char *buf, size_t size);
/* The shortest text that reads back as v ("300", "0.01", "1e-05"). */
void yolo_config_format_number(double v, char *buf, size_t size);
/* A key's range as messages and help write it: "in (0, 1]", ">= 1",
 * "< 1"; "" without one. */
void yolo_config_describe_range(const yolo_config_key *key, char *buf, size_t size);
/* "an integer", "a number", ... for messages. */
const char *yolo_config_type_phrase(yolo_config_type type);
/* Checks a key definition (a plugin's): name, type, flags, range. */
yolo_status yolo_config_check_definition(const yolo_config_key *key, const char *owner);

#endif
