/* json.h — a small strict JSON (RFC 8259) parser for safetensors headers
 * (and Ultralytics' settings.json, core/data/datasets_dir.c).
 *
 * Strict means: exactly one value, then only whitespace; no trailing
 * commas, comments, NaN or leading zeros; strings must be valid UTF-8
 * without raw control characters; \u escapes must pair surrogates and may
 * not encode NUL (names become C strings); object keys must be unique;
 * nesting is limited to YOLO_JSON_MAX_DEPTH. Errors name `what` (e.g.
 * "model.safetensors of last.ckpt") and the byte offset at fault. */
#ifndef YOLO_CKPT_JSON_H
#define YOLO_CKPT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"

#define YOLO_JSON_MAX_DEPTH 64

typedef enum yolo_json_kind {
    YOLO_JSON_NULL = 0,
    YOLO_JSON_BOOL,
    YOLO_JSON_NUMBER,
    YOLO_JSON_STRING,
    YOLO_JSON_ARRAY,
    YOLO_JSON_OBJECT,
} yolo_json_kind;

typedef struct yolo_json {
    yolo_json_kind kind;
    size_t offset;             /* byte offset of the value in the text */
    bool b;                    /* BOOL */
    double num;                /* NUMBER */
    bool is_uint;              /* NUMBER: a non-negative integer that fits u64 ... */
    uint64_t u;                /* ... and its exact value */
    char *s;                   /* STRING: NUL-terminated UTF-8 */
    size_t n;                  /* ARRAY / OBJECT: number of items */
    struct yolo_json *items;   /* ARRAY / OBJECT values */
    char **keys;               /* OBJECT keys, parallel to items (text order) */
} yolo_json;

/* Parses text[0..len) (not NUL-terminated). *out is freed with yolo_json_free. */
yolo_status yolo_json_parse(const char *text, size_t len, const char *what, yolo_json **out);
void yolo_json_free(yolo_json *v);

/* The value of `key` in an object, or NULL. */
const yolo_json *yolo_json_get(const yolo_json *obj, const char *key);
const char *yolo_json_kind_name(yolo_json_kind kind);
/* Whether s[0..n) is valid UTF-8 (no overlongs, surrogates or > U+10FFFF). */
bool yolo_json_valid_utf8(const char *s, size_t n);

#endif
