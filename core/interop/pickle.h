/* pickle.h — a small, strict reader of the pickles PyTorch's torch.save
 * writes (protocol 2), for Ultralytics .pt checkpoints.
 *
 * Nothing is ever executed: a pickle's globals are names checked against an
 * allow-list, and what a call would build is either one of the few values
 * this reader understands (OrderedDict() and set() give a dict and a list,
 * torch.Size(t) a tuple, _rebuild_tensor_v2 / _rebuild_parameter a tensor
 * view of a persistent storage) or an opaque object that records the
 * callable's name, its arguments and the state BUILD gives it (module
 * classes, torch.device(...), numpy scalars, ...). A global outside the
 * allow-list, an opcode outside the protocol-2 subset PyTorch emits, a
 * truncated stream or a stack out of shape is refused with an error naming
 * `what` (the file), the byte offset and what was found.
 *
 * What a pickle may cost is capped whatever its bytes: values, container
 * items, memo ids, and tensor sizes (2^40 elements a dimension or storage;
 * a view inside its storage, never of more elements than it).
 *
 * All values live in one arena owned by the yolo_pickle; memo references
 * share values, so the result is a graph that may even have cycles:
 * walkers bound their depth. */
#ifndef YOLO_INTEROP_PICKLE_H
#define YOLO_INTEROP_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"

#define YOLO_PK_MAX_DIMS 8

typedef enum yolo_pk_kind {
    YOLO_PK_NONE = 0,
    YOLO_PK_BOOL,
    YOLO_PK_INT,
    YOLO_PK_FLOAT,
    YOLO_PK_STR,
    YOLO_PK_TUPLE,
    YOLO_PK_LIST,
    YOLO_PK_DICT,    /* items hold key, value, key, value, ... */
    YOLO_PK_GLOBAL,  /* a name from the allow-list, not yet called */
    YOLO_PK_OBJECT,  /* an opaque instance: cls, args, state */
    YOLO_PK_STORAGE, /* a persistent storage: dtype, key, numel */
    YOLO_PK_TENSOR,  /* a strided view of a storage */
} yolo_pk_kind;

typedef enum yolo_pk_dtype { YOLO_PK_F32, YOLO_PK_F16, YOLO_PK_F64, YOLO_PK_I64, YOLO_PK_I32, YOLO_PK_BF16 } yolo_pk_dtype;

typedef struct yolo_pk_value yolo_pk_value;
struct yolo_pk_value {
    yolo_pk_kind kind;
    bool b;
    int64_t i;
    double f;
    const char *s;           /* STR (NUL-terminated, len bytes), GLOBAL/OBJECT: "module.Name", STORAGE: key */
    size_t len;
    yolo_pk_value **items;   /* TUPLE, LIST, DICT */
    size_t n, cap;
    yolo_pk_value *args;     /* OBJECT: the call's argument tuple */
    yolo_pk_value *state;    /* OBJECT: what BUILD set (NULL if none) */
    /* STORAGE */
    yolo_pk_dtype dtype;
    int64_t numel;
    /* TENSOR */
    yolo_pk_value *storage;
    int64_t offset;
    int ndim;
    int64_t shape[YOLO_PK_MAX_DIMS], stride[YOLO_PK_MAX_DIMS];
};

typedef struct yolo_pickle yolo_pickle;

/* Parses data[0..size). `what` names the input in errors. */
yolo_status yolo_pickle_parse(const uint8_t *data, size_t size, const char *what, yolo_pickle **out);
void yolo_pickle_free(yolo_pickle *p);
const yolo_pk_value *yolo_pickle_root(const yolo_pickle *p);
/* How many values the pickle made: what a walk of its graph may visit
 * before sharing (memo GETs) would make it revisit without end. */
size_t yolo_pickle_value_count(const yolo_pickle *p);

/* Lookups (NULL when absent or not of that kind). */
const yolo_pk_value *yolo_pk_dict_get(const yolo_pk_value *dict, const char *key);
/* An OBJECT's state dict entry (module attributes: "_modules", "yaml", ...). */
const yolo_pk_value *yolo_pk_attr(const yolo_pk_value *object, const char *key);
bool yolo_pk_is_str(const yolo_pk_value *v, const char *s);
size_t yolo_pk_dtype_size(yolo_pk_dtype dtype);
const char *yolo_pk_dtype_name(yolo_pk_dtype dtype);
/* A short description for messages: "str 'abc'", "object ultralytics.nn.tasks.DetectionModel", ... */
const char *yolo_pk_describe(const yolo_pk_value *v, char *buf, size_t size);

#endif
