/* Text files embedded into libyolo at build time (cmake/embed.cmake):
 * the yamls of core/cfg and core/nn/models, looked up by base name. */
#ifndef YOLO_EMBEDDED_H
#define YOLO_EMBEDDED_H

#include <stddef.h>

/* The table cmake generates, terminated by an entry whose name is NULL.
 * Each data block is NUL-terminated (size does not count the NUL). */
struct yolo_embedded_file {
    const char *name;
    const char *data;
    size_t size;
};
extern const struct yolo_embedded_file yolo_embedded_files[];

/* The embedded file `name` (e.g. "default.yaml") or NULL if there is none;
 * *size (if size is not NULL) gets its length in bytes. */
const char *yolo_embedded_file(const char *name, size_t *size);

#endif
