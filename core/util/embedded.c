/* Lookup in the table of embedded files (see util/embedded.h). */
#include "util/embedded.h"

#include <string.h>

const char *yolo_embedded_file(const char *name, size_t *size) {
    if (name == NULL) return NULL;
    for (const struct yolo_embedded_file *f = yolo_embedded_files; f->name != NULL; f++) {
        if (strcmp(f->name, name) == 0) {
            if (size != NULL) *size = f->size;
            return f->data;
        }
    }
    return NULL;
}
