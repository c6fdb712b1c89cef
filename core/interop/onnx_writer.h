/* onnx_writer.h — the ONNX export's graph writer (internal to core/interop):
 * onnx.proto field numbers, names of exported values, and helpers that
 * append NodeProtos and initializers. onnx_export.c maps ops onto it;
 * onnx_dynamic.c adds the shape arithmetic of dynamic=True. */
#ifndef YOLO_INTEROP_ONNX_WRITER_H
#define YOLO_INTEROP_ONNX_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph_internal.h"
#include "graph/node.h"
#include "interop/protobuf.h"

/* onnx.proto field numbers */
enum { MODEL_IR_VERSION = 1, MODEL_PRODUCER_NAME = 2, MODEL_PRODUCER_VERSION = 3, MODEL_GRAPH = 7,
       MODEL_OPSET_IMPORT = 8, MODEL_METADATA_PROPS = 14 };
enum { OPSET_VERSION = 2 };
enum { KV_KEY = 1, KV_VALUE = 2 };
enum { GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12 };
enum { NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_NAME = 3, NODE_OP_TYPE = 4, NODE_ATTRIBUTE = 5 };
enum { ATTR_NAME = 1, ATTR_F = 2, ATTR_I = 3, ATTR_S = 4, ATTR_INTS = 8, ATTR_TYPE = 20 };
enum { ATTR_TYPE_FLOAT = 1, ATTR_TYPE_INT = 2, ATTR_TYPE_STRING = 3, ATTR_TYPE_INTS = 7 };
enum { TENSOR_DIMS = 1, TENSOR_DATA_TYPE = 2, TENSOR_NAME = 8, TENSOR_RAW_DATA = 9 };
enum { ELEM_FLOAT = 1, ELEM_INT64 = 7 };
enum { VALUE_NAME = 1, VALUE_TYPE = 2, TYPE_TENSOR = 1, TENSOR_TYPE_ELEM = 1, TENSOR_TYPE_SHAPE = 2, SHAPE_DIM = 1,
       DIM_VALUE = 1, DIM_PARAM = 2 };

#define NAME_MAX_LEN 160

typedef struct named {
    const yolo_tensor *t;
    char name[NAME_MAX_LEN];
} named;

typedef struct writer {
    pb_buf graph;
    int opset;
    /* dynamic=True: the same forward traced at other sizes (node for node),
     * which tells the dims that follow the input's batch, height, width */
    bool dynamic;
    const yolo_graph *base, *alt[3];
    const yolo_tensor *images;
    int n_alt;
    bool dyn_built; /* the head's anchor tensors computed in-graph */
    /* the exported values' names, in chunks that never move: a name handed
     * out stays valid while more are added (a realloc'd array had left
     * callers holding an input's name across the output's, freed) */
    named **name_chunks;
    int n_names, n_chunks;
    const yolo_tensor *outputs[2];
    int n_outputs;
    int n_consts, n_nodes;
    yolo_status st;
} writer;


yolo_status ox_fail(writer *w, yolo_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ox_attr_int(pb_buf *attrs, const char *name, int64_t v);
void ox_attr_ints(pb_buf *attrs, const char *name, const int64_t *v, int n);
void ox_attr_float(pb_buf *attrs, const char *name, float v);
void ox_attr_string(pb_buf *attrs, const char *name, const char *s);
/* One NodeProto with its inputs, one output and the attributes (freed). */
void ox_node(writer *w, const char *op_type, const char *const *inputs, int n_in, const char *output, pb_buf *attrs);
void ox_initializer(writer *w, const char *name, int elem, int ndim, const int64_t *dims, const void *data,
                    size_t bytes);
/* Reshape to a constant shape; x[..., start:end] along axis (Slice with constant inputs). */
void ox_reshape(writer *w, const char *x, int ndim, const int64_t *shape, const char *out);
void ox_slice(writer *w, const char *x, int64_t axis, int64_t start, int64_t end, const char *out);
/* Fresh constants; their names into out. */
void ox_const_i64(writer *w, const int64_t *v, int n, char *out, size_t size);
void ox_const_f32(writer *w, const float *v, int ndim, const int64_t *dims, char *out, size_t size);
const char *ox_find_name(const writer *w, const yolo_tensor *t);
const char *ox_add_name(writer *w, const yolo_tensor *t, const char *name);
/* Frees the names (the writer's other buffers are its caller's). */
void ox_free_names(writer *w);
/* The ONNX name of an op's input (a persistent tensor becomes an initializer). */
const char *ox_input_name(writer *w, const yolo_tensor *t);
/* The name a node's result gets: output0/output1 for the exported ones. */
const char *ox_result_name(writer *w, const yolo_tensor *t, int index);

/* ---- dynamic=True (onnx_dynamic.c) ---- */

/* Whether dim d of t (a node of the base trace, or a constant) differs in
 * some other trace. */
bool ox_dim_varies(const writer *w, const yolo_tensor *t, int d);
bool ox_shape_varies(const writer *w, const yolo_tensor *t);
/* Reshape x to t's shape, each varying dim computed from Shape ops. */
void ox_dynamic_reshape(writer *w, const yolo_tensor *t, const char *x, const char *out, int index);
/* The Detect head's anchor points / strides computed from the input's size;
 * NULL when t is not one of them. */
const char *ox_dynamic_constant(writer *w, const yolo_tensor *t);

#endif
