/* safetensors.h — the safetensors format (Hugging Face), encode and decode.
 *
 * Layout: 8 bytes little-endian N, then N bytes of JSON header
 *   {"__metadata__": {str: str}, NAME: {"dtype": "F32", "shape": [..],
 *    "data_offsets": [begin, end]}, ...}
 * padded with spaces to a multiple of 8, then the tensors' bytes
 * (little-endian, row-major), offsets relative to the end of the header.
 *
 * The encoder writes what the reference (Rust) implementation writes, byte
 * for byte: compact JSON, "__metadata__" first (keys sorted here; the crate
 * uses hash order), tensors sorted by dtype alignment descending (I64, F64,
 * F32, I32, F16, U8, ...) then by name, so every tensor's data is aligned
 * to its element size when the blob itself is.
 *
 * The decoder is strict, as the crate is and more: the JSON is checked by
 * json.c, N may not pass the end of the buffer nor exceed 100 MB, the
 * header must be an object, tensor entries must have exactly dtype, shape
 * and data_offsets, names must be unique, shape x dtype size must equal
 * the offsets' span, and the offsets must tile the data area exactly (no
 * overlap, gap or byte left over). Every error names `what`. */
#ifndef YOLO_CKPT_SAFETENSORS_H
#define YOLO_CKPT_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"

#define YOLO_ST_MAX_DIMS 8
#define YOLO_ST_MAX_HEADER (100u * 1000u * 1000u)

/* In the crate's declaration order (increasing alignment); the encoder's
 * sort depends on it. */
typedef enum yolo_st_dtype {
    YOLO_ST_BOOL = 0,
    YOLO_ST_U8,
    YOLO_ST_I8,
    YOLO_ST_F8_E5M2,
    YOLO_ST_F8_E4M3,
    YOLO_ST_I16,
    YOLO_ST_U16,
    YOLO_ST_F16,
    YOLO_ST_BF16,
    YOLO_ST_I32,
    YOLO_ST_U32,
    YOLO_ST_F32,
    YOLO_ST_F64,
    YOLO_ST_I64,
    YOLO_ST_U64,
    YOLO_ST_DTYPE_COUNT
} yolo_st_dtype;

size_t yolo_st_dtype_size(yolo_st_dtype dtype);
/* "F32", ... ("?" for an invalid value). */
const char *yolo_st_dtype_name(yolo_st_dtype dtype);
bool yolo_st_dtype_parse(const char *name, yolo_st_dtype *out);

/* One tensor: the encoder's input and the decoder's output. */
typedef struct yolo_st_tensor {
    const char *name;
    yolo_st_dtype dtype;
    int ndim;                          /* 0 (a scalar) .. YOLO_ST_MAX_DIMS */
    int64_t shape[YOLO_ST_MAX_DIMS];
    const void *data;                  /* decoder: points into the blob, aligned only if the writer aligned it */
    size_t nbytes;                     /* numel * dtype size */
} yolo_st_tensor;

typedef struct yolo_st_kv {
    const char *key, *value;
} yolo_st_kv;

int64_t yolo_st_numel(const yolo_st_tensor *t);
/* "F32[16,3,3,3]" into buf; returns buf. */
const char *yolo_st_shape_str(const yolo_st_tensor *t, char *buf, size_t size);

/* ---- encode ---- */
/* A blob's layout before its data is written: `head` (the 8-byte length
 * and the padded header) then the tensors' data in `order`. */
typedef struct yolo_st_plan {
    uint8_t *head;
    size_t head_size;
    size_t *order;      /* indices into the tensor array, in file order */
    size_t n;
    uint64_t data_size; /* bytes after head */
} yolo_st_plan;

/* Validates the tensors (non-empty unique names other than "__metadata__",
 * valid dtype, 0..8 dims, shape >= 0, nbytes consistent, data non-NULL
 * when nbytes > 0) and lays them out. `what` names the blob in errors. */
yolo_status yolo_st_plan_build(const yolo_st_tensor *tensors, size_t n, const yolo_st_kv *meta, size_t n_meta,
                               const char *what, yolo_st_plan *out);
void yolo_st_plan_free(yolo_st_plan *plan);
/* The whole blob in one malloc'd buffer. */
yolo_status yolo_st_encode(const yolo_st_tensor *tensors, size_t n, const yolo_st_kv *meta, size_t n_meta,
                           const char *what, uint8_t **out, size_t *size);

/* ---- decode ---- */
typedef struct yolo_st_file yolo_st_file;

/* Parses and validates buf[0..size). The tensors' data point into buf,
 * which must outlive *out. */
yolo_status yolo_st_decode(const void *buf, size_t size, const char *what, yolo_st_file **out);
void yolo_st_file_free(yolo_st_file *f);
/* The same lookup over tensors held elsewhere (a .pt's state dict, for the
 * checkpoint loaders' rules): the structs are copied, their names and data
 * borrowed, and must outlive *out. Names must be unique. */
yolo_status yolo_st_file_view(const yolo_st_tensor *tensors, size_t n, const char *what, yolo_st_file **out);

size_t yolo_st_count(const yolo_st_file *f);
/* i-th tensor in file (offset) order. */
const yolo_st_tensor *yolo_st_at(const yolo_st_file *f, size_t i);
/* By name (binary search), NULL if absent. */
const yolo_st_tensor *yolo_st_find(const yolo_st_file *f, const char *name);
/* "__metadata__" entries, sorted by key. */
size_t yolo_st_meta_count(const yolo_st_file *f);
const yolo_st_kv *yolo_st_meta_at(const yolo_st_file *f, size_t i);
const char *yolo_st_meta_get(const yolo_st_file *f, const char *key);
/* Size of the 8-byte prefix plus header (the data area starts there). */
size_t yolo_st_header_size(const yolo_st_file *f);

#endif
