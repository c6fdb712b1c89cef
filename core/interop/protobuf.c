/* Protobuf wire encoding (protobuf.h). */
#include "interop/protobuf.h"

#include <stdlib.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_LEN = 2, WIRE_FIXED32 = 5 };

static bool reserve(pb_buf *b, size_t n) {
    if (b->oom) return false;
    if (b->cap - b->len >= n) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        if (cap > SIZE_MAX / 2) return !(b->oom = true);
        cap *= 2;
    }
    uint8_t *d = realloc(b->data, cap);
    if (!d) return !(b->oom = true);
    b->data = d;
    b->cap = cap;
    return true;
}

static void put_varint(pb_buf *b, uint64_t v) {
    if (!reserve(b, 10)) return;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        b->data[b->len++] = byte | (v ? 0x80 : 0);
    } while (v);
}

static void put_raw(pb_buf *b, const void *data, size_t len) {
    if (len && reserve(b, len)) {
        memcpy(b->data + b->len, data, len);
        b->len += len;
    }
}

static void put_key(pb_buf *b, int field, int wire) { put_varint(b, (uint64_t)field << 3 | (uint64_t)wire); }

void pb_free(pb_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

void pb_varint_field(pb_buf *b, int field, uint64_t v) {
    put_key(b, field, WIRE_VARINT);
    put_varint(b, v);
}

void pb_float_field(pb_buf *b, int field, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    put_key(b, field, WIRE_FIXED32);
    put_raw(b, le, 4);
}

void pb_bytes_field(pb_buf *b, int field, const void *data, size_t len) {
    put_key(b, field, WIRE_LEN);
    put_varint(b, len);
    put_raw(b, data, len);
}

void pb_string_field(pb_buf *b, int field, const char *s) { pb_bytes_field(b, field, s, strlen(s)); }

void pb_message_field(pb_buf *b, int field, pb_buf *msg) {
    if (msg->oom) b->oom = true;
    pb_bytes_field(b, field, msg->data, msg->len);
    pb_free(msg);
}

void pb_append(pb_buf *b, pb_buf *src) {
    if (src->oom) b->oom = true;
    put_raw(b, src->data, src->len);
    pb_free(src);
}
