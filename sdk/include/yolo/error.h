/* yolo/error.h — status codes and the per-thread error message.
 *
 * Every fallible function returns a yolo_status (or NULL) and, on failure,
 * sets a message that names the file, line, key, value, op or shape at
 * fault. Library code never exits or aborts on bad input. */
#ifndef YOLO_ERROR_H
#define YOLO_ERROR_H

#include "yolo/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum yolo_status {
    YOLO_OK = 0,
    YOLO_ERR_ARG,         /* invalid argument (bad value, NULL, out of range) */
    YOLO_ERR_SHAPE,       /* tensor shapes or dtypes do not fit the op */
    YOLO_ERR_NOMEM,       /* host or device allocation failed */
    YOLO_ERR_IO,          /* a file could not be read or written */
    YOLO_ERR_FORMAT,      /* a file's content is malformed (yaml, image, checkpoint) */
    YOLO_ERR_CONFIG,      /* unknown key, wrong type, out-of-range value */
    YOLO_ERR_PLUGIN,      /* a plugin is missing, not a plugin, or of another ABI */
    YOLO_ERR_BACKEND,     /* the compute backend failed or is unavailable */
    YOLO_ERR_UNSUPPORTED, /* a feature that is not built (yet) */
    YOLO_ERR_INTERRUPTED, /* stopped by a signal */
    YOLO_ERR_NUMERIC,     /* NaN/Inf where a finite value is required */
    YOLO_ERR_DIST,        /* a distributed collective failed or timed out */
} yolo_status;

/* The message of the most recent failure on this thread ("" if none).
 * Owned by the library; valid until the next failing call on this thread. */
YOLO_API const char *yolo_last_error(void);

/* A short name for a status code ("shape error", ...). Static storage. */
YOLO_API const char *yolo_status_name(yolo_status status);

/* Sets this thread's message (printf-style) and returns `status`, so that
 * `return yolo_error(YOLO_ERR_ARG, "...", ...)` reads naturally. */
YOLO_API yolo_status yolo_error(yolo_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefixes the current message with more context ("loading x.ckpt: ...")
 * and returns `status` unchanged; a message that already starts with that
 * context and a colon is left as it is. */
YOLO_API yolo_status yolo_error_context(yolo_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Clears this thread's message. */
YOLO_API void yolo_error_clear(void);

#ifdef __cplusplus
}
#endif
#endif
