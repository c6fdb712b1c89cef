/* meta_internal.h — the node layout of yolo_meta, shared by meta.c (tree,
 * emitter) and meta_parse.c (libyaml reader). Not for other users. */
#ifndef YOLO_CKPT_META_INTERNAL_H
#define YOLO_CKPT_META_INTERNAL_H

#include "ckpt/meta.h"

struct yolo_meta {
    yolo_meta_kind kind;
    bool b;
    int64_t i;
    double f;
    char *s;
    size_t n, cap;
    char **keys;       /* MAP only */
    yolo_meta **vals;  /* MAP and LIST */
};

/* A detached node of `kind` (strings copied from s[0..len)). NULL on OOM. */
yolo_meta *meta_node_new(yolo_meta_kind kind);
/* Appends (key may be NULL for lists; copied) without a duplicate check;
 * takes ownership of `node` (freed on failure). */
yolo_status meta_push(yolo_meta *container, const char *key, size_t key_len, yolo_meta *node);
void meta_node_free(yolo_meta *m);

#endif
