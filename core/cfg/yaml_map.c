/* A top-level yaml mapping as a list of key/value items (cfg/yaml_map.h). */
#include "cfg/yaml_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static char *dup_range(const char *text, size_t len) {
    char *s = malloc(len + 1);
    if (s != NULL) {
        memcpy(s, text, len);
        s[len] = '\0';
    }
    return s;
}

static bool scalar_quoted(const yaml_node_t *node) {
    return node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE && node->data.scalar.style != YAML_ANY_SCALAR_STYLE;
}

/* A sequence of scalars as "[a, b]"; false if an item is not a scalar. */
static bool sequence_text(yaml_document_t *doc, yaml_node_t *node, char **out) {
    size_t cap = 2, len = 0;
    for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top; it++) {
        yaml_node_t *item = yaml_document_get_node(doc, *it);
        if (item == NULL || item->type != YAML_SCALAR_NODE) return false;
        cap += item->data.scalar.length + 2;
    }
    char *s = malloc(cap + 1);
    if (s == NULL) return false;
    s[len++] = '[';
    for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top; it++) {
        yaml_node_t *item = yaml_document_get_node(doc, *it);
        if (it != node->data.sequence.items.start) {
            s[len++] = ',';
            s[len++] = ' ';
        }
        memcpy(s + len, item->data.scalar.value, item->data.scalar.length);
        len += item->data.scalar.length;
    }
    s[len++] = ']';
    s[len] = '\0';
    *out = s;
    return true;
}

void yolo_yaml_map_free(yolo_yaml_item *items, int n) {
    if (items == NULL) return;
    for (int i = 0; i < n; i++) {
        free(items[i].key);
        free(items[i].value);
    }
    free(items);
}

yolo_status yolo_yaml_map_parse(const char *text, size_t size, const char *source, yolo_yaml_item **items_out,
                                int *n_out) {
    *items_out = NULL;
    *n_out = 0;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) return yolo_error(YOLO_ERR_NOMEM, "%s: cannot start the yaml parser", source);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, size);
    if (!yaml_parser_load(&parser, &doc)) {
        yolo_status st = yolo_error(YOLO_ERR_FORMAT, "%s:%zu:%zu: invalid yaml: %s%s%s", source,
                                    parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                                    parser.problem ? parser.problem : "parse error", parser.context ? " " : "",
                                    parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        return st;
    }
    yaml_parser_delete(&parser);

    yolo_status st = YOLO_OK;
    yolo_yaml_item *items = NULL;
    int n = 0;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root == NULL || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) goto done;
    if (root->type != YAML_MAPPING_NODE) {
        st = yolo_error(YOLO_ERR_FORMAT, "%s:%zu: expected a mapping of key: value pairs", source, root->start_mark.line + 1);
        goto done;
    }
    size_t count = (size_t)(root->data.mapping.pairs.top - root->data.mapping.pairs.start);
    items = calloc(count ? count : 1, sizeof *items);
    if (items == NULL) {
        st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", source);
        goto done;
    }
    for (yaml_node_pair_t *pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
        yaml_node_t *key = yaml_document_get_node(&doc, pair->key);
        yaml_node_t *value = yaml_document_get_node(&doc, pair->value);
        if (key == NULL || key->type != YAML_SCALAR_NODE) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s:%zu: a key must be a plain name", source,
                            key ? key->start_mark.line + 1 : 0);
            goto done;
        }
        yolo_yaml_item *item = &items[n];
        item->line = (int)key->start_mark.line + 1;
        item->key = dup_range((const char *)key->data.scalar.value, key->data.scalar.length);
        if (item->key == NULL) goto nomem;
        n++;
        if (value == NULL) {
            item->value = dup_range("", 0);
        } else if (value->type == YAML_SCALAR_NODE) {
            item->value = dup_range((const char *)value->data.scalar.value, value->data.scalar.length);
            item->quoted = scalar_quoted(value);
        } else if (value->type == YAML_SEQUENCE_NODE) {
            item->is_list = true;
            if (!sequence_text(&doc, value, &item->value)) {
                item->is_mapping = true; /* nested structure */
                item->value = dup_range("", 0);
            }
        } else {
            item->is_mapping = true;
            item->value = dup_range("", 0);
        }
        if (item->value == NULL) goto nomem;
    }
    goto done;
nomem:
    st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", source);
done:
    yaml_document_delete(&doc);
    if (st != YOLO_OK) {
        yolo_yaml_map_free(items, n);
        return st;
    }
    *items_out = items;
    *n_out = n;
    return YOLO_OK;
}

void yolo_yaml_line_comment(const char *text, size_t size, int line, char *buf, size_t buf_size) {
    buf[0] = '\0';
    const char *p = text, *end = text + size;
    for (int l = 1; l < line && p < end; p++)
        if (*p == '\n') l++;
    char quote = 0;
    for (const char *q = p; q < end && *q != '\n'; q++) {
        if (quote) {
            if (*q == quote) quote = 0;
        } else if (*q == '\'' || *q == '"') {
            quote = *q;
        } else if (*q == '#' && (q == p || q[-1] == ' ' || q[-1] == '\t')) {
            q++;
            while (q < end && (*q == ' ' || *q == '\t')) q++;
            const char *e = q;
            while (e < end && *e != '\n' && *e != '\r') e++;
            while (e > q && (e[-1] == ' ' || e[-1] == '\t')) e--;
            size_t len = (size_t)(e - q);
            if (len >= buf_size) len = buf_size - 1;
            memcpy(buf, q, len);
            buf[len] = '\0';
            return;
        }
    }
}
