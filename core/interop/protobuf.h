/* protobuf.h — the protobuf wire format, encode only: what an ONNX
 * ModelProto needs (varints, fixed32 floats, length-delimited strings,
 * bytes and nested messages).
 *
 * Why hand-written and not protobuf-c: writing ONNX needs five wire
 * operations and a dozen field numbers (onnx_export.c names them from
 * onnx.proto); protobuf-c would add a build-time code generator
 * (protoc-c), ONNX's .proto vendored into the tree and ~10k lines of
 * generated code for messages we only ever write. The wire format is
 * frozen, and the exported files are checked by onnx.checker, OpenCV and
 * ONNX Runtime in the tests. */
#ifndef YOLO_INTEROP_PROTOBUF_H
#define YOLO_INTEROP_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pb_buf {
    uint8_t *data;
    size_t len, cap;
    bool oom; /* an allocation failed: every later write is dropped */
} pb_buf;

void pb_free(pb_buf *b);
void pb_varint_field(pb_buf *b, int field, uint64_t v);     /* int32/int64/enum/bool (negative: 10 bytes) */
void pb_float_field(pb_buf *b, int field, float v);         /* fixed32 */
void pb_bytes_field(pb_buf *b, int field, const void *data, size_t len);
void pb_string_field(pb_buf *b, int field, const char *s);
/* Appends `msg` as field `field` (length-delimited) and frees it. */
void pb_message_field(pb_buf *b, int field, pb_buf *msg);
/* Appends src's bytes (already encoded fields) and frees src. */
void pb_append(pb_buf *b, pb_buf *src);

#endif
