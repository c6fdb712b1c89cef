/* Writing JSON text: a string literal with its escapes. */
#ifndef YOLO_UTIL_JSON_WRITE_H
#define YOLO_UTIL_JSON_WRITE_H

#include <stdio.h>

/* "text" with quotes, backslashes and control characters escaped. */
void yolo_json_write_string(FILE *f, const char *text);

#endif
