/* A growable text buffer for the interop writers (yaml, metadata). */
#ifndef YOLO_INTEROP_STRBUF_H
#define YOLO_INTEROP_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strbuf {
    char *text; /* NUL-terminated once anything was written */
    size_t len, cap;
    bool oom;   /* an allocation failed: later writes are dropped */
} strbuf;

void strbuf_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
