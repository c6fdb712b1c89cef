/* A growable byte buffer for building text or binary records in memory.
 * It stays NUL-terminated, so text built in it is a C string, and an
 * allocation failure is recorded once (oom) instead of being checked after
 * every append. */
#ifndef YOLO_UTIL_GROW_BUF_H
#define YOLO_UTIL_GROW_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct yolo_grow_buf {
    char *p; /* malloc'd; the caller frees it (or takes it) */
    size_t n, cap;
    bool oom;
} yolo_grow_buf;

void yolo_grow_buf_put(yolo_grow_buf *b, const void *data, size_t n);

static inline void yolo_grow_buf_puts(yolo_grow_buf *b, const char *s) { yolo_grow_buf_put(b, s, strlen(s)); }

#endif
