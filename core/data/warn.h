/* warn.h — where the data pipeline's warnings go (one per bad file). */
#ifndef YOLO_DATA_WARN_H
#define YOLO_DATA_WARN_H

typedef void (*yolo_warning_fn)(void *user, const char *message);

/* NULL restores the default: "warning: <message>" on stderr. */
void yolo_data_set_warning_handler(yolo_warning_fn fn, void *user);
void yolo_data_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
