/* The metadata Ultralytics writes into exported models (export_meta.h):
 * values as Python's str() gives them, so Ultralytics' AutoBackend and
 * anything reading its exports parse them (names as a dict literal). */
#include "interop/export_meta.h"
#include "interop/strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Python's repr() of a str: single quotes unless the text has a ' and no ". */
static void py_repr(strbuf *b, const char *s) {
    char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
    strbuf_printf(b, "%c", q);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == q || *p == '\\') strbuf_printf(b, "\\%c", *p);
        else if (*p == '\n') strbuf_printf(b, "\\n");
        else if (*p == '\t') strbuf_printf(b, "\\t");
        else if (*p == '\r') strbuf_printf(b, "\\r");
        else if (*p < 0x20 || *p == 0x7f) strbuf_printf(b, "\\x%02x", *p);
        else strbuf_printf(b, "%c", *p);
    }
    strbuf_printf(b, "%c", q);
}

char *yolo_export_names_repr(const char *const *names, int nc) {
    strbuf b = {0};
    strbuf_printf(&b, "{");
    for (int i = 0; i < nc; i++) {
        strbuf_printf(&b, "%s%d: ", i ? ", " : "", i);
        char fallback[32];
        snprintf(fallback, sizeof fallback, "class%d", i);
        py_repr(&b, names && names[i] ? names[i] : fallback);
    }
    strbuf_printf(&b, "}");
    if (b.oom) {
        free(b.text);
        return NULL;
    }
    return b.text;
}

/* "yolov8n-seg.yaml" -> "YOLOv8n-seg", as Ultralytics' pretty_name. */
static void pretty_name(const char *model_name, char *out, size_t size) {
    const char *base = strrchr(model_name, '/');
    base = base ? base + 1 : model_name;
    char stem[256];
    snprintf(stem, sizeof stem, "%s", base);
    char *dot = strrchr(stem, '.');
    if (dot) *dot = '\0';
    size_t n = 0;
    for (const char *p = stem; *p && n + 5 < size;) {
        if (!strncmp(p, "yolo", 4)) {
            memcpy(out + n, "YOLO", 4);
            n += 4;
            p += 4;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
}

yolo_status yolo_export_meta_build(const yolo_export_meta_input *in, yolo_export_meta *out) {
    memset(out, 0, sizeof *out);
    char pretty[256];
    pretty_name(in->model_name, pretty, sizeof pretty);
    snprintf(out->description, sizeof out->description, "Ultralytics %s model %s%s", pretty,
             in->data && *in->data ? "trained on " : "(untrained)", in->data && *in->data ? in->data : "");
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out->date, sizeof out->date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out->version, sizeof out->version, "%s", in->version ? in->version : "");
    snprintf(out->stride, sizeof out->stride, "%d", in->stride);
    snprintf(out->task, sizeof out->task, "%s", in->task);
    snprintf(out->batch, sizeof out->batch, "%d", in->batch);
    snprintf(out->imgsz, sizeof out->imgsz, "[%d, %d]", in->height, in->width);
    snprintf(out->channels, sizeof out->channels, "%d", in->channels);
    snprintf(out->args, sizeof out->args, "{'batch': %d, 'half': %s, 'dynamic': %s, 'simplify': %s, 'opset': %d, "
             "'nms': False}", in->batch, in->half ? "True" : "False", in->dynamic ? "True" : "False",
             in->simplify ? "True" : "False", in->opset);
    out->names = yolo_export_names_repr(in->names, in->nc);
    if (!out->names) return yolo_error(YOLO_ERR_NOMEM, "export: out of memory");
    const struct { const char *key, *value; } pairs[] = {
        {"description", out->description}, {"author", "yolo"}, {"date", out->date}, {"version", out->version},
        {"license", "see the yolo project"}, {"docs", "README.md of the yolo project"}, {"stride", out->stride},
        {"task", out->task}, {"batch", out->batch}, {"imgsz", out->imgsz}, {"names", out->names},
        {"args", out->args}, {"channels", out->channels}, {"end2end", in->end2end ? "True" : NULL}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0] && i < YOLO_EXPORT_META_MAX; i++) {
        if (!pairs[i].value) continue;
        out->kv[out->n].key = pairs[i].key;
        out->kv[out->n].value = pairs[i].value;
        out->n++;
    }
    return YOLO_OK;
}

void yolo_export_meta_free(yolo_export_meta *meta) {
    free(meta->names);
    meta->names = NULL;
}
