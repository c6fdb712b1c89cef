/* yolo/export.h — YOLO_API marks what libyolo exports.
 *
 * libyolo is built with hidden visibility: a function is part of its ABI
 * exactly when its declaration in these headers carries YOLO_API
 * (cmake/check_exports.cmake compares the library's dynamic symbols with
 * these declarations). */
#ifndef YOLO_EXPORT_H
#define YOLO_EXPORT_H

#define YOLO_API __attribute__((visibility("default")))

#endif
