/* Per-thread error messages (see yolo/error.h). */
#include "yolo/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define YOLO_ERROR_MAX 2048

static _Thread_local char error_message[YOLO_ERROR_MAX];

const char *yolo_last_error(void) { return error_message; }

void yolo_error_clear(void) { error_message[0] = '\0'; }

const char *yolo_status_name(yolo_status status) {
    switch (status) {
    case YOLO_OK: return "ok";
    case YOLO_ERR_ARG: return "invalid argument";
    case YOLO_ERR_SHAPE: return "shape error";
    case YOLO_ERR_NOMEM: return "out of memory";
    case YOLO_ERR_IO: return "I/O error";
    case YOLO_ERR_FORMAT: return "format error";
    case YOLO_ERR_CONFIG: return "configuration error";
    case YOLO_ERR_PLUGIN: return "plugin error";
    case YOLO_ERR_BACKEND: return "backend error";
    case YOLO_ERR_UNSUPPORTED: return "unsupported";
    case YOLO_ERR_INTERRUPTED: return "interrupted";
    case YOLO_ERR_NUMERIC: return "numeric error";
    case YOLO_ERR_DIST: return "distributed error";
    }
    return "unknown error";
}

yolo_status yolo_error(yolo_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    return status;
}

yolo_status yolo_error_context(yolo_status status, const char *fmt, ...) {
    char prefix[YOLO_ERROR_MAX];
    char old[YOLO_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, error_message, sizeof old);
    /* prefix ": " old, truncated to the buffer; a message that already
     * starts with that context keeps it once */
    size_t used = strlen(prefix);
    if (strncmp(old, prefix, used) == 0 && old[used] == ':') return status;
    memcpy(error_message, prefix, used + 1);
    if (used + 2 < sizeof error_message) {
        memcpy(error_message + used, ": ", 3);
        used += 2;
        size_t rest = strlen(old);
        if (rest > sizeof error_message - 1 - used) rest = sizeof error_message - 1 - used;
        memcpy(error_message + used, old, rest);
        error_message[used + rest] = '\0';
    }
    return status;
}
