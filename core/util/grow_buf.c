#include "util/grow_buf.h"

#include <stdlib.h>

void yolo_grow_buf_put(yolo_grow_buf *b, const void *data, size_t n) {
    if (b->oom) return;
    if (n + 1 > b->cap - b->n || !b->p) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n + 1) {
            if (cap > ((size_t)-1) / 2) {
                b->oom = true;
                return;
            }
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = '\0';
}
