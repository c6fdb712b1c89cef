/* meta.h — a small tree of YAML values: checkpoint metadata (meta.yaml).
 *
 * Scalars are null, booleans, 64-bit integers, doubles and UTF-8 strings;
 * containers are maps (string keys, insertion order kept, unique) and
 * lists. The emitter writes block YAML that both libyaml and PyYAML read
 * back to the same values: strings are always double-quoted, floats always
 * carry a '.' (or are .inf/.nan) and round-trip exactly, integers are
 * plain. The parser (libyaml) types plain scalars by the YAML 1.2 core
 * schema (null, true/false, integers, floats incl. .inf/.nan); quoted
 * scalars are strings. It refuses aliases, non-scalar keys, duplicate keys,
 * several documents and nesting deeper than YOLO_META_MAX_DEPTH; errors
 * name `what` and the line.
 *
 *     yolo_meta *root = yolo_meta_new_map();
 *     yolo_meta_set_int(root, "epoch", 3);
 *     yolo_meta *args = yolo_meta_set_map(root, "train_args");
 *     yolo_meta_set_str(args, "model", "yolov8n.yaml");
 *     char *text; size_t len;
 *     yolo_meta_to_yaml(root, &text, &len);
 */
#ifndef YOLO_CKPT_META_H
#define YOLO_CKPT_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"

#define YOLO_META_MAX_DEPTH 64

typedef enum yolo_meta_kind {
    YOLO_META_NULL = 0,
    YOLO_META_BOOL,
    YOLO_META_INT,
    YOLO_META_FLOAT,
    YOLO_META_STR,
    YOLO_META_MAP,
    YOLO_META_LIST,
} yolo_meta_kind;

typedef struct yolo_meta yolo_meta;

/* ---- building ---- */
/* An empty map (the root); NULL if out of memory. Free the root only. */
yolo_meta *yolo_meta_new_map(void);
void yolo_meta_free(yolo_meta *root);

/* Set `key` in `map` (replacing a previous value in place, else appended).
 * Errors: map is not a map, key or string not valid UTF-8, no memory. */
yolo_status yolo_meta_set_null(yolo_meta *map, const char *key);
yolo_status yolo_meta_set_bool(yolo_meta *map, const char *key, bool v);
yolo_status yolo_meta_set_int(yolo_meta *map, const char *key, int64_t v);
yolo_status yolo_meta_set_float(yolo_meta *map, const char *key, double v);
yolo_status yolo_meta_set_str(yolo_meta *map, const char *key, const char *v);
/* A deep copy of `value` (e.g. a checkpoint's train_args). */
yolo_status yolo_meta_set_copy(yolo_meta *map, const char *key, const yolo_meta *value);
/* A new empty map / list at key, owned by `map`; NULL on failure (error set). */
yolo_meta *yolo_meta_set_map(yolo_meta *map, const char *key);
yolo_meta *yolo_meta_set_list(yolo_meta *map, const char *key);

yolo_status yolo_meta_append_null(yolo_meta *list);
yolo_status yolo_meta_append_bool(yolo_meta *list, bool v);
yolo_status yolo_meta_append_int(yolo_meta *list, int64_t v);
yolo_status yolo_meta_append_float(yolo_meta *list, double v);
yolo_status yolo_meta_append_str(yolo_meta *list, const char *v);
yolo_status yolo_meta_append_copy(yolo_meta *list, const yolo_meta *value);
yolo_meta *yolo_meta_append_map(yolo_meta *list);
yolo_meta *yolo_meta_append_list(yolo_meta *list);

/* Removes `key` from map (no-op if absent). */
void yolo_meta_remove(yolo_meta *map, const char *key);

/* ---- reading ---- */
yolo_meta_kind yolo_meta_kind_of(const yolo_meta *m);
const char *yolo_meta_kind_name(yolo_meta_kind kind); /* "an integer", ... */
size_t yolo_meta_size(const yolo_meta *m);                    /* map entries / list items; 0 for scalars */
const char *yolo_meta_key_at(const yolo_meta *map, size_t i); /* NULL past the end or for a list */
const yolo_meta *yolo_meta_at(const yolo_meta *m, size_t i);  /* i-th value of a map or list */
const yolo_meta *yolo_meta_get(const yolo_meta *map, const char *key); /* NULL if absent */
yolo_meta *yolo_meta_get_mut(yolo_meta *map, const char *key);

bool yolo_meta_bool(const yolo_meta *m);
int64_t yolo_meta_int(const yolo_meta *m);
double yolo_meta_float(const yolo_meta *m);  /* an INT converts */
const char *yolo_meta_str(const yolo_meta *m);

/* Typed lookups; a missing key or another kind is YOLO_ERR_FORMAT naming
 * `what` and the key ("meta.yaml of last.ckpt: key 'epoch' is a string,
 * expected an integer"). float accepts an integer. */
yolo_status yolo_meta_get_int(const yolo_meta *map, const char *key, const char *what, int64_t *out);
yolo_status yolo_meta_get_float(const yolo_meta *map, const char *key, const char *what, double *out);
yolo_status yolo_meta_get_bool(const yolo_meta *map, const char *key, const char *what, bool *out);
yolo_status yolo_meta_get_str(const yolo_meta *map, const char *key, const char *what, const char **out);
yolo_status yolo_meta_get_map(const yolo_meta *map, const char *key, const char *what, const yolo_meta **out);
yolo_status yolo_meta_get_list(const yolo_meta *map, const char *key, const char *what, const yolo_meta **out);

/* ---- text ---- */
/* Block YAML, NUL-terminated, malloc'd. */
yolo_status yolo_meta_to_yaml(const yolo_meta *root, char **text, size_t *len);
/* Parses text[0..len); the document's root must be a map. */
yolo_status yolo_meta_parse(const char *text, size_t len, const char *what, yolo_meta **out);
/* Whether two trees hold the same values (floats compared bitwise, NaN == NaN). */
bool yolo_meta_equal(const yolo_meta *a, const yolo_meta *b);

#endif
