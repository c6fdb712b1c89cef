/* No input may exhaust the machine (issue 41): every file-driven
 * allocation is bounded before it is made, and refused with a message
 * naming the file and what was too large.
 *   - .pt (core/interop): a view that repeats its storage's elements
 *     (stride 0), tensors reading a storage more than twice, storages
 *     declared differently or missing or short, zip members declaring more
 *     than the byte budget (unreferenced padding included), module trees
 *     shared over and over, pickles past their value, item, memo and
 *     element caps, a model yaml text past 16 MiB;
 *   - model yamls (core/nn): `scales:` and YOLOv5 multiples out of range,
 *     an estimated size past 1e9 parameters (by scale, by multiples, by
 *     row), the exact count refusing the parameter that passes it, layer
 *     outputs past 4 GiB at 640x640;
 *   - yaml and cfg files past 16 MiB (a sparse file, /dev/zero), folders;
 *   - the CLI on the examples (a stride-0 .pt, a padded .pt, the
 *     scales yamls, cfg=/dev/zero): non-zero exit and the message, each
 *     within 10 s and 1 GB of resident memory (wait4's ru_maxrss, which
 *     also counts this test's own pages the child had before its exec: an
 *     upper bound).
 * The hostile files are written here: pickles by hand, zips with zlib
 * (a gigabyte of zeros deflates to about a megabyte; runs of it are
 * repeated rather than compressed again). */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "interop/pickle.h"
#include "interop/pt_import.h"
#include "nn/model_size.h"
#include "nn/model_yaml.h"
#include "plugin/plugin_loader.h"
#include "test_util.h"
#include "util/text_file.h"
#include "yolo/config.h"
#include "yolo/model.h"

static char dir[512];
static yolo_backend *be;

/* ---- bytes ---- */

typedef struct buf {
    uint8_t *data;
    size_t len, cap;
} buf;

static void put(buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 256;
        b->data = realloc(b->data, b->cap);
        if (!b->data) abort();
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}
static void put_byte(buf *b, uint8_t v) { put(b, &v, 1); }
static void put_le(buf *b, uint64_t v, int n) {
    for (int i = 0; i < n; i++) put_byte(b, (uint8_t)(v >> (8 * i)));
}
static void put_text(buf *b, const char *s) { put(b, s, strlen(s)); }
#define PUT_LIT(b, s) put((b), (s), sizeof(s) - 1) /* a literal that may hold NULs */

/* ---- pickles (protocol 2, as torch.save writes them) ---- */

static void pk_str(buf *b, const char *s) {
    put_byte(b, 'X');
    put_le(b, strlen(s), 4);
    put_text(b, s);
}
static void pk_int(buf *b, int64_t v) { /* LONG1 of 8 bytes: any int64 */
    put_byte(b, 0x8a);
    put_byte(b, 8);
    put_le(b, (uint64_t)v, 8);
}
static void pk_global(buf *b, const char *module, const char *name) {
    put_byte(b, 'c');
    put_text(b, module);
    put_byte(b, '\n');
    put_text(b, name);
    put_byte(b, '\n');
}
static void pk_put(buf *b, uint32_t id) { put_byte(b, 'r'), put_le(b, id, 4); }
static void pk_get(buf *b, uint32_t id) { put_byte(b, 'j'), put_le(b, id, 4); }
static void pk_ints(buf *b, int n, const int64_t *v) { /* a tuple */
    put_byte(b, '(');
    for (int i = 0; i < n; i++) pk_int(b, v[i]);
    put_byte(b, 't');
}

typedef struct view {
    const char *key;
    int64_t numel; /* of the storage */
    int ndim;
    int64_t shape[2], stride[2], offset;
} view;

/* _rebuild_tensor_v2(('storage', FloatStorage, key, 'cpu', numel), offset, shape, stride, False, {}) */
static void pk_tensor(buf *b, const view *v) {
    pk_global(b, "torch._utils", "_rebuild_tensor_v2");
    put_byte(b, '(');
    put_byte(b, '(');
    pk_str(b, "storage");
    pk_global(b, "torch", "FloatStorage");
    pk_str(b, v->key);
    pk_str(b, "cpu");
    pk_int(b, v->numel);
    put_byte(b, 't');
    put_byte(b, 'Q');
    pk_int(b, v->offset);
    pk_ints(b, v->ndim, v->shape);
    pk_ints(b, v->ndim, v->stride);
    put_byte(b, 0x89);
    put_byte(b, '}');
    put_byte(b, 't');
    put_byte(b, 'R');
}

/* A module object: NEWOBJ of an Ultralytics class, then its state. The
 * caller writes the items of _parameters (then 'u') and of _modules. */
static void pk_module_open(buf *b) {
    pk_global(b, "ultralytics.nn.modules.conv", "Conv");
    put_byte(b, ')');
    put_byte(b, 0x81);
    put_byte(b, '}');
    put_byte(b, '(');
}
static void pk_module_close(buf *b) {
    put_byte(b, 'u');
    put_byte(b, 'b');
}

/* The checkpoint dict around a model whose _modules the caller writes:
 * {'model': DetectionModel(yaml={nc: 2, backbone: <backbone>, head: [[-1, 1, Classify, [2]]]},
 *   _modules={...})}. pk_ckpt_open leaves _modules' items open. */
static void pk_ckpt_open(buf *b, void (*backbone)(buf *)) {
    put_text(b, "\x80\x02");
    put_byte(b, '}');
    put_byte(b, '(');
    pk_str(b, "model");
    pk_global(b, "ultralytics.nn.tasks", "ClassificationModel");
    put_byte(b, ')');
    put_byte(b, 0x81);
    put_byte(b, '}');
    put_byte(b, '(');
    pk_str(b, "yaml");
    put_byte(b, '}');
    put_byte(b, '(');
    pk_str(b, "nc");
    pk_int(b, 2);
    pk_str(b, "backbone");
    if (backbone) {
        backbone(b);
    } else {
        put_text(b, "](](J\xff\xff\xff\xff" "K\x01");
        pk_str(b, "Conv");
        put_text(b, "](K\x08K\x03K\x02" "eee");
    }
    pk_str(b, "head");
    put_text(b, "](](J\xff\xff\xff\xff" "K\x01");
    pk_str(b, "Classify");
    put_text(b, "](K\x02" "eee");
    put_byte(b, 'u');
    pk_str(b, "_modules");
    put_byte(b, '}');
    put_byte(b, '(');
}
static void pk_ckpt_close(buf *b) {
    put_byte(b, 'u'); /* _modules */
    put_byte(b, 'u'); /* the model's state */
    put_byte(b, 'b');
    put_byte(b, 'u'); /* the checkpoint dict */
    put_byte(b, '.');
}

/* A checkpoint of one module per view: _modules {'0': {weight: v[0]}, '1': ...}. */
static void pk_ckpt_views(buf *b, const view *v, int n) {
    pk_ckpt_open(b, NULL);
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", i);
        pk_str(b, name);
        pk_module_open(b);
        pk_str(b, "_parameters");
        put_byte(b, '}');
        put_byte(b, '(');
        pk_str(b, "weight");
        pk_tensor(b, &v[i]);
        put_byte(b, 'u');
        pk_module_close(b);
    }
    pk_ckpt_close(b);
}

/* ---- zips (what torch.save writes: stored members), written by hand so
 * that a member may be a deflated run of zeros declaring gigabytes ---- */

typedef struct member {
    const char *name;
    const uint8_t *data; /* stored */
    size_t len;
    uint64_t zeros;      /* else: this many zero bytes, deflated (a multiple of 1 MiB) */
} member;

/* One MiB of zeros deflated with a full flush: repeated, it is a valid
 * stream of any number of MiB of zeros. */
static buf zero_chunk;

static void make_zero_chunk(void) {
    z_stream z = {0};
    if (deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK) abort();
    uint8_t *in = calloc(1, 1 << 20), out[1 << 16];
    for (int round = 0; round < 2; round++) { /* the second chunk: the window is zeros as it will be */
        zero_chunk.len = 0;
        z.next_in = in;
        z.avail_in = 1 << 20;
        do {
            z.next_out = out;
            z.avail_out = sizeof out;
            deflate(&z, Z_FULL_FLUSH);
            put(&zero_chunk, out, sizeof out - z.avail_out);
        } while (z.avail_out == 0);
    }
    deflateEnd(&z);
    free(in);
}

static uint32_t crc_of_zeros(uint64_t n) { /* by doubling: crc32_combine */
    uint32_t crc = 0, unit = (uint32_t)crc32(0, (const uint8_t *)"\0", 1);
    uint64_t have = 0, len = 1;
    for (uint64_t bit = 1; bit && bit <= n; bit <<= 1, len <<= 1) {
        if (n & bit) crc = (uint32_t)crc32_combine(crc, unit, (z_off_t)len), have += len;
        unit = (uint32_t)crc32_combine(unit, unit, (z_off_t)len);
    }
    return crc;
}

static void write_zip(const char *rel, const member *m, int n) {
    buf z = {0}, cd = {0};
    for (int i = 0; i < n; i++) {
        uint64_t usize = m[i].zeros ? m[i].zeros : m[i].len;
        uint64_t chunks = m[i].zeros >> 20;
        uint64_t csize = m[i].zeros ? chunks * zero_chunk.len + 2 : m[i].len;
        uint32_t crc = m[i].zeros ? crc_of_zeros(m[i].zeros) : (uint32_t)crc32(0, m[i].data, (uInt)m[i].len);
        if (usize >= 0xffffffffu) abort(); /* no zip64 here */
        size_t offset = z.len, nlen = strlen(m[i].name);
        for (int central = 0; central < 2; central++) {
            buf *o = central ? &cd : &z;
            put_le(o, central ? 0x02014b50 : 0x04034b50, 4);
            if (central) put_le(o, 20, 2);
            put_le(o, 20, 2);                  /* version needed */
            put_le(o, 0, 2);                   /* flags */
            put_le(o, m[i].zeros ? 8 : 0, 2);  /* deflate or store */
            put_le(o, 0, 4);                   /* time, date */
            put_le(o, crc, 4);
            put_le(o, csize, 4);
            put_le(o, usize, 4);
            put_le(o, nlen, 2);
            put_le(o, 0, 2);                   /* extra */
            if (central) put_le(o, 0, 8), put_le(o, 0, 2), put_le(o, offset, 4); /* comment, disk, attributes; offset */
            put_text(o, m[i].name);
        }
        if (!m[i].zeros) put(&z, m[i].data, m[i].len);
        for (uint64_t c = 0; c < chunks; c++) put(&z, zero_chunk.data, zero_chunk.len);
        if (m[i].zeros) put(&z, "\x03\x00", 2); /* the final, empty block */
    }
    size_t cd_offset = z.len;
    put(&z, cd.data, cd.len);
    put_le(&z, 0x06054b50, 4);
    put_le(&z, 0, 4);
    put_le(&z, (uint64_t)n, 2);
    put_le(&z, (uint64_t)n, 2);
    put_le(&z, cd.len, 4);
    put_le(&z, cd_offset, 4);
    put_le(&z, 0, 2);
    test_write_file(dir, rel, z.data, z.len);
    free(z.data);
    free(cd.data);
}

/* A .pt of that pickle and those storages (members after the pickle). */
static void write_pt(const char *rel, const buf *pkl, const member *storages, int n) {
    member m[16];
    m[0] = (member){.name = "arch/data.pkl", .data = pkl->data, .len = pkl->len};
    for (int i = 0; i < n; i++) m[i + 1] = storages[i];
    write_zip(rel, m, n + 1);
}

/* The .pt file read: status, and the message holding every needle. */
static yolo_pt_model *read_pt(int line, const char *rel, yolo_status want, const char *const *needles) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    yolo_pt_model *pt = NULL;
    yolo_status st = yolo_pt_read(path, &pt);
    CHECK_MSG(st == want, "line %d: %s: status %d, expected %d: %s", line, rel, st, want, yolo_last_error());
    for (int i = 0; st && needles[i]; i++)
        CHECK_MSG(test_error_mentions(needles[i]), "line %d: %s: message lacks '%s': %s", line, rel, needles[i],
                  yolo_last_error());
    if (st) CHECK_MSG(test_error_mentions(rel), "line %d: the message does not name %s: %s", line, rel, yolo_last_error());
    return pt;
}
#define REFUSED(rel, ...) yolo_pt_free(read_pt(__LINE__, (rel), YOLO_ERR_FORMAT, (const char *const[]){__VA_ARGS__, NULL}))

static const float six[6] = {1, 2, 3, 4, 5, 6};

/* A tied storage (two tensors, one storage: a shared weight) is read;
 * a view that repeats its storage (stride 0), three readers of one
 * storage, one key declared two ways, a missing or short storage are not. */
static void check_views(void) {
    const member s0 = {.name = "arch/data/0", .data = (const uint8_t *)six, .len = sizeof six};
    buf b = {0};
    view tied[2] = {{"0", 6, 2, {2, 3}, {3, 1}, 0}, {"0", 6, 1, {3}, {2}, 1}};
    pk_ckpt_views(&b, tied, 2);
    write_pt("tied.pt", &b, &s0, 1);
    yolo_pt_model *pt = read_pt(__LINE__, "tied.pt", YOLO_OK, (const char *const[]){NULL});
    const yolo_pt_tensor *w0 = pt ? yolo_pt_find(pt, "0.weight") : NULL, *w1 = pt ? yolo_pt_find(pt, "1.weight") : NULL;
    CHECK(w0 && w0->numel == 6 && w0->data[5] == 6 && w1 && w1->numel == 3 && w1->data[0] == 2 && w1->data[2] == 6);
    yolo_pt_free(pt);
    /* the example: (2^31,) of stride 0 over one element */
    b.len = 0;
    view stride0 = {"0", 1, 1, {1ll << 31}, {0}, 0};
    pk_ckpt_views(&b, &stride0, 1);
    write_pt("stride0.pt", &b, &s0, 1);
    REFUSED("stride0.pt", "a view of 2147483648 elements over storage '0' of 1", "stride-0");
    /* a shape whose product overflows int64 */
    b.len = 0;
    view wrap = {"0", 6, 2, {1ll << 40, 1ll << 40}, {0, 0}, 0};
    pk_ckpt_views(&b, &wrap, 1);
    write_pt("wrap.pt", &b, &s0, 1);
    REFUSED("wrap.pt", "over storage '0' of 6");
    b.len = 0;
    view thrice[3] = {{"0", 6, 1, {6}, {1}, 0}, {"0", 6, 1, {6}, {1}, 0}, {"0", 6, 1, {6}, {1}, 0}};
    pk_ckpt_views(&b, thrice, 3);
    write_pt("thrice.pt", &b, &s0, 1);
    REFUSED("thrice.pt", "hold 18 elements of storage 0 by", "more than 2 times its 6");
    b.len = 0;
    view twice[2] = {{"0", 6, 1, {6}, {1}, 0}, {"0", 5, 1, {5}, {1}, 0}};
    pk_ckpt_views(&b, twice, 2);
    write_pt("twice.pt", &b, &s0, 1);
    REFUSED("twice.pt", "storage 0 is declared twice differently");
    b.len = 0;
    view one = {"0", 6, 1, {6}, {1}, 0};
    pk_ckpt_views(&b, &one, 1);
    write_pt("missing.pt", &b, NULL, 0);
    REFUSED("missing.pt", "0.weight", "arch/data/0 is missing from the zip");
    const member short0 = {.name = "arch/data/0", .data = (const uint8_t *)six, .len = 8};
    write_pt("short.pt", &b, &short0, 1);
    REFUSED("short.pt", "arch/data/0 holds 8 bytes, 24 expected");
    /* the header alone (the CLI's task) reads no storage, so a missing one is no error there */
    char path[1024];
    snprintf(path, sizeof path, "%s/missing.pt", dir);
    size_t len = 0;
    uint8_t *bytes = test_read_file(dir, "missing.pt", &len);
    CHECK(bytes && yolo_pt_read_header_memory(bytes, len, path, &pt) == YOLO_OK && pt && pt->n_tensors == 1);
    yolo_pt_free(pt);
    free(bytes);
    free(b.data);
}

/* The byte budget: members declaring gigabytes (the padded .pt)
 * are refused before anything is inflated; a pickle past 32 MiB too. */
static void check_budget(void) {
    const member s0 = {.name = "arch/data/0", .data = (const uint8_t *)six, .len = sizeof six};
    buf b = {0};
    view one = {"0", 6, 1, {6}, {1}, 0};
    pk_ckpt_views(&b, &one, 1);
    /* as the issue's: 12.6 MB declaring 12 GiB */
    member padded[7] = {s0};
    static const char *const names[] = {"arch/pad/a", "arch/pad/b", "arch/pad/c", "arch/pad/d", "arch/pad/e", "arch/pad/f"};
    for (int i = 0; i < 6; i++) padded[i + 1] = (member){.name = names[i], .zeros = 2047ull << 20};
    write_pt("padded.pt", &b, padded, 7);
    clock_t t0 = clock();
    REFUSED("padded.pt", "its zip members declare more than", "by arch/pad/", "refused before inflating");
    CHECK_MSG(clock() - t0 < CLOCKS_PER_SEC, "the padded .pt took %.1f s: inflated?",
              (double)(clock() - t0) / CLOCKS_PER_SEC);
    /* a little padding (within 4x the file plus 16 MiB) is read past, not inflated */
    padded[1].zeros = 1 << 20;
    write_pt("padded-little.pt", &b, padded, 2);
    yolo_pt_free(read_pt(__LINE__, "padded-little.pt", YOLO_OK, (const char *const[]){NULL}));
    /* the pickle is refused by its declared size, unread */
    member big_pkl[1] = {{.name = "arch/data.pkl", .zeros = 33ull << 20}};
    write_zip("bigpickle.pt", big_pkl, 1);
    REFUSED("bigpickle.pt", "arch/data.pkl is larger than 32 MiB");
    free(b.data);
}

/* A module shared by every slot of the one above it, 8 levels deep: a
 * walk of 10^8 entries from a pickle of a few hundred values. */
static void check_shared_modules(void) {
    buf b = {0};
    pk_ckpt_open(&b, NULL);
    for (int level = 0; level < 8; level++) {
        pk_str(&b, "0");
        pk_module_open(&b);
        pk_str(&b, "_modules");
        put_byte(&b, '}');
        put_byte(&b, '(');
    }
    pk_str(&b, "0");
    pk_module_open(&b);
    pk_module_close(&b);
    pk_put(&b, 1000);
    for (int level = 0; level < 8; level++) { /* nine more references to the module below, then closed */
        for (int i = 1; i < 10; i++) {
            char name[8];
            snprintf(name, sizeof name, "%d", i);
            pk_str(&b, name);
            pk_get(&b, 1000 + (uint32_t)level);
        }
        put_byte(&b, 'u');
        pk_module_close(&b);
        pk_put(&b, 1001 + (uint32_t)level);
    }
    pk_ckpt_close(&b);
    write_pt("shared.pt", &b, NULL, 0);
    clock_t t0 = clock();
    REFUSED("shared.pt", "its modules list more entries than its pickle has values");
    CHECK((clock() - t0) < CLOCKS_PER_SEC);
    free(b.data);
}

static void expect_pickle(int line, const buf *b, const char *needle) {
    yolo_pickle *p = NULL;
    yolo_status st = yolo_pickle_parse(b->data, b->len, "caps.pkl", &p);
    CHECK_MSG(st == YOLO_ERR_FORMAT && test_error_mentions("caps.pkl") && test_error_mentions(needle),
              "line %d: status %d: %s", line, st, yolo_last_error());
    yolo_pickle_free(p);
}

/* The pickle reader's own caps: values, container items, memo ids, storage sizes. */
static void check_pickle_caps(void) {
    buf b = {0};
    put_text(&b, "\x80\x02]");
    for (int i = 0; i < (1 << 20) + 1; i++) put_text(&b, "Na");
    put_byte(&b, '.');
    expect_pickle(__LINE__, &b, "more than 1048576 values");
    /* set(list) copies the list: 32 copies of 512 Ki items pass 16 Mi items from half a MiB of pickle */
    b.len = 0;
    PUT_LIT(&b, "\x80\x02]q\x00(");
    for (int i = 0; i < 1 << 19; i++) put_byte(&b, 'N');
    put_byte(&b, 'e');
    put_byte(&b, '(');
    for (int i = 0; i < 40; i++) pk_global(&b, "builtins", "set"), PUT_LIT(&b, "h\x00\x85R");
    put_text(&b, "t.");
    expect_pickle(__LINE__, &b, "16777216 container items");
    b.len = 0;
    PUT_LIT(&b, "\x80\x02Nr\x70\x11\x01\x00.");
    expect_pickle(__LINE__, &b, "memo id 70000 is out of range");
    b.len = 0;
    put_text(&b, "\x80\x02");
    view huge = {"0", (1ll << 40) + 1, 1, {1}, {1}, 0};
    pk_tensor(&b, &huge);
    put_byte(&b, '.');
    expect_pickle(__LINE__, &b, "numel <= 2^40");
    free(b.data);
}

/* backbone: a list of 20 references to a list of 1000 references to a
 * list of 1000 ints, each built as the first item of the next */
static void shared_rows(buf *b) {
    put_text(b, "](](](");
    for (int i = 0; i < 1000; i++) put_text(b, "K\x01");
    put_byte(b, 'e');
    pk_put(b, 2000);
    for (int i = 1; i < 1000; i++) pk_get(b, 2000);
    put_byte(b, 'e');
    pk_put(b, 2001);
    for (int i = 1; i < 20; i++) pk_get(b, 2001);
    put_byte(b, 'e');
}

/* The model yaml a .pt holds, written back as text, stops at 16 MiB. */
static void check_yaml_text(void) {
    buf b = {0};
    pk_ckpt_open(&b, shared_rows);
    pk_ckpt_close(&b);
    write_pt("yamltext.pt", &b, NULL, 0);
    REFUSED("yamltext.pt", "the model yaml it holds is larger than 16 MiB");
    free(b.data);
}

/* ---- model yamls ---- */

static const char v8_rows[] = "backbone:\n"
                              "  - [-1, 1, Conv, [64, 3, 2]]\n"
                              "  - [-1, 1, Conv, [128, 3, 2]]\n"
                              "  - [-1, 3, C2f, [128, True]]\n"
                              "  - [-1, 1, Conv, [256, 3, 2]]\n"
                              "  - [-1, 6, C2f, [256, True]]\n"
                              "  - [-1, 1, Conv, [512, 3, 2]]\n"
                              "  - [-1, 6, C2f, [512, True]]\n"
                              "  - [-1, 1, Conv, [1024, 3, 2]]\n"
                              "  - [-1, 3, C2f, [1024, True]]\n"
                              "  - [-1, 1, SPPF, [1024, 5]]\n"
                              "head:\n"
                              "  - [[4, 6, 9], 1, Detect, [nc]]\n";

static void expect_model(int line, const char *name, const char *head, yolo_status want, const char *const *needles) {
    char text[4096];
    snprintf(text, sizeof text, "%s%s", head, v8_rows);
    yolo_model *m = NULL;
    FILE *devnull = fopen("/dev/null", "w");
    yolo_model_options opt = {.log = devnull};
    clock_t t0 = clock();
    yolo_status st = yolo_model_load_text(name, text, strlen(text), be, &opt, &m);
    fclose(devnull);
    CHECK_MSG(st == want && (st != YOLO_OK) == !m, "line %d: %s: status %d, expected %d: %s", line, name, st, want,
              yolo_last_error());
    for (int i = 0; st && needles[i]; i++)
        CHECK_MSG(test_error_mentions(needles[i]), "line %d: %s: message lacks '%s': %s", line, name, needles[i],
                  yolo_last_error());
    CHECK_MSG(clock() - t0 < 5 * CLOCKS_PER_SEC, "line %d: %s took %.1f s", line, name,
              (double)(clock() - t0) / CLOCKS_PER_SEC);
    yolo_model_free(m);
}
#define MODEL(name, head, want, ...) expect_model(__LINE__, (name), (head), (want), (const char *const[]){__VA_ARGS__, NULL})

static void check_model_yamls(void) {
    MODEL("v8n.yaml", "nc: 80\nscales:\n  n: [0.33, 0.25, 1024]\n", YOLO_OK, NULL);
    /* the examples */
    MODEL("wide.yaml", "nc: 80\nscales:\n  n: [0.33, 64.0, 1024000]\n", YOLO_ERR_FORMAT, "wide.yaml:3:",
          "scales: n: width 64 is outside (0, 4]");
    MODEL("deep.yaml", "nc: 80\nscales:\n  n: [100000.0, 0.25, 1024]\n", YOLO_ERR_FORMAT, "deep.yaml:3:",
          "scales: n: depth 100000 is outside (0, 4]");
    MODEL("channels.yaml", "nc: 80\nscales:\n  n: [0.33, 0.25, 1024000]\n", YOLO_ERR_FORMAT, "channels.yaml:3:",
          "max_channels 1.024e+06 is outside [1, 8192]");
    MODEL("zero.yaml", "nc: 80\nscales:\n  n: [0.0, 0.25, 1024]\n", YOLO_ERR_FORMAT, "depth 0 is outside");
    MODEL("v5.yaml", "nc: 80\ndepth_multiple: 0.33\nwidth_multiple: 5\n", YOLO_ERR_FORMAT, "v5.yaml:3:",
          "width_multiple 5 is outside (0, 4]");
    MODEL("v5d.yaml", "nc: 80\ndepth_multiple: -1\nwidth_multiple: 1\n", YOLO_ERR_FORMAT, "depth_multiple -1");
    /* in range, too large together: refused before anything is built */
    MODEL("big.yaml", "nc: 80\nscales:\n  n: [0.33, 0.25, 1024]\n  x: [4, 4, 8192]\n", YOLO_OK, NULL);
    MODEL("bigx.yaml", "nc: 80\nscales:\n  x: [4, 4, 8192]\n", YOLO_ERR_CONFIG, "bigx.yaml:3:3:",
          "at scales: x: [4, 4, 8192]", "parameters", "more than the 1e+09 a model may have");
    MODEL("big5.yaml", "nc: 80\ndepth_multiple: 4\nwidth_multiple: 4\n", YOLO_ERR_CONFIG, "big5.yaml:",
          "at depth_multiple 4, width_multiple 4");
    MODEL("bignc.yaml", "nc: 1000000\nscales:\n  n: [0.33, 0.25, 1024]\n", YOLO_ERR_CONFIG, "bignc.yaml:3:3:",
          "(layer 10 Detect", "more than the 1e+09");
    /* the exact count, for what the estimate undercounts (an 11x11 kernel) */
    static const char kernel[] = "nc: 2\nbackbone:\n  - [-1, 1, Conv, [8192, 1, 2]]\n  - [-1, 1, Conv, [8192, 11, 2]]\n"
                                 "head:\n  - [[1], 1, Detect, [nc]]\n";
    yolo_model *m = NULL;
    yolo_status st = yolo_model_load_text("kernel.yaml", kernel, strlen(kernel), be, NULL, &m);
    CHECK_MSG(st && !m && test_error_mentions("kernel.yaml:4:5: layer 1 Conv") &&
                  test_error_mentions("'model.1.conv.weight' (8120172544 elements) would take the model past 1e+09"),
              "%s", yolo_last_error());
    static const char rows[] = "nc: 2\nbackbone:\n  - [-1, 1, Conv, [60000, 3, 2]]\n  - [-1, 1, Conv, [60000, 3, 2]]\n"
                               "head:\n  - [[1], 1, Detect, [nc]]\n";
    st = yolo_model_load_text("rows.yaml", rows, strlen(rows), be, NULL, &m);
    CHECK_MSG(st == YOLO_ERR_CONFIG && test_error_mentions("rows.yaml:4:5: about 3.24e+10 parameters (layer 1 Conv"),
              "%s", yolo_last_error());
    /* few parameters, huge outputs: 32768 channels at full resolution */
    static const char wide[] = "nc: 2\nbackbone:\n  - [-1, 1, Conv, [32768, 1, 1]]\n  - [-1, 1, Conv, [16, 3, 2]]\n"
                               "head:\n  - [[1], 1, Detect, [nc]]\n";
    st = yolo_model_load_text("act.yaml", wide, strlen(wide), be, NULL, &m);
    CHECK_MSG(st == YOLO_ERR_CONFIG && test_error_mentions("act.yaml:3:5: the layers' outputs of one 640x640 image") &&
                  test_error_mentions("layer 0 Conv about 53.7 GB"),
              "%s", yolo_last_error());
    /* the estimate itself: within a few times the real count */
    model_spec spec;
    static const char v8[] = "nc: 80\nscales:\n  n: [0.33, 0.25, 1024]\n";
    char text[4096];
    snprintf(text, sizeof text, "%s%s", v8, v8_rows);
    CHECK(model_spec_parse("v8.yaml", text, strlen(text), &spec) == YOLO_OK);
    model_size size;
    model_size_estimate(&spec, &spec.scales[0], 80, 3, &size);
    CHECK_MSG(size.params > 1e6 && size.params < 1e7 && size.largest_row >= 0, "%g", size.params);
    model_spec_free(&spec);
}

/* ---- yaml and cfg files ---- */

static void check_text_files(void) {
    char *text = NULL;
    size_t len = 0;
    char path[1024];
    snprintf(path, sizeof path, "%s/sparse.yaml", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)YOLO_TEXT_MAX + 1) == 0);
    if (fd >= 0) close(fd);
    CHECK(yolo_read_text_file(path, "the model yaml", &text, &len) == YOLO_ERR_FORMAT && !text &&
          test_error_mentions("sparse.yaml: the model yaml is larger than 16 MiB"));
    /* at the limit exactly: read */
    CHECK(truncate(path, (off_t)YOLO_TEXT_MAX) == 0);
    CHECK_MSG(yolo_read_text_file(path, "the model yaml", &text, &len) == YOLO_OK && len == YOLO_TEXT_MAX,
              "%s", yolo_last_error());
    free(text);
    text = NULL;
    unlink(path);
    CHECK(yolo_read_text_file("/dev/zero", "the cfg file", &text, &len) == YOLO_ERR_FORMAT && !text &&
          test_error_mentions("/dev/zero: the cfg file is larger than 16 MiB"));
    CHECK(yolo_read_text_file(dir, "the data yaml", &text, &len) == YOLO_ERR_IO && test_error_mentions("is a folder"));
    snprintf(path, sizeof path, "%s/absent.yaml", dir);
    CHECK(yolo_read_text_file(path, "the data yaml", &text, &len) == YOLO_ERR_IO &&
          test_error_mentions("absent.yaml: cannot open the data yaml"));
    /* a FIFO is read as a stream, to the limit */
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0644) == 0);
    pid_t writer = fork();
    if (writer == 0) {
        int w = open(path, O_WRONLY);
        static const char line[] = "epochs: 1\n";
        while (w >= 0 && write(w, line, sizeof line - 1) > 0) {}
        _exit(0);
    }
    CHECK(yolo_read_text_file(path, "the cfg file", &text, &len) == YOLO_ERR_FORMAT && !text &&
          test_error_mentions("fifo: the cfg file is larger than 16 MiB"));
    if (writer > 0) kill(writer, SIGKILL), waitpid(writer, NULL, 0);
    /* a config merge and a model load go through it */
    yolo_config *cfg = NULL;
    CHECK(yolo_config_new(&cfg) == YOLO_OK);
    CHECK(cfg && yolo_config_merge_yaml_file(cfg, YOLO_CONFIG_LAYER_CFG, "/dev/zero", 0) == YOLO_ERR_FORMAT &&
          test_error_mentions("/dev/zero: the cfg file is larger than 16 MiB"));
    yolo_config_free(cfg);
}

/* ---- the CLI: exit code, message, time and resident memory ---- */

static void cli(int line, const char *const *argv, const char *needle) {
    const char *bin = getenv("YOLO_BINARY_DIR");
    if (!bin) return;
    char exe[1024], log[1024];
    snprintf(exe, sizeof exe, "%s/bin/yolo", bin);
    snprintf(log, sizeof log, "%s/cli.log", dir);
    struct timeval t0, t1;
    gettimeofday(&t0, NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || chdir(dir) != 0) _exit(126);
        dup2(fd, 1), dup2(fd, 2);
        alarm(60); /* a run that never ends is a failure, not a hung test */
        char *args[16] = {exe};
        for (int i = 0; argv[i] && i < 14; i++) args[i + 1] = (char *)argv[i];
        execv(exe, args);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    CHECK(pid > 0 && wait4(pid, &status, 0, &ru) == pid);
    gettimeofday(&t1, NULL);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_usec - t0.tv_usec);
    char *out = test_read_text(log);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) != 0, "line %d: yolo %s %s: status 0x%x\n%s", line, argv[0],
              argv[1], status, out ? out : "");
    CHECK_MSG(out && strstr(out, needle), "line %d: yolo %s %s: output lacks '%s':\n%s", line, argv[0], argv[1], needle,
              out ? out : "");
    CHECK_MSG(seconds < 10 && ru.ru_maxrss < (1 << 20), "line %d: yolo %s %s: %.1f s, %ld KB resident", line, argv[0],
              argv[1], seconds, ru.ru_maxrss);
    printf("yolo %s %s: exit %d in %.2f s, %ld KB resident\n", argv[0], argv[1], WEXITSTATUS(status), seconds,
           ru.ru_maxrss);
    free(out);
}
#define CLI(needle, ...) cli(__LINE__, (const char *const[]){__VA_ARGS__, NULL}, (needle))

static void check_cli(void) {
    test_write_text(dir, "d.yaml", "path: .\ntrain: images\nval: images\nnames: [a, b]\n");
    CLI("stride-0", "detect", "val", "model=stride0.pt", "data=d.yaml");
    CLI("stride-0", "info", "model=stride0.pt");
    CLI("refused before inflating", "info", "model=padded.pt");
    char yaml[4096];
    const char *const scales[] = {"[0.33, 64.0, 1024000]", "[100000.0, 0.25, 1024]", "[4, 4, 8192]"};
    for (int i = 0; i < 3; i++) {
        char rel[32], arg[64];
        snprintf(rel, sizeof rel, "scales%d.yaml", i);
        snprintf(yaml, sizeof yaml, "nc: 80\nscales:\n  n: %s\n%s", scales[i], v8_rows);
        test_write_text(dir, rel, yaml);
        snprintf(arg, sizeof arg, "model=%s", rel);
        CLI(i == 2 ? "more than the 1e+09" : "is outside", "info", arg);
    }
    CLI("/dev/zero: the cfg file is larger than 16 MiB", "info", "cfg=/dev/zero");
    CLI("/dev/zero: the data yaml is larger than 16 MiB", "detect", "val", "model=yolov8n.yaml", "data=/dev/zero");
    /* a data yaml past the limit, sparse: no disk used */
    char big[1100];
    snprintf(big, sizeof big, "%s/big.yaml", dir);
    int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)YOLO_TEXT_MAX + 1) == 0);
    if (fd >= 0) close(fd);
    CLI("big.yaml: the data yaml is larger than 16 MiB", "detect", "val", "model=yolov8n.yaml", "data=big.yaml");
}

int main(void) {
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary folder");
    const yolo_task *task;
    if (yolo_plugin_load_task("detect", &task) || yolo_backend_create("cpu", 1, &be)) {
        fprintf(stderr, "setup: %s\n", yolo_last_error());
        return 1;
    }
    make_zero_chunk();
    check_views();
    check_budget();
    check_shared_modules();
    check_pickle_caps();
    check_yaml_text();
    check_model_yamls();
    check_text_files();
    check_cli();
    free(zero_chunk.data);
    yolo_backend_free(be);
    return test_result("test_input_bounds");
}
