/* safetensors: byte-exact encoding against the reference crate's test
 * vectors, dtype/name ordering, round trips, and a strict decoder. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/json.h"
#include "ckpt/safetensors.h"
#include "test_util.h"

/* 8-byte length + header + data_len zero bytes. */
static uint8_t *blob_of(const char *header, size_t data_len, size_t *size) {
    size_t hn = strlen(header);
    *size = 8 + hn + data_len;
    uint8_t *b = calloc(1, *size + 1);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)hn >> (8 * i));
    memcpy(b + 8, header, hn);
    return b;
}

static int decodes(const char *header, size_t data_len) {
    size_t size;
    uint8_t *b = blob_of(header, data_len, &size);
    yolo_st_file *f = NULL;
    yolo_status st = yolo_st_decode(b, size, "x.safetensors", &f);
    yolo_st_file_free(f);
    free(b);
    return st == YOLO_OK;
}

static void expect_reject(const char *header, size_t data_len, const char *needle) {
    size_t size;
    uint8_t *b = blob_of(header, data_len, &size);
    yolo_st_file *f = NULL;
    yolo_status st = yolo_st_decode(b, size, "x.safetensors", &f);
    CHECK_MSG(st == YOLO_ERR_FORMAT && !f, "accepted: %s", header);
    CHECK_MSG(test_error_mentions("x.safetensors"), "message lacks the blob name: %s", yolo_last_error());
    CHECK_MSG(test_error_mentions(needle), "for %s: expected '%s' in: %s", header, needle, yolo_last_error());
    yolo_st_file_free(f);
    free(b);
}

static void test_reference_vectors(void) {
    /* The crate's test_serialization / test_empty / forced alignment vectors. */
    float v[6] = {0, 1, 2, 3, 4, 5};
    yolo_st_tensor t = {.name = "attn.0", .dtype = YOLO_ST_F32, .ndim = 3, .shape = {1, 2, 3}, .data = v, .nbytes = 24};
    uint8_t *out;
    size_t size;
    CHECK(yolo_st_encode(&t, 1, NULL, 0, "t", &out, &size) == YOLO_OK);
    const char *hdr = "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}";
    CHECK(size == 8 + 64 + 24);
    CHECK(out[0] == 64 && out[1] == 0 && out[7] == 0);
    CHECK(memcmp(out + 8, hdr, strlen(hdr)) == 0 && strlen(hdr) == 64);
    CHECK(memcmp(out + 72, v, 24) == 0);
    free(out);

    t.name = "attn0";
    t.ndim = 4;
    t.shape[0] = 1; t.shape[1] = 1; t.shape[2] = 2; t.shape[3] = 3;
    CHECK(yolo_st_encode(&t, 1, NULL, 0, "t", &out, &size) == YOLO_OK);
    hdr = "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}       ";
    CHECK(out[0] == 72 && size == 8 + 72 + 24);
    CHECK(memcmp(out + 8, hdr, 72) == 0);
    free(out);

    CHECK(yolo_st_encode(NULL, 0, NULL, 0, "t", &out, &size) == YOLO_OK);
    CHECK(size == 16 && out[0] == 8 && memcmp(out + 8, "{}      ", 8) == 0);
    free(out);

    yolo_st_kv kv = {"framework", "pt"};
    CHECK(yolo_st_encode(NULL, 0, &kv, 1, "t", &out, &size) == YOLO_OK);
    hdr = "{\"__metadata__\":{\"framework\":\"pt\"}}     ";
    CHECK(size == 48 && out[0] == 40 && memcmp(out + 8, hdr, 40) == 0);
    yolo_st_file *f;
    CHECK(yolo_st_decode(out, size, "t", &f) == YOLO_OK);
    if (f) {
        CHECK(yolo_st_count(f) == 0 && yolo_st_meta_count(f) == 1);
        CHECK(yolo_st_meta_get(f, "framework") && strcmp(yolo_st_meta_get(f, "framework"), "pt") == 0);
        yolo_st_file_free(f);
    }
    free(out);
}

static void test_order_and_roundtrip(void) {
    uint8_t u8[5] = {1, 2, 3, 4, 5};
    float f32a[4] = {1.5f, -2, 3, 4}, f32b[2] = {7, 8};
    int64_t i64[3] = {INT64_MIN, -1, INT64_MAX};
    uint16_t f16[2] = {0x3C00, 0xC000};
    int32_t i32[1] = {-42};
    double f64 = 3.25;
    yolo_st_tensor ts[] = {
        {.name = "a", .dtype = YOLO_ST_U8, .ndim = 1, .shape = {5}, .data = u8, .nbytes = 5},
        {.name = "b", .dtype = YOLO_ST_F32, .ndim = 2, .shape = {2, 2}, .data = f32a, .nbytes = 16},
        {.name = "c", .dtype = YOLO_ST_I64, .ndim = 1, .shape = {3}, .data = i64, .nbytes = 24},
        {.name = "d \"q\" \\ \n\x01 é😀", .dtype = YOLO_ST_F16, .ndim = 2, .shape = {1, 2}, .data = f16, .nbytes = 4},
        {.name = "a2", .dtype = YOLO_ST_F32, .ndim = 1, .shape = {2}, .data = f32b, .nbytes = 8},
        {.name = "scalar", .dtype = YOLO_ST_F64, .ndim = 0, .data = &f64, .nbytes = 8},
        {.name = "empty", .dtype = YOLO_ST_I32, .ndim = 2, .shape = {0, 3}, .data = NULL, .nbytes = 0},
        {.name = "i", .dtype = YOLO_ST_I32, .ndim = 1, .shape = {1}, .data = i32, .nbytes = 4},
    };
    size_t n = sizeof ts / sizeof ts[0];
    yolo_st_kv meta[] = {{"zeta", "last"}, {"format", "pt"}, {"quote\"key", "line\nbreak"}};
    uint8_t *out;
    size_t size;
    CHECK(yolo_st_encode(ts, n, meta, 3, "t", &out, &size) == YOLO_OK);
    yolo_st_file *f = NULL;
    CHECK(yolo_st_decode(out, size, "t", &f) == YOLO_OK);
    if (!f) { free(out); return; }
    CHECK(yolo_st_count(f) == n);
    /* dtype alignment descending, then name: I64, F64, F32 (a2, b), I32 (empty, i), F16, U8 */
    const char *order[] = {"c", "scalar", "a2", "b", "empty", "i", ts[3].name, "a"};
    for (size_t i = 0; i < n; i++) {
        const yolo_st_tensor *t = yolo_st_at(f, i);
        CHECK_MSG(strcmp(t->name, order[i]) == 0, "position %zu: %s", i, t->name);
        CHECK(((uintptr_t)((const uint8_t *)t->data - out) % yolo_st_dtype_size(t->dtype)) == 0);
    }
    CHECK(yolo_st_header_size(f) % 8 == 0);
    for (size_t i = 0; i < n; i++) {
        const yolo_st_tensor *t = yolo_st_find(f, ts[i].name);
        CHECK_MSG(t != NULL, "missing %s", ts[i].name);
        if (!t) continue;
        CHECK(t->dtype == ts[i].dtype && t->ndim == ts[i].ndim && t->nbytes == ts[i].nbytes);
        for (int d = 0; d < t->ndim; d++) CHECK(t->shape[d] == ts[i].shape[d]);
        CHECK(t->nbytes == 0 || memcmp(t->data, ts[i].data, t->nbytes) == 0);
    }
    CHECK(yolo_st_find(f, "nope") == NULL);
    CHECK(yolo_st_meta_count(f) == 3);
    CHECK(strcmp(yolo_st_meta_at(f, 0)->key, "format") == 0); /* sorted */
    CHECK(strcmp(yolo_st_meta_get(f, "quote\"key"), "line\nbreak") == 0);
    yolo_st_file_free(f);
    free(out);

    /* encoder refusals */
    yolo_st_tensor dup[2] = {ts[1], ts[4]};
    dup[1].name = "b";
    CHECK(yolo_st_encode(dup, 2, NULL, 0, "enc", &out, &size) == YOLO_ERR_ARG && test_error_mentions("duplicate"));
    dup[0].nbytes = 12;
    CHECK(yolo_st_encode(dup, 1, NULL, 0, "enc", &out, &size) == YOLO_ERR_ARG && test_error_mentions("'b'"));
    dup[0] = ts[1];
    dup[0].name = "__metadata__";
    CHECK(yolo_st_encode(dup, 1, NULL, 0, "enc", &out, &size) == YOLO_ERR_ARG);
    dup[0].name = "";
    CHECK(yolo_st_encode(dup, 1, NULL, 0, "enc", &out, &size) == YOLO_ERR_ARG);
    dup[0].name = "bad\xff";
    CHECK(yolo_st_encode(dup, 1, NULL, 0, "enc", &out, &size) == YOLO_ERR_ARG);
}

static void test_strict_decoder(void) {
    const char *ok = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    CHECK(decodes(ok, 8));
    CHECK(decodes("{ \"w\" : { \"shape\" : [ 2 ] , \"dtype\":\"F32\", \"data_offsets\":[0,8] } }\n\t  ", 8));
    CHECK(decodes("{\"\\u00e9\\ud83d\\ude00\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]}}", 1));
    expect_reject(ok, 9, "cover 8 of the 9");
    expect_reject(ok, 7, "pass the end");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "needs 12 bytes");
    expect_reject("{\"w\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "unknown dtype");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", 8, "unknown field");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "lacks \"data_offsets\"");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "shape[0]");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8, "shape[0]");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, "data_offsets");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "end before");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                  "\"v\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "overlap");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                  "\"v\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}", 16, "gap");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                  "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12, "duplicate key \"w\"");
    expect_reject("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}", 8,
                  "overflows");
    expect_reject("{\"__metadata__\":{\"a\":1}}", 0, "not a string");
    expect_reject("{\"__metadata__\":[]}", 0, "__metadata__");
    expect_reject("{\"w\":[]}", 0, "not an object");
    expect_reject("[]", 0, "does not start with '{'");
    expect_reject(" {}", 0, "does not start with '{'");
    expect_reject("{\"a\":1,}", 0, "string key");
    expect_reject("{\"a\":01}", 0, "leading zero");
    expect_reject("{\"a\":\"x\\q\"}", 0, "unknown escape");
    expect_reject("{\"a\":\"\\ud800\"}", 0, "surrogate");
    expect_reject("{\"a\":\"\\u0000\"}", 0, "\\u0000");
    expect_reject("{\"a\":\"\xc3\x28\"}", 0, "UTF-8");
    expect_reject("{\"a\":\"tab\there\"}", 0, "control character");
    expect_reject("{\"a\":1} x", 0, "trailing");
    expect_reject("{\"a\":tru}", 0, "value expected");
    expect_reject("{\"a\":\"unterminated}", 0, "unterminated");
    expect_reject("{\"a\":NaN}", 0, "value expected");
    char deep[300] = "{\"a\":";
    for (int i = 0; i < 100; i++) strcat(deep, "[");
    expect_reject(deep, 0, "nesting too deep");

    /* Length prefix problems. */
    uint8_t small[5] = {0};
    yolo_st_file *f = NULL;
    CHECK(yolo_st_decode(small, 5, "x.safetensors", &f) == YOLO_ERR_FORMAT && test_error_mentions("too short"));
    uint8_t big[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, '{', '}'};
    CHECK(yolo_st_decode(big, 16, "x.safetensors", &f) == YOLO_ERR_FORMAT && test_error_mentions("100 MB"));
    uint8_t past[16] = {100, 0, 0, 0, 0, 0, 0, 0, '{', '}'};
    CHECK(yolo_st_decode(past, 16, "x.safetensors", &f) == YOLO_ERR_FORMAT && test_error_mentions("passes the end"));
    CHECK(f == NULL);
}

static void test_json_values(void) {
    const char *text = "{\"n\":null,\"t\":true,\"f\":false,\"x\":-1.5e3,\"u\":18446744073709551615,\"big\":18446744073709551616,"
                       "\"s\":\"a\\/b\\\"c\\\\\\b\\f\\n\\r\\t\",\"arr\":[[],{},[1,[2]]]}";
    yolo_json *v = NULL;
    CHECK(yolo_json_parse(text, strlen(text), "j", &v) == YOLO_OK);
    if (!v) return;
    CHECK(yolo_json_get(v, "n")->kind == YOLO_JSON_NULL);
    CHECK(yolo_json_get(v, "t")->b && !yolo_json_get(v, "f")->b);
    CHECK(yolo_json_get(v, "x")->num == -1500.0 && !yolo_json_get(v, "x")->is_uint);
    CHECK(yolo_json_get(v, "u")->is_uint && yolo_json_get(v, "u")->u == UINT64_MAX);
    CHECK(!yolo_json_get(v, "big")->is_uint);
    CHECK(strcmp(yolo_json_get(v, "s")->s, "a/b\"c\\\b\f\n\r\t") == 0);
    CHECK(yolo_json_get(v, "arr")->n == 3);
    yolo_json_free(v);
}

int main(void) {
    test_reference_vectors();
    test_order_and_roundtrip();
    test_strict_decoder();
    test_json_values();
    return test_result("test_ckpt_safetensors");
}
