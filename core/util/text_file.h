/* text_file.h — the one reader of the yaml and cfg texts a user names
 * (cfg=, model and data yamls, args.yaml), bounded: a real one is a few
 * KiB, so a file past YOLO_TEXT_MAX (/dev/zero, a FIFO that never ends, a
 * multi-GB file) is refused by name instead of read until memory runs out. */
#ifndef YOLO_UTIL_TEXT_FILE_H
#define YOLO_UTIL_TEXT_FILE_H

#include <stddef.h>

#include "yolo/error.h"

/* The most bytes a yaml or cfg text may have, whether read from a file or
 * rebuilt from a .pt's pickle (interop/pt_yaml.c). */
#define YOLO_TEXT_MAX ((size_t)16 << 20)
#define YOLO_TEXT_MAX_TEXT "16 MiB"

/* Reads `path` whole into a malloc'd, NUL-terminated *text of *len bytes.
 * `what` ("the model yaml") names the file's role in messages. A regular
 * file is refused by its size before reading; anything else (a device, a
 * FIFO) after YOLO_TEXT_MAX + 1 bytes. */
yolo_status yolo_read_text_file(const char *path, const char *what, char **text, size_t *len);

#endif
