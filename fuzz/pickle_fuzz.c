/* Fuzzing the .pt reader (core/interop: pickle.c, pt_import.c, pt_yaml.c).
 *
 * LLVMFuzzerTestOneInput: the first byte picks a target, the rest is its
 * input:
 *   0  a pickle (yolo_pickle_parse), whose value graph is then walked
 *   1  a whole .pt file (yolo_pt_read_memory)
 *   2  a data.pkl zipped as <top>/data.pkl with storages <top>/data/0..15
 *      (4 KiB of zeros each), so a pickle reaches the checkpoint walk
 * Any crash, sanitizer report or broken invariant (abort) is a finding.
 *
 * Built with -DYOLO_LIBFUZZER (clang -fsanitize=fuzzer) this is only the
 * entry point. Otherwise main() replays the corpus given (files or
 * folders: fuzz/pickle_corpus) and then mutates it for -seconds N
 * (default 10): a driver for any compiler, run by ctest. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "interop/pickle.h"
#include "interop/pt_import.h"

static volatile uint64_t sink;

/* Visits the graph to a bounded depth (it may have cycles), checking the
 * reader's invariants. */
static void walk(const yolo_pk_value *v, int depth) {
    if (!v || depth > 12) return;
    if ((unsigned)v->kind > YOLO_PK_TENSOR || v->n > v->cap) abort();
    char buf[128];
    sink += strlen(yolo_pk_describe(v, buf, sizeof buf));
    if (v->kind == YOLO_PK_DICT && v->n % 2) abort();
    if (v->kind == YOLO_PK_TENSOR && (!v->storage || v->storage->kind != YOLO_PK_STORAGE || v->ndim > YOLO_PK_MAX_DIMS))
        abort();
    for (size_t i = 0; i < v->n; i++) walk(v->items[i], depth + 1);
    if (v->kind == YOLO_PK_OBJECT) {
        walk(v->args, depth + 1);
        walk(v->state, depth + 1);
        sink += (uintptr_t)yolo_pk_attr(v, "_modules");
    }
}

static void check_pt(const yolo_pt_model *pt) {
    for (int i = 0; i < pt->n_tensors; i++) {
        int64_t n = 1;
        for (int d = 0; d < pt->tensors[i].ndim; d++) n *= pt->tensors[i].shape[d];
        if (n != pt->tensors[i].numel) abort();
        if (n) sink += (uint64_t)pt->tensors[i].data[n - 1];
    }
    if (pt->yaml_text && strlen(pt->yaml_text) != pt->yaml_len) abort();
}

static uint8_t *zip_pickle(const uint8_t *pkl, size_t len, size_t *out_len) {
    size_t cap = len + 16 * 4200 + 8192;
    uint8_t *buf = malloc(cap), *zeros = calloc(1, 4096);
    struct archive *a = archive_write_new();
    size_t used = 0;
    archive_write_set_format_zip(a);
    archive_write_zip_set_compression_store(a);
    archive_write_open_memory(a, buf, cap, &used);
    for (int i = -1; i < 16; i++) {
        char name[32];
        if (i < 0) snprintf(name, sizeof name, "fz/data.pkl");
        else snprintf(name, sizeof name, "fz/data/%d", i);
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, name);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, i < 0 ? (la_int64_t)len : 4096);
        archive_write_header(a, e);
        archive_write_data(a, i < 0 ? (const void *)pkl : zeros, i < 0 ? len : 4096);
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    free(zeros);
    *out_len = used;
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int mode = data[0] % 3;
    data++, size--;
    if (mode == 0) {
        yolo_pickle *p = NULL;
        if (yolo_pickle_parse(data, size, "fuzz.pkl", &p) == YOLO_OK) walk(yolo_pickle_root(p), 0);
        yolo_pickle_free(p);
        return 0;
    }
    size_t len = size;
    uint8_t *zip = mode == 2 ? zip_pickle(data, size, &len) : NULL;
    yolo_pt_model *pt = NULL;
    if (yolo_pt_read_memory(zip ? zip : data, len, "fuzz.pt", &pt) == YOLO_OK) check_pt(pt);
    yolo_pt_free(pt);
    free(zip);
    return 0;
}

#ifndef YOLO_LIBFUZZER
typedef struct corpus {
    uint8_t **data;
    size_t *size;
    int n, cap;
} corpus;

static void corpus_add(corpus *c, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = n > 0 ? malloc((size_t)n) : NULL;
    if (d && fread(d, 1, (size_t)n, f) == (size_t)n) {
        if (c->n == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 16;
            c->data = realloc(c->data, sizeof *c->data * (size_t)c->cap);
            c->size = realloc(c->size, sizeof *c->size * (size_t)c->cap);
        }
        c->data[c->n] = d;
        c->size[c->n++] = (size_t)n;
    } else {
        free(d);
    }
    fclose(f);
}

static void corpus_add_path(corpus *c, const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return;
    if (!S_ISDIR(sb.st_mode)) {
        corpus_add(c, path);
        return;
    }
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        corpus_add(c, full);
    }
    if (d) closedir(d);
}

static uint64_t xorshift(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Pickle-aware mutations: opcode bytes, lengths and ints are what break readers. */
static size_t mutate(uint8_t *buf, size_t size, size_t cap, uint64_t *rng) {
    static const uint8_t opcodes[] = {0x80, '.', 'c', 'Q', 'R', 'b', 0x81, '(', 't', 0x85, 0x86, 0x87, ')', ']', '}',
                                      's', 'u', 'a', 'e', 'q', 'r', 'h', 'j', 'J', 'K', 'M', 'G', 'X', 0x88, 0x89,
                                      'N', 0x8a};
    int rounds = 1 + (int)(xorshift(rng) % 4);
    for (int r = 0; r < rounds && size > 1; r++) {
        size_t at = 1 + xorshift(rng) % (size - 1);
        switch (xorshift(rng) % 6) {
        case 0: buf[at] = opcodes[xorshift(rng) % sizeof opcodes]; break;
        case 1: buf[at] ^= (uint8_t)(1u << (xorshift(rng) % 8)); break;
        case 2: buf[at] = (uint8_t)(xorshift(rng) % 2 ? 0xff : 0x00); break;
        case 3: size = at; break; /* truncate */
        case 4: /* duplicate a run (repeats a construct) */
            if (size < cap) {
                size_t len = 1 + xorshift(rng) % 16;
                if (len > size - at) len = size - at;
                if (size + len > cap) len = cap - size;
                memmove(buf + at + len, buf + at, size - at);
                size += len;
            }
            break;
        default: /* delete a byte */
            memmove(buf + at, buf + at + 1, size - at - 1);
            size--;
        }
    }
    return size;
}

int main(int argc, char **argv) {
    double seconds = 10;
    corpus c = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else corpus_add_path(&c, argv[i]);
    }
    if (!c.n) {
        fprintf(stderr, "pickle_fuzz_driver: no corpus files given (fuzz/pickle_corpus)\n");
        return 1;
    }
    for (int i = 0; i < c.n; i++) LLVMFuzzerTestOneInput(c.data[i], c.size[i]);
    uint64_t rng = 0x5eed5eed12345ull;
    long runs = 0;
    clock_t start = clock();
    while ((double)(clock() - start) / CLOCKS_PER_SEC < seconds) {
        int k = (int)(xorshift(&rng) % (uint64_t)c.n);
        size_t cap = c.size[k] + 64;
        uint8_t *buf = malloc(cap);
        memcpy(buf, c.data[k], c.size[k]);
        size_t n = mutate(buf, c.size[k], cap, &rng);
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
        runs++;
    }
    printf("pickle_fuzz_driver: %d corpus files, %ld mutated runs in %.0f s, no crash\n", c.n, runs, seconds);
    for (int i = 0; i < c.n; i++) free(c.data[i]);
    free(c.data);
    free(c.size);
    return 0;
}
#endif
