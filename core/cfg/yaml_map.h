/* Reading a yaml mapping of key: value pairs with libyaml (the config
 * layers: default.yaml, cfg=, model, data and checkpoint yamls). */
#ifndef YOLO_YAML_MAP_H
#define YOLO_YAML_MAP_H

#include "yolo/error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct yolo_yaml_item {
    char *key;
    char *value;     /* a scalar's text; a sequence of scalars as "[a, b]"; "" for null */
    bool quoted;     /* a quoted scalar: always text */
    bool is_list;    /* the value was a sequence */
    bool is_mapping; /* the value was a mapping (or a nested sequence); value is "" */
    int line;        /* 1-based line of the key */
} yolo_yaml_item;

/* Parses `text` (size bytes) as a mapping at the top level; an empty
 * document gives no items. Errors name `source` and the line. */
yolo_status yolo_yaml_map_parse(const char *text, size_t size, const char *source, yolo_yaml_item **items, int *n);
void yolo_yaml_map_free(yolo_yaml_item *items, int n);

/* The comment on a 1-based line of `text` (after an unquoted '#'), trimmed,
 * into buf ("" if none). */
void yolo_yaml_line_comment(const char *text, size_t size, int line, char *buf, size_t buf_size);

#endif
