/* The ONNX graph writer's primitives (onnx_writer.h). */
#include "interop/onnx_writer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

yolo_status ox_fail(writer *w, yolo_status st, const char *fmt, ...) {
    if (w->st) return w->st;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return w->st = yolo_error(st, "ONNX export: %s", msg);
}

/* ---- attributes ---- */

static void attr_head(pb_buf *a, const char *name, int type) {
    pb_string_field(a, ATTR_NAME, name);
    pb_varint_field(a, ATTR_TYPE, (uint64_t)type);
}

void ox_attr_int(pb_buf *attrs, const char *name, int64_t v) {
    pb_buf a = {0};
    attr_head(&a, name, ATTR_TYPE_INT);
    pb_varint_field(&a, ATTR_I, (uint64_t)v);
    pb_message_field(attrs, NODE_ATTRIBUTE, &a);
}

void ox_attr_ints(pb_buf *attrs, const char *name, const int64_t *v, int n) {
    pb_buf a = {0};
    attr_head(&a, name, ATTR_TYPE_INTS);
    for (int i = 0; i < n; i++) pb_varint_field(&a, ATTR_INTS, (uint64_t)v[i]);
    pb_message_field(attrs, NODE_ATTRIBUTE, &a);
}

void ox_attr_float(pb_buf *attrs, const char *name, float v) {
    pb_buf a = {0};
    attr_head(&a, name, ATTR_TYPE_FLOAT);
    pb_float_field(&a, ATTR_F, v);
    pb_message_field(attrs, NODE_ATTRIBUTE, &a);
}

void ox_attr_string(pb_buf *attrs, const char *name, const char *s) {
    pb_buf a = {0};
    attr_head(&a, name, ATTR_TYPE_STRING);
    pb_string_field(&a, ATTR_S, s);
    pb_message_field(attrs, NODE_ATTRIBUTE, &a);
}

/* ---- nodes and initializers ---- */

/* One NodeProto with its inputs, one output and the attributes (freed). */
void ox_node(writer *w, const char *op_type, const char *const *inputs, int n_in, const char *output,
                 pb_buf *attrs) {
    pb_buf n = {0};
    for (int i = 0; i < n_in; i++) pb_string_field(&n, NODE_INPUT, inputs[i]);
    pb_string_field(&n, NODE_OUTPUT, output);
    char name[64];
    snprintf(name, sizeof name, "/%s_%d", op_type, w->n_nodes++);
    pb_string_field(&n, NODE_NAME, name);
    pb_string_field(&n, NODE_OP_TYPE, op_type);
    if (attrs) pb_append(&n, attrs); /* already encoded as field-5 entries */
    pb_message_field(&w->graph, GRAPH_NODE, &n);
}

void ox_initializer(writer *w, const char *name, int elem, int ndim, const int64_t *dims, const void *data,
                        size_t bytes) {
    pb_buf t = {0};
    for (int i = 0; i < ndim; i++) pb_varint_field(&t, TENSOR_DIMS, (uint64_t)dims[i]);
    pb_varint_field(&t, TENSOR_DATA_TYPE, (uint64_t)elem);
    pb_string_field(&t, TENSOR_NAME, name);
    pb_bytes_field(&t, TENSOR_RAW_DATA, data, bytes);
    pb_message_field(&w->graph, GRAPH_INITIALIZER, &t);
}

void ox_reshape(writer *w, const char *x, int ndim, const int64_t *shape, const char *out) {
    char s[NAME_MAX_LEN];
    ox_const_i64(w, shape, ndim, s, sizeof s);
    const char *in[2] = {x, s};
    ox_node(w, "Reshape", in, 2, out, NULL);
}

void ox_slice(writer *w, const char *x, int64_t axis, int64_t start, int64_t end, const char *out) {
    char s[NAME_MAX_LEN], e[NAME_MAX_LEN], a[NAME_MAX_LEN];
    ox_const_i64(w, &start, 1, s, sizeof s);
    ox_const_i64(w, &end, 1, e, sizeof e);
    ox_const_i64(w, &axis, 1, a, sizeof a);
    const char *in[4] = {x, s, e, a};
    ox_node(w, "Slice", in, 4, out, NULL);
}

/* A fresh int64 1-D constant; its name into out. */
void ox_const_i64(writer *w, const int64_t *v, int n, char *out, size_t size) {
    snprintf(out, size, "/const_%d", w->n_consts++);
    int64_t dims[1] = {n};
    ox_initializer(w, out, ELEM_INT64, 1, dims, v, sizeof(int64_t) * (size_t)n);
}

void ox_const_f32(writer *w, const float *v, int ndim, const int64_t *dims, char *out, size_t size) {
    snprintf(out, size, "/const_%d", w->n_consts++);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= dims[i];
    ox_initializer(w, out, ELEM_FLOAT, ndim, dims, v, sizeof(float) * (size_t)n);
}

enum { NAME_CHUNK = 512 };

static named *name_at(const writer *w, int i) { return &w->name_chunks[i / NAME_CHUNK][i % NAME_CHUNK]; }

const char *ox_find_name(const writer *w, const yolo_tensor *t) {
    for (int i = 0; i < w->n_names; i++)
        if (name_at(w, i)->t == t) return name_at(w, i)->name;
    return NULL;
}

const char *ox_add_name(writer *w, const yolo_tensor *t, const char *name) {
    if (w->n_names == w->n_chunks * NAME_CHUNK) {
        named **chunks = realloc(w->name_chunks, sizeof *chunks * (size_t)(w->n_chunks + 1));
        named *chunk = chunks ? malloc(sizeof *chunk * NAME_CHUNK) : NULL;
        if (chunks) w->name_chunks = chunks;
        if (!chunk) {
            ox_fail(w, YOLO_ERR_NOMEM, "out of memory");
            return "";
        }
        w->name_chunks[w->n_chunks++] = chunk;
    }
    named *e = name_at(w, w->n_names++);
    e->t = t;
    snprintf(e->name, sizeof e->name, "%s", name);
    return e->name;
}

void ox_free_names(writer *w) {
    for (int c = 0; c < w->n_chunks; c++) free(w->name_chunks[c]);
    free(w->name_chunks);
    w->name_chunks = NULL, w->n_chunks = w->n_names = 0;
}

/* The ONNX name of an op's input: persistent tensors become initializers
 * (their state-dict name when unique) on first use. */
const char *ox_input_name(writer *w, const yolo_tensor *t) {
    const char *name = ox_find_name(w, t);
    if (name) return name;
    if (w->dynamic && (name = ox_dynamic_constant(w, t))) return name;
    if (t->kind != YOLO_TENSOR_PERSISTENT) {
        ox_fail(w, YOLO_ERR_ARG, "tensor '%s' is used before it is computed", t->name);
        return "";
    }
    if (t->dtype != YOLO_F32) {
        ox_fail(w, YOLO_ERR_UNSUPPORTED, "constant '%s' is %s (only f32 constants are exported)", t->name,
             yolo_dtype_name(t->dtype));
        return "";
    }
    char buf[NAME_MAX_LEN];
    snprintf(buf, sizeof buf, "%s", t->name);
    bool taken = !buf[0];
    for (int i = 0; !taken && i < w->n_names; i++) taken = !strcmp(name_at(w, i)->name, buf);
    if (taken) snprintf(buf, sizeof buf, "/param_%d", w->n_consts++);
    int64_t n = yolo_tensor_numel(t);
    float *data = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!data || yolo_tensor_download_f32(t, data, n)) {
        free(data);
        ox_fail(w, data ? YOLO_ERR_BACKEND : YOLO_ERR_NOMEM, "cannot read constant '%s'", t->name);
        return "";
    }
    ox_initializer(w, buf, ELEM_FLOAT, t->ndim, t->shape, data, sizeof(float) * (size_t)n);
    free(data);
    return ox_add_name(w, t, buf);
}

/* The name a node's result gets: output0/output1 for the exported ones. */
const char *ox_result_name(writer *w, const yolo_tensor *t, int index) {
    char buf[NAME_MAX_LEN];
    snprintf(buf, sizeof buf, "/t%d", index);
    for (int i = 0; i < w->n_outputs; i++)
        if (w->outputs[i] == t) snprintf(buf, sizeof buf, "output%d", i);
    return ox_add_name(w, t, buf);
}
