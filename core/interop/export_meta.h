/* export_meta.h — the key/value metadata of an exported model, laid out as
 * Ultralytics' exporter writes it (description, author, date, version,
 * license, docs, stride, task, batch, imgsz, names, args, channels), every
 * value as Python's str() of it: names "{0: 'person', 1: 'bicycle'}",
 * imgsz "[640, 640]". */
#ifndef YOLO_INTEROP_EXPORT_META_H
#define YOLO_INTEROP_EXPORT_META_H

#include <stdbool.h>

#include "interop/onnx_export.h"

#define YOLO_EXPORT_META_MAX 16

typedef struct yolo_export_meta_input {
    const char *model_name;   /* "yolov8n.yaml": the description's pretty name */
    const char *data;         /* the data it was trained on, NULL: "(untrained)" */
    const char *version;
    const char *task;
    int stride, batch, height, width, channels, opset, nc;
    bool half, simplify, dynamic;
    bool end2end; /* YOLO26's NMS-free output: 'end2end': True, as Ultralytics writes it */
    const char *const *names; /* nc entries, or NULL: class0, class1, ... */
} yolo_export_meta_input;

typedef struct yolo_export_meta {
    yolo_onnx_kv kv[YOLO_EXPORT_META_MAX];
    int n;
    char description[320], date[32], version[32], stride[16], task[64], batch[16], imgsz[48], channels[16],
        args[256];
    char *names;
} yolo_export_meta;

yolo_status yolo_export_meta_build(const yolo_export_meta_input *in, yolo_export_meta *out);
void yolo_export_meta_free(yolo_export_meta *meta);

/* "{0: 'a', 1: 'b'}" (malloc'd; NULL when out of memory). */
char *yolo_export_names_repr(const char *const *names, int nc);

#endif
