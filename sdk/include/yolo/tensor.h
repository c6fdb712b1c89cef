/* yolo/tensor.h — dtypes, backends and tensors.
 *
 * A tensor's storage belongs to a backend (CPU memory, a Vulkan buffer).
 * Host code never dereferences it: data moves only through
 * yolo_tensor_upload / yolo_tensor_download, so every backend is
 * interchangeable. Shapes are row-major, at most 4 dimensions, images NCHW. */
#ifndef YOLO_TENSOR_H
#define YOLO_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/export.h"
#include "yolo/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define YOLO_MAX_DIMS 4
#define YOLO_NAME_MAX 96

/* YOLO_BF16 (bfloat16: the top half of an f32) appears only inside graphs:
 * amp on a CPU with bf16 hardware stores some activations in it (see
 * yolo_graph_plan); uploads and downloads of f32 data convert. */
typedef enum yolo_dtype { YOLO_F32 = 0, YOLO_F16, YOLO_I32, YOLO_U8, YOLO_BF16, YOLO_DTYPE_COUNT } yolo_dtype;

/* Bytes per element; name ("f32", ...). */
YOLO_API size_t yolo_dtype_size(yolo_dtype dtype);
YOLO_API const char *yolo_dtype_name(yolo_dtype dtype);

typedef struct yolo_backend yolo_backend; /* a compute device (opaque) */
typedef struct yolo_buffer yolo_buffer;   /* one backend allocation (opaque) */
typedef struct yolo_graph yolo_graph;     /* see yolo/graph.h */

/* Opens a backend: device "cpu", "vulkan" (first GPU, else any device) or
 * "vulkan:N". threads <= 0 means all cores (CPU backend thread pool).
 * The caller owns *out and frees it with yolo_backend_free after every
 * tensor and graph on it. */
YOLO_API yolo_status yolo_backend_create(const char *device, int threads, yolo_backend **out);
YOLO_API void yolo_backend_free(yolo_backend *backend);
/* "cpu", "vulkan:0 (llvmpipe ...)" — static storage owned by the backend. */
YOLO_API const char *yolo_backend_name(const yolo_backend *backend);
/* Bytes currently allocated on the backend, and the high-water mark. */
YOLO_API size_t yolo_backend_allocated_bytes(const yolo_backend *backend);
YOLO_API size_t yolo_backend_peak_bytes(const yolo_backend *backend);

typedef enum yolo_tensor_kind {
    YOLO_TENSOR_PERSISTENT = 0, /* owns storage outside any graph: parameters, buffers, optimizer state */
    YOLO_TENSOR_INPUT,          /* a graph input: planned storage, filled by upload before each run */
    YOLO_TENSOR_NODE,           /* the result of an op inside a graph */
} yolo_tensor_kind;

/* The fields are public for reading; change them only through the API. */
typedef struct yolo_tensor {
    yolo_dtype dtype;
    int ndim;
    int64_t shape[YOLO_MAX_DIMS]; /* shape[i] for i >= ndim is 1 */
    char name[YOLO_NAME_MAX];
    yolo_tensor_kind kind;
    bool requires_grad;        /* a parameter: backward accumulates into grad */
    struct yolo_tensor *grad;  /* persistent gradient (same shape), created with requires_grad */

    yolo_backend *backend;
    yolo_buffer *buffer;       /* storage; for graph tensors, valid after yolo_graph_plan */
    size_t offset;             /* byte offset into buffer */

    yolo_graph *graph;         /* owning graph, NULL for persistent tensors */
    struct yolo_node *node;    /* the graph engine's own record (op, inputs, planning): opaque */
} yolo_tensor;

YOLO_API int64_t yolo_tensor_numel(const yolo_tensor *t);
YOLO_API size_t yolo_tensor_bytes(const yolo_tensor *t);
/* "f32[2,3,4,4]" into buf; returns buf. */
YOLO_API const char *yolo_tensor_shape_str(const yolo_tensor *t, char *buf, size_t size);
YOLO_API bool yolo_tensor_same_shape(const yolo_tensor *a, const yolo_tensor *b);

/* A persistent tensor with its own zero-filled storage on `backend`.
 * shape has ndim entries. requires_grad also creates a zeroed persistent
 * `grad`. Free with yolo_tensor_free (which frees its grad too). */
YOLO_API yolo_tensor *yolo_tensor_new(yolo_backend *backend, const char *name, yolo_dtype dtype,
                             int ndim, const int64_t *shape, bool requires_grad);
YOLO_API void yolo_tensor_free(yolo_tensor *t);

/* Copies `bytes` (must equal yolo_tensor_bytes(t)) between host memory and
 * the tensor's storage. Graph tensors can be uploaded once the graph is
 * planned (inputs) and downloaded after a run (outputs, parameters). */
YOLO_API yolo_status yolo_tensor_upload(yolo_tensor *t, const void *data, size_t bytes);
YOLO_API yolo_status yolo_tensor_download(const yolo_tensor *t, void *data, size_t bytes);
/* Convenience for f32 data of any tensor dtype: converts on the host. */
YOLO_API yolo_status yolo_tensor_upload_f32(yolo_tensor *t, const float *data, int64_t count);
YOLO_API yolo_status yolo_tensor_download_f32(const yolo_tensor *t, float *data, int64_t count);
/* Sets every element to zero (persistent tensors). */
YOLO_API yolo_status yolo_tensor_zero(yolo_tensor *t);

/* IEEE half <-> float on the host (round to nearest even). */
YOLO_API uint16_t yolo_f32_to_f16(float f);
YOLO_API float yolo_f16_to_f32(uint16_t h);
/* bfloat16 <-> float on the host: round to nearest even, NaN stays NaN,
 * denormals become a signed zero (as x86 VCVTNEPS2BF16). */
YOLO_API uint16_t yolo_f32_to_bf16(float f);
YOLO_API float yolo_bf16_to_f32(uint16_t b);

#ifdef __cplusplus
}
#endif
#endif
